"""The statistics of ``ngcc compare`` on synthetic per-trial figures with known answers.

The rate checks simulate thousands of comparisons at once (the estimates are
vectorised over leading axes) with fixed seeds; their tolerances are binomial: a rate
over N comparisons has a standard deviation of √(α(1 − α)/N).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ngcc.stats import compare as _compare

SIMS = 4000
ALPHA = 0.05


def binomial_sd(rate: float, sims: int = SIMS) -> float:
    return math.sqrt(rate * (1 - rate) / sims)


def lognormal(rng: np.random.Generator, centre: float, spread: float, shape):
    """Per-trial figures: ``centre`` cycles with a multiplicative spread (CV ≈ spread)."""
    return centre * rng.lognormal(0.0, spread, shape)


# ---------------------------------------------------------------- known answers

def test_welch_on_logs_agrees_with_scipy():
    a = [1012.0, 1030.5, 998.0, 1021.0, 1005.5]
    b = [1100.0, 1093.0, 1120.5, 1085.0, 1101.0, 1111.0, 1096.5]
    result = _compare.compare(a, b)
    reference = stats.ttest_ind(np.log(a), np.log(b), equal_var=False)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-10)
    assert result.df == pytest.approx(reference.df, rel=1e-10)
    assert result.ratio == pytest.approx(stats.gmean(a) / stats.gmean(b), rel=1e-12)
    se = math.sqrt(np.var(np.log(a), ddof=1) / 5 + np.var(np.log(b), ddof=1) / 7)
    half = stats.t.ppf(0.975, reference.df) * se
    assert result.ci_low == pytest.approx(result.ratio * math.exp(-half), rel=1e-10)
    assert result.ci_high == pytest.approx(result.ratio * math.exp(half), rel=1e-10)
    assert result.significant and result.words == "1.09× faster"  # 1 / 0.9204


def test_swapping_a_and_b_inverts_ratio_and_interval():
    rng = np.random.default_rng(3)
    a, b = lognormal(rng, 1000, 0.02, 6), lognormal(rng, 1030, 0.01, 9)
    ab, ba = _compare.compare(a, b), _compare.compare(b, a)
    assert ba.ratio == pytest.approx(1 / ab.ratio, rel=1e-12)
    assert (ba.ci_low, ba.ci_high) == pytest.approx((1 / ab.ci_high, 1 / ab.ci_low), rel=1e-12)
    assert ba.p_value == pytest.approx(ab.p_value, rel=1e-12)


def test_interval_excludes_one_exactly_when_significant():
    rng = np.random.default_rng(4)
    for seed_shift in np.linspace(0.99, 1.01, 41):
        result = _compare.compare(lognormal(rng, 1000 * seed_shift, 0.01, 5),
                                  lognormal(rng, 1000, 0.01, 5))
        excludes_one = result.ci_low > 1 or result.ci_high < 1
        assert excludes_one == result.significant


def test_figure_is_the_geometric_mean_so_figures_divide_to_the_ratio():
    a, b = [100.0, 400.0], [200.0, 200.0]
    assert _compare.geometric_mean(a) == pytest.approx(200.0)
    assert _compare.compare(a, b).ratio == pytest.approx(1.0)


# ---------------------------------------------------------------- rates, simulated

@pytest.mark.parametrize(("n_a", "n_b"), [(5, 5), (10, 10), (20, 20), (5, 20), (12, 7)])
def test_identical_distributions_are_significant_at_about_alpha(n_a, n_b):
    rng = np.random.default_rng(1000 + 31 * n_a + n_b)
    a = lognormal(rng, 1000, 0.01, (SIMS, n_a))
    b = lognormal(rng, 1000, 0.01, (SIMS, n_b))
    rate = float(np.mean(_compare.log_ratio(a, b).p_value() < ALPHA))
    # Welch's degrees of freedom are an approximation: at 5 trials per side its true
    # size is about 0.045 (0.057 at 5 against 20), hence the 0.01 beside 4 sd.
    assert abs(rate - ALPHA) <= 4 * binomial_sd(ALPHA) + 0.01, rate


def test_false_positive_rate_follows_alpha():
    rng = np.random.default_rng(7)
    a, b = lognormal(rng, 500, 0.02, (SIMS, 10)), lognormal(rng, 500, 0.02, (SIMS, 10))
    p = _compare.log_ratio(a, b).p_value()
    for alpha in (0.01, 0.05, 0.20):
        assert abs(np.mean(p < alpha) - alpha) <= 4 * binomial_sd(alpha) + 0.005


def test_unequal_spreads_and_trial_counts_keep_the_rate():
    # Behrens–Fisher: a noisy side with few trials against a quiet one with many. A
    # pooled-variance test rejects about a third of these; Welch's stays near alpha.
    rng = np.random.default_rng(11)
    a, b = lognormal(rng, 1000, 0.03, (SIMS, 5)), lognormal(rng, 1000, 0.005, (SIMS, 20))
    rate = float(np.mean(_compare.log_ratio(a, b).p_value() < ALPHA))
    assert abs(rate - ALPHA) <= 4 * binomial_sd(ALPHA) + 0.01, rate


@pytest.mark.parametrize(("n_a", "n_b", "true_ratio"), [(5, 5, 1.03), (8, 15, 0.9),
                                                         (20, 20, 1.0)])
def test_interval_covers_the_true_ratio_at_about_the_nominal_rate(n_a, n_b, true_ratio):
    rng = np.random.default_rng(2000 + n_a + n_b)
    a = lognormal(rng, 1000 * true_ratio, 0.015, (SIMS, n_a))
    b = lognormal(rng, 1000, 0.01, (SIMS, n_b))
    low, high = _compare.log_ratio(a, b).ratio_interval(0.95)
    coverage = float(np.mean((low <= true_ratio) & (true_ratio <= high)))
    assert abs(coverage - 0.95) <= 4 * binomial_sd(0.95) + 0.01, coverage


def test_five_percent_shift_with_tight_trials_is_significant_in_its_direction():
    rng = np.random.default_rng(5)
    quick = lognormal(rng, 1000, 0.005, (SIMS, 5))
    slow = lognormal(rng, 1050, 0.005, (SIMS, 5))
    estimate = _compare.log_ratio(slow, quick)
    assert np.all(estimate.p_value() < ALPHA)
    assert np.all(estimate.log_ratio > 0)          # A (slow) takes more cycles
    one = _compare.compare(slow[0], quick[0])
    assert one.significant and one.words == "1.05× slower"
    assert one.ci_low < 1.05 < one.ci_high
    assert _compare.compare(quick[0], slow[0]).words == "1.05× faster"


def test_scalar_compare_is_the_vectorised_estimate():
    rng = np.random.default_rng(9)
    a, b = lognormal(rng, 800, 0.02, (3, 6)), lognormal(rng, 820, 0.02, (3, 6))
    estimate = _compare.log_ratio(a, b)
    low, high = estimate.ratio_interval(0.95)
    for i in range(3):
        one = _compare.compare(a[i], b[i])
        assert (one.ratio, one.ci_low, one.ci_high, one.p_value) == pytest.approx(
            (math.exp(estimate.log_ratio[i]), low[i], high[i], estimate.p_value()[i]))


# ---------------------------------------------------------------- across lengths

LENGTHS = 8


def across_lengths(rng, true_ratios, sims=SIMS):
    """Per-trial figures of one pair at 8 lengths, trials 5–12 and spreads by length."""
    trials = [5, 6, 8, 10, 12, 5, 7, 9]
    spreads = np.linspace(0.004, 0.03, LENGTHS)
    estimates = [_compare.log_ratio(lognormal(rng, 1000 * (i + 1) * r, s, (sims, n)),
                                    lognormal(rng, 1000 * (i + 1), s / 2, (sims, n + 2)))
                 for i, (r, s, n) in enumerate(zip(true_ratios, spreads, trials,
                                                   strict=True))]
    stacked = _compare.Estimate(*(np.stack([getattr(e, name) for e in estimates], axis=-1)
                                  for name in ("log_ratio", "variance", "df", "exact_p")))
    return _compare.mean_log_ratio(stacked)


def test_geometric_mean_summary_has_about_alpha_false_positives():
    summary = across_lengths(np.random.default_rng(21), [1.0] * LENGTHS)
    rate = float(np.mean(summary.p_value() < ALPHA))
    assert abs(rate - ALPHA) <= 4 * binomial_sd(ALPHA) + 0.01, rate


def test_geometric_mean_summary_covers_the_true_geometric_mean_ratio():
    true_ratios = np.linspace(0.95, 1.10, LENGTHS)
    truth = float(np.exp(np.mean(np.log(true_ratios))))
    low, high = across_lengths(np.random.default_rng(22), true_ratios).ratio_interval(0.95)
    coverage = float(np.mean((low <= truth) & (truth <= high)))
    assert abs(coverage - 0.95) <= 4 * binomial_sd(0.95) + 0.01, coverage


def test_summarize_is_the_mean_of_log_ratios():
    rng = np.random.default_rng(23)
    pairs = [(lognormal(rng, 1000, 0.01, 5), lognormal(rng, 980, 0.02, 7)) for _ in range(4)]
    comparisons = [_compare.compare(a, b) for a, b in pairs]
    summary = _compare.summarize(comparisons)
    assert summary.ratio == pytest.approx(math.prod(c.ratio for c in comparisons) ** 0.25)
    # one length: the summary is that length's comparison
    single = _compare.summarize(comparisons[:1])
    assert (single.ratio, single.ci_low, single.p_value) == pytest.approx(
        (comparisons[0].ratio, comparisons[0].ci_low, comparisons[0].p_value))


def test_summarize_skips_lengths_without_an_interval():
    usable = _compare.compare([100.0, 101.0, 99.0], [110.0, 111.0, 109.0])
    lone = _compare.compare([100.0], [120.0, 121.0])
    summary = _compare.summarize([usable, lone])
    assert summary.ratio == pytest.approx(usable.ratio)
    with pytest.raises(ValueError, match="at least 2 trials"):
        _compare.summarize([lone])


# ---------------------------------------------------------------- edge cases, words

def test_no_spread_and_no_difference_is_not_significant():
    result = _compare.compare([1000.0] * 5, [1000.0] * 5)
    assert (result.ratio, result.p_value) == (1, 1)
    assert result.ci_low is None and not result.has_interval
    assert result.words == "not significant"


def test_no_spread_and_a_difference_takes_the_exact_permutation_p_value():
    # per-trial medians of a quiet machine can repeat exactly (the counter's steps):
    # t is undefined, so the p-value is the share of the C(11, 5) = 462 ways to deal
    # the 11 trials into 5 and 6 that separate them as much: this one only.
    result = _compare.compare([1040.0] * 5, [1000.0] * 6)
    assert result.p_value == pytest.approx(1 / 462)
    assert result.ratio == pytest.approx(1.04) and result.ci_low is None
    assert result.words == "1.04× slower"
    # 2 against 2: of the 6 deals, the observed one and its mirror are as extreme
    assert _compare.compare([1040.0] * 2, [1000.0] * 2).p_value == pytest.approx(2 / 6)
    assert _compare.compare([1040.0] * 2, [1000.0] * 2).words == "not significant"


@pytest.mark.parametrize(("n_a", "n_b"), [(2, 2), (3, 4), (5, 5), (4, 9)])
def test_separation_p_value_counts_the_deals(n_a, n_b):
    import itertools

    values = np.array([1.0] * n_a + [0.0] * n_b)
    observed = 1.0
    extreme = total = 0
    for chosen in itertools.combinations(range(n_a + n_b), n_a):
        mask = np.zeros(n_a + n_b, dtype=bool)
        mask[list(chosen)] = True
        total += 1
        extreme += abs(values[mask].mean() - values[~mask].mean()) >= observed - 1e-12
    assert _compare.separation_p_value(n_a, n_b) == pytest.approx(extreme / total)


def test_one_constant_side_takes_its_uncertainty_from_the_other():
    b = np.log([1010.0, 1030.0, 1020.0])
    result = _compare.compare([1000.0] * 4, np.exp(b))
    t = (b.mean() - math.log(1000.0)) / math.sqrt(np.var(b, ddof=1) / 3)
    assert result.df == pytest.approx(2.0)            # Welch: B's n − 1 alone
    assert result.p_value == pytest.approx(2 * stats.t.sf(t, 2)) and result.has_interval


def test_summary_leaves_out_lengths_without_spread():
    spread = _compare.compare([100.0, 101.0, 99.0], [110.0, 111.0, 109.0])
    constant = _compare.compare([100.0] * 3, [50.0] * 3)
    summary = _compare.summarize([spread, constant])
    assert summary.ratio == pytest.approx(spread.ratio)


def test_one_trial_has_no_interval_and_says_so():
    result = _compare.compare([1000.0], [900.0, 910.0, 905.0])
    assert result.ci_low is None and result.p_value is None and not result.significant
    assert result.words == "too few trials"
    assert result.ratio == pytest.approx(1000 / stats.gmean([900.0, 910.0, 905.0]))


@pytest.mark.parametrize("bad", [[], [1000.0, 0.0], [1000.0, -5.0], [1000.0, math.nan],
                                 [math.inf, 3.0]])
def test_figures_that_are_not_positive_are_refused(bad):
    with pytest.raises(ValueError, match="side A"):
        _compare.compare(bad, [1000.0, 1001.0])


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 5])
def test_alpha_outside_zero_one_is_refused(alpha):
    with pytest.raises(ValueError, match="alpha"):
        _compare.compare([1.0, 2.0], [1.0, 2.0], alpha=alpha)


def test_two_dimensional_input_to_scalar_compare_is_refused():
    with pytest.raises(ValueError, match="1-d"):
        _compare.compare([[1.0, 2.0]], [1.0, 2.0])


@pytest.mark.parametrize(("ratio", "words"), [
    (1 / 1.84, "1.84× faster"), (1.05, "1.05× slower"), (1.0, "same speed"),
    (1 / 1.002, "1.002× faster"), (1.0004, "1.0004× slower"), (3.0, "3.00× slower")])
def test_speedup_words(ratio, words):
    assert _compare.speedup_words(ratio) == words


def test_verdict_words():
    assert _compare.verdict(0.5, 0.001) == "2.00× faster"
    assert _compare.verdict(0.5, 0.2) == "not significant"
    assert _compare.verdict(0.5, 0.02, alpha=0.01) == "not significant"
    assert _compare.verdict(0.5, None) == "too few trials"
