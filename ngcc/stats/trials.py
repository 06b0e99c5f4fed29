"""Statistics of per-call counts: each trial's, and every aggregate statistic of a job
over its trials (:func:`aggregate`), with the batch mean, the observer effect, the
core-cycle estimate, the CPU-time figure and the leading figure. The pieces they rest
on: the per-call figures (:mod:`ngcc.stats.calls`), the intervals and the stop rule
(:mod:`ngcc.stats.intervals`) and the flags (:mod:`ngcc.stats.flags`).

Every function takes plain numbers or numpy arrays (one uint64 array of per-call
counter ticks per trial) and returns plain Python numbers, or the evidence model's
:class:`~ngcc.evidence.model.TrialStatistics` and :class:`~ngcc.evidence.model.Statistics`, so the
results go straight into the JSON evidence. ``None`` stands for a statistic that is
undefined (for example a confidence interval from a single trial); NaN never appears.

One word for one thing (the figures as data: :mod:`ngcc.evidence.figures`):

* the *per-call mean* (``mean_cycles``): Σ per-call ticks of every call of every trial
  / Σ calls; each call is read on its own, so each carries the counter bracket;
* the *mean of trial means* (``per_call_mean_ticks``): each trial (a fresh process, the
  independent sample) weighing the same: the centre of the mean's confidence interval;
* the *batch mean* (``batch_mean_ticks``): Σ ticks of the uninstrumented batches /
  Σ batch calls (one counter reading around a loop of calls, as the NGCC harness
  reads it), wall time;
* the *observer effect*: what the per-call readings add, paired within each trial (its
  per-call mean against its own batch mean) and the median taken over the trials, so
  that one preempted trial does not decide it;
* the *CPU-time figure* (``cpu_time_ticks``, statistics version 3): the thread's CPU
  time over the uninstrumented batch / its calls, in counter units (× the trial's
  counter rate) and in seconds: what the calls cost while they ran, which a competing
  process cannot move, since the thread's CPU time stops while it is off the CPU; from
  version 4 the median over the trials of the fast speed state (:func:`speed_states`);
* the *leading figure* (``leading``): the one every view leads with: from version 4 the
  CPU-time figure wherever the trials measured it (:func:`leading_figure`).

The statistics are versioned (:data:`STATISTICS_VERSION`, stored in each record), so
``ngcc validate`` recomputes a record with the rules of the version that wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ngcc.evidence import figures as _figures
from ngcc.evidence.model import STATISTICS_VERSIONS, Statistics, Trial, TrialStatistics
from ngcc.stats.calls import (
    call_distribution,
    median_of_trial_means,
    per_call_mean,
    pooled,
    trial_means,
    trial_medians,
)
from ngcc.stats.flags import (
    cpu_share,
    disturbed_trials,
    flags_v1,
    flags_v2,
    flags_v3,
    involuntary_switches,
    outlying_trials,
    preempted_trials,
    slow_state_flags,
)
from ngcc.stats.intervals import (
    bootstrap_interval,
    log_t_interval,
    relative_half_width,
    t_confidence_interval,
)

if TYPE_CHECKING:
    from ngcc.evidence.model import TrialMeasurement

#: The version of the statistics this ngcc computes (see :class:`Statistics`).
STATISTICS_VERSION = STATISTICS_VERSIONS[-1]
#: How far above the job's fastest trial a trial's CPU-time figure may lie and still
#: count as the fast speed state. A KVM guest here runs the same code at two speeds
#: 1.6–1.9x apart, a process in one state for its life (another guest on the core or
#: its caches), while the figure of one state varies by a few percent: 25 % lies between
#: (chosen with ``benchmarks/speed_states.py``).
SPEED_STATE_TOLERANCE = 0.25
#: From version 5, how far above the job's fastest trial a trial may lie and still count
#: in the figure: the speed states are not two levels but several (1.0, 1.25, 1.4,
#: 1.8 × here), so the trials within 25 % still mixed them. Four campaigns of the same
#: 44 jobs (alone, beside a spinner, alone twice more) agreed within 5 % in 18 of 44
#: cells by the median within 25 % and in 31 by the median within 10 %
#: (``benchmarks/figure_windows.py``). Trials between the two are left out, not replaced.
FIGURE_TOLERANCE = 0.10


def figure_tolerance(version: int = STATISTICS_VERSION) -> float:
    """How far above the job's fastest trial a trial still counts in the CPU-time figure
    of statistics ``version`` (4: :data:`SPEED_STATE_TOLERANCE`; 5: :data:`FIGURE_TOLERANCE`)."""
    return SPEED_STATE_TOLERANCE if version < 5 else FIGURE_TOLERANCE


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
    """``(core cycles per tick, per-call mean in core cycles)``: each trial's ticks
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


@dataclass(frozen=True)
class CpuTime:
    """The CPU-time figure of a job (see :func:`cpu_time`)."""

    ticks: float
    seconds: float
    ci95: tuple[float, float] | None
    loop_ticks: float | None
    left_out: tuple[int, ...] = ()


def speed_states(figures: Sequence[float], tolerance: float = SPEED_STATE_TOLERANCE
                 ) -> list[int]:
    """The trials of the slow speed state: those whose figure lies more than
    ``tolerance`` above the least (each trial a fresh process, which runs in one state
    for its life); the others are the fast state. Empty when every trial is within."""
    if not figures:
        return []
    least = min(figures)
    return [i for i, v in enumerate(figures) if v > least * (1 + tolerance)]


def cpu_time(facts: Sequence[Trial], version: int = STATISTICS_VERSION) -> CpuTime | None:
    """The job's CPU-time figure: the median over the trials of each trial's thread CPU
    time per call over its uninstrumented batch (``TrialStatistics.cpu_time_ticks``;
    each trial, a fresh process, one sample), in counter units and seconds, with the
    percentile bootstrap interval of that median across trials (seeded, as the mean's),
    and the same median of the per-call loop's. From version 4, over the trials of the
    fast speed state only (:func:`speed_states` within :func:`figure_tolerance`; the
    others ``left_out``): a host whose processes run at several speeds cannot move it by
    how many trials drew a slow one. (Version 3 took every trial, whose median jumps
    when 3 of 5 run slow.)
    ``None`` unless every trial has the figure."""
    ticks = [v for t in facts if (v := t.statistics.cpu_time_ticks) is not None]
    ns = [v for t in facts if (v := t.statistics.cpu_time_ns) is not None]
    if not facts or len(ticks) < len(facts) or len(ns) < len(facts):
        return None
    loop = [v for t in facts if (v := t.statistics.loop_cpu_time_ticks) is not None]
    left_out = tuple(speed_states(ticks, figure_tolerance(version))) if version >= 4 else ()
    kept = [i for i in range(len(facts)) if i not in left_out]
    ticks, ns = [ticks[i] for i in kept], [ns[i] for i in kept]
    loop = [loop[i] for i in kept] if len(loop) == len(facts) else []
    return CpuTime(ticks=float(np.median(ticks)), seconds=float(np.median(ns)) / 1e9,
                   ci95=bootstrap_interval(ticks, median=True),
                   loop_ticks=float(np.median(loop)) if loop else None, left_out=left_out)


def leading_figure(preempted: Sequence[int] | None, figure: CpuTime | None,
                   version: int = STATISTICS_VERSION) -> str:
    """Which figure a job leads with (``Statistics.leading``): from version 4 the
    CPU-time figure wherever it exists (it holds no counter bracket and no other task's
    time), else the per-call mean. Version 3 led with the CPU-time figure only where a
    trial was preempted, else with the per-call mean under its old code."""
    if version >= 4:
        return _figures.CPU_TIME.code if figure is not None else _figures.PER_CALL_MEAN.code
    if preempted and figure is not None:
        return _figures.CPU_TIME.code
    return "harness_mean"


def core_cycles_of_lead(facts: Sequence[Trial], figure: CpuTime | None
                        ) -> tuple[float, float, float] | None:
    """``(core cycles per tick, the leading figure in core cycles, spread)``: the
    CPU-time figure × the median of the trials' estimates of core cycles per tick (an
    estimate: no PMU counted them), and the estimates' (max − min) / median. ``None``
    without the figure or an estimate in every trial."""
    factors = [t.core_cycles_per_tick for t in facts]
    if figure is None or not facts or any(f is None or not f > 0 for f in factors):
        return None
    values = [float(f or 0.0) for f in factors]
    middle = float(np.median(values))
    return middle, figure.ticks * middle, (max(values) - min(values)) / middle


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
    mean = per_call_mean(trials)
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
        flags=tuple(flags_v1(means, ratios, outliers, disturbed, cpu)))
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
    flags = flags_v2(means, ratios, outliers, disturbed, facts, cpu)
    v2: Statistics = replace(
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
    figure = cpu_time(facts, version)
    v3 = replace(
        v2, cpu_time_ticks=figure.ticks if figure else None,
        cpu_time_seconds=figure.seconds if figure else None,
        cpu_time_ci95_low_ticks=figure.ci95[0] if figure and figure.ci95 else None,
        cpu_time_ci95_high_ticks=figure.ci95[1] if figure and figure.ci95 else None,
        cpu_time_ci95_relative=(figure.ci95[1] - figure.ci95[0]) / 2 / figure.ticks
        if figure and figure.ci95 and figure.ticks else None,
        loop_cpu_time_ticks=figure.loop_ticks if figure else None,
        cpu_time_per_byte=figure.ticks / message_bytes if figure and message_bytes else None,
        leading=leading_figure(preempted, figure, version),
        flags=tuple(flags + flags_v3(trials, facts)))
    if version == 3:
        return v3
    return _version_4(v3, facts, figure, message_bytes)


def _version_4(v3: Statistics, facts: Sequence[Trial], figure: CpuTime | None,
               message_bytes: int) -> Statistics:
    """Version 4 over version 3's statistics: the slow-state trials left out and
    flagged, and the per-byte figures, MB/s and core cycles of the leading figure."""
    lead = _figures.lead(replace(v3, version=4))
    core = core_cycles_of_lead(facts, figure)
    left_out = figure.left_out if figure else ()
    return replace(
        v3, left_out_trials=left_out if figure else None,
        cycles_per_byte=lead.per_byte(message_bytes),
        mb_per_s=lead.megabytes_per_second(message_bytes),
        core_cycles_per_tick=core[0] if core else v3.core_cycles_per_tick,
        core_cycles_per_byte=core[1] / message_bytes if core and message_bytes
        else None if figure else v3.core_cycles_per_byte,
        core_cycles_per_tick_spread=core[2] if core else None,
        flags=v3.flags + tuple(slow_state_flags(facts, left_out, SPEED_STATE_TOLERANCE)))


def aggregate_trials(trials: Sequence[Trial], cycles: Sequence[np.ndarray],
                     message_bytes: int, cpu: int | None,
                     version: int = STATISTICS_VERSION) -> Statistics:
    """:func:`aggregate` of a job's trial entries and their per-call ticks: what the
    campaign writes and ``ngcc validate`` recomputes (with the record's version)."""
    return aggregate(cycles, [t.loop_seconds for t in trials],
                     [t.statistics.counter_rate_ratio for t in trials], message_bytes, cpu,
                     facts=trials, version=version)
