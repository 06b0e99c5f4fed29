"""Figures measured from outside the library's process (issue 45): around a trial's
batch the driver stops twice (``BATCH_MARK`` 0 and 1, ``--outside-fd`` in
``csrc/driver/mode_trial.c``) and waits for a byte from the parent, which meanwhile
reads the on-CPU time the kernel accounted to the driver's thread
(``/proc/TID/task/TID/schedstat``, its first field: the same clock as the thread's
CPU time in the process, read while the thread waits, so exact). The difference
holds the batch and the two stops' system calls, and no word of the library's:
:func:`ngcc.driver.facts.below_outside` holds the trial's own batch figures against it.
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

    def options(self) -> list[str]:
        """The driver's option naming the descriptor it waits on."""
        return ["--outside-fd", str(self.read_fd)]

    def mark(self, phase: int) -> None:
        """A BATCH_MARK frame arrived: read the worker's thread, then let it go on."""
        pid = self.conversation.frames.get(HELLO) if self.conversation else None
        self._readings.append(on_cpu_ns(worker_of(pid)) if pid else None)
        with suppress(OSError):  # the library closed its end: the driver reads nothing
            os.write(self._write_fd, b"g")

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
