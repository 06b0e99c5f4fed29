"""``ngcc compare RUN --published x86_1|arm_1``: a run beside the independent NGCC
harness's published figures.

The harness published, per Round 1 hash instance, the mean cycles per call (Σ cycles /
Σ calls over 5 trials, no per-call bracket) at 32 B, 1 KiB and 64 KiB on two systems (all
eight lengths for hash-22, hash-34 and hash-35), and the ICCS helpers' figures; they ship
in ``ngcc/published/`` (its README says where each row comes from), for the reference
implementations built with the guide's flags. Each library of the run is matched to the
harness's instance through the shipped manifest's folder of its instance
(``laurus_512`` is ``Laurus-512``; ``ngcc.library.candidates``), or as ``--instance
MINE=THEIRS`` says. Per instance and length this puts the record's leading figure
(``evidence.figures.lead``) beside the published one with their ratio, and the **shape**
(cycles/byte at each length over cycles/byte at 64 KiB) beside the published shape:
absolute figures compare only across equal hosts (and the run's are counter ticks unless
its counter counts core cycles), shapes and rankings transfer. A geometric-mean row sums
each up over the rows of reference builds; an optimized build's rows are shown, marked,
and left out of it. Below them, the run's ranking at each security target beside the
published ranking (:mod:`ngcc.report.published_ranking`).
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc.base import format as _format
from ngcc.base.errors import PublishedError, UnknownLabelError, UnknownPublishedError
from ngcc.base.names import natural_key
from ngcc.evidence import choices as _choices
from ngcc.evidence import figures as _figures
from ngcc.evidence.model import Record
from ngcc.library import candidates as _candidates
from ngcc.report import published_ranking as _beside
from ngcc.report.tables import TEXT_FORMATS as FORMATS
from ngcc.report.tables import aligned_table, markdown_table
from ngcc.stats import groups as _groups
from ngcc.stats.pairing import Pair

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

PUBLISHED_DIR = Path(__file__).resolve().parents[1] / "published"
SYSTEMS = _choices.PUBLISHED_SYSTEMS
SHAPE_LENGTH = 65536
#: The run's names of the ICCS helpers the published tables list by helper and width.
_HELPER_ALIASES = {"SM3": ("sm3hash", 256)}


@dataclass(frozen=True)
class Published:
    """One published figure: the harness's mean core cycles per call, and its source page."""

    instance: str
    message_bytes: int
    mean_cycles: float
    source: str


def load(system: str) -> dict[tuple[str, int], Published]:
    """The published figures of ``system`` (``x86_1``, ``arm_1``) by (instance, bytes).

    Raises:
        PublishedError: an unknown system or a file that does not read.
    """
    if system not in SYSTEMS:
        raise PublishedError("unknown published system %r: choose %s"
                             % (system, " or ".join(SYSTEMS)))
    figures: dict[tuple[str, int], Published] = {}
    for stem, name_of in (("hash_%s" % system, lambda row: row["instance"]),
                          ("iccs_baselines_%s" % system,
                           lambda row: "%s-%s" % (row["helper"], row["output_bits"]))):
        path = PUBLISHED_DIR / (stem + ".tsv")
        try:
            with path.open(encoding="utf-8", newline="") as stream:
                for row in csv.DictReader(stream, delimiter="\t"):
                    if not row.get("mean_cycles"):
                        continue  # the page gives no figure
                    key = (name_of(row), int(row["message_bytes"]))
                    figures[key] = Published(key[0], key[1], float(row["mean_cycles"]),
                                             row.get("source") or "")
        except (OSError, KeyError, ValueError) as exc:
            raise PublishedError("cannot read the published figures %s: %s" % (path, exc)
                                 ) from exc
    return figures


@dataclass(frozen=True)
class PublishedRow:
    """One library at one length: the run's leading figure, the published one, their
    ratio, and both shapes (cycles/byte here over cycles/byte at 64 KiB; None without
    one).

    Attributes:
        published_name: the harness's instance the library was matched to (None: none).
        lead: the name of the record's leading figure (``evidence.figures.Figure.name``).
        optimized: why the library is not built as the published figures were (the
            reference implementation, the guide's reference flags): ``variant opt``,
            ``flag set performance``, ``an Optimized_Implementation folder``; None for a
            reference build. Such a row is never in the geometric means.
    """

    label: str
    instance: str
    message_bytes: int
    published_name: str | None
    lead: str
    run_figure: float
    published_mean: float | None
    run_shape: float | None
    published_shape: float | None
    optimized: str | None = None

    @property
    def ratio(self) -> float | None:
        """Run over published (None without a published figure)."""
        return self.run_figure / self.published_mean if self.published_mean else None

    @property
    def shape_ratio(self) -> float | None:
        """The run's shape over the published shape (None without both)."""
        if self.run_shape is None or not self.published_shape:
            return None
        return self.run_shape / self.published_shape


@dataclass(frozen=True)
class PublishedComparison:
    """A run beside one system's published figures."""

    run_id: str
    system: str
    unit: str
    rows: tuple[PublishedRow, ...]
    notes: tuple[str, ...]
    #: The run's ranking at each security target beside the published one.
    rankings: tuple[_beside.RankingBeside, ...] = ()

    def geometric_means(self) -> tuple[float | None, float | None]:
        """The geometric means of the ratios and of the shape ratios over the rows of
        reference builds (None if none): an optimized build is never summed up against
        the published reference figures."""
        kept = [r for r in self.rows if r.optimized is None]
        return (_geometric([r.ratio for r in kept]), _geometric([r.shape_ratio for r in kept]))


def _geometric(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in kept) / len(kept)) if kept else None


def parse_instances(texts: Iterable[str]) -> dict[str, str]:
    """``--instance MINE=THEIRS`` (or ``NAME`` for both): the run's label → the harness's
    instance name.

    Raises:
        InvalidNameError: a side that is empty or breaks the name rule.
    """
    pairs = [Pair.parse(text) for text in texts]
    return {pair.label_a: pair.label_b for pair in pairs}


def _manifest_name(record: Record) -> str | None:
    """The harness's name of a record's instance: the shipped manifest's folder of the
    candidate's instance that the name matches (exactly, else case, ``-`` and ``_``
    aside); for a library of no known candidate, of the one candidate that has it."""
    ident: str | None = record.candidate
    try:
        if ident not in _candidates.candidate_ids():
            ident = _candidates.infer_candidate(record.instance)
    except _candidates.AmbiguousInstanceError:
        return None
    return _candidates.manifest_folder(ident, record.instance) if ident else None


def _published_name(record: Record, figures: Mapping[tuple[str, int], Published],
                    given: Mapping[str, str]) -> str | None:
    """The published instance ``record`` is set against (None: no published figure)."""
    published = {name for name, _ in figures}
    helper = _HELPER_ALIASES.get(record.instance)
    for name in (given.get(record.label), record.instance, _manifest_name(record),
                 "%s-%d" % helper if helper else None):
        if name in published:
            return name
    return None


def compare_published(run: Run, system: str, instances: Iterable[str] = ()
                      ) -> PublishedComparison:
    """Every record of ``run`` beside the published figure of its instance on
    ``system`` (module docstring); ``instances`` as ``--instance MINE=THEIRS`` says.

    Raises:
        PublishedError: an unknown system; a run none of whose instances is published.
        UnknownPublishedError: a THEIRS of ``instances`` that is not published.
        UnknownLabelError: a MINE of ``instances`` that is no label of the run.
        InvalidNameError: a malformed ``instances`` entry.
    """
    figures = load(system)
    given = parse_instances(instances)
    _check_given(run, given, figures, system)
    by_label: dict[str, dict[int, float]] = {}
    for record in run.records:
        by_label.setdefault(record.label, {})[record.message_bytes] = \
            record.statistics.figure.ticks or 0.0
    rows = []
    for record in run.records:
        name = _published_name(record, figures, given)
        mine = by_label[record.label]
        published = figures.get((name, record.message_bytes)) if name else None
        base = figures.get((name, SHAPE_LENGTH)) if name else None
        lead = record.statistics.figure
        rows.append(PublishedRow(
            record.label, record.instance, record.message_bytes, name, lead.name, lead.ticks or 0.0,
            published.mean_cycles if published else None,
            _shape(mine.get(record.message_bytes), record.message_bytes, mine.get(SHAPE_LENGTH)),
            _shape(published.mean_cycles if published else None, record.message_bytes,
                   base.mean_cycles if base else None), _groups.optimized_build(record)))
    if rows and all(row.published_mean is None for row in rows):
        raise PublishedError("no instance of run %s has a published figure on %s (published: "
                             "the Round 1 hash instances and the ICCS helpers; name one with "
                             "--instance MINE=THEIRS)" % (run.run_id, system))
    units = sorted({t.unit for r in run.records for t in r.trials})
    rankings, ranking_notes = _beside.rankings_beside(
        run.records, {key: found.mean_cycles for key, found in figures.items()})
    return PublishedComparison(run.run_id, system, ", ".join(units) or "ticks", tuple(rows),
                               tuple(_notes(system, rows, units) + ranking_notes),
                               tuple(rankings))


def _check_given(run: Run, given: Mapping[str, str],
                 figures: Mapping[tuple[str, int], Published], system: str) -> None:
    labels = {record.label for record in run.records}
    published = {name for name, _ in figures}
    for mine, theirs in given.items():
        if mine not in labels:
            raise UnknownLabelError("--instance %s=%s: run %s has no library labelled %r (its "
                                    "labels: %s)" % (mine, theirs, run.run_id, mine,
                                                     ", ".join(sorted(labels, key=natural_key))))
        if theirs not in published:
            close = difflib.get_close_matches(theirs, sorted(published), n=3)
            raise UnknownPublishedError("--instance %s=%s: %r has no published figure on %s%s"
                                 % (mine, theirs, theirs, system, "; did you mean %s?"
                                    % " or ".join(close) if close else ""))


def _shape(mean: float | None, message_bytes: int, at_64k: float | None) -> float | None:
    """Cycles/byte at ``message_bytes`` over cycles/byte at 64 KiB."""
    if mean is None or not at_64k:
        return None
    return (mean / message_bytes) / (at_64k / SHAPE_LENGTH)


def _notes(system: str, rows: Sequence[PublishedRow], units: Sequence[str]) -> list[str]:
    notes = ["the published figures are the harness's mean core cycles per call on %s, of "
             "reference builds (ngcc/published/README.md); the run's are each record's "
             "leading figure (%s) in %s: ratios of absolute figures hold only across equal "
             "hosts and units, shapes (cycles/byte at a length over that at 64 KiB) and "
             "rankings transfer" % (system, _figures.LEADING_RULE, ", ".join(units))]
    optimized = {r.label: r.optimized for r in rows if r.optimized and r.published_mean}
    if optimized:
        notes.append("optimized builds set against the published reference figures, for "
                     "information only and left out of the geometric means: %s" % ", ".join(
                         "%s (%s)" % pair for pair in optimized.items()))
    matched = {r.label for r in rows if r.published_mean is not None}
    missing = sorted({r.label for r in rows} - matched, key=natural_key)
    if missing:
        notes.append("no published figure for: %s (name the harness's instance with "
                     "--instance MINE=THEIRS)" % ", ".join(missing))
    if not any(r.message_bytes == SHAPE_LENGTH for r in rows):
        notes.append("the run has no 64 KiB record, so no shape (measure with --lengths "
                     "…,65536)")
    return notes


# ------------------------------------------------------------------ rendering

COLUMNS = ("library", "published as", "build", "message", "leads", "run figure",
           "published mean", "run / published", "run shape", "published shape",
           "shape ratio")


def _number(value: float | None, digits: str = "%.3f") -> str:
    return _format.MISSING if value is None else digits % value


def _table_rows(result: PublishedComparison) -> list[list[str]]:
    rows = [[r.label, r.published_name or _format.MISSING,
             "optimized: %s" % r.optimized if r.optimized else "reference",
             _format.message(r.message_bytes), r.lead, _format.cycles(r.run_figure),
             _format.cycles(r.published_mean) if r.published_mean else _format.MISSING,
             _number(r.ratio), _number(r.run_shape), _number(r.published_shape),
             _number(r.shape_ratio)] for r in result.rows]
    ratio, shape = result.geometric_means()
    rows.append(["geometric mean (reference builds)", "", "", "", "", "", "", _number(ratio),
                 "", "", _number(shape)])
    return rows


def render(result: PublishedComparison, fmt: str = "table") -> str:
    """The comparison as a text table, Markdown, CSV or JSON."""
    if fmt not in FORMATS:
        raise ValueError("format %r: choose one of %s" % (fmt, ", ".join(FORMATS)))
    head = "run %s (%s) beside the harness's published figures on %s" % (
        result.run_id, result.unit, result.system)
    rows = _table_rows(result)
    if fmt == "json":
        return json.dumps(_json(result), indent=1) + "\n"
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(rows)
        return buffer.getvalue()
    if fmt == "markdown":
        lines = markdown_table(COLUMNS, rows)
        for beside in result.rankings:
            lines += ["", _beside.heading(beside, result.system), "",
                      *markdown_table(_beside.COLUMNS, _beside.table_rows(beside))]
        return "\n".join([head, "", *lines, "", *("- " + n for n in result.notes)]) + "\n"
    text = aligned_table([list(COLUMNS), *rows], right_from=5)
    for beside in result.rankings:
        text += ["", _beside.heading(beside, result.system), "",
                 *aligned_table([list(_beside.COLUMNS), *_beside.table_rows(beside)])]
    return "\n".join([head, "", *text, "", *("note: " + n for n in result.notes)]) + "\n"


def _json(result: PublishedComparison) -> dict[str, Any]:
    ratio, shape = result.geometric_means()
    return {"run_id": result.run_id, "system": result.system, "unit": result.unit,
            "rows": [{"label": r.label, "instance": r.instance,
                      "published_name": r.published_name, "optimized": r.optimized,
                      "message_bytes": r.message_bytes, "leads": r.lead,
                      "run_figure": r.run_figure,
                      "published_mean": r.published_mean, "ratio": r.ratio,
                      "run_shape": r.run_shape, "published_shape": r.published_shape,
                      "shape_ratio": r.shape_ratio} for r in result.rows],
            "geometric_mean_ratio": ratio, "geometric_mean_shape_ratio": shape,
            "rankings": [_beside.as_json(beside) for beside in result.rankings],
            "notes": list(result.notes)}
