"""What every section and page shares: the guide's section titles, the ⚠ mark, code
spans, the instance and KAT cells, the candidate's title, counts of things, the time of
a campaign, tables split by host, and an analysis's column in the tables of libraries."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.base import untrusted as _untrusted
from ngcc.evidence.model import BuildEntry, KatFacts, Record
from ngcc.library.candidates import title as registry_title
from ngcc.report import host as _host_words
from ngcc.report.tables import markdown_table
from ngcc.stats import groups as _analysis

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

SECTION_TITLES = (
    "1. Basic information",
    "2. Assessment environment",
    "3. Functional testing (KAT)",
    "4. Performance",
    "5. Resource consumption",
    "7. Raw evidence index",
)

WARNING = "⚠"


def code(text: str) -> str:
    """Inline code, as the seeds show instance names and files: `` `Wish512` ``; any
    text, a library's included, stays literal (``base.untrusted.markdown``)."""
    return _untrusted.markdown(text) or "``"


def utc(stamp: str | None) -> str:
    """``2026-09-25T10:02:21Z`` as the seeds show it (no ``Z``; the header says UTC)."""
    return stamp.rstrip("Z") if stamp else "not finished"


def instance_label(record: Record) -> str:
    """The library as the tables show it: its label (`` `Wish512` ``,
    `` `Pavelor-512@perf` ``), plus ⚠ when timed without a KAT pass."""
    label = code(record.label)
    return f"{label} {WARNING}" if record.kat.timed_without_pass else label


def kat_cell(kat: KatFacts | None) -> str:
    """The KAT column: the gate's verdict, with ⚠ when timed without a pass."""
    if kat is None:
        return "not checked"
    if kat.gate == "baseline":
        return f"{kat.verdict} (baseline: no official KAT)"
    if kat.timed_without_pass and kat.verdict == "NOKAT":
        return f"NOKAT {WARNING} not checked (no reference), timed with --allow-kat-fail"
    if kat.timed_without_pass:
        return f"{kat.verdict} {WARNING} timed without a KAT pass (override)"
    return kat.verdict


def baseline_sentence(records: Sequence[Record]) -> str:
    """The one sentence (no final stop) that defines × pseudoXOF and names the baselines
    ``records`` are divided by (``stats.groups.baseline_record``), with what each is."""
    by_description: dict[str, list[str]] = {}
    for label in _analysis.baseline_labels(records):
        record = next(r for r in records if r.label == label)
        built = record.implementation.variant == _analysis.EXTERNAL_VARIANT
        what = (f"your build ({_untrusted.markdown_text(record.implementation.description)})"
                if built and record.implementation.description else "your build" if built
                else _untrusted.markdown_text(record.implementation.description))
        by_description.setdefault(what, []).append(code(label))
    used = "; ".join(f"{', '.join(labels)}: {what}" if what else ", ".join(labels)
                     for what, labels in by_description.items())
    return ("× pseudoXOF: the leading figure over that of pseudoXOF of the same output "
            "width at the same length in this run, as the NGCC harness divides by its ICCS "
            "helper "
            f"({_format.MISSING} where it was not measured); the baseline here: "
            + (used or "none measured"))


def plural(count: int, word: str) -> str:
    """``1 job``, ``3 jobs``."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def _family(records: Sequence[Record], builds: Sequence[BuildEntry]) -> str:
    families = [r.family for r in records] + [b.family for b in builds]
    return next((family for family in families if family), "")


def candidate_title(candidate: str, records: Sequence[Record] = (),
                    builds: Sequence[BuildEntry] = ()) -> str:
    """The algorithm name of a candidate from the registry (``Laurus``), else (an
    ``external`` library) the family its libraries give."""
    return registry_title(candidate) or _family(records, builds)


# A run measured by Dask workers on several machines (``--scheduler``) has records of
# more than one host: its tables are split by host, and no figure mixes two hosts. A
# run of one host reads as before.

def by_host(columns: Sequence[str], records: Sequence[Record],
            row: Callable[[Record], Sequence[object]] | None,
            rows: Callable[[Sequence[Record]], Iterable[Sequence[object]]] | None = None,
            *, run: Run) -> list[str]:
    """A table of ``records`` (one ``row`` each, or ``rows`` of a group): one per host
    under its name when ``run`` has records of several hosts."""
    def made(group: Sequence[Record]) -> list[str]:
        body = rows(group) if rows is not None else [row(r) for r in group] if row else []
        return markdown_table(columns, body) + [""]
    if len(_analysis.hosts(run.records)) < 2:
        return made(records)
    groups = _analysis.by_host(records)
    lines: list[str] = []
    for name, group in groups:
        lines += [f"Measured on host {code(name or _host_words.UNKNOWN)}:", ""] + made(group)
    return lines


@dataclass(frozen=True)
class LibraryColumn:
    """An analysis's column in the tables of libraries (the field summary, the
    statistics exports), given by its slice's ``section`` module (``library_column``)
    where the run holds its evidence: a run without it has no such column.

    Attributes:
        title: the column's header on the field summary.
        name: its name in ``statistics.csv`` / ``.json``.
        cells: the field summary's cell (Markdown) by library label.
        values: the exports' value by library label (a library not analysed has none).
    """

    title: str
    name: str
    cells: Mapping[str, str]
    values: Mapping[str, str]
