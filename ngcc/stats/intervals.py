"""The intervals of a job's centre across its trials (each trial, a fresh process, one
independent sample): the t interval of the mean of trial means, the seeded percentile
bootstrap, the log-scale t interval of the trial medians, and the stop rule of
``--target-ci`` (the relative half-width of the mean's or the median's interval)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ngcc.evidence.figures import CONFIDENCE as CONFIDENCE  # the rule's home: figures
from ngcc.evidence.model import Statistics
from ngcc.stats.calls import trial_means, trial_medians

#: The bootstrap of the mean: resamples, and the fixed seed of its generator
#: (:func:`bootstrap_indices`), so every reader recomputes the same interval.
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 0x6E676363  # "ngcc"


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
