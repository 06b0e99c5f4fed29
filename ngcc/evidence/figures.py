"""The figures a record holds, as data, and the one a record leads with.

Every table, page, plot, export, repr and comparison reads a record's figures through
this module, so one record shows one leading number in every view:

* :class:`Figure`: what a figure is (its code, full and short names, the
  :class:`~ngcc.evidence.model.Statistics` fields of its value and interval, whether it
  is free of the per-call counter bracket, whether it can lead);
* :data:`FIGURES`: the four a record can hold — the CPU-time figure (which leads), the
  per-call mean, the per-call median and the batch mean (robustness figures under their
  own names; none of them is called the harness's statistic);
* :func:`lead`: the figure a record's statistics lead with, as a :class:`Value`;
* :data:`UNIT_WORDS` and :func:`unit_word`: what a counter's unit is called, one rule.

This module reads statistics by field name and imports nothing of the model, so the
model's own ``repr`` can use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

#: The confidence of every interval a figure carries (and of the ranks' intervals).
CONFIDENCE = 0.95
#: Interval fields (low, high, half-width / value) of a figure, read off a Statistics.
Interval = tuple[float | None, float | None, float | None]


@dataclass(frozen=True)
class Figure:
    """One figure of a record, per call.

    Attributes:
        code: its name in the evidence (``Statistics.leading``) and in exports.
        name: how a page names it (``CPU time per call``).
        short: how a narrow table names it (``CPU time``).
        value: the ``Statistics`` field of its value, in counter units per call.
        interval: which 95 % interval goes with it, in words (``bootstrap median``).
        bracket_free: whether the value holds no per-call counter reading (the
            readings around each call add the bracket, 49 ticks on a TSC here).
        can_lead: whether a record may lead with it.
        meaning: one sentence a legend gives.
        interval_of: reads its interval (low, high, half-width / value) off a
            ``Statistics`` (the per-call mean's depends on the statistics version).
        seconds_of: reads its value in seconds, where the statistics hold one.
    """

    code: str
    name: str
    short: str
    value: str
    interval: str
    bracket_free: bool
    can_lead: bool
    meaning: str
    interval_of: Callable[[Any], Interval] = lambda stats: (None, None, None)
    seconds_of: Callable[[Any], float | None] = lambda stats: None


def _fields(low: str, high: str, relative: str) -> Callable[[Any], Interval]:
    return lambda stats: (getattr(stats, low), getattr(stats, high), getattr(stats, relative))


CPU_TIME = Figure(
    code="cpu_time", name="CPU time per call", short="CPU time", value="cpu_time_ticks",
    interval="bootstrap median", bracket_free=True, can_lead=True,
    meaning="the thread's CPU time over an uninstrumented batch of calls / its calls, in "
            "counter units at the trial's counter rate (no per-call counter reading in "
            "it, and it stops while another task holds the CPU); the median over the "
            "trials of the fast speed state",
    interval_of=_fields("cpu_time_ci95_low_ticks", "cpu_time_ci95_high_ticks",
                        "cpu_time_ci95_relative"),
    seconds_of=lambda stats: stats.cpu_time_seconds)
PER_CALL_MEAN = Figure(
    code="per_call_mean", name="per-call mean", short="mean", value="mean_cycles",
    interval="bootstrap mean", bracket_free=False, can_lead=True,
    meaning="Σ per-call counter readings / Σ calls: each call read on its own, so each "
            "carries the counter bracket, and the time other tasks took while it ran",
    interval_of=lambda stats: stats.mean_ci95, seconds_of=lambda stats: stats.mean_seconds)
PER_CALL_MEDIAN = Figure(
    code="per_call_median", name="per-call median", short="median", value="median_cycles",
    interval="log-t of the trial medians", bracket_free=False, can_lead=False,
    meaning="the median of every timed call's reading (bracket included)",
    interval_of=_fields("median_ci95_low_ticks", "median_ci95_high_ticks",
                        "median_ci95_relative"))
BATCH_MEAN = Figure(
    code="batch_mean", name="batch mean", short="batch mean", value="batch_mean_ticks",
    interval="none", bracket_free=True, can_lead=False,
    meaning="Σ counter ticks around the uninstrumented batches / Σ their calls: wall "
            "time, so it holds the time other tasks took on a busy host")

#: Every figure, the leading one first.
FIGURES = (CPU_TIME, PER_CALL_MEAN, PER_CALL_MEDIAN, BATCH_MEAN)
#: Codes older records stored for a figure (statistics version 3 called the per-call
#: mean ``harness_mean``; it was never the harness's own, bracket-free, statistic).
LEGACY_CODES = {"harness_mean": PER_CALL_MEAN.code}
#: Every code ``Statistics.leading`` may hold.
LEADING_CODES = tuple(f.code for f in FIGURES if f.can_lead) + tuple(LEGACY_CODES)

#: The leading-figure rule in one sentence: what the tables and pages say.
LEADING_RULE = ("the CPU-time figure (%s) wherever the trials measured it; else (records "
                "older than statistics version 3, or a runner without the thread's CPU "
                "time) the per-call mean" % CPU_TIME.meaning)


def figure(code: str) -> Figure:
    """The figure of ``code`` (a legacy code reads as its figure).

    Raises:
        KeyError: no figure has that code.
    """
    code = LEGACY_CODES.get(code, code)
    for candidate in FIGURES:
        if candidate.code == code:
            return candidate
    raise KeyError("no figure is called %r (one of: %s)" % (
        code, ", ".join(f.code for f in FIGURES)))


@dataclass(frozen=True)
class Value:
    """A figure's value in one record's statistics, per call.

    Attributes:
        figure: which figure.
        ticks: its value in counter units (``None`` where the record lacks it).
        seconds: the same in seconds where the statistics hold it.
        ci_low, ci_high, ci_relative: its 95 % interval and half-width / value.
    """

    figure: Figure
    ticks: float | None
    seconds: float | None
    ci_low: float | None
    ci_high: float | None
    ci_relative: float | None

    @property
    def code(self) -> str:
        """The figure's code."""
        return self.figure.code

    @property
    def name(self) -> str:
        """The figure's name."""
        return self.figure.name

    def per_byte(self, message_bytes: int) -> float | None:
        """The value per message byte."""
        return self.ticks / message_bytes if self.ticks is not None and message_bytes \
            else None

    def megabytes_per_second(self, message_bytes: int) -> float | None:
        """Decimal MB per second of the value in seconds."""
        return message_bytes / self.seconds / 1e6 if self.seconds else None


def value(stats: Any, which: Figure) -> Value:
    """``which`` figure's :class:`Value` in ``stats`` (a ``Statistics``)."""
    low, high, relative = which.interval_of(stats)
    return Value(which, getattr(stats, which.value), which.seconds_of(stats), low, high,
                 relative)


def leading_figure(stats: Any) -> Figure:
    """The figure ``stats`` leads with: the one it stored (``Statistics.leading``) where
    it holds its value, else the per-call mean (records before version 3)."""
    if stats.leading is not None:
        stored = figure(stats.leading)
        if getattr(stats, stored.value) is not None:
            return stored
    return PER_CALL_MEAN


def lead(stats: Any) -> Value:
    """The value ``stats`` leads with: what every view shows first."""
    return value(stats, leading_figure(stats))


def core_cycles_per_byte(stats: Any, message_bytes: int) -> float | None:
    """The leading figure in core cycles per byte: an estimate, its value × the trials'
    estimate of core cycles per tick (``Statistics.core_cycles_per_tick``), where no PMU
    counted them; ``None`` without that estimate."""
    lead_ticks = lead(stats).ticks
    factor = stats.core_cycles_per_tick
    if lead_ticks is None or factor is None or not message_bytes:
        return None
    return lead_ticks * factor / message_bytes


def uncertainty(record: Any) -> str | None:
    """Why ``record``'s leading figure is uncertain, or ``None``: fewer trials of the
    fast speed state than the job planned, because its budget of further trials ran out
    (its process drew the host's slow state too often)."""
    stats, planned = record.statistics, record.plan.trials_planned
    left_out = stats.left_out_trials or ()
    fast = stats.trials - len(left_out)
    if not left_out or fast >= planned:
        return None
    return ("only %d of the %d planned trials ran in the host's fast speed state (%d left "
            "out, and the job's budget of further trials ran out): the figure rests on "
            "fewer processes than planned" % (fast, planned, len(left_out)))


def _by_frequency(records: Iterable[Any]) -> list[Figure]:
    counts: dict[Figure, int] = {}
    for record in records:
        led = leading_figure(record.statistics)
        counts[led] = counts.get(led, 0) + 1
    return sorted(counts, key=lambda led: -counts[led])


def main_figure(records: Iterable[Any]) -> Figure:
    """The figure most of ``records`` lead with (the CPU-time figure for none)."""
    return next(iter(_by_frequency(records)), CPU_TIME)


def leading_words(records: Iterable[Any]) -> str:
    """The figures ``records`` lead with, in words, the most frequent first:
    ``CPU time per call`` or ``CPU time per call (per-call mean where not measured)``."""
    names = [led.name for led in _by_frequency(records)]
    if len(names) <= 1:
        return names[0] if names else CPU_TIME.name
    return "%s (%s where not measured)" % (names[0], ", ".join(names[1:]))


#: What each counter unit (``Trial.unit``) is called in tables and legends.
UNIT_WORDS = {"tsc-ticks": "ticks", "timer-ticks": "ticks", "core-cycles": "core cycles",
              "ns": "ns"}


def unit_word(units: Iterable[str]) -> str:
    """The word for figures in ``units`` (the trials' ``unit``): their one word where
    they share it, else ``ticks``."""
    words = {UNIT_WORDS.get(unit, unit) for unit in units}
    return words.pop() if len(words) == 1 else "ticks"
