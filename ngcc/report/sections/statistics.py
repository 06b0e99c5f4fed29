"""The robustness figures, after section 4 and beyond the guide's structure: one table
with a row per record that says what section 4 does not (the 95 % CI of the leading
figure and the trials left out of it, the per-call mean and median with their CIs, the
batch mean and the observer effect, the leading figure in core cycles, the ratio to
pseudoXOF, the flagged trials), each figure once; then the trial flags and the links to
the plots.

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
from ngcc.evidence import figures as _figures
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


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else \
        f" ({_format.cycles(low)} – {_format.cycles(high)})"


def mean_ci_cell(record: Record) -> str:
    """``2090 (1968 – 2318)``: the per-call mean and the CI of the mean of the trial
    means."""
    low, high, _ = record.statistics.mean_ci95
    return _format.cycles(record.statistics.mean_cycles) + _interval(
        max(low, 0.0) if low is not None else None, high)


def median_cell(record: Record) -> str:
    """``1930 (1789 – 2054)``: the median of all calls, with its CI where computed."""
    stats = record.statistics
    return _format.cycles(stats.median_cycles) + _interval(stats.median_ci95_low_ticks,
                                                           stats.median_ci95_high_ticks)


def lead_ci_cell(record: Record) -> str:
    """``1899 – 1929 (± 0.80 %); 2 of 7 trials left out``: the 95 % CI of the leading
    figure (section 4's), and the trials of the slow speed state left out of it."""
    lead = record.statistics.figure
    cell = _format.MISSING if lead.ci_low is None or lead.ci_high is None else \
        f"{_format.cycles(lead.ci_low)} – {_format.cycles(lead.ci_high)} " \
        f"(± {_format.percent(lead.ci_relative)})"
    left_out = record.statistics.left_out_trials
    if left_out:
        cell += f"; {len(left_out)} of {record.statistics.trials} trials left out"
    return cell


def core_cell(record: Record) -> str:
    """``419.3 (spread 0.4 %)``: the leading figure in core cycles per byte, an
    estimate, and the spread of the trials' estimates of core cycles per tick."""
    stats = record.statistics
    cell = _format.cycles_per_byte(_figures.core_cycles_per_byte(stats, record.message_bytes))
    if stats.core_cycles_per_tick_spread is not None:
        cell += f" (spread {_format.percent(stats.core_cycles_per_tick_spread)})"
    return cell


def loop_cell(record: Record) -> str:
    """The CPU time per call over the timed loop (brackets included), version 3 on."""
    return _format.cycles(record.statistics.loop_cpu_time_ticks)


def batch_cell(record: Record) -> str:
    """``1962; -0.5 (-0.02 %) (2 of 3 trials)``: the batch mean, then the observer
    effect of the undisturbed trials (``report.verdict.observer_text``)."""
    batch = record.statistics.batch_mean_ticks
    if batch is None:
        return _format.MISSING
    return f"{_format.cycles(batch)}; {_verdict.observer_text(record)}"


def ratio_cell(run_records: Sequence[Record], record: Record) -> str:
    """The leading figure over pseudoXOF's of the same width and length in the run."""
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
        Column("95 % CI of the figure", lead_ci_cell, lambda _: True,
               "95 % CI of the figure: its interval over the trials (the CPU-time "
               "figure's: a bootstrap of the median of the fast-state trials), and the "
               "trials of the host's slow speed state left out of it"),
        Column("per-call mean (95 % CI)", mean_ci_cell, lambda _: True,
               f"Per-call mean: {_figures.PER_CALL_MEAN.meaning}; its CI: {mean_ci}"),
        Column("median (95 % CI)" if bootstrap else "median", median_cell, lambda _: True,
               "Median: of all calls pooled" + (", its CI a t interval of the logarithms "
                                                "of the trial medians" if bootstrap else "")),
        Column("CPU time/call over the loop", loop_cell, _any("loop_cpu_time_ticks"),
               "CPU time/call over the loop: the thread's CPU time over the timed calls, "
               "brackets included (the median of the trials)"),
        Column("batch mean; observer effect", batch_cell, _any("batch_mean_ticks"),
               "Batch mean: the calls timed without per-call readings (wall time); "
               "observer effect: the median over the undisturbed trials of per-call mean "
               "− batch mean"),
        Column("core cycles/byte (estimate)", core_cell, _any("core_cycles_per_tick"),
               "Core cycles/byte (estimate): section 4's figure × the trials' estimate of "
               "core cycles per counter tick (no PMU counted them), and the spread of "
               "those estimates ((max − min) / median)"),
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
