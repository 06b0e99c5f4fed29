"""The folders ``ngcc evaluate`` found, on the report pages: their rows, and the section
that lists them on a candidate's page and on the index."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ngcc.base import untrusted as _untrusted
from ngcc.base.errors import CERTAIN_FIXES
from ngcc.evidence.evaluation import FolderEntry
from ngcc.evidence.model import page_key, page_name
from ngcc.report.sections.common import plural
from ngcc.report.tables import markdown_table

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

FOLDER_COLUMNS = ("submission", "folder", "kind", "built with", "adjustments", "library",
                  "outcome")
ADJUSTMENT_NOTE = ("Adjustments: options the build's own diagnosis was certain of "
                   "(%s); nothing else was changed." % CERTAIN_FIXES)


def reason_line(reason: str | None, width: int = 400) -> str:
    """A build's message on one line: its first line and, when that only introduces
    them (``does not compile with …:``), the first error line after it; then every
    line of ngcc's own that names what to do (an option: ``… (--exclude core.c)``), so
    the row says what ``evaluation.json`` says a submitter can act on."""
    lines = [line.strip() for line in (reason or "unknown").splitlines() if line.strip()]
    shown = lines[0] if lines else "unknown"
    if shown.endswith(":") and len(lines) > 1:
        shown += " " + next((line for line in lines[1:] if "error" in line), lines[1])
    remedies = [line for line in lines[1:] if _REMEDY.search(line)
                and not _COMPILER_LINE.match(line) and line not in shown]
    shown = " ".join([shown, *remedies])
    return shown if len(shown) <= width else shown[:width - 1] + "…"


#: A line of ngcc's that names an option to give (``--exclude FILE``, ``--define X``).
_REMEDY = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
#: A compiler's or linker's own line (``core.c:5:2: error: …``, ``ld: …``).
_COMPILER_LINE = re.compile(r"^(\S+:\d+(:\d+)?:|/\S*ld\b|ld:|collect2)")


def outcome(entry: FolderEntry, verdicts: dict[str, str],
            shown: Callable[[str], str] = _untrusted.plain) -> str:
    """``KAT PASS`` (the gate's verdict of its library), or ``not built: <why>``; the
    reason is the archive's (a compiler's message quotes its sources), so it is
    rendered by ``shown``: :func:`~ngcc.base.untrusted.plain` for a terminal,
    :func:`~ngcc.base.untrusted.markdown` for a page."""
    if entry.status == "build failed":
        return "not built: " + shown(reason_line(entry.reason))
    if entry.status == "not followed":
        return "not followed: " + shown(reason_line(entry.reason))
    if entry.status != "built":
        return "not measured: " + shown(reason_line(entry.reason))
    return "KAT %s" % verdicts.get(entry.label or "", "not checked")


def folder_rows(entries: Sequence[FolderEntry], verdicts: dict[str, str]
                ) -> list[tuple[str, ...]]:
    """A row per folder: submission, folder, kind, flags, adjustments, label, outcome.
    Every name and message of the archive is one literal code span
    (:func:`~ngcc.base.untrusted.markdown`): no link, image, HTML or cell break."""
    code = _untrusted.markdown
    return [(code(e.submission), code(e.folder), e.kind, code(e.options),
             "; ".join(code(a) for a in e.adjustments) or "none",
             _library_cell(e), outcome(e, verdicts, code))
            for e in entries]


def _library_cell(entry: FolderEntry) -> str:
    """The library's label; a library no candidate claims links its own page (it has
    one when it was measured: built here)."""
    if not entry.label:
        return "—"
    shown = _untrusted.markdown(entry.label)
    if entry.candidate == "external" and entry.status == "built":
        return "[%s](%s)" % (shown, page_name(page_key("external", entry.label)))
    return shown

FOLDERS_TITLE = "Submission folders (ngcc evaluate)"


def submission_folders(run: Run, candidate: str | None) -> list[str]:
    """The folders ``ngcc evaluate`` found, with how each was built (its adjustments)
    or why not: a candidate's submissions on its page, every folder on the index
    (``candidate`` None); nothing for a run it did not make."""
    evaluation = run.evaluation
    if evaluation is None:
        return []
    entries = (list(evaluation.folders) if candidate is None
               else evaluation.of_candidate(candidate))
    if not entries:
        return []
    verdicts = {b.label: b.kat.verdict for b in run.build_entries}
    failed = sum(e.status in ("build failed", "not followed") for e in entries)
    lines = [f"## {FOLDERS_TITLE}", "",
             f"{plural(len(entries), 'folder')} found, {len(entries) - failed} built"
             + (f", {failed} not built (a row each, with the build's reason)" if failed
                else "") + ". Reference folders are built with the guide's reference "
             "flags, optimized and additional ones with its performance flags.", ""]
    lines += markdown_table(FOLDER_COLUMNS, folder_rows(entries, verdicts)) + [""]
    if any(e.adjustments for e in entries):
        lines += [ADJUSTMENT_NOTE, ""]
    for entry in evaluation.builtin_names():
        if entry in entries:
            lines += ["Note: %s %s." % (_untrusted.markdown(entry.folder), entry.name_note()), ""]
    return lines
