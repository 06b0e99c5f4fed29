"""Waiting for a CPU another ngcc measurement holds (``--wait``), and the answers that
need no CPU coming first: a plan that does not match its run directory, a run with
nothing left to measure. The holder is a real process holding a real CPU lock; the
campaigns measure with the fake runner."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

import ngcc
from ngcc.cli.main import main
from ngcc.measure import locks as _locks
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


def _campaign(run_dir, lengths=(64,), **settings):
    return ngcc.Campaign(["SM3"], lengths=lengths, quick=True, cpu=LAST_CPU, run_dir=run_dir,
                         progress=False, runner=FakeRunner(), kat_checker=FakeKat(),
                         **settings)


def test_a_held_cpu_is_waited_for_saying_for_whom_then_taken(tmp_path, holder, monkeypatch):
    fixed_host(monkeypatch)
    told: list[str] = []

    def release_once_told() -> None:
        while not told:
            time.sleep(0.02)
        holder.kill()

    threading.Thread(target=release_once_told, daemon=True).start()
    run = _campaign(tmp_path / "run", wait=120, on_wait=told.append).run()
    assert [job.status for job in run.jobs] == ["done"]
    assert holder.poll() is not None  # measured only once the holder was gone
    (line,) = told
    assert line.startswith("waiting up to 120 s for CPU %d: CPU %d is held by another ngcc "
                           "measurement (pid %d, run directory %s"
                           % (LAST_CPU, LAST_CPU, holder.pid, (tmp_path / "other").resolve()))


def test_the_wait_is_bounded(tmp_path, holder, monkeypatch):
    fixed_host(monkeypatch)
    told: list[str] = []
    with pytest.raises(ngcc.CpuBusyError, match=r"pid %d.*\(still, after waiting 0\.3 s\)"
                       % holder.pid):
        _campaign(tmp_path / "run", wait=0.3, on_wait=told.append).run()
    assert len(told) == 1
    assert not (tmp_path / "run").exists()  # refused before it began: nothing left


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
