"""``ngcc validate``: check a run directory against itself.

Every record's statistics are recomputed from its raw per-call samples with the very
functions the campaign used (:mod:`ngcc.stats.recheck`, the checks a resumed campaign runs
too), and every report page and table is regenerated (in the formats ``report/`` holds) and
compared byte for byte with the one in ``report/``, and every link of every Markdown
and HTML page must resolve to an existing file inside the run directory. Each
difference names the file, so a tampered record, a raw file that does not match its
record, a page edited by hand or a page whose plot is gone is found and located.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from ngcc.base import untrusted as _untrusted
from ngcc.base.errors import CorruptRecordError, ValidationError
from ngcc.evidence import records as _records
from ngcc.evidence.analyses import ANALYSES
from ngcc.evidence.run import Run, load_run
from ngcc.report import export as _export
from ngcc.report import pages as _pages
from ngcc.report import write as _write
from ngcc.stats.recheck import Difference, record_problems


@dataclass
class Validation:
    """The outcome of :func:`validate`.

    Attributes:
        run_dir: the run directory checked.
        records_checked: how many records were recomputed from their raw samples.
        pages_checked: how many report pages were regenerated and compared.
        differences: every disagreement found (empty when the run is consistent).
        refused: each job the driver's checks refused (status ``protocol``: a library
            whose figures no honest run gives, e.g. one keeping its last answer, caught
            by a trial's honesty batch), as ``LABEL at N B: why``; a consistent run
            may hold them, and says so.
    """

    run_dir: Path
    records_checked: int = 0
    pages_checked: int = 0
    differences: list[Difference] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing differs."""
        return not self.differences

    def raise_for_differences(self) -> None:
        """Raise :class:`~ngcc.base.errors.ValidationError` listing the differences, if any."""
        if self.differences:
            raise ValidationError(self.run_dir, [str(d) for d in self.differences])


def validate(path: str | os.PathLike[str]) -> Validation:
    """Recompute every record from its raw samples and regenerate every report page.

    Raises:
        ForeignRunDirError: ``path`` is not a run directory.
        CorruptRecordError: ``campaign.json``/``build.json`` or a record listed as done
            cannot be loaded, or a field is missing, of the wrong type or out of range
            (the message names file and field).
    """
    run = load_run(path)
    result = Validation(run_dir=run.path, refused=[
        "%s at %d B: %s" % (job.label, job.message_bytes, job.error or job.status)
        for job in run.jobs if job.status == "protocol"])
    for record in run.records:
        result.differences += record_problems(record, run.run_id, run.build)
        result.records_checked += 1
    result.differences += _unlisted_records(run)
    result.differences += kat_log_problems(run)
    unsound = analysis_problems(run)
    result.differences += unsound
    if unsound:  # the pages read every analysis's evidence: they cannot be made again
        result.differences.append(Difference("report/", "not regenerated: an analysis's "
                                             "evidence file above is unsound"))
        return result
    result.differences += check_pages(run)
    result.pages_checked = len(expected_files(run))
    return result


# ------------------------------------------------------------------ records

def kat_log_problems(run: Run) -> list[Difference]:
    """Every KAT log that ``build.json`` (or, without it, a record) names must be there
    with the sha256 it states: one difference per missing, unreadable or rewritten log."""
    facts = {entry.kat.log: entry.kat for entry in run.build.libraries} if run.build else {}
    for record in run.records:
        facts.setdefault(record.kat.log, record.kat)
    found = []
    for log, kat in sorted(facts.items()):
        defect = _records.evidence_file_defect(run.path, log, kat.log_sha256)
        if defect is not None:
            found.append(Difference(log, f"{defect}; the KAT verdict {kat.verdict} rests on "
                                         "it: rerun the campaign to check the library again"))
    return found


def analysis_problems(run: Run) -> list[Difference]:
    """Every evidence file of an analysis (``ngcc.evidence.analyses``: the leak tests,
    constant time) read and checked by its slice: one difference per unsound file."""
    found = []
    for analysis in ANALYSES:
        evidence = importlib.import_module(analysis.module("evidence"))
        for path in sorted((run.path / analysis.folder).glob("*/*.json")):
            try:
                evidence.read_evidence(path)
            except CorruptRecordError as exc:
                found.append(Difference(_relative(path, run.path), exc.defect))
    return found


def _unlisted_records(run: Run) -> list[Difference]:
    listed = {(run.path / job.record).resolve() for job in run.jobs if job.status == "done"}
    return [Difference(_relative(path, run.path), "a record that campaign.json does not "
                       "list as done; delete it or rerun the campaign to complete the job")
            for path in sorted((run.path / "records").glob("*/*.json"))
            if path.resolve() not in listed]


# ------------------------------------------------------------------ pages

def drawn(run: Run) -> bool:
    """Whether ``report/`` was written with its plots (``ngcc report`` without
    ``--no-plots``): any of the plots its pages would link is there."""
    report_dir = run.path / "report"
    return any((report_dir / f"{stem}.png").is_file() for stem in _pages.plot_stems(run))


def written_formats(run: Run) -> tuple[str, ...]:
    """The formats ``report/`` holds: ``markdown`` when it has a Markdown page or no HTML
    page (so an empty ``report/`` is found missing), ``html``, ``csv``, ``json`` when their
    files are there."""
    report_dir = run.path / "report"
    html = any(report_dir.glob("*.html"))
    formats = ["markdown"] if any(report_dir.glob("*.md")) or not html else []
    formats += ["html"] if html else []
    formats += [kind for kind in ("csv", "json")
                if (report_dir / f"{_export.STATISTICS_STEM}.{kind}").is_file()]
    return tuple(formats)


def expected_files(run: Run) -> dict[str, tuple[str, ...]]:
    """The report files regenerated from the evidence, in the formats ``report/`` holds:
    file name → the texts it may have, written with plots (HTML pages inlining the PNG
    files found in ``report/``) or without; the first is the one :func:`drawn` expects."""
    report_dir = run.path / "report"
    images = {path.name: _untrusted.read_regular(path)
              for path in sorted(report_dir.glob("*.png"))}
    formats = written_formats(run)
    plots = drawn(run)
    first = _write.report_files(run, formats, plots, images)
    other = _write.report_files(run, formats, not plots, images)
    return {name: tuple(dict.fromkeys((text, other[name]))) for name, text in first.items()}


def check_pages(run: Run) -> list[Difference]:
    """Regenerate every page (and table) and compare it with ``report/`` byte for byte
    (a page may have been written with its plots or without: either is itself); then
    :func:`check_links`, which finds a page that links a plot no longer there."""
    report_dir = run.path / "report"
    expected = expected_files(run)
    found = []
    for name, texts in expected.items():
        path = report_dir / name
        if not path.is_file():
            found.append(Difference(f"report/{name}", "missing; run `ngcc report "
                                    f"{run.path}` to write it"))
            continue
        stored = _untrusted.read_regular(path)
        if all(stored != text.encode("utf-8") for text in texts):
            found.append(Difference(f"report/{name}", _first_difference(stored, texts[0])))
    for path in sorted([*report_dir.glob("*.md"), *report_dir.glob("*.html")]):
        if path.name not in expected:
            found.append(Difference(f"report/{path.name}",
                                    "not a page of this run (no candidate of that name)"))
    return found + check_links(run)


_MARKDOWN_LINK = re.compile(r"(?<!\\)\]\(([^)\s]+)\)")  # not an escaped \]
_HTML_LINK = re.compile(r"""\b(href|src)\s*=\s*["']([^"']*)["']""")
_INLINE_PNG = re.compile(r"data:image/png;base64,[A-Za-z0-9+/]*={0,2}")
_HTML_ID = re.compile(r"""\bid\s*=\s*["']([^"']*)["']""")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def page_links(path: Path) -> list[str]:
    """Every link and image source of a Markdown or HTML page, in order (not what a
    Markdown code span holds: that is literal text). An HTML image's inline PNG is
    ``src=data:…``, every other target as written."""
    text = _untrusted.read_text(path)
    if path.suffix == ".html":
        return [("src=" + target if kind == "src" and target.startswith("data:") else target)
                for kind, target in _HTML_LINK.findall(text)]
    return _MARKDOWN_LINK.findall(_untrusted.CODE_SPAN.sub("", text))


def page_anchors(page: Path) -> list[str]:
    """What a ``#fragment`` may name on a page: an HTML page's ids, a Markdown page's
    headings and anchors (``report.export.markdown_anchors``)."""
    text = _untrusted.read_text(page)
    return _HTML_ID.findall(text) if page.suffix == ".html" else _export.markdown_anchors(text)


def link_problem(run_dir: Path, page: Path, target: str) -> str | None:
    """What is wrong with one link of ``page`` (None when it resolves to a file inside
    the run directory, or is an inline PNG image; a ``#fragment`` must name an anchor
    of the page it points at, in Markdown as in HTML). Any other address is refused:
    another host, ``javascript:``, ``data:`` (but the images), an absolute path, ``..``."""
    if target.startswith("src=data:"):
        return None if _INLINE_PNG.fullmatch(target[4:]) else "inline data other than a PNG image"
    if target.startswith("#"):
        return None if target[1:] in page_anchors(page) else "an anchor the page lacks"
    if _SCHEME.match(target) or target.startswith("//"):
        return "an address outside the run directory (a report links only its own files)"
    relative = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not relative:
        return "an empty link"
    resolved = (page.parent / relative).resolve()
    try:
        resolved.relative_to(run_dir.resolve())
    except ValueError:
        return "a file outside the run directory"
    if not _untrusted.local_href(target):
        return "not a plain relative path (a report writes only those)"
    if not resolved.is_file():
        return "which does not exist"
    fragment = target.partition("#")[2]
    if fragment and resolved.suffix in (".md", ".html") and \
            fragment not in page_anchors(resolved):
        return "an anchor %s lacks" % resolved.name
    return None


def check_links(run: Run) -> list[Difference]:
    """Every link in every page of ``report/`` (Markdown and HTML) must resolve to an
    existing file inside the run directory: one difference per broken link, naming the
    page and the link."""
    report_dir = run.path / "report"
    found = []
    for page in sorted([*report_dir.glob("*.md"), *report_dir.glob("*.html")]):
        for target in page_links(page):
            problem = link_problem(run.path, page, target)
            if problem is not None:
                shown = target if len(target) <= 120 else target[:119] + "…"
                found.append(Difference(f"report/{page.name}", f"links {shown!r}, {problem}"))
    return found


def _first_difference(stored: bytes, text: str) -> str:
    old = stored.decode("utf-8", errors="replace").split("\n")
    new = text.split("\n")
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return (f"differs from the page regenerated from the evidence at line {number}: "
                    f"{_clip(a)!r} (regenerated: {_clip(b)!r})")
    return (f"differs from the page regenerated from the evidence in length "
            f"({len(old)} lines, regenerated {len(new)})")


def _clip(line: str, width: int = 80) -> str:
    return line if len(line) <= width else line[:width - 1] + "…"


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
