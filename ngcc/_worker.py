"""One trial (or one calibration call) in a fresh child process pinned to one CPU.

The child side (:func:`cold_call`, :func:`trial`) pins itself with
``os.sched_setaffinity``, loads the instance library, and times in-process with the
loop of ``ngcc.time_calls`` (``time_calls_in_process``); it runs under
``python -m ngcc._isolate``, so a library that segfaults or hangs takes down only
the child. The parent side
(:func:`run_cold_call`, :func:`run_trial`) turns every way a child can fail into a
:class:`ChildError` with a status (``crash``, ``timeout``, ``error``) and a message
naming instance, length, phase and trial, so the campaign records it and goes on.
"""

from __future__ import annotations

import os
import resource
from typing import Any

import numpy as np

from ngcc._errors import InstanceCrashError, InstanceTimeoutError, NgccError
from ngcc._isolate import run_isolated
from ngcc._measure import ChildError, TrialMeasurement
from ngcc._registry import Instance

CALIBRATION_TIMEOUT = 120.0   # seconds for one cold call of an unknown library


# ---------------------------------------------------------------- child side

def _pin(cpu: int) -> None:
    os.sched_setaffinity(0, {cpu})
    if os.sched_getaffinity(0) != {cpu}:
        raise OSError("could not pin the trial process to CPU %d" % cpu)


def _statm_rss_kib() -> int:
    """Resident set size now, from ``/proc/self/statm`` (pages → KiB)."""
    with open("/proc/self/statm") as handle:
        resident_pages = int(handle.read().split()[1])
    return resident_pages * resource.getpagesize() // 1024


def _vmhwm_kib() -> int:
    """Peak resident set size of this process so far (``VmHWM`` in ``/proc/self/status``)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise OSError("no VmHWM in /proc/self/status")


def cold_call(instance: Instance, message_bytes: int, cpu: int) -> float:
    """Child: the seconds of the first call of a freshly loaded instance (the plan's t1)."""
    _pin(cpu)
    from ngcc._timing import time_calls_in_process
    result = time_calls_in_process(instance, message_bytes, 1, warmup=0)
    return float(result.cycles[0]) / result.counter.frequency_hz


def trial(instance: Instance, message_bytes: int, calls: int, warmup: int,
          cpu: int) -> dict[str, Any]:
    """Child: one trial — pin, load, read baseline RSS, warm up and time, read peak RSS."""
    _pin(cpu)
    from ngcc._hashing import library
    from ngcc._timing import counter_info, time_calls_in_process
    counter = counter_info(fresh=True)          # calibrated on the pinned CPU
    library(str(instance.library))              # loaded before the baseline reading
    baseline = _statm_rss_kib()
    result = time_calls_in_process(instance, message_bytes, calls, warmup=warmup)
    peak = _vmhwm_kib()
    return {
        "pid": os.getpid(),
        "cpu": min(os.sched_getaffinity(0)),   # pinned: the one CPU it may run on
        "cycles": np.array(result.cycles, dtype=np.uint64),
        "total_cycles": int(result.total_cycles),
        "total_seconds": float(result.total_seconds),
        "frequency_hz": float(counter.frequency_hz),
        "counter": str(counter.name),
        "overhead_cycles": int(counter.overhead_min),
        "baseline_rss_kib": baseline,
        "peak_rss_kib": peak,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


# ---------------------------------------------------------------- parent side

def _isolated(target: str, what: str, timeout: float, **kwargs: Any) -> Any:
    try:
        return run_isolated(target, what, timeout=timeout, **kwargs)
    except InstanceTimeoutError as exc:
        raise ChildError("timeout", str(exc)) from None
    except InstanceCrashError as exc:
        raise ChildError("crash", str(exc)) from None
    except (NgccError, OSError, ValueError, RuntimeError, MemoryError) as exc:
        # re-raised from the child: e.g. a counter that did not advance (RuntimeError)
        raise ChildError("error", "%s failed: %s" % (what, exc)) from None


def run_cold_call(instance: Instance, message_bytes: int, cpu: int,
                  timeout: float = CALIBRATION_TIMEOUT) -> float:
    """Parent: t1 of ``instance`` at ``message_bytes`` from a fresh pinned child.

    Raises:
        ChildError: the child crashed, hung past ``timeout`` or reported an error.
    """
    what = "%s at %d B (calibration)" % (instance.name, message_bytes)
    return float(_isolated("ngcc._worker:cold_call", what, timeout, instance=instance,
                           message_bytes=message_bytes, cpu=cpu))


def trial_timeout(t1: float, calls: int, warmup: int) -> float:
    """The time a trial child is allowed: ten times its estimate plus start-up slack."""
    return 60.0 + 10.0 * (calls + warmup) * t1


def run_trial(instance: Instance, message_bytes: int, calls: int, warmup: int, cpu: int,
              index: int, timeout: float) -> dict[str, Any]:
    """Parent: one trial in a fresh pinned child; returns the child's measurements.

    Raises:
        ChildError: the child crashed, hung past ``timeout`` or reported an error.
    """
    what = "%s at %d B (trial %d)" % (instance.name, message_bytes, index)
    return dict(_isolated("ngcc._worker:trial", what, timeout, instance=instance,
                          message_bytes=message_bytes, calls=calls, warmup=warmup, cpu=cpu))


class PythonChildRunner:
    """The :class:`~ngcc._measure.TrialRunner` of trials in ``python -m ngcc._isolate``."""

    def cold_call(self, instance: Instance, message_bytes: int, cpu: int,
                  timeout: float) -> float:
        """Seconds of the first call of a freshly loaded library (the plan's t1)."""
        return run_cold_call(instance, message_bytes, cpu, timeout)

    def trial(self, instance: Instance, message_bytes: int, calls: int, warmup: int,
              cpu: int, index: int, timeout: float) -> TrialMeasurement:
        """One trial in a fresh pinned child."""
        facts = run_trial(instance, message_bytes, calls, warmup, cpu, index, timeout)
        return TrialMeasurement(
            pid=facts["pid"], cpu=facts["cpu"], cycles=facts["cycles"],
            loop_ticks=facts["total_cycles"], loop_ns=round(facts["total_seconds"] * 1e9),
            counter=facts["counter"],
            unit="ns" if facts["counter"] == "clock_monotonic_raw" else "tsc-ticks",
            frequency_hz=facts["frequency_hz"], overhead_min_ticks=facts["overhead_cycles"],
            overhead_median_ticks=facts["overhead_cycles"],
            baseline_rss_kib=facts["baseline_rss_kib"], peak_rss_kib=facts["peak_rss_kib"],
            load_average=tuple(facts["load_average"]))
