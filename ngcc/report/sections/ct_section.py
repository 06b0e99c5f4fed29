"""The constant-time section of a candidate page (``ngcc ct``, beyond the guide's
structure): a row per library with its verdict and first sites, each linked to its
source line quoted below, what memcheck cannot see, and the timing test's verdict where
both ran; each library's verdict in the field summary and the statistics exports. The
constant-time analysis's ``section`` module (``ngcc.evidence.analyses``):
:func:`section`, :func:`library_column`, :func:`plot_stems`, :func:`draw_plots` (it
draws none)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc.base import format as _format
from ngcc.evidence.ct_evidence import NOT_ANALYSED, CtEvidence
from ngcc.evidence.model import page_key, page_name
from ngcc.report.export import anchor, heading_id
from ngcc.report.sections.common import LibraryColumn, code
from ngcc.report.tables import markdown_table

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

CT_TITLE = "Constant time (beyond the guide's structure)"
CT_COLUMNS = ("library", "verdict", "first sites", "lengths", "timing test (ngcc leak)",
              "evidence")
#: The sites a row names and the page quotes, per library (the evidence holds all).
SITES_SHOWN = 3
CT_METHOD = (
    "`ngcc ct`: each library's debug twin (the same sources and flags plus `-g`) hashes "
    "messages of every length that reaches a path under valgrind memcheck, the message "
    "marked undefined and its length defined. A site is a source line where message data "
    "decides a branch (`branch`) or a memory address (`address`), or another use memcheck "
    "reports (`other`). What memcheck cannot see: instructions whose time depends on their "
    "operands (division, some multiplications) and the microarchitecture (caches, "
    "speculation); the timing test, `ngcc leak`, is the complement. A library without a "
    "site is constant-time as far as memcheck sees, at the lengths tried.")


def section(run: Run, candidate: str, plotted: frozenset[str]) -> list[str]:
    """The ``ngcc ct`` results of the candidate's libraries; nothing when there are none."""
    found = [r for r in run.analysis_evidence("ct")
             if page_key(r["candidate"], r["label"]) == candidate]
    if not found:
        return []
    timing = {t["label"]: t for t in run.leak_tests
              if page_key(t["candidate"], t["label"]) == candidate
              and not t.get("control")}
    lines = ["## " + CT_TITLE, "", CT_METHOD, ""]
    lines += markdown_table(CT_COLUMNS, [_row(r, timing.get(r["label"])) for r in found])
    quoted = [_quoted(r, i) for r in found for i in range(len(r["sites"][:SITES_SHOWN]))]
    if quoted:
        lines += ["", "The first sites of each library, their source lines quoted:", ""]
        lines += quoted
    return lines + [""]


def site_anchor(record: dict[str, Any], index: int) -> str:
    """The anchor of a library's ``index``-th site quoted under the table: ``ct-<label>-1``
    (labels are names: letters, digits and ``- _ . + @``, unique in a run)."""
    return "ct-%s-%d" % (record["label"], index + 1)


def _row(record: dict[str, Any], timing: dict[str, Any] | None) -> tuple[str, ...]:
    sites = record["sites"]
    named = ", ".join("[%s](#%s) %s" % (code("%s:%d" % (s["file"], s["line"])),
                                        site_anchor(record, i), s["kind"])
                      for i, s in enumerate(sites[:SITES_SHOWN]))
    if len(sites) > SITES_SHOWN:
        named += ", %d more" % (len(sites) - SITES_SHOWN)
    return (code(record["label"]), verdict_words(record), named or _format.MISSING,
            str(len(record["lengths"])) if record["lengths"] else _format.MISSING,
            "%s (%s)" % (timing["verdict"], code(timing["relpath"])) if timing
            else "not run", code(record["relpath"]))


def verdict_words(record: dict[str, Any], reason: bool = True) -> str:
    """The verdict in words (:meth:`CtEvidence.summary`): ``constant-time``, ``leaks (3
    sites in 2 functions)``, ``not analysed`` and, with ``reason``, why (as code: it may
    quote the library)."""
    if record["verdict"] == NOT_ANALYSED:
        return "%s: %s" % (NOT_ANALYSED, code(record["reason"])) if reason else NOT_ANALYSED
    return CtEvidence.from_json({k: v for k, v in record.items() if k != "relpath"}).summary()


def library_column(run: Run) -> LibraryColumn | None:
    """Each analysed library's verdict, for the field summary (in words, linked to its
    candidate page's section) and the statistics exports (``constant_time``: the verdict
    itself); None when the run holds no constant-time evidence."""
    found = run.analysis_evidence("ct")
    if not found:
        return None
    return LibraryColumn("constant time", "constant_time",
                         cells={r["label"]: "[%s](%s#%s)" % (
                             verdict_words(r, reason=False),
                             page_name(page_key(r["candidate"], r["label"])),
                             heading_id(CT_TITLE)) for r in found},
                         values={r["label"]: r["verdict"] for r in found})


def _quoted(record: dict[str, Any], index: int) -> str:
    """A site's source line, quoted, where its link in the table points."""
    site = record["sites"][index]
    return "- %s%s %s (%s, in %s): %s" % (
        anchor(site_anchor(record, index)), code(record["label"]),
        code("%s:%d" % (site["file"], site["line"])), site["kind"],
        code(site["function"]), code(site["quote"]) if site["quote"] else "(not readable)")


def plot_stems(run: Run) -> set[str]:
    """No plot: the section is its table."""
    return set()


def draw_plots(run: Run, out: Path) -> list[Path]:
    """No plot to draw."""
    return []
