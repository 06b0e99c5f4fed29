"""The field summary page of a run, like the harness's summary table.

One row per library of the run, whatever the number of candidates: its candidate
(linked to the candidate's page) and algorithm from the registry, its KAT verdict,
and the mean cycles at 32 B, 1024 B and 65536 B, each with its ratio to the pseudoXOF
baseline of the same output width measured in the run. The page is a pure function
of the run directory, as every page of ``_report``, whose Markdown pieces it uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ngcc import _analysis, _format, _report
from ngcc._model import BuildEntry, Record, page_name

if TYPE_CHECKING:
    from ngcc._run import Run

FIELD_PAGE = "field.md"
FIELD_LENGTHS = (32, 1024, 65536)
"""The message lengths of the field summary: short, medium and long messages."""


def index_line() -> str:
    """The index page's sentence that links the field summary."""
    lengths = ", ".join(_format.message(n) for n in FIELD_LENGTHS)
    return (f"Mean cycles at {lengths} with × pseudoXOF and the KAT verdict of every "
            f"instance: [field summary]({FIELD_PAGE}).")


def columns() -> tuple[str, ...]:
    """The field table's columns: who, the KAT verdict, then per length mean cycles and
    the ratio to pseudoXOF."""
    per_length = [(f"{_format.message(n)} mean cycles", f"{_format.message(n)} × pseudoXOF")
                  for n in FIELD_LENGTHS]
    return ("candidate", "algorithm", "instance", "KAT",
            *[name for pair in per_length for name in pair])


def field_rows(run: Run, records: Sequence[Record]) -> list[tuple[str, ...]]:
    """One row per library of the run, in plan order, from ``records`` (one host's)."""
    builds = {b.label: b for b in run.build_entries}
    by_label: dict[str, dict[int, Record]] = {}
    for record in records:
        by_label.setdefault(record.label, {})[record.message_bytes] = record
    labels = [lib.label for lib in run.plan.libraries]
    labels += [label for label in by_label if label not in labels]
    rows = []
    for label in labels:
        measured = by_label.get(label, {})
        build = builds.get(label)
        first = next(iter(measured.values()), None)
        candidate = first.candidate if first is not None else _candidate(run, label, build)
        kat = first.kat if first is not None else build.kat if build is not None else None
        cells: list[str] = []
        for length in FIELD_LENGTHS:
            at = measured.get(length)
            cells += ([_format.cycles(at.statistics.mean_cycles),
                       _format.ratio(_analysis.baseline_ratio(run.records, at))]
                      if at is not None else [_format.MISSING, _format.MISSING])
        shown = _report.instance_label(first) if first is not None else _report.code(label)
        rows.append((f"[{candidate}]({page_name(candidate)})",
                     _report.candidate_title(candidate, list(measured.values()),
                                             [build] if build is not None else [])
                     or _format.MISSING, shown, _report.kat_cell(kat), *cells))
    return rows


def _candidate(run: Run, label: str, build: BuildEntry | None) -> str:
    if build is not None:
        return build.candidate
    return next(lib.candidate for lib in run.plan.libraries if lib.label == label)


def field_page(run: Run) -> str:
    """The run's field summary page (:data:`FIELD_PAGE`)."""
    lines = _report.run_page_head(run, "field summary")
    lines += _report.failure_banner(run.jobs)
    lines += ["One row per instance: mean cycles per call (all counter ticks of all timed "
              "calls / calls, as section 4 of the candidate pages) at "
              + ", ".join(_format.message(n) for n in FIELD_LENGTHS)
              + "; × pseudoXOF: over pseudoXOF of the same output width at the same length "
              f"in this run ({_format.MISSING} where it was not measured); KAT: the gate's "
              "verdict. The candidate links to its page.", ""]
    lines += _report._by_host(columns(), run.records, None,
                                   lambda records: field_rows(run, records), run=run)
    lines += [f"Candidate pages: [index]({_report.INDEX_PAGE}); cycles/byte at every length: "
              f"[summary]({_report.SUMMARY_PAGE}).", ""]
    return "\n".join(lines) + "\n"
