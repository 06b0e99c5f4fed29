"""Statistics on synthetic cycle arrays whose answers are known by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ngcc import _stats

T_975_DF2 = 4.302652729911275   # t(0.975, 2), from tables
T_975_DF4 = 2.7764451051977987  # t(0.975, 4)


def u64(values):
    return np.asarray(values, dtype=np.uint64)


def test_batch_mean_weighs_every_call_not_every_trial():
    # trial means are 2 and 10; the batch mean is (1+2+3+10)/4 = 4, not 6.
    assert _stats.batch_mean([u64([1, 2, 3]), u64([10])]) == 4.0


def test_batch_mean_is_exact_for_large_counts():
    big = 2**40 + 1
    assert _stats.batch_mean([u64([big] * 20000)]) == big


def test_call_distribution_of_1_to_100():
    dist = _stats.call_distribution(u64(np.arange(1, 101)))
    assert dist.median_cycles == 50.5
    assert dist.min_cycles == 1
    assert dist.p5_cycles == pytest.approx(5.95)    # linear: 5 + 0.95·(6 − 5)
    assert dist.p95_cycles == pytest.approx(95.05)
    assert dist.stdev_cycles == pytest.approx(math.sqrt(100 * 101 / 12))


def test_call_distribution_of_one_call_has_no_stdev():
    assert _stats.call_distribution(u64([7])).stdev_cycles is None


def test_trial_means_and_their_median():
    means = _stats.trial_means([u64([1, 3]), u64([10, 10, 10]), u64([4])])
    assert means == [2.0, 10.0, 4.0]
    assert _stats.median_of_trial_means(means) == 4.0


def test_t_interval_three_trials():
    low, high, half = _stats.t_confidence_interval([10.0, 12.0, 14.0])
    expected = T_975_DF2 * 2.0 / math.sqrt(3)   # s = 2, n = 3
    assert half == pytest.approx(expected, rel=1e-9)
    assert (low, high) == pytest.approx((12 - expected, 12 + expected))
    assert _stats.relative_half_width([10.0, 12.0, 14.0]) == pytest.approx(expected / 12)


def test_t_interval_five_identical_trials_is_zero_wide():
    low, high, half = _stats.t_confidence_interval([5.0] * 5)
    assert (low, high, half) == (5.0, 5.0, 0.0)


def test_t_interval_five_trials():
    means = [100.0, 102.0, 98.0, 101.0, 99.0]   # mean 100, s = √2.5
    half = _stats.t_confidence_interval(means)[2]
    assert half == pytest.approx(T_975_DF4 * math.sqrt(2.5) / math.sqrt(5), rel=1e-9)


def test_t_interval_needs_two_trials():
    assert _stats.t_confidence_interval([3.0]) is None
    assert _stats.relative_half_width([3.0]) is None


def test_outlying_trial_is_found_by_relative_distance_to_median():
    assert _stats.outlying_trials([100, 101, 99, 120, 100]) == [3]
    assert _stats.outlying_trials([100, 100.5, 99.6, 100.2, 100]) == []
    assert _stats.outlying_trials([100, 94, 100]) == [1]


def test_counter_rate_ratio_and_disturbed_trials():
    assert _stats.counter_rate_ratio(2_000_000, 0.001, 2e9) == pytest.approx(1.0)
    assert _stats.counter_rate_ratio(1_820_000, 0.001, 2e9) == pytest.approx(0.91)
    assert _stats.counter_rate_ratio(10, 0.0, 2e9) is None
    assert _stats.disturbed_trials([1.0, 0.91, 1.01, None, 1.05]) == [1, 4]


def test_aggregate_on_known_trials():
    trials = [u64([2000] * 10), u64([2000] * 10), u64([2200] * 10)]
    seconds = [1e-5, 1e-5, 1e-5]                  # 1 µs per call
    stats = _stats.aggregate(trials, seconds, [1.0, 1.0, 0.9], message_bytes=32, cpu=2)
    assert stats.trials == 3 and stats.calls == 30
    assert stats.mean_cycles == pytest.approx(6200 * 10 / 30)
    assert stats.median_cycles == 2000.0
    assert stats.min_cycles == 2000
    assert stats.median_of_trial_means_cycles == 2000.0
    assert stats.cycles_per_byte == pytest.approx(stats.mean_cycles / 32)
    assert stats.mean_seconds == pytest.approx(1e-6)
    assert stats.mb_per_s == pytest.approx(32.0)      # 32 bytes per µs, decimal MB
    assert stats.outlying_trials == (2,)              # 2200 is 10 % above 2000
    assert stats.disturbed_trials == (2,)
    half = T_975_DF2 * np.std([2000, 2000, 2200], ddof=1) / math.sqrt(3)
    assert stats.ci95_half_width_cycles == pytest.approx(half)
    assert stats.ci95_relative == pytest.approx(half / (6200 / 3))
    messages = [flag.message for flag in stats.flags]
    assert any("trial 2" in m and "+10.0 %" in m and "CPU 2" in m for m in messages)
    assert any("90 % of the nominal counter rate" in m and "CPU 2" in m for m in messages)


def test_aggregate_single_trial_has_no_interval_and_no_nan():
    stats = _stats.aggregate([u64([10, 20, 30])], [3e-6], [None], message_bytes=0)
    assert stats.ci95_low_cycles is None and stats.ci95_relative is None
    assert stats.cycles_per_byte is None
    assert all(not (isinstance(v, float) and math.isnan(v)) for v in stats.to_json().values())


def test_empty_inputs_are_refused():
    with pytest.raises(ValueError):
        _stats.batch_mean([u64([])])
    with pytest.raises(ValueError):
        _stats.call_distribution(u64([]))
