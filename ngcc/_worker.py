"""The campaign's cold calls and trials, in the trial driver (``ngcc._child``).

:func:`run_cold_call` and :func:`run_trial` keep the call shapes ``_campaign`` uses
until it takes a :class:`~ngcc._measure.TrialRunner` (``DriverRunner``); every way a
child can fail is a :class:`ChildError` with a status (``crash``, ``timeout``,
``error``, ``protocol``) and a message naming instance, length, phase and trial, so
the campaign records it and goes on.
"""

from __future__ import annotations

from typing import Any

from ngcc._child import COLD_TIMEOUT, DriverRunner, trial_timeout
from ngcc._measure import ChildError
from ngcc._registry import Instance

__all__ = ["CALIBRATION_TIMEOUT", "ChildError", "DriverRunner", "PythonChildRunner",
           "run_cold_call", "run_trial", "trial_timeout"]

CALIBRATION_TIMEOUT = COLD_TIMEOUT   # seconds for one cold call of an unknown library

#: The name this runner had while trials ran in a Python child; kept for callers.
PythonChildRunner = DriverRunner


def run_cold_call(instance: Instance, message_bytes: int, cpu: int,
                  timeout: float = CALIBRATION_TIMEOUT) -> float:
    """t1 of ``instance`` at ``message_bytes`` from a fresh pinned driver.

    Raises:
        ChildError: the child crashed, hung past ``timeout`` or reported an error.
    """
    return DriverRunner().cold_call(instance, message_bytes, cpu, timeout)


def run_trial(instance: Instance, message_bytes: int, calls: int, warmup: int, cpu: int,
              index: int, timeout: float) -> dict[str, Any]:
    """One trial in a fresh pinned driver, as the dict ``_campaign`` reads today; the
    whole :class:`~ngcc._measure.TrialMeasurement` is under ``"measurement"``.

    Raises:
        ChildError: the child crashed, hung past ``timeout`` or reported an error.
    """
    measured = DriverRunner().trial(instance, message_bytes, calls, warmup, cpu, index,
                                    timeout)
    return {
        "pid": measured.pid, "cpu": measured.cpu, "cycles": measured.cycles,
        "total_cycles": measured.loop_ticks, "total_seconds": measured.loop_ns / 1e9,
        "frequency_hz": measured.frequency_hz, "counter": measured.counter,
        "overhead_cycles": measured.overhead_min_ticks,
        "baseline_rss_kib": measured.baseline_rss_kib, "peak_rss_kib": measured.peak_rss_kib,
        "load_average": list(measured.load_average), "measurement": measured,
    }
