"""What this host gives a campaign's trials now, measured before the plan: the share of
the trial CPU a busy thread gets, what a trial process costs beyond its calls, and how
many of a library's trial processes run in the host's slow speed state (the trials a job
then measures again: ``measure.job.replacement_budget``)."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ngcc.base.errors import ChildError
from ngcc.driver.contract import StartProbe, TrialRunner
from ngcc.library.registry import Instance
from ngcc.stats.trials import speed_states

#: Seconds a trial process takes beyond its calls (start, calibration of its counter,
#: exit) where the runner cannot measure it (:func:`start_cost`), and the ETA's weight
#: of a trial's start: `benchmarks/campaign_cost.py` measured 0.04 s per trial on a
#: shared 2-core KVM guest (48 trials of 0.02 s).
CHILD_STARTUP_SECONDS = 0.05


@dataclass(frozen=True)
class CpuShare:
    """The share of its CPU a campaign can expect on this host now. Measured where the
    CPU is known (:func:`spin_share`: what a busy thread pinned there gets); else from
    the load, its other runnable tasks spread over the CPUs it may use, each CPU shared
    among those on it, ``1 / (1 + others / cpus)`` (at most 1; the 1-minute load lags and
    counts tasks waiting on disks, so on a shared host it runs low). A trial then takes
    its CPU time divided by the share in wall time.

    Attributes:
        share: the expected share, in (0, 1].
        load: the 1-minute load average.
        cpus: the CPUs this process may run on.
        measured_on: the CPU the share was measured on (None: from the load).
        by_load: the share by the load's rule (None: ``share`` is): how busy the whole
            host is, which the chance of a slow speed state follows where no library
            was probed (:func:`slow_chance`).
    """

    share: float
    load: float
    cpus: int
    measured_on: int | None = None
    by_load: float | None = None

    @property
    def host_busy(self) -> float:
        """The share by the load's rule (``by_load``, else ``share``)."""
        return self.share if self.by_load is None else self.by_load

    def __str__(self) -> str:
        where = "" if self.measured_on is None else " measured on CPU %d" % self.measured_on
        return "CPU share %.2f%s (load %.2f on %d CPU%s)" % (
            self.share, where, self.load, self.cpus, "" if self.cpus == 1 else "s")


def cpu_share(load: float, cpus: int, own: float = 0.0) -> CpuShare:
    """The share :class:`CpuShare` describes, at ``load`` on ``cpus`` CPUs, ``own`` of
    the load being the campaign's own (its calibration just ran)."""
    others = max(0.0, load - own)
    return CpuShare(min(1.0, 1.0 / (1.0 + others / max(1, cpus))), load, max(1, cpus))


#: How long :func:`spin_share` spins on the trial CPU.
SHARE_PROBE_SECONDS = 0.25


def spin_share(cpu: int, seconds: float = SHARE_PROBE_SECONDS) -> float | None:
    """The share of ``cpu`` a busy thread gets now: this thread's CPU time over the wall
    time of ``seconds`` of spinning pinned there (its affinity restored after); None
    where this process may not run on ``cpu``."""
    allowed = os.sched_getaffinity(0)
    if cpu not in allowed:
        return None
    os.sched_setaffinity(0, {cpu})  # this thread only
    try:
        began, cpu_began = time.perf_counter(), time.thread_time()
        while time.perf_counter() - began < seconds:
            pass
        wall = time.perf_counter() - began
        return min(1.0, max(1e-3, (time.thread_time() - cpu_began) / wall))
    finally:
        os.sched_setaffinity(0, allowed)


def host_share(own: float = 0.0, cpu: int | None = None) -> CpuShare:
    """This host's share now: measured on ``cpu`` (:func:`spin_share`), else (or where
    it cannot be) :func:`cpu_share` of its 1-minute load on the CPUs this process may
    use, ``own`` of it the campaign's."""
    by_load = cpu_share(os.getloadavg()[0], len(os.sched_getaffinity(0)), own)
    measured = spin_share(cpu) if cpu is not None else None
    return by_load if measured is None else replace(
        by_load, share=measured, measured_on=cpu, by_load=by_load.share)


@dataclass(frozen=True)
class StartCost:
    """What a trial costs beyond its calls, and a job beyond its trials (its reference
    hash run, and its record, counted as one more trial start), in seconds of a CPU of
    its own: measured now by the runner (:class:`~ngcc.driver.contract.StartProbe`, the
    median probe, its wall time times the CPU share it ran at), or
    :data:`CHILD_STARTUP_SECONDS` where the runner cannot.

    Attributes:
        trial: a trial's start, in CPU seconds.
        job: a job's reference run and record, in CPU seconds.
        measured: whether the runner measured it now.
        wall: a trial's start in wall seconds as measured (``trial`` where not measured).
        share: the CPU share measured with it on the trial CPU (None: not measured).
        slow: each probed library's label and :class:`SlowState` now.
        overlap: the CPU seconds of a trial's start its calls run within (the driver's
            frequency window at the share, ``StartProbe.overlap``): a trial costs its
            start plus what its calls take beyond them (:func:`cost.trial_cost`).
    """

    trial: float = CHILD_STARTUP_SECONDS
    job: float = 0.0
    measured: bool = False
    wall: float = CHILD_STARTUP_SECONDS
    share: CpuShare | None = None
    slow: tuple[tuple[str, SlowState], ...] = ()
    overlap: float = 0.0

    def __str__(self) -> str:
        if not self.measured:
            return "each trial's start %.2f s (not measured: the runner cannot)" % self.trial
        within = (", its calls' first %.3f s within it" % (self.overlap / self.share.share)
                  if self.overlap and self.share is not None else "")
        return "each trial's start %.3f s as measured now%s" % (self.wall, within)

    def slow_words(self) -> str:
        """Where the replacements expected come from: ``3 of 8 probe trials ran in the
        slow speed state now``, or ``by the load`` where nothing was probed."""
        if not self.slow:
            return "by the load"
        return "%d of %d probe trials ran in the slow speed state now" % (
            sum(s.slow for _, s in self.slow), sum(s.trials for _, s in self.slow))


def start_cost(runner: TrialRunner, cpu: int, share: CpuShare | None = None,
               libraries: Mapping[str, SlowProbe] | None = None) -> StartCost:
    """:class:`StartCost` on ``cpu`` from ``runner``'s ``start_probe(cpu)``, with the CPU
    ``share`` there (default: measured now, :func:`host_share`), its wall seconds at that
    share turned into CPU seconds, and the :func:`slow_state` of ``libraries`` (by
    label); a runner without a probe (a fake: nothing is measured, not even the share),
    or whose probe fails, gives the constant."""
    probe = getattr(runner, "start_probe", None)
    if probe is None:
        return StartCost()
    share = host_share(own=1.0, cpu=cpu) if share is None else share
    slow = tuple((label, state) for label, target in (libraries or {}).items()
                 if (state := slow_state(runner, target, cpu)) is not None)
    try:
        measured: StartProbe | None = probe(cpu)
    except ChildError:
        measured = None
    if measured is None or not measured.trials:
        return StartCost(share=share, slow=slow)
    wall = statistics.median(measured.trials)  # a job's record costs about one more start
    return StartCost(wall * share.share, (measured.reference + wall) * share.share, True, wall,
                     share, slow, measured.overlap * share.share)


#: The slow-state probe: this many trials (each a fresh process, as a job's) of about
#: this many seconds of calls each (and a batch of as many), at most this many calls. A
#: trial of 0.6 ms of calls is too short: a toy hash of this project's fixtures read 2 of
#: 12 such probes a quarter above the fastest, and none of 12 probes of 10 ms.
SLOW_PROBE_TRIALS = 4
SLOW_PROBE_SECONDS = 0.01
SLOW_PROBE_MAX_CALLS = 20000


@dataclass(frozen=True)
class SlowProbe:
    """What :func:`slow_state` times: ``instance`` at ``message_bytes``, whose calls take
    about ``call_seconds`` each (its calibration)."""

    instance: Instance
    message_bytes: int
    call_seconds: float


@dataclass(frozen=True)
class SlowState:
    """How many of a library's probe trials ran in the host's slow speed state now, by
    the rule a job replaces its trials by (``stats.trials.speed_states``: the CPU-time
    figure more than a quarter above the fastest trial's).

    On this project's 2-core KVM guest the state is the host's (another guest on the
    core), changes within minutes and depends on the code: 4 of 12 SM3 processes (10 ms
    of calls each) ran slow within a minute of a toy hash's none of 12; so it is
    measured for each library, now (:func:`slow_chance`)."""

    slow: int
    trials: int


#: How many probe trials the pooled share of slow ones of all libraries probed counts
#: for in each library's chance (:func:`slow_chance`): a few probes of one library are
#: a noisy measure of it.
POOLED_PROBES = 4


def slow_state(runner: TrialRunner, target: SlowProbe, cpu: int) -> SlowState | None:
    """:class:`SlowState` of ``target`` on ``cpu`` now from ``runner``'s
    ``slow_probe(instance, message_bytes, calls, cpu, trials)`` (each trial's CPU
    nanoseconds per call), :data:`SLOW_PROBE_TRIALS` trials of about
    :data:`SLOW_PROBE_SECONDS` of calls; None where the runner has no such probe (a
    fake) or it fails."""
    probe = getattr(runner, "slow_probe", None)
    if probe is None:
        return None
    calls = int(min(SLOW_PROBE_MAX_CALLS,
                    max(8, SLOW_PROBE_SECONDS / max(target.call_seconds, 1e-9))))
    try:
        figures = probe(target.instance, target.message_bytes, calls, cpu, SLOW_PROBE_TRIALS)
    except ChildError:
        return None
    return SlowState(len(speed_states(figures)), len(figures)) if len(figures) > 1 else None


#: Where no library was probed, the chance that a trial falls in the host's slow speed
#: state per share of the CPU the others take by the load's rule (1 -
#: ``CpuShare.host_busy``). Fitted on this project's busy 2-core KVM guest, where it
#: depends on the library too: quick runs replaced 40-88 % of the planned trials of SM3
#: and WChain-V1-512 at load 4-9, 8-42 % of Wish512, Pavelor-512 and pseudoXOF-256 at load
#: 8.4, 5 % of four toy hashes at load 4.5.
SLOW_STATE_PER_OTHERS = 0.35


def slow_chance(start: StartCost, label: str, share: CpuShare | None) -> float:
    """The chance that a trial of ``label`` runs in the slow speed state: its probe's
    share of slow trials (``start.slow``) with :data:`POOLED_PROBES` more at the share of
    all libraries probed (half a slow one added to them); where it was not probed,
    :data:`SLOW_STATE_PER_OTHERS` times the others' share of the host by the load (none on
    a host of its own)."""
    state = dict(start.slow).get(label)
    if state is not None:
        pooled = (sum(s.slow for _, s in start.slow) + 0.5) / (  # none seen is no proof
            sum(s.trials for _, s in start.slow) + 1)
        return (state.slow + POOLED_PROBES * pooled) / (state.trials + POOLED_PROBES)
    busy = share.host_busy if share is not None else 1.0
    return SLOW_STATE_PER_OTHERS * (1.0 - min(1.0, max(0.0, busy)))
