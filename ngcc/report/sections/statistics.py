"""The robustness figures, after section 4 and beyond the guide's structure: one table
with a row per record that says what section 4 does not (the 95 % CI of the mean, the
per-call median and its CI, the CPU-time figure, the batch mean and the observer effect,
core cycles, the ratio to pseudoXOF, the flagged trials), each figure once; then the
trial flags and the links to the plots.

A column is shown only where a record of the page has its figure (statistics version 2
added the bootstrap and median intervals, the batch mean and core cycles; version 3 the
CPU-time figure), so an old run's page has the columns its evidence holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.evidence.model import Record, plot_stem_cpb, plot_stem_distribution
from ngcc.report import verdict as _verdict
from ngcc.report.sections.common import (
    baseline_sentence,
    by_host,
    code,
    instance_label,
)
from ngcc.report.sections.failures import flag_lines
from ngcc.stats import groups as _analysis

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

ROBUSTNESS_TITLE = "Robustness figures (beyond the guide's structure)"


def confidence_interval(record: Record) -> str:
    """``2.10 k – 2.14 k``: the 95 % CI of the mean (the bootstrap interval, which
    cannot go below zero, in statistics of version 2; else the t interval), or — for a
    single trial."""
    low, high, _ = record.statistics.mean_ci95
    if low is None or high is None:
        return _format.MISSING
    return f"{_format.cycles(max(low, 0.0))} – {_format.cycles(high)}"  # counts are >= 0


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else \
        f" ({_format.cycles(low)} – {_format.cycles(high)})"


def mean_ci_cell(record: Record) -> str:
    """``1968 – 2318 (± 8.40 %)``: the CI of the mean and its half-width relative to the
    per-call mean, which is named (``± 8.40 % of 2090``) only where it reads otherwise
    than section 4's harness mean (trials of unequal calls)."""
    stats = record.statistics
    interval, half = confidence_interval(record), stats.mean_ci95[2]
    if half is None:
        return interval
    centre = stats.per_call_mean_ticks
    differs = centre is not None and _format.cycles(centre) != _format.cycles(stats.mean_cycles)
    return f"{interval} (± {_format.percent(half)}" + (
        f" of {_format.cycles(centre)})" if differs else ")")


def median_cell(record: Record) -> str:
    """``1930 (1789 – 2054)``: the median of all calls, with its CI where computed."""
    stats = record.statistics
    return _format.cycles(stats.median_cycles) + _interval(stats.median_ci95_low_ticks,
                                                           stats.median_ci95_high_ticks)


def cpu_time_cell(record: Record) -> str:
    """``1914 (1899 – 1929), loop 2023``: the CPU-time figure, its CI, and the same over
    the loop of timed calls (statistics version 3)."""
    stats = record.statistics
    if stats.cpu_time_ticks is None:
        return _format.MISSING
    loop = (f", loop {_format.cycles(stats.loop_cpu_time_ticks)}"
            if stats.loop_cpu_time_ticks is not None else "")
    return _format.cycles(stats.cpu_time_ticks) + _interval(
        stats.cpu_time_ci95_low_ticks, stats.cpu_time_ci95_high_ticks) + loop


def batch_cell(record: Record) -> str:
    """``1962; -0.5 (-0.02 %) (2 of 3 trials)``: the batch mean, then the observer
    effect of the undisturbed trials (``report.verdict.observer_text``)."""
    batch = record.statistics.batch_mean_ticks
    if batch is None:
        return _format.MISSING
    return f"{_format.cycles(batch)}; {_verdict.observer_text(record)}"


def ratio_cell(run_records: Sequence[Record], record: Record) -> str:
    """The mean over pseudoXOF's of the same width and length in the run."""
    if _analysis.baseline_record(run_records, record) is record:  # the built-in only
        return f"{_format.MISSING} (the baseline itself)"
    return _format.ratio(_analysis.baseline_ratio(run_records, record))


def flags_cell(record: Record) -> str:
    """``1 slow_trial, 2 slow_process, 1 rejected (--strict)``: the flagged trials by kind."""
    counts = Counter(flag.code for flag in record.statistics.flags)
    words = [f"{n} {kind}" for kind, n in counts.items()]
    if record.rejected_trials:
        words.append(f"{len(record.rejected_trials)} rejected (--strict)")
    return ", ".join(words) or _format.MISSING


@dataclass(frozen=True)
class Column:
    """A column of the robustness table: its header, its cell, whether a page's records
    call for it, and the legend's words for it."""

    header: str
    cell: Callable[[Record], str]
    shown: Callable[[Sequence[Record]], bool]
    legend: str


def _any(field: str) -> Callable[[Sequence[Record]], bool]:
    return lambda records: any(getattr(r.statistics, field) is not None for r in records)


def columns(run: Run, records: Sequence[Record]) -> list[Column]:
    """The columns of the robustness table for ``records``, in order, each shown only
    where a record has its figure."""
    bootstrap = any(r.statistics.version >= 2 for r in records)
    mean_ci = ("percentile bootstrap of the trial means (4000 resamples, fixed seed)"
               if bootstrap else "t distribution, n = trials")
    every = [
        Column("95 % CI of the mean (" + ("bootstrap" if bootstrap else "t") + ")",
               mean_ci_cell, lambda _: True,
               f"95 % CI of the mean: {mean_ci}, ± its half-width over the mean of the "
               "trial means"),
        Column("median (95 % CI)" if bootstrap else "median", median_cell, lambda _: True,
               "Median: of all calls pooled" + (", its CI a t interval of the logarithms "
                                                "of the trial medians" if bootstrap else "")),
        Column("CPU time/call (95 % CI)", cpu_time_cell, _any("cpu_time_ticks"),
               "CPU time/call: the thread's CPU time over the uninstrumented batch / its "
               "calls, the median of the trials, its CI a bootstrap of that median; loop: "
               "the same over the timed calls, brackets included"),
        Column("batch mean; observer effect", batch_cell, _any("batch_mean_ticks"),
               "Batch mean: the calls timed without per-call readings; observer effect: "
               "the median over the undisturbed trials of per-call mean − batch mean"),
        Column("core cycles/byte", lambda r: _format.cycles_per_byte(
            r.statistics.core_cycles_per_byte), _any("core_cycles_per_byte"),
               "Core cycles/byte: section 4's mean in core cycles (each trial's core "
               "cycles per tick)"),
        Column("× pseudoXOF", lambda r: ratio_cell(run.records, r), lambda _: True,
               baseline_sentence(run.records)),
        Column("flags", flags_cell,
               lambda rs: any(r.statistics.flags or r.rejected_trials for r in rs),
               "Flags: the trials flagged, by kind, the worst of each below; rejected: "
               "repeated by --strict"),
    ]
    return [column for column in every if column.shown(records)]


def robustness(run: Run, candidate: str, records: Sequence[Record],
               plotted: frozenset[str]) -> list[str]:
    """The robustness section: its legend, the table, the trial flags, the plot links
    (nothing when the page has no record)."""
    if not records:
        return []
    shown = columns(run, records)
    legend = "".join(f" {column.legend}." for column in shown)
    core = " unless named core cycles" if any("core" in c.header for c in shown) else ""
    lines = ["## " + ROBUSTNESS_TITLE, "",
             f"Not part of the seed pages. Counter ticks{core}; each trial, a fresh "
             f"process, is one sample.{legend}", ""]
    lines += by_host(("instance", "message", *(c.header for c in shown)), records,
                     lambda r: (instance_label(r), _format.message(r.message_bytes),
                                *(c.cell(r) for c in shown)), run=run)
    if len(_analysis.hosts(run.records)) > 1:
        lines += [f"× pseudoXOF is {_format.MISSING} also where the baseline was measured "
                  "on another host: no ratio is taken across hosts.", ""]
    lines += flag_lines(records)
    return lines + _plot_links(candidate, records, plotted)


def _plot_links(candidate: str, records: Sequence[Record], plotted: frozenset[str]
                ) -> list[str]:
    """The candidate's cycles/byte plot and one line for its SVG and the links to its
    distributions: only those drawn (nothing when no plot was)."""
    lines, said = [], []
    cpb = plot_stem_cpb(candidate)
    if cpb in plotted:
        lines += [f"![cycles/byte of {candidate}]({cpb}.png)", ""]
        said.append(f"Cycles/byte against message length ({code(cpb + '.svg')} as SVG)")
    links = [f"[{code(r.label)} {_format.message(r.message_bytes)}]({stem}.png)"
             for r in _analysis.distribution_records(records)
             if (stem := plot_stem_distribution(r.label, r.message_bytes)) in plotted]
    if links:
        said.append(("per-call" if said else "Per-call") + " distributions: "
                    + ", ".join(links))
    return lines + (["; ".join(said) + ".", ""] if said else [])
