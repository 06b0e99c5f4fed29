"""``ngcc leak``: a timing-leakage test of one instance by the dudect method
(Reparaz, Balasch, Verbauwhede, "Dude, is my code constant time?", 2017).

Two classes of messages of one length: class 0 is one fixed message (all zero unless
given), class 1 a fresh random message per call; the class of each call is drawn at
random. ``ngcc-driver`` makes the calls (``leak`` mode, :func:`ngcc.driver.leak_mode.leak`) and
streams each call's ticks and class here in batches. If the running time does not
depend on the message, the two classes have one distribution of ticks, whatever the
host does meanwhile: load, interrupts and frequency changes hit both classes alike,
because the class is drawn independently of them.

The statistic is Welch's t between the classes, for several tests, updated as the
batches arrive (:mod:`ngcc.stats.leak_statistics`: first and second order, on every call and on
the fastest calls under each of its crops); the verdict is read from the largest
``|t|`` of the tests that count. So the run may stop early
(:data:`ngcc.stats.leak_statistics.T_LEAK` is out of reach of chance however often one looks): it
stops once a test that counts is above 10 at two looks in a row (a look after every
batch), the second one confirming the first against a passing disturbance. The test
detects; it never proves absence (see the README). Its evidence files are
:mod:`ngcc.evidence.leak_evidence`'s (:meth:`LeakResult.evidence`).
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ngcc.base.progress import Task
from ngcc.driver import leak_mode as _leak_mode
from ngcc.driver import process as _process
from ngcc.evidence import leak_evidence as _evidence
from ngcc.evidence.leak_evidence import NO_LEAK
from ngcc.library.registry import Instance, instance, run_labels
from ngcc.measure import locks as _locks

# A leak test's defaults and bounds live in measure.plan, which the command line's
# options read without loading this module (nor numpy).
from ngcc.measure.plan import LEAK_CALLS as DEFAULT_CALLS
from ngcc.measure.plan import LEAK_LENGTH as DEFAULT_LENGTH
from ngcc.measure.plan import LEAK_MAX_CALLS as MAX_CALLS
from ngcc.measure.plan import LEAK_MAX_LENGTH as MAX_LENGTH
from ngcc.measure.plan import LEAK_SECONDS as DEFAULT_SECONDS
from ngcc.measure.waiting import CpuWait
from ngcc.stats import leak_statistics as _stats

MIN_CALLS = 2 * _stats.MIN_SAMPLES
WARMUP_CALLS = 1000
BATCH_CALLS = 10_000
STORE_BYTES = 64 << 20        # the driver's MAX_LEAK_STORE_BYTES: a batch's messages
TRACE_GROWTH = 1.02           # a trace point whenever the calls grew by 2 %


# ---------------------------------------------------------------------- the result

@dataclass(frozen=True)
class LeakResult:
    """The outcome of one leak test of one instance at one length.

    Attributes:
        instance: the instance name; ``label`` its name in files and tables.
        message_bytes: the length of both classes' messages.
        verdict: ``no leak detected``, ``possible leak``, ``LEAK`` or ``too few calls``
            (no test held :data:`ngcc.stats.leak_statistics.MIN_SAMPLES` calls of each class).
        max_t: the largest ``|t|`` of the tests that count (0.0 when none does).
        max_test: the test that gave it (``raw``, ``fastest 29.3 %``,
            ``... (2nd order)``).
        calls: the timed calls the figures hold; ``calls_per_class`` (fixed, random) of
            them. After an early stop the driver may have made a batch or two more
            (``driver.calls``), not counted: the figures are those of the decision.
        seconds: the wall time of the whole test (driver start to end).
        calls_asked, seconds_asked: the limits the test was given.
        stop_reason: ``calls`` (all made), ``seconds`` (time limit) or ``leak``
            (stopped early: a test above :data:`ngcc.stats.leak_statistics.T_LEAK` at two
            looks in a row).
        seed: the seed of the driver's PRNG (classes and random messages).
        fixed_message: ``zeros``, ``sha256:<hex>`` of the fixed message given, or
            ``random (control)`` for the A/A control (``control``).
        tests, t: every test's name and final t (NaN: it did not count).
        counts: calls of each class (rows) in each population (raw, crops).
        crop_fractions, crop_thresholds: the crops (fraction kept, ticks).
        class_means: mean ticks of each class over all calls.
        trace_calls, trace_t: the t of every test after ``trace_calls[i]`` calls.
        driver: the driver's facts (:class:`ngcc.driver.child.LeakRun`).
    """

    instance: str
    label: str
    candidate: str
    variant: str
    library: str
    message_bytes: int
    verdict: str
    max_t: float
    max_test: str
    calls: int
    calls_per_class: tuple[int, int]
    seconds: float
    stop_reason: str
    calls_asked: int
    seconds_asked: float | None
    seed: int
    fixed_message: str
    control: bool
    cpu: int | None
    counter: str
    unit: str
    tests: tuple[str, ...]
    t: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)
    crop_fractions: tuple[float, ...] = field(repr=False)
    crop_thresholds: np.ndarray = field(repr=False)
    class_means: tuple[float, float] = field(repr=False)
    trace_calls: np.ndarray = field(repr=False)
    trace_t: np.ndarray = field(repr=False)
    driver: _leak_mode.LeakRun = field(repr=False)

    @property
    def leaks(self) -> bool:
        """True unless the verdict is ``no leak detected``."""
        return self.verdict != NO_LEAK

    def summary(self) -> str:
        """One line: label, verdict, max ``|t|`` and its test, calls, seconds."""
        strongest_test = " (%s)" % self.max_test if self.max_test else ""
        return "%s%s  %s  max |t| %.2f%s  %d calls  %.1f s" % (
            self.label, " [control]" if self.control else "", self.verdict, self.max_t,
            strongest_test, self.calls, self.seconds)

    def trace_series(self) -> tuple[list[int], dict[str, list[float]]]:
        """The trace for ``report.plots.leak.leak_trace_plot``: the calls of the looks at
        which some test counted, and each test's t at them (NaN: it did not count)."""
        return _evidence.counted_looks(self.trace_calls, self.trace_t, self.tests)

    @property
    def title(self) -> str:
        """``SM3 at 64 B: no leak detected (max |t| 1.9)``: a plot's title."""
        return "%s%s at %d B: %s (max |t| %.1f)" % (
            self.label, " [control]" if self.control else "", self.message_bytes,
            self.verdict, self.max_t)

    def evidence(self) -> _evidence.LeakEvidence:
        """The evidence of this test (``ngcc.leak/1``) and its trace, for
        :func:`ngcc.evidence.leak_evidence.write_evidence`."""
        d = self.driver
        populations = self.counts.shape[1]
        return _evidence.LeakEvidence(
            instance=self.instance, label=self.label, candidate=self.candidate,
            variant=self.variant, library=self.library, message_bytes=self.message_bytes,
            fixed_message=self.fixed_message, control=self.control, verdict=self.verdict,
            max_t=round(self.max_t, 4), max_test=self.max_test, calls=self.calls,
            calls_per_class=self.calls_per_class, seconds=round(self.seconds, 3),
            stop_reason=self.stop_reason,
            asked=_evidence.LeakLimits(self.calls_asked, self.seconds_asked),
            seed=self.seed, cpu=self.cpu, counter=self.counter, unit=self.unit,
            method=_evidence.LeakMethod(
                thresholds=_evidence.LeakThresholds(_stats.T_POSSIBLE, _stats.T_LEAK),
                min_samples_per_class=_stats.MIN_SAMPLES,
                calibration_calls=_stats.CALIBRATION_CALLS,
                crop_fractions=tuple(round(f, 6) for f in self.crop_fractions),
                crop_thresholds_ticks=tuple(float(v) for v in self.crop_thresholds)),
            tests=tuple(_evidence.LeakTest(
                name, round(float(t), 4) if math.isfinite(t) else None,
                (int(self.counts[0, i % populations]), int(self.counts[1, i % populations])))
                for i, (name, t) in enumerate(zip(self.tests, self.t, strict=True))),
            class_mean_ticks=(round(self.class_means[0], 3), round(self.class_means[1], 3)),
            driver=_evidence.LeakDriverFacts(
                pid=d.pid, warmup_calls=d.warmup, batch_calls=d.batch_calls,
                frequency_hz=d.frequency_hz, overhead_min_ticks=d.overhead_min_ticks,
                overhead_median_ticks=d.overhead_median_ticks, loop_ns=d.loop_ns,
                voluntary_switches=d.voluntary_switches,
                involuntary_switches=d.involuntary_switches, peak_rss_kib=d.peak_rss_kib,
                affinity_changed=d.affinity_changed, wall_ns=d.parent_wall_ns,
                isolation=d.isolation),
            trace_data=_evidence.LeakTrace(
                calls=self.trace_calls, t=self.trace_t, tests=self.tests,
                crop_fractions=self.crop_fractions, crop_thresholds=self.crop_thresholds))


# --------------------------------------------------------------------- the test

class _Accumulator:
    """The batches as they arrive: calibration, statistics, trace, early stop."""

    def __init__(self, early_stop: bool, progress: Callable[[int, float | None], None] | None):
        self.early_stop = early_stop
        self.progress = progress
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []
        self.statistics: _stats.LeakStatistics | None = None
        self.trace_calls: list[int] = []
        self.trace_t: list[np.ndarray] = []
        self.stopped_early = False
        self.above_before = False  # the previous look had a test above T_LEAK

    def add(self, ticks: np.ndarray, classes: np.ndarray) -> bool:
        """Take one batch; True when the run may stop (a test above T_LEAK at this look
        and the one before). Once it may, the figures stay as they were at that look:
        the batches still on their way are made, but not counted."""
        if self.stopped_early:
            return True
        if self.statistics is None:
            self.pending.append((ticks, classes))
            if sum(len(p[0]) for p in self.pending) < _stats.CALIBRATION_CALLS:
                return False
            self.calibrate()
        else:
            self.statistics.add(ticks, classes)
        return self.observe()

    def calibrate(self) -> None:
        """Fix the crops from the calls held back so far, then add them."""
        ticks = np.concatenate([p[0] for p in self.pending])
        self.statistics = _stats.LeakStatistics(_stats.crop_thresholds(ticks))
        self.statistics.add(ticks, np.concatenate([p[1] for p in self.pending]))
        self.pending = []

    def observe(self, final: bool = False) -> bool:
        assert self.statistics is not None
        stats = self.statistics
        t = stats.t()
        calls = stats.calls
        if final or not self.trace_calls or calls >= self.trace_calls[-1] * TRACE_GROWTH:
            if self.trace_calls and self.trace_calls[-1] == calls:
                self.trace_t[-1] = t
            else:
                self.trace_calls.append(calls)
                self.trace_t.append(t)
        max_t, _ = _stats.strongest(t, stats.tests)
        if self.progress is not None:
            self.progress(calls, max_t)
        above = max_t is not None and max_t > _stats.T_LEAK
        self.stopped_early = self.early_stop and above and self.above_before
        self.above_before = above
        return self.stopped_early


def leak(name: str | os.PathLike[str] | Instance, length: int = DEFAULT_LENGTH, *,
         calls: int = DEFAULT_CALLS, seconds: float | None = DEFAULT_SECONDS,
         cpu: int | None = None, fixed: bytes | None = None, seed: int | None = None,
         early_stop: bool = True, control: bool = False, label: str | None = None,
         progress: Callable[[int, float | None], None] | Task | None = None,
         wait: float | None = _locks.DEFAULT_WAIT_SECONDS,
         on_wait: Callable[[CpuWait], None] | None = None) -> LeakResult:
    """Test an instance for timing leakage by the dudect method (fixed vs random).

    Args:
        name: an instance name (``"SM3"``), an :class:`Instance`, or a library path.
            Built-in and foreign libraries alike run in ``ngcc-driver``.
        length: the message length in bytes of both classes, 1 to :data:`MAX_LENGTH`.
        calls: the most timed calls, :data:`MIN_CALLS` to :data:`MAX_CALLS`.
        seconds: the most seconds of calls (None: no limit but ``calls``).
        cpu: the CPU the driver is pinned to (default: the last allowed one no ngcc
            campaign holds). Its CPU lock is held for the test, as a campaign holds its
            own: a test never times beside a campaign's trials (a campaign's own leak
            tests run on the CPU it holds).
        fixed: class 0's message, exactly ``length`` bytes (default: all zero).
        seed: the driver PRNG's seed, 0 to 2**64 - 1 (default: a random one; recorded).
        early_stop: stop once a test that counts is above
            :data:`ngcc.stats.leak_statistics.T_LEAK` at two looks in a row (a look after every
            batch of calls).
        control: the A/A control: class 0 gets fresh random messages too, so the two
            classes differ by their label only and no function can tell them apart.
            Its verdict should be ``no leak detected``; a flag there blames the
            harness or the host, not the instance.
        label: the library's name in the evidence files (default: its own label,
            else the instance name, ``name@variant`` for a built-in variant).
        progress: called after every batch with (calls so far, largest ``|t|`` or None),
            or a :class:`ngcc.base.progress.Task` of ``calls`` to move (its status shows
            the largest ``|t|``).
        wait: seconds to wait for the CPU when another ngcc measurement holds it
            (default ``measure.locks.DEFAULT_WAIT_SECONDS``, as every measurement; 0 or
            None: refuse at once). Every other argument is checked before.
        on_wait: told where a wait for the CPU stands, about once a second (a
            :class:`~ngcc.measure.waiting.CpuWait`; default: shown as progress on
            stderr, as the command line shows it).

    Returns:
        A :class:`LeakResult`.

    Raises:
        UnknownInstanceError, LibraryError: no such instance, or it cannot be loaded.
        ValueError: a length, count, time, CPU, seed, fixed message or wait out of range.
        CpuBusyError: another ngcc campaign (or leak test) holds the CPU (or every CPU),
            still after ``wait``.
        HashError: ``CryptHash`` returned nonzero.
        InstanceCrashError, InstanceTimeoutError: the library crashed or hung.
    """
    inst = instance(name)
    label = run_labels([inst], [label])[0]
    length, calls, seconds, seed, fixed = checked_arguments(
        length, calls, seconds, cpu=cpu, seed=seed, fixed=fixed, control=control)
    seed = secrets.randbits(64) if seed is None else seed
    wait = _locks.checked_wait(wait)
    batch_calls = max(1, min(BATCH_CALLS, STORE_BYTES // length))
    accumulator = _Accumulator(early_stop, progress if not isinstance(progress, Task)
                               else task_progress(progress))
    started = time.monotonic()
    try:
        with _locks.hold_cpu(cpu, None, wait=wait, on_wait=on_wait if on_wait is not None
                             else _locks.show_waiting()) as held:
            run = _leak_mode.leak(inst, length, calls, batch_calls, seed, accumulator.add,
                              warmup=WARMUP_CALLS, seconds=seconds, cpu=held, fixed=fixed,
                              control=control)
    except _process.DriverError as error:
        raise _process.api_error(inst, error) from None
    elapsed = time.monotonic() - started
    if accumulator.statistics is None and accumulator.pending:
        accumulator.calibrate()
    return _result(inst, label, length, run, accumulator, elapsed, fixed, control,
                   (calls, None if seconds is None else float(seconds)))


def task_progress(task: Task) -> Callable[[int, float | None], None]:
    """The progress callback that moves ``task``: calls so far, the largest ``|t|``."""
    def show(calls: int, max_t: float | None) -> None:
        task.update_to(calls)
        if max_t is not None:
            task.status("max |t| %.2f" % max_t)
    return show


def _result(inst: Instance, label: str, length: int, run: _leak_mode.LeakRun,
            accumulator: _Accumulator, elapsed: float, fixed: bytes | None,
            control: bool, asked: tuple[int, float | None]) -> LeakResult:
    stats = accumulator.statistics
    if stats is None:  # no call at all (the time limit passed in the warm-up)
        stats = _stats.LeakStatistics([0.0] * len(_stats.CROP_FRACTIONS))
    else:
        accumulator.observe(final=True)
    t, counts = stats.t(), stats.counts()
    max_t, max_test = _stats.strongest(t, stats.tests)
    stop = "leak" if accumulator.stopped_early else run.stop_reason
    fixed_text = "random (control)" if control else "zeros" if fixed is None else \
        "sha256:" + _sha256(fixed)
    trace_t = np.array(accumulator.trace_t) if accumulator.trace_t else \
        np.zeros((0, len(stats.tests)))
    return LeakResult(
        instance=inst.name, label=label, candidate=inst.candidate,
        variant=inst.variant, library=str(inst.library), message_bytes=length,
        verdict=_stats.verdict(max_t), max_t=max_t or 0.0, max_test=max_test, calls=stats.calls,
        calls_per_class=(int(counts[0, 0]), int(counts[1, 0])), seconds=elapsed,
        stop_reason=stop, calls_asked=asked[0], seconds_asked=asked[1], seed=run.seed,
        fixed_message=fixed_text, control=control, cpu=run.cpu, counter=run.counter, unit=run.unit,
        tests=stats.tests, t=t, counts=counts, crop_fractions=stats.fractions,
        crop_thresholds=stats.thresholds,
        class_means=(float(stats.moments.mean[0, 0]), float(stats.moments.mean[1, 0])),
        trace_calls=np.array(accumulator.trace_calls, dtype=np.int64), trace_t=trace_t,
        driver=run)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def checked_arguments(length: object, calls: object, seconds: object, *, cpu: object = None,
                      seed: object = None, fixed: object = None, control: bool = False
                      ) -> tuple[int, int, float | None, int | None, bytes | None]:
    """Every argument of a leak test but the instance, checked before any CPU is waited
    for (``ngcc leak`` makes its own usage checks before its lock): ``(length, calls,
    seconds, seed, fixed)`` as the test takes them (``seed`` None stays None: the test
    draws one).

    Raises:
        ValueError: a length, count, time, CPU, seed or fixed message out of range (named).
    """
    length, calls, seconds = checked_limits(length, calls, seconds)
    if cpu is not None and (isinstance(cpu, bool) or not isinstance(cpu, int)
                            or cpu not in os.sched_getaffinity(0)):
        raise ValueError("CPU %r is not one this process may run on (%s)"
                         % (cpu, sorted(os.sched_getaffinity(0))))
    if seed is not None:
        seed = _checked_int("seed", seed, 0, 2**64 - 1)
    if fixed is not None and control:
        raise ValueError("a control run has no fixed message (both classes are random)")
    if fixed is not None:
        try:
            fixed = bytes(memoryview(fixed).cast("B"))  # type: ignore[arg-type]
        except TypeError:
            raise ValueError("the fixed message must be bytes, got %s"
                             % type(fixed).__name__) from None
        if len(fixed) != length:
            raise ValueError("the fixed message has %d bytes, but the length is %d"
                             % (len(fixed), length))
    return length, calls, seconds, seed, fixed


def checked_limits(length: object, calls: object, seconds: object,
                   what: str = "") -> tuple[int, int, float | None]:
    """``(length, calls, seconds)`` of a leak test, checked (ValueError naming the
    setting, ``what`` prefixed: ``leak_calls``); an infinite ``seconds`` is None."""
    length = _checked_int(what.rstrip("_") or "length", length, 1, MAX_LENGTH, "bytes")
    calls = _checked_int(what + "calls", calls, MIN_CALLS, MAX_CALLS,
                         "calls (a test counts once it holds %d calls of each class)"
                         % _stats.MIN_SAMPLES)
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(
            seconds, (int, float)) or not seconds > 0):
        raise ValueError("%sseconds must be a positive number (or None), got %r"
                         % (what, seconds))
    return length, calls, None if seconds is None or math.isinf(seconds) else float(seconds)


def _checked_int(what: str, value: object, low: int, high: int, unit: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError("%s must be an integer, got %r" % (what, value))
    if not low <= int(value) <= high:
        raise ValueError("%s must be %d to %d%s, got %d" % (
            what, low, high, " " + unit if unit else "", int(value)))
    return int(value)
