"""Each trial its own commit point (``ngcc/measure/partial.py``): an interleaved campaign
stopped in round 3 of 5 resumes with the trials it measured, in interleaved order, and
its records equal those of a campaign never stopped."""

from __future__ import annotations

import numpy as np
import pytest

import ngcc
from ngcc.cli.main import main
from ngcc.measure import partial as _partial
from ngcc.report.write import write_report
from tests._fakes import FakeKat, FakeRunner, fixed_host

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")

LIBRARIES = ["SM3", "pseudoXOF-256"]


class InterruptingRunner(FakeRunner):
    """Ctrl-C in trial ``index`` of ``name`` (round ``index + 1``)."""

    def __init__(self, name: str = "pseudoXOF-256", index: int = 2):
        super().__init__()
        self.stop = (name, index)

    def trial(self, instance, message_bytes, calls, warmup, cpu, index, timeout):
        if (instance.name, index) == self.stop:
            raise KeyboardInterrupt
        return super().trial(instance, message_bytes, calls, warmup, cpu, index, timeout)


def _campaign(run_dir, runner):
    return ngcc.Campaign(LIBRARIES, lengths=[64], trials=5, trial_target=0.001, run_dir=run_dir,
                         progress=False, runner=runner, kat_checker=FakeKat())


def test_a_stop_in_round_3_of_5_keeps_the_trials_measured(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        _campaign(tmp_path / "run", InterruptingRunner()).run()
    assert _partial.count(tmp_path / "run") == 3 + 2  # SM3 trials 0-2, pseudoXOF 0-1
    runner = FakeRunner()
    run = _campaign(tmp_path / "run", runner).run()
    assert runner.trials_run() == [("pseudoXOF-256", 64, 2), ("SM3", 64, 3),
                                   ("pseudoXOF-256", 64, 3), ("SM3", 64, 4),
                                   ("pseudoXOF-256", 64, 4)]
    assert _partial.count(tmp_path / "run") == 0  # the records supersede them
    whole = _campaign(tmp_path / "whole", FakeRunner()).run()
    for label in LIBRARIES:
        resumed, once = run.record(label, 64), whole.record(label, 64)
        assert len(resumed.trials) == 5
        assert all(np.array_equal(a, b) for a, b in zip(resumed.cycles(), once.cycles(),
                                                        strict=True))
        assert resumed.statistics.mean_cycles == once.statistics.mean_cycles
        positions = [t.position for t in resumed.trials]
        assert positions == sorted(positions) and len(set(positions)) == 5
    write_report(run, plots=False)
    assert ngcc.validate(run.path).ok  # the records recompute from their raw samples


def test_a_kept_trial_of_another_plan_or_a_damaged_one_is_measured_again(tmp_path,
                                                                          monkeypatch):
    fixed_host(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        _campaign(tmp_path / "run", InterruptingRunner()).run()
    job = next(j for j in ngcc.load_run(tmp_path / "run").jobs if j.instance == "SM3")
    folder = _partial.job_dir(tmp_path / "run", job.raw)
    (folder / "trial_1.npz").write_bytes(b"not a zip file")
    assert len(_partial.load(tmp_path / "run", job.raw, job.calls_per_trial,
                             job.warmup_calls, "0" * 64)) == 0  # another library
    runner = FakeRunner()
    _campaign(tmp_path / "run", runner).run()
    assert [i for name, _, i in runner.trials_run() if name == "SM3"] == [1, 2, 3, 4]


def test_the_interrupt_message_counts_what_is_kept(tmp_path, monkeypatch, capsys):
    fixed_host(monkeypatch)
    monkeypatch.setattr("ngcc.driver.child.DriverRunner", InterruptingRunner)
    monkeypatch.setattr("ngcc.driver.kat.check", FakeKat())
    assert main(["campaign", *LIBRARIES, "--lengths", "64", "--trials", "5",
                 "--trial-target", "0.001", "--run-dir", str(tmp_path / "run"),
                 "--quiet"]) == 130
    assert ("ngcc: interrupted; 0 finished job(s) and 5 trial(s) of unfinished ones are "
            "kept in %s: run the same command again to resume" % (tmp_path / "run")
            ) in capsys.readouterr().err
