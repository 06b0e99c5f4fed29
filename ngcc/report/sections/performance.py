"""Section 4 of a candidate page (performance): a row per record as on the seed pages,
or, where trials were preempted, led by the CPU-time figure with the harness mean
beside it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.evidence.model import Record
from ngcc.report.sections.common import (
    SECTION_TITLES,
    by_host,
    instance_label,
)
from ngcc.stats import groups as _analysis

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

PERFORMANCE_COLUMNS = ("instance", "message", "mean cycles", "cycles/byte", "mean time",
                       "MB/s", "n")
#: Section 4 when a record of the page leads with the CPU-time figure: the figure each
#: row leads with, then the harness mean beside it under its own name.
LEADING_COLUMNS = ("instance", "message", "figure", "cycles", "cycles/byte", "time",
                   "MB/s", "harness mean", "n")


def performance_row(record: Record) -> tuple[str, ...]:
    """One row of section 4, formatted as on the seed pages."""
    stats = record.statistics
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.mean_cycles), _format.cycles_per_byte(stats.cycles_per_byte),
            _format.duration(stats.mean_seconds), _format.megabytes_per_second(stats.mb_per_s),
            _format.call_count(_analysis.calls_per_trial(record)))


def leading_row(record: Record) -> tuple[str, ...]:
    """One row of section 4 on a disturbed host: the record's leading figure
    (``stats.groups.leading``), then its harness mean."""
    stats, lead = record.statistics, _analysis.leading(record.statistics)
    n = record.message_bytes
    return (instance_label(record), _format.message(n), lead.name, _format.cycles(lead.ticks),
            _format.cycles_per_byte(lead.ticks / n), _format.duration(lead.seconds),
            _format.megabytes_per_second(n / lead.seconds / 1e6 if lead.seconds else None),
            _format.cycles(stats.mean_cycles),
            _format.call_count(_analysis.calls_per_trial(record)))


def leads_with_cpu_time(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if _analysis.leading(r.statistics).code == "cpu_time"]


#: What section 4's figures are, under its table.
HARNESS_LEGEND = ("Mean cycles: all counter ticks of all timed calls / number of calls (the "
                  "harness mean; counter overhead included). Mean time and MB/s (10⁶ bytes "
                  "per second) from wall-clock time.")
#: The same where some rows lead with the CPU-time figure (the verdict above counts them).
LEADING_LEGEND = ("Figure: what the row's cycles, cycles/byte, time and MB/s are: the "
                  "CPU-time figure where a trial of the job was preempted (the thread's CPU "
                  "time over the uninstrumented batch / its calls, in counter ticks at the "
                  "trial's counter rate; it stops while another task holds the CPU), else "
                  "the harness mean (all counter ticks of all timed calls / number of "
                  "calls, counter overhead included, which holds the time other tasks "
                  "took; time from wall-clock time), shown beside every row.")
CALLS_LEGEND = "n: calls in total (trials × calls per trial), each trial a fresh process."


def performance(run: Run, records: Sequence[Record]) -> list[str]:
    """Section 4: the seed's table (led by the CPU-time figure where trials were
    preempted) and one legend under it."""
    lines = ["## " + SECTION_TITLES[3], ""]
    if leads_with_cpu_time(records):
        lines += by_host(LEADING_COLUMNS, records, leading_row, run=run)
        lines += [f"{LEADING_LEGEND} {CALLS_LEGEND}", ""]
    else:
        lines += by_host(PERFORMANCE_COLUMNS, records, performance_row, run=run)
        lines += [f"{HARNESS_LEGEND} {CALLS_LEGEND}", ""]
    return lines  # the jobs not measured are said once, at the top of the page
