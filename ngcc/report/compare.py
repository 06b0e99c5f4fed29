"""``ngcc compare`` and ``Run.compare`` as text and figure: a comparison of two runs
(or two labels of one run) rendered as a text table, Markdown, CSV or JSON, and its
ratio plot.

Which records pair, their units, ratios and tests are :mod:`ngcc.stats.pairing`'s
(:func:`compare_runs` hands it the host's load limit); this module only renders.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc.base import format as _format
from ngcc.evidence import figures as _figures
from ngcc.evidence.choices import DEFAULT_COMPARED_STATISTIC
from ngcc.measure.host import LOAD_LIMIT
from ngcc.report.tables import TEXT_FORMATS as FORMATS  # ngcc compare's output formats
from ngcc.report.tables import aligned_table, markdown_table, notes
from ngcc.stats import compare as _compare
from ngcc.stats import pairing as _pairing
from ngcc.stats.pairing import Pair, RunComparison

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ngcc.evidence.run import Run



def compare_runs(run_a: Run, run_b: Run | None = None, pairs: Iterable[Pair | str] = (),
                 statistic: str = DEFAULT_COMPARED_STATISTIC, alpha: float = _compare.ALPHA,
                 hosts: Sequence[str] = ()) -> RunComparison:
    """Compare the records of ``run_a`` with those of ``run_b`` (or of ``run_a`` itself):
    :func:`ngcc.stats.pairing.run_comparison`, with a note when a side's host was busy
    (1-minute load above ``measure.host.LOAD_LIMIT``).

    Args:
        run_a, run_b: the runs; without ``run_b`` the pairs are two labels of ``run_a``.
        pairs: ``Pair`` objects or ``"A=B"``/``"NAME"`` strings (default: every label
            both runs hold; required for one run).
        statistic: the per-trial figure compared: ``figure`` (each trial's value of the
            figure its record leads with, as every view), ``median`` or ``mean`` cycles
            per call.
        alpha: the significance level; the intervals' confidence is 1 − alpha.
        hosts: only the records measured on this host (one name: both sides; two: A's
            host and B's), for runs whose workers measured on several machines (with
            one run, the hosts of the two labels of each pair).

    Raises:
        UnknownLabelError: a label of ``pairs`` is not in its run.
        UnknownHostError: a host of ``hosts`` measured no record of its run.
        NothingToCompareError: no pair has a length measured on both sides.
        UnitMismatchError: two figures in different units that cannot be converted.
        ValueError: an unknown statistic, or alpha outside (0, 1).

    Ratios within 1 ± ``stats.compare.MARGIN`` are not called significant: what two runs
    of the same code differ by on a busy host; wider where the host ran at several
    speeds during the runs (``RunComparison.margin``, with a note).
    """
    return _pairing.run_comparison(run_a, run_b, pairs, statistic, alpha, hosts, LOAD_LIMIT)


# ------------------------------------------------------------------ rendering

def _p_text(p: float | None) -> str:
    if p is None:
        return _format.MISSING
    return "<0.001" if p < 0.001 else "%.3f" % p


def _ratio_text(value: float | None) -> str:
    return _format.MISSING if value is None else "%.4f" % value


def _ci_text(comparison: _compare.Comparison) -> str:
    if comparison.ci_low is None or comparison.ci_high is None:
        return _format.MISSING
    return "[%.4f, %.4f]" % (comparison.ci_low, comparison.ci_high)


def _length_text(message_bytes: int) -> str:
    return "%d B" % message_bytes


def _tables(result: RunComparison) -> tuple[list[list[str]], list[list[str]]]:
    level = "%g %% CI" % (100 * result.confidence)
    units = sorted({row.unit for row in result.rows})
    unit = unit_word(units[0]) if len(units) == 1 else "see unit"
    name = FIGURE_NAMES.get(result.statistic, result.statistic)
    rows = [["A", "B", "length", "%s A (%s)" % (name, unit),
             "%s B (%s)" % (name, unit), "trials", "A/B", level, "p", "verdict"]]
    for row in result.rows:
        figure_unit = "" if len(units) == 1 else " " + unit_word(row.unit)
        rows.append([row.pair.label_a, row.pair.label_b, _length_text(row.message_bytes),
                     _format.cycles(row.figure_a) + figure_unit,
                     _format.cycles(row.figure_b) + figure_unit,
                     "%d/%d" % (row.trials_a, row.trials_b), _ratio_text(row.comparison.ratio),
                     _ci_text(row.comparison), _p_text(row.comparison.p_value),
                     row.comparison.words])
    summary = [["A", "B", "lengths", "geometric mean A/B", level, "p", "verdict"]]
    for item in result.summaries:
        summary.append([item.pair.label_a, item.pair.label_b, str(len(item.lengths)),
                        _ratio_text(item.comparison.ratio), _ci_text(item.comparison),
                        _p_text(item.comparison.p_value), item.comparison.words])
    return rows, summary


def _short_tables(result: RunComparison) -> tuple[list[list[str]], list[list[str]]]:
    """:func:`_tables` within :data:`~ngcc.report.tables.WIDTH`: one column names the
    pair (``SM3``, or ``Wish512 vs SM3``), the figures are ``A``/``B``, no trials."""
    rows, summary = _tables(result)
    units = sorted({row.unit for row in result.rows})
    unit = unit_word(units[0]) if len(units) == 1 else "see unit"

    def pair(a: str, b: str) -> str:
        return a if a == b else "%s vs %s" % (a, b)

    short = [["pair", "length", "A (%s)" % unit, "B (%s)" % unit, *rows[0][6:]]]
    short += [[pair(*row[:2]), *row[2:5], *row[6:]] for row in rows[1:]]
    return short, [["pair", *summary[0][2:]]] + [[pair(*row[:2]), *row[2:]]
                                                  for row in summary[1:]]


#: The figure a side shows, by ``statistic``: one name per meaning (the pages'
#: "median" is of all calls pooled; this one is of the trials' own medians).
FIGURE_NAMES = {"figure": "leading figure",
                "median": "geo-mean of trial medians", "mean": "geo-mean of trial means"}
def unit_word(unit: str) -> str:
    """``ticks`` for a counter's ticks, else the unit's word (``evidence.figures``)."""
    return _figures.unit_word([unit])


def method_text(result: RunComparison) -> str:
    """One sentence on what was computed, printed above the table."""
    units = sorted({unit_word(row.unit) for row in result.rows}) or ["ticks"]
    what = ("of the records' leading figures (each as every table shows it)"
            if result.statistic == "figure" else
            "of the geometric mean of per-trial %s" % result.statistic)
    return ("A/B %s, %s per call; %g %% CI and p from Welch's t on the logarithms of the "
            "per-trial figures (the trials are the samples; the slow speed state's left "
            "out); significant at alpha = %g and only beyond ±%.3g %% (two runs of the same "
            "code on this host may differ by that much)" % (
                what, "/".join(units), 100 * result.confidence, result.alpha,
                100 * result.margin))


def render(result: RunComparison, fmt: str = "table", wide: bool = False) -> str:
    """The comparison as text: ``table`` (aligned columns), ``markdown``, ``csv`` or ``json``.

    ``table`` lays out the rows and the geometric-mean summary within
    :data:`~ngcc.report.tables.WIDTH` columns (a pair's labels in one column, no trials;
    ``wide``: every column), then the notes and the method wrapped to that width;
    ``markdown`` puts the notes and the method above the tables; ``csv`` is the
    :data:`~ngcc.stats.pairing.COLUMNS` only (the notes go elsewhere: the CLI prints
    them to stderr); ``json`` holds everything.
    """
    if fmt == "json":
        return json.dumps(_json(result), indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(_pairing.COLUMNS), lineterminator="\n")
        writer.writeheader()
        for record in result.records():
            writer.writerow({k: _csv_cell(v) for k, v in record.items()})
        return out.getvalue()
    if fmt not in FORMATS:
        raise ValueError("format %r: choose one of %s" % (fmt, ", ".join(FORMATS)))
    rows, summary = _tables(result) if fmt == "markdown" or wide else _short_tables(result)
    head = "A: %s\nB: %s" % (result.run_a, result.run_b)
    if fmt == "markdown":
        listed = "".join("- %s\n" % note for note in result.notes)
        return ("%s\n\n%s%s\n\n%s\n\n**Geometric mean over lengths**\n\n%s\n" % (
            head.replace("\n", "  \n"), listed + "\n" if listed else "", method_text(result),
            "\n".join(markdown_table(rows[0], rows[1:], spaced_rule=True)),
            "\n".join(markdown_table(summary[0], summary[1:], spaced_rule=True))))
    return "%s\n\n%s\n\ngeometric mean over lengths\n%s\n\n%s\n" % (
        head, "\n".join(aligned_table(rows)), "\n".join(aligned_table(summary)),
        "\n".join(notes(result.notes) + notes([method_text(result)], prefix="")))


def _csv_cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return value


def _finite(value: float | None) -> float | str | None:
    """JSON has no inf (degrees of freedom of trials without spread)."""
    if value is None or math.isfinite(value):
        return value
    return "inf" if value > 0 else "-inf"


def _json(result: RunComparison) -> dict[str, Any]:
    def comparison(c: _compare.Comparison) -> dict[str, Any]:
        return {"ratio": c.ratio, "ci_low": c.ci_low, "ci_high": c.ci_high,
                "p_value": c.p_value, "df": _finite(c.df), "significant": c.significant,
                "verdict": c.words}

    return {
        "run_a": result.run_a, "run_b": result.run_b, "statistic": result.statistic,
        "alpha": result.alpha, "confidence": result.confidence,
        "method": method_text(result), "notes": list(result.notes),
        "rows": [{"label_a": r.pair.label_a, "label_b": r.pair.label_b,
                  "message_bytes": r.message_bytes, "unit": r.unit, "trials_a": r.trials_a,
                  "trials_b": r.trials_b, "figure_a": r.figure_a, "figure_b": r.figure_b,
                  **comparison(r.comparison), "host_differences": list(r.host_differences)}
                 for r in result.rows],
        "summary": [{"label_a": s.pair.label_a, "label_b": s.pair.label_b,
                     "message_bytes": list(s.lengths), **comparison(s.comparison)}
                    for s in result.summaries],
    }


# ------------------------------------------------------------------ the plot

def plot_stem(path: Path) -> Path:
    """``path`` without a ``.png``/``.svg`` suffix (other dots belong to the name)."""
    path = Path(path)
    return path.with_name(path.stem) if path.suffix.lower() in (".png", ".svg") else path


def ratio_figure(result: RunComparison) -> Figure:
    """Each pair's ratio A/B and its CI against message length (``plots.ratio.ratio_plot``):
    hollow where not significant, the geometric mean dashed; lengths without an
    interval are left out."""
    from ngcc.report.plots.ratio import RatioSeries, ratio_plot

    summaries = {summary.pair: summary for summary in result.summaries}
    series = []
    for pair in dict.fromkeys(row.pair for row in result.rows):
        rows = [row for row in result.rows if row.pair == pair and row.comparison.has_interval]
        if not rows:
            continue
        summary = summaries.get(pair)
        series.append(RatioSeries(
            label="%s / %s" % (pair.label_a, pair.label_b),
            message_bytes=[row.message_bytes for row in rows],
            ratio=[row.comparison.ratio for row in rows],
            ci_low=[row.comparison.ci_low or math.nan for row in rows],
            ci_high=[row.comparison.ci_high or math.nan for row in rows],
            significant=[row.comparison.significant for row in rows],
            geometric_mean=summary.comparison.ratio if summary else None))
    title = "A/B, %s cycles per call, %g %% CI" % (result.statistic, 100 * result.confidence)
    return ratio_plot(series, title=title, a="A", b="B", statistic=result.statistic)


def write_plot(result: RunComparison, path: Path) -> list[Path]:
    """:func:`ratio_figure` to ``path`` as PNG and SVG (a ``.png``/``.svg`` suffix of
    ``path`` is dropped); return the files written."""
    from ngcc.report.plots.common import save

    return save(ratio_figure(result), plot_stem(path))
