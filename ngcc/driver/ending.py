"""Telling how a driver run ended: :func:`judge` raises the
:class:`~ngcc.driver.process.DriverError` of a run that did not deliver (a crash, with
the guard page the library touched; a timeout; an error the driver reported; a broken
protocol), and :func:`broken_protocol` is the error of a mode's own check."""

from __future__ import annotations

import signal

from ngcc.base import sandbox
from ngcc.base.untrusted import plain
from ngcc.driver import protocol as wire
from ngcc.driver.process import DriverError, DriverRun
from ngcc.library.registry import sanitized_build

_EXIT_USAGE = 120    # the driver's exit status when it has no usable result channel
_EXIT_CHANNEL = 121  # ... when its result channel broke


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def _stderr_note(run: DriverRun) -> str:
    lines = [line for line in run.stderr_tail.strip().splitlines() if line.strip()][-3:]
    return " (stderr: %s)" % plain(" | ".join(lines)) if lines else ""


def _exit_text(run: DriverRun) -> str:
    if run.stopped and run.returncode == -signal.SIGKILL:
        return "ngcc stopped the process"
    if run.returncode < 0:
        return "the process died of %s" % _signal_name(-run.returncode)
    return "the process exited with status %d" % run.returncode


def _crash(what: str, crash: tuple[int, int, int, int, int], limit: int | None,
           option: str = "memory_limit= / --memory-limit") -> DriverError:
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
            text += "; it ran under a memory limit of %d MiB (%s): did an allocation " \
                "fail?" % (limit >> 20, option)
    return DriverError("crash", "%s crashed: %s" % (what, text), "", text)


def judge(run: DriverRun, what: str, memory_limit: int | None = None) -> None:
    """Raise the DriverError of a run that did not deliver; return if it did."""
    frames = run.conversation.frames
    if run.timed_out:
        raise DriverError("timeout", "%s did not finish within %g s (its process group was "
                          "killed)" % (what, run.timeout))
    if wire.CRASH in frames:
        raise _crash(what, frames[wire.CRASH], *_memory_cap(run, memory_limit))
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
        text = ("the library tried to signal another process or to start one with its "
                "signals blocked (ngcc-driver's seccomp filter ended it with SIGSYS)")
        raise DriverError("crash", "%s crashed: %s" % (what, text), "signal", text)
    if run.returncode < 0:
        text = "%s%s" % (_exit_text(run), _stderr_note(run))
        raise DriverError("crash", "%s crashed: %s" % (what, text), "", text)
    if wire.ERROR in frames:
        reason, value, text = frames[wire.ERROR]
        if reason == "memory":
            text += memory_note(run, memory_limit)
        raise DriverError("error", "%s failed: %s" % (what, text), reason, text, value)
    if not run.conversation.ended:
        raise _ended_early(run, what)
    if run.returncode != 0:
        text = "%s after its END frame" % _exit_text(run)
        raise DriverError("protocol", "%s: %s" % (what, text), "", text)
    if not run.conversation.complete:
        marks = run.conversation.frames.get(wire.LEAK_MARK, 0)
        text = "the END frame came without the result of the %s run%s" % (
            run.conversation.mode, "" if run.conversation.on_leak_mark is None
            or marks == wire.LEAK_MARKS else " (%d of the %d LEAK_MARK frames of its "
            "sub-batches timed from outside)" % (marks, wire.LEAK_MARKS))
        raise DriverError("protocol", "%s: %s" % (what, text), "", text)


#: The address space the driver gives a run under ``--isolate`` unless told a smaller
#: one (``ISOLATED_ADDRESS_SPACE`` in ``csrc/driver/driver.c``; none under ASan).
ISOLATED_ADDRESS_SPACE = 4 << 30


def _memory_cap(run: DriverRun, memory_limit: int | None) -> tuple[int | None, str]:
    """The run's address-space cap in bytes (None: none) and what set it: the caller's
    ``memory_limit``, or the sandbox's default (none in an AddressSanitizer build)."""
    isolated = ISOLATED_ADDRESS_SPACE if run.isolation == sandbox.NAMESPACES \
        and not sanitized_build() else None
    limits = [limit for limit in (memory_limit, isolated) if limit]
    if not limits:
        return None, ""
    limit = min(limits)
    return limit, ("memory_limit= / --memory-limit" if limit == memory_limit else
                   "the sandbox's default; memory_limit= / --memory-limit sets a smaller one")


def memory_note(run: DriverRun, memory_limit: int | None) -> str:
    """What capped the run's memory, and how to lower it; "" when nothing did."""
    limit, option = _memory_cap(run, memory_limit)
    if limit is None:
        return ""
    return " (the run's address space was capped at %d MiB: %s)" % (limit >> 20, option)


def _ended_early(run: DriverRun, what: str) -> DriverError:
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


def broken_protocol(run: DriverRun, what: str, defect: str) -> DriverError:
    """The error of a run whose result channel held ``defect`` (a mode's own check)."""
    text = "the result channel broke the protocol: %s" % defect
    return DriverError("protocol", "%s: %s" % (what, text), "", text)
