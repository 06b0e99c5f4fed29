"""The flags of a job's trials (:class:`~ngcc.evidence.model.Flag`) and the rules that
raise them: a trial mean far from the median of trial means, a counter off its
calibrated rate, a preempted thread (its CPU share, its involuntary context switches),
a process slow as a whole, a trial of the slow speed state, a coarse counter, a changed
CPU affinity; the flags of each statistics version, the :func:`rejection` of a trial
that ``--strict`` repeats, and the flags grouped by code."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ngcc.evidence.model import Flag, Trial
from ngcc.stats.calls import median_of_trial_means

OUTLIER_TOLERANCE = 0.05      # a trial mean 5 % away from the median of trial means
COUNTER_RATE_TOLERANCE = 0.02  # a counter running 2 % off its calibrated rate
#: A trial whose thread had less than this share of a timed loop's wall time on the
#: CPU was preempted (another task ran on its CPU for the rest).
CPU_SHARE_THRESHOLD = 0.97
#: ... or that had at least this many involuntary context switches in its loops, and
#: more than :data:`SWITCHES_PER_SECOND` of them per second of loop.
SWITCHES_THRESHOLD = 10
SWITCHES_PER_SECOND = 10.0
#: A trial whose per-call minimum lies this far above the job's best trial's ran in a
#: process that was slow as a whole (``slow_process``).
SLOW_PROCESS_TOLERANCE = 0.10
#: A per-call figure of fewer counter steps than this is coarse (``coarse_counter``).
COARSE_STEPS = 20


def outlying_trials(means: Sequence[float], tolerance: float = OUTLIER_TOLERANCE
                    ) -> list[int]:
    """Indices of trials whose mean is more than ``tolerance`` (relative) from the median.

    The median of trial means is the reference because one bad trial cannot drag it;
    a relative threshold (5 %) rather than a multiple of the spread avoids flagging
    harmless 0.5 % wobbles on a quiet machine, where the spread is tiny.
    """
    centre = median_of_trial_means(means) if len(means) else 0.0
    if centre == 0:
        return []
    return [i for i, mean in enumerate(means) if abs(mean - centre) / centre > tolerance]


def disturbed_trials(ratios: Sequence[float | None],
                     tolerance: float = COUNTER_RATE_TOLERANCE) -> list[int]:
    """Indices of trials whose counter rate ratio lies outside 1 ± ``tolerance``."""
    return [i for i, ratio in enumerate(ratios)
            if ratio is not None and abs(ratio - 1.0) > tolerance]


def cpu_share(trial: Trial) -> float | None:
    """The lowest share of wall time the trial's thread had on its CPU in its timed
    loops (thread CPU time / ``CLOCK_MONOTONIC_RAW`` time, per-call loop and batch);
    ``None`` where the runner did not measure it."""
    shares = [cpu_ns / wall_ns for cpu_ns, wall_ns in (
        (trial.thread_cpu_ns, trial.loop_ns), (trial.batch_thread_cpu_ns, trial.batch_ns))
        if cpu_ns is not None and wall_ns]
    return min(shares) if shares else None


def involuntary_switches(trial: Trial) -> int | None:
    """Involuntary context switches of the trial's thread in both timed loops."""
    counts = [n for n in (trial.involuntary_switches, trial.batch_involuntary_switches)
              if n is not None]
    return sum(counts) if counts else None


def preemption(trial: Trial) -> str | None:
    """Why the trial counts as preempted, or ``None``.

    Preempted: its thread had under :data:`CPU_SHARE_THRESHOLD` of a loop's wall
    time on the CPU, or it was switched out involuntarily at least
    :data:`SWITCHES_THRESHOLD` times and more than :data:`SWITCHES_PER_SECOND` times
    per second of loop (another runnable task shared its CPU). The counter keeps
    ticking while the thread is off the CPU, so the time lost lands in its calls.
    """
    share = cpu_share(trial)
    switches = involuntary_switches(trial)
    seconds = (trial.loop_ns + (trial.batch_ns or 0)) / 1e9
    low_share = share is not None and share < CPU_SHARE_THRESHOLD
    many = (switches is not None and switches >= SWITCHES_THRESHOLD
            and switches > SWITCHES_PER_SECOND * seconds)
    if not (low_share or many):
        return None
    parts = []
    if share is not None:
        parts.append("its thread was on the CPU for %.1f %% of the timed loops' wall time"
                     % (100 * share))
    if switches is not None:
        parts.append("%d involuntary context switches in %.3f s" % (switches, seconds))
    return ", with ".join(parts)


def preempted_trials(trials: Sequence[Trial]) -> list[int]:
    """Indices of the trials :func:`preemption` finds preempted."""
    return [i for i, trial in enumerate(trials) if preemption(trial) is not None]


def _where(cpu: int | None) -> str:
    return "CPU %d" % cpu if cpu is not None else "the measuring CPU"


def flags_v1(means: Sequence[float], ratios: Sequence[float | None],
             outliers: list[int], disturbed: list[int], cpu: int | None) -> list[Flag]:
    """The flags as ngcc 0.1 wrote them (statistics version 1), for ``validate``."""
    where = _where(cpu)
    centre = median_of_trial_means(means)
    flags = []
    for i in outliers:
        flags.append(Flag("outlying_trial", i, (
            "trial %d averaged %.1f cycles, %+.1f %% from the median of trial means "
            "(%.1f): another process was probably busy on %s; rerun with --cpu N on an "
            "idle CPU or stop it" % (i, means[i], 100 * (means[i] / centre - 1), centre,
                                     where))))
    for i in disturbed:
        ratio = ratios[i] or 0.0  # disturbed_trials() lists only trials with a ratio
        flags.append(Flag("counter_rate", i, (
            "trial %d ran at %.0f %% of the nominal counter rate: the counter or the "
            "process was disturbed on %s (frequency change, migration, busy sibling); "
            "fix the governor/turbo (`ngcc check`) and rerun" % (i, 100 * ratio, where))))
    return flags


def flags_v2(means: Sequence[float], ratios: Sequence[float | None], outliers: list[int],
             disturbed: list[int], facts: Sequence[Trial], cpu: int | None) -> list[Flag]:
    """The flags of statistics version 2: outliers by direction, preemption, counter."""
    where = _where(cpu)
    centre = median_of_trial_means(means)
    preempted = {i: preemption(trial) for i, trial in enumerate(facts)}
    flags = []
    for i in outliers:
        departure = means[i] / centre - 1
        head = "trial %d averaged %.1f ticks per call, %.1f %% %s than the median of " \
               "trial means (%.1f): " % (i, means[i], 100 * abs(departure),
                                         "slower" if departure > 0 else "faster", centre)
        if departure > 0:
            cause = ("it was disturbed (%s); " % preempted[i] if preempted.get(i) else
                     "another process or interrupts probably took %s during it; " % where)
            flags.append(Flag("slow_trial", i, head + cause + (
                "rerun with --cpu N on an isolated CPU, or stop the competing process"),
                departure))
        else:
            flags.append(Flag("fast_trial", i, head + (
                "no other process makes a trial faster: the CPU's clock or cache state "
                "differed (turbo, frequency scaling: see `ngcc check`), or the other "
                "trials were slowed (see their flags); fix the host and rerun"), departure))
    for i, why in preempted.items():
        if why is not None:
            flags.append(_preempted_flag(i, facts[i], why, where))
    flags += [_counter_flag(i, ratios[i] or 0.0, where) for i in disturbed]
    flags += [_affinity_flag(i, where) for i, trial in enumerate(facts) if trial.affinity_changed]
    return flags


def _affinity_flag(i: int, where: str) -> Flag:
    return Flag("affinity_changed", i, (
        "trial %d did not end pinned to %s alone: the library changed the process's CPU "
        "affinity, so its calls may have run on other CPUs; a library must not set its "
        "affinity (--strict repeats such trials)" % (i, where)))


def _preempted_flag(i: int, trial: Trial, why: str, where: str) -> Flag:
    return Flag("preempted", i, (
        "trial %d was preempted on %s: %s; another task competed for the CPU, so "
        "the time it took lands in the calls; pin to an isolated CPU with --cpu N "
        "or stop the competing process (--strict repeats such trials)"
        % (i, where, why)), cpu_share(trial))


def _counter_flag(i: int, ratio: float, where: str) -> Flag:
    return Flag("counter_rate", i, (
        "trial %d ran at %.0f %% of the nominal counter rate: the counter or the "
        "process was disturbed on %s (frequency change, migration, busy sibling); "
        "fix the governor/turbo (`ngcc check`) and rerun" % (i, 100 * ratio, where)), ratio)


def slow_process(minimum: int, best: int) -> float | None:
    """How far a trial's per-call minimum lies above the job's best (``minimum / best
    − 1``) when that is more than :data:`SLOW_PROCESS_TOLERANCE`, else ``None``.

    The minimum is the call nothing interrupted, so a competing process cannot raise
    it; a trial whose minimum is far above the other trials' ran in a process that was
    slow as a whole (its pages, its cache colouring), and its median with it."""
    if best <= 0 or minimum <= best * (1 + SLOW_PROCESS_TOLERANCE):
        return None
    return minimum / best - 1


def _slow_flag(i: int, minimum: int, best: int, departure: float) -> Flag:
    return Flag("slow_process", i, (
        "trial %d's fastest call took %d ticks, %.1f %% above the job's best trial's "
        "(%d): the whole process ran slow (memory placement, cache colouring), not only "
        "the calls another task interrupted; --strict repeats such trials, and the "
        "median's CI counts it as the spread between processes that it is"
        % (i, minimum, 100 * departure, best)), departure)


def _coarse_flag(i: int, steps: float, resolution: int) -> Flag:
    return Flag("coarse_counter", i, (
        "trial %d averaged %.1f counter steps per call (the counter moves in steps of "
        "%d ticks): a per-call figure of fewer than %d steps is mostly rounding and "
        "the bracket; time a longer message, or read the batch mean or the CPU-time "
        "figure instead" % (i, steps, resolution, COARSE_STEPS)), steps)


def disturbance(trial: Trial, cpu: int | None = None) -> Flag | None:
    """The flag of a trial disturbed on its own (no other trial needed to tell):
    ``preempted`` (:func:`preemption`), else ``counter_rate`` (its counter off its
    calibrated rate); before both ``affinity_changed`` (not pinned to its CPU alone
    at its end: the library's doing, whatever the host); ``None`` for a quiet trial.
    ``--strict`` repeats such a trial."""
    where = _where(cpu)
    if trial.affinity_changed:
        return _affinity_flag(trial.index, where)
    why = preemption(trial)
    if why is not None:
        return _preempted_flag(trial.index, trial, why, where)
    ratio = trial.statistics.counter_rate_ratio
    if disturbed_trials([ratio]):
        return _counter_flag(trial.index, ratio or 0.0, where)
    return None


def rejection(trial: Trial, kept: Sequence[np.ndarray], cpu: int | None = None
              ) -> Flag | None:
    """Why ``--strict`` repeats a trial: its :func:`disturbance`, else ``slow_process``
    against the trials ``kept`` so far (its per-call minimum more than 10 % above
    theirs); ``None`` to keep it. The job engine (``measure.job``) asks this."""
    flag = disturbance(trial, cpu)
    if flag is not None or not kept:
        return flag
    best = min(int(np.min(cycles)) for cycles in kept)
    departure = slow_process(trial.statistics.min_cycles, best)
    if departure is None:
        return None
    return _slow_flag(trial.index, trial.statistics.min_cycles, best, departure)


def flag_groups(flags: Sequence[Flag]) -> list[tuple[str, int, Flag]]:
    """The flags by code, in order of first appearance: ``(code, count, worst)``, the
    worst being the flag of the highest :attr:`~ngcc.evidence.model.Flag.severity` (the first
    one where values are missing). For one warning or one line per kind."""
    groups: dict[str, list[Flag]] = {}
    for flag in flags:
        groups.setdefault(flag.code, []).append(flag)

    return [(code, len(group), max(group, key=lambda flag: flag.severity or 0.0))
            for code, group in groups.items()]



def flags_v3(trials: Sequence[np.ndarray], facts: Sequence[Trial]) -> list[Flag]:
    """The flags version 3 adds: ``slow_process`` (a trial's per-call minimum more than
    10 % above the job's best) and ``coarse_counter`` (a trial mean of fewer than
    :data:`COARSE_STEPS` counter steps)."""
    minima = [int(np.min(cycles)) for cycles in trials]
    best = min(minima)
    flags = []
    for i, minimum in enumerate(minima):
        departure = slow_process(minimum, best)
        if departure is not None:
            flags.append(_slow_flag(i, minimum, best, departure))
    for i, trial in enumerate(facts):
        resolution = trial.counter_resolution_ticks
        if resolution:
            steps = trial.statistics.mean_cycles / resolution
            if steps < COARSE_STEPS:
                flags.append(_coarse_flag(i, steps, resolution))
    return flags


def slow_state_flags(facts: Sequence[Trial], left_out: Sequence[int],
                     replaced_above: float) -> list[Flag]:
    """``slow_state`` for each trial ``left_out`` of the CPU-time figure: its figure lay
    too far above the job's fastest trial's, so its process ran in a slower speed state
    of the host (``stats.trials.speed_states``); the value is that departure. Those more
    than ``replaced_above`` above were replaced by another trial (the job's rule)."""
    figures = [t.statistics.cpu_time_ticks or 0.0 for t in facts]
    fastest = min(figures) if figures else 0.0
    flags = []
    for i in left_out:
        departure = figures[i] / fastest - 1 if fastest else 0.0
        replaced = departure > replaced_above
        flags.append(Flag("slow_state", i, (
            "trial %d's CPU time per call was %.0f %% above the job's fastest trial's%s, so "
            "it is left out of the leading figure%s" % (
                i, 100 * departure,
                ": its process ran in the host's slow speed state (another guest on the core "
                "or its caches)" if replaced else
                ", more than the figure takes in (a slower speed state of the host)",
                " and the job measured another trial in its place" if replaced else "")),
            departure))
    return flags
