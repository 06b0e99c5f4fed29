"""Statistics of per-call cycle counts: per trial, across trials, and the flags.

Every function takes plain numbers or numpy arrays (one uint64 array of per-call
cycles per trial) and returns plain Python numbers, or the evidence model's
:class:`~ngcc._model.TrialStatistics` and :class:`~ngcc._model.Statistics`, so the
results go straight into the JSON evidence. ``None`` stands for a statistic that is
undefined (for example a confidence interval from a single trial); NaN never appears.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ngcc._model import Flag, Statistics, TrialStatistics

CONFIDENCE = 0.95
OUTLIER_TOLERANCE = 0.05      # a trial mean 5 % away from the median of trial means
COUNTER_RATE_TOLERANCE = 0.02  # a counter running 2 % off its calibrated rate


def batch_mean(trials: Sequence[np.ndarray]) -> float:
    """Batch mean: Σ cycles of every call of every trial / Σ calls.

    This is the headline "mean cycles" of the harness and of the reports: every call
    weighs the same, whatever trial it belongs to.
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


def trial_statistics(cycles: np.ndarray, loop_ticks: int, loop_seconds: float,
                     frequency_hz: float) -> TrialStatistics:
    """One trial's statistics: the mean (arithmetic) and distribution of its calls, and
    its :func:`counter_rate_ratio` from the readings around the loop."""
    return TrialStatistics(
        mean_cycles=trial_means([cycles])[0], **asdict(call_distribution(cycles)),
        counter_rate_ratio=counter_rate_ratio(loop_ticks, loop_seconds, frequency_hz))


def _flag_messages(means: Sequence[float], ratios: Sequence[float | None],
                   outliers: list[int], disturbed: list[int], cpu: int | None
                   ) -> list[Flag]:
    where = "CPU %d" % cpu if cpu is not None else "the measuring CPU"
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


def aggregate(trials: Sequence[np.ndarray], total_seconds: Sequence[float],
              ratios: Sequence[float | None], message_bytes: int,
              cpu: int | None = None) -> Statistics:
    """Every aggregate statistic of one job (instance × length) over its trials.

    Args:
        trials: per-call cycles, one array per trial.
        total_seconds: wall-clock seconds of each trial's timed batch.
        ratios: each trial's :func:`counter_rate_ratio`.
        message_bytes: the message length (for cycles/byte and MB/s).
        cpu: the measuring CPU, quoted in the flags' messages.

    The mean time and MB/s come from wall time (Σ seconds / Σ calls) so they hold even
    where the cycle counter does not tick at the core frequency; MB is decimal (10^6).
    """
    means = trial_means(trials)
    mean = batch_mean(trials)
    calls = sum(len(cycles) for cycles in trials)
    interval = t_confidence_interval(means)
    mean_seconds = sum(total_seconds) / calls
    outliers = outlying_trials(means)
    disturbed = disturbed_trials(ratios)
    return Statistics(
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
        flags=tuple(_flag_messages(means, ratios, outliers, disturbed, cpu)))
