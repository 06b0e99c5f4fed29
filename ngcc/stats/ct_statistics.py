"""From memcheck's XML to the sites of the constant-time analysis (``ngcc ct``).

Memcheck runs the debug twin with the message marked undefined (``--xml-fd``: one
stream, in which the driver's processes each end their own document). Each ``<error>``
is a report; its **site** is the first frame of its stack in the twin and in a source
file of the submission folder (a report whose stack never reaches one, such as the
driver's own system calls, is not the library's). Its kind
comes from memcheck's: ``UninitCondition`` (a conditional jump or move) is a
``branch``, ``UninitValue`` (an uninitialised value used as an address) an
``address``, any other an ``other``. Sites are kept once across the lengths, counting
how many lengths reached each, and sorted by file and line. A ``<fatal_signal>`` is
how the run died. The evidence they go into is :mod:`ngcc.evidence.ct_evidence`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.errors import NgccError
from ngcc.evidence.ct_evidence import (
    ADDRESS,
    BRANCH,
    CONSTANT_TIME,
    LEAKS,
    MAX_QUOTE,
    OTHER,
    CtSite,
)

#: The client messages the driver's ct mode writes: in each length's child once it
#: loaded the library, and before each child's load (what loading reports belongs to no
#: length: each child loads the library, under the process limit).
LENGTH_MARKER = re.compile(r"ngcc-ct length (\d+)")
LOAD_MARKER = "ngcc-ct load"
#: memcheck's error kinds and the site kind each is.
KIND_OF = {"UninitCondition": BRANCH, "UninitValue": ADDRESS}


class MemcheckOutputError(NgccError):
    """Memcheck's XML output could not be read."""


@dataclass(frozen=True)
class Frame:
    """One frame of a memcheck stack (empty strings and line 0 where it says nothing)."""

    obj: str
    function: str
    directory: str
    file: str
    line: int

    @property
    def path(self) -> Path | None:
        """The source file's absolute path, where memcheck names one."""
        if not self.file:
            return None
        return (Path(self.directory) / self.file) if self.directory else Path(self.file)


@dataclass(frozen=True)
class Report:
    """One ``<error>`` of memcheck: its kind, its words, its stack (innermost first),
    and the length (bits) whose child process reported it (None: before any length,
    the driver's own)."""

    kind: str
    what: str
    stack: tuple[Frame, ...]
    bits: int | None = None


@dataclass(frozen=True)
class FatalSignal:
    """A ``<fatal_signal>``: the signal that ended a process under memcheck, and where."""

    name: str
    stack: tuple[Frame, ...]


@dataclass(frozen=True)
class MemcheckOutput:
    """What one memcheck run wrote: its reports and the signals that ended a process."""

    reports: tuple[Report, ...]
    fatal: tuple[FatalSignal, ...]


def parse_xml(text: str) -> MemcheckOutput:
    """Read memcheck's XML stream: one or more ``<valgrindoutput>`` documents run
    together (a process and the processes it forked share the descriptor).

    Raises:
        MemcheckOutputError: the text is not memcheck XML.
    """
    body = re.sub(r"<\?xml[^>]*\?>|</?valgrindoutput>", "", text)
    try:
        root = ET.fromstring("<stream>%s</stream>" % body)
    except ET.ParseError as exc:
        raise MemcheckOutputError("memcheck's XML output cannot be read: %s" % exc) from None
    if root.find("protocoltool") is None and not len(root):
        raise MemcheckOutputError("memcheck wrote no XML output")
    reports, bits = [], None
    for element in root:
        if element.tag == "clientmsg":  # the driver's "ngcc-ct load", "ngcc-ct length N"
            text = element.findtext("text", "").strip()
            marker = LENGTH_MARKER.fullmatch(text)
            bits = int(marker.group(1)) if marker else None if text == LOAD_MARKER else bits
        elif element.tag == "error":
            reports.append(Report(element.findtext("kind", ""), _what(element),
                                  _stack(element), bits))
    fatal = tuple(FatalSignal(element.findtext("signame", ""), _stack(element))
                  for element in root.iter("fatal_signal"))
    return MemcheckOutput(tuple(reports), fatal)


def _what(error: ET.Element) -> str:
    return (error.findtext("what") or error.findtext("xwhat/text") or "").strip()


def _stack(element: ET.Element) -> tuple[Frame, ...]:
    stack = element.find("stack")
    if stack is None:
        return ()
    return tuple(Frame(frame.findtext("obj", ""), frame.findtext("fn", ""),
                       frame.findtext("dir", ""), frame.findtext("file", ""),
                       _line(frame.findtext("line", "")))
                 for frame in stack.iter("frame"))


def _line(text: str) -> int:
    return int(text) if text.isdigit() else 0


def site_frame(stack: Sequence[Frame], library: Path, source_dir: Path
               ) -> tuple[Frame, str] | None:
    """The first frame of ``stack`` in ``library`` whose source file lies under
    ``source_dir``, with that file's path relative to it; None when the stack never
    reaches the submission's own code (the driver's, libc's, a compiler header's)."""
    root, obj = source_dir.resolve(), str(library.resolve())
    for frame in stack:
        path = frame.path
        if frame.obj != obj or path is None or not path.is_absolute() or frame.line < 1:
            continue
        resolved = path.resolve()
        if resolved.is_relative_to(root):
            return frame, resolved.relative_to(root).as_posix()
    return None


def sites(reports: Iterable[Report], library: Path, source_dir: Path
          ) -> tuple[CtSite, ...]:
    """The sites of the reports of every length: one per (file, line, kind, function),
    counting the lengths that reached it, sorted by file and line; each with its source
    line quoted."""
    found: dict[tuple[str, int, str, str], tuple[set[int | None], str]] = {}
    for report in reports:
        located = site_frame(report.stack, library, source_dir)
        if located is None:
            continue
        frame, relative = located
        key = (relative, frame.line, KIND_OF.get(report.kind, OTHER), frame.function or "?")
        found.setdefault(key, (set(), report.what))[0].add(report.bits)
    return tuple(CtSite(file, line, function, kind, quote_line(source_dir / file, line),
                        len(lengths), what)
                 for (file, line, kind, function), (lengths, what) in sorted(found.items()))


def quote_line(path: Path, line: int) -> str:
    """Line ``line`` of ``path``, stripped and cut to :data:`MAX_QUOTE` characters;
    empty when the file cannot be read."""
    try:
        with path.open("rb") as source:
            for number, text in enumerate(source, 1):
                if number == line:
                    return text.decode("utf-8", errors="replace").strip()[:MAX_QUOTE]
    except OSError:
        return ""
    return ""


def verdict(found: Sequence[CtSite]) -> str:
    """``leaks`` where a site was found, else ``constant-time`` (of an analysis that ran)."""
    return LEAKS if found else CONSTANT_TIME
