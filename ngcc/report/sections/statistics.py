"""The statistics beyond the guide's structure, after section 4: the CI of each mean,
the median and the ratio to pseudoXOF (with the trial flags and the plot links), the
robust statistics and the observer effect (statistics version 2), and the CPU-time
figures (statistics version 3)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.evidence.model import Record, plot_stem_cpb, plot_stem_distribution
from ngcc.report import verdict as _verdict
from ngcc.report.sections.common import by_host, code, instance_label
from ngcc.report.sections.failures import flag_lines
from ngcc.report.tables import markdown_table
from ngcc.stats import groups as _analysis

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

EXTRA_TITLE = "Additional statistics (beyond the guide's structure)"

EXTRA_COLUMNS = ("instance", "message", "mean cycles", "95 % CI of the mean ({})",
                 "CI half-width", "median cycles/call", "× pseudoXOF")


def confidence_interval(record: Record) -> str:
    """``2.10 k – 2.14 k``: the 95 % CI of the mean (the bootstrap interval, which
    cannot go below zero, in statistics of version 2; else the t interval), or — for a
    single trial."""
    low, high, _ = record.statistics.mean_ci95
    if low is None or high is None:
        return _format.MISSING
    return f"{_format.cycles(max(low, 0.0))} – {_format.cycles(high)}"  # counts are >= 0


def extra_row(records: Sequence[Record], record: Record) -> tuple[str, ...]:
    """One row of the additional statistics: CI, median, ratio to pseudoXOF."""
    stats = record.statistics
    half = stats.mean_ci95[2]
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.mean_cycles), confidence_interval(record),
            "± " + _format.percent(half) if half is not None else _format.MISSING,
            _format.cycles(stats.median_cycles),
            f"{_format.MISSING} (the baseline itself)"
            if _analysis.baseline_record(records, record) is record  # built-in only
            else _format.ratio(_analysis.baseline_ratio(records, record)))


def additional_statistics(run: Run, candidate: str, records: Sequence[Record],
                          plotted: frozenset[str]) -> list[str]:
    method = ("percentile bootstrap of the trial means, never below zero; see below"
              if any(r.statistics.version >= 2 for r in records)
              else "t distribution, n = trials; the trials are the independent samples")
    lines = ["## " + EXTRA_TITLE, "",
             "Not part of the seed pages. 95 % CI: confidence interval of the mean across "
             f"trials ({method}). "
             "CI half-width: relative to the mean of trial means. Median: of all calls "
             "pooled. × pseudoXOF: mean cycles over those of pseudoXOF of the same output "
             f"width at the same length in this run ({_format.MISSING} when that baseline "
             "was not measured).", ""]
    kind = "bootstrap" if any(r.statistics.version >= 2 for r in records) else "t"
    columns = [column.format(kind) for column in EXTRA_COLUMNS]
    lines += by_host(columns, records, lambda r: extra_row(run.records, r), run=run)
    if len(_analysis.hosts(run.records)) > 1:
        lines += [f"× pseudoXOF is {_format.MISSING} also where the baseline was measured "
                  "on another host: no ratio is taken across hosts.", ""]
    lines += flag_lines(records)
    return lines + _plot_links(candidate, records, plotted)


def _plot_links(candidate: str, records: Sequence[Record], plotted: frozenset[str]
                ) -> list[str]:
    """The candidate's cycles/byte plot and the links to its distributions: only those
    drawn (nothing when no plot was)."""
    lines = []
    cpb = plot_stem_cpb(candidate)
    if cpb in plotted:
        lines += [f"![cycles/byte of {candidate}]({cpb}.png)", "",
                  f"Cycles/byte against message length ({code(cpb + '.svg')} as SVG).", ""]
    links = [f"[{code(r.label)} {_format.message(r.message_bytes)}]({stem}.png)"
             for r in _analysis.distribution_records(records)
             if (stem := plot_stem_distribution(r.label, r.message_bytes)) in plotted]
    if links:
        lines += ["Per-call distributions: " + ", ".join(links) + ".", ""]
    return lines

ROBUST_TITLE = "Robust statistics and the observer effect"
CPU_TIME_TITLE = "CPU-time figures (beyond the guide's structure)"
ROBUST_COLUMNS = ("instance", "message", "per-call mean", "95 % CI (bootstrap)", "median",
                  "95 % CI of the median (log-t)", "batch mean", "observer effect",
                  "core cycles/byte", "flags")


def robust_row(record: Record) -> tuple[str, ...]:
    """One row of the robust statistics (statistics version 2)."""
    stats = record.statistics

    def interval(low: float | None, high: float | None) -> str:
        if low is None or high is None:
            return _format.MISSING
        return f"{_format.cycles(low)} – {_format.cycles(high)}"

    effect = _verdict.observer_text(record)  # of the undisturbed trials only
    codes = Counter(flag.code for flag in stats.flags)
    flags = ", ".join(f"{n} {code}" for code, n in codes.items())
    if record.rejected_trials:
        flags += (", " if flags else "") + f"{len(record.rejected_trials)} rejected (--strict)"
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.per_call_mean_ticks),
            interval(stats.mean_bootstrap_ci95_low_ticks, stats.mean_bootstrap_ci95_high_ticks),
            _format.cycles(stats.median_cycles),
            interval(stats.median_ci95_low_ticks, stats.median_ci95_high_ticks),
            _format.cycles(stats.batch_mean_ticks), effect,
            _format.cycles_per_byte(stats.core_cycles_per_byte), flags or _format.MISSING)


def robust_statistics(records: Sequence[Record]) -> list[str]:
    """The figures of statistics version 2 (engineer "numbers"); nothing for a run
    written before them, so its pages stay as they were."""
    newer = [r for r in records if r.statistics.version >= 2]
    if not newer:
        return []
    return ["## " + ROBUST_TITLE, "",
            "Counter ticks unless named core cycles. Per-call mean: the mean of the trial "
            "means (each trial, a fresh process, is one sample; the harness mean of "
            "section 4 pools the calls instead). Its 95 % CI: percentile bootstrap of the "
            "trial means (4000 resamples from a fixed seed). Median: of all calls pooled; "
            "its 95 % CI: t interval of the logarithms of the trial medians (positive by "
            "construction). Batch mean: the same calls timed in a loop without per-call "
            "counter readings; observer effect: the median over the undisturbed trials "
            "(no flag) of each trial's per-call mean − its own batch mean (— where every "
            "trial was disturbed). Core "
            "cycles/byte: the harness mean converted with each trial's estimate of core "
            "cycles per tick. Flags: trials by kind (slow_trial, fast_trial, preempted, "
            "counter_rate); rejected: trials --strict measured again.", "",
            *markdown_table(ROBUST_COLUMNS, [robust_row(r) for r in newer]), ""]

CPU_TIME_COLUMNS = ("instance", "message", "CPU time/call", "95 % CI (bootstrap median)",
                    "per-call loop CPU time/call", "CPU time/byte", "leads")


def cpu_time_row(record: Record) -> tuple[str, ...]:
    """One row of the CPU-time figures (statistics version 3)."""
    stats = record.statistics
    interval = (_format.MISSING if stats.cpu_time_ci95_low_ticks is None
                or stats.cpu_time_ci95_high_ticks is None else
                f"{_format.cycles(stats.cpu_time_ci95_low_ticks)} – "
                f"{_format.cycles(stats.cpu_time_ci95_high_ticks)}")
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.cpu_time_ticks), interval,
            _format.cycles(stats.loop_cpu_time_ticks),
            _format.cycles_per_byte(stats.cpu_time_per_byte),
            _analysis.leading(stats).name)


def cpu_time_table(records: Sequence[Record]) -> list[str]:
    """The CPU-time figures of statistics version 3; nothing for older records."""
    newer = [r for r in records if r.statistics.version >= 3]
    if not newer:
        return []
    return ["## " + CPU_TIME_TITLE, "",
            "CPU time/call: the thread's CPU time over the uninstrumented batch / its "
            "calls, in counter ticks at each trial's counter rate, "
            "the median of the trials (a fresh process slow as a whole cannot move it); its "
            "95 % CI: percentile bootstrap of that median across the trials (4000 resamples "
            "from a fixed seed). Per-call loop: the same over the loop "
            "of timed calls, brackets included. Leads: the figure section 4 leads with: "
            f"{_analysis.LEADING_RULE}.", "",
            *markdown_table(CPU_TIME_COLUMNS, [cpu_time_row(r) for r in newer]), ""]
