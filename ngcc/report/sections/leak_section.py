"""The timing-leakage section of a candidate page (``--leak``, beyond the guide's
structure): a row per leak test, and its |t| plot where drawn. The leak analysis's
``section`` module (``ngcc.evidence.analyses``): :func:`section`, :func:`library_column`,
:func:`plot_stems`, :func:`draw_plots`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc.base import format as _format
from ngcc.evidence.model import page_key
from ngcc.report.sections.common import LibraryColumn, code
from ngcc.report.tables import markdown_table

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

LEAK_TITLE = "Timing leakage (beyond the guide's structure)"
LEAK_COLUMNS = ("instance", "message", "verdict", "max \\|t\\|", "test",
                "calls (fixed / random)", "seconds", "evidence")


def leak_row(test: dict[str, Any]) -> tuple[str, ...]:
    """One row of the leak section, from a leak evidence file."""
    fixed, random = test["calls_per_class"]
    return (code(test["label"]), _format.message(test["message_bytes"]), test["verdict"],
            "%.2f" % test["max_t"], test["max_test"] or _format.MISSING,
            f"{test['calls']} ({fixed} / {random})", "%.1f s" % test["seconds"],
            code(test["relpath"]))


def section(run: Run, candidate: str, plotted: frozenset[str]) -> list[str]:
    """The ``--leak`` results of the candidate's libraries; nothing when there are none."""
    tests = [t for t in run.leak_tests if page_key(t["candidate"], t["label"]) == candidate]
    if not tests:
        return []
    lines = ["## " + LEAK_TITLE, "",
             "`ngcc leak`, the dudect method (Reparaz, Balasch, Verbauwhede 2017): Welch's t "
             "between calls on one fixed message (all zero) and calls on fresh random "
             "messages of the same length, the class of each call drawn at random, on every "
             "call and on the fastest calls under 15 percentiles, first and second order. "
             "Largest |t| below 4.5: no leak detected; 4.5 to 10: possible leak; above 10: "
             "LEAK. A pass does not prove constant time: a leak below the noise, or one "
             "that depends on other inputs or another machine, passes.", ""]
    lines += markdown_table(LEAK_COLUMNS, [leak_row(t) for t in tests]) + [""]
    images = [f"![|t| of {t['label']}]({plot_stem_leak(t)}.png)" for t in tests
              if plot_stem_leak(t) in plotted]
    return lines + ([", ".join(images), ""] if images else [])


def plot_stem_leak(test: dict[str, Any]) -> str:
    """The report's file stem of a leak test's |t| plot: its evidence file's."""
    return Path(str(test["relpath"])).stem


def library_column(run: Run) -> LibraryColumn | None:
    """No column in the tables of libraries: a library's leak tests are one per message
    length, each a row of its candidate page's section."""
    return None


def plot_stems(run: Run) -> set[str]:
    """The stems of the plots this section may link: each leak test's |t| plot."""
    return {plot_stem_leak(test) for test in run.leak_tests}


def draw_plots(run: Run, out: Path) -> list[Path]:
    """Draw each leak test's |t| plot into ``out``; return the files."""
    from ngcc.evidence import leak_evidence as _leak
    from ngcc.report.plots.common import save
    from ngcc.report.plots.leak_plot import leak_trace_plot

    written = []
    for test in run.leak_tests:
        calls, traces = _leak.trace_of(run.path / str(test["relpath"]), test)
        title = (f"{test['label']} at {_format.message(int(test['message_bytes']))}: "
                 f"{test['verdict']} (max |t| {test['max_t']:.1f})")
        written += save(leak_trace_plot(calls, traces, title=title), out / plot_stem_leak(test))
    return written
