"""The statistics of the timing-leakage test (:mod:`ngcc.measure.leak_measurement`, the dudect
method): Welch's t between the two classes of calls, for several tests, updated as the
batches arrive (central moments per class, merged with Pébay's formulas, so the
online figures equal the batch figures up to rounding):

* first order (a difference of means) on every call (``raw``), and on the calls
  faster than each of :data:`CROP_FRACTIONS` percentiles (``fastest 29.3 %``): the
  slow tail is mostly interrupts and preemption, noise the crop removes, so a small
  shift of the typical call shows up sooner; the percentiles are fixed once, from
  the first :data:`CALIBRATION_CALLS` calls of both classes together;
* second order (a difference of variances: Welch's t of the squared deviations from
  each class's own mean) on the same populations. It catches a leak that spreads the
  random class's times without moving their mean: a table lookup that hits the cache
  for one input and misses for another. A test's figure counts once it holds
  :data:`MIN_SAMPLES` calls of each class.

The verdict is read from the largest ``|t|`` of the tests that count: below
:data:`T_POSSIBLE` (4.5) ``no leak detected``, above :data:`T_LEAK` (10) ``LEAK``,
between ``possible leak`` (the words are the evidence's, :mod:`ngcc.evidence.leak_evidence`).
Under no leak, each ``|t|`` is about the absolute value of a standard normal: 4.5 is
exceeded with probability 7e-6 per test and look, 10 never.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ngcc.evidence.leak_evidence import LEAK, NO_LEAK, POSSIBLE_LEAK, TOO_FEW

T_POSSIBLE = 4.5
"""``|t|`` at or above which the verdict is ``possible leak``."""
T_LEAK = 10.0
"""``|t|`` above which the verdict is ``LEAK`` (and the run may stop)."""

#: The fractions of calls each crop keeps (the fastest ones): 1 - 0.5^x for x from
#: 0.1 to 10, dense where the fastest calls are, as dudect's 1 - 0.5^(10 i / 100).
CROP_FRACTIONS = tuple(1.0 - 0.5 ** x for x in (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5,
                                                3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0))
MIN_SAMPLES = 1000
"""Calls of each class a test needs before its ``|t|`` counts (towards the verdict and
the early stop): with fewer, a skewed distribution of ticks makes t less normal."""
CALIBRATION_CALLS = 1000
"""Calls (both classes) whose percentiles fix the crops' thresholds."""


@dataclass
class Moments:
    """Counts and central moments (sums of powers of deviations from the mean), one
    entry per element of the arrays' common shape."""

    n: np.ndarray
    mean: np.ndarray
    m2: np.ndarray
    m3: np.ndarray
    m4: np.ndarray

    @classmethod
    def zeros(cls, shape: tuple[int, ...]) -> Moments:
        """No samples anywhere."""
        return cls(*(np.zeros(shape) for _ in range(5)))

    @classmethod
    def of_groups(cls, values: np.ndarray, group: np.ndarray, groups: int) -> Moments:
        """The moments of ``values`` split by ``group`` (0 to ``groups - 1``): two
        passes, the deviations taken from each group's own mean."""
        n = np.bincount(group, minlength=groups).astype(np.float64)
        mean = np.bincount(group, weights=values, minlength=groups) / np.maximum(n, 1.0)
        deviation = values - mean[group]
        square = deviation * deviation
        return cls(n, mean, np.bincount(group, weights=square, minlength=groups),
                   np.bincount(group, weights=square * deviation, minlength=groups),
                   np.bincount(group, weights=square * square, minlength=groups))

    def merged(self, other: Moments) -> Moments:
        """The moments of both sets of samples together (Pébay 2008, eq. 2.1-2.3). An
        empty side leaves the other exactly as it was: ``0 + (x / n) * n`` need not be
        ``x`` in floating point, and that rounding would give a population of one tick
        value a variance of 1e-25 instead of 0, and its t the ratio of two rounding
        errors."""
        na, nb = self.n, other.n
        n = na + nb
        delta = np.where((na > 0) & (nb > 0), other.mean - self.mean, 0.0)
        d = delta / np.where(n > 0, n, 1.0)  # delta / n
        nab = na * nb
        m2 = self.m2 + other.m2 + delta * d * nab
        m3 = (self.m3 + other.m3 + delta * d * d * nab * (na - nb)
              + 3.0 * d * (na * other.m2 - nb * self.m2))
        m4 = (self.m4 + other.m4 + delta * d * d * d * nab * (na * na - nab + nb * nb)
              + 6.0 * d * d * (na * na * other.m2 + nb * nb * self.m2)
              + 4.0 * d * (na * other.m3 - nb * self.m3))
        mean = np.where(na > 0, self.mean + d * nb, other.mean)
        return Moments(n, mean, m2, m3, m4)

    def prefixes(self) -> Moments:
        """Along the last axis: entry j holds entries 0..j merged."""
        parts = [self[..., 0]]
        for j in range(1, self.n.shape[-1]):
            parts.append(parts[-1].merged(self[..., j]))
        return Moments(*(np.stack([getattr(p, name) for p in parts], axis=-1)
                         for name in ("n", "mean", "m2", "m3", "m4")))

    def __getitem__(self, index: Any) -> Moments:
        return Moments(self.n[index], self.mean[index], self.m2[index], self.m3[index],
                       self.m4[index])


def welch_t(n: np.ndarray, mean: np.ndarray, variance: np.ndarray,
            min_samples: int = 2) -> np.ndarray:
    """Welch's t of class 0 against class 1 (axis 0 of each array: the class), NaN
    where a class has fewer than ``min_samples`` samples or both have no variance.
    Positive: class 0 (the fixed message) is slower."""
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.sqrt(variance[0] / n[0] + variance[1] / n[1])
        t = (mean[0] - mean[1]) / scale
    enough = (n[0] >= max(min_samples, 2)) & (n[1] >= max(min_samples, 2))
    return np.where(enough & (scale > 0) & np.isfinite(scale), t, np.nan)


class LeakStatistics:
    """Welch's t tests between the two classes, updated batch by batch.

    Populations: every call (``raw``) and, for each threshold, the calls faster than
    it. Tests: first order on every population, then second order on every one.

    Args:
        thresholds: the crops' thresholds in ticks (calls strictly below are kept),
            ascending; :func:`crop_thresholds` makes them from calibration calls.
        fractions: the fraction of calls each threshold was chosen to keep (names).
        min_samples: calls of each class a test needs before its ``|t|`` counts.
    """

    def __init__(self, thresholds: Sequence[float] | np.ndarray,
                 fractions: Sequence[float] = CROP_FRACTIONS, min_samples: int = MIN_SAMPLES):
        self.thresholds = np.asarray(thresholds, dtype=np.float64)
        if len(self.thresholds) != len(fractions) or np.any(np.diff(self.thresholds) < 0):
            raise ValueError("expected one ascending threshold per crop fraction")
        self.fractions = tuple(float(f) for f in fractions)
        self.min_samples = min_samples
        self.moments = Moments.zeros((2, 1 + len(self.thresholds)))

    @property
    def populations(self) -> tuple[str, ...]:
        """``raw``, then ``fastest 6.7 %`` ... for each crop."""
        return ("raw", *("fastest %.3g %%" % (100 * f) for f in self.fractions))

    @property
    def tests(self) -> tuple[str, ...]:
        """The names of the tests, in the order of :meth:`t`."""
        return (*self.populations, *("%s (2nd order)" % p for p in self.populations))

    @property
    def calls(self) -> int:
        """Calls added so far (both classes)."""
        return int(self.moments.n[:, 0].sum())

    def add(self, ticks: np.ndarray, classes: np.ndarray) -> None:
        """Add the ticks of a batch of calls and their classes (0 or 1)."""
        values = np.asarray(ticks, dtype=np.float64)
        classes = np.asarray(classes)
        crops = len(self.thresholds)
        batch = []
        for label in (0, 1):
            x = values[classes == label]
            # Segment s holds the calls between thresholds s-1 and s; crop j (from 1)
            # is segments 0..j-1, raw is all of them.
            segment = np.searchsorted(self.thresholds, x, side="right")
            prefix = Moments.of_groups(x, segment, crops + 1).prefixes()
            batch.append(Moments(*(np.concatenate([a[-1:], a[:-1]]) for a in (
                prefix.n, prefix.mean, prefix.m2, prefix.m3, prefix.m4))))
        self.moments = self.moments.merged(Moments(*(np.stack([getattr(b, name) for b in batch])
                                                     for name in ("n", "mean", "m2", "m3",
                                                                  "m4"))))

    def t(self) -> np.ndarray:
        """t of every test (:attr:`tests` order); NaN where it does not count yet."""
        m = self.moments
        n = m.n
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = m.m2 / (n - 1)
            squares_mean = m.m2 / n                           # of (x - mean)^2
            squares_variance = (m.m4 / n - squares_mean ** 2) * n / (n - 1)
            # Ticks are integers: n of them that are not all equal have a variance of
            # at least 1/n. Below half that, every call of the population read the
            # same ticks (a crop below the counter's second step holds one value) and
            # what is left is rounding: zero, so that its t does not count.
            constant = ~(variance >= 0.5 / n)
            variance = np.where(constant, 0.0, variance)
            squares_variance = np.where(
                constant | ~(squares_variance > 1e-9 * squares_mean ** 2), 0.0,
                squares_variance)
        first = welch_t(n, m.mean, variance, self.min_samples)
        second = welch_t(n, squares_mean, squares_variance, self.min_samples)
        return np.concatenate([first, second])

    def counts(self) -> np.ndarray:
        """Calls of each class (rows) in each population (columns)."""
        return self.moments.n.astype(np.int64)


def crop_thresholds(ticks: np.ndarray, fractions: Sequence[float] = CROP_FRACTIONS) -> np.ndarray:
    """The ticks below which each fraction of ``ticks`` lies (percentiles)."""
    return np.quantile(np.asarray(ticks, dtype=np.float64), list(fractions))


def verdict(max_t: float | None) -> str:
    """The verdict of a largest ``|t|`` (None: no test counts yet)."""
    if max_t is None:
        return TOO_FEW
    if max_t > T_LEAK:
        return LEAK
    return POSSIBLE_LEAK if max_t >= T_POSSIBLE else NO_LEAK


def strongest(t: np.ndarray, tests: Sequence[str]) -> tuple[float | None, str]:
    """The largest ``|t|`` of the tests that count and its test's name, or (None, "")."""
    magnitude = np.abs(t)
    if not np.any(np.isfinite(magnitude)):
        return None, ""
    index = int(np.nanargmax(magnitude))
    return float(magnitude[index]), tests[index]
