"""Run a call into foreign code in a child process, so a crash cannot take us down.

Built-in instances are our own code and run in-process; a library built from
someone's submission may segfault, abort or hang. :func:`run_isolated` runs
``module:function(**kwargs)`` in a fresh interpreter (``_child_main`` below),
passing arguments and result by pickle over the pipes, and turns a death by
signal into :class:`InstanceCrashError` and a hang into :class:`InstanceTimeoutError`.
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import subprocess
import sys
from typing import Any

from ngcc._errors import InstanceCrashError, InstanceTimeoutError, NgccError
from ngcc._pychild import python_child_command

DEFAULT_TIMEOUT = 60.0
_CHILD_CODE = "from ngcc._isolate import _child_main; _child_main()"


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return "signal %d" % -returncode


def run_isolated(target: str, what: str, timeout: float | None = None, **kwargs: Any) -> Any:
    """Call ``target`` (``"module:function"``) with ``kwargs`` in a child process.

    ``what`` names the work for error messages ("WChain-V1-512 hashing 24 bits");
    ``timeout`` defaults to ``DEFAULT_TIMEOUT`` seconds. Exceptions raised by the
    function are re-raised here unchanged.
    """
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    payload = pickle.dumps((target, kwargs, os.getpid()))
    try:
        child = subprocess.run(python_child_command(_CHILD_CODE), input=payload,
                               capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise InstanceTimeoutError("%s did not finish within %.0f s (the child process was "
                                   "killed)" % (what, timeout)) from None
    if child.returncode < 0:
        raise InstanceCrashError("%s crashed: the child process died of %s"
                                 % (what, _signal_name(child.returncode)))
    try:
        ok, value = pickle.loads(child.stdout)
    except Exception:
        tail = child.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise InstanceCrashError("%s: the child process exited with status %d: %s"
                                 % (what, child.returncode, " | ".join(tail))) from None
    if not ok:
        raise value
    return value


def _transportable(exc: Exception) -> Exception:
    """``exc`` if it survives a pickle round trip, else an NgccError with its text
    (exceptions whose constructor takes several arguments cannot be rebuilt)."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return NgccError("%s: %s" % (type(exc).__name__, exc))
    return exc


def _child_main() -> None:
    # The result travels on the original stdout; foreign code that prints (even with a
    # raw write(1, ...)) goes to stderr instead and cannot corrupt it.
    result_pipe = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    target, kwargs, parent_pid = pickle.loads(sys.stdin.buffer.read())
    # A hanging library must not spin on (pinned to the measuring CPU) once the caller
    # is gone, e.g. a campaign stopped with kill -9.
    from ngcc._kat_child import _die_with_parent
    _die_with_parent(parent_pid)
    module_name, function_name = target.split(":")
    function = getattr(importlib.import_module(module_name), function_name)
    try:
        result = (True, function(**kwargs))
    except Exception as exc:  # handed to the parent, which re-raises it
        result = (False, _transportable(exc))
    result_pipe.write(pickle.dumps(result))
    result_pipe.flush()


if __name__ == "__main__":
    _child_main()
