"""Timing an instance per call with the cycle counter: ``counter_info`` and ``time_calls``.

The loop itself is C (``csrc/common/bench.c``): warm-up calls, then one serialised
counter reading before and after every timed call, plus one counter reading
and one ``CLOCK_MONOTONIC_RAW`` reading around the whole loop. The counter's
own overhead is measured and recorded here, never subtracted.
"""

from __future__ import annotations

import math
import operator
import os
from dataclasses import dataclass, field

import numpy as np

from ngcc import _core
from ngcc.base.errors import HashError
from ngcc.driver import child as _child
from ngcc.driver import process as _process
from ngcc.driver.hashing import byte_view, library
from ngcc.driver.limits import MAX_MESSAGE_BYTES as MAX_MESSAGE_BYTES  # its home: limits
from ngcc.library import registry as _registry
from ngcc.library.registry import Instance

#: The most timed calls (and warm-up calls) one ``time_calls`` accepts.
MAX_CALLS: int = _core.MAX_CALLS


@dataclass(frozen=True)
class CounterInfo:
    """The cycle counter of this machine, as calibrated in this process.

    Attributes:
        name: ``"rdtsc"`` (x86-64), ``"cntvct_el0"`` (AArch64: the generic timer,
            not core cycles) or ``"clock_monotonic_raw"`` (elsewhere), as the C side
            (``csrc/timer.c``) names it.
        frequency_hz: ticks per second, measured against ``CLOCK_MONOTONIC_RAW``
            over 50 ms.
        overhead_min: ticks of an empty timed region, minimum of 2001 regions.
        overhead_median: the median of the same regions.
        resolution: the smallest step the counter moves in (ticks): the gcd of the
            differences of 4001 successive reads.
        unit: what a tick is, from the C side: ``"tsc-ticks"``, ``"timer-ticks"``
            (the generic timer) or ``"ns"``; ``""`` when not known.
        nominal_hz: the rate the architecture states, ``cntfrq_el0`` on AArch64;
            0.0 where it states none (the TSC) or it was not read (the driver's).
    """

    name: str
    frequency_hz: float
    overhead_min: int
    overhead_median: int
    resolution: int = 0
    unit: str = ""
    nominal_hz: float = 0.0

    def seconds(self, ticks: float) -> float:
        """Convert counter ticks to seconds with the measured frequency."""
        return ticks / self.frequency_hz


_calibration: CounterInfo | None = None


def counter_info(*, fresh: bool = False) -> CounterInfo:
    """Return the counter's name, measured frequency and overhead.

    The first call calibrates (about 50 ms, sleeping); later calls return the
    same figures, since they describe this process's counter. Pass
    ``fresh=True`` to measure again, e.g. after pinning the process to a CPU.
    """
    global _calibration
    if fresh or _calibration is None:
        _calibration = CounterInfo(**_core.counter_calibrate())
    return _calibration


def default_message(message_bytes: int) -> bytes:
    """The message ``time_calls`` hashes unless given one: byte i = (i*131 + message_bytes) mod 256.

    This is the independent NGCC harness's convention, so figures are comparable.
    """
    return _child.default_message(
        _checked_count("message_bytes", message_bytes, 0, MAX_MESSAGE_BYTES))


@dataclass(frozen=True, eq=False)
class TimingResult:
    """The counter ticks of ``calls`` timed calls of one instance on one message.

    Attributes:
        instance: the instance timed.
        message_bytes: the message length in bytes.
        calls: the number of timed calls (``len(cycles)``).
        warmup: the untimed calls made before them.
        cycles: read-only numpy uint64 array, the counter ticks of each call
            (counter overhead included: it is recorded in ``counter``, not subtracted).
        total_cycles: counter ticks from before the first timed call to after the
            last, one reading each side (includes the per-call readings).
            ``loop_mean_cycles`` is this over ``calls``.
        total_seconds: the same span measured with ``CLOCK_MONOTONIC_RAW``.
        counter: the counter's name, frequency and overhead in this process.
    """

    instance: Instance
    message_bytes: int
    calls: int
    warmup: int
    cycles: np.ndarray = field(repr=False)
    total_cycles: int
    total_seconds: float
    counter: CounterInfo

    @property
    def overhead(self) -> int:
        """The counter's overhead in ticks (minimum of an empty timed region)."""
        return self.counter.overhead_min

    @property
    def mean_cycles(self) -> float:
        """Mean ticks per call over the per-call readings."""
        return float(self.cycles.mean())

    @property
    def loop_mean_cycles(self) -> float:
        """Ticks per call of the whole loop: ``total_cycles / calls``. It includes the
        per-call readings between the calls, so it is no uninstrumented batch (a
        campaign trial times one of those: ``TrialMeasurement.batch_ticks``)."""
        return self.total_cycles / self.calls

    @property
    def batch_mean_cycles(self) -> float:
        """The old name of :attr:`loop_mean_cycles`."""
        return self.loop_mean_cycles

    @property
    def median_cycles(self) -> float:
        """Median ticks per call."""
        return float(np.median(self.cycles))

    @property
    def min_cycles(self) -> int:
        """Fewest ticks of any call."""
        return int(self.cycles.min())

    @property
    def cycles_per_byte(self) -> float:
        """Per-call mean ticks divided by the message length (NaN for an empty message)."""
        return self.mean_cycles / self.message_bytes if self.message_bytes else math.nan

    @property
    def seconds_per_call(self) -> float:
        """Wall time per call from the batch: ``total_seconds / calls``."""
        return self.total_seconds / self.calls

    @property
    def loop_frequency_hz(self) -> float:
        """Counter ticks per second during the loop; far from ``counter.frequency_hz``
        means the counter rate was disturbed while timing."""
        return self.total_cycles / self.total_seconds if self.total_seconds else math.nan


#: Seconds a foreign library's timing loop may take in its child process.
FOREIGN_TIMEOUT = 600.0


def time_calls(
    instance: str | os.PathLike[str] | Instance,
    message_bytes: int,
    calls: int,
    *,
    warmup: int = 3,
    message: object = None,
) -> TimingResult:
    """Time ``calls`` calls of an instance on one message of ``message_bytes`` bytes.

    The loop runs in C with the GIL released: ``warmup`` untimed calls, then each
    timed call between two serialised counter readings.

    Args:
        instance: an instance name, an :class:`Instance`, or a library path (a
            library from ``ngcc build`` is timed in the trial driver, a process of its
            own, so a crash or a hang past ``FOREIGN_TIMEOUT`` raises instead of
            killing the caller; its ``counter`` is then the driver's calibration).
        message_bytes: the message length in bytes, 0 to ``MAX_MESSAGE_BYTES``.
        calls: timed calls, 1 to ``MAX_CALLS``.
        warmup: untimed calls before them, 0 to ``MAX_CALLS``.
        message: a contiguous buffer of exactly ``message_bytes`` bytes to hash
            instead of :func:`default_message`.

    Raises:
        UnknownInstanceError: no such instance.
        TypeError: a count that is not an int, or a message that is not a buffer.
        ValueError: a count out of range, or a message of another length.
        HashError: ``CryptHash`` returned nonzero; the message names the instance
            and the call.
        LibraryError: a library that cannot be loaded or lacks ``CryptHash``.
        InstanceCrashError, InstanceTimeoutError: a foreign library crashed or hung.
    """
    inst = _registry.instance(instance)
    message_bytes = _checked_count("message_bytes", message_bytes, 0, MAX_MESSAGE_BYTES)
    calls = _checked_count("calls", calls, 1, MAX_CALLS)
    warmup = _checked_count("warmup", warmup, 0, MAX_CALLS)
    if not inst.builtin:
        return _time_calls_in_driver(inst, message_bytes, calls, warmup, message)
    return time_calls_in_process(inst, message_bytes, calls, warmup=warmup, message=message)


def _time_calls_in_driver(inst: Instance, message_bytes: int, calls: int, warmup: int,
                          message: object) -> TimingResult:
    """Foreign code: the same loop in the trial driver, so a crash cannot kill the caller
    (no uninstrumented batch: ``time_calls`` reports the per-call loop only)."""
    data = None if message is None else _checked_message(message, message_bytes)
    try:
        measured = _child.trial(inst, message_bytes, calls, warmup, batch_calls=0,
                                message=data, timeout=FOREIGN_TIMEOUT,
                                what="%s timing %d calls at %d B" % (inst, calls, message_bytes))
    except _process.DriverError as exc:
        raise _process.api_error(inst, exc) from None
    cycles = measured.cycles
    cycles.flags.writeable = False
    counter = CounterInfo(measured.counter, measured.frequency_hz, measured.overhead_min_ticks,
                          measured.overhead_median_ticks,
                          resolution=measured.counter_resolution_ticks or 0, unit=measured.unit)
    return TimingResult(instance=inst, message_bytes=message_bytes, calls=calls, warmup=warmup,
                        cycles=cycles, total_cycles=measured.loop_ticks,
                        total_seconds=measured.loop_ns / 1e9, counter=counter)


def time_calls_in_process(instance: Instance, message_bytes: int, calls: int, *,
                          warmup: int, message: object = None) -> TimingResult:
    """:func:`time_calls` of a built-in instance in this very process."""
    inst = instance
    data = default_message(message_bytes) if message is None else _checked_message(
        message, message_bytes)
    counter = counter_info()  # calibrate before, never during, the loop
    try:
        cycles, total_ticks, total_ns = library(str(inst.library)).time_calls(
            inst.digest_bits, data, calls, warmup)
    except HashError as exc:
        raise HashError("%s: %s" % (inst.name, exc)) from None
    cycles.flags.writeable = False
    return TimingResult(instance=inst, message_bytes=message_bytes, calls=calls, warmup=warmup,
                        cycles=cycles, total_cycles=total_ticks, total_seconds=total_ns / 1e9,
                        counter=counter)


def _checked_count(what: str, value: object, low: int, high: int) -> int:
    """Return ``value`` as an int in [low, high], or raise TypeError/ValueError naming it."""
    if isinstance(value, bool):
        raise TypeError("%s must be an int, not bool" % what)
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError("%s must be an int, not %s" % (what, type(value).__name__)) from None
    if not low <= number <= high:
        raise ValueError("%s must be between %d and %d, got %d" % (what, low, high, number))
    return number


def _checked_message(message: object, message_bytes: int) -> memoryview:
    """The caller's message as a contiguous byte view of exactly ``message_bytes`` bytes."""
    view = byte_view(message, "message")
    if view.nbytes != message_bytes:
        raise ValueError("message holds %d bytes but message_bytes is %d"
                         % (view.nbytes, message_bytes))
    return view.cast("B")
