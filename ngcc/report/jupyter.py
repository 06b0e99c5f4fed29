"""How Jupyter shows a run and a record (``Run._repr_html_``, ``RunRecord._repr_html_``):
HTML tables of the rows of report section 4 (``report.sections.performance``), so a
notebook shows what the report page says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.base import untrusted as _untrusted
from ngcc.evidence.model import Record
from ngcc.report.sections.common import kat_cell
from ngcc.report.sections.performance import PERFORMANCE_COLUMNS, performance_row
from ngcc.report.sections.statistics import lead_ci_cell, mean_ci_cell

if TYPE_CHECKING:
    from ngcc.evidence.run import Run


def record_html(record: Record) -> str:
    """An HTML table of one record: the section 4 row (its leading figure, named), its
    CI, the per-call mean and median, the KAT verdict and the implementation timed."""
    rows = [("figure", record.statistics.figure.name)]
    rows += list(zip(PERFORMANCE_COLUMNS, performance_row(record), strict=True))
    rows += [("95 % CI of the figure", lead_ci_cell(record)),
             ("per-call mean (95 % CI)", mean_ci_cell(record)),
             ("median cycles/call", _format.cycles(record.statistics.median_cycles)),
             ("KAT", kat_cell(record.kat))]
    if record.implementation.description:
        rows += [("implementation", record.implementation.description)]
    body = "".join(f"<tr><th style='text-align:left'>{_html(k)}</th>"
                   f"<td style='text-align:right'>{_html(v)}</td></tr>" for k, v in rows)
    return f"<table><caption>{_html(record.candidate)} record</caption>{body}</table>"


def run_html(run: Run) -> str:
    """An HTML table of a run: the section 4 rows of every record."""
    head = "".join(f"<th>{_html(c)}</th>" for c in PERFORMANCE_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{_html(v)}</td>" for v in performance_row(r))
                   + "</tr>" for r in run.records)
    caption = f"run {run.run_id}: {len(run.records)}/{len(run.jobs)} jobs measured"
    return (f"<table><caption>{_html(caption)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def _html(text: object) -> str:
    return _untrusted.html(str(text).replace("`", ""))
