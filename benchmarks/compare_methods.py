"""Benchmark: which test should ``ngcc compare`` use at 5–20 trials per side?

Simulates many comparisons of per-trial figures (each trial's median cycles per call)
and prints, for each method, the false-positive rate (identical true figures), the
coverage of the 95 % interval of the ratio A/B, and the power against a 2 % shift:

* ``welch-log``: Welch's t on the logarithms (what ``ngcc compare`` uses);
* ``student-log``: Student's t on the logarithms (pooled variance);
* ``bootstrap``: percentile bootstrap of the ratio of geometric means (trials resampled
  within each side), significant when the interval excludes 1;
* ``permutation``: permutation test of the difference of mean logarithms (no interval).

Scenarios for the per-trial figures (true figure 1000 cycles, spread as a coefficient of
variation): ``lognormal`` 1 %; ``skewed`` 1 + Exp(1 %) (disturbances only add cycles);
``contaminated`` lognormal 0.5 % with a 10 % chance per trial of a +10 % disturbed trial;
``unequal`` lognormal 3 % on side A and 0.5 % on side B (Behrens–Fisher). Figures, not
asserts: the unit tests check ``welch-log`` against the nominal rates.

    python benchmarks/compare_methods.py [--sims 2000] [--resamples 1000] [--seed 1]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import stdtr, stdtrit

from ngcc.stats import compare as _compare

ALPHA = 0.05
SHIFT = 1.02
SIZES = ((5, 5), (10, 10), (20, 20), (5, 20))


def draw(rng: np.random.Generator, scenario: str, side: str, shape: tuple[int, int]
         ) -> np.ndarray:
    """Per-trial figures of one side, true centre 1000 (the median of the scenario)."""
    if scenario == "lognormal":
        return 1000 * rng.lognormal(0.0, 0.01, shape)
    if scenario == "skewed":
        noise = rng.exponential(0.01, shape)
        return 1000 * (1 + noise) / (1 + 0.01 * np.log(2))  # median 1000
    if scenario == "contaminated":
        disturbed = rng.random(shape) < 0.10
        return 1000 * rng.lognormal(0.0, 0.005, shape) * np.where(disturbed, 1.10, 1.0)
    if scenario == "unequal":
        return 1000 * rng.lognormal(0.0, 0.03 if side == "A" else 0.005, shape)
    raise ValueError(scenario)


def welch(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    estimate = _compare.log_ratio(a, b)
    low, high = estimate.ratio_interval(1 - ALPHA)
    return estimate.p_value() < ALPHA, low, high


def student(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    la, lb = np.log(a), np.log(b)
    na, nb = la.shape[-1], lb.shape[-1]
    df = na + nb - 2
    pooled = ((na - 1) * la.var(-1, ddof=1) + (nb - 1) * lb.var(-1, ddof=1)) / df
    se = np.sqrt(pooled * (1 / na + 1 / nb))
    diff = la.mean(-1) - lb.mean(-1)
    p = 2 * stdtr(df, -np.abs(diff) / se)
    half = stdtrit(df, 1 - ALPHA / 2) * se
    return p < ALPHA, np.exp(diff - half), np.exp(diff + half)


def bootstrap(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, resamples: int,
              chunk: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lows, highs = [], []
    for start in range(0, len(a), chunk):
        la, lb = np.log(a[start:start + chunk]), np.log(b[start:start + chunk])
        ratios = []
        for logs in (la, lb):
            sims, n = logs.shape
            index = rng.integers(0, n, (sims, resamples, n))
            ratios.append(np.take_along_axis(logs[:, None, :], index, axis=2).mean(-1))
        diff = ratios[0] - ratios[1]
        low, high = np.quantile(diff, [ALPHA / 2, 1 - ALPHA / 2], axis=1)
        lows.append(low)
        highs.append(high)
    low, high = np.exp(np.concatenate(lows)), np.exp(np.concatenate(highs))
    return (low > 1) | (high < 1), low, high


def permutation(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, resamples: int,
                chunk: int = 100) -> np.ndarray:
    significant = []
    na = a.shape[1]
    for start in range(0, len(a), chunk):
        logs = np.log(np.concatenate([a[start:start + chunk], b[start:start + chunk]], 1))
        observed = np.abs(logs[:, :na].mean(1) - logs[:, na:].mean(1))
        shuffled = rng.permuted(np.repeat(logs[:, None, :], resamples, 1), axis=2)
        diffs = np.abs(shuffled[..., :na].mean(-1) - shuffled[..., na:].mean(-1))
        p = (1 + np.sum(diffs >= observed[:, None] - 1e-12, axis=1)) / (resamples + 1)
        significant.append(p < ALPHA)
    return np.concatenate(significant)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print("%d comparisons per cell, alpha %.2f, power against a %.0f %% shift; binomial "
          "sd of a rate near 0.05: %.3f" % (args.sims, ALPHA, 100 * (SHIFT - 1),
                                            np.sqrt(ALPHA * (1 - ALPHA) / args.sims)))
    print("%-13s %-6s %-12s %6s %9s %6s" % ("scenario", "n", "method", "FPR", "coverage",
                                           "power"))
    for scenario in ("lognormal", "skewed", "contaminated", "unequal"):
        for n_a, n_b in SIZES:
            a = draw(rng, scenario, "A", (args.sims, n_a))
            b = draw(rng, scenario, "B", (args.sims, n_b))
            shifted = a * SHIFT
            rows = {
                "welch-log": (welch(a, b), welch(shifted, b)[0]),
                "student-log": (student(a, b), student(shifted, b)[0]),
                "bootstrap": (bootstrap(a, b, rng, args.resamples),
                              bootstrap(shifted, b, rng, args.resamples)[0]),
            }
            for method, ((null_sig, low, high), power_sig) in rows.items():
                covered = (low <= 1) & (high >= 1)
                print("%-13s %-6s %-12s %6.3f %9.3f %6.3f" % (
                    scenario, "%d/%d" % (n_a, n_b), method, null_sig.mean(), covered.mean(),
                    power_sig.mean()))
            perm_null = permutation(a, b, rng, args.resamples)
            perm_power = permutation(shifted, b, rng, args.resamples)
            print("%-13s %-6s %-12s %6.3f %9s %6.3f" % (
                scenario, "%d/%d" % (n_a, n_b), "permutation", perm_null.mean(), "-",
                perm_power.mean()))


if __name__ == "__main__":
    main()
