"""Waiting for a CPU another ngcc measurement holds (``--wait``), and the answers that
need no CPU coming first: a plan that does not match its run directory, a run with
nothing left to measure. The holder is a real process holding a real CPU lock; the
campaigns measure with the fake runner."""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
import threading
import time
import warnings

import pytest

import ngcc
from ngcc.base.progress import Progress
from ngcc.cli.main import main
from ngcc.measure import locks as _locks
from ngcc.measure.waiting import CpuWait
from tests._fakes import FakeKat, FakeRunner, fixed_host

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")

HOLDER = """
import sys, time
from ngcc.measure import locks as _locks
with _locks.hold_cpu(int(sys.argv[2]), sys.argv[1]):
    print("held", flush=True)
    time.sleep(600)
"""
LAST_CPU = max(os.sched_getaffinity(0))


@pytest.fixture
def holder(tmp_path):
    """A process holding the lock of LAST_CPU until the test kills it."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "other"),
                                str(LAST_CPU)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    yield process
    process.kill()
    process.wait()
    process.stdout.close()


def _campaign(run_dir, lengths=(64,), progress=False, **settings):
    return ngcc.Campaign(["SM3"], lengths=lengths, quick=True, cpu=LAST_CPU, run_dir=run_dir,
                         progress=progress, runner=FakeRunner(), kat_checker=FakeKat(),
                         **settings)


def test_a_held_cpu_is_waited_for_saying_for_whom_then_taken(tmp_path, holder, monkeypatch):
    fixed_host(monkeypatch)
    told: list[CpuWait] = []

    def release_once_told() -> None:
        while not told:
            time.sleep(0.02)
        holder.kill()

    threading.Thread(target=release_once_told, daemon=True).start()
    run = _campaign(tmp_path / "run", wait=120, on_wait=told.append).run()
    assert [job.status for job in run.jobs] == ["done"]
    assert holder.poll() is not None  # measured only once the holder was gone
    first, *_, last = told
    assert str(first).startswith(
        "waiting up to 120 s for CPU %d: CPU %d is held by another ngcc measurement (pid %d, "
        "run directory %s" % (LAST_CPU, LAST_CPU, holder.pid, (tmp_path / "other").resolve()))
    assert first.holders[LAST_CPU].command.startswith("%s -c " % sys.executable)
    assert not first.over and (last.over, last.taken) == (True, LAST_CPU)


def test_the_wait_is_bounded(tmp_path, holder, monkeypatch):
    fixed_host(monkeypatch)
    told: list[CpuWait] = []
    with pytest.raises(ngcc.CpuBusyError, match=r"pid %d.*\(still, after waiting 0\.3 s\)"
                       % holder.pid):
        _campaign(tmp_path / "run", wait=0.3, on_wait=told.append).run()
    assert told and not told[0].over and (told[-1].over, told[-1].taken) == (True, None)
    # refused once the KAT gate had run (every decision before the wait): resumable
    run = ngcc.load_run(tmp_path / "run")
    assert [job.status for job in run.jobs] == ["pending"] and not run.records


def test_a_plan_mismatch_is_answered_before_any_wait(tmp_path, holder, monkeypatch):
    fixed_host(monkeypatch)
    holder.kill()
    holder.wait()
    _campaign(tmp_path / "run").run()
    again = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "other"),
                              str(LAST_CPU)], stdout=subprocess.PIPE, text=True)
    try:
        assert again.stdout is not None and again.stdout.readline() == "held\n"
        told: list[str] = []
        with pytest.raises(ngcc.PlanMismatchError, match="started with another plan"):
            _campaign(tmp_path / "run", lengths=(64, 128), wait=600, on_wait=told.append).run()
        assert told == []
        # a finished run resumed: nothing to measure, so no CPU is needed
        run = _campaign(tmp_path / "run", wait=None).run()
        assert [job.status for job in run.jobs] == ["done"] and len(run.campaign.starts) == 2
    finally:
        again.kill()
        again.wait()
        again.stdout.close()


def test_the_command_line_waits_by_default_and_refuses_with_wait_0(tmp_path, holder,
                                                                    monkeypatch, capsys):
    fixed_host(monkeypatch)
    monkeypatch.setattr("ngcc.driver.child.DriverRunner", FakeRunner)
    monkeypatch.setattr("ngcc.driver.kat.check", FakeKat())
    command = ["campaign", "SM3", "--quick", "--lengths", "64", "--cpu", str(LAST_CPU),
               "--run-dir", str(tmp_path / "run"), "--quiet"]
    assert main([*command, "--wait", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ngcc: error: CPU %d is in use by another ngcc campaign (pid %d"
                          % (LAST_CPU, holder.pid)) and "waiting" not in err
    threading.Timer(1.0, holder.kill).start()
    assert main(command) == 0
    err = capsys.readouterr().err
    assert err.startswith("ngcc: waiting up to %g s for CPU %d: CPU %d is held by another "
                          "ngcc measurement (pid %d" % (_locks.DEFAULT_WAIT_SECONDS, LAST_CPU,
                                                        LAST_CPU, holder.pid))
    assert err.count("ngcc: waiting") == 1  # a line when the wait begins or changes
    assert err.splitlines()[1].startswith("ngcc: took CPU %d after waiting " % LAST_CPU)


def test_leak_waits_for_its_cpu_too(tmp_path, holder, capsys):
    assert main(["leak", "SM3", "--cpu", str(LAST_CPU), "--calls", "2000", "--out",
                 str(tmp_path / "leak"), "--wait", "0.2"]) == 1
    err = capsys.readouterr().err
    assert "ngcc: waiting up to 0.2 s for CPU %d" % LAST_CPU in err
    assert "(still, after waiting 0.2 s)" in err


@pytest.mark.parametrize("value", ["-1", "soon", "inf"])
def test_a_bad_wait_is_a_usage_error(value, capsys):
    assert main(["campaign", "SM3", "--wait", value]) == 2
    assert "--wait" in capsys.readouterr().err


def test_a_foreign_folder_is_refused_before_any_wait(tmp_path, holder, monkeypatch):
    fixed_host(monkeypatch)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("not a run\n")
    told: list[str] = []
    with pytest.raises(ngcc.ForeignRunDirError, match="not an ngcc run directory"):
        _campaign(tmp_path / "notes", wait=600, on_wait=told.append).run()
    assert told == []


def test_check_waits_only_when_asked(tmp_path, holder, capsys):
    assert main(["check", "--cpu", str(LAST_CPU)]) == 0  # reads the host at once
    assert "is in use by another ngcc campaign (pid %d" % holder.pid in capsys.readouterr().out
    assert main(["check", "--cpu", str(LAST_CPU), "--wait", "0.2"]) == 1
    assert "(still, after waiting 0.2 s)" in capsys.readouterr().err


# ------------------------------------------------- one waiting rule, every entry point

def _release_once(shown: io.StringIO, holder: subprocess.Popen) -> None:
    """Kill ``holder`` once the wait is shown: the order of events proves the wait, no
    clock is read."""
    def release() -> None:
        while "waiting" not in shown.getvalue():
            time.sleep(0.02)
        holder.kill()
    threading.Thread(target=release, daemon=True).start()


def test_python_waits_by_default_as_the_command_line_does(tmp_path, holder, monkeypatch):
    # shown as progress (where the campaign shows its own), not as a warning to filter
    fixed_host(monkeypatch)
    assert ngcc.CampaignSettings.make().wait == _locks.DEFAULT_WAIT_SECONDS
    shown = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _release_once(shown, holder)
        run = _campaign(tmp_path / "run", progress=Progress("lines", shown)).run()  # no wait=
    assert [job.status for job in run.jobs] == ["done"]
    assert holder.poll() is not None  # measured only once the holder was gone
    assert not [w for w in caught if "waiting" in str(w.message)]
    lines = shown.getvalue().splitlines()
    assert lines[0].startswith("ngcc: waiting up to 3600 s for CPU %d: CPU %d is held by "
                               "another ngcc measurement (pid %d"
                               % (LAST_CPU, LAST_CPU, holder.pid))
    assert lines[1].startswith("ngcc: took CPU %d after waiting" % LAST_CPU)


def test_wait_0_refuses_at_once_saying_how_to_wait(tmp_path, holder, monkeypatch):
    fixed_host(monkeypatch)
    told: list[str] = []
    with pytest.raises(ngcc.CpuBusyError) as refused:
        _campaign(tmp_path / "run", wait=0, on_wait=told.append).run()
    message = str(refused.value)
    assert "pid %d" % holder.pid in message and told == []
    assert "--wait SECONDS (command line) or wait=SECONDS (Python)" in message


def test_a_leak_test_in_python_waits_by_default_too(holder, monkeypatch):
    shown = io.StringIO()
    monkeypatch.setattr(sys, "stderr", shown)  # where a notebook's progress goes
    _release_once(shown, holder)
    result = ngcc.leak("SM3", 64, calls=2000, cpu=LAST_CPU)
    assert result.cpu == LAST_CPU and holder.poll() is not None
    assert shown.getvalue().startswith("ngcc: waiting up to 3600 s for CPU %d" % LAST_CPU)


@pytest.fixture
def no_lock(monkeypatch):
    """A spy in place of the CPU lock: every call is recorded and refused, so a test sees
    whether a command ever reached the lock."""
    reached: list[tuple] = []

    def hold_cpu(*args, **kwargs):
        reached.append(args)
        raise AssertionError("the CPU lock was reached")

    monkeypatch.setattr(_locks, "hold_cpu", hold_cpu)
    return reached


@pytest.mark.parametrize(("argv", "said"), [
    (["SM3", "--fixed", "00ff", "--length", "3"], "--fixed has 2 bytes (4 hex digits), but "
                                                  "--length is 3"),
    (["SM3", "--seed", "-1"], "--seed must be 0 to 18446744073709551615, got -1"),
    (["NoSuchHash"], "unknown instance 'NoSuchHash'"),
    (["SM3", "--length", "0"], "length must be 1 to 1048576 bytes, got 0"),
    (["SM3", "--length", "99999999"], "length must be 1 to 1048576 bytes"),
])
def test_leak_checks_every_argument_before_the_cpu_lock(tmp_path, holder, no_lock, capsys,
                                                        argv, said):
    status = main(["leak", *argv, "--cpu", str(LAST_CPU), "--wait", "600", "--out",
                   str(tmp_path / "leak")])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("ngcc: error: ") and said in err
    assert no_lock == [] and "waiting" not in err  # never reached the lock
    assert holder.poll() is None  # while another process held the CPU


@pytest.mark.parametrize(("arguments", "said"), [
    ({"fixed": b"\x00\xff", "length": 3}, "the fixed message has 2 bytes"),
    ({"seed": -1}, "seed must be 0 to"),
    ({"wait": -1}, "wait must be a finite number of seconds >= 0"),
])
def test_python_leak_checks_every_argument_before_the_cpu_lock(no_lock, arguments, said):
    with pytest.raises(ValueError, match=said):
        ngcc.leak("SM3", **{"calls": 2000, "cpu": LAST_CPU, "wait": 600, **arguments})
    assert no_lock == []


@pytest.mark.parametrize("wait", [-1, float("inf"), "soon"])
def test_a_bad_wait_is_refused_before_anything(tmp_path, wait):
    with pytest.raises(ValueError, match="wait must be a finite number of seconds >= 0"):
        _campaign(tmp_path / "run", wait=wait)
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason='Dask distributed is not installed (pip install "ngcc[distributed]")')
@pytest.mark.parametrize("workers", [1, 2])
def test_local_workers_wait_for_their_cpus_as_told(tmp_path, holder, monkeypatch, capsys,
                                                   workers):
    """--workers N --wait S waits for the CPUs of its workers (the last N), and says
    which one it waits for; the cluster is never started while one is held."""
    if workers > len(os.sched_getaffinity(0)):
        pytest.skip("needs %d CPUs" % workers)
    fixed_host(monkeypatch)
    monkeypatch.setattr("ngcc.driver.child.DriverRunner", FakeRunner)
    monkeypatch.setattr("ngcc.driver.kat.check", FakeKat())
    monkeypatch.setattr("distributed.SpecCluster.__init__", _never_started)
    status = main(["campaign", "SM3", "--quick", "--lengths", "64", "--workers",
                   str(workers), "--wait", "0.3", "--run-dir", str(tmp_path / "run"), "--quiet"])
    err = capsys.readouterr().err
    assert status == 1
    assert "ngcc: waiting up to 0.3 s for CPU %d of --workers %d: CPU %d is held by another " \
           "ngcc measurement (pid %d" % (LAST_CPU, workers, LAST_CPU, holder.pid) in err
    assert err.count("waiting up to") == 1
    assert "ngcc: error: --workers %d needs CPU %d (the workers take the last %d CPUs this " \
           "process may use), which another ngcc measurement holds (pid %d" % (
               workers, LAST_CPU, workers, holder.pid) in err
    assert "(still, after waiting 0.3 s); use fewer workers, or to wait for it, give --wait " \
           "SECONDS" in err
    assert not (tmp_path / "run").exists()  # refused before it began: nothing left


def _never_started(*args, **kwargs):
    raise AssertionError("a local cluster was started while one of its CPUs was held")


def test_a_campaign_writes_its_own_estimate_of_its_end_into_its_cpu_lock(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    written: list[str] = []
    lock_file = _locks.lock_dir() / ("cpu%d.lock" % LAST_CPU)
    expect_end = _locks.expect_end

    def spy(seconds_left: float) -> None:
        expect_end(seconds_left)
        written.append(lock_file.read_text())

    monkeypatch.setattr(_locks, "expect_end", spy)
    _campaign(tmp_path / "run", lengths=(64, 128)).run()
    assert written  # after the plan, and after each job
    assert '"ends": "20' in written[0] and '"pid": %d' % os.getpid() in written[0]


# ------------------------------------------------- every decision before the wait

def test_a_dry_run_never_takes_the_cpu_lock(tmp_path, holder, no_lock, monkeypatch):
    fixed_host(monkeypatch)
    told: list[CpuWait] = []
    cost = _campaign(tmp_path / "run", wait=0, on_wait=told.append).dry_run()
    assert cost.jobs == 1 and cost.seconds > 0  # calibrated, beside the holder
    assert no_lock == [] and told == [] and holder.poll() is None


def test_the_command_line_dry_run_does_not_wait(tmp_path, holder, monkeypatch, capsys):
    fixed_host(monkeypatch)
    monkeypatch.setattr("ngcc.driver.child.DriverRunner", FakeRunner)
    monkeypatch.setattr("ngcc.driver.kat.check", FakeKat())
    assert main(["campaign", "SM3", "--quick", "--lengths", "64", "--cpu", str(LAST_CPU),
                 "--run-dir", str(tmp_path / "run"), "--dry-run", "--wait", "0"]) == 0
    assert "waiting" not in capsys.readouterr().err and holder.poll() is None


def test_a_library_without_kat_is_refused_before_any_wait(tmp_path, holder, no_lock,
                                                         monkeypatch):
    fixed_host(monkeypatch)
    told: list[CpuWait] = []
    # a submission's NOKAT (a baseline's is admitted): no reference to check it against
    campaign = ngcc.Campaign(["WChain-V1-512"], lengths=(64,), quick=True, cpu=LAST_CPU,
                             run_dir=tmp_path / "run", progress=False, runner=FakeRunner(),
                             kat_checker=FakeKat({"WChain-V1-512": "NOKAT"}), wait=600,
                             on_wait=told.append)
    with pytest.raises(ngcc.KatGateError, match="NOKAT"):
        campaign.run()
    assert no_lock == [] and told == [] and holder.poll() is None
