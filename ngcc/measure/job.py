"""The one job engine: a job from its calibration to its last trial, and what an
executor of jobs must be (the executors themselves are ``measure.executors``).

A job is one library × message length (:class:`JobOrder`). Its calibration (the cold
call, with the warm plan a short trial of warm calls) gives its plan by one rule
(:func:`calibrate`, :func:`planned`); a :class:`JobStepper` then runs its trials one
:meth:`~JobStepper.step` at a time — the strict attempts, each trial's statistics
computed once (:class:`Taken`) — until the stop rule says :meth:`~JobStepper.enough`.
Everything that measures jobs is a loop over steppers:

- :func:`measure_job`: one job whole, as ``executors.SerialExecutor`` and a Dask worker
  (``distributed``) run it;
- ``executors.LocalExecutor``: the campaign's own jobs on its CPU, interleaved in
  rounds or one after another, calibrated in advance, each trial kept as it comes
  (:class:`JobWatcher`).

A campaign never runs trials itself: it hands its jobs to an executor and gets back a
:class:`JobResult` per job, checks it (:func:`result_defects`) and writes its record;
no executor touches the run directory.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from ngcc.base.clock import utc_now
from ngcc.base.errors import ChildError
from ngcc.driver import child as _child
from ngcc.driver.contract import TrialRunner
from ngcc.evidence.model import Environment, RejectedTrial, Trial, TrialMeasurement
from ngcc.library.registry import Instance
from ngcc.measure import host as _host
from ngcc.measure import plan as _plan
from ngcc.measure.guard import check_library, trial_deadline
from ngcc.measure.plan import STRICT_ATTEMPTS as STRICT_ATTEMPTS  # the rule's home
from ngcc.stats import flags as _flags
from ngcc.stats import intervals as _intervals
from ngcc.stats import trials as _stats

#: How many trials a job may measure beyond its plan in place of trials of the host's
#: slow speed state (``stats.trials.speed_states``), as a share of its planned trials.
REPLACEMENT_SHARE = 1.0


def replacement_budget(trials: int) -> int:
    """The trials a job of ``trials`` planned ones may add in place of slow-state ones."""
    return math.ceil(trials * REPLACEMENT_SHARE)


def most_trials(order: JobOrder) -> int:
    """The most trials a job of ``order`` may end with: ``max_trials``, or its planned
    trials and their replacements (:func:`replacement_budget`) if that is more."""
    return max(order.max_trials, order.trials + replacement_budget(order.trials))


def slow_state_trials(taken: Sequence[Taken]) -> int:
    """How many of ``taken`` ran in the host's slow speed state: their CPU-time figure
    far above the fastest's (0 where a trial lacks the figure)."""
    figures = [t.trial.statistics.cpu_time_ticks for t in taken]
    if not figures or any(f is None for f in figures):
        return 0
    return len(_stats.speed_states([float(f or 0.0) for f in figures]))


@dataclass(frozen=True)
class JobOrder:
    """Everything a worker needs to measure one job, and nothing of the run directory.

    Attributes:
        key: the job's name while it is out (unique per start of a campaign).
        label: the library's label in the run.
        instance: the library (``library`` is the client's path; a worker loads its
            own copy, checked against ``library_sha256``).
        library_sha256: the sha256 of the library the plan names.
        message_bytes: the message length.
        trials, max_trials, target_ci: how many trials (more, up to ``max_trials``,
            until the 95 % CI is within ``target_ci`` percent).
        trial_target, op_budget: the plan rule's T and budget (``measure.plan.calls_per_trial``).
        trial_timeout: seconds a trial or cold-call child may take (None: the default,
            from the cold call, at most ``max_trial_timeout``: :func:`trial_deadline`).
        max_trial_timeout: the cap on a trial deadline derived from the cold call.
        run_dir: the client's run directory, named in the worker's CPU lock.
        calls_rule: ``harness`` (calls per trial from the cold call) or ``warm`` (from
            a short calibration trial of warm calls), as ``measure.plan`` has them.
        statistic: what ``target_ci`` aims at (``mean`` or ``median``).
        attempts: the most attempts at one trial: 1, or ``--strict``'s
            :data:`STRICT_ATTEMPTS` (a disturbed or slow-process trial is repeated, and
            listed as rejected: ``stats.flags.rejection``).
        calibration: the job's calibration when it was made in advance (the campaign's
            own executor); None: the executor calibrates where it measures.
    """

    key: str
    label: str
    instance: Instance
    library_sha256: str
    message_bytes: int
    trials: int
    max_trials: int
    target_ci: float | None
    trial_target: float
    op_budget: float
    trial_timeout: float | None
    run_dir: str
    calls_rule: str = "harness"
    statistic: str = "mean"
    attempts: int = 1
    calibration: Calibration | None = None
    max_trial_timeout: float = _child.MAX_TRIAL_TIMEOUT


@dataclass(frozen=True)
class Calibration:
    """A job's calibration and the plan made from it by the plan rule (:func:`planned`).

    Attributes:
        t1_seconds: the first call of a freshly loaded library (the cold call).
        warm_call_seconds: the median call of the warm plan's calibration trial (None
            with the harness rule).
        calls_per_trial, warmup_calls: the plan.
    """

    t1_seconds: float
    warm_call_seconds: float | None
    calls_per_trial: int
    warmup_calls: int


@dataclass(frozen=True)
class Taken:
    """A trial kept for a job: when it started, what it measured, its place in the order
    of trials, and its entry in the record (its statistics, computed once)."""

    started: str
    measured: TrialMeasurement
    position: int
    trial: Trial


def take(started: str, measured: TrialMeasurement, position: int, index: int,
         warmup: int) -> Taken:
    """Trial ``index`` of a job as it is kept: the facts, and their statistics."""
    statistics = _stats.trial_statistics(measured.cycles, measured.loop_ticks,
                                         measured.loop_ns / 1e9, measured.frequency_hz,
                                         measured)
    return Taken(started, measured, position,
                 Trial.of(index, started, warmup, measured, statistics, position=position))


@dataclass(frozen=True)
class Lost:
    """An earlier attempt at a job that died with its worker: its trials are gone."""

    worker: str
    reason: str


@dataclass(frozen=True)
class JobResult:
    """What came back for one job: its calibration, its trials, where they were made.

    Attributes:
        key: the :attr:`JobOrder.key`.
        worker: who measured it (``serial``, or the Dask worker's address).
        environment: the fingerprint of the host and CPU measured on (None only when
            the job failed before it was taken).
        status: ``done``, or the failed child's status (``crash``, ``timeout``,
            ``error``, ``protocol``) with the message in ``error``.
        library_sha256: the sha256 of the library bytes the worker loaded.
        t1_seconds, warm_call_seconds, calls_per_trial, warmup_calls: the calibration
            and the plan made from it on the worker (by ``measure.plan``'s rule, which the
            client checks).
        trials: every trial kept, in order.
        rejected: the attempts ``--strict`` set aside (disturbed, measured again).
        lost: earlier attempts that died with their worker (filled in by the executor).
    """

    key: str
    worker: str
    environment: Environment | None
    status: str = "done"
    error: str | None = None
    library_sha256: str | None = None
    t1_seconds: float | None = None
    warm_call_seconds: float | None = None
    calls_per_trial: int | None = None
    warmup_calls: int | None = None
    trials: tuple[Taken, ...] = ()
    rejected: tuple[RejectedTrial, ...] = ()
    lost: tuple[Lost, ...] = ()


class JobExecutor(Protocol):
    """Measures whole jobs somewhere and hands back their results as they arrive."""

    def describe(self) -> str:
        """What measures the jobs, as ``campaign.json`` records it."""
        ...

    def measure(self, orders: Sequence[JobOrder], runner: TrialRunner
                ) -> Iterator[JobResult]:
        """One :class:`JobResult` per order, in the order they complete."""
        ...


def enough(cycles: Sequence[np.ndarray], order: JobOrder, slow: int = 0) -> bool:
    """The stop rule: whether a job has its trials: the planned ones outside the host's
    slow speed state (``slow`` of ``cycles`` were in it: each is replaced, within
    :func:`replacement_budget`), then (``target_ci``) more until the CI of its statistic
    is narrow enough or ``max_trials`` are done."""
    if len(cycles) < order.trials:
        return False
    if len(cycles) - slow < order.trials and \
            len(cycles) < order.trials + replacement_budget(order.trials):
        return False
    if order.target_ci is None or len(cycles) >= order.max_trials:
        return True
    relative = _intervals.stop_rule_precision(list(cycles), order.statistic)
    return relative is not None and 100 * relative <= order.target_ci


def planned(order: JobOrder, t1: float, warm_call: float | None) -> Calibration:
    """The plan rule: calls per trial and warm-up calls from the cold call ``t1``, or
    (the warm plan) from the warm call."""
    if order.calls_rule == "warm" and warm_call is not None:
        calls = _plan.warm_calls_per_trial(warm_call, order.trial_target, order.op_budget,
                                           order.trials)
        return Calibration(t1, warm_call, calls, _plan.warmup_calls(warm_call))
    return Calibration(t1, None,
                       _plan.calls_per_trial(t1, order.trial_target, order.op_budget,
                                             order.trials), _plan.warmup_calls(t1))


def calibrate(order: JobOrder, runner: TrialRunner, instance: Instance, cpu: int,
              t1: float | None = None) -> Calibration:
    """Calibrate a job on ``cpu``: the cold call in a fresh child (unless ``t1`` is known
    already), with the warm plan then a short trial of warm calls; plan it.

    Raises:
        ChildError: a child did not deliver.
        LibraryChangedError: the library file is not the plan's (:func:`check_library`).
    """
    if t1 is None:
        check_library(order, instance, "before its calibration at %d B" % order.message_bytes)
        t1 = runner.cold_call(instance, order.message_bytes, cpu,
                              order.trial_timeout or _child.COLD_TIMEOUT)
    warm_call = _warm_call(order, runner, instance, cpu, t1) \
        if order.calls_rule == "warm" else None
    return planned(order, t1, warm_call)


def _warm_call(order: JobOrder, runner: TrialRunner, instance: Instance, cpu: int,
               t1: float) -> float:
    """Seconds of a warm call: the median call of a short calibration trial (about
    ``plan.WARM_CALIBRATION_SECONDS`` of calls after the usual warm-up)."""
    calls = _plan.calibration_calls(t1)
    warmup = max(1, _plan.warmup_calls(t1))
    deadline = trial_deadline(order, t1, calls, warmup)
    check_library(order, instance, "before its calibration trial at %d B" % order.message_bytes)
    try:
        measured = runner.trial(instance, order.message_bytes, calls, warmup, cpu, 0,
                                deadline.seconds)
    except ChildError as exc:
        capped = deadline.explained(exc)
        if capped is None:
            raise
        raise capped from None
    check_library(order, instance, "while its calibration trial at %d B ran"
                  % order.message_bytes)
    return max(float(np.median(measured.cycles)), 1.0) / measured.frequency_hz


class Positions:
    """The place of each trial in the order one start measures them: kept trials of an
    earlier start keep theirs, and every new trial (each attempt) comes after them."""

    def __init__(self) -> None:
        self.next = 0

    def after(self, kept: Sequence[Taken]) -> None:
        """Count on after the ``kept`` trials' places."""
        self.next = max([self.next, *(t.position + 1 for t in kept)])

    def take(self) -> int:
        """The next trial's place."""
        self.next += 1
        return self.next - 1


class JobStepper:
    """One job from its first trial to its last, a trial per :meth:`step`: the strict
    attempts, each trial's statistics (once), and the stop rule (:meth:`enough`).

    Args:
        order: the job.
        runner: what runs its trials.
        instance: the library to load (a worker's own copy may stand for the order's).
        cpu: the CPU every trial is pinned to.
        calibration: the job's calibration and plan.
        kept: trials kept by an earlier start, measured with this plan.
        positions: the places of this start's trials (shared by the jobs measured
            together; default: this job's own, after its kept trials).
    """

    def __init__(self, order: JobOrder, runner: TrialRunner, instance: Instance, cpu: int,
                 calibration: Calibration, kept: Sequence[Taken] = (),
                 positions: Positions | None = None):
        self.order, self.runner, self.instance, self.cpu = order, runner, instance, cpu
        self.calibration = calibration
        self.taken: list[Taken] = list(kept)
        self.rejected: list[RejectedTrial] = []
        self.positions = positions or Positions()
        self.positions.after(self.taken)
        c = calibration
        self.deadline = trial_deadline(order, c.t1_seconds, c.calls_per_trial,
                                       c.warmup_calls)
        self.timeout = self.deadline.seconds

    def enough(self) -> bool:
        """Whether the job has its trials (:func:`enough`), those of the host's slow
        speed state replaced."""
        return enough([t.measured.cycles for t in self.taken], self.order,
                      slow_state_trials(self.taken))

    def step(self) -> Taken:
        """Run the job's next trial and keep it. With ``order.attempts`` > 1
        (``--strict``), a disturbed attempt (preempted, its counter off its rate, or the
        whole process slow) is set aside as rejected and run again, the last attempt
        kept whatever it shows.

        Raises:
            ChildError: the trial's child did not deliver (a timeout at the capped
                deadline says so: :class:`~ngcc.measure.guard.Deadline`).
            LibraryChangedError: the library file is not the plan's before the trial, or
                after it (then the trial is not kept).
        """
        index, c = len(self.taken), self.calibration
        kept_cycles = [t.measured.cycles for t in self.taken]
        where = "trial %d at %d B" % (index, self.order.message_bytes)
        for attempt in range(self.order.attempts):
            started, position = utc_now(), self.positions.take()
            check_library(self.order, self.instance, "before " + where)
            try:
                measured = self.runner.trial(self.instance, self.order.message_bytes,
                                             c.calls_per_trial, c.warmup_calls, self.cpu,
                                             index, self.timeout)
            except ChildError as exc:
                capped = self.deadline.explained(exc)
                if capped is None:
                    raise
                raise capped from None
            check_library(self.order, self.instance, "while %s ran" % where)
            taken = take(started, measured, position, index, c.warmup_calls)
            last = attempt == self.order.attempts - 1
            flag = None if last else _flags.rejection(taken.trial, kept_cycles, self.cpu)
            if flag is None:
                self.taken.append(taken)
                return taken
            self.rejected.append(RejectedTrial(trial=index, position=position,
                                               started=started, code=flag.code,
                                               message=flag.message))
        raise AssertionError("order.attempts must be at least 1")

    def result(self, base: JobResult) -> JobResult:
        """``base`` (the job's key, worker and environment) with the calibration and
        the trials."""
        return replace(calibrated(base, self.calibration), trials=tuple(self.taken),
                       rejected=tuple(self.rejected))


class JobWatcher:
    """What whoever started the jobs hears of them while they are measured in this
    process (an executor on another machine tells nothing but the results): every hook
    does nothing here, a campaign overrides them to keep each trial (``partial``) and
    show its progress."""

    def kept(self, order: JobOrder, calibration: Calibration) -> list[Taken]:
        """The trials an earlier start kept for the job, measured with this plan."""
        return []

    def status(self, order: JobOrder) -> None:
        """The job is the one being measured now."""

    def trial_done(self, order: JobOrder, stepper: JobStepper) -> None:
        """A trial of the job was measured and kept (``stepper.taken[-1]``)."""

    def round_done(self, rounds: int, fewest: int, measuring: int, more: bool) -> None:
        """Round ``rounds`` of interleaved jobs is done: trial ``fewest`` of
        ``measuring`` jobs (``more``: some still measure)."""


def measure_job(order: JobOrder, runner: TrialRunner, cpu: int, worker: str,
                library: Path | None = None, library_sha256: str | None = None, *,
                environment: Environment | None = None, watcher: JobWatcher | None = None,
                positions: Positions | None = None) -> JobResult:
    """Calibrate (unless ``order.calibration`` is given), plan and measure one job on
    ``cpu`` of this host: one loop over a :class:`JobStepper`.

    ``library`` is this host's copy of the library (default: the order's path) and
    ``library_sha256`` its checked sha256; ``environment`` the fingerprint to record
    (default: taken now). A failed child ends the job with its status.
    """
    watcher = watcher or JobWatcher()
    instance = order.instance if library is None else replace(order.instance, library=library)
    done = JobResult(key=order.key, worker=worker,
                     environment=environment or _host.fingerprint(cpu),
                     library_sha256=library_sha256 or order.library_sha256)
    try:
        calibration = order.calibration or calibrate(order, runner, instance, cpu)
        done = calibrated(done, calibration)
        stepper = JobStepper(order, runner, instance, cpu, calibration,
                             watcher.kept(order, calibration), positions)
        while not stepper.enough():
            watcher.status(order)
            stepper.step()
            watcher.trial_done(order, stepper)
    except ChildError as exc:
        return replace(done, status=exc.status, error=str(exc))
    return stepper.result(done)


def calibrated(result: JobResult, calibration: Calibration) -> JobResult:
    """``result`` with the job's calibration and plan."""
    c = calibration
    return replace(result, t1_seconds=c.t1_seconds, warm_call_seconds=c.warm_call_seconds,
                   calls_per_trial=c.calls_per_trial, warmup_calls=c.warmup_calls)


def result_defects(order: JobOrder, result: JobResult) -> list[str]:
    """Why the client must not write ``result`` as the record of ``order`` (empty: it may).

    A result must name the host and CPU it was measured on, have loaded the library the
    plan names, follow the plan rule from its own calibration, and hold between
    ``trials`` and :func:`most_trials` trials of that many calls, each pinned to that CPU.
    """
    env = result.environment
    if result.key != order.key:
        return ["it answers job %s, not %s" % (result.key, order.key)]
    if env is None or env.host is None:
        return ["it does not name the host it was measured on"]
    found = []
    if result.library_sha256 != order.library_sha256:
        found.append("the worker loaded a library of sha256 %s, not the plan's %s"
                     % (result.library_sha256, order.library_sha256))
    t1, warm_call = result.t1_seconds, result.warm_call_seconds
    if t1 is None or not t1 > 0:
        return [*found, "it has no calibration (t1 %r)" % (t1,)]
    if (order.calls_rule == "warm") != (warm_call is not None):
        return [*found, "its warm call (%r) does not fit the %s plan" % (warm_call,
                                                                         order.calls_rule)]
    plan = planned(order, t1, warm_call)
    calls, warmup = plan.calls_per_trial, plan.warmup_calls
    if (result.calls_per_trial, result.warmup_calls) != (calls, warmup):
        found.append("its plan (%s calls, %s warm-up) is not the plan rule's for t1 %.3g s "
                     "(%d calls, %d warm-up)" % (result.calls_per_trial, result.warmup_calls,
                                                 t1, calls, warmup))
    if not order.trials <= len(result.trials) <= most_trials(order):
        found.append("it has %d trials, not %d to %d" % (len(result.trials), order.trials,
                                                         most_trials(order)))
    for index, measured in enumerate(t.measured for t in result.trials):
        if measured.cpu != env.cpu:
            found.append("trial %d ran on CPU %d, not the worker's CPU %d"
                         % (index, measured.cpu, env.cpu))
        if len(measured.cycles) != result.calls_per_trial:
            found.append("trial %d timed %d calls, not %s" % (index, len(measured.cycles),
                                                               result.calls_per_trial))
    return found
