"""The per-call figures of a job's trials (one uint64 array of per-call counter ticks
per trial): the per-call mean, all calls pooled and their distribution, each trial's
mean and median, and the median of the trial means."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def per_call_mean(trials: Sequence[np.ndarray]) -> float:
    """The per-call mean: Σ per-call ticks of every call of every trial / Σ calls.

    Every call weighs the same, whatever trial it belongs to. Each call's count includes
    the counter readings around it (the bracket), so it is not the harness's own
    statistic, which reads the counter once around a loop of calls (the batch mean; the
    CPU-time figure that leads is of such a batch).
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
