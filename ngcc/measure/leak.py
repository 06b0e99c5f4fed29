"""``ngcc leak``: a timing-leakage test of one instance by the dudect method
(Reparaz, Balasch, Verbauwhede, "Dude, is my code constant time?", 2017).

Two classes of messages of one length: class 0 is one fixed message (all zero unless
given), class 1 a fresh random message per call; the class of each call is drawn at
random. ``ngcc-driver`` makes the calls (``leak`` mode, :func:`ngcc.driver.child.leak`) and
streams each call's ticks and class here in batches. If the running time does not
depend on the message, the two classes have one distribution of ticks, whatever the
host does meanwhile: load, interrupts and frequency changes hit both classes alike,
because the class is drawn independently of them.

The statistic is Welch's t between the classes, for several tests, updated as the
batches arrive (central moments per class, merged with Pébay's formulas, so the
online figures equal the batch figures up to rounding):

* first order (a difference of means) on every call (``raw``), and on the calls
  faster than each of :data:`CROP_FRACTIONS` percentiles (``fastest 29.3 %``): the
  slow tail is mostly interrupts and preemption, noise the crop removes, so a small
  shift of the typical call shows up sooner; the percentiles are fixed once, from
  the first :data:`CALIBRATION_CALLS` calls of both classes together;
* second order (a difference of variances: Welch's t of the squared deviations from
  each class's own mean) on the same populations. It catches a leak that spreads the
  random class's times without moving their mean: a table lookup that hits the cache
  for one input and misses for another. A test's figure counts once it holds
  :data:`MIN_SAMPLES` calls of each class.

The verdict is read from the largest ``|t|`` of the tests that count: below
:data:`T_POSSIBLE` (4.5) ``no leak detected``, above :data:`T_LEAK` (10) ``LEAK``,
between ``possible leak``. Under no leak, each ``|t|`` is about the absolute value of a
standard normal: 4.5 is exceeded with probability 7e-6 per test and look, 10 never.
So the run may stop early (:data:`T_LEAK` is out of reach of chance however often
one looks): it stops once a test that counts is above 10 at two looks in a row (a
look after every batch), the second one confirming the first against a passing
disturbance. The test detects; it never proves absence (see the README).
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ngcc.base import files as _files
from ngcc.base import untrusted as _untrusted
from ngcc.base.clock import utc_now
from ngcc.base.errors import CorruptRecordError
from ngcc.base.names import check_name, inside
from ngcc.base.progress import Task
from ngcc.base.version import __version__
from ngcc.driver import child as _child
from ngcc.driver import process as _process
from ngcc.evidence import records as _records
from ngcc.library.registry import Instance, instance, run_labels
from ngcc.measure import locks as _locks

SCHEMA_LEAK = "ngcc.leak/1"
SCHEMA_LEAK_TRACE = "ngcc.leak-trace/1"

T_POSSIBLE = 4.5
"""``|t|`` at or above which the verdict is ``possible leak``."""
T_LEAK = 10.0
"""``|t|`` above which the verdict is ``LEAK`` (and the run may stop)."""

NO_LEAK, POSSIBLE_LEAK, LEAK, TOO_FEW = ("no leak detected", "possible leak", "LEAK",
                                         "too few calls")

#: The fractions of calls each crop keeps (the fastest ones): 1 - 0.5^x for x from
#: 0.1 to 10, dense where the fastest calls are, as dudect's 1 - 0.5^(10 i / 100).
CROP_FRACTIONS = tuple(1.0 - 0.5 ** x for x in (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5,
                                                3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0))
MIN_SAMPLES = 1000
"""Calls of each class a test needs before its ``|t|`` counts (towards the verdict and
the early stop): with fewer, a skewed distribution of ticks makes t less normal."""
CALIBRATION_CALLS = 1000
"""Calls (both classes) whose percentiles fix the crops' thresholds."""

DEFAULT_LENGTH = 64
DEFAULT_CALLS = 1_000_000
DEFAULT_SECONDS = 60.0
MIN_CALLS = 2 * MIN_SAMPLES
MAX_CALLS = 1 << 26           # the driver's MAX_CALLS
MAX_LENGTH = 1 << 20
WARMUP_CALLS = 1000
BATCH_CALLS = 10_000
STORE_BYTES = 64 << 20        # the driver's MAX_LEAK_STORE_BYTES: a batch's messages
TRACE_GROWTH = 1.02           # a trace point whenever the calls grew by 2 %


# ------------------------------------------------------------------- statistics

@dataclass
class Moments:
    """Counts and central moments (sums of powers of deviations from the mean), one
    entry per element of the arrays' common shape."""

    n: np.ndarray
    mean: np.ndarray
    m2: np.ndarray
    m3: np.ndarray
    m4: np.ndarray

    @classmethod
    def zeros(cls, shape: tuple[int, ...]) -> Moments:
        """No samples anywhere."""
        return cls(*(np.zeros(shape) for _ in range(5)))

    @classmethod
    def of_groups(cls, values: np.ndarray, group: np.ndarray, groups: int) -> Moments:
        """The moments of ``values`` split by ``group`` (0 to ``groups - 1``): two
        passes, the deviations taken from each group's own mean."""
        n = np.bincount(group, minlength=groups).astype(np.float64)
        mean = np.bincount(group, weights=values, minlength=groups) / np.maximum(n, 1.0)
        deviation = values - mean[group]
        square = deviation * deviation
        return cls(n, mean, np.bincount(group, weights=square, minlength=groups),
                   np.bincount(group, weights=square * deviation, minlength=groups),
                   np.bincount(group, weights=square * square, minlength=groups))

    def merged(self, other: Moments) -> Moments:
        """The moments of both sets of samples together (Pébay 2008, eq. 2.1-2.3). An
        empty side leaves the other exactly as it was: ``0 + (x / n) * n`` need not be
        ``x`` in floating point, and that rounding would give a population of one tick
        value a variance of 1e-25 instead of 0, and its t the ratio of two rounding
        errors."""
        na, nb = self.n, other.n
        n = na + nb
        delta = np.where((na > 0) & (nb > 0), other.mean - self.mean, 0.0)
        d = delta / np.where(n > 0, n, 1.0)  # delta / n
        nab = na * nb
        m2 = self.m2 + other.m2 + delta * d * nab
        m3 = (self.m3 + other.m3 + delta * d * d * nab * (na - nb)
              + 3.0 * d * (na * other.m2 - nb * self.m2))
        m4 = (self.m4 + other.m4 + delta * d * d * d * nab * (na * na - nab + nb * nb)
              + 6.0 * d * d * (na * na * other.m2 + nb * nb * self.m2)
              + 4.0 * d * (na * other.m3 - nb * self.m3))
        mean = np.where(na > 0, self.mean + d * nb, other.mean)
        return Moments(n, mean, m2, m3, m4)

    def prefixes(self) -> Moments:
        """Along the last axis: entry j holds entries 0..j merged."""
        parts = [self[..., 0]]
        for j in range(1, self.n.shape[-1]):
            parts.append(parts[-1].merged(self[..., j]))
        return Moments(*(np.stack([getattr(p, name) for p in parts], axis=-1)
                         for name in ("n", "mean", "m2", "m3", "m4")))

    def __getitem__(self, index: Any) -> Moments:
        return Moments(self.n[index], self.mean[index], self.m2[index], self.m3[index],
                       self.m4[index])


def welch_t(n: np.ndarray, mean: np.ndarray, variance: np.ndarray,
            min_samples: int = 2) -> np.ndarray:
    """Welch's t of class 0 against class 1 (axis 0 of each array: the class), NaN
    where a class has fewer than ``min_samples`` samples or both have no variance.
    Positive: class 0 (the fixed message) is slower."""
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.sqrt(variance[0] / n[0] + variance[1] / n[1])
        t = (mean[0] - mean[1]) / scale
    enough = (n[0] >= max(min_samples, 2)) & (n[1] >= max(min_samples, 2))
    return np.where(enough & (scale > 0) & np.isfinite(scale), t, np.nan)


class LeakStatistics:
    """Welch's t tests between the two classes, updated batch by batch.

    Populations: every call (``raw``) and, for each threshold, the calls faster than
    it. Tests: first order on every population, then second order on every one.

    Args:
        thresholds: the crops' thresholds in ticks (calls strictly below are kept),
            ascending; :func:`crop_thresholds` makes them from calibration calls.
        fractions: the fraction of calls each threshold was chosen to keep (names).
        min_samples: calls of each class a test needs before its ``|t|`` counts.
    """

    def __init__(self, thresholds: Sequence[float] | np.ndarray,
                 fractions: Sequence[float] = CROP_FRACTIONS, min_samples: int = MIN_SAMPLES):
        self.thresholds = np.asarray(thresholds, dtype=np.float64)
        if len(self.thresholds) != len(fractions) or np.any(np.diff(self.thresholds) < 0):
            raise ValueError("expected one ascending threshold per crop fraction")
        self.fractions = tuple(float(f) for f in fractions)
        self.min_samples = min_samples
        self.moments = Moments.zeros((2, 1 + len(self.thresholds)))

    @property
    def populations(self) -> tuple[str, ...]:
        """``raw``, then ``fastest 6.7 %`` ... for each crop."""
        return ("raw", *("fastest %.3g %%" % (100 * f) for f in self.fractions))

    @property
    def tests(self) -> tuple[str, ...]:
        """The names of the tests, in the order of :meth:`t`."""
        return (*self.populations, *("%s (2nd order)" % p for p in self.populations))

    @property
    def calls(self) -> int:
        """Calls added so far (both classes)."""
        return int(self.moments.n[:, 0].sum())

    def add(self, ticks: np.ndarray, classes: np.ndarray) -> None:
        """Add the ticks of a batch of calls and their classes (0 or 1)."""
        values = np.asarray(ticks, dtype=np.float64)
        classes = np.asarray(classes)
        crops = len(self.thresholds)
        batch = []
        for label in (0, 1):
            x = values[classes == label]
            # Segment s holds the calls between thresholds s-1 and s; crop j (from 1)
            # is segments 0..j-1, raw is all of them.
            segment = np.searchsorted(self.thresholds, x, side="right")
            prefix = Moments.of_groups(x, segment, crops + 1).prefixes()
            batch.append(Moments(*(np.concatenate([a[-1:], a[:-1]]) for a in (
                prefix.n, prefix.mean, prefix.m2, prefix.m3, prefix.m4))))
        self.moments = self.moments.merged(Moments(*(np.stack([getattr(b, name) for b in batch])
                                                     for name in ("n", "mean", "m2", "m3",
                                                                  "m4"))))

    def t(self) -> np.ndarray:
        """t of every test (:attr:`tests` order); NaN where it does not count yet."""
        m = self.moments
        n = m.n
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = m.m2 / (n - 1)
            squares_mean = m.m2 / n                           # of (x - mean)^2
            squares_variance = (m.m4 / n - squares_mean ** 2) * n / (n - 1)
            # Ticks are integers: n of them that are not all equal have a variance of
            # at least 1/n. Below half that, every call of the population read the
            # same ticks (a crop below the counter's second step holds one value) and
            # what is left is rounding: zero, so that its t does not count.
            constant = ~(variance >= 0.5 / n)
            variance = np.where(constant, 0.0, variance)
            squares_variance = np.where(
                constant | ~(squares_variance > 1e-9 * squares_mean ** 2), 0.0,
                squares_variance)
        first = welch_t(n, m.mean, variance, self.min_samples)
        second = welch_t(n, squares_mean, squares_variance, self.min_samples)
        return np.concatenate([first, second])

    def counts(self) -> np.ndarray:
        """Calls of each class (rows) in each population (columns)."""
        return self.moments.n.astype(np.int64)


def crop_thresholds(ticks: np.ndarray, fractions: Sequence[float] = CROP_FRACTIONS) -> np.ndarray:
    """The ticks below which each fraction of ``ticks`` lies (percentiles)."""
    return np.quantile(np.asarray(ticks, dtype=np.float64), list(fractions))


def verdict(max_t: float | None) -> str:
    """The verdict of a largest ``|t|`` (None: no test counts yet)."""
    if max_t is None:
        return TOO_FEW
    if max_t > T_LEAK:
        return LEAK
    return POSSIBLE_LEAK if max_t >= T_POSSIBLE else NO_LEAK


def strongest(t: np.ndarray, tests: Sequence[str]) -> tuple[float | None, str]:
    """The largest ``|t|`` of the tests that count and its test's name, or (None, "")."""
    magnitude = np.abs(t)
    if not np.any(np.isfinite(magnitude)):
        return None, ""
    index = int(np.nanargmax(magnitude))
    return float(magnitude[index]), tests[index]


# ---------------------------------------------------------------------- the result

@dataclass(frozen=True)
class LeakResult:
    """The outcome of one leak test of one instance at one length.

    Attributes:
        instance: the instance name; ``label`` its name in files and tables.
        message_bytes: the length of both classes' messages.
        verdict: ``no leak detected``, ``possible leak``, ``LEAK`` or ``too few calls``
            (no test held :data:`MIN_SAMPLES` calls of each class).
        max_t: the largest ``|t|`` of the tests that count (0.0 when none does).
        max_test: the test that gave it (``raw``, ``fastest 29.3 %``,
            ``... (2nd order)``).
        calls: the timed calls the figures hold; ``calls_per_class`` (fixed, random) of
            them. After an early stop the driver may have made a batch or two more
            (``driver.calls``), not counted: the figures are those of the decision.
        seconds: the wall time of the whole test (driver start to end).
        calls_asked, seconds_asked: the limits the test was given.
        stop_reason: ``calls`` (all made), ``seconds`` (time limit) or ``leak``
            (stopped early: a test above :data:`T_LEAK` at two looks in a row).
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
    driver: _child.LeakRun = field(repr=False)

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
        """The trace for :func:`ngcc.report.plots.leak_trace_plot`: the calls of the looks at
        which some test counted, and each test's t at them (NaN: it did not count)."""
        return _counted_looks(self.trace_calls, self.trace_t, self.tests)

    @property
    def title(self) -> str:
        """``SM3 at 64 B: no leak detected (max |t| 1.9)``: a plot's title."""
        return "%s%s at %d B: %s (max |t| %.1f)" % (
            self.label, " [control]" if self.control else "", self.message_bytes,
            self.verdict, self.max_t)

    def to_json(self) -> dict[str, Any]:
        """The evidence file's content (``ngcc.leak/1``), without ``schema``."""
        d = self.driver
        populations = self.counts.shape[1]
        return {
            "instance": self.instance, "label": self.label, "candidate": self.candidate,
            "variant": self.variant, "library": self.library,
            "message_bytes": self.message_bytes, "fixed_message": self.fixed_message,
            "control": self.control,
            "verdict": self.verdict, "max_t": round(self.max_t, 4), "max_test": self.max_test,
            "calls": self.calls, "calls_per_class": list(self.calls_per_class),
            "seconds": round(self.seconds, 3), "stop_reason": self.stop_reason,
            "asked": {"calls": self.calls_asked, "seconds": self.seconds_asked},
            "seed": self.seed, "cpu": self.cpu, "counter": self.counter, "unit": self.unit,
            "method": {
                "thresholds": {"possible_leak": T_POSSIBLE, "leak": T_LEAK},
                "min_samples_per_class": MIN_SAMPLES, "calibration_calls": CALIBRATION_CALLS,
                "crop_fractions": [round(f, 6) for f in self.crop_fractions],
                "crop_thresholds_ticks": [float(v) for v in self.crop_thresholds],
            },
            "tests": [{"name": name, "t": round(float(t), 4) if math.isfinite(t) else None,
                       "calls_per_class": [int(n) for n in self.counts[:, i % populations]]}
                      for i, (name, t) in enumerate(zip(self.tests, self.t, strict=True))],
            "class_mean_ticks": [round(m, 3) for m in self.class_means],
            "driver": {
                "pid": d.pid, "warmup_calls": d.warmup, "batch_calls": d.batch_calls,
                "frequency_hz": d.frequency_hz, "overhead_min_ticks": d.overhead_min_ticks,
                "overhead_median_ticks": d.overhead_median_ticks, "loop_ns": d.loop_ns,
                "voluntary_switches": d.voluntary_switches,
                "involuntary_switches": d.involuntary_switches,
                "peak_rss_kib": d.peak_rss_kib, "affinity_changed": d.affinity_changed,
                "wall_ns": d.parent_wall_ns,
            },
        }


# --------------------------------------------------------------------- the test

class _Accumulator:
    """The batches as they arrive: calibration, statistics, trace, early stop."""

    def __init__(self, early_stop: bool, progress: Callable[[int, float | None], None] | None):
        self.early_stop = early_stop
        self.progress = progress
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []
        self.statistics: LeakStatistics | None = None
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
            if sum(len(p[0]) for p in self.pending) < CALIBRATION_CALLS:
                return False
            self.calibrate()
        else:
            self.statistics.add(ticks, classes)
        return self.observe()

    def calibrate(self) -> None:
        """Fix the crops from the calls held back so far, then add them."""
        ticks = np.concatenate([p[0] for p in self.pending])
        self.statistics = LeakStatistics(crop_thresholds(ticks))
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
        max_t, _ = strongest(t, stats.tests)
        if self.progress is not None:
            self.progress(calls, max_t)
        above = max_t is not None and max_t > T_LEAK
        self.stopped_early = self.early_stop and above and self.above_before
        self.above_before = above
        return self.stopped_early


def leak(name: str | os.PathLike[str] | Instance, length: int = DEFAULT_LENGTH, *,
         calls: int = DEFAULT_CALLS, seconds: float | None = DEFAULT_SECONDS,
         cpu: int | None = None, fixed: bytes | None = None, seed: int | None = None,
         early_stop: bool = True, control: bool = False, label: str | None = None,
         progress: Callable[[int, float | None], None] | Task | None = None) -> LeakResult:
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
        early_stop: stop once a test that counts is above :data:`T_LEAK` at two looks
            in a row (a look after every batch of calls).
        control: the A/A control: class 0 gets fresh random messages too, so the two
            classes differ by their label only and no function can tell them apart.
            Its verdict should be ``no leak detected``; a flag there blames the
            harness or the host, not the instance.
        label: the library's name in the evidence files (default: its own label,
            else the instance name, ``name@variant`` for a built-in variant).
        progress: called after every batch with (calls so far, largest ``|t|`` or None),
            or a :class:`ngcc.base.progress.Task` of ``calls`` to move (its status shows
            the largest ``|t|``).

    Returns:
        A :class:`LeakResult`.

    Raises:
        UnknownInstanceError, LibraryError: no such instance, or it cannot be loaded.
        ValueError: a length, count, time, CPU, seed or fixed message out of range.
        CpuBusyError: another ngcc campaign (or leak test) holds the CPU (or every CPU).
        HashError: ``CryptHash`` returned nonzero.
        InstanceCrashError, InstanceTimeoutError: the library crashed or hung.
    """
    inst = instance(name)
    label = run_labels([inst], [label])[0]
    length, calls, seconds = checked_limits(length, calls, seconds)
    if cpu is not None and (isinstance(cpu, bool) or not isinstance(cpu, int)
                            or cpu not in os.sched_getaffinity(0)):
        raise ValueError("CPU %r is not one this process may run on (%s)"
                         % (cpu, sorted(os.sched_getaffinity(0))))
    seed = secrets.randbits(64) if seed is None else _checked_int("seed", seed, 0, 2**64 - 1)
    if fixed is not None and control:
        raise ValueError("a control run has no fixed message (both classes are random)")
    if fixed is not None:
        fixed = bytes(memoryview(fixed).cast("B"))
        if len(fixed) != length:
            raise ValueError("the fixed message has %d bytes, but the length is %d"
                             % (len(fixed), length))
    batch_calls = max(1, min(BATCH_CALLS, STORE_BYTES // length))
    accumulator = _Accumulator(early_stop, progress if not isinstance(progress, Task)
                               else task_progress(progress))
    started = time.monotonic()
    try:
        with _locks.hold_cpu(cpu, None) as held:
            run = _child.leak(inst, length, calls, batch_calls, seed, accumulator.add,
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


def _result(inst: Instance, label: str, length: int, run: _child.LeakRun,
            accumulator: _Accumulator, elapsed: float, fixed: bytes | None,
            control: bool, asked: tuple[int, float | None]) -> LeakResult:
    stats = accumulator.statistics
    if stats is None:  # no call at all (the time limit passed in the warm-up)
        stats = LeakStatistics([0.0] * len(CROP_FRACTIONS))
    else:
        accumulator.observe(final=True)
    t, counts = stats.t(), stats.counts()
    max_t, max_test = strongest(t, stats.tests)
    stop = "leak" if accumulator.stopped_early else run.stop_reason
    fixed_text = "random (control)" if control else "zeros" if fixed is None else \
        "sha256:" + _sha256(fixed)
    trace_t = np.array(accumulator.trace_t) if accumulator.trace_t else \
        np.zeros((0, len(stats.tests)))
    return LeakResult(
        instance=inst.name, label=label, candidate=inst.candidate,
        variant=inst.variant, library=str(inst.library), message_bytes=length,
        verdict=verdict(max_t), max_t=max_t or 0.0, max_test=max_test, calls=stats.calls,
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


def checked_limits(length: object, calls: object, seconds: object,
                   what: str = "") -> tuple[int, int, float | None]:
    """``(length, calls, seconds)`` of a leak test, checked (ValueError naming the
    setting, ``what`` prefixed: ``leak_calls``); an infinite ``seconds`` is None."""
    length = _checked_int(what.rstrip("_") or "length", length, 1, MAX_LENGTH, "bytes")
    calls = _checked_int(what + "calls", calls, MIN_CALLS, MAX_CALLS,
                         "calls (a test counts once it holds %d calls of each class)"
                         % MIN_SAMPLES)
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


# -------------------------------------------------------------------- evidence

def evidence_stem(result: LeakResult) -> str:
    """``<label>__leak_<bytes>`` (``__leak-control_<bytes>`` for a control): the name of
    a result's files, checked."""
    return "%s__leak%s_%d" % (check_name(result.label, "label"),
                              "-control" if result.control else "", result.message_bytes)


def evidence_path(result: LeakResult, out_dir: str | os.PathLike[str], suffix: str) -> Path:
    """``OUT/<candidate>/<label>__leak_<bytes><suffix>``, kept inside ``out_dir``."""
    folder = inside(out_dir, check_name(result.candidate, "candidate id"))
    return inside(folder, evidence_stem(result) + suffix)


def write_evidence(result: LeakResult, out_dir: str | os.PathLike[str],
                   plot: bool = False) -> list[Path]:
    """Write ``OUT/<candidate>/<label>__leak_<bytes>.json`` (``ngcc.leak/1``) and the t
    trace as ``.npz`` beside it, each atomically, the JSON last (it names the trace's
    sha256). ``plot`` says the caller has drawn the ``|t|`` plot beside them (``.png``,
    ``.svg`` at :func:`evidence_path` with no suffix), so the JSON names it. Returns the
    paths written, the JSON first."""
    base = evidence_stem(result)
    trace_path = evidence_path(result, out_dir, ".npz")
    json_path = evidence_path(result, out_dir, ".json")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, schema=np.array(SCHEMA_LEAK_TRACE),
                        calls=result.trace_calls, t=result.trace_t,
                        tests=np.array(result.tests),
                        crop_fractions=np.array(result.crop_fractions),
                        crop_thresholds=result.crop_thresholds)
    data = buffer.getvalue()
    _files.atomic_write_bytes(trace_path, data)
    document = {"schema": SCHEMA_LEAK, **result.to_json(),
                "trace": {"path": trace_path.name, "sha256": _sha256(data),
                          "points": len(result.trace_calls)},
                "plot": base + ".png" if plot else None,
                "created": utc_now(),
                "ngcc_version": __version__}
    _records.write_json(json_path, document)
    return [json_path, trace_path]


def load_evidence(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a leak evidence file; CorruptRecordError unless it is ``ngcc.leak/1``."""
    remedy = "Run `ngcc leak` again to remake it."
    try:
        data = _untrusted.load_json_file(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CorruptRecordError(path, "cannot be read (%s)" % exc, remedy) from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_LEAK:
        raise CorruptRecordError(path, "not an %s file" % SCHEMA_LEAK, remedy)
    for key in ("instance", "label", "candidate", "message_bytes", "verdict", "max_t",
                "max_test", "calls", "calls_per_class", "seconds", "tests", "trace"):
        if key not in data:
            raise CorruptRecordError(path, "no %r field" % key, remedy)
    return data


# ------------------------------------------------------------ in a run directory

LEAK_DIR = "leak"
"""A campaign's leak evidence: ``RUN_DIR/leak/<candidate>/<label>__leak_<bytes>.json``."""


def kept(out_dir: str | os.PathLike[str], candidate: str, label: str, message_bytes: int,
         calls: int, seconds: float | None) -> bool:
    """Whether ``out_dir`` already holds a sound result of this library at this length,
    made with these limits (a resumed campaign keeps it; anything else is run again)."""
    base = "%s__leak_%d" % (check_name(label, "label"), message_bytes)
    path = inside(inside(out_dir, check_name(candidate, "candidate id")), base + ".json")
    if not path.is_file():
        return False
    try:
        data = load_evidence(path)
        trace_of(path, data)
    except CorruptRecordError:
        return False
    return (data.get("label"), data.get("asked")) == (label, {"calls": calls,
                                                              "seconds": seconds})


def run_evidence(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every leak evidence file of a run directory (``leak/*/*.json``), loaded and
    checked, in file-name order, each with its ``relpath`` in the run directory.

    Raises:
        CorruptRecordError: a file that is not sound ``ngcc.leak/1`` evidence.
    """
    root = Path(run_dir)
    found = []
    for path in sorted((root / LEAK_DIR).glob("*/*.json")):
        data = load_evidence(path)
        found.append({**data, "relpath": path.relative_to(root).as_posix()})
    return found


def trace_of(path: str | os.PathLike[str], data: dict[str, Any]
             ) -> tuple[list[int], dict[str, list[float]]]:
    """The t trace an evidence file names (its ``.npz``, checked against its sha256),
    as :meth:`LeakResult.trace_series` gives it: the looks at which a test counted."""
    trace = data.get("trace") or {}
    npz = Path(path).with_name(str(trace.get("path", "")))
    remedy = "Run the leak test again to remake it."
    if not npz.is_file() or npz.parent != Path(path).parent:
        raise CorruptRecordError(path, "its trace %r is missing" % trace.get("path"), remedy)
    if _files.sha256_file(npz) != trace.get("sha256"):
        raise CorruptRecordError(npz, "its sha256 is not the one its evidence file states",
                                 remedy)
    try:
        with np.load(npz, allow_pickle=False) as arrays:
            if str(arrays["schema"]) != SCHEMA_LEAK_TRACE:
                raise CorruptRecordError(npz, "not an %s archive" % SCHEMA_LEAK_TRACE, remedy)
            calls, t, tests = arrays["calls"], arrays["t"], [str(n) for n in arrays["tests"]]
    except (OSError, KeyError, ValueError) as exc:
        raise CorruptRecordError(npz, "not a valid .npz archive (%s)" % exc, remedy) from exc
    if t.ndim != 2 or t.shape != (len(calls), len(tests)):
        raise CorruptRecordError(npz, "t of shape %s for %d looks and %d tests"
                                 % (t.shape, len(calls), len(tests)), remedy)
    return _counted_looks(calls, t, tests)


def _counted_looks(calls: np.ndarray, t: np.ndarray, tests: Sequence[str]
                   ) -> tuple[list[int], dict[str, list[float]]]:
    counted = np.isfinite(t).any(axis=1) if len(t) else np.zeros(0, dtype=bool)
    return ([int(c) for c in calls[counted]],
            {name: [float(v) for v in t[counted, i]] for i, name in enumerate(tests)})
