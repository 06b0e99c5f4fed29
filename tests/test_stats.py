"""Statistics on synthetic cycle arrays whose answers are known by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ngcc.stats import calls as _calls
from ngcc.stats import flags as _flags
from ngcc.stats import intervals as _intervals
from ngcc.stats import trials as _stats

T_975_DF2 = 4.302652729911275   # t(0.975, 2), from tables
T_975_DF4 = 2.7764451051977987  # t(0.975, 4)


def u64(values):
    return np.asarray(values, dtype=np.uint64)


def test_the_per_call_mean_weighs_every_call_not_every_trial():
    # trial means are 2 and 10; the harness mean is (1+2+3+10)/4 = 4, not 6.
    assert _calls.per_call_mean([u64([1, 2, 3]), u64([10])]) == 4.0


def test_the_per_call_mean_is_exact_for_large_counts():
    big = 2**40 + 1
    assert _calls.per_call_mean([u64([big] * 20000)]) == big


def test_call_distribution_of_1_to_100():
    dist = _calls.call_distribution(u64(np.arange(1, 101)))
    assert dist.median_cycles == 50.5
    assert dist.min_cycles == 1
    assert dist.p5_cycles == pytest.approx(5.95)    # linear: 5 + 0.95·(6 − 5)
    assert dist.p95_cycles == pytest.approx(95.05)
    assert dist.stdev_cycles == pytest.approx(math.sqrt(100 * 101 / 12))


def test_call_distribution_of_one_call_has_no_stdev():
    assert _calls.call_distribution(u64([7])).stdev_cycles is None


def test_trial_means_and_their_median():
    means = _calls.trial_means([u64([1, 3]), u64([10, 10, 10]), u64([4])])
    assert means == [2.0, 10.0, 4.0]
    assert _calls.median_of_trial_means(means) == 4.0


def test_t_interval_three_trials():
    low, high, half = _intervals.t_confidence_interval([10.0, 12.0, 14.0])
    expected = T_975_DF2 * 2.0 / math.sqrt(3)   # s = 2, n = 3
    assert half == pytest.approx(expected, rel=1e-9)
    assert (low, high) == pytest.approx((12 - expected, 12 + expected))
    assert _intervals.relative_half_width([10.0, 12.0, 14.0]) == pytest.approx(expected / 12)


def test_t_interval_five_identical_trials_is_zero_wide():
    low, high, half = _intervals.t_confidence_interval([5.0] * 5)
    assert (low, high, half) == (5.0, 5.0, 0.0)


def test_t_interval_five_trials():
    means = [100.0, 102.0, 98.0, 101.0, 99.0]   # mean 100, s = √2.5
    half = _intervals.t_confidence_interval(means)[2]
    assert half == pytest.approx(T_975_DF4 * math.sqrt(2.5) / math.sqrt(5), rel=1e-9)


def test_t_interval_needs_two_trials():
    assert _intervals.t_confidence_interval([3.0]) is None
    assert _intervals.relative_half_width([3.0]) is None


def test_outlying_trial_is_found_by_relative_distance_to_median():
    assert _flags.outlying_trials([100, 101, 99, 120, 100]) == [3]
    assert _flags.outlying_trials([100, 100.5, 99.6, 100.2, 100]) == []
    assert _flags.outlying_trials([100, 94, 100]) == [1]


def test_counter_rate_ratio_and_disturbed_trials():
    assert _stats.counter_rate_ratio(2_000_000, 0.001, 2e9) == pytest.approx(1.0)
    assert _stats.counter_rate_ratio(1_820_000, 0.001, 2e9) == pytest.approx(0.91)
    assert _stats.counter_rate_ratio(10, 0.0, 2e9) is None
    assert _flags.disturbed_trials([1.0, 0.91, 1.01, None, 1.05]) == [1, 4]


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
    assert any("trial 2" in m and "10.0 % slower" in m and "CPU 2" in m for m in messages)
    assert [f.code for f in stats.flags] == ["slow_trial", "counter_rate"]
    assert stats.flags[0].value == pytest.approx(0.1)
    assert any("90 % of the nominal counter rate" in m and "CPU 2" in m for m in messages)


def test_aggregate_single_trial_has_no_interval_and_no_nan():
    stats = _stats.aggregate([u64([10, 20, 30])], [3e-6], [None], message_bytes=0)
    assert stats.ci95_low_cycles is None and stats.ci95_relative is None
    assert stats.cycles_per_byte is None
    assert all(not (isinstance(v, float) and math.isnan(v)) for v in stats.to_json().values())


def test_empty_inputs_are_refused():
    with pytest.raises(ValueError):
        _calls.per_call_mean([u64([])])
    with pytest.raises(ValueError):
        _calls.call_distribution(u64([]))


# ------------------------------------------------------------- statistics version 2

def _trial(index, cycles, **facts):
    """A trial entry for ``cycles`` with the given facts (the rest of a quiet trial)."""
    from ngcc.evidence.model import Trial
    ticks = int(np.sum(cycles, dtype=np.uint64))
    defaults = dict(index=index, started="2026-09-25T10:02:30Z", pid=1, cpu=2,
                    calls=len(cycles), warmup_calls=3, counter="rdtsc", unit="tsc-ticks",
                    frequency_hz=2e9, loop_ticks=ticks, loop_ns=round(ticks / 2),
                    overhead_min_ticks=24, overhead_median_ticks=26, baseline_rss_kib=1,
                    peak_rss_kib=1, load_average=(0.0, 0.0, 0.0),
                    statistics=_stats.trial_statistics(cycles, ticks, ticks / 2e9, 2e9))
    return Trial(**{**defaults, **facts})


def skewed_trials(seed=7, n=5, calls=200):
    """Trials whose means spread over orders of magnitude (one trial hit hard)."""
    rng = np.random.default_rng(seed)
    trials = [u64(np.rint(rng.lognormal(7, 0.3, calls))) for _ in range(n - 1)]
    trials.append(u64(np.rint(rng.lognormal(12, 1.5, calls))))   # ~100× slower
    return trials


@pytest.mark.parametrize("seed", range(6))
def test_intervals_of_skewed_trials_stay_above_zero(seed):
    trials = skewed_trials(seed)
    stats = _stats.aggregate(trials, [1e-3] * 5, [1.0] * 5, 32, cpu=1)
    assert stats.ci95_low_cycles < 0       # the t interval mirrors the skew below zero …
    means = _calls.trial_means(trials)
    assert min(means) <= stats.mean_bootstrap_ci95_low_ticks   # … the bootstrap cannot
    assert stats.mean_bootstrap_ci95_low_ticks < stats.per_call_mean_ticks \
        < stats.mean_bootstrap_ci95_high_ticks <= max(means)
    medians = [float(np.median(t)) for t in trials]
    assert 0 < stats.median_ci95_low_ticks < np.exp(np.mean(np.log(medians))) \
        < stats.median_ci95_high_ticks
    assert stats.mean_bootstrap_ci95_relative > 0 and stats.median_ci95_relative > 0


def test_log_t_interval_by_hand():
    low, high, relative = _intervals.log_t_interval([100.0, 110.0, 121.0])
    logs = np.log([100.0, 110.0, 121.0])
    half = T_975_DF2 * np.std(logs, ddof=1) / math.sqrt(3)
    assert low == pytest.approx(110 * math.exp(-half))
    assert high == pytest.approx(110 * math.exp(half))
    assert relative == pytest.approx((high - low) / 2 / 110)
    assert _intervals.log_t_interval([100.0]) is None
    assert _intervals.log_t_interval([0.0, 5.0]) is None


def test_bootstrap_is_deterministic_and_fixed():
    means = [1000.0, 1010.0, 990.0, 1500.0, 1005.0]
    first = _intervals.bootstrap_interval(means)
    assert first == _intervals.bootstrap_interval(list(means))
    indices = _intervals.bootstrap_indices(5)
    assert indices.shape == (_intervals.BOOTSTRAP_RESAMPLES, 5)
    assert indices.min() == 0 and indices.max() == 4
    # the stream is splitmix64 from a fixed seed, not numpy's: pinned here
    assert indices[0].tolist() == _intervals.bootstrap_indices(5, resamples=1)[0].tolist()
    counts = np.bincount(indices.ravel(), minlength=5) / indices.size
    assert np.all(np.abs(counts - 0.2) < 0.01)
    assert first[0] >= 990.0 and first[1] <= 1500.0 and first[0] < first[1]
    assert _intervals.bootstrap_interval([5.0]) is None


def test_observer_effect_is_the_median_of_paired_trials():
    # a trial preempted in its per-call loop (5000 per call) does not decide it
    trials = [u64([1100] * 10), u64([1100] * 10), u64([5000] * 10)]
    facts = [_trial(i, trials[i], batch_calls=10, batch_ticks=10000) for i in range(3)]
    stats = _stats.aggregate_trials(facts, trials, 100, cpu=1)
    assert stats.observer_effect_ticks == pytest.approx(100.0)
    assert stats.observer_effect_relative == pytest.approx(0.1)
    assert stats.per_call_mean_ticks - stats.batch_mean_ticks == pytest.approx(1400.0)


def test_batch_mean_observer_effect_and_core_cycles():
    trials = [u64([1100] * 10), u64([1100] * 10)]
    facts = [_trial(0, trials[0], batch_calls=10, batch_ticks=10000, core_cycles_per_tick=1.2),
             _trial(1, trials[1], batch_calls=10, batch_ticks=10200, core_cycles_per_tick=1.3)]
    stats = _stats.aggregate_trials(facts, trials, 100, cpu=1)
    assert stats.batch_mean_ticks == pytest.approx(1010.0)
    # paired per trial (1100 - 1000, 1100 - 1020), the median over the trials
    assert stats.observer_effect_ticks == pytest.approx(90.0)
    assert stats.observer_effect_relative == pytest.approx(((1100 / 1000) + (1100 / 1020)) / 2 - 1)
    assert stats.core_cycles_per_tick == pytest.approx(1.25)
    assert stats.core_cycles_per_byte == pytest.approx(1100 * 1.25 / 100)
    assert stats.preempted_trials is None   # the runner reported no CPU time
    without = [facts[0], _trial(1, trials[1])]  # one trial lacks the facts: not computed
    stats = _stats.aggregate_trials(without, trials, 100, cpu=1)
    assert stats.batch_mean_ticks is None and stats.core_cycles_per_byte is None


def test_a_preempted_trial_is_flagged_with_the_figure_and_the_remedy():
    trials = [u64([1000] * 100)] * 4
    quiet = dict(thread_cpu_ns=50_000, involuntary_switches=0)
    facts = [_trial(0, trials[0], **quiet),
             _trial(1, trials[1], thread_cpu_ns=40_000, involuntary_switches=1),  # 80 %
             _trial(2, trials[2], thread_cpu_ns=50_000, involuntary_switches=40),
             _trial(3, trials[3], **quiet)]
    assert [_flags.preemption(t) is not None for t in facts] == [False, True, True, False]
    # a few short switches over a long loop cost no measurable time: not flagged
    long_loop = _trial(0, trials[0], loop_ns=2_000_000_000, thread_cpu_ns=1_999_000_000,
                       involuntary_switches=9)
    assert _flags.preemption(long_loop) is None
    stats = _stats.aggregate_trials(facts, trials, 32, cpu=1)
    assert stats.preempted_trials == (1, 2)
    flags = [f for f in stats.flags if f.code == "preempted"]
    assert [f.trial for f in flags] == [1, 2]
    assert flags[0].value == pytest.approx(0.8)
    assert "80.0 %" in flags[0].message and "--cpu N" in flags[0].message
    assert "40 involuntary context switches" in flags[1].message
    assert "stop the competing process" in flags[1].message


def test_outliers_name_their_direction_and_a_cause_that_fits():
    trials = [u64([1000] * 10), u64([1000] * 10), u64([1000] * 10), u64([700] * 10),
              u64([1400] * 10)]
    stats = _stats.aggregate(trials, [1e-5] * 5, [1.0] * 5, 32, cpu=3)
    fast, slow = sorted((f for f in stats.flags if f.code.endswith("_trial")),
                        key=lambda f: f.value or 0)
    assert (fast.code, fast.trial, slow.code, slow.trial) == ("fast_trial", 3, "slow_trial", 4)
    assert "30.0 % faster" in fast.message and "busy" not in fast.message
    assert "another process" not in fast.message.split(":")[1]
    assert "40.0 % slower" in slow.message and "CPU 3" in slow.message


def test_version_1_is_recomputed_as_ngcc_0_1_wrote_it():
    trials = [u64([1000] * 10), u64([1300] * 10)]
    old = _stats.aggregate(trials, [1e-5] * 2, [1.0] * 2, 32, cpu=1, version=1)
    assert old.version == 1 and old.per_call_mean_ticks is None
    assert {f.code for f in old.flags} == {"outlying_trial"}
    assert "another process was probably busy" in old.flags[0].message
    new = _stats.aggregate(trials, [1e-5] * 2, [1.0] * 2, 32, cpu=1, version=2)
    assert new.version == 2 and new.mean_cycles == old.mean_cycles
    assert new.cpu_time_ticks is None and new.leading is None  # version 3's fields
    assert "slow_process" not in {f.code for f in new.flags}
    assert new.ci95_low_cycles == old.ci95_low_cycles
    with pytest.raises(ValueError, match="version 7"):
        _stats.aggregate(trials, [1e-5] * 2, [1.0] * 2, 32, version=7)


def test_stop_rule_precision_by_statistic():
    rng = np.random.default_rng(3)
    trials = [u64(np.rint(rng.normal(1000, 10, 500))) for _ in range(5)]
    trials[2][::50] = 400_000        # preemptions inside 2 % of one trial's calls
    stats = _stats.aggregate(trials, [1e-3] * 5, [1.0] * 5, 32)
    assert _intervals.relative_precision(stats, "mean") == stats.ci95_relative
    assert _intervals.relative_precision(stats, "median") == stats.median_ci95_relative
    assert stats.ci95_relative > 1.0 and stats.median_ci95_relative < 0.01  # median resists
    with pytest.raises(ValueError):
        _intervals.relative_precision(stats, "mode")


def test_flag_groups_count_each_kind_and_keep_the_worst():
    from ngcc.evidence.model import Flag
    flags = [Flag("preempted", 0, "a", 0.9), Flag("slow_trial", 1, "b", 0.2),
             Flag("preempted", 2, "c", 0.5), Flag("preempted", 3, "d", 0.95)]
    groups = _flags.flag_groups(flags)
    assert [(code, n, worst.trial) for code, n, worst in groups] == [
        ("preempted", 3, 2), ("slow_trial", 1, 1)]
    assert _flags.flag_groups([]) == []


# ------------------------------------------------------------- statistics version 3

def _with_cpu_time(index, cycles, **facts):
    """A trial with its version-3 statistics computed from its facts."""
    from dataclasses import replace
    trial = _trial(index, cycles, **facts)
    return replace(trial, statistics=_stats.trial_statistics(
        cycles, trial.loop_ticks, trial.loop_seconds, trial.frequency_hz, trial))


def test_the_cpu_time_figure_and_the_leading_figure_rule():
    # 100 calls of 1000 ticks at 2 GHz: 500 ns a call; trial 1 preempted (half its loop)
    trials = [u64([1000] * 100), u64([2000] * 100), u64([1000] * 100)]
    quiet = dict(thread_cpu_ns=50_000, involuntary_switches=0, batch_calls=100,
                 batch_ticks=100_000, batch_ns=50_000, batch_thread_cpu_ns=50_000)
    facts = [_with_cpu_time(0, trials[0], **quiet),
             _with_cpu_time(1, trials[1], **{**quiet, "loop_ns": 100_000,
                                             "batch_ns": 100_000, "involuntary_switches": 40}),
             # the sub-batch of least CPU time per call, where the runner timed them
             _with_cpu_time(2, trials[2], **quiet, batch_min_cpu_ns=2_900, batch_min_calls=6)]
    assert facts[0].statistics.cpu_time_ns == pytest.approx(500.0)
    assert facts[0].statistics.cpu_time_ticks == pytest.approx(1000.0)
    assert facts[2].statistics.cpu_time_ticks == pytest.approx(2900 / 6 * 2)
    assert facts[0].statistics.loop_cpu_time_ticks == pytest.approx(1000.0)
    stats = _stats.aggregate_trials(facts, trials, 100, cpu=1, version=3)
    assert stats.version == 3 and stats.preempted_trials == (1,)
    # the median of the trials' figures: trial 1's preemption is not in its CPU time
    assert stats.cpu_time_ticks == pytest.approx(1000.0)
    assert stats.cpu_time_seconds == pytest.approx(500e-9)
    assert stats.cpu_time_per_byte == pytest.approx(10.0)
    low, high = stats.cpu_time_ci95_low_ticks, stats.cpu_time_ci95_high_ticks
    assert low is not None and high is not None and low <= 1000.0 <= high
    assert stats.leading == "cpu_time" and stats.mean_cycles == pytest.approx(4000 / 3)
    calm = _stats.aggregate_trials([facts[0], facts[2]], [trials[0], trials[2]], 100, cpu=1,
                                   version=3)
    assert calm.preempted_trials == () and calm.leading == "harness_mean"
    # no CPU time from the runner: the per-call mean leads whatever happened
    bare = _stats.aggregate_trials([_trial(0, trials[0]), _trial(1, trials[1])],
                                   trials[:2], 100, cpu=1, version=3)
    assert bare.cpu_time_ticks is None and bare.leading == "harness_mean"


# ------------------------------------------------------------- statistics version 4

def _speed_state_job(cpu_ns):
    """Trials of 100 calls of 1000 ticks at 2 GHz whose thread CPU time per call over
    the batch is ``cpu_ns`` (one per trial)."""
    trials = [u64([1000] * 100) for _ in cpu_ns]
    facts = [_with_cpu_time(i, cycles, thread_cpu_ns=50_000, involuntary_switches=0,
                            batch_calls=100, batch_ticks=100_000, batch_ns=100 * ns,
                            batch_thread_cpu_ns=100 * ns, core_cycles_per_tick=1.3)
             for i, (cycles, ns) in enumerate(zip(trials, cpu_ns, strict=True))]
    return _stats.aggregate_trials(facts, trials, 100, cpu=1)


def test_the_cpu_time_figure_leads_and_the_slow_state_cannot_move_it():
    fast = [500, 510, 495]
    alone = _speed_state_job(fast)
    assert alone.version == _stats.STATISTICS_VERSION == 5 and alone.leading == "cpu_time"
    assert alone.left_out_trials == () and alone.figure.ticks == pytest.approx(1000.0)
    # one, two or three trials of five in a slow state 1.7x slower: the same figure,
    # where the median of all five jumps once three are slow
    for slow in ([850], [850, 900], [850, 900, 870]):
        stats = _speed_state_job(fast[:5 - len(slow)] + slow if len(slow) > 2 else fast + slow)
        assert stats.cpu_time_ticks == pytest.approx(alone.cpu_time_ticks, rel=0.02)
        assert len(stats.left_out_trials) == len(slow)
        flagged = [f for f in stats.flags if f.code == "slow_state"]
        assert [f.trial for f in flagged] == list(stats.left_out_trials)
        assert flagged[0].value == pytest.approx(850 / 495 - 1, abs=0.02)  # above 1.6x
        assert "left out of the leading figure" in flagged[0].message
    # the views' per-byte figures are the leading figure's, core cycles from it
    assert alone.cycles_per_byte == pytest.approx(alone.cpu_time_ticks / 100)
    assert alone.core_cycles_per_byte == pytest.approx(alone.cpu_time_ticks * 1.3 / 100)
    assert alone.core_cycles_per_tick_spread == pytest.approx(0.0)
    assert alone.mb_per_s == pytest.approx(100 / alone.cpu_time_seconds / 1e6)


def test_from_version_5_the_figure_takes_the_trials_within_10_percent():
    # speed states of several levels: two trials 1.2x slow are within version 4's 25 %
    # (its median moves to them) and left out by version 5's 10 %, not replaced
    cpu_ns = [500, 510, 495, 600, 590]
    stats = _speed_state_job(cpu_ns)
    assert stats.left_out_trials == (3, 4)
    assert stats.cpu_time_ticks == pytest.approx(1000.0)
    flagged = [f for f in stats.flags if f.code == "slow_state"]
    assert [f.trial for f in flagged] == [3, 4]
    assert all("left out of the leading figure" in f.message and
               "in its place" not in f.message for f in flagged)
    figures = [2.0 * ns for ns in cpu_ns]
    assert _stats.speed_states(figures) == []          # the replacement rule: none
    assert _stats.speed_states(figures, _stats.figure_tolerance(4)) == []
    assert _stats.speed_states(figures, _stats.figure_tolerance(5)) == [3, 4]
    facts = [_with_cpu_time(i, u64([1000] * 100), thread_cpu_ns=50_000, batch_calls=100,
                            batch_ticks=100_000, batch_ns=100 * ns, batch_thread_cpu_ns=100 * ns)
             for i, ns in enumerate(cpu_ns)]
    version_4 = _stats.cpu_time(facts, version=4)
    assert version_4 is not None and version_4.left_out == ()
    assert version_4.ticks == pytest.approx(1020.0)


def test_the_median_of_every_trial_is_what_version_3_led_with():
    # three of five trials slow: version 3's median is the slow state's
    stats = _speed_state_job([500, 510, 850, 900, 870])
    trials_only = _stats.cpu_time(
        [_with_cpu_time(i, u64([1000] * 100), thread_cpu_ns=50_000, batch_calls=100,
                        batch_ticks=100_000, batch_ns=100 * ns, batch_thread_cpu_ns=100 * ns)
         for i, ns in enumerate([500, 510, 850, 900, 870])], version=3)
    assert trials_only is not None and trials_only.ticks == pytest.approx(1700.0)
    assert stats.cpu_time_ticks == pytest.approx(1010.0)


def test_without_the_cpu_time_the_per_call_mean_leads_under_its_own_name():
    trials = [u64([1000] * 100), u64([1200] * 100)]
    bare = _stats.aggregate_trials([_trial(0, trials[0]), _trial(1, trials[1])], trials, 100,
                                   cpu=1)
    assert bare.leading == "per_call_mean" and bare.left_out_trials is None
    assert bare.figure.name == "per-call mean" and bare.figure.ticks == pytest.approx(1100.0)


def test_a_coarse_counter_and_a_slow_process_are_flagged():
    # 287 ticks a call on a counter of 26-tick steps: 11 steps
    trials = [u64([286, 286, 312, 286]), u64([416, 416, 442, 416])]
    facts = [_trial(0, trials[0], counter_resolution_ticks=26),
             _trial(1, trials[1], counter_resolution_ticks=26)]
    stats = _stats.aggregate_trials(facts, trials, 64, cpu=1)
    coarse = [f for f in stats.flags if f.code == "coarse_counter"]
    assert [f.trial for f in coarse] == [0, 1]
    assert coarse[0].value == pytest.approx(292.5 / 26)
    assert "steps of 26 ticks" in coarse[0].message and "longer message" in coarse[0].message
    [slow] = [f for f in stats.flags if f.code == "slow_process"]
    assert slow.trial == 1 and slow.value == pytest.approx(416 / 286 - 1)
    assert max(coarse, key=lambda f: f.severity or 0.0).trial == 0  # the fewest steps
    assert _flags.slow_process(1100, 1000) is None   # 10 %: not more than 10 %
    assert _flags.slow_process(1101, 1000) == pytest.approx(0.101)
