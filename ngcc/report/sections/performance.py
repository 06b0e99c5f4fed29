"""Section 4 of a candidate page (performance): a row per record as on the seed pages,
each of its record's leading figure (``evidence.figures.lead``), the same number every
other view shows first; a ``figure`` column only where the page's records lead with
different figures (records of older ngcc versions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.evidence import figures as _figures
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
#: Section 4 when the page's records lead with different figures: which one each row is.
MIXED_COLUMNS = ("instance", "message", "figure", "cycles", "cycles/byte", "time", "MB/s",
                 "n")


def performance_row(record: Record) -> tuple[str, ...]:
    """One row of section 4, formatted as on the seed pages: the record's leading
    figure per call and per byte, in time and in MB/s, and the calls."""
    lead, n = record.statistics.figure, record.message_bytes
    uncertain = " (uncertain)" if _figures.uncertainty(record) else ""
    return (instance_label(record), _format.message(n), _format.cycles(lead.ticks) + uncertain,
            _format.cycles_per_byte(lead.per_byte(n)), _format.duration(lead.seconds),
            _format.megabytes_per_second(lead.megabytes_per_second(n)),
            _format.call_count(_analysis.calls_per_trial(record)))


def mixed_row(record: Record) -> tuple[str, ...]:
    """A row of section 4 that names its figure (:data:`MIXED_COLUMNS`)."""
    row = performance_row(record)
    return (*row[:2], record.statistics.figure.figure.short, *row[2:])


def legend(records: Sequence[Record]) -> str:
    """What section 4's figures are, under its table: each figure the rows lead with."""
    shown: list[_figures.Figure] = []
    for record in records:
        figure = _figures.leading_figure(record.statistics)
        if figure not in shown:
            shown.append(figure)
    which = "; ".join("the %s: %s" % (f.name, f.meaning) for f in shown)
    lead = ("Each row leads with %s." % which if len(shown) == 1 else
            "Each row leads with the figure its `figure` column names (%s)." % which)
    return (lead + " Cycles are counter ticks per call and per byte; time per call and MB/s "
            "(10⁶ bytes per second) are of the same figure; the other figures are in the "
            "robustness table below.")


CALLS_LEGEND = "n: calls in total (trials × calls per trial), each trial a fresh process."
UNCERTAIN_LEGEND = ("(uncertain): fewer trials than planned ran in the host's fast speed "
                    "state; the flags below say which.")


def performance(run: Run, records: Sequence[Record]) -> list[str]:
    """Section 4: the seed's table of each record's leading figure and one legend."""
    lines = ["## " + SECTION_TITLES[3], ""]
    mixed = len({_figures.leading_figure(r.statistics) for r in records}) > 1
    lines += by_host(MIXED_COLUMNS if mixed else PERFORMANCE_COLUMNS, records,
                     mixed_row if mixed else performance_row, run=run)
    uncertain = UNCERTAIN_LEGEND + " " if any(_figures.uncertainty(r) for r in records) \
        else ""
    lines += [f"{legend(records)} {uncertain}{CALLS_LEGEND}", ""]
    return lines  # the jobs not measured are said once, at the top of the page
