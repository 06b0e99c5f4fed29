"""The time the trials will take on this host now: the plan states the CPU share it
expects (from the load and the CPUs it may use) and divides the trials' CPU time by it,
counts each trial's start as the runner measures it now and the trials expected in place
of slow-state ones. Checked against a fake runner that simulates a CPU share of 0.5:
each trial's wall time is its calls' time and the process start over the share, each
job's reference run too, a quarter of the trials in the slow speed state, summed (no
clock is read, so the check holds however busy the machine running the tests is)."""

from __future__ import annotations

import pytest

import ngcc
from ngcc.campaign import conditions as _conditions
from ngcc.campaign import cost as _cost
from ngcc.driver.contract import StartProbe
from tests._fakes import FakeKat, FakeRunner, fixed_host

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")


class SharedRunner(FakeRunner):
    """A fake runner on a CPU of which it gets ``share``: it adds up the wall time its
    trials would take (the process start, the timed loop, the uninstrumented batch of as
    many calls, the warm-up) and each job's reference run and record (as long as a
    trial's start, as a campaign writes it), and says what a start costs
    as the real runner's probe measures it (:data:`START`, :data:`REFERENCE` over the
    share). As the real driver's, a trial's calls run within the first :data:`WINDOW`
    seconds of its start (its counter's frequency window): only what they take beyond it
    adds to the start. Trial 1 of each job at the first length runs in the slow speed state (its
    calls 1.4 times slower), so that job replaces it: about what a share of 0.5 is
    expected to replace (``cost.expected_replacements``). Its
    cold call pays :data:`FIRST_CALL` more than a warm one, at every length. With
    ``probe``, its slow-state probe finds one of SM3's probe trials slow and none of the
    other libraries' (``conditions.slow_state``)."""

    START, REFERENCE, FIRST_CALL = 0.08, 0.02, 20e-6  # seconds of a CPU of its own
    WINDOW = 0.05  # wall seconds

    def __init__(self, share: float, lengths: tuple[int, ...], probe: bool = True):
        super().__init__(batch=True, slow={(name, n, 1): 1.4 for n in lengths[:1]
                                           for name in ("SM3", "WChain-V1-512", "Wish512")})
        self.share = share
        self.wall = 0.0
        self.referenced: set[tuple[str, int]] = set()
        if not probe:
            self.slow_probe = None

    def cold_call(self, instance, message_bytes, cpu, timeout):
        return super().cold_call(instance, message_bytes, cpu, timeout) + self.FIRST_CALL

    def start_probe(self, cpu):
        return StartProbe(self.REFERENCE / self.share, (self.START / self.share,) * 3,
                          self.WINDOW)

    def slow_probe(self, instance, message_bytes, calls, cpu, trials):
        return tuple(1400.0 if i == 0 and instance.name == "SM3" else 1000.0
                     for i in range(trials))

    def trial(self, instance, message_bytes, calls, warmup, cpu, index, timeout):
        measured = super().trial(instance, message_bytes, calls, warmup, cpu, index, timeout)
        per_call = measured.loop_ns / 1e9 / calls
        if (instance.name, message_bytes) not in self.referenced:
            self.referenced.add((instance.name, message_bytes))
            self.wall += (self.REFERENCE + self.START) / self.share  # and its record
        calls_wall = (2 * calls + warmup) * per_call / self.share
        self.wall += self.START / self.share + max(0.0, calls_wall - self.WINDOW)
        return measured


def _two_others_on_two_cpus(monkeypatch):
    """The simulated host: a share of 0.5, two others' tasks on two CPUs and its own."""
    monkeypatch.setattr(_conditions, "host_share",
                        lambda own=0.0, cpu=None: _conditions.cpu_share(2.0 + own, 2, own))


def test_the_share_measured_is_what_a_busy_thread_gets_on_that_cpu():
    """No figure is asserted (it is this host's now): a share in (0, 1], said with the
    CPU it was measured on; none on a CPU this process may not use."""
    import os

    allowed = os.sched_getaffinity(0)
    cpu = max(allowed)
    share = _conditions.host_share(cpu=cpu)
    assert 0 < share.share <= 1 and share.measured_on == cpu
    assert str(share).startswith("CPU share %.2f measured on CPU %d (load " % (share.share, cpu))
    assert _conditions.spin_share(cpu + 1, 0.01) is None  # not one of ours
    assert _conditions.host_share(cpu=cpu + 1).measured_on is None  # the load's, then
    assert os.sched_getaffinity(0) == allowed  # restored


def test_the_share_is_the_cpu_left_by_the_others_on_it():
    assert _conditions.cpu_share(0.0, 2).share == 1.0
    assert _conditions.cpu_share(2.0, 2).share == 0.5  # one other task on each CPU
    assert _conditions.cpu_share(6.0, 2).share == 0.25
    assert _conditions.cpu_share(3.0, 2, own=1.0).share == 0.5  # the campaign's own load aside
    assert _conditions.cpu_share(0.5, 2, own=1.0).share == 1.0
    assert str(_conditions.cpu_share(2.0, 2)) == "CPU share 0.50 (load 2.00 on 2 CPUs)"


def _simulated_quick_run(tmp_path, monkeypatch):
    """SM3 and WChain-V1-512, quick, at 32 B and 1 KiB, on the simulated host of a share
    of 0.5: the run, its runner, and each plan with the runner's wall time then. Its
    libraries' trials take less than a probe is worth: they are probed all the same."""
    fixed_host(monkeypatch)
    _two_others_on_two_cpus(monkeypatch)
    monkeypatch.setattr(_cost, "SLOW_PROBE_WORTH_SECONDS", 0.0)
    runner = SharedRunner(0.5, (32, 1024))
    plans = []
    run = ngcc.Campaign(["SM3", "WChain-V1-512"], run_dir=tmp_path / "run", runner=runner,
                        kat_checker=FakeKat(), quick=True, trials=3, lengths=[32, 1024],
                        progress=False,
                        on_plan=lambda estimate: plans.append((estimate, runner.wall))).run()
    return run, runner, plans


def test_the_plan_holds_at_a_simulated_cpu_share_of_one_half(tmp_path, monkeypatch):
    run, runner, plans = _simulated_quick_run(tmp_path, monkeypatch)
    [(estimate, before)] = plans
    trials = runner.wall - before  # the trials after the plan, the calibration's aside
    assert sorted(len(record.trials) for record in run.records) == [3, 3, 4, 4]  # 32 B: 1 slow
    assert estimate.share is not None and estimate.share.share == 0.5
    assert estimate.start.measured and estimate.start.trial == pytest.approx(runner.START)
    assert estimate.start.job == pytest.approx(runner.REFERENCE + runner.START)  # and record
    # SM3's probe found 1 of 4 trials slow, WChain's none: with 4 more at the pooled
    # (1 + 1/2) / (8 + 1), their chances are (1 + 2/3) / 8 and (2/3) / 8
    assert dict(estimate.start.slow) == {"SM3": _conditions.SlowState(1, 4),
                                         "WChain-V1-512": _conditions.SlowState(0, 4)}
    sm3, wchain = (_cost.expected_replacements(3, (slow + 2 / 3) / 8) for slow in (1, 0))
    assert estimate.expected_replacements == pytest.approx(2 * sm3 + 2 * wchain)
    assert estimate.wall_seconds == pytest.approx(2 * estimate.seconds)
    assert estimate.wall_seconds == pytest.approx(trials, rel=0.25)
    assert estimate.seconds < 0.75 * trials  # as if the CPU were the campaign's alone: low
    assert ("of trials (estimated from each job's cold call less what its library's first "
            "call pays, about 2 trials in place of slow-state ones expected (1 of 8 probe "
            "trials ran in the slow speed state now), each trial's start 0.160 s as "
            "measured now, its calls' first 0.050 s within it, at this "
            "host's CPU share 0.50 (load 3.00 on 2 CPUs) now; " in str(estimate))


class QuickStartRunner(SharedRunner):
    """A start as the real driver's on this project's guests: 57 ms of wall time alone,
    50 of them its counter's frequency window."""

    START = 0.0285  # at the share of 0.5: 57 ms


def test_tiny_trials_cost_their_start_alone_since_their_calls_run_within_it(
        tmp_path, monkeypatch):
    """Trials of a few milliseconds of calls (T = 10 ms, as the fixture archive's quick
    ones) end within the start's frequency window: the plan counts their start alone and
    holds within a quarter at the simulated share of 0.5, where adding their calls to
    the start (the rule before) reads more than a quarter high."""
    from dataclasses import replace

    from ngcc.campaign.settings import CampaignSettings

    fixed_host(monkeypatch)
    _two_others_on_two_cpus(monkeypatch)
    runner, plans = QuickStartRunner(0.5, (32, 1024)), []
    run = ngcc.Campaign(["SM3", "WChain-V1-512"], run_dir=tmp_path / "run", runner=runner,
                        kat_checker=FakeKat(), quick=True, trials=3, lengths=[32, 1024],
                        trial_target=0.01, progress=False,
                        on_plan=lambda estimate: plans.append((estimate, runner.wall))).run()
    [(estimate, before)] = plans
    trials = runner.wall - before
    assert estimate.start.overlap == pytest.approx(0.025)  # the window's 50 ms at 0.5
    assert estimate.wall_seconds == pytest.approx(trials, rel=0.25)
    settings = CampaignSettings.make(quick=True, trials=3, lengths=[32, 1024],
                                     trial_target=0.01)
    pending = [replace(job, status="pending") for job in run.jobs]
    again = _cost.estimate(pending, settings, 0, None, estimate.share, estimate.start)
    assert again.wall_seconds == pytest.approx(estimate.wall_seconds)
    added = _cost.estimate(pending, settings, 0, None, estimate.share,
                           replace(estimate.start, overlap=0.0))
    assert added.wall_seconds > 1.25 * trials


def test_the_replacements_follow_the_whole_hosts_load_and_the_time_the_share_measured(
        tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    measured = _conditions.CpuShare(0.9, 4.0, 2, measured_on=1, by_load=0.4)
    monkeypatch.setattr(_conditions, "host_share", lambda own=0.0, cpu=None: measured)
    estimate = ngcc.Campaign(["SM3"], run_dir=tmp_path / "run",
                             runner=SharedRunner(0.9, (), probe=False),
                             kat_checker=FakeKat(), quick=True, trials=3, lengths=[32, 1024],
                             progress=False).dry_run()
    assert estimate.share == measured and measured.host_busy == 0.4
    assert estimate.expected_replacements == pytest.approx(  # no probe: the load's rule
        2 * _cost.expected_replacements(3, _conditions.SLOW_STATE_PER_OTHERS * 0.6))
    assert estimate.wall_seconds == pytest.approx(estimate.seconds / 0.9)
    assert "at this host's CPU share 0.90 measured on CPU 1 (load 4.00 on 2 CPUs) now" \
        in str(estimate)


def test_the_plan_without_the_start_the_replacements_or_the_warm_call_is_off(
        tmp_path, monkeypatch):
    """What the plan counted before: the constant start, no replacement, each call the
    cold one; at the simulated host, that is more than a quarter off the trials' time."""
    run, runner, plans = _simulated_quick_run(tmp_path, monkeypatch)
    planned_only = sum(job.trials_planned * _cost.trial_cost(job) for job in run.jobs) / 0.5
    assert abs(planned_only / (runner.wall - plans[0][1]) - 1) > 0.25


def test_a_runner_that_cannot_measure_its_start_is_given_the_constant_and_says_so():
    half = _conditions.cpu_share(2.0, 2)
    assert _conditions.start_cost(FakeRunner(), 1, half) == _conditions.StartCost()  # nor the share
    assert str(_conditions.StartCost()) == \
        "each trial's start 0.05 s (not measured: the runner cannot)"

    class Failing(FakeRunner):
        def start_probe(self, cpu):
            raise ngcc.ChildError("crash", "the probe crashed")
    assert _conditions.start_cost(Failing(), 1, half) == _conditions.StartCost(share=half)
    quarter = _conditions.cpu_share(6.0, 2)
    measured = _conditions.start_cost(SharedRunner(0.25, ()), 1, quarter)
    assert (measured.trial, measured.job, measured.wall) == pytest.approx((0.08, 0.10, 0.32))
    assert measured.overlap == pytest.approx(0.05 * 0.25)  # the window's wall at the share
    assert measured.share == quarter


def test_only_libraries_whose_trials_are_worth_it_are_probed_for_the_slow_state(
        tmp_path, monkeypatch):
    """A probe costs about four trial processes: a library whose planned trials take less
    than :data:`cost.SLOW_PROBE_WORTH_SECONDS` is not probed (the load's rule stands);
    the others at their length nearest 1 KiB."""
    from dataclasses import replace

    run, _, _ = _simulated_quick_run(tmp_path, monkeypatch)
    monkeypatch.undo()  # the worth of a probe as shipped
    pending = [replace(job, status="pending") for job in run.jobs]
    instances = {"SM3": ngcc.instance("SM3"), "WChain-V1-512": ngcc.instance("WChain-V1-512")}
    assert _cost.slow_probes(pending, instances) == {}  # well under a second each
    long = [replace(job, trials_planned=1000) for job in pending]
    probes = _cost.slow_probes(long, instances)
    assert sorted(probes) == ["SM3", "WChain-V1-512"]
    assert {p.message_bytes for p in probes.values()} == {1024}


def test_the_replacements_expected_grow_with_the_chance_within_the_budget():
    assert _cost.expected_replacements(3, 0.0) == 0.0  # no slow state: none
    assert _cost.expected_replacements(3, 0.175) == pytest.approx(3 / (1 - 0.175) - 3)
    assert 0 < _cost.expected_replacements(3, 0.1) < _cost.expected_replacements(3, 0.3)
    assert _cost.expected_replacements(1, 0.9) <= 1  # never more than the budget


def test_the_slow_chance_is_each_librarys_probe_pooled_with_the_others_else_the_loads():
    start = _conditions.StartCost(slow=(("A", _conditions.SlowState(2, 4)),
                                        ("B", _conditions.SlowState(0, 4))))
    pooled = (2 + 0.5) / (8 + 1)  # half a slow one added: none seen is no proof
    assert _conditions.slow_chance(start, "A", None) == pytest.approx((2 + 4 * pooled) / 8)
    assert _conditions.slow_chance(start, "B", None) == pytest.approx(4 * pooled / 8)
    assert start.slow_words() == "2 of 8 probe trials ran in the slow speed state now"
    by_load = _conditions.CpuShare(0.9, 3.0, 2, measured_on=1, by_load=0.5)
    assert _conditions.slow_chance(start, "C", by_load) == pytest.approx(
        _conditions.SLOW_STATE_PER_OTHERS * 0.5)  # not probed: the whole host's load
    assert _conditions.slow_chance(_conditions.StartCost(), "A", None) == 0.0  # alone
    assert _conditions.StartCost().slow_words() == "by the load"


def test_a_slow_state_probe_counts_the_trials_a_quarter_above_the_fastest():
    from ngcc.library.registry import instance

    class Probing(FakeRunner):
        def __init__(self, figures):
            super().__init__()
            self.figures, self.asked = figures, []

        def slow_probe(self, inst, message_bytes, calls, cpu, trials):
            self.asked.append((inst.name, message_bytes, calls, cpu, trials))
            if isinstance(self.figures, Exception):
                raise self.figures
            return self.figures

    target = _conditions.SlowProbe(instance("SM3"), 1024, 1e-6)
    runner = Probing((1000.0, 1300.0, 1240.0, 2000.0))
    assert _conditions.slow_state(runner, target, 1) == _conditions.SlowState(2, 4)
    # 10 ms of calls, as a quick trial: 0.6 ms read a quarter above the fastest by noise
    assert runner.asked == [("SM3", 1024, 10000, 1, _conditions.SLOW_PROBE_TRIALS)]
    assert _conditions.slow_state(Probing(ngcc.ChildError("crash", "no")), target, 1) is None
    assert _conditions.slow_state(Probing((1000.0,)), target, 1) is None  # nothing to compare
    assert _conditions.slow_state(FakeRunner(), target, 1) is None  # no probe


def _plan_only_seconds(line: str) -> float:
    """The seconds of ``the trials: about 1 min 04 s (…``."""
    words = line.split("the trials: about ", 1)[1].split(" (", 1)[0].split()
    units = {"s": 1, "min": 60, "h": 3600}
    return sum(float(n) * units[u] for n, u in zip(words[::2], words[1::2], strict=True))


def test_the_evaluation_dry_run_estimates_the_trials_from_the_plan_alone(tmp_path, monkeypatch):
    """No library is built by ``evaluate --dry-run``, so its time comes from the plan:
    each trial's calls fill T. Where they do (lengths whose calls stay under the
    20000-call cap), it holds within a quarter of the trials a campaign of the same plan
    runs at the simulated share of 0.5."""
    from pathlib import Path

    from ngcc.app.dryrun import plan_lines
    from ngcc.campaign.settings import CampaignSettings

    fixed_host(monkeypatch)
    _two_others_on_two_cpus(monkeypatch)
    monkeypatch.setattr(_cost, "reference_calls", lambda *_: None)  # calls that fill T
    lengths = (4096, 16384)
    settings = CampaignSettings.make(quick=True, trials=3, lengths=lengths)
    archive = Path(__file__).parent / "fixtures" / "additional"  # three folders that read
    lines = plan_lines([archive], ct=False, settings=settings,
                       runner=SharedRunner(0.5, lengths))
    [line] = [line for line in lines if line.startswith("the trials: ")]
    assert line.startswith("the trials: about ") and (
        "(3 libraries × 2 length(s) × 3 trial(s), if each builds and is timed), up to ")
    assert ("if they fall into the host's slow speed state as often as the built-in SM3's "
            "(by the load: about 4 more trials), from the plan alone since nothing is "
        "calibrated before a build: each trial's calls take T = 0.02 s, high where 20000 "
        "calls take less, each trial's start 0.160 s as measured now, its calls' first "
        "0.050 s within it, at this host's CPU share 0.50 (load 2.00 on 2 CPUs) now; ") in line
    runner, plans = SharedRunner(0.5, lengths), []
    ngcc.Campaign(["SM3", "WChain-V1-512", "Wish512"],
                  run_dir=tmp_path / "run", runner=runner, kat_checker=FakeKat(), quick=True,
                  trials=3, lengths=list(lengths), progress=False,
                  on_plan=lambda _: plans.append(runner.wall)).run()
    assert _plan_only_seconds(line) == pytest.approx(runner.wall - plans[0], rel=0.25)


def fake_sm3_calls() -> _cost.ReferenceCalls:
    """The fake's SM3 calls as the dry run times the built-in's (its first call
    :attr:`SharedRunner.FIRST_CALL` more)."""
    from tests._fakes import FREQUENCY_HZ, cost_cycles

    return _cost.ReferenceCalls(*(cost_cycles("SM3", n) / FREQUENCY_HZ
                                  for n in _cost.REFERENCE_LENGTHS), SharedRunner.FIRST_CALL)


def test_the_evaluation_dry_run_takes_its_calls_as_long_as_the_built_in_sm3s(tmp_path,
                                                                            monkeypatch):
    """Where the plan's 20000-call cap binds (short messages, T = 1 s), calls that fill T
    would say the trials take almost twice what they take: the dry run takes each call as
    long as the built-in SM3's (timed in this process: here the fake's own SM3, so the
    estimate can be held to the campaign of SM3 it simulates, within a quarter). No
    library's first call is known before its build: the reference's stands for it."""
    from ngcc.campaign.settings import CampaignSettings
    from tests._fakes import FREQUENCY_HZ, cost_cycles

    fixed_host(monkeypatch)
    _two_others_on_two_cpus(monkeypatch)
    lengths = (32, 1024)
    settings = CampaignSettings.make(trials=3, lengths=lengths)
    sm3 = fake_sm3_calls()
    assert sm3(1024) == pytest.approx(cost_cycles("SM3", 1024) / FREQUENCY_HZ)
    runner, plans = SharedRunner(0.5, lengths), []
    start = _conditions.start_cost(runner, 1, _conditions.host_share(cpu=1))
    line = _cost.plan_only([None], settings, start, _conditions.host_share(), sm3)
    assert ("each call as long as the built-in SM3's here now (%.2f µs at 32 B, "
            % (sm3(32) * 1e6)) in line
    filling_t = _cost.plan_only([None], settings, start, _conditions.host_share())
    ngcc.Campaign(["SM3"], run_dir=tmp_path / "run", runner=runner, kat_checker=FakeKat(),
                  trials=3, lengths=list(lengths), progress=False,
                  on_plan=lambda _: plans.append(runner.wall)).run()
    assert _plan_only_seconds(line) == pytest.approx(runner.wall - plans[0], rel=0.25)
    assert _plan_only_seconds(filling_t) > 1.5 * (runner.wall - plans[0])


def test_the_reference_calls_are_timed_here_and_grow_with_the_message():
    """No figure is asserted (this host's now): the built-in SM3 at 64 KiB takes longer
    than at 32 B, and the line through them never goes below the shorter; the first
    call's cost is what the runner's cold call takes beyond the warm one (none where the
    runner fails, or without one)."""
    calls = _cost.reference_calls(batches=1)
    assert calls is not None and calls.first_call == 0.0
    assert 0 < calls.at_shortest < calls.at_longest
    assert calls(0) == calls.at_shortest and calls(32) < calls(1024) < calls(65536)

    class Cold(FakeRunner):
        def cold_call(self, instance, message_bytes, cpu, timeout):
            assert (instance.name, message_bytes) == ("SM3", 32)
            return 1.0  # far above any warm call

    first = _cost.reference_calls(Cold(), 1, batches=1)
    assert first is not None and 0.99 < first.first_call < 1.0

    class Failing(FakeRunner):
        def cold_call(self, instance, message_bytes, cpu, timeout):
            raise ngcc.ChildError("crash", "the cold call crashed")

    failed = _cost.reference_calls(Failing(), 1, batches=1)
    assert failed is not None and failed.first_call == 0.0


def test_the_evaluation_dry_run_with_workers_says_it_gives_no_time():
    from pathlib import Path

    from ngcc.app.dryrun import plan_lines
    from ngcc.campaign.settings import CampaignSettings

    archive = Path(__file__).parent / "fixtures" / "additional"
    lines = plan_lines([archive], ct=False, settings=CampaignSettings.make(workers=2),
                       runner=SharedRunner(0.5, ()))
    assert ("the trials run as whole jobs on workers, each calibrated where it is measured: "
            "no time is estimated here") in lines


def test_the_driver_measures_its_start_and_slow_state_with_the_built_in_sm3():
    """The real runner's probes: a reference run and three one-call trials, each a fresh
    driver on the CPU asked for; what each took is positive; and the slow-state probe's
    trials, each one's CPU time per call (no figure is asserted: it is this host's now)."""
    from ngcc.driver.child import START_PROBES, DriverRunner
    from ngcc.measure.locks import default_cpu

    runner = DriverRunner()
    probe = runner.start_probe(default_cpu())
    assert probe.reference > 0 and len(probe.trials) == START_PROBES
    assert probe.overlap == 0.05  # csrc/common/timer.h's COUNTER_FREQUENCY_INTERVAL_NS
    assert all(seconds > 0 for seconds in probe.trials)
    figures = runner.slow_probe(ngcc.instance("SM3"), 1024, 50, default_cpu(), 2)
    assert len(figures) == 2 and all(ns > 0 for ns in figures)


def test_a_warm_call_is_estimated_from_the_line_of_the_cold_calls_and_one_slow_one_moves_it_not():
    from types import SimpleNamespace

    def jobs(label, pairs):
        return [SimpleNamespace(label=label, message_bytes=n, t1_seconds=t) for n, t in pairs]
    line = [(n, 1e-6 + 2e-9 * n) for n in (32, 128, 1024, 4096, 65536)]
    slowed = [(n, t * (3 if n == 1024 else 1)) for n, t in line]  # preempted once
    warm = _cost.warm_call_estimates(jobs("a", line) + jobs("b", slowed)
                                     + jobs("c", line[:1]) + jobs("d", [(32, 5e-6), (64, 1e-6)]))
    for n, _ in line:  # the intercept, 1 µs, is the first call's own
        assert warm["a", n] == pytest.approx(2e-9 * n)
        assert warm["b", n] == pytest.approx(2e-9 * n, rel=0.05)
    assert warm["c", 32] == line[0][1]  # one length: nothing to fit, the cold call
    # a line that falls: no cost per byte, and at most 0.95 of the least cold call aside
    assert (warm["d", 32], warm["d", 64]) == pytest.approx((4.05e-6, 0.05e-6))
