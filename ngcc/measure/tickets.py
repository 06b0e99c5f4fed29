"""The queue of measurements waiting for a CPU: first come, first served across processes.

A measurement that finds its CPU held (or promised to an earlier waiter) takes a
ticket: a file ``queue/<number>-<pid>.ticket`` in the lock folder, numbered from the
counter ``queue/next`` (read and written under its own flock, so numbers follow the
order of arrival), holding the waiter's facts (pid, command, run directory, the CPUs
it waits for). A free CPU goes to the live ticket with the lowest number that wants
it; a measurement that arrives when no ticket wants its CPU takes it without one.

A waiter holds an flock on its ticket for as long as it waits (the ticket is locked
before it is renamed into the queue, so a ticket in the queue is never seen unlocked
while its waiter lives). When a waiter dies, even by kill -9, the kernel releases the
lock; the next process that reads the queue finds the ticket unlocked and removes it,
so a crashed waiter never blocks the ones behind it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The queue's folder inside the lock folder.
QUEUE = "queue"
_COUNTER = "next"
_SUFFIX = ".ticket"


@dataclass(frozen=True)
class Ticket:
    """A live waiter, as it wrote itself into its ticket."""

    number: int
    pid: int | None
    cpus: tuple[int, ...]
    command: str | None
    run_dir: str | None
    arrived: str | None


def queue_dir(lock_folder: Path) -> Path:
    """The queue's folder (made if missing, private like the lock folder)."""
    folder = lock_folder / QUEUE
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    return folder


@contextlib.contextmanager
def ticket(lock_folder: Path, cpus: Sequence[int], facts: dict[str, object]) -> Iterator[int]:
    """Queue for one of ``cpus`` with ``facts`` (pid, command, run directory, arrival);
    yield the ticket's number; leave the queue on exit."""
    folder = queue_dir(lock_folder)
    number = _next_number(folder)
    path = folder / ("%012d-%d%s" % (number, os.getpid(), _SUFFIX))
    staging = folder / (".%s.tmp" % path.name)
    fd = os.open(staging, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, (json.dumps({**facts, "cpus": list(cpus)}) + "\n").encode())
        os.rename(staging, path)  # locked before anyone can see it in the queue
        try:
            yield number
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    finally:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            staging.unlink()


def ahead(lock_folder: Path, cpu: int, before: int | None = None) -> list[Ticket]:
    """The live tickets that wait for ``cpu``, numbered below ``before`` (None: all), in
    the order they came; dead waiters' tickets are removed on the way."""
    folder = lock_folder / QUEUE
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(_SUFFIX))
    except FileNotFoundError:
        return []
    waiting = []
    for name in names:
        number = _number(name)
        if number is None or (before is not None and number >= before):
            continue
        live = _live_ticket(folder / name, number)
        if live is not None and cpu in live.cpus:
            waiting.append(live)
    return waiting


def _number(name: str) -> int | None:
    digits = name.partition("-")[0]
    return int(digits) if digits.isdigit() else None


def _live_ticket(path: Path, number: int) -> Ticket | None:
    """The ticket at ``path`` if its waiter lives (it holds the ticket's flock), else
    None, and a dead waiter's ticket is removed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None  # gone: its waiter took a CPU or gave up
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(fd, number)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # unlocked: its waiter died
        return None
    finally:
        os.close(fd)


def _read(fd: int, number: int) -> Ticket:
    try:
        facts = json.loads(os.pread(fd, 65536, 0))
        cpus = tuple(int(cpu) for cpu in facts["cpus"])
        pid = int(facts["pid"])
    except (ValueError, KeyError, TypeError):
        return Ticket(number, None, (), None, None, None)  # a ticket not of this version
    return Ticket(number, pid, cpus, _text(facts.get("command")), _text(facts.get("run_dir")),
                  _text(facts.get("started")))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _next_number(folder: Path) -> int:
    """The next ticket number: the counter, read and moved on under its flock."""
    fd = os.open(folder / _COUNTER, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        text = os.pread(fd, 64, 0).strip()
        number = int(text) if text.isdigit() else 0
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"%d\n" % (number + 1), 0)
        return number
    finally:
        os.close(fd)
