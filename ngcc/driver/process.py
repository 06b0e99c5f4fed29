"""Running ``ngcc-driver`` (``csrc/driver/``), the one process foreign code
runs in: every mode of :mod:`ngcc.driver.child` goes through :func:`run_driver`, then
:func:`ngcc.driver.ending.judge` tells how it ended; :func:`api_error` is the
documented exception of a failure.

The request goes to the driver as words in a descriptor of its own
(``--request-fd``), never on its command line, so the library cannot tell the mode
from ``/proc/self/cmdline``; the message comes on stdin; the answer comes back as
frames on a pipe of its own (:mod:`ngcc.driver.protocol`), read with bounds derived
from the request, every number range-checked. Unless the sandbox is off
(:mod:`ngcc.base.sandbox`: ``--no-sandbox``, ``NGCC_NO_SANDBOX=1``) or the driver runs
behind an emulator, it runs with ``--isolate`` (new user, PID, network, IPC and mount
namespaces; ``csrc/isolate/isolate.h``); where the kernel refuses them the run raises
:class:`~ngcc.base.errors.SandboxUnavailableError` with the remedy. Each run has a
deadline; the driver runs in a new session, and when it has finished, failed or
overrun, its whole process group is killed, so no descendant of a library survives
it. The outcome is a value or a :class:`DriverError` (a
:class:`~ngcc.driver.contract.ChildError`) whose ``status`` is

``crash``     the process died of a signal (with the guard page it touched when it
              was one: ``read past the message``), or the library ended it, or
              tried to signal a process outside its group (reason ``signal``)
``timeout``   it did not finish by its deadline
``error``     the driver reported a failure: CryptHash returned nonzero, the library
              cannot be loaded, memory, pinning (``reason`` says which)
``protocol``  the result channel held something this request cannot produce (a
              library that writes to it, forges a frame, claims a loop time longer
              than the parent saw the whole child take, or work far below the CPU
              time the kernel accounted to it, or times calls whose digest is not
              its message's)

What this protects against: a library cannot run code in this process (nothing it
writes is unpickled or evaluated), write outside the run directory (the parent
writes every file), make the caller hang (deadlines, group kill), leave
processes behind, or signal any process outside its own group (the driver's
seccomp filter, ``csrc/driver/sandbox.h``), or read ngcc's environment (the driver
starts with :func:`driver_environment`); under the isolation it sees no other
process, no network, no file but the system's and its own, read-only, and
at most 4 GiB of address space. What it cannot stop: the library shares the trial
process, so it can still lie — forge the whole rest of a conversation and end the
process, or claim any speed within the time the parent observed and the CPU time
the kernel accounted (:mod:`ngcc.driver.facts` holds its claims against both).
"""

from __future__ import annotations

import math
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from ngcc.base import sandbox
from ngcc.base.errors import (
    ChildError,
    HashError,
    InstanceCrashError,
    InstanceProtocolError,
    InstanceTimeoutError,
    LibraryError,
    NgccError,
    SandboxUnavailableError,
)
from ngcc.base.untrusted import plain
from ngcc.driver.protocol import Conversation, ProtocolError
from ngcc.library.registry import DRIVER_PREFIX_ENV, LIB_DIR, Instance, sanitized_build

DRIVER = LIB_DIR / "ngcc-driver"

#: The most bytes of a request's words (``MAX_REQUEST_BYTES`` in ``csrc/driver/request.h``).
MAX_REQUEST_BYTES = 32768
_STDERR_TAIL = 4096


class DriverError(ChildError):
    """A :class:`ChildError` with the driver's own words.

    Attributes:
        status: ``crash``, ``timeout``, ``error`` or ``protocol``.
        reason: for ``error``, what failed: ``load``, ``hash``, ``memory``, ``cpu``,
            ``forked``, ``placement``, ``counter``, ``kat``, ``system``, ``request``,
            ``feature``, or ``output`` (the parent could not write the KAT file);
            for ``crash``, the guard page touched (``past the message`` …) or "".
        detail: the driver's text alone, without the job's name (``feature``: the
            CPU lacks an instruction-set extension the library was built for).
        value: a number that goes with it (CryptHash's return, the bit length).
    """

    def __init__(self, status: str, message: str, reason: str = "", detail: str = "",
                 value: int = 0):
        super().__init__(status, message)
        self.reason = reason
        self.detail = detail or message
        self.value = value


#: Environment variables that run another build of the driver (CI: the AArch64 one
#: under qemu-user, ``.ci/aarch64``): ``NGCC_DRIVER`` names the executable, and
#: ``NGCC_DRIVER_PREFIX`` a command put before it, split like a shell's words
#: (``qemu-aarch64 -L /usr/aarch64-linux-gnu``). Both are the user's own settings,
#: like PATH; nothing a library or a record says can set them. Behind a prefix the
#: driver is told ``--emulated``: where the emulator refuses seccomp filters (qemu-user
#: does), it runs without one, so the library could signal other processes: an
#: emulator is for checking a cross-build, not for untrusted code.
DRIVER_ENV, PREFIX_ENV = "NGCC_DRIVER", DRIVER_PREFIX_ENV


def driver_path() -> Path:
    """The ``ngcc-driver`` to run: the installed one, or the one ``NGCC_DRIVER`` names;
    NgccError if it is not built."""
    driver = Path(os.environ.get(DRIVER_ENV) or DRIVER)
    if not os.access(driver, os.X_OK):
        raise NgccError("the ngcc trial driver %s is not built (or not executable): reinstall "
                        "with `pip install .` or run `python setup.py build_ext --inplace`"
                        % driver)
    return driver


def driver_command() -> list[str]:
    """The command that starts the driver: ``NGCC_DRIVER_PREFIX``'s words (an emulator,
    none by default), then :func:`driver_path`."""
    try:
        prefix = shlex.split(os.environ.get(PREFIX_ENV, ""))
    except ValueError as exc:
        raise NgccError("%s is not a command line: %s" % (PREFIX_ENV, exc)) from None
    return [*prefix, str(driver_path())]


#: What an AddressSanitizer build of the driver reads of its environment: its runtime's
#: options (``.ci/sanitize``: a fault in a guard page must reach the driver's handler).
SANITIZER_OPTIONS = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")


def driver_environment() -> dict[str, str]:
    """The driver's environment: the fixed minimal one of :mod:`ngcc.base.sandbox` (a
    library sees nothing else of ngcc's, in any mode), with the sanitizers' options
    in an AddressSanitizer build."""
    kept = SANITIZER_OPTIONS if sanitized_build() else ()
    return sandbox.minimal_environment(**{name: os.environ[name] for name in kept
                                          if name in os.environ})


def isolation_now() -> str:
    """What a driver started now runs in: ``namespaces`` (``--isolate``) unless the
    sandbox is off or the driver runs behind ``NGCC_DRIVER_PREFIX`` (an emulator), then
    ``filter`` (the seccomp filter alone, where the emulator allows it)."""
    try:
        emulated = bool(shlex.split(os.environ.get(PREFIX_ENV, "")))
    except ValueError:
        emulated = True  # driver_command() refuses it before any run
    return sandbox.FILTER_ONLY if emulated else sandbox.isolation_name()


def _checked_timeout(timeout: float) -> float:
    if not timeout > 0:  # also refuses NaN
        raise ValueError("a timeout must be a positive number of seconds, got %r" % timeout)
    return timeout


# ------------------------------------------------------------------ one run

@dataclass
class DriverRun:
    """How one driver process ended."""

    conversation: Conversation
    returncode: int = 0
    timed_out: bool = False
    stopped: bool = False          # ngcc killed it before it exited (a defect, a deadline)
    protocol_error: str = ""
    output_error: OSError | None = None
    stderr_tail: str = ""
    wall_ns: int = 0
    cpu_ns: int = 0
    pid: int = 0
    timeout: float = 0.0
    isolation: str = sandbox.NAMESPACES  # or sandbox.FILTER_ONLY: the filter alone


class OutputError(Exception):
    """The parent could not write what the driver sent (a full disk)."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


def run_driver(conversation: Conversation, options: list[str], timeout: float,
               stdin: bytes | memoryview = b"",
               hold_stdin: Callable[[], bool] | None = None, tool: Sequence[str] = (),
               pass_fds: Sequence[int] = ()) -> DriverRun:
    """Run the driver in ``conversation.mode`` with ``options`` until it exits or the
    deadline passes; then kill its process group and reap it.

    ``tool`` is a command the driver runs under, isolation and all (valgrind for the
    ``ct`` mode; an emulator is ``NGCC_DRIVER_PREFIX``'s), and ``pass_fds`` descriptors
    it inherits (memcheck's XML output).

    With ``hold_stdin``, stdin is a pipe that stays open after its data while
    ``hold_stdin()`` is true (it is asked after every read of the channel); its end
    then tells the driver to stop (the leak mode).

    Raises:
        SandboxUnavailableError: the kernel refused the isolation (the driver's own
            line and :data:`ngcc.base.sandbox.REMEDY`).
    """
    timeout = _checked_timeout(timeout)
    command = driver_command()
    driver = command[-1]
    emulated = len(command) > 1  # behind NGCC_DRIVER_PREFIX: no namespaces (see DRIVER_ENV)
    command = [*tool, *command]
    isolation = isolation_now()
    read_end, write_end = os.pipe()
    err_read, err_write = os.pipe()
    words = [conversation.mode, "--result-fd", str(write_end), "--parent-pid", str(os.getpid()),
             *(["--emulated"] if emulated else []),
             *(["--isolate"] if isolation == sandbox.NAMESPACES else []), *options]
    request = _request_fd(words)
    run = DriverRun(conversation, timeout=timeout, isolation=isolation)
    started = time.monotonic_ns()
    try:
        piped = len(stdin) > 0 or hold_stdin is not None
        child = subprocess.Popen([*command, "--request-fd", str(request)],
                                 stdin=subprocess.PIPE if piped else subprocess.DEVNULL,
                                 stdout=err_write, stderr=err_write,
                                 pass_fds=(write_end, request, *pass_fds),
                                 start_new_session=True, env=driver_environment())
    except OSError as exc:
        os.close(read_end)
        os.close(err_read)
        raise NgccError("cannot start the trial driver %s: %s" % (driver, exc)) from None
    finally:
        os.close(write_end)
        os.close(err_write)
        os.close(request)
    run.pid = child.pid
    try:
        _follow(child, run, read_end, err_read, memoryview(stdin).cast("B"),
                started + int(timeout * 1e9) if math.isfinite(timeout) else None, hold_stdin)
    finally:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)  # the leader is not reaped yet: its group
        if child.stdin is not None:
            with suppress(OSError):
                child.stdin.close()
        # wait4: the kernel's CPU time of the driver and every process it reaped (under
        # --isolate the outer process reaps init, which reaps the worker)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = run.returncode = os.waitstatus_to_exitcode(status)
        run.wall_ns = time.monotonic_ns() - started
        run.cpu_ns = round((usage.ru_utime + usage.ru_stime) * 1e9)
        os.close(read_end)
        os.close(err_read)
    _refused_isolation(run)
    return run


def _request_fd(words: list[str]) -> int:
    """A descriptor holding the request's words, each ended by a NUL byte, read from its
    start (an anonymous file: writing it never blocks, nothing of it is on disk)."""
    data = b"".join(word.encode("utf-8", "surrogateescape") + b"\0" for word in words)
    for word in words:
        if "\0" in word:
            raise ValueError("a driver request word holds a NUL byte: %r" % word[:100])
    if len(data) > MAX_REQUEST_BYTES:
        raise ValueError("the driver request is %d bytes, more than its %d (a library path "
                         "or a list of lengths too long?)" % (len(data), MAX_REQUEST_BYTES))
    fd = os.memfd_create("ngcc-driver-request", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def _refused_isolation(run: DriverRun) -> None:
    """Raise SandboxUnavailableError if the driver could not set up --isolate: exit 122
    before its first frame (a library cannot cause that: it is not loaded yet)."""
    if run.isolation != sandbox.NAMESPACES or run.returncode != sandbox.EXIT_UNAVAILABLE \
            or run.conversation.frames:
        return
    lines = [line for line in run.stderr_tail.strip().splitlines() if line.strip()]
    said = plain(lines[-1]) if lines else "ngcc-driver: isolation unavailable"
    raise SandboxUnavailableError("%s: %s" % (said, sandbox.REMEDY))


def _follow(child: subprocess.Popen[bytes], run: DriverRun, read_end: int, err_read: int,
            stdin: memoryview, deadline_ns: int | None,
            hold_stdin: Callable[[], bool] | None = None) -> None:
    """Feed the channel to the conversation, keep the stderr tail and write stdin, until
    the driver exits (a pidfd, or polling where there is none) or the deadline."""
    tail = bytearray()

    def keep_tail(chunk: bytes) -> None:
        tail.extend(chunk)
        del tail[:-_STDERR_TAIL]

    readers: dict[int, Callable[[bytes], None]] = {read_end: run.conversation.feed,
                                                   err_read: keep_tail}
    selector = selectors.DefaultSelector()
    for fd in readers:
        selector.register(fd, selectors.EVENT_READ, "read")
    pidfd = _pidfd(child.pid)
    if pidfd is not None:
        selector.register(pidfd, selectors.EVENT_READ, "exit")
    if child.stdin is not None:
        os.set_blocking(child.stdin.fileno(), False)
        if len(stdin):
            selector.register(child.stdin.fileno(), selectors.EVENT_WRITE, "write")
    try:
        exited = False
        while not exited:
            wait = None
            if deadline_ns is not None:
                wait = (deadline_ns - time.monotonic_ns()) / 1e9
                if wait <= 0:
                    run.timed_out = run.stopped = True
                    return
            if pidfd is None:
                wait = 0.005 if wait is None else min(wait, 0.005)
            for key, _ in selector.select(wait):
                if key.data == "exit":
                    exited = True
                elif key.data == "write":
                    stdin = _write_some(key.fd, stdin)
                    if not len(stdin):
                        selector.unregister(key.fd)
                        if hold_stdin is None:
                            child.stdin.close()  # type: ignore[union-attr]
                elif not _read_some(key.fd, readers[key.fd]):
                    selector.unregister(key.fd)
                    del readers[key.fd]
            pipe = child.stdin
            if hold_stdin is not None and pipe is not None and not pipe.closed \
                    and not len(stdin) and not hold_stdin():
                pipe.close()  # the driver's cue to stop
            if pidfd is None:
                exited = _has_exited(child.pid)
        for fd, reader in readers.items():  # what the driver wrote before it exited
            os.set_blocking(fd, False)
            with suppress(BlockingIOError):
                while _read_some(fd, reader):
                    pass
        run.conversation.finish()
    except ProtocolError as exc:
        run.protocol_error, run.stopped = str(exc), True
    except OutputError as exc:
        run.output_error, run.stopped = exc.error, True
    finally:
        selector.close()
        if pidfd is not None:
            os.close(pidfd)
        run.stderr_tail = tail.decode("utf-8", errors="replace")


def _read_some(fd: int, reader: Callable[[bytes], None]) -> bool:
    """Hand what can be read now to ``reader``; False at end of file."""
    chunk = os.read(fd, 1 << 20)
    if chunk:
        reader(chunk)
    return bool(chunk)


def _write_some(fd: int, data: memoryview) -> memoryview:
    try:
        written = os.write(fd, data[:1 << 20])
    except BlockingIOError:
        return data
    except BrokenPipeError:  # the driver stopped reading: its frames say why
        return data[len(data):]
    return data[written:]


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when pid exits (Linux >= 5.3), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _has_exited(pid: int) -> bool:
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


# ------------------------------------------------------------ the API's errors

def api_error(inst: Instance, error: DriverError) -> NgccError:
    """The documented exception of ``ngcc.hash`` / ``ngcc.time_calls`` for a driver
    failure: HashError (with the instance's name first), LibraryError,
    InstanceCrashError (and its InstanceProtocolError), InstanceTimeoutError, else
    NgccError with the job's words."""
    if error.status == "timeout":
        return InstanceTimeoutError(error.message)
    if error.status == "protocol":
        return InstanceProtocolError(error.message)
    if error.status == "crash" or error.reason in ("forked", "placement"):
        return InstanceCrashError(error.message)
    if error.reason == "hash":
        return HashError("%s: %s" % (inst.name, error.detail))
    if error.reason == "load":
        return LibraryError(error.detail)
    return NgccError(error.message)
