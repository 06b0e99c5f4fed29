"""Concurrent campaigns (ngcc/measure/locks.py): one per trial CPU, one per run directory; a
lock of a killed campaign is taken over; unusable CPUs get a clear message."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import ngcc
from ngcc.cli.main import main
from ngcc.measure import locks as _locks

#: A process that holds a run directory and a CPU, as a running campaign does.
HOLDER = """
import sys, time
from ngcc.measure import locks as _locks
with _locks.hold_campaign(sys.argv[1], int(sys.argv[2])):
    print("held", flush=True)
    time.sleep(600)
"""

LAST_CPU = max(os.sched_getaffinity(0))


@pytest.fixture
def holder() -> Iterator[Callable[[Path, int], subprocess.Popen[str]]]:
    """Start processes that hold a run directory and a CPU until killed."""
    started: list[subprocess.Popen[str]] = []

    def start(run_dir: Path, cpu: int) -> subprocess.Popen[str]:
        process = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir), str(cpu)],
                                   stdout=subprocess.PIPE, text=True)
        started.append(process)
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()
        assert process.stdout is not None
        process.stdout.close()


def _campaign(run_dir: Path, cpu: int | None = None, lengths: tuple[int, ...] = (64,)
              ) -> ngcc.Campaign:
    """A campaign that refuses a held CPU at once (``wait=0``; test_wait.py waits)."""
    return ngcc.Campaign(["SM3"], lengths=lengths, quick=True, cpu=cpu, run_dir=run_dir,
                         progress=False, wait=0)


def _run(campaign: ngcc.Campaign) -> ngcc.Run:
    with warnings.catch_warnings():  # a busy, virtual test host warns
        warnings.simplefilter("ignore", ngcc.MeasurementWarning)
        return campaign.run()


def _lock_pid(path: Path) -> int | None:
    try:
        return json.loads(path.read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None


def _wait_for_lock(path: Path, pid: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while _lock_pid(path) != pid:
        assert process.poll() is None, "the first campaign ended before taking its locks"
        assert time.monotonic() < deadline, "the first campaign never took %s" % path
        time.sleep(0.02)


# ------------------------------------------------------------------------- CPUs

def test_a_held_cpu_is_refused_naming_the_holder(tmp_path, holder):
    first = holder(tmp_path / "first", LAST_CPU)
    with pytest.raises(ngcc.CpuBusyError) as refused:
        _run(_campaign(tmp_path / "second", cpu=LAST_CPU))
    assert str(refused.value).startswith(
        "CPU %d is in use by another ngcc campaign (pid %d, run directory %s, since "
        % (LAST_CPU, first.pid, (tmp_path / "first").resolve()))
    assert "choose another CPU with --cpu" in str(refused.value)
    assert str(refused.value).endswith(  # how to wait, in both spellings
        "; to wait for it, give --wait SECONDS (command line) or wait=SECONDS (Python); "
        "both wait 3600 s by default, 0 refuses at once")
    # refused once the KAT gate had run (every decision before the wait): resumable
    second = ngcc.load_run(tmp_path / "second")
    assert [job.status for job in second.jobs] == ["pending"] and not second.records


def test_the_command_line_refuses_a_held_cpu(tmp_path, holder, capsys):
    first = holder(tmp_path / "first", LAST_CPU)
    status = main(["campaign", "SM3", "--quick", "--lengths", "64", "--cpu", str(LAST_CPU),
                   "--run-dir", str(tmp_path / "second"), "--quiet", "--wait", "0"])
    assert status == 1
    assert ("ngcc: error: CPU %d is in use by another ngcc campaign (pid %d, "
            % (LAST_CPU, first.pid)) in capsys.readouterr().err


def test_the_default_cpu_is_one_no_other_campaign_holds(tmp_path, holder):
    holder(tmp_path / "first", LAST_CPU)
    others = sorted(os.sched_getaffinity(0) - {LAST_CPU})
    campaign = _campaign(tmp_path / "second")
    if not others:  # a one-CPU host: nothing is free
        with pytest.raises(ngcc.CpuBusyError, match="every CPU this process may use is in "
                           "use by another ngcc campaign"):
            _run(campaign)
        return
    run = _run(campaign)
    assert run.plan.cpu == others[-1]
    assert {trial.cpu for record in run.records for trial in record.trials} == {
        others[-1]}
    assert [job.status for job in run.jobs] == ["done"]


def test_no_free_cpu_names_every_holder(tmp_path, holder, monkeypatch):
    first = holder(tmp_path / "first", LAST_CPU)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {LAST_CPU})
    with pytest.raises(ngcc.CpuBusyError) as refused:
        _run(_campaign(tmp_path / "second"))
    assert ("every CPU this process may use is in use by another ngcc campaign (CPU %d: "
            "pid %d, run directory %s" % (LAST_CPU, first.pid, (tmp_path / "first").resolve())
            ) in str(refused.value)


# ------------------------------------------------ leak tests hold their CPU too

#: The shortest leak test (ngcc.measure.leak_measurement.MIN_CALLS); SM3 at 64 B takes milliseconds.
LEAK = {"length": 64, "calls": 2000}


def test_a_leak_test_refuses_a_cpu_a_campaign_holds(tmp_path, holder, capsys):
    first = holder(tmp_path / "first", LAST_CPU)
    busy = "CPU %d is in use by another ngcc campaign (pid %d, " % (LAST_CPU, first.pid)
    with pytest.raises(ngcc.CpuBusyError, match="^" + re.escape(busy)):
        ngcc.leak("SM3", cpu=LAST_CPU, wait=0, **LEAK)
    assert main(["leak", "SM3", "--calls", "2000", "--cpu", str(LAST_CPU),
                 "--out", str(tmp_path / "leak"), "--wait", "0"]) == 1
    assert "ngcc: error: " + busy in capsys.readouterr().err
    assert not list((tmp_path / "leak").rglob("*.json")), "a refused test writes nothing"


def test_a_leak_test_without_a_cpu_takes_one_no_campaign_holds(tmp_path, holder):
    holder(tmp_path / "first", LAST_CPU)
    others = sorted(os.sched_getaffinity(0) - {LAST_CPU})
    if not others:  # a one-CPU host: nothing is free
        with pytest.raises(ngcc.CpuBusyError, match="every CPU this process may use"):
            ngcc.leak("SM3", wait=0, **LEAK)
        return
    assert ngcc.leak("SM3", **LEAK).cpu == others[-1]


def test_a_leak_test_holds_its_cpu_while_it_runs():
    holders: list[_locks.Holder | None] = []
    ngcc.leak("SM3", cpu=LAST_CPU, progress=lambda calls, t: holders.append(
        _locks.cpu_holder(LAST_CPU)), **LEAK)
    during = [h.pid for h in holders if h is not None]  # the last look may come after
    assert during and set(during) == {os.getpid()}
    assert _locks.cpu_holder(LAST_CPU) is None, "released afterwards"


def test_a_cpu_held_by_this_thread_is_its_own_but_not_another_threads(tmp_path):
    """A campaign's own leak tests run on the CPU it holds; another thread of the same
    process (a Dask worker thread) is refused as another campaign is."""
    refused: list[BaseException] = []

    def other_thread() -> None:
        try:
            with _locks.hold_cpu(LAST_CPU, None):
                pass
        except ngcc.CpuBusyError as exc:
            refused.append(exc)

    with _locks.hold_cpu(LAST_CPU, tmp_path) as cpu:
        with _locks.hold_cpu(LAST_CPU, None) as again:
            assert again == cpu == LAST_CPU
        assert _locks.cpu_holder(LAST_CPU) is not None, "still held after the inner exit"
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert len(refused) == 1
    assert _locks.cpu_holder(LAST_CPU) is None


def test_a_resumed_run_keeps_its_cpu(tmp_path):
    """Started on the first allowed CPU, resumed without --cpu: the plan still matches."""
    first_cpu = min(os.sched_getaffinity(0))
    run = _run(_campaign(tmp_path / "run", cpu=first_cpu))
    again = _run(_campaign(tmp_path / "run"))
    assert again.plan.cpu == first_cpu == run.plan.cpu
    assert len(again.campaign.starts) == 2


FORKING_HOLDER = """
import os, sys, time
from ngcc.measure import locks as _locks
with _locks.hold_run_dir(sys.argv[1]):
    if os.fork() == 0:  # the child keeps the lock's descriptor a moment, as one that
        time.sleep(1.0)  # has not yet exec'd when its parent is killed
        os._exit(0)
    os._exit(0)         # the holder dies at once, its child holding the lock
"""


def test_a_lock_left_to_a_child_of_a_dead_holder_is_taken_once_the_child_lets_go(tmp_path):
    run_dir = tmp_path / "run"
    subprocess.run([sys.executable, "-c", FORKING_HOLDER, str(run_dir)], check=True)
    with _locks.hold_run_dir(run_dir):  # not RunDirBusyError naming the dead pid
        assert _lock_pid(run_dir / _locks.RUN_DIR_LOCK) == os.getpid()


def test_a_lock_of_a_killed_campaign_is_taken_over(tmp_path):
    """kill -9 of a running campaign leaves its lock files; the same command run again
    takes both locks and finishes the run."""
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "ngcc", "campaign", "SM3", "--quick", "--lengths",
               "64,128", "--cpu", str(LAST_CPU), "--run-dir", str(run_dir), "--quiet"]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu_lock = _locks.lock_dir() / ("cpu%d.lock" % LAST_CPU)
    try:
        _wait_for_lock(cpu_lock, first.pid, first)
        _wait_for_lock(run_dir / _locks.RUN_DIR_LOCK, first.pid, first)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert first.returncode == -signal.SIGKILL
    assert _lock_pid(cpu_lock) == first.pid  # left behind, but no longer locked
    run = _run(_campaign(run_dir, cpu=LAST_CPU, lengths=(64, 128)))
    assert [job.status for job in run.jobs] == ["done"] * 2
    assert _lock_pid(cpu_lock) == _lock_pid(run_dir / _locks.RUN_DIR_LOCK) == os.getpid()


# ------------------------------------------------------------- run directories

def test_a_second_campaign_on_one_run_directory_is_refused(tmp_path):
    run_dir = tmp_path / "run"
    first = subprocess.Popen(
        [sys.executable, "-m", "ngcc", "campaign", "SM3", "--quick", "--lengths",
         "64,128", "--cpu", str(LAST_CPU), "--run-dir", str(run_dir), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_lock(run_dir / _locks.RUN_DIR_LOCK, first.pid, first)
        started = time.monotonic()
        with pytest.raises(ngcc.RunDirBusyError) as refused:
            _run(_campaign(run_dir, lengths=(64, 128)))
        assert time.monotonic() - started < 5, "refused at once, not after measuring"
        assert first.poll() is None, "the first campaign was still running"
    finally:
        assert first.wait(timeout=300) == 0
    assert str(refused.value).startswith(
        "run directory %s is in use by another ngcc campaign (pid %d, since " % (run_dir,
                                                                             first.pid))
    statuses = [job.status for job in ngcc.load_run(run_dir).jobs]
    assert statuses == ["done"] * 2


def test_a_foreign_folder_gets_no_lock_file(tmp_path):
    (tmp_path / "mine.txt").write_text("not a run")
    with pytest.raises(ngcc.ForeignRunDirError, match="nothing was written"):
        _run(_campaign(tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


# --------------------------------------------------------- CPUs that cannot be used

def test_a_cpu_that_does_not_exist_or_is_not_allowed(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert _locks.check_cpu(1) == 1
    with pytest.raises(ValueError, match=r"^CPU 4 does not exist: this machine has CPUs 0-3 "
                       r"\(allowed to this process: 0, 1\)"):
        _locks.check_cpu(4)
    with pytest.raises(ValueError, match=r"^CPU -1 does not exist"):
        _locks.check_cpu(-1)
    with pytest.raises(ValueError, match=r"^CPU 2 is not allowed to this process \(allowed: "
                       r"0, 1; see taskset"):
        _locks.check_cpu(2)
    with pytest.raises(ValueError, match="CPU 2 is not allowed"):
        ngcc.Campaign(["SM3"], cpu=2)


def test_check_refuses_a_cpu_that_does_not_exist(capsys):
    missing = os.cpu_count() + 7
    assert main(["check", "--cpu", str(missing)]) == 2  # a usage mistake
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("ngcc: error: CPU %d does not exist: this machine has "
                                   "CPUs 0-%d" % (missing, os.cpu_count() - 1))


def test_check_warns_about_a_cpu_another_campaign_holds(tmp_path, holder, capsys):
    first = holder(tmp_path / "first", LAST_CPU)
    assert main(["check", "--cpu", str(LAST_CPU), "--strict"]) == 1
    assert ("warning: CPU %d is in use by another ngcc campaign (pid %d, run directory %s"
            % (LAST_CPU, first.pid, (tmp_path / "first").resolve())) in capsys.readouterr().out


def test_the_lock_folder_must_be_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    (tmp_path / "ngcc").mkdir()
    (tmp_path / "ngcc").chmod(0o777)
    with pytest.raises(OSError, match="is not a private folder of this user"):
        _locks.lock_dir()
    (tmp_path / "ngcc").chmod(0o700)
    assert _locks.lock_dir() == tmp_path / "ngcc"
