"""The one child runner: every call ngcc makes into a foreign library — hashing, the
cold call, trials, KAT generation, the guard probe — runs in ``ngcc-driver``
(``csrc/driver/driver.c``), a small C executable, in a process of its own.

The request is the driver's command line and stdin; the answer comes back as frames
on a pipe of its own (:mod:`ngcc.driver.protocol`), read with bounds derived from the
request, every number range-checked. Each run has a deadline; the driver runs in a
new session, and when it has finished, failed or overrun, its whole process group
is killed, so no descendant of a library survives it. The outcome is a value or a
:class:`DriverError` (a :class:`~ngcc.driver.contract.ChildError`) whose ``status`` is

``crash``     the process died of a signal (with the guard page it touched when it
              was one: ``read past the message``), or the library ended it, or
              tried to signal a process outside its group (reason ``signal``)
``timeout``   it did not finish by its deadline
``error``     the driver reported a failure: CryptHash returned nonzero, the library
              cannot be loaded, memory, pinning (``reason`` says which)
``protocol``  the result channel held something this request cannot produce (a
              library that writes to it, forges a frame, claims a loop time longer
              than the parent saw the whole child take)

What this protects against: a library cannot run code in this process (nothing it
writes is unpickled or evaluated), write outside the run directory (the parent
writes every file), make the caller hang (deadlines, group kill), leave
processes behind, or signal any process outside its own group (the driver's
seccomp filter, ``csrc/sandbox.h``). What it cannot: the library shares the trial process, so it can
still lie — forge the whole rest of a conversation and end the process, or claim any
speed within the time the parent observed.

Default deadlines, each overridable by the caller: hashing 60 s plus 1 s per MiB,
the cold call :data:`COLD_TIMEOUT`, the probe :data:`PROBE_TIMEOUT`, a trial
:func:`trial_timeout`, a KAT file :data:`KAT_TIMEOUTS`.
"""

from __future__ import annotations

import functools
import math
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ngcc import _core
from ngcc.base.errors import (
    ChildError,
    HashError,
    InstanceCrashError,
    InstanceProtocolError,
    InstanceTimeoutError,
    LibraryError,
    NgccError,
)
from ngcc.base.untrusted import plain
from ngcc.driver import protocol as wire
from ngcc.driver.protocol import Conversation, ProtocolError
from ngcc.evidence.model import TrialMeasurement
from ngcc.library.registry import DRIVER_PREFIX_ENV, LIB_DIR, Instance

DRIVER = LIB_DIR / "ngcc-driver"

HASH_TIMEOUT = 60.0             # seconds, plus HASH_SECONDS_PER_MIB per MiB hashed
HASH_SECONDS_PER_MIB = 1.0
COLD_TIMEOUT = 120.0            # the first call of an unknown library
PROBE_TIMEOUT = 120.0
#: Seconds allowed per KAT file by default (three 1 GiB messages for KAT_2_33,
#: 10^6 chained calls for KAT_Loop).
KAT_TIMEOUTS = {"2_12": 600.0, "2_23": 600.0, "2_33": 7200.0, "Loop": 7200.0}
#: The most KAT file bytes one run may send (KAT_2_12 of a 8192-bit digest: ~6 MB).
MAX_KAT_BYTES = 64 << 20

#: The bit lengths the guard probe hashes at the start and at the end of a page:
#: every byte length to 130, partial bytes, block edges and one long message.
PROBE_BITS = tuple(sorted({*range(0, 8 * 131, 8), 1, 7, 9, 15, 255, 257, 1001, 2047, 2049,
                           4095, 4097, *(8 * n for n in (255, 256, 257, 1000, 4095, 4096,
                                                         4097, 8192, 65536))}))

#: Seconds a leak run may take beyond its own time limit (start-up, warm-up, the end).
LEAK_TIMEOUT_SLACK = 120.0

_EXIT_USAGE = 120    # the driver's exit status when it has no usable result channel
_EXIT_CHANNEL = 121  # ... when its result channel broke
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


def trial_timeout(t1: float, calls: int, warmup: int, batch_calls: int | None = None) -> float:
    """A trial's deadline: ten times its estimate (warm-up, per-call loop and batch,
    ``t1`` seconds a call) plus 60 s for start-up."""
    batch = calls if batch_calls is None else batch_calls
    return 60.0 + 10.0 * (calls + warmup + batch) * t1


def _checked_timeout(timeout: float) -> float:
    if not timeout > 0:  # also refuses NaN
        raise ValueError("a timeout must be a positive number of seconds, got %r" % timeout)
    return timeout


# ------------------------------------------------------------------ one run

@dataclass
class _Run:
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


class _OutputError(Exception):
    """The parent could not write what the driver sent (a full disk)."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


def _run(conversation: Conversation, options: list[str], timeout: float,
         stdin: bytes | memoryview = b"", hold_stdin: Callable[[], bool] | None = None) -> _Run:
    """Run the driver in ``conversation.mode`` with ``options`` until it exits or the
    deadline passes; then kill its process group and reap it.

    With ``hold_stdin``, stdin is a pipe that stays open after its data while
    ``hold_stdin()`` is true (it is asked after every read of the channel); its end
    then tells the driver to stop (the leak mode)."""
    timeout = _checked_timeout(timeout)
    command = driver_command()
    driver = command[-1]
    read_end, write_end = os.pipe()
    err_read, err_write = os.pipe()
    emulated = ["--emulated"] if len(command) > 1 else []  # behind NGCC_DRIVER_PREFIX
    argv = [*command, conversation.mode, "--result-fd", str(write_end),
            "--parent-pid", str(os.getpid()), *emulated, *options]
    run = _Run(conversation, timeout=timeout)
    started = time.monotonic_ns()
    try:
        piped = len(stdin) > 0 or hold_stdin is not None
        child = subprocess.Popen(argv, stdin=subprocess.PIPE if piped else subprocess.DEVNULL,
                                 stdout=err_write, stderr=err_write, pass_fds=(write_end,),
                                 start_new_session=True)
    except OSError as exc:
        os.close(read_end)
        os.close(err_read)
        raise NgccError("cannot start the trial driver %s: %s" % (driver, exc)) from None
    finally:
        os.close(write_end)
        os.close(err_write)
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
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = run.returncode = os.waitstatus_to_exitcode(status)
        run.wall_ns = time.monotonic_ns() - started
        run.cpu_ns = round((usage.ru_utime + usage.ru_stime) * 1e9)
        os.close(read_end)
        os.close(err_read)
    return run


def _follow(child: subprocess.Popen[bytes], run: _Run, read_end: int, err_read: int,
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
    except _OutputError as exc:
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


# ------------------------------------------------------------- the verdict

def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def _stderr_note(run: _Run) -> str:
    lines = [line for line in run.stderr_tail.strip().splitlines() if line.strip()][-3:]
    return " (stderr: %s)" % plain(" | ".join(lines)) if lines else ""


def _exit_text(run: _Run) -> str:
    if run.stopped and run.returncode == -signal.SIGKILL:
        return "ngcc stopped the process"
    if run.returncode < 0:
        return "the process died of %s" % _signal_name(-run.returncode)
    return "the process exited with status %d" % run.returncode


def _crash(what: str, crash: tuple[int, int, int, int, int], limit: int | None) -> DriverError:
    """The error of a CRASH frame: which guard page the library touched, if any."""
    number, guard, access, code, address = crash
    name = _signal_name(number)
    if guard in wire.GUARDS:
        place = wire.GUARDS[guard]
        verb = wire.ACCESSES.get(access, "wrote" if "digest" in place else "read")
        reason = "%s %s" % (verb, place)
        text = "the library %s (%s in the guard page %s it)" % (
            reason, name, "after" if place.startswith("past") else "before")
        return DriverError("crash", "%s crashed: %s" % (what, text), reason, text)
    if code <= 0:
        text = "the process died of %s (raised by the library)" % name
    else:
        text = "the process died of %s (invalid memory access at %#x)" % (name, address)
        if limit is not None:
            text += "; it ran under a memory limit of %d MiB: did an allocation fail?" % (
                limit >> 20)
    return DriverError("crash", "%s crashed: %s" % (what, text), "", text)


def _judge(run: _Run, what: str, memory_limit: int | None = None) -> None:
    """Raise the DriverError of a run that did not deliver; return if it did."""
    frames = run.conversation.frames
    if run.timed_out:
        raise DriverError("timeout", "%s did not finish within %g s (its process group was "
                          "killed)" % (what, run.timeout))
    if wire.CRASH in frames:
        raise _crash(what, frames[wire.CRASH], memory_limit)
    if run.output_error is not None:
        text = "writing the output failed: %s" % run.output_error
        raise DriverError("error", "%s failed: %s" % (what, text), "output", text)
    if not run.protocol_error and wire.HELLO in frames and frames[wire.HELLO] != run.pid:
        run.protocol_error = "HELLO names pid %d, but the child is %d" % (frames[wire.HELLO],
                                                                          run.pid)
    if run.protocol_error:
        text = "the result channel broke the protocol: %s; %s" % (run.protocol_error,
                                                                   _exit_text(run))
        raise DriverError("protocol", "%s: %s" % (what, text), "", text)
    if run.returncode == -signal.SIGSYS:
        text = ("the library tried to signal another process (ngcc-driver's seccomp "
                "filter ended it with SIGSYS)")
        raise DriverError("crash", "%s crashed: %s" % (what, text), "signal", text)
    if run.returncode < 0:
        text = "%s%s" % (_exit_text(run), _stderr_note(run))
        raise DriverError("crash", "%s crashed: %s" % (what, text), "", text)
    if wire.ERROR in frames:
        reason, value, text = frames[wire.ERROR]
        raise DriverError("error", "%s failed: %s" % (what, text), reason, text, value)
    if not run.conversation.ended:
        raise _ended_early(run, what)
    if run.returncode != 0:
        text = "%s after its END frame" % _exit_text(run)
        raise DriverError("protocol", "%s: %s" % (what, text), "", text)
    if not run.conversation.complete:
        text = "the END frame came without the result of the %s run" % run.conversation.mode
        raise DriverError("protocol", "%s: %s" % (what, text), "", text)


def _ended_early(run: _Run, what: str) -> DriverError:
    """A driver that exited without its END frame: who ended it, and where."""
    if run.returncode == _EXIT_USAGE and wire.HELLO not in run.conversation.frames:
        text = "ngcc-driver refused its command line%s" % _stderr_note(run)
        return DriverError("error", "%s failed: %s" % (what, text), "request", text)
    if run.returncode == _EXIT_CHANNEL:
        text = ("the result channel was closed before the END frame (by the library?)%s"
                % _stderr_note(run))
        return DriverError("protocol", "%s: %s" % (what, text), "", text)
    where = ("inside CryptHash" if wire.LOADED in run.conversation.frames
             else "while it was being loaded")
    text = "the library ended the process (exit status %d) %s%s" % (
        run.returncode, where, _stderr_note(run))
    return DriverError("crash", "%s crashed: %s" % (what, text), "", text)


def _protocol(run: _Run, what: str, defect: str) -> DriverError:
    text = "the result channel broke the protocol: %s" % defect
    return DriverError("protocol", "%s: %s" % (what, text), "", text)


def _library_options(inst: Instance) -> list[str]:
    features = ["--cpu-features", ",".join(inst.cpu_features)] if inst.cpu_features else []
    return ["--library", str(inst.library), "--digest-bits", str(inst.digest_bits), *features]


# ------------------------------------------------------------------- the modes

def hash_in_child(inst: Instance, data: bytes | memoryview, bits: int, *,
                  what: str | None = None, timeout: float | None = None) -> bytes:
    """The digest of the first ``bits`` bits of ``data`` (``ceil(bits/8)`` bytes of it),
    computed by ``inst``'s library in the driver."""
    message = memoryview(data).cast("B")[: (bits + 7) // 8]
    if len(message) * 8 < bits:
        raise ValueError("bits=%d is longer than the data: %d bytes hold at most %d bits"
                         % (bits, len(message), 8 * len(message)))
    what = what or "%s hashing %d bits" % (inst.name, bits)
    timeout = HASH_TIMEOUT + HASH_SECONDS_PER_MIB * len(message) / 2**20 \
        if timeout is None else timeout
    conversation = Conversation("hash", digest_bytes=inst.digest_bits // 8)
    run = _run(conversation, _library_options(inst) + ["--bits", str(bits)], timeout, message)
    _judge(run, what)
    return bytes(conversation.frames[wire.DIGEST])


def cold_call(inst: Instance, message_bytes: int, *, cpu: int | None = None,
              message: bytes | memoryview | None = None, what: str | None = None,
              timeout: float = COLD_TIMEOUT) -> float:
    """Seconds of the first call of ``inst``'s freshly loaded library on the default
    message of ``message_bytes`` bytes (or ``message``), pinned to ``cpu`` if given."""
    what = what or "%s at %d B (calibration)" % (inst.name, message_bytes)
    options = _library_options(inst) + ["--message-bytes", str(message_bytes)]
    options += [] if cpu is None else ["--cpu", str(cpu)]
    options += [] if message is None else ["--message-stdin"]
    conversation = Conversation("cold", digest_bytes=inst.digest_bits // 8)
    run = _run(conversation, options, timeout, b"" if message is None else message)
    _judge(run, what)
    _ticks, ns = conversation.frames[wire.COLD]
    if not 0 < ns <= run.wall_ns:
        raise _protocol(run, what, "a first call of %d ns in a child that ran %d ns"
                        % (ns, run.wall_ns))
    return ns / 1e9


def trial(inst: Instance, message_bytes: int, calls: int, warmup: int, *,
          cpu: int | None = None, batch_calls: int | None = None,
          message: bytes | memoryview | None = None, memory_limit: int | None = None,
          what: str | None = None, timeout: float | None = None,
          t1: float | None = None, counter: str | None = None) -> TrialMeasurement:
    """One trial in a fresh driver: pin to ``cpu`` (if given), load, baseline RSS,
    calibrate, ``warmup`` calls, ``calls`` calls each between two counter readings,
    then ``batch_calls`` (default: ``calls``) calls with no reading between them.

    ``memory_limit`` caps the trial process's address space (bytes, RLIMIT_AS).
    The deadline is ``timeout``, else :func:`trial_timeout` of ``t1``, else 600 s.
    ``counter`` is ``auto``, ``perf``, ``tsc`` or ``clock`` (``csrc/timer.h``; None: the
    driver's default, tsc); a counter that cannot be opened is a ``ChildError``
    (``error``, reason ``counter``) that says why.
    """
    batch = calls if batch_calls is None else batch_calls
    what = what or "%s timing %d calls at %d B" % (inst.name, calls, message_bytes)
    if timeout is None:
        timeout = trial_timeout(t1, calls, warmup, batch) if t1 is not None else 600.0
    options = _library_options(inst) + [
        "--message-bytes", str(message_bytes), "--calls", str(calls), "--warmup", str(warmup),
        "--batch-calls", str(batch)]
    options += [] if cpu is None else ["--cpu", str(cpu)]
    options += [] if message is None else ["--message-stdin"]
    options += [] if counter is None else ["--counter", counter]
    if memory_limit is not None:
        if isinstance(memory_limit, bool) or not isinstance(memory_limit, int) \
                or memory_limit <= 0:
            raise ValueError("memory_limit must be a positive number of bytes, got %r"
                             % (memory_limit,))
        options += ["--memory-limit", str(memory_limit)]
    conversation = Conversation("trial", digest_bytes=inst.digest_bits // 8, calls=calls)
    run = _run(conversation, options, timeout, b"" if message is None else message)
    _judge(run, what, memory_limit)
    facts = conversation.frames[wire.TRIAL]
    cycles = np.frombuffer(conversation.frames[wire.CYCLES], dtype="<u8").astype(np.uint64)
    defect = _implausible(facts, cycles, run, cpu, calls, warmup, batch) \
        or _unasked_counter(wire.COUNTERS[int(facts["counter_id"])][0], counter)
    if defect:
        raise _protocol(run, what, defect)
    return _measurement(facts, cycles, cpu, run.wall_ns)


@functools.cache
def counter_floor() -> tuple[str, int, float]:
    """This host's counter as the parent measures it, once per process: its name, the
    least ticks any timed region can read (a quarter of the minimum of an empty
    region: a margin for the jitter of the reading and for a CPU of another kind than
    the parent's) and its frequency. What the driver claims is
    held against it, since a library can forge the driver's every word."""
    calibration = _core.counter_calibrate()
    return (calibration["name"], max(1, calibration["overhead_min"] // 4),
            calibration["frequency_hz"])


def _below_floor(least: int, floor: int) -> str:
    """Why a per-call reading of ``least`` ticks cannot be (below the counter's
    ``floor``), or ""."""
    return ("a per-call reading of %d ticks, below the %d ticks the counter needs to read "
            "itself" % (least, floor)) if least < floor else ""


#: The fastest a counter other than the host's own may tick, in Hz, and the slowest its
#: claimed rate may be (a trial on ``--counter clock|perf``): the clock counts
#: nanoseconds; a perf counter core cycles, which no core makes 10¹⁰ of a second.
OTHER_COUNTER_RATES = {"clock_monotonic_raw": (0.5e9, 1.05e9),
                       "perf_cycles_rdpmc": (1e7, 1e10), "perf_cycles_read": (1e7, 1e10)}


def _impossible(f: dict[str, int | float], cycles: np.ndarray, run: _Run) -> str:
    """Why the trial's figures cannot have been measured on this host's counter, or "":
    a per-call reading below the counter's minimum overhead, a counter frequency far
    from the parent's own measurement, ticks the parent's wall time cannot hold. A
    trial on another counter (:data:`OTHER_COUNTER_RATES`) is held to that counter's
    rates instead; one on a counter the host has not is impossible, but behind
    ``NGCC_DRIVER_PREFIX`` (an emulated driver's: its machine's counter) unchecked."""
    name, floor, frequency = counter_floor()
    counter = wire.COUNTERS[int(f["counter_id"])][0]
    ticks = f["loop_ticks"] + f["batch_ticks"]
    if counter != name:
        if counter not in OTHER_COUNTER_RATES and len(driver_command()) == 1:
            return "a %s counter, which this host has not" % counter
        slowest, fastest = OTHER_COUNTER_RATES.get(counter, (0.0, math.inf))  # emulated
        least_ns = ticks / fastest * 1e9
        checks = [(slowest <= f["frequency_hz"] <= fastest, "a %s counter of %.4g Hz"
                   % (counter, f["frequency_hz"])),
                  (least_ns <= run.wall_ns * 1.05 + 1e7, "%d ticks of timed loops (%.0f ns "
                   "at least, on %s) in a child that ran %d ns" % (ticks, least_ns, counter,
                                                                   run.wall_ns))]
        return next((defect for ok, defect in checks if not ok), "")
    least = int(cycles.min()) if len(cycles) else floor
    ticks_ns = ticks / frequency * 1e9
    checks = [
        (f["overhead_min_ticks"] >= floor, "a counter overhead of %d ticks, below the %d "
         "ticks it needs" % (f["overhead_min_ticks"], floor)),
        (0.5 <= f["frequency_hz"] / frequency <= 2.0, "a counter of %.4g Hz, where ngcc "
         "measures %.4g Hz" % (f["frequency_hz"], frequency)),
        (ticks_ns <= run.wall_ns * 1.05 + 1e7, "%d ticks of timed loops (%.0f ns at this "
         "host's rate) in a child that ran %d ns" % (ticks, ticks_ns, run.wall_ns)),
    ]
    return _below_floor(least, floor) or next((defect for ok, defect in checks if not ok), "")


def _unasked_counter(claimed: str, asked: str | None) -> str:
    """Why a trial's counter cannot be the one asked for (``--counter``), or "": perf
    only for perf or auto, the clock for clock (or tsc, where the machine has no
    counter of its own)."""
    perf = claimed.startswith("perf_")
    fits = {"perf": perf, "clock": claimed == "clock_monotonic_raw", "auto": True}
    if fits.get(asked or "tsc", not perf):
        return ""
    return "a %s counter, where %s was asked for" % (claimed, asked or "tsc")


def _implausible(f: dict[str, int | float], cycles: np.ndarray, run: _Run, cpu: int | None,
                 calls: int, warmup: int, batch: int) -> str:
    """Why the trial facts cannot be true of this request and this child, or ""."""
    slack_ns = run.wall_ns * 1.01 + 1e6  # CLOCK_MONOTONIC_RAW against our CLOCK_MONOTONIC
    checks = [
        (f["pid"] == run.pid, "the facts name pid %d, not the child's %d" % (f["pid"], run.pid)),
        (f["cpu"] == (-1 if cpu is None else cpu), "cpu %d, not the one asked for" % f["cpu"]),
        ((f["calls"], f["warmup"], f["batch_calls"]) == (calls, warmup, batch),
         "%d calls, %d warm-up, %d batch: not the request" % (
             f["calls"], f["warmup"], f["batch_calls"])),
        (f["counter_id"] in wire.COUNTERS, "unknown counter %d" % f["counter_id"]),
        (f["still_pinned"] in (0, 1), "still_pinned = %d" % f["still_pinned"]),
        (-1 <= f["cpu_at_end"] < 1 << 16, "cpu_at_end = %d" % f["cpu_at_end"]),
        (f["counter_resolution"] <= max(f["overhead_median_ticks"], 1) * 1000,
         "a counter resolution of %d ticks" % f["counter_resolution"]),
        (f["batch_min_calls"] <= f["batch_calls"]
         and f["batch_min_cpu_ns"] <= f["batch_thread_cpu_ns"],
         "a sub-batch of %d calls and %d ns in a batch of %d calls and %d ns" % (
             f["batch_min_calls"], f["batch_min_cpu_ns"], f["batch_calls"],
             f["batch_thread_cpu_ns"])),
        (1e5 <= f["frequency_hz"] <= 1e11, "a counter of %r Hz" % f["frequency_hz"]),
        (f["overhead_min_ticks"] <= f["overhead_median_ticks"] <= 10**7,
         "overhead %d / %d ticks" % (f["overhead_min_ticks"], f["overhead_median_ticks"])),
        (f["core_cycles_per_tick"] == 0 or 0.01 <= f["core_cycles_per_tick"] <= 1000,
         "%r core cycles per tick" % f["core_cycles_per_tick"]),
        (f["loop_ns"] > 0 and int(cycles.sum(dtype=np.uint64)) <= f["loop_ticks"],
         "a per-call loop of %d ticks / %d ns holding calls of %d ticks in all" % (
             f["loop_ticks"], f["loop_ns"], int(cycles.sum(dtype=np.uint64)))),
        (f["loop_ns"] + f["batch_ns"] <= slack_ns,
         "%d ns of timed loops in a child that ran %d ns" % (
             f["loop_ns"] + f["batch_ns"], run.wall_ns)),
        (f["thread_cpu_ns"] <= f["loop_ns"] * 1.01 + 1e6
         and f["batch_thread_cpu_ns"] <= f["batch_ns"] * 1.01 + 1e6,
         "more CPU time than wall time in a loop"),
        (batch == 0 or (f["batch_ticks"] > 0 and f["batch_ns"] > 0), "an empty batch"),
        (max(f["voluntary_switches"], f["involuntary_switches"],
             f["batch_involuntary_switches"]) < 1 << 40, "a context-switch count out of range"),
        (0 < f["baseline_rss_kib"] < 1 << 40 and 0 < f["peak_rss_kib"] < 1 << 40,
         "RSS %d / %d KiB" % (f["baseline_rss_kib"], f["peak_rss_kib"])),
        (all(math.isfinite(f[k]) and 0 <= f[k] < 1e6 for k in ("load_1", "load_5", "load_15")),
         "a load average out of range"),
    ]
    return next((defect for ok, defect in checks if not ok), "") or _impossible(f, cycles, run)


def _measurement(f: dict[str, int | float], cycles: np.ndarray, cpu: int | None,
                 parent_wall_ns: int) -> TrialMeasurement:
    counter, unit = wire.COUNTERS[int(f["counter_id"])]
    pinned = cpu is not None
    return TrialMeasurement(
        pid=int(f["pid"]), cpu=cpu if cpu is not None else int(f["cpu_at_end"]), cycles=cycles,
        loop_ticks=int(f["loop_ticks"]), loop_ns=int(f["loop_ns"]), counter=counter, unit=unit,
        frequency_hz=float(f["frequency_hz"]),
        overhead_min_ticks=int(f["overhead_min_ticks"]),
        overhead_median_ticks=int(f["overhead_median_ticks"]),
        baseline_rss_kib=int(f["baseline_rss_kib"]), peak_rss_kib=int(f["peak_rss_kib"]),
        load_average=(round(float(f["load_1"]), 2), round(float(f["load_5"]), 2),
                      round(float(f["load_15"]), 2)),
        batch_calls=int(f["batch_calls"]) or None,
        batch_ticks=int(f["batch_ticks"]) if f["batch_calls"] else None,
        batch_ns=int(f["batch_ns"]) if f["batch_calls"] else None,
        core_cycles_per_tick=float(f["core_cycles_per_tick"]) or None,
        thread_cpu_ns=int(f["thread_cpu_ns"]),
        voluntary_switches=int(f["voluntary_switches"]),
        involuntary_switches=int(f["involuntary_switches"]),
        affinity_changed=(not f["still_pinned"] or f["cpu_at_end"] != cpu) if pinned else None,
        parent_wall_ns=parent_wall_ns,
        batch_thread_cpu_ns=int(f["batch_thread_cpu_ns"]) if f["batch_calls"] else None,
        batch_involuntary_switches=(int(f["batch_involuntary_switches"]) if f["batch_calls"]
                                    else None),
        counter_resolution_ticks=int(f["counter_resolution"]) or None,
        batch_min_cpu_ns=int(f["batch_min_cpu_ns"]) if f["batch_min_calls"] else None,
        batch_min_calls=int(f["batch_min_calls"]) or None)


@dataclass(frozen=True)
class KatOutcome:
    """A KAT file the driver generated and the parent wrote: its size and the
    generation time the driver measured."""

    path: Path
    size: int
    seconds: float


def generate_kat(inst: Instance, tag: str, path: Path, *, timeout: float | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 blank_digests: bool = False) -> KatOutcome:
    """Generate the KAT file ``tag`` (``2_12``, ``2_23``, ``2_33``, ``Loop``) of ``inst``
    in the driver (messages and digest in guarded buffers) and write it to ``path``:
    to ``<path>.part`` (created once the library is loaded), renamed when complete,
    removed on any failure. ``progress(done, total)`` follows the driver's reports.
    """
    what = "KAT_%s of %s" % (tag, inst.name)
    part = path.with_name(path.name + ".part")
    options = _library_options(inst) + ["--kat", tag, "--instance", inst.name]
    options += ["--blank-digests"] if blank_digests else []
    out: list[BinaryIO] = []

    def open_part() -> None:
        try:
            out.append(open(part, "wb"))  # noqa: SIM115 (closed below, on every path)
        except OSError as exc:
            raise _OutputError(OSError(exc.errno, "cannot create %s: %s" % (
                part, exc.strerror or exc))) from None

    def write(data: memoryview) -> None:
        try:
            out[0].write(data)
        except OSError as exc:
            raise _OutputError(OSError(exc.errno, "writing %s failed: %s" % (
                part, exc.strerror or exc))) from None

    conversation = Conversation("kat", digest_bytes=inst.digest_bits // 8,
                                max_data_bytes=MAX_KAT_BYTES, on_loaded=open_part,
                                on_data=write, on_progress=progress)
    try:
        try:
            run = _run(conversation, options,
                       KAT_TIMEOUTS.get(tag, 7200.0) if timeout is None else timeout)
        finally:
            closing = out[0].close if out else (lambda: None)
        _judge(run, what)
        size, ns = conversation.frames[wire.KAT_DONE]
        if size != conversation.data_bytes:
            raise _protocol(run, what, "KAT_DONE claims %d bytes, %d came"
                            % (size, conversation.data_bytes))
        try:
            closing()
        except OSError as exc:
            text = "writing %s failed: %s" % (part, exc.strerror or exc)
            raise DriverError("error", "%s failed: %s" % (what, text), "output", text) from None
        os.replace(part, path)
    except BaseException:
        for handle in out:
            with suppress(OSError):
                handle.close()
        with suppress(OSError):
            part.unlink()
        raise
    return KatOutcome(path, size, ns / 1e9)


def probe(inst: Instance, *, bits: tuple[int, ...] = PROBE_BITS,
          timeout: float = PROBE_TIMEOUT) -> int:
    """Hash each length of ``bits`` at the start of a page that follows a guard page
    and at the end of one before a guard page; returns how many lengths passed.

    Raises DriverError: ``crash`` with the guard touched (``read before the message``),
    or ``error`` with reason ``placement`` when the two digests differ.
    """
    conversation = Conversation("probe", digest_bytes=inst.digest_bits // 8)
    run = _run(conversation, _library_options(inst) + [
        "--lengths", ",".join(str(b) for b in bits)], timeout)
    _judge(run, "the guard-page probe of %s" % inst.name)
    return int(conversation.frames[wire.PROBE])


@dataclass(frozen=True)
class LeakRun:
    """The facts of one leak run (its LEAK_DONE frame), checked against the request
    and against the batches that came; the batches themselves went to ``on_batch``."""

    pid: int
    cpu: int | None                 # the CPU asked for (None: not pinned)
    stop_reason: str                # "calls", "seconds" or "parent"
    calls: int                      # timed calls, all classes
    class_calls: tuple[int, int]    # ... with the fixed message, with random ones
    warmup: int
    seed: int
    batch_calls: int
    counter: str
    unit: str
    frequency_hz: float
    overhead_min_ticks: int
    overhead_median_ticks: int
    loop_ns: int                    # the driver's clock, first timed call to last
    voluntary_switches: int
    involuntary_switches: int
    peak_rss_kib: int
    affinity_changed: bool | None   # None when not pinned
    parent_wall_ns: int


def leak(inst: Instance, message_bytes: int, calls: int, batch_calls: int, seed: int,
         on_batch: Callable[[np.ndarray, np.ndarray], bool], *, warmup: int = 0,
         seconds: float | None = None, cpu: int | None = None,
         fixed: bytes | memoryview | None = None, control: bool = False,
         what: str | None = None, timeout: float | None = None) -> LeakRun:
    """The measurements of a fixed-vs-random (dudect) test in a fresh driver.

    Up to ``calls`` timed calls of ``message_bytes``-byte messages, each the fixed
    message (class 0: ``fixed``, default all zero) or a fresh random one (class 1),
    the class drawn per call by a PRNG seeded with ``seed``; ``warmup`` untimed calls
    first. The ticks and classes arrive in batches of at most ``batch_calls`` calls:
    ``on_batch(ticks uint64, classes uint8)`` is called with each and returns True to
    stop the run early (a batch or two already sent may still follow). ``control``
    gives class 0 fresh random messages too (an A/A test: no function can make the
    classes differ, so a flag then blames the harness or the host). ``seconds``
    bounds the run's calls by time; the deadline is ``timeout``, else ``seconds``
    (default 600) plus LEAK_TIMEOUT_SLACK.
    """
    what = what or "%s leak test at %d B" % (inst.name, message_bytes)
    if timeout is None:
        timeout = (600.0 if seconds is None else seconds) + LEAK_TIMEOUT_SLACK
    options = _library_options(inst) + [
        "--message-bytes", str(message_bytes), "--calls", str(calls), "--warmup", str(warmup),
        "--batch-calls", str(batch_calls), "--seed", str(seed)]
    options += [] if seconds is None else ["--time-limit-ms", str(max(1, round(seconds * 1e3)))]
    options += [] if cpu is None else ["--cpu", str(cpu)]
    options += [] if fixed is None else ["--message-stdin"]
    options += ["--control"] if control else []
    stop = [False]
    ticks_total = [0]
    ticks_least = [2**64]

    def batch(ticks: memoryview, classes: memoryview) -> None:
        values = np.frombuffer(ticks, dtype="<u8").astype(np.uint64)
        ticks_total[0] += int(values.sum(dtype=np.uint64))
        ticks_least[0] = min(ticks_least[0], int(values.min()))
        if on_batch(values, np.frombuffer(classes, dtype=np.uint8).copy()):
            stop[0] = True  # batches already on their way still count

    conversation = Conversation("leak", digest_bytes=inst.digest_bits // 8, calls=calls,
                                batch_calls=batch_calls, on_batch=batch)
    run = _run(conversation, options, timeout, b"" if fixed is None else fixed,
               hold_stdin=lambda: not stop[0])
    _judge(run, what)
    facts = conversation.frames[wire.LEAK_DONE]
    defect = _implausible_leak(facts, conversation, run, cpu, calls, warmup, batch_calls, seed,
                               message_bytes, ticks_total[0])
    name, floor, _ = counter_floor()
    if not defect and wire.COUNTERS[int(facts["counter_id"])][0] == name:
        defect = _below_floor(ticks_least[0], floor)
    if defect:
        raise _protocol(run, what, defect)
    counter, unit = wire.COUNTERS[int(facts["counter_id"])]
    return LeakRun(
        pid=run.pid, cpu=cpu, stop_reason=wire.LEAK_STOPS[int(facts["stop_reason"])],
        calls=int(facts["calls"]),
        class_calls=(int(facts["class0_calls"]), int(facts["class1_calls"])),
        warmup=int(facts["warmup"]), seed=seed, batch_calls=batch_calls, counter=counter,
        unit=unit, frequency_hz=float(facts["frequency_hz"]),
        overhead_min_ticks=int(facts["overhead_min_ticks"]),
        overhead_median_ticks=int(facts["overhead_median_ticks"]),
        loop_ns=int(facts["loop_ns"]), voluntary_switches=int(facts["voluntary_switches"]),
        involuntary_switches=int(facts["involuntary_switches"]),
        peak_rss_kib=int(facts["peak_rss_kib"]),
        affinity_changed=(not facts["still_pinned"] or facts["cpu_at_end"] != cpu)
        if cpu is not None else None,
        parent_wall_ns=run.wall_ns)


def _implausible_leak(f: dict[str, int | float], conversation: Conversation, run: _Run,
                      cpu: int | None, calls: int, warmup: int, batch_calls: int, seed: int,
                      message_bytes: int, ticks_total: int) -> str:
    """Why the LEAK_DONE facts cannot be true of this request and these batches, or ""."""
    frequency = float(f["frequency_hz"])
    sane_frequency = 1e5 <= frequency <= 1e11
    checks = [
        (f["pid"] == run.pid, "the facts name pid %d, not the child's %d" % (f["pid"], run.pid)),
        (f["cpu"] == (-1 if cpu is None else cpu), "cpu %d, not the one asked for" % f["cpu"]),
        ((f["seed"], f["message_bytes"], f["batch_calls"]) == (seed, message_bytes, batch_calls),
         "seed, length or batch size not the request's"),
        (f["calls"] == conversation.leak_calls and f["calls"] <= calls,
         "%d calls claimed, %d sent in batches" % (f["calls"], conversation.leak_calls)),
        ((f["class0_calls"], f["class1_calls"]) == (
            conversation.leak_calls - conversation.leak_class1_calls,
            conversation.leak_class1_calls), "class counts other than the batches'"),
        (f["warmup"] <= warmup, "%d warm-up calls, more than asked" % f["warmup"]),
        (f["stop_reason"] in wire.LEAK_STOPS, "unknown stop reason %d" % f["stop_reason"]),
        (f["stop_reason"] != 1 or f["calls"] == calls, "stopped at its calls before making them"),
        (f["counter_id"] in wire.COUNTERS, "unknown counter %d" % f["counter_id"]),
        (f["still_pinned"] in (0, 1), "still_pinned = %d" % f["still_pinned"]),
        (-1 <= f["cpu_at_end"] < 1 << 16, "cpu_at_end = %d" % f["cpu_at_end"]),
        (sane_frequency, "a counter of %r Hz" % frequency),
        (f["overhead_min_ticks"] <= f["overhead_median_ticks"] <= 10**7,
         "overhead %d / %d ticks" % (f["overhead_min_ticks"], f["overhead_median_ticks"])),
        (f["loop_ns"] <= run.wall_ns * 1.01 + 1e6,
         "%d ns of timed batches in a child that ran %d ns" % (f["loop_ns"], run.wall_ns)),
        (not sane_frequency or ticks_total / frequency * 1e9 <= f["loop_ns"] * 1.01 + 1e6,
         "calls of %d ticks in all inside %d ns of batches" % (ticks_total, f["loop_ns"])),
        (max(f["voluntary_switches"], f["involuntary_switches"]) < 1 << 40,
         "a context-switch count out of range"),
        (0 < f["peak_rss_kib"] < 1 << 40, "peak RSS %d KiB" % f["peak_rss_kib"]),
    ]
    return next((defect for ok, defect in checks if not ok), "")


# ------------------------------------------------------------- the runner

class DriverRunner:
    """The :class:`~ngcc.driver.contract.TrialRunner` of campaigns: every cold call and trial
    in a fresh ``ngcc-driver`` pinned to the trial's CPU.

    Args:
        memory_limit: cap on each trial process's address space in bytes (RLIMIT_AS),
            or None for no cap.
        counter: the counter of every trial (``auto``, ``perf``, ``tsc``, ``clock``;
            None: the driver's default, tsc).
    """

    def __init__(self, memory_limit: int | None = None, counter: str | None = None):
        self.memory_limit = memory_limit
        self.counter = counter

    def cold_call(self, instance: Instance, message_bytes: int, cpu: int,
                  timeout: float) -> float:
        """Seconds of the first call of a freshly loaded library (the plan's t1)."""
        return cold_call(instance, message_bytes, cpu=cpu, timeout=timeout)

    def trial(self, instance: Instance, message_bytes: int, calls: int, warmup: int,
              cpu: int, index: int, timeout: float) -> TrialMeasurement:
        """One trial: the per-call loop, then an uninstrumented batch of as many calls."""
        return trial(instance, message_bytes, calls, warmup, cpu=cpu,
                     memory_limit=self.memory_limit, timeout=timeout, counter=self.counter,
                     what="%s at %d B (trial %d)" % (instance.name, message_bytes, index))


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
