"""``ngcc compare RUN --published x86_1|arm_1``: a run beside the independent NGCC
harness's published figures.

The harness published, per Round 1 hash instance, the mean cycles per call (its
harness mean: Σ cycles / Σ calls over 5 trials) at 32 B, 1 KiB and 64 KiB on two
systems (all eight lengths for hash-22, hash-34 and hash-35), and the ICCS helpers'
figures; they ship in ``ngcc/published/`` (its README says where each row comes from).
Per instance and length this puts the run's harness mean beside the published one
with their ratio, and the **shape** (cycles/byte at each length over cycles/byte at
64 KiB) beside the published shape: absolute figures compare only across equal hosts
(and the run's are counter ticks unless its counter counts core cycles), shapes and
rankings transfer. A geometric-mean row sums each up over the rows that have it.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc.base import format as _format
from ngcc.base.errors import PublishedError
from ngcc.report.tables import aligned_table, markdown_table

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

PUBLISHED_DIR = Path(__file__).resolve().parents[1] / "published"
SYSTEMS = ("x86_1", "arm_1")
SHAPE_LENGTH = 65536
FORMATS = ("table", "markdown", "csv", "json")
#: The run's names of the ICCS helpers the published tables list by helper and width.
_HELPER_ALIASES = {"SM3": ("sm3hash", 256)}


@dataclass(frozen=True)
class Published:
    """One published figure: the harness mean in core cycles, and its source page."""

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
    """One instance at one length: the run's figure, the published one, their ratio,
    and both shapes (cycles/byte here over cycles/byte at 64 KiB; None without one)."""

    label: str
    instance: str
    message_bytes: int
    run_mean: float
    published_mean: float | None
    run_shape: float | None
    published_shape: float | None

    @property
    def ratio(self) -> float | None:
        """Run over published (None without a published figure)."""
        return self.run_mean / self.published_mean if self.published_mean else None

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

    def geometric_means(self) -> tuple[float | None, float | None]:
        """The geometric means of the ratios and of the shape ratios (None if none)."""
        return (_geometric([r.ratio for r in self.rows]),
                _geometric([r.shape_ratio for r in self.rows]))


def _geometric(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in kept) / len(kept)) if kept else None


def _published_name(instance: str, figures: dict[tuple[str, int], Published]) -> str:
    if any(name == instance for name, _ in figures):
        return instance
    helper = _HELPER_ALIASES.get(instance)
    return "%s-%d" % helper if helper else instance


def compare_published(run: Run, system: str) -> PublishedComparison:
    """Every record of ``run`` beside the published figure of its instance on
    ``system`` (module docstring).

    Raises:
        PublishedError: an unknown system; a run none of whose instances is published.
    """
    figures = load(system)
    by_label: dict[str, dict[int, float]] = {}
    for record in run.records:
        by_label.setdefault(record.label, {})[record.message_bytes] = \
            record.statistics.mean_cycles
    rows = []
    for record in run.records:
        name = _published_name(record.instance, figures)
        mine = by_label[record.label]
        published = figures.get((name, record.message_bytes))
        base = figures.get((name, SHAPE_LENGTH))
        rows.append(PublishedRow(
            record.label, record.instance, record.message_bytes,
            record.statistics.mean_cycles,
            published.mean_cycles if published else None,
            _shape(mine.get(record.message_bytes), record.message_bytes, mine.get(SHAPE_LENGTH)),
            _shape(published.mean_cycles if published else None, record.message_bytes,
                   base.mean_cycles if base else None)))
    if rows and all(row.published_mean is None for row in rows):
        raise PublishedError("no instance of run %s has a published figure on %s (published: "
                             "the Round 1 hash instances and the ICCS helpers)"
                             % (run.run_id, system))
    units = sorted({t.unit for r in run.records for t in r.trials})
    return PublishedComparison(run.run_id, system, ", ".join(units) or "ticks", tuple(rows),
                               tuple(_notes(system, rows, units)))


def _shape(mean: float | None, message_bytes: int, at_64k: float | None) -> float | None:
    """Cycles/byte at ``message_bytes`` over cycles/byte at 64 KiB."""
    if mean is None or not at_64k:
        return None
    return (mean / message_bytes) / (at_64k / SHAPE_LENGTH)


def _notes(system: str, rows: Sequence[PublishedRow], units: Sequence[str]) -> list[str]:
    notes = ["the published figures are the harness's mean core cycles per call on %s "
             "(ngcc/published/README.md); the run's are its harness mean in %s: ratios of "
             "absolute figures hold only across equal hosts and units, shapes (cycles/byte "
             "at a length over that at 64 KiB) and rankings transfer"
             % (system, ", ".join(units))]
    missing = sorted({r.label for r in rows if r.published_mean is None})
    if missing:
        notes.append("no published figure for: %s" % ", ".join(missing))
    if not any(r.message_bytes == SHAPE_LENGTH for r in rows):
        notes.append("the run has no 64 KiB record, so no shape (measure with --lengths "
                     "…,65536)")
    return notes


# ------------------------------------------------------------------ rendering

COLUMNS = ("library", "message", "run mean", "published mean", "run / published",
           "run shape", "published shape", "shape ratio")


def _number(value: float | None, digits: str = "%.3f") -> str:
    return _format.MISSING if value is None else digits % value


def _table_rows(result: PublishedComparison) -> list[list[str]]:
    rows = [[r.label, _format.message(r.message_bytes), _format.cycles(r.run_mean),
             _format.cycles(r.published_mean) if r.published_mean else _format.MISSING,
             _number(r.ratio), _number(r.run_shape), _number(r.published_shape),
             _number(r.shape_ratio)] for r in result.rows]
    ratio, shape = result.geometric_means()
    rows.append(["geometric mean", "", "", "", _number(ratio), "", "", _number(shape)])
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
        return "\n".join([head, "", *lines, "", *("- " + n for n in result.notes)]) + "\n"
    text = aligned_table([list(COLUMNS), *rows], right_from=2)
    return "\n".join([head, "", *text, "", *("note: " + n for n in result.notes)]) + "\n"


def _json(result: PublishedComparison) -> dict[str, Any]:
    ratio, shape = result.geometric_means()
    return {"run_id": result.run_id, "system": result.system, "unit": result.unit,
            "rows": [{"label": r.label, "instance": r.instance,
                      "message_bytes": r.message_bytes, "run_mean": r.run_mean,
                      "published_mean": r.published_mean, "ratio": r.ratio,
                      "run_shape": r.run_shape, "published_shape": r.published_shape,
                      "shape_ratio": r.shape_ratio} for r in result.rows],
            "geometric_mean_ratio": ratio, "geometric_mean_shape_ratio": shape,
            "notes": list(result.notes)}
