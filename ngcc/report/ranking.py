"""The ranking pages of a run (``ranking-<target>.md``, one per security target of a run
of two or more candidates): the field ranked as the NGCC harness ranks it, with the
uncertainty of each rank and the ties in the noise (:mod:`ngcc.stats.ranking` computes
it all; this module only renders), the reference builds first and the optimized builds
in a table of their own; and the same rankings as CSV and JSON rows.

Which pages a run has, and their names, are :mod:`ngcc.report.pages`'s
(:func:`~ngcc.report.pages.ranking_targets`, :func:`~ngcc.report.pages.ranking_page`),
which links them from the index. Like every page, a pure function of the run directory.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ngcc.base import format as _format
from ngcc.evidence import figures as _figures
from ngcc.evidence.model import Record, page_key, page_name
from ngcc.report.pages import (
    FIELD_PAGE,
    INDEX_PAGE,
    ranking_page,
    ranking_stem,
    ranking_targets,
    run_page_head,
)
from ngcc.report.sections.common import baseline_sentence, code
from ngcc.report.sections.failures import failure_banner
from ngcc.report.tables import markdown_table
from ngcc.stats import groups as _groups
from ngcc.stats import ranking as _ranking
from ngcc.stats.intervals import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

#: What marks a rank tied in the noise with another candidate's.
TIED = "≈"


def columns(lengths: Sequence[int]) -> tuple[str, ...]:
    """A ranking table's columns: the overall rank, who, then each metric's cell."""
    return ("rank", "candidate", "instance", "set", "mean rank",
            *(_format.message(n) for n in lengths))


def _metric_cell(metric: _ranking.MetricRank) -> str:
    """``1.23 k (4.56×) · 2 [1–3] ≈``: the figure, × pseudoXOF, the rank [interval]."""
    ratio = (" (%s×)" % _format.ratio(metric.x_pseudoxof)
             if metric.x_pseudoxof is not None else "")
    tied = " " + TIED if metric.tied_with else ""
    alone = " (1 trial: no interval)" if metric.trials < 2 else ""
    return "%s%s · %s%s%s" % (_format.cycles(metric.figure), ratio,
                              _ranking.rank_with_interval(metric.rank, metric.low,
                                                          metric.high), tied, alone)


def _rows(ranking: _ranking.Ranking) -> list[tuple[str, ...]]:
    return [(_ranking.rank_with_interval(e.rank, e.low, e.high),
             f"[{e.name}]({page_name(page_key(e.candidate, e.label))})", code(e.label), e.chosen_by,
             "%.2f" % e.mean_rank, *(_metric_cell(m) for m in e.metrics))
            for e in ranking.entries]


def _ties(ranking: _ranking.Ranking) -> list[str]:
    """One line per metric naming the pairs tied in the noise, each pair once."""
    lines = []
    for index, length in enumerate(ranking.lengths):
        pairs = sorted({tuple(sorted((e.name, other)))
                        for e in ranking.entries
                        for other in e.metrics[index].tied_with})
        if pairs:
            lines.append("- %s: %s" % (_format.message(length), ", ".join(
                "%s %s %s" % (a, TIED, b) for a, b in pairs)))
    return lines


def _table(records: Sequence[Record], target: int, build: str) -> list[str]:
    """One host's ranking of ``build``: its table, its ties, what was left out."""
    ranking = _ranking.rank(records, target, build)
    if not ranking.entries:
        return ["No %s build of a candidate has a %d-bit instance measured at %s." % (
            build, _ranking.digest_bits(target), ", ".join(
                _format.message(n) for n in _ranking.METRIC_LENGTHS)), ""] \
            + _left_out(ranking)
    lines = [*_markdown(ranking)]
    ties = _ties(ranking)
    if ties:
        lines += ["Tied in the noise (%s):" % TIED, "", *ties, ""]
    return lines + _left_out(ranking)


def _markdown(ranking: _ranking.Ranking) -> list[str]:
    return markdown_table(columns(ranking.lengths), _rows(ranking)) + [""]


def _left_out(ranking: _ranking.Ranking) -> list[str]:
    if not ranking.left_out:
        return []
    return ["Not ranked: " + "; ".join(ranking.left_out) + ".", ""]


def _section(run: Run, target: int, build: str) -> list[str]:
    records = run.records
    if len(_groups.hosts(records)) < 2:
        return _table(records, target, build)
    lines: list[str] = []
    for name, group in _groups.by_host(records):
        lines += ["Measured on host %s:" % code(name or "unknown"), ""]
        lines += _table(group, target, build)
    return lines


def rule_lines(target: int, run: Run) -> list[str]:
    """The rule of the page, in words: what is ranked, how, and what the marks mean."""
    bits = _ranking.digest_bits(target)
    lengths = ", ".join(_format.message(n) for n in _ranking.METRIC_LENGTHS)
    return [
        f"The candidates ranked at {target}-bit security, by their {bits}-bit instances "
        "(a k-bit security target takes the 2k-bit digests), as the NGCC harness ranks "
        "them: one set per candidate (the one it recommends where it names one, else its "
        "fastest by mean rank: `set` says which); each metric — the leading figure per "
        f"call ({_figures.leading_words(run.records)}) at {lengths} — ranked on its own, "
        "lower is better, exact ties sharing the average of their positions; overall: "
        "the rank of the mean of a candidate's metric ranks. The harness ranks reference "
        "builds; optimized builds are ranked apart.",
        "",
        f"Beside each rank, in brackets, its {100 * CONFIDENCE:g} % interval: the ranks "
        f"it takes over {BOOTSTRAP_RESAMPLES} bootstrap resamples of each record's trials "
        f"(the trials its figure rests on; each resample's figure is their median; seed "
        f"{BOOTSTRAP_SEED:#x} plus the candidate's and metric's position, so every "
        f"reader recomputes the same). {TIED}: tied in the noise — {_ranking.TIE_RULE}. "
        "Each metric cell: the figure per call (× pseudoXOF) · its rank; a figure of one "
        "trial (the others left out: the host's slow speed state) has no spread to "
        "resample, so no interval. "
        + baseline_sentence(run.records) + ".",
        ""]


def ranking_page_text(run: Run, target: int) -> str:
    """The ranking page of ``run`` at a security target of ``target`` bits."""
    lines = run_page_head(run, f"ranking at {target}-bit security")
    lines += failure_banner(run.jobs)
    lines += rule_lines(target, run)
    lines += ["## Reference builds", "", *_section(run, target, "reference")]
    if any(_groups.optimized_build(r) for r in run.records
           if r.digest_bits == _ranking.digest_bits(target)):
        lines += ["## Optimized builds", "", *_section(run, target, "optimized")]
    others = [f"[{t}-bit]({ranking_page(t)})" for t in ranking_targets(run) if t != target]
    lines += [f"Every instance at every length: [field summary]({FIELD_PAGE}); "
              f"[index]({INDEX_PAGE})"
              + ("; other targets: " + ", ".join(others) if others else "") + ".", ""]
    return "\n".join(lines) + "\n"


def ranking_pages(run: Run) -> dict[str, str]:
    """Every ranking page of ``run``: file name → Markdown (none for one candidate)."""
    return {ranking_page(t): ranking_page_text(run, t) for t in ranking_targets(run)}


# ------------------------------------------------------------------ CSV and JSON

def ranking_rows(run: Run, target: int) -> list[dict[str, Any]]:
    """The rows of ``run``'s rankings at ``target`` (reference, then optimized builds;
    each host's, with a ``host`` column where the run has several)."""
    several = len(_groups.hosts(run.records)) > 1
    out = []
    for name, group in _groups.by_host(run.records):
        for build in _ranking.BUILDS:
            for row in _ranking.rows(_ranking.rank(group, target, build)):
                out.append({"host": name, **row} if several else row)
    return out


def ranking_tables(run: Run, kinds: Sequence[str]) -> dict[str, str]:
    """``ranking-<target>.csv`` / ``.json`` for each ranking page of ``run``, for each
    of ``kinds`` (``csv``, ``json``) asked."""
    files = {}
    for target in ranking_targets(run):
        rows = ranking_rows(run, target)
        if "csv" in kinds:
            files[ranking_stem(target) + ".csv"] = _csv(rows)
        if "json" in kinds:
            files[ranking_stem(target) + ".json"] = json.dumps(rows, indent=1) + "\n"
    return files


def _csv(rows: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    names = list(dict.fromkeys(key for row in rows for key in row)) or \
        _ranking.columns(_ranking.METRIC_LENGTHS)
    writer = csv.DictWriter(buffer, names, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: json.dumps(value) if isinstance(value, list) else value
                         for key, value in row.items()})
    return buffer.getvalue()
