"""What one trial measures, and the interface of whatever runs trials.

A campaign never starts processes itself: it asks a :class:`TrialRunner` for the
cold-call time of a job (the plan's t1) and for trials, and gets back
:class:`TrialMeasurement` objects. The real runner executes each trial in a fresh
process pinned to one CPU; tests hand the campaign a fake runner, so plan, gate,
resume and ``--target-ci`` logic run in milliseconds.

A measurement holds facts only (no statistics); a fact a runner cannot observe is
``None`` (for example the context switches of a trial measured by an older runner).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:  # at run time this module loads nothing of ngcc (the evidence model
    from ngcc._registry import Instance  # imports it, and nothing compiled)

#: The units a counter's ticks can be in.
UNITS = ("tsc-ticks", "timer-ticks", "ns")


class ChildError(Exception):
    """A child process that did not deliver: ``status`` is ``crash``, ``timeout``,
    ``error`` or ``protocol``; the message names instance, length, phase and trial."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class TrialMeasurement:
    """The facts of one trial, as the trial process reported them.

    Attributes:
        pid: the trial process.
        cpu: the CPU the process was pinned to.
        cycles: counter ticks of every timed call (uint64, one per call), each
            call bracketed by two serialised counter reads (overhead included).
        loop_ticks, loop_ns: one counter reading and one CLOCK_MONOTONIC_RAW
            reading around the whole per-call loop.
        counter: ``rdtsc``, ``cntvct_el0`` or ``clock_monotonic_raw``.
        unit: the unit of ``cycles``: one of :data:`UNITS`.
        frequency_hz: counter ticks per second, calibrated in the trial process.
        overhead_min_ticks, overhead_median_ticks: an empty timed region.
        baseline_rss_kib: resident set after loading the library, before any call.
        peak_rss_kib: peak resident set after the timed loops.
        load_average: the 1, 5 and 15 minute load averages at the end.
        batch_calls, batch_ticks, batch_ns: the same calls timed again in a loop
            without per-call reads (one reading each around it).
        batch_thread_cpu_ns, batch_involuntary_switches: the thread's CPU time and
            involuntary context switches over that batch.
        core_cycles_per_tick: core clock cycles per counter tick, estimated in the
            trial from a dependency chain of known latency (None where unknown).
        thread_cpu_ns: CPU time of the thread over the per-call loop.
        voluntary_switches, involuntary_switches: context switches of the thread
            over the per-call loop (``getrusage(RUSAGE_THREAD)``).
        affinity_changed: the process's CPU affinity was no longer ``{cpu}`` after
            the loops (the library changed it).
        parent_wall_ns: the parent's own clock around the whole child, for the
            cross-check of the claimed loop time.
    """

    pid: int
    cpu: int
    cycles: np.ndarray
    loop_ticks: int
    loop_ns: int
    counter: str
    unit: str
    frequency_hz: float
    overhead_min_ticks: int
    overhead_median_ticks: int
    baseline_rss_kib: int
    peak_rss_kib: int
    load_average: tuple[float, float, float]
    batch_calls: int | None = None
    batch_ticks: int | None = None
    batch_ns: int | None = None
    core_cycles_per_tick: float | None = None
    thread_cpu_ns: int | None = None
    voluntary_switches: int | None = None
    involuntary_switches: int | None = None
    affinity_changed: bool | None = None
    parent_wall_ns: int | None = None
    batch_thread_cpu_ns: int | None = None
    batch_involuntary_switches: int | None = None


class TrialRunner(Protocol):
    """Runs the trials of a campaign; every failure is a :class:`ChildError`."""

    def cold_call(self, instance: Instance, message_bytes: int, cpu: int,
                  timeout: float) -> float:
        """Seconds of the first call of a freshly loaded library (the plan's t1)."""
        ...

    def trial(self, instance: Instance, message_bytes: int, calls: int, warmup: int,
              cpu: int, index: int, timeout: float) -> TrialMeasurement:
        """One trial: ``warmup`` untimed calls, then ``calls`` timed ones."""
        ...
