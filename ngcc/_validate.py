"""``ngcc validate``: check a run directory against itself.

Every record's statistics are recomputed from its raw per-call samples with the very
functions the campaign used (:mod:`ngcc._stats`, never a second implementation), and
every report page and table is regenerated (in the formats ``report/`` holds) and
compared byte for byte with the one in ``report/``, and every link of every Markdown
and HTML page must resolve to an existing file inside the run directory. Each
difference names the file, so a tampered record, a raw file that does not match its
record, a page edited by hand or a page whose plot is gone is found and located.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np

from ngcc import _export, _records, _report, _stats, _untrusted
from ngcc._errors import CorruptRecordError, ValidationError
from ngcc._model import BuildState, Record, Resources
from ngcc._run import Run, RunRecord, load_run

RELATIVE_TOLERANCE = 1e-9
"""Floats may differ by this much (another numpy/scipy build rounds differently);
anything a person would notice is far larger."""


@dataclass(frozen=True)
class Difference:
    """One disagreement: the file (relative to the run directory) and what differs."""

    file: str
    what: str

    def __str__(self) -> str:
        return f"{self.file}: {self.what}"


@dataclass
class Validation:
    """The outcome of :func:`validate`.

    Attributes:
        run_dir: the run directory checked.
        records_checked: how many records were recomputed from their raw samples.
        pages_checked: how many report pages were regenerated and compared.
        differences: every disagreement found (empty when the run is consistent).
    """

    run_dir: Path
    records_checked: int = 0
    pages_checked: int = 0
    differences: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing differs."""
        return not self.differences

    def raise_for_differences(self) -> None:
        """Raise :class:`~ngcc._errors.ValidationError` listing the differences, if any."""
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
    result = Validation(run_dir=run.path)
    for record in run.records:
        result.differences += record_problems(record, run.run_id, run.build)
        result.records_checked += 1
    result.differences += _unlisted_records(run)
    result.differences += kat_log_problems(run)
    result.differences += check_pages(run)
    result.pages_checked = len(expected_files(run))
    return result


# ------------------------------------------------------------------ records

def record_problems(record: RunRecord, run_id: str, build: BuildState | None
                    ) -> list[Difference]:
    """Everything ``validate`` finds wrong with one record: :func:`check_record` and
    :func:`check_against_run`. A resumed campaign keeps a record only when this is
    empty, and measures the job again otherwise."""
    return check_record(record) + check_against_run(record, run_id, build)


def check_record(record: RunRecord) -> list[Difference]:
    """Recompute one record's per-trial and aggregate statistics and its resources from
    its raw samples."""
    name = record.relpath
    try:
        cycles = record.cycles()
    except CorruptRecordError as exc:
        return [Difference(record.raw.path, f"{exc.defect} (record {name})")]
    if len(cycles) != len(record.trials):
        return [Difference(name, f"{len(record.trials)} trials, but the raw file holds "
                                 f"{len(cycles)}")]
    found = list(_trial_differences(record, cycles))
    found += _compare("statistics", record.statistics.to_json(),
                      _recompute(record, cycles).to_json())
    found += _compare("resources", record.resources.to_json(), _resources(record).to_json())
    found += _compare("raw.calls_per_trial", list(record.raw.calls_per_trial),
                      [len(c) for c in cycles])
    return [Difference(name, what) for what in found]


def check_against_run(record: Record, run_id: str, build: BuildState | None
                      ) -> list[Difference]:
    """What a record repeats from its run must agree with it: the run id, and the
    library's implementation and KAT facts in ``build.json``."""
    found = _compare("run_id", record.run_id, run_id, "in campaign.json")
    entry = build.entry(record.label) if build is not None else None
    if entry is not None:
        kat = entry.kat.to_json()
        if not record.kat.files:  # a schema-1 record did not keep the files checked
            kat["files"] = []
        found += _compare("kat", record.kat.to_json(), kat, "in build.json")
        found += _compare("implementation", record.implementation.to_json(),
                          entry.implementation.to_json(), "in build.json")
    return [Difference(record.relpath, what) for what in found]


def _recompute(record: Record, cycles: Sequence[np.ndarray]) -> Any:
    """The statistics by the rules of the version that wrote them (``version``)."""
    return _stats.aggregate_trials(record.trials, cycles, record.message_bytes,
                                   record.plan.cpu, record.statistics.version)


def _trial_differences(record: Record, cycles: Sequence[np.ndarray]) -> Iterator[str]:
    for trial, samples in zip(record.trials, cycles, strict=True):
        where = f"trials[{trial.index}]"
        yield from _compare(f"{where}.calls", trial.calls, len(samples))
        expected = _stats.trial_statistics(samples, trial.loop_ticks, trial.loop_seconds,
                                           trial.frequency_hz)
        yield from _compare(f"{where}.statistics", trial.statistics.to_json(),
                            expected.to_json())


def _resources(record: Record) -> Resources:
    return Resources(elf_image_bytes=record.resources.elf_image_bytes,
                     baseline_rss_kib=max(t.baseline_rss_kib for t in record.trials),
                     peak_rss_kib=max(t.peak_rss_kib for t in record.trials))


def _compare(where: str, stored: Any, recomputed: Any,
             source: str = "recomputed from the raw samples") -> list[str]:
    """Where ``stored`` and ``recomputed`` differ, as ``where.key is … <source> …``."""
    if isinstance(stored, Mapping) and isinstance(recomputed, Mapping):
        found = []
        for key in sorted(set(stored) | set(recomputed)):
            if key not in stored:
                found.append(f"{where}.{key} is missing (recomputed {recomputed[key]!r})")
            elif key not in recomputed:
                found.append(f"{where}.{key} is not a statistic ngcc computes")
            else:
                found += _compare(f"{where}.{key}", stored[key], recomputed[key], source)
        return found
    if isinstance(stored, list) and isinstance(recomputed, list) and len(stored) == len(
            recomputed):
        return [what for index, (a, b) in enumerate(zip(stored, recomputed, strict=True))
                for what in _compare(f"{where}[{index}]", a, b, source)]
    if _same(stored, recomputed):
        return []
    return [f"{where} is {stored!r}, {source} {recomputed!r}"]


def _same(stored: Any, recomputed: Any) -> bool:
    numbers = (int, float)
    if (isinstance(stored, numbers) and isinstance(recomputed, numbers)
            and not isinstance(stored, bool) and not isinstance(recomputed, bool)):
        return math.isclose(stored, recomputed, rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0)
    return bool(stored == recomputed)


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
    return any((report_dir / f"{stem}.png").is_file() for stem in _report.plot_stems(run))


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
    first = _report.report_files(run, formats, plots, images)
    other = _report.report_files(run, formats, not plots, images)
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


def link_problem(run_dir: Path, page: Path, target: str) -> str | None:
    """What is wrong with one link of ``page`` (None when it resolves to a file inside
    the run directory, or is an inline PNG image, or names an anchor the page has).
    Any other address is refused: another host, ``javascript:``, ``data:`` (but the
    images), an absolute path, ``..``."""
    if target.startswith("src=data:"):
        return None if _INLINE_PNG.fullmatch(target[4:]) else "inline data other than a PNG image"
    if target.startswith("#"):
        ids = _HTML_ID.findall(_untrusted.read_text(page))
        return None if page.suffix != ".html" or target[1:] in ids else "an anchor the page lacks"
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
    return None if resolved.is_file() else "which does not exist"


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
