"""The job engine's guards (``ngcc/measure/job.py``): the library file checked against the
plan's sha256 before (and after) each trial on every executor, and the trial deadline
from the cold call capped. The campaigns run with the fake runner; the hostile step (a
library renamed over another's between its KAT gate and its trials) is the runner's own
hook, so the order of events is exact and no timing is involved."""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path

import pytest
from _fakes import FakeKat, FakeRunner, fixed_host

import ngcc
from ngcc.base.errors import ChildError, LibraryChangedError
from ngcc.driver import child as _child
from ngcc.measure import executors as _executors
from ngcc.measure import guard as _guard
from ngcc.measure import job as _jobs

LENGTH = 64


def _library(folder: Path, name: str = "Victim") -> Path:
    """A copy of the built-in SM3 library under a name of its own, with its sidecar."""
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / ("%s.so" % name)
    shutil.copyfile(ngcc.instance("SM3").library, library)
    (folder / ("%s.so.json" % name)).write_text(json.dumps(
        {"name": name, "family": "Fake", "digest_bits": 256}))
    return library


class SwappingRunner(FakeRunner):
    """A fake runner whose library renames another build over the measured library's file
    at one point: after the cold call (``None``) or after trial ``at``."""

    def __init__(self, victim: Path, slow_build: Path, at: int | None):
        super().__init__()
        self.victim, self.slow_build, self.at = victim, slow_build, at
        self.swapped = False

    def _swap(self, index: int | None) -> None:
        if index == self.at and not self.swapped:
            self.slow_build.rename(self.victim)  # as `mv slow.so victim.so` does
            self.swapped = True

    def cold_call(self, instance, message_bytes, cpu, timeout):
        t1 = super().cold_call(instance, message_bytes, cpu, timeout)
        self._swap(None)
        return t1

    def trial(self, instance, message_bytes, calls, warmup, cpu, index, timeout):
        measured = super().trial(instance, message_bytes, calls, warmup, cpu, index, timeout)
        self._swap(index)
        return measured


def _slow_build(folder: Path) -> Path:
    """Another library's bytes (pseudoXOF-512's), ready to be renamed over the victim."""
    folder.mkdir(parents=True, exist_ok=True)
    other = folder / "slow.so"
    shutil.copyfile(ngcc.instance("pseudoXOF-512").library, other)
    return other


@pytest.mark.parametrize("executor", ["local", "serial"])
@pytest.mark.parametrize(("at", "when"), [(None, "before trial 0 at 64 B"),
                                          (1, "while trial 1 at 64 B ran")])
def test_a_library_renamed_over_after_its_gate_fails_its_job(tmp_path, monkeypatch,
                                                            executor, at, when):
    fixed_host(monkeypatch)
    victim = _library(tmp_path / "lib")
    planned = hashlib.sha256(victim.read_bytes()).hexdigest()
    slow = _slow_build(tmp_path / "elsewhere")
    changed = hashlib.sha256(slow.read_bytes()).hexdigest()
    runner = SwappingRunner(victim, slow, at)
    kat = FakeKat()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ngcc.MeasurementWarning)
        run = ngcc.Campaign(
            [victim], lengths=[LENGTH], quick=True, run_dir=tmp_path / "run", progress=False,
            runner=runner, kat_checker=kat, wait=0,
            executor=_executors.SerialExecutor() if executor == "serial" else None).run()
    assert runner.swapped and kat.checked  # the gate ran on the right file, then the swap
    [job] = run.jobs
    assert job.status == "error"
    assert job.error == (
        "the library file %s of Victim changed %s: its sha256 is %s…, not the plan's %s…; "
        "the job keeps nothing timed from the changed file: restore the file the plan "
        "names (or rebuild it and start a new --run-dir)" % (victim, when, changed[:16],
                                                           planned[:16]))
    assert run.records == []  # no timed figure kept from the changed library
    assert not list((tmp_path / "run").glob("partial/**/*.npz"))
    trials = runner.trials_run()
    assert len(trials) == (0 if at is None else 2)  # nothing ran on the changed file


def test_the_library_is_checked_before_and_after_every_trial(tmp_path, monkeypatch):
    """The serial executor's job, step by step: a check before the cold call and around
    each trial (hashing is cheap next to a trial, so it is not skipped)."""
    fixed_host(monkeypatch)
    library = _library(tmp_path / "lib")
    checked: list[str] = []
    original = _jobs.check_library
    monkeypatch.setattr(_jobs, "check_library", lambda order, instance, before: (
        checked.append(before), original(order, instance, before))[1])
    order = _order(library, hashlib.sha256(library.read_bytes()).hexdigest(), trials=2)
    result = _jobs.measure_job(order, FakeRunner(), 0, "serial")
    assert result.status == "done" and len(result.trials) == 2
    assert checked == ["before its calibration at 64 B", "before trial 0 at 64 B",
                       "while trial 0 at 64 B ran", "before trial 1 at 64 B",
                       "while trial 1 at 64 B ran"]


def test_a_library_that_cannot_be_read_is_refused_naming_it(tmp_path):
    library = _library(tmp_path / "lib")
    order = _order(library, hashlib.sha256(library.read_bytes()).hexdigest())
    library.unlink()
    with pytest.raises(LibraryChangedError, match=r"^the library file %s of SM3 changed "
                       r"before trial 0 at 64 B: its sha256 is unreadable \(No such file"
                       % library) as refused:
        _guard.check_library(order, order.instance, "before trial 0 at 64 B")
    assert refused.value.status == "error" and isinstance(refused.value, ChildError)


def _order(library: Path, sha: str, trials: int = 3, **fields) -> _jobs.JobOrder:
    fields.setdefault("trial_timeout", None)
    return _jobs.JobOrder(key="k", label="SM3", instance=ngcc.instance(library),
                          library_sha256=sha, message_bytes=LENGTH, trials=trials,
                          max_trials=trials, target_ci=None, trial_target=0.02,
                          op_budget=5.0, run_dir=".", **fields)


# ------------------------------------------------------------ the trial deadline

def test_a_deadline_from_the_cold_call_is_capped(tmp_path):
    order = _order(_library(tmp_path), "0" * 64)
    assert order.max_trial_timeout == _child.MAX_TRIAL_TIMEOUT == 300.0
    # a 100 s cold call, 20 calls and one warm-up: 60 + 10 * 41 * 100 s uncapped
    slow = _guard.trial_deadline(order, 100.0, 20, 1)
    assert slow == _guard.Deadline(300.0, 41060.0)
    assert _child.trial_timeout(100.0, 20, 1) == 300.0
    # a fast library keeps the estimate, which no cap touches
    fast = _guard.trial_deadline(order, 1e-6, 20000, 10)
    assert fast == _guard.Deadline(60.0 + 10 * 40010 * 1e-6)
    # the cap is a setting, and trial_timeout (--trial-timeout) is not capped
    assert _guard.trial_deadline(_order(_library(tmp_path), "0" * 64, max_trial_timeout=50.0),
                                100.0, 20, 1) == _guard.Deadline(50.0, 41060.0)
    assert _guard.trial_deadline(_order(_library(tmp_path), "0" * 64, trial_timeout=5000.0),
                                100.0, 20, 1) == _guard.Deadline(5000.0)


def test_a_trial_killed_at_the_cap_says_so():
    capped, uncapped = _guard.Deadline(300.0, 41060.0), _guard.Deadline(120.0)
    timeout = ChildError("timeout", "SM3 at 64 B (trial 0) did not finish within 300 s")
    said = capped.explained(timeout)
    assert said is not None and said.status == "timeout"
    assert said.message == (
        "SM3 at 64 B (trial 0) did not finish within 300 s; its deadline was the cap of "
        "300 s on a deadline from the cold call (which alone would have allowed 41060 s): "
        "if the library is this slow, allow it more with --trial-timeout SECONDS or "
        "--max-trial-timeout SECONDS (trial_timeout= or max_trial_timeout= in Python)")
    assert uncapped.explained(timeout) is None  # nothing to add: not the cap
    assert capped.explained(ChildError("crash", "SIGSEGV")) is None


class SlowColdCall(FakeRunner):
    """A library whose first call takes 100 s (so it claims), and whose trial then hangs
    until the deadline it was given: the runner records that deadline."""

    def __init__(self):
        super().__init__()
        self.deadlines: list[float] = []

    def cold_call(self, instance, message_bytes, cpu, timeout):
        return 100.0

    def trial(self, instance, message_bytes, calls, warmup, cpu, index, timeout):
        self.deadlines.append(timeout)
        raise ChildError("timeout", "%s at %d B (trial %d) did not finish within %g s"
                         % (instance.name, message_bytes, index, timeout))


def test_a_campaign_caps_the_deadline_and_its_job_says_why(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    runner = SlowColdCall()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ngcc.MeasurementWarning)
        run = ngcc.Campaign(["SM3"], lengths=[LENGTH], quick=True, run_dir=tmp_path / "run",
                            progress=False, runner=runner, kat_checker=FakeKat(), wait=0,
                            max_trial_timeout=120).run()
    [job] = run.jobs
    assert runner.deadlines == [120.0]
    assert job.status == "timeout" and "its deadline was the cap of 120 s" in job.error


@pytest.mark.parametrize("value", [0, -1, float("inf"), "300"])
def test_a_bad_cap_is_refused(tmp_path, value):
    with pytest.raises(ValueError, match="max_trial_timeout must be"):
        ngcc.CampaignSettings.make(max_trial_timeout=value, run_dir=tmp_path / "run")
