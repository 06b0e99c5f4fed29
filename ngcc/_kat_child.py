"""Generating KAT files in a child process, so a crashing or hanging library cannot
take the caller down.

Parent side: :func:`generate_files` starts a child (see ``_CHILD_BOOTSTRAP``), hands
it the job as JSON on stdin, and reads one JSON event per line from a pipe (a file
descriptor of its own, so the library's stdout cannot mix into it):

    {"event": "start", "tag": "2_12"}
    {"event": "progress", "tag": "2_12", "done": 2048, "total": 4097}
    {"event": "done", "tag": "2_12", "seconds": 0.84}
    {"event": "error", "tag": "2_33", "seconds": 0.01, "type": "KatMemoryError", "message": "..."}

A child that dies or overruns its time costs only the file it was writing; a new
child carries on with the files after it. Each file is written to ``<name>.part``
and renamed when complete, so no half-written KAT file is ever left behind.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ngcc import _core
from ngcc._errors import NgccError
from ngcc._pychild import python_child_command

#: How often the child reports progress, in seconds.
PROGRESS_INTERVAL = 0.2

#: The child imports only ``ngcc._core`` and this module: it puts a bare ``ngcc``
#: package in ``sys.modules`` first, because the real ``ngcc/__init__.py`` pulls in the
#: whole analysis stack (scipy: most of a second per child) that generation never uses.
_CHILD_BOOTSTRAP = (
    "import sys, types; package = types.ModuleType('ngcc'); "
    "package.__path__ = [sys.argv[1]]; sys.modules['ngcc'] = package; "
    "from ngcc._kat_child import _child_main; _child_main(int(sys.argv[2]))")

#: A callback ``(tag, done, total)`` the parent calls on every event of a file;
#: ``total`` is 0 until the child has reported it.
ProgressCallback = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Outcome:
    """What became of one KAT file: ``status`` is ``done``, ``error``, ``crash`` or
    ``timeout``; ``error_type``/``message`` say why when it is not ``done``."""

    tag: str
    status: str
    seconds: float | None = None
    error_type: str = ""
    message: str = ""


def part_path(path: Path) -> Path:
    """Where a file is written until it is complete."""
    return path.with_name(path.name + ".part")


# ------------------------------------------------------------------------ parent side

def generate_files(library: Path, instance: str, digest_bits: int,
                   jobs: Sequence[tuple[str, Path]], timeout: float | None = None,
                   progress: ProgressCallback | None = None) -> dict[str, Outcome]:
    """Generate the KAT files ``jobs`` (tag, path) of one instance library in child
    processes; return each tag's :class:`Outcome`.

    ``timeout`` is the time allowed for each file, counted from the end of the
    previous one (or the start of its child process).
    """
    outcomes: dict[str, Outcome] = {}
    while len(outcomes) < len(jobs):
        pending = [(tag, path) for tag, path in jobs if tag not in outcomes]
        outcomes.update(_run_child(library, instance, digest_bits, pending, timeout,
                                   progress or (lambda tag, done, total: None)))
    return outcomes


def _run_child(library: Path, instance: str, digest_bits: int,
               jobs: Sequence[tuple[str, Path]], timeout: float | None,
               progress: ProgressCallback) -> dict[str, Outcome]:
    """Run one child over ``jobs``; stop at the first file it does not finish."""
    job = {"library": str(library), "instance": instance, "digest_bits": digest_bits,
           "files": [[tag, str(path)] for tag, path in jobs], "parent_pid": os.getpid()}
    read_end, write_end = os.pipe()
    with tempfile.TemporaryFile() as stderr:
        try:
            child = subprocess.Popen(
                python_child_command(_CHILD_BOOTSTRAP, str(Path(__file__).resolve().parent),
                                     str(write_end)),
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr,
                pass_fds=(write_end,))
        finally:
            os.close(write_end)
        try:
            _send_job(child, job)
            outcomes, current, timed_out = _follow_events(read_end, child, jobs, timeout,
                                                          progress)
        finally:
            os.close(read_end)
            if child.poll() is None:
                child.kill()
            child.wait()
        if current is not None:
            tag, path = current
            part_path(path).unlink(missing_ok=True)
            outcomes[tag] = (Outcome(tag, "timeout", timeout, message="no result after %g s; "
                                     "the child process was killed" % timeout)
                             if timed_out else _crash(tag, child.returncode, stderr))
    return outcomes


def _send_job(child: subprocess.Popen[bytes], job: dict[str, Any]) -> None:
    """Write the job to the child's stdin; a child that died at once is seen later."""
    assert child.stdin is not None
    try:
        child.stdin.write(json.dumps(job).encode())
        child.stdin.close()
    except BrokenPipeError:
        pass


def _follow_events(read_end: int, child: subprocess.Popen[bytes],
                   jobs: Sequence[tuple[str, Path]], timeout: float | None,
                   progress: ProgressCallback
                   ) -> tuple[dict[str, Outcome], tuple[str, Path] | None, bool]:
    """Read the child's events until it closes the pipe or a file overruns ``timeout``.

    Returns the finished outcomes, the job that was cut short (or None) and whether
    it was cut short by the timeout.
    """
    outcomes: dict[str, Outcome] = {}
    paths = dict(jobs)
    deadline = None if timeout is None else time.monotonic() + timeout
    buffered = b""
    while True:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([read_end], [], [], wait)
        if not ready:
            return outcomes, _unfinished(jobs, outcomes), True
        chunk = os.read(read_end, 65536)
        if not chunk:
            return outcomes, _unfinished(jobs, outcomes), False
        buffered += chunk
        *lines, buffered = buffered.split(b"\n")
        for line in lines:
            event = json.loads(line)
            tag = event["tag"]
            if event["event"] == "progress":
                progress(tag, event["done"], event["total"])
            elif event["event"] == "start":
                progress(tag, 0, 0)
            else:
                outcomes[tag] = Outcome(tag, event["event"], event.get("seconds"),
                                        event.get("type", ""), event.get("message", ""))
                if deadline is not None:
                    deadline = time.monotonic() + timeout
        if set(outcomes) == set(paths):
            return outcomes, None, False


def _unfinished(jobs: Sequence[tuple[str, Path]],
                outcomes: dict[str, Outcome]) -> tuple[str, Path] | None:
    return next(((tag, path) for tag, path in jobs if tag not in outcomes), None)


def _crash(tag: str, returncode: int, stderr: IO[bytes]) -> Outcome:
    """The outcome of a file whose child process died before finishing it."""
    stderr.seek(0)
    tail = stderr.read().decode(errors="replace").strip().splitlines()[-3:]
    if returncode < 0:
        try:
            how = "died of %s" % signal.Signals(-returncode).name
        except ValueError:
            how = "died of signal %d" % -returncode
    else:
        how = "exited with status %d" % returncode
    message = "the child process %s while generating this file" % how
    if tail:
        message += " (stderr: %s)" % " | ".join(tail)
    return Outcome(tag, "crash", None, message=message)


# ------------------------------------------------------------------------- child side

def _die_with_parent(parent_pid: int) -> None:
    """Have the kernel kill this child when its parent dies (Linux), so a hanging library
    does not spin on after the caller was killed; exit if the parent is already gone."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1  # <linux/prctl.h>
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)


def _child_main(fd: int) -> None:
    job = json.loads(sys.stdin.read())
    _die_with_parent(job["parent_pid"])
    with os.fdopen(fd, "w", buffering=1) as events:
        def send(**event: object) -> None:
            events.write(json.dumps(event) + "\n")

        try:
            library = _core.Library(job["library"])
        except (NgccError, OSError) as exc:
            for tag, _ in job["files"]:
                send(event="error", tag=tag, type=type(exc).__name__, message=str(exc))
            return
        for tag, path in job["files"]:
            send(event="start", tag=tag)
            started = time.perf_counter()
            try:
                _generate_one(library, job, tag, Path(path), send)
            except (NgccError, OSError, ValueError, MemoryError) as exc:
                part_path(Path(path)).unlink(missing_ok=True)
                send(event="error", tag=tag, seconds=time.perf_counter() - started,
                     type=type(exc).__name__, message=str(exc))
            else:
                send(event="done", tag=tag, seconds=time.perf_counter() - started)


def _generate_one(library: _core.Library, job: dict[str, Any], tag: str, path: Path,
                  send: Callable[..., None]) -> None:
    """Write one file to its ``.part`` name, reporting progress; rename it when complete."""
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL or done == total:
            last[0] = now
            send(event="progress", tag=tag, done=done, total=total)

    _core.kat_generate(library, job["instance"], job["digest_bits"], tag,
                       str(part_path(path)), progress=report)
    os.replace(part_path(path), path)
