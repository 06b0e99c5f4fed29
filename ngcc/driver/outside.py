"""Figures measured from outside the library's process (issue 45): around a trial's
batch the driver stops twice (``BATCH_MARK`` 0 and 1, ``--outside-fd`` in
``csrc/driver/mode_trial.c``) and waits for a byte from the parent, which meanwhile
reads the on-CPU time the kernel accounted to the driver's thread
(``/proc/TID/task/TID/schedstat``, its first field: the same clock as the thread's
CPU time in the process, read while the thread waits, so exact). The difference
holds the batch and the two stops' system calls, and no word of the library's:
:func:`ngcc.driver.facts.below_outside` holds the trial's own batch figures against it.

A leak run (``csrc/driver/mode_leak.c``) stops the same way around sub-batches of one
class each after its timed calls (``LEAK_MARK`` frames, which carry each sub-batch's
calls): :attr:`Outside.class_ns` is each class's least on-CPU time per call, which
:func:`ngcc.driver.facts.leak_outside_differs` holds the per-call ticks' classes against.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

from ngcc.driver.protocol import HELLO, Conversation


def worker_of(pid: int) -> int:
    """The process that runs the mode: under ``--isolate`` the driver's only child's
    only child (``outer`` → ``init`` → ``worker``, ``csrc/isolate/isolate.h``), else
    the driver itself (a library may start no process: the process limit)."""
    for _ in range(2):
        try:
            children = Path("/proc/%d/task/%d/children" % (pid, pid)).read_text().split()
        except OSError:
            return pid
        if len(children) != 1:
            return pid
        pid = int(children[0])
    return pid


def on_cpu_ns(tid: int) -> int | None:
    """The thread's on-CPU time in ns by the kernel's schedstat, or None where unread."""
    try:
        return int(Path("/proc/%d/task/%d/schedstat" % (tid, tid)).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


class Outside:
    """One trial's outside reading: the descriptor the driver waits on
    (:meth:`options`), the callback of its ``BATCH_MARK`` frames (:meth:`mark`) and
    the batch's on-CPU time (:attr:`batch_cpu_ns`, None where it could not be read)."""

    def __init__(self) -> None:
        self.read_fd, self._write_fd = os.pipe()
        self.conversation: Conversation | None = None
        self._readings: list[int | None] = []
        self._calls: list[int] = []

    def options(self) -> list[str]:
        """The driver's option naming the descriptor it waits on."""
        return ["--outside-fd", str(self.read_fd)]

    def mark(self, phase: int) -> None:
        """A BATCH_MARK frame arrived: read the worker's thread, then let it go on."""
        pid = self.conversation.frames.get(HELLO) if self.conversation else None
        self._readings.append(on_cpu_ns(worker_of(pid)) if pid else None)
        with suppress(OSError):  # the library closed its end: the driver reads nothing
            os.write(self._write_fd, b"g")

    def leak_mark(self, phase: int, calls: int) -> None:
        """A LEAK_MARK frame arrived (its calls: the sub-batch's, at odd phases)."""
        self._calls.append(calls)
        self.mark(phase)

    @property
    def class_ns(self) -> tuple[float, float] | None:
        """The least on-CPU time per call of a leak run's sub-batches of class 0 and of
        class 1 (sub-batch j is of class j % 2), by the kernel; None where a reading
        is missing."""
        if not self._readings or len(self._readings) % 4 or None in self._readings:
            return None
        least = [float("inf"), float("inf")]
        for j in range(len(self._readings) // 2):
            before, after = self._readings[2 * j], self._readings[2 * j + 1]
            assert before is not None and after is not None
            least[j % 2] = min(least[j % 2], (after - before) / max(1, self._calls[2 * j + 1]))
        return least[0], least[1]

    @property
    def batch_cpu_ns(self) -> int | None:
        """The thread's on-CPU time between the two marks, by the kernel."""
        if len(self._readings) != 2 or None in self._readings:
            return None
        before, after = self._readings
        assert before is not None and after is not None
        return after - before

    def close(self) -> None:
        """Close both ends of the pipe (the driver has its own copy of the one it reads)."""
        for fd in (self.read_fd, self._write_fd):
            with suppress(OSError):
                os.close(fd)
