"""The queue of measurements waiting for a CPU (``measure.tickets``): first come, first
served across processes, a crashed waiter dropped, and the holder's own estimate of
its end shown to those who wait. Every process here shares one lock folder (the
tests' own, ``$XDG_RUNTIME_DIR/ngcc``), as the users of one machine share theirs; the
order is read from what the waiters did, never from a clock."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ngcc.base.errors import CpuBusyError
from ngcc.measure import locks as _locks
from ngcc.measure import tickets as _tickets
from ngcc.measure.waiting import CpuWait

CPU = max(os.sched_getaffinity(0))

# Holds CPU until its stdin closes; says "held" once it does (and writes its estimate).
HOLDER = """
import sys
from ngcc.measure import locks as _locks
with _locks.hold_cpu(int(sys.argv[1]), None):
    _locks.expect_end(float(sys.argv[2]))
    print("held", flush=True)
    sys.stdin.read()
"""
# Waits for CPU, writes its name to the log, and lets the CPU go when its stdin ends.
WAITER = """
import sys
from ngcc.measure import locks as _locks
with _locks.hold_cpu(int(sys.argv[1]), None, wait=600, on_wait=lambda status: None):
    with open(sys.argv[3], "a") as log:
        log.write(sys.argv[2] + "\\n")
    sys.stdin.read()
"""


@pytest.fixture
def holder():
    """A process holding CPU (expecting to end in 90 s) until the test lets it go."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(CPU), "90"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    yield process
    process.kill()
    process.wait()
    process.stdout.close()
    process.stdin.close()


def _queued(count: int, *waiters: subprocess.Popen) -> None:
    """Until ``count`` live tickets want CPU (each waiter in line before the next comes)."""
    while len(_tickets.ahead(_locks.lock_dir(), CPU)) < count:
        assert all(w.poll() is None for w in waiters), "a waiter ended before it queued"
        time.sleep(0.05)


def _waiter(name: str, log: Path, stdin: int = subprocess.DEVNULL) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WAITER, str(CPU), name, str(log)],
                            stdin=stdin, text=True)


def test_waiters_get_the_cpu_in_the_order_they_came(tmp_path, holder):
    log = tmp_path / "order"
    waiters = []
    for count, name in enumerate(["first", "second", "third"], 1):
        waiters.append(_waiter(name, log))
        _queued(count, *waiters)
    holder.stdin.close()  # the CPU is free: each waiter takes it in turn
    for waiter in waiters:
        assert waiter.wait(timeout=300) == 0
    assert log.read_text().split() == ["first", "second", "third"]
    assert _tickets.ahead(_locks.lock_dir(), CPU) == []  # each left the queue


def test_a_waiter_that_crashed_is_dropped_from_the_queue(tmp_path, holder):
    log = tmp_path / "order"
    crashed = _waiter("crashed", log)
    _queued(1, crashed)
    behind = _waiter("behind", log)
    _queued(2, crashed, behind)
    crashed.kill()  # kill -9: its ticket stays behind, unlocked
    crashed.wait()
    holder.stdin.close()
    assert behind.wait(timeout=300) == 0
    assert log.read_text().split() == ["behind"]


def test_a_free_cpu_promised_to_an_earlier_waiter_is_not_taken(tmp_path, holder):
    early = _waiter("early", tmp_path / "order", stdin=subprocess.PIPE)
    _queued(1, early)
    holder.stdin.close()
    holder.wait()
    # whether the early waiter holds it yet or not, a newcomer is not first in line
    with pytest.raises(CpuBusyError, match="CPU %d is in use by another ngcc campaign \\(pid %d"
                       % (CPU, early.pid)), _locks.hold_cpu(CPU, None, wait=0):
        pass
    early.stdin.close()
    assert early.wait(timeout=300) == 0


def test_the_wait_names_the_holder_and_its_own_estimate_of_its_end(holder):
    told: list[CpuWait] = []
    with pytest.raises(CpuBusyError), _locks.hold_cpu(CPU, None, wait=0.5, on_wait=told.append):
        pass
    first = told[0]
    assert first.cpus == (CPU,) and first.ahead == 0 and not first.over
    held = first.holders[CPU]
    assert held.pid == holder.pid and held.command.startswith("%s -c " % sys.executable)
    left = first.ends_in()
    assert left is not None and 0 < left <= 90  # the holder said 90 s, some time ago
    assert "expects to end in about" in str(first)
    assert told[-1].over and told[-1].taken is None
