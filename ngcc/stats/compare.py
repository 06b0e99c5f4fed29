"""Is A faster than B, and is the difference real? The statistics of a comparison.

Pure functions on per-trial statistics (one positive number per trial: that trial's
median or mean cycles per call); no I/O. The trials are the independent samples:
each is a fresh pinned process, while the calls inside one trial share its cache and
frequency state and do not narrow an interval.

The method (the README's ``ngcc compare`` section says why):

* **Figure** of one side: the geometric mean of its per-trial statistics, so that the
  ratio of two figures is exactly the ratio the test is about.
* **Ratio** A/B and its confidence interval: Welch's t on the natural logarithms of the
  per-trial statistics. The log-ratio ``mean(log a) − mean(log b)`` has the standard
  error ``√(s²_a/n_a + s²_b/n_b)`` and the Welch–Satterthwaite degrees of freedom; the
  interval ``exp(log-ratio ± t · se)`` is always positive, and swapping A and B inverts
  it exactly. Timing noise is multiplicative (a disturbance costs a share of the run,
  not a fixed count), and logarithms make it additive and less skewed.
* **Verdict**: two-sided p-value of the same t, and the run-to-run margin: significant
  when p < α *and* the interval lies wholly beyond ±:data:`MARGIN` (5 %). Two runs of
  the same code on a busy host differ by a few percent as a whole (the host's state
  drifts between runs, and every length of a run shares it), a difference the trials of
  one run cannot see; a verdict within it would call that drift a speed-up
  (``benchmarks/compare_aa.py`` measures how often). The interval's confidence is 1 − α.
  Where neither side's trials spread at all (identical per-trial medians, which a
  counter's resolution makes common on a quiet machine) t is undefined: the p-value
  is then the exact permutation test's (5 equal trials against 5 others: 2/252), and
  no interval is claimed.
* **Geometric-mean summary** of one pair across message lengths: the mean of the
  per-length log-ratios, whose variance is the mean of their variances / L (the
  lengths are measured by different processes, hence independent) and whose degrees
  of freedom follow Welch–Satterthwaite over every variance component.

Every estimate is vectorised over leading axes (the last axis holds the trials), so
simulations of thousands of comparisons run as array operations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike

from ngcc.evidence.choices import ALPHA as ALPHA  # its home, which the command line reads

#: Ratios within 1 ± this are not called significant whatever p says: what two runs of
#: the same code differ by on a busy 2-core guest (``benchmarks/compare_aa.py``).
MARGIN = 0.05
#: Fewest trials per side for a variance, hence for an interval and a verdict.
MIN_TRIALS = 2


@dataclass(frozen=True)
class Estimate:
    """A log-ratio (log A − log B) with its Welch–Satterthwaite uncertainty.

    Each field is an array of the same shape (one entry per comparison), or a 0-d
    array for one comparison.

    Attributes:
        log_ratio: the difference of the mean logarithms.
        variance: the variance of ``log_ratio`` (NaN where a side has < 2 trials; 0
            where neither side's trials spread at all).
        df: Welch–Satterthwaite degrees of freedom (``inf`` where ``variance`` is 0).
        exact_p: the p-value where ``variance`` is 0: that of the exact permutation
            test of two constant sides (NaN where unknown, as for a summary).
    """

    log_ratio: np.ndarray
    variance: np.ndarray
    df: np.ndarray
    exact_p: np.ndarray

    def p_value(self) -> np.ndarray:
        """Two-sided p-value of Welch's t = log_ratio / √variance against "no difference".

        Where the variance is 0 (identical per-trial figures on each side, as per-trial
        medians on a quiet machine can be) the t statistic is undefined, and the
        p-value is :attr:`exact_p`; NaN where the variance is undefined.
        """
        from scipy.special import stdtr

        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.abs(self.log_ratio) / np.sqrt(self.variance)
            p = 2.0 * stdtr(self.df, -t)
        return np.where(self.variance == 0, self.exact_p, p)

    def ratio_interval(self, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """The ``confidence`` interval of the ratio A/B: exp(log_ratio ± t_q(df) · se).

        NaN where the variance is 0 or undefined: trials that do not spread at all
        show the counter's resolution, not the uncertainty, so no interval is claimed.
        """
        from scipy.special import stdtrit

        quantile = stdtrit(self.df, 0.5 + confidence / 2)
        half = np.where(self.variance > 0, quantile * np.sqrt(self.variance), np.nan)
        return np.exp(self.log_ratio - half), np.exp(self.log_ratio + half)


def separation_p_value(n_a: int, n_b: int) -> float:
    """Exact two-sided permutation p-value of A's n_a equal values against B's n_b others.

    Of the C(n_a + n_b, n_a) ways to deal the values into sides, those that swap k
    values give a difference of means (1 − k(n_a + n_b)/(n_a n_b)) times the observed
    one; the p-value is the share with a difference at least as large: k = 0, and
    k = n_a = n_b (the mirror) when the sides are equal in size. 5 against 5: 2/252.
    """
    total = n_a + n_b
    extreme = sum(math.comb(n_a, k) * math.comb(n_b, k) for k in range(min(n_a, n_b) + 1)
                  if abs(1 - k * total / (n_a * n_b)) >= 1 - 1e-12)
    return extreme / math.comb(total, n_a)


def _logs(values: ArrayLike, side: str) -> np.ndarray:
    logs = np.asarray(values, dtype=np.float64)
    if logs.ndim == 0 or logs.shape[-1] == 0:
        raise ValueError("side %s has no trials to compare" % side)
    if not np.all(np.isfinite(logs)) or np.any(logs <= 0):
        raise ValueError("side %s holds a per-trial figure that is not a positive finite "
                         "number; cycle counts are > 0" % side)
    return np.log(logs)


def _variance_of_mean(logs: np.ndarray) -> np.ndarray:
    """s² / n of the last axis (ddof = 1); NaN with fewer than 2 trials."""
    n = logs.shape[-1]
    if n < MIN_TRIALS:
        return np.full(logs.shape[:-1], np.nan)
    return np.asarray(np.var(logs, axis=-1, ddof=1) / n)


def log_ratio(a: ArrayLike, b: ArrayLike) -> Estimate:
    """Welch's estimate of log A − log B from per-trial statistics (trials on the last axis).

    ``a`` and ``b`` hold positive per-trial figures; their leading axes broadcast, so
    ``a`` of shape (1000, 5) against ``b`` of shape (1000, 8) is 1000 comparisons of 5
    trials against 8.

    Raises:
        ValueError: a side is empty or holds a value that is not positive and finite.
    """
    log_a, log_b = _logs(a, "A"), _logs(b, "B")
    n_a, n_b = log_a.shape[-1], log_b.shape[-1]
    var_a, var_b = _variance_of_mean(log_a), _variance_of_mean(log_b)
    variance = var_a + var_b
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = var_a ** 2 / max(n_a - 1, 1) + var_b ** 2 / max(n_b - 1, 1)
        df = np.where(variance == 0, np.inf, variance ** 2 / spread)
    difference = np.mean(log_a, axis=-1) - np.mean(log_b, axis=-1)
    exact_p = np.where(difference == 0, 1.0, separation_p_value(n_a, n_b))
    return Estimate(np.asarray(difference), np.asarray(variance), np.asarray(df),
                    np.asarray(exact_p))


def mean_log_ratio(estimate: Estimate, axis: int = -1) -> Estimate:
    """The geometric-mean ratio over ``axis`` (e.g. message lengths) of independent estimates.

    Mean of the log-ratios; variance Σ variance / L²; degrees of freedom by
    Welch–Satterthwaite over every component: (Σ V)² / Σ (V² / df), which is exactly
    the formula over every side's variance at every length. Give it estimates with a
    positive variance (a summary of constant sides has no exact p-value: NaN).
    """
    count = estimate.log_ratio.shape[axis]
    variance = np.sum(estimate.variance, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.sum(estimate.variance ** 2 / estimate.df, axis=axis)  # V²/inf = 0
        df = np.where(variance == 0, np.inf, variance ** 2 / spread)
    mean = np.mean(estimate.log_ratio, axis=axis)
    return Estimate(np.asarray(mean), np.asarray(variance / count ** 2), np.asarray(df),
                    np.full(np.shape(mean), np.nan))


def geometric_mean(values: ArrayLike) -> float:
    """The figure of one side: the geometric mean of its per-trial statistics."""
    return float(np.exp(np.mean(_logs(values, "of the figure"))))


# ---------------------------------------------------------------------------- one pair

@dataclass(frozen=True)
class Comparison:
    """A/B of one figure: the ratio, its confidence interval, the test and its words.

    Attributes:
        ratio: A/B (below 1: A takes fewer cycles, A is faster).
        ci_low, ci_high: the interval of the ratio at ``confidence`` = 1 − ``alpha``
            (``None`` with fewer than 2 trials on a side, or when neither side's trials
            spread at all: see :attr:`has_interval`).
        p_value: two-sided p-value of Welch's t on the logarithms (``None`` with fewer
            than 2 trials on a side; the exact permutation test's for two constant
            sides).
        df: Welch–Satterthwaite degrees of freedom (``inf``: no spread at all).
        alpha: the significance level of the verdict.
        estimate: the log-scale estimate, for summaries across lengths.
        margin: ratios within 1 ± margin are never significant (:data:`MARGIN`).
    """

    ratio: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    df: float | None
    alpha: float
    estimate: Estimate = field(repr=False, compare=False)
    margin: float = 0.0

    @property
    def confidence(self) -> float:
        """The interval's confidence level, 1 − alpha."""
        return 1.0 - self.alpha

    @property
    def has_interval(self) -> bool:
        """True when the trials gave an interval (both sides have 2 trials, one spreads)."""
        return self.ci_low is not None

    @property
    def beyond_margin(self) -> bool:
        """True when the whole interval (the ratio itself, where there is none) lies
        outside 1 ± :attr:`margin`."""
        low = self.ci_low if self.ci_low is not None else self.ratio
        high = self.ci_high if self.ci_high is not None else self.ratio
        return high < 1 / (1 + self.margin) or low > 1 + self.margin

    @property
    def significant(self) -> bool:
        """True when the difference is larger than the noise: p < alpha, and beyond the
        run-to-run margin."""
        return self.p_value is not None and self.p_value < self.alpha and self.beyond_margin

    @property
    def words(self) -> str:
        """The verdict in plain words: ``1.84× faster``, ``1.05× slower``, ``not
        significant``, or ``within 5 %`` (p < alpha, but not beyond the margin)."""
        if self.p_value is not None and self.p_value < self.alpha and not self.beyond_margin:
            return "within %.3g %%" % (100 * self.margin)
        return verdict(self.ratio, self.p_value, self.alpha)


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError("alpha is %r; a significance level lies strictly between 0 and 1, "
                         "e.g. 0.05" % alpha)


def _comparison(estimate: Estimate, alpha: float, margin: float) -> Comparison:
    _check_alpha(alpha)
    if not 0 <= margin < math.inf:
        raise ValueError("margin is %r; a relative margin is 0 or more, e.g. 0.05" % margin)
    ratio = float(np.exp(estimate.log_ratio))
    variance = float(estimate.variance)
    if math.isnan(variance):
        return Comparison(ratio, None, None, None, None, alpha, estimate, margin)
    p_value = float(estimate.p_value())
    if variance == 0:
        return Comparison(ratio, None, None, p_value, math.inf, alpha, estimate, margin)
    low, high = estimate.ratio_interval(1.0 - alpha)
    return Comparison(ratio, float(low), float(high), p_value, float(estimate.df), alpha,
                      estimate, margin)


def compare(a: ArrayLike, b: ArrayLike, alpha: float = ALPHA, margin: float = 0.0,
            centre: float | None = None) -> Comparison:
    """Compare one figure of A and B from their per-trial statistics (1-d arrays).

    Args:
        a, b: each trial's statistic (median or mean cycles per call), one per trial.
        alpha: significance level; the interval's confidence is 1 − alpha.
        margin: ratios within 1 ± margin are not significant (``ngcc compare`` uses
            :data:`MARGIN`).
        centre: the ratio to test and to centre the interval on, where each side's
            figure is not the geometric mean of its trials (the records' leading
            figures, medians of their fast-state trials); the spread is still the
            trials' (Welch's standard error and degrees of freedom).

    Raises:
        ValueError: a side is empty or not positive, or alpha is outside (0, 1).
    """
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise ValueError("compare() takes one 1-d array of per-trial figures per side")
    estimate = log_ratio(a, b)
    if centre is not None:
        if not centre > 0:
            raise ValueError("a ratio of cycle counts is positive, not %r" % centre)
        estimate = replace(estimate, log_ratio=np.asarray(math.log(centre)))
    return _comparison(estimate, alpha, margin)


def summarize(comparisons: Sequence[Comparison], alpha: float = ALPHA,
              margin: float = 0.0) -> Comparison:
    """The geometric-mean ratio of one pair across message lengths, with its interval.

    Only comparisons with an interval count: a length with fewer than 2 trials on a
    side has no variance to add, and one whose trials do not spread at all would
    claim a certainty the counter's resolution does not give.

    Raises:
        ValueError: no comparison with an interval.
    """
    usable = [c.estimate for c in comparisons if c.has_interval]
    if not usable:
        raise ValueError("no length has an interval to summarize (at least %d trials per "
                         "side, and some spread between them)" % MIN_TRIALS)
    stacked = Estimate(*(np.stack([getattr(e, name) for e in usable])
                         for name in ("log_ratio", "variance", "df", "exact_p")))
    return _comparison(mean_log_ratio(stacked, axis=0), alpha, margin)


# ---------------------------------------------------------------------------- words

def speedup_words(ratio: float) -> str:
    """``1.84× faster`` for ratio 1/1.84, ``1.05× slower`` for 1.05 (A relative to B).

    Enough digits that a ratio other than 1 never reads ``1.00×``.
    """
    if not ratio > 0 or math.isinf(ratio):
        raise ValueError("a ratio of cycle counts is positive and finite, not %r" % ratio)
    factor = 1.0 / ratio if ratio < 1 else ratio
    digits = 2
    while digits < 6 and round(factor, digits) == 1.0 and factor != 1.0:
        digits += 1
    if factor == 1.0:
        return "same speed"
    return "%.*f× %s" % (digits, factor, "faster" if ratio < 1 else "slower")


def verdict(ratio: float, p_value: float | None, alpha: float = ALPHA) -> str:
    """The plain-words verdict: the speed-up where p < alpha, else ``not significant``."""
    if p_value is None:
        return "too few trials"
    if p_value < alpha:
        return speedup_words(ratio)
    return "not significant"
