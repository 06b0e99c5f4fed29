"""The time the trials will take on this host now: the plan states the CPU share it
expects (from the load and the CPUs it may use) and divides the trials' CPU time by it.
Checked against a fake runner that simulates a CPU share of 0.5: each trial's wall time
is its calls' time and the process start over the share, summed (no clock is read, so
the check holds however busy the machine running the tests is)."""

from __future__ import annotations

import pytest

import ngcc
from ngcc.campaign import cost as _cost
from tests._fakes import FakeKat, FakeRunner, fixed_host

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")


class SharedRunner(FakeRunner):
    """A fake runner on a CPU of which it gets ``share``: it adds up the wall time its
    trials would take (the timed loop, the uninstrumented batch of as many calls, the
    warm-up, the process start)."""

    def __init__(self, share: float):
        super().__init__()
        self.share = share
        self.wall = 0.0

    def trial(self, instance, message_bytes, calls, warmup, cpu, index, timeout):
        measured = super().trial(instance, message_bytes, calls, warmup, cpu, index, timeout)
        per_call = measured.loop_ns / 1e9 / calls
        self.wall += (_cost.CHILD_STARTUP_SECONDS + (2 * calls + warmup) * per_call) / self.share
        return measured


def test_the_share_is_the_cpu_left_by_the_others_on_it():
    assert _cost.cpu_share(0.0, 2).share == 1.0
    assert _cost.cpu_share(2.0, 2).share == 0.5  # one other task on each CPU
    assert _cost.cpu_share(6.0, 2).share == 0.25
    assert _cost.cpu_share(3.0, 2, own=1.0).share == 0.5  # the campaign's own load aside
    assert _cost.cpu_share(0.5, 2, own=1.0).share == 1.0
    assert str(_cost.cpu_share(2.0, 2)) == "CPU share 0.50 (load 2.00 on 2 CPUs)"


def test_the_plan_holds_at_a_simulated_cpu_share_of_one_half(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    monkeypatch.setattr(_cost, "host_share",  # two others' tasks on two CPUs, and its own
                        lambda own=0.0: _cost.cpu_share(2.0 + own, 2, own))
    runner = SharedRunner(0.5)
    plans = []
    ngcc.Campaign(["SM3", "WChain-V1-512"], run_dir=tmp_path / "run", runner=runner,
                  kat_checker=FakeKat(), quick=True, trials=3, lengths=[32, 1024],
                  progress=False,
                  on_plan=lambda estimate: plans.append((estimate, runner.wall))).run()
    [(estimate, before)] = plans
    trials = runner.wall - before  # the trials after the plan, the calibration's aside
    assert estimate.share is not None and estimate.share.share == 0.5
    assert estimate.wall_seconds == pytest.approx(2 * estimate.seconds)
    assert estimate.wall_seconds == pytest.approx(trials, rel=0.25)
    assert estimate.seconds < 0.75 * trials  # as if the CPU were the campaign's alone: low
    assert ("of trials (estimated from each job's cold call, at this host's CPU share 0.50 "
            "(load 3.00 on 2 CPUs) now; " in str(estimate))


def test_the_evaluation_dry_run_states_the_share_it_would_plan_with(monkeypatch):
    from pathlib import Path

    from ngcc.app.dryrun import plan_lines

    monkeypatch.setattr(_cost, "host_share", lambda own=0.0: _cost.cpu_share(2.0, 2, own))
    archive = Path(__file__).parent / "fixtures" / "additional"
    assert ("the trials' time is estimated once the libraries are built, checked and "
            "calibrated (the plan line before the trials), at the CPU share this host gives "
            "then; now: CPU share 0.50 (load 2.00 on 2 CPUs)") in plan_lines([archive], ct=False)
