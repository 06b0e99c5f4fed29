"""Statistics of per-call counts: per trial, across trials, and the flags.

Every function takes plain numbers or numpy arrays (one uint64 array of per-call
counter ticks per trial) and returns plain Python numbers, or the evidence model's
:class:`~ngcc.evidence.model.TrialStatistics` and :class:`~ngcc.evidence.model.Statistics`, so the
results go straight into the JSON evidence. ``None`` stands for a statistic that is
undefined (for example a confidence interval from a single trial); NaN never appears.

One word for one thing:

* the *harness mean* (``mean_cycles``): Σ per-call ticks of every call of every trial
  / Σ calls, as the NGCC harness computes it (the NICCS page's column);
* the *per-call mean* (``per_call_mean_ticks``): the mean of the trials' per-call
  means, each trial (a fresh process, the independent sample) weighing the same: the
  centre of the confidence intervals of the mean;
* the *batch mean* (``batch_mean_ticks``): Σ ticks of the uninstrumented batches /
  Σ batch calls (one counter reading around a loop of calls);
* the *observer effect*: what the per-call readings add, paired within each trial (its
  per-call mean against its own batch mean) and the median taken over the trials, so
  that one preempted trial does not decide it;
* the *CPU-time figure* (``cpu_time_ticks``, statistics version 3): the thread's CPU
  time over the uninstrumented batch / its calls, in counter units (× the trial's
  counter rate) and in seconds, the median over the trials: what the calls cost while
  they ran, which a competing process cannot move, since the thread's CPU time stops
  while it is off the CPU;
* the *leading figure* (``leading``): the one the tables, pages and plots lead with:
  the CPU-time figure for a job with a preempted trial, else the harness mean
  (:func:`leading_figure`).

The statistics are versioned (:data:`STATISTICS_VERSION`, stored in each record), so
``ngcc validate`` recomputes a record with the rules of the version that wrote it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ngcc.evidence.model import STATISTICS_VERSIONS, Flag, Statistics, Trial, TrialStatistics

if TYPE_CHECKING:
    from ngcc.evidence.model import TrialMeasurement

CONFIDENCE = 0.95
OUTLIER_TOLERANCE = 0.05      # a trial mean 5 % away from the median of trial means
COUNTER_RATE_TOLERANCE = 0.02  # a counter running 2 % off its calibrated rate
#: A trial whose thread had less than this share of a timed loop's wall time on the
#: CPU was preempted (another task ran on its CPU for the rest).
CPU_SHARE_THRESHOLD = 0.97
#: ... or that had at least this many involuntary context switches in its loops, and
#: more than :data:`SWITCHES_PER_SECOND` of them per second of loop.
SWITCHES_THRESHOLD = 10
SWITCHES_PER_SECOND = 10.0
#: The bootstrap of the mean: resamples, and the fixed seed of its generator
#: (:func:`bootstrap_indices`), so every reader recomputes the same interval.
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 0x6E676363  # "ngcc"
#: A trial whose per-call minimum lies this far above the job's best trial's ran in a
#: process that was slow as a whole (``slow_process``).
SLOW_PROCESS_TOLERANCE = 0.10
#: A per-call figure of fewer counter steps than this is coarse (``coarse_counter``).
COARSE_STEPS = 20
#: The version of the statistics this ngcc computes (see :class:`Statistics`).
STATISTICS_VERSION = STATISTICS_VERSIONS[-1]
#: The names of the leading figure (``Statistics.leading``).
LEADING_CPU_TIME = "cpu_time"
LEADING_HARNESS_MEAN = "harness_mean"


def harness_mean(trials: Sequence[np.ndarray]) -> float:
    """Harness mean: Σ per-call ticks of every call of every trial / Σ calls.

    The headline "mean cycles" of the NGCC harness and of the reports' performance
    table, computed as the harness does: every call weighs the same, whatever trial
    it belongs to. Each call's count includes the counter readings around it.
    """
    calls = sum(len(cycles) for cycles in trials)
    if calls == 0:
        raise ValueError("no calls to average")
    return sum(int(np.sum(cycles, dtype=np.uint64)) for cycles in trials) / calls


def pooled(trials: Sequence[np.ndarray]) -> np.ndarray:
    """All calls of all trials in one array (the population of the per-call statistics)."""
    return np.concatenate([np.asarray(cycles, dtype=np.uint64) for cycles in trials])


@dataclass(frozen=True)
class CallDistribution:
    """Per-call statistics of a set of calls (see :func:`call_distribution`)."""

    median_cycles: float
    min_cycles: int
    p5_cycles: float
    p95_cycles: float
    stdev_cycles: float | None


def call_distribution(cycles: np.ndarray) -> CallDistribution:
    """Per-call median, min, 5th and 95th percentile, and sample stdev (n − 1) of ``cycles``.

    The median and the percentiles (numpy's linear interpolation) describe the typical
    call and its spread without being pulled by rare interrupts; min is the best case
    the implementation reaches; stdev (``None`` for one call) shows the jitter.
    """
    values = np.asarray(cycles, dtype=np.float64)
    if values.size == 0:
        raise ValueError("no calls to describe")
    p5, median, p95 = np.percentile(values, [5, 50, 95])
    return CallDistribution(
        median_cycles=float(median), min_cycles=int(np.min(cycles)), p5_cycles=float(p5),
        p95_cycles=float(p95),
        stdev_cycles=float(np.std(values, ddof=1)) if values.size > 1 else None)


def trial_means(trials: Sequence[np.ndarray]) -> list[float]:
    """The arithmetic mean of each trial's per-call cycles (one sample per process)."""
    return [float(np.sum(cycles, dtype=np.uint64)) / len(cycles) for cycles in trials]


def trial_medians(trials: Sequence[np.ndarray]) -> list[float]:
    """The median of each trial's per-call ticks (the centre of a trial that its rare
    preempted calls cannot move)."""
    return [float(np.median(np.asarray(cycles, dtype=np.float64))) for cycles in trials]


def median_of_trial_means(means: Sequence[float]) -> float:
    """Median of the per-trial means: a centre that one disturbed trial cannot move far."""
    return float(np.median(np.asarray(means, dtype=np.float64)))


def t_confidence_interval(means: Sequence[float], confidence: float = CONFIDENCE
                          ) -> tuple[float, float, float] | None:
    """Confidence interval of the mean across trials, from the t distribution.

    The trials are the independent samples (each a fresh process), n = number of
    trials: mean of trial means ± t(1 − α/2, n − 1) · s / √n, with s the sample
    standard deviation of the trial means. The per-call samples inside a trial are
    not independent (shared cache and frequency state), so they do not narrow the
    interval. Returns ``(low, high, half_width)``, or ``None`` when n < 2.
    """
    n = len(means)
    if n < 2:
        return None
    from scipy.special import stdtrit  # here, not at import: trial processes never need it

    values = np.asarray(means, dtype=np.float64)
    centre = float(np.mean(values))
    spread = float(np.std(values, ddof=1))
    half = float(stdtrit(n - 1, 0.5 + confidence / 2)) * spread / math.sqrt(n)
    return centre - half, centre + half, half


def relative_half_width(means: Sequence[float], confidence: float = CONFIDENCE
                        ) -> float | None:
    """Half-width of the t confidence interval divided by the mean of trial means.

    The figure ``--target-ci`` aims at (0.01 = the mean is known to ±1 %); ``None``
    for fewer than 2 trials.
    """
    interval = t_confidence_interval(means, confidence)
    centre = float(np.mean(means)) if len(means) else 0.0
    if interval is None or centre == 0:
        return None
    return interval[2] / centre


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


def counter_rate_ratio(total_cycles: int, total_seconds: float, frequency_hz: float
                       ) -> float | None:
    """Counter ticks per wall-clock second of a trial, relative to the calibrated rate.

    1.0 means the cycle counter ran at its calibrated frequency during the trial; a
    departure reveals a counter disturbed by frequency changes or a migrated process
    (the cycle counts of that trial are then not comparable).
    """
    if total_seconds <= 0 or frequency_hz <= 0:
        return None
    return total_cycles / (total_seconds * frequency_hz)


def disturbed_trials(ratios: Sequence[float | None],
                     tolerance: float = COUNTER_RATE_TOLERANCE) -> list[int]:
    """Indices of trials whose counter rate ratio lies outside 1 ± ``tolerance``."""
    return [i for i, ratio in enumerate(ratios)
            if ratio is not None and abs(ratio - 1.0) > tolerance]


def _per_call_cpu_ns(cpu_ns: int | None, calls: int | None) -> float | None:
    return cpu_ns / calls if cpu_ns is not None and calls else None


def trial_statistics(cycles: np.ndarray, loop_ticks: int, loop_seconds: float,
                     frequency_hz: float, facts: Trial | TrialMeasurement | None = None,
                     version: int = STATISTICS_VERSION) -> TrialStatistics:
    """One trial's statistics: the mean (arithmetic) and distribution of its calls, and
    its :func:`counter_rate_ratio` from the readings around the loop; from version 3,
    with the trial's ``facts``, its CPU-time figures: the thread's CPU time per call
    over the uninstrumented batch — over its sub-batch of least CPU time per call where
    the runner timed sub-batches (the batch's CPU time also holds what interrupts and
    the cache refills after each switch cost, in bursts that spare some sub-batches) —
    and over the per-call loop, in ns and in counter units (ns × ``frequency_hz``);
    ``None`` where the runner did not measure it."""
    stats = TrialStatistics(
        mean_cycles=trial_means([cycles])[0], **asdict(call_distribution(cycles)),
        counter_rate_ratio=counter_rate_ratio(loop_ticks, loop_seconds, frequency_hz))
    if version < 3 or facts is None:
        return stats
    batch = _per_call_cpu_ns(facts.batch_min_cpu_ns, facts.batch_min_calls) \
        if facts.batch_min_calls else _per_call_cpu_ns(facts.batch_thread_cpu_ns,
                                                       facts.batch_calls)
    loop = _per_call_cpu_ns(facts.thread_cpu_ns, len(cycles))
    rate = frequency_hz / 1e9
    if facts.unit == "core-cycles":  # a perf counter stops while the thread is off the
        stats = replace(stats, counter_rate_ratio=None)  # CPU: it has no wall-clock rate
    return replace(stats, cpu_time_ns=batch,
                   cpu_time_ticks=batch * rate if batch is not None else None,
                   loop_cpu_time_ns=loop,
                   loop_cpu_time_ticks=loop * rate if loop is not None else None)


def bootstrap_indices(n: int, resamples: int = BOOTSTRAP_RESAMPLES,
                      seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """``resamples`` × ``n`` indices in ``[0, n)``, drawn with replacement.

    From splitmix64 in numpy's uint64 arithmetic (wrapping), not from numpy's
    generators, whose streams numpy may change: the same indices on every machine and
    every numpy, so ``ngcc validate`` recomputes a bootstrap interval exactly.
    """
    counter = np.arange(1, resamples * n + 1, dtype=np.uint64) * np.uint64(
        0x9E3779B97F4A7C15) + np.uint64(seed)
    z = counter
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z % np.uint64(n)).astype(np.int64).reshape(resamples, n)


def bootstrap_interval(values: Sequence[float], confidence: float = CONFIDENCE,
                       median: bool = False) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values`` (the trial means), or of
    their median with ``median``.

    The trials are resampled with replacement :data:`BOOTSTRAP_RESAMPLES` times
    (seeded, :func:`bootstrap_indices`); the interval is the α/2 and 1 − α/2
    percentiles of the resampled means. It lies within [min, max] of the values, so
    an interval of positive figures never goes below zero, and it follows a skewed
    spread instead of mirroring it. With few trials it is somewhat narrow (5 trials:
    about the 90 % t interval). ``None`` for fewer than 2 values.
    """
    if len(values) < 2:
        return None
    data = np.asarray(values, dtype=np.float64)
    resampled = data[bootstrap_indices(len(data))]
    centres = np.median(resampled, axis=1) if median else resampled.mean(axis=1)
    low, high = np.percentile(centres, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(low), float(high)


def log_t_interval(values: Sequence[float], confidence: float = CONFIDENCE
                   ) -> tuple[float, float, float] | None:
    """t interval on the logarithms of positive ``values`` (the trial medians), back
    on the linear scale: ``exp(m ± t(1 − α/2, n − 1) · s / √n)`` with m and s the mean
    and sample standard deviation of the logarithms, n = trials.

    The trials are the independent samples, so the interval says where the per-call
    median of a trial lies; on the log scale it is positive and asymmetric by
    construction. Returns ``(low, high, relative half-width)`` with the half-width
    relative to the geometric mean ``exp(m)``; ``None`` for fewer than 2 values or a
    value that is not positive.
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size < 2 or not np.all(data > 0):
        return None
    from scipy.special import stdtrit

    logs = np.log(data)
    centre = float(np.mean(logs))
    half = float(stdtrit(data.size - 1, 0.5 + confidence / 2)) * float(
        np.std(logs, ddof=1)) / math.sqrt(data.size)
    low, high = math.exp(centre - half), math.exp(centre + half)
    return low, high, (high - low) / 2 / math.exp(centre)


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


def _flags_v1(means: Sequence[float], ratios: Sequence[float | None],
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


def _flags(means: Sequence[float], ratios: Sequence[float | None], outliers: list[int],
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


def batch_mean(facts: Sequence[Trial]) -> float | None:
    """Batch mean: Σ ``batch_ticks`` / Σ ``batch_calls`` of the uninstrumented
    batches (one counter reading around each loop, no per-call readings), over the
    trials; ``None`` unless every trial timed one."""
    if not facts or any(t.batch_calls is None or t.batch_ticks is None or not t.batch_calls
                        for t in facts):
        return None
    return sum(t.batch_ticks or 0 for t in facts) / sum(t.batch_calls or 0 for t in facts)


def observer_effect(per_call: Sequence[float], facts: Sequence[Trial]
                    ) -> tuple[float, float | None] | None:
    """``(ticks, relative)``: the median over the trials of each trial's per-call mean
    (``per_call``, :func:`trial_means`) minus its own batch mean, and of their ratio − 1.
    Paired within a trial (both loops ran in one process, one after the other) and a
    median across trials, so a trial preempted in one of its loops moves it little.
    ``None`` unless every trial timed a batch."""
    if not facts or len(facts) != len(per_call) or batch_mean(facts) is None:
        return None
    batch = [(t.batch_ticks or 0) / (t.batch_calls or 1) for t in facts]
    ticks = float(np.median([p - b for p, b in zip(per_call, batch, strict=True)]))
    if not all(batch):  # a batch whose counter did not move: no ratio
        return ticks, None
    return ticks, float(np.median([p / b - 1 for p, b in zip(per_call, batch, strict=True)]))


def core_cycles(trials: Sequence[np.ndarray], facts: Sequence[Trial]
                ) -> tuple[float, float] | None:
    """``(core cycles per tick, harness mean in core cycles)``: each trial's ticks
    converted with its own estimate of core cycles per tick; the factor is Σ core
    cycles / Σ ticks. ``None`` unless every trial has the estimate."""
    if not facts or len(facts) != len(trials) or any(
            t.core_cycles_per_tick is None for t in facts):
        return None
    ticks = [float(np.sum(cycles, dtype=np.uint64)) for cycles in trials]
    cycles = sum(n * (t.core_cycles_per_tick or 0.0) for n, t in zip(ticks, facts,
                                                                     strict=True))
    calls = sum(len(c) for c in trials)
    return (cycles / sum(ticks) if sum(ticks) else 0.0), cycles / calls


def _flags_v3(trials: Sequence[np.ndarray], facts: Sequence[Trial]) -> list[Flag]:
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


@dataclass(frozen=True)
class CpuTime:
    """The CPU-time figure of a job (see :func:`cpu_time`)."""

    ticks: float
    seconds: float
    ci95: tuple[float, float] | None
    loop_ticks: float | None


def cpu_time(facts: Sequence[Trial]) -> CpuTime | None:
    """The job's CPU-time figure: the median over the trials of each trial's thread CPU
    time per call over its uninstrumented batch (``TrialStatistics.cpu_time_ticks``;
    each trial, a fresh process, one sample), in counter units and seconds, with the
    percentile bootstrap interval of that median across trials (seeded, as the mean's),
    and the same median of the per-call loop's. The median, because some fresh
    processes run slow as a whole (``slow_process``): one of them moves a mean of five
    trials by 8 %, the median not at all. ``None`` unless every trial has the figure."""
    ticks = [v for t in facts if (v := t.statistics.cpu_time_ticks) is not None]
    ns = [v for t in facts if (v := t.statistics.cpu_time_ns) is not None]
    if not facts or len(ticks) < len(facts) or len(ns) < len(facts):
        return None
    loop = [v for t in facts if (v := t.statistics.loop_cpu_time_ticks) is not None]
    return CpuTime(ticks=float(np.median(ticks)), seconds=float(np.median(ns)) / 1e9,
                   ci95=bootstrap_interval(ticks, median=True),
                   loop_ticks=float(np.median(loop)) if len(loop) == len(facts) else None)


def leading_figure(preempted: Sequence[int] | None, figure: CpuTime | None) -> str:
    """Which figure a job's tables, pages and plots lead with: the CPU-time figure
    (``cpu_time``) when any of its trials was preempted and the figure exists, else the
    harness mean (``harness_mean``, as the NICCS pages). A preempted trial's calls hold
    the time other tasks took, its CPU time does not."""
    if preempted and figure is not None:
        return LEADING_CPU_TIME
    return LEADING_HARNESS_MEAN


def aggregate(trials: Sequence[np.ndarray], total_seconds: Sequence[float],
              ratios: Sequence[float | None], message_bytes: int,
              cpu: int | None = None, *, facts: Sequence[Trial] = (),
              version: int = STATISTICS_VERSION) -> Statistics:
    """Every aggregate statistic of one job (instance × length) over its trials.

    Args:
        trials: per-call ticks, one array per trial.
        total_seconds: wall-clock seconds of each trial's timed batch.
        ratios: each trial's :func:`counter_rate_ratio`.
        message_bytes: the message length (for cycles/byte and MB/s).
        cpu: the measuring CPU, quoted in the flags' messages.
        facts: the trials' entries (their batch, core-cycle and preemption facts);
            empty: those statistics are ``None``.
        version: the statistics version to compute (a record is recomputed with its
            own); version 1 leaves every later field at ``None``.

    The mean time and MB/s come from wall time (Σ seconds / Σ calls) so they hold even
    where the cycle counter does not tick at the core frequency; MB is decimal (10^6).
    """
    means = trial_means(trials)
    mean = harness_mean(trials)
    calls = sum(len(cycles) for cycles in trials)
    interval = t_confidence_interval(means)
    mean_seconds = sum(total_seconds) / calls
    outliers = outlying_trials(means)
    disturbed = disturbed_trials(ratios)
    v1 = Statistics(
        trials=len(trials), calls=calls, mean_cycles=mean,
        **asdict(call_distribution(pooled(trials))),
        median_of_trial_means_cycles=median_of_trial_means(means),
        ci95_low_cycles=interval[0] if interval else None,
        ci95_high_cycles=interval[1] if interval else None,
        ci95_half_width_cycles=interval[2] if interval else None,
        ci95_relative=relative_half_width(means),
        cycles_per_byte=mean / message_bytes if message_bytes else None,
        mean_seconds=mean_seconds,
        mb_per_s=message_bytes / mean_seconds / 1e6 if mean_seconds > 0 else None,
        outlying_trials=tuple(outliers), disturbed_trials=tuple(disturbed),
        flags=tuple(_flags_v1(means, ratios, outliers, disturbed, cpu)))
    if version == 1:
        return v1
    if version not in STATISTICS_VERSIONS:
        raise ValueError("statistics version %r is not one this ngcc computes" % version)
    per_call = float(np.mean(means))
    boot = bootstrap_interval(means)
    medians = log_t_interval(trial_medians(trials))
    batch = batch_mean(facts)
    observer = observer_effect(means, facts)
    core = core_cycles(trials, facts)
    preempted = tuple(preempted_trials(facts)) if any(
        cpu_share(t) is not None or involuntary_switches(t) is not None for t in facts) \
        else None
    flags = _flags(means, ratios, outliers, disturbed, facts, cpu)
    v2 = replace(
        v1, version=version, per_call_mean_ticks=per_call,
        mean_bootstrap_ci95_low_ticks=boot[0] if boot else None,
        mean_bootstrap_ci95_high_ticks=boot[1] if boot else None,
        mean_bootstrap_ci95_relative=(boot[1] - boot[0]) / 2 / per_call
        if boot and per_call else None,
        median_ci95_low_ticks=medians[0] if medians else None,
        median_ci95_high_ticks=medians[1] if medians else None,
        median_ci95_relative=medians[2] if medians else None,
        batch_mean_ticks=batch,
        observer_effect_ticks=observer[0] if observer else None,
        observer_effect_relative=observer[1] if observer else None,
        core_cycles_per_tick=core[0] if core else None,
        core_cycles_per_byte=core[1] / message_bytes if core and message_bytes else None,
        preempted_trials=preempted, flags=tuple(flags))
    if version == 2:
        return v2
    figure = cpu_time(facts)
    return replace(
        v2, cpu_time_ticks=figure.ticks if figure else None,
        cpu_time_seconds=figure.seconds if figure else None,
        cpu_time_ci95_low_ticks=figure.ci95[0] if figure and figure.ci95 else None,
        cpu_time_ci95_high_ticks=figure.ci95[1] if figure and figure.ci95 else None,
        cpu_time_ci95_relative=(figure.ci95[1] - figure.ci95[0]) / 2 / figure.ticks
        if figure and figure.ci95 and figure.ticks else None,
        loop_cpu_time_ticks=figure.loop_ticks if figure else None,
        cpu_time_per_byte=figure.ticks / message_bytes if figure and message_bytes else None,
        leading=leading_figure(preempted, figure),
        flags=tuple(flags + _flags_v3(trials, facts)))


def aggregate_trials(trials: Sequence[Trial], cycles: Sequence[np.ndarray],
                     message_bytes: int, cpu: int | None,
                     version: int = STATISTICS_VERSION) -> Statistics:
    """:func:`aggregate` of a job's trial entries and their per-call ticks: what the
    campaign writes and ``ngcc validate`` recomputes (with the record's version)."""
    return aggregate(cycles, [t.loop_seconds for t in trials],
                     [t.statistics.counter_rate_ratio for t in trials], message_bytes, cpu,
                     facts=trials, version=version)


def target_reached_percent(cycles: Sequence[np.ndarray], statistic: str) -> float | None:
    """The precision a job with ``--target-ci`` reached, in percent (100 ×
    :func:`stop_rule_precision`); ``None`` for a single trial."""
    relative = stop_rule_precision(cycles, statistic)
    return None if relative is None else 100 * relative


def stop_rule_precision(trials: Sequence[np.ndarray], statistic: str) -> float | None:
    """:func:`relative_precision` straight from the trials' per-call ticks (what the
    campaign asks after each trial): the t interval's relative half-width of the mean
    of trial means, or the log-scale interval's of the trial medians."""
    if statistic == "median":
        interval = log_t_interval(trial_medians(trials))
        return interval[2] if interval else None
    if statistic == "mean":
        return relative_half_width(trial_means(trials))
    raise ValueError("statistic must be mean or median, not %r" % statistic)


def relative_precision(statistics: Statistics, statistic: str) -> float | None:
    """The relative half-width of the 95 % interval of ``statistic`` that the stop
    rule of ``--target-ci`` compares: ``mean`` (the t interval's, as ngcc 0.1) or
    ``median`` (the log-scale interval of the trial medians)."""
    if statistic == "median":
        return statistics.median_ci95_relative
    if statistic == "mean":
        return statistics.ci95_relative
    raise ValueError("statistic must be mean or median, not %r" % statistic)
