"""``ngcc evaluate``: every implementation folder of one or more submission archives,
built, KAT-gated, measured in one interleaved campaign and reported.

1. :func:`ngcc.library.archive.folders_of` finds the folders (reference and optimized, in
   the ICCS layouts);
2. each is built with ``ngcc build`` and the flag set of its kind (reference: the
   guide's reference flags; optimized: its performance flags); when the build fails
   and its own diagnosis is certain of a fix (a missing ``-m`` flag for the
   intrinsics a file uses, the define that leaves out a guarded ``main``:
   :class:`ngcc.base.errors.BuildFix`), the fix is applied and the build run again, and
   the fix is recorded as an adjustment (in the sidecar, so in the KAT log, and in
   ``evaluation.json``, so on the pages); a folder that still does not build is a row
   with the build's reason;
3. the libraries built go into one :class:`~ngcc.campaign.campaign.Campaign` (the KAT gate
   refuses what does not pass: a row too; interleaved trials, so drift hits every
   library alike) in the same run directory;
4. each library built is analysed for constant time (``ngcc ct``'s analysis, into
   ``RUN_DIR/ct/``: :mod:`ngcc.campaign.ct_step`; on by default where valgrind is
   present, ``ct=False`` / ``--no-ct`` skips it);
5. the report is written (``RUN_DIR/report/``: index, a page per candidate, summary).

Run again with the same archives and run directory, it resumes: a folder whose sources
are unchanged keeps its library, and the campaign keeps its finished jobs. The
candidate of each library is the one ``ngcc build`` gives it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ngcc.base import files as _files
from ngcc.base.clock import run_id_now
from ngcc.base.errors import BuildError, InvalidNameError, KatGateError
from ngcc.base.names import inside, unique_label
from ngcc.campaign import campaign as _campaign
from ngcc.campaign import ct_step as _ct_step
from ngcc.campaign.rundir import refuse_foreign
from ngcc.evidence import evaluation as _evaluation
from ngcc.evidence import records as _records
from ngcc.evidence.evaluation import Evaluation, FolderEntry
from ngcc.evidence.run import Run
from ngcc.library import archive as _archive
from ngcc.library import build as _build
from ngcc.library import registry as _registry
from ngcc.library.archive import Archives, Folder
from ngcc.library.candidates import AmbiguousInstanceError
from ngcc.report import write as _report

#: How many times a build is run again with the fixes its diagnosis named.
MAX_FIX_ROUNDS = 4
_STAGING = ".building"


@dataclass(frozen=True)
class EvaluationResult:
    """What :func:`evaluate` made.

    Attributes:
        evaluation: a row per folder (``evaluation.json``).
        run: the campaign's run (None when no folder built).
        report: the files of the report written (empty without a run).
    """

    evaluation: Evaluation
    run: Run | None
    report: tuple[Path, ...]

    @property
    def not_built(self) -> list[FolderEntry]:
        """The folders that did not build, or built but cannot run here."""
        return [f for f in self.evaluation.folders if f.status != "built"]


def plan_lines(archives: Archives, ct: bool | None = None) -> list[str]:
    """What ``--dry-run`` prints: each folder found, its kind and the build options,
    and the constant-time step's cost where it runs (``ct``: as :func:`evaluate`).

    Raises:
        ArchiveError: an archive that is not a folder, or no implementation folder.
    """
    pairs = _archive.folders_of(archives)
    lines = ["%d implementation folder(s) found in %d archive(s):" % (
        len(pairs), len({root for root, _ in pairs}))]
    for root, folder in pairs:
        if folder.linked_to is not None:
            lines.append("  %-9s not followed (a link to %s)       %s" % (
                folder.kind, folder.linked_to, folder.shown(root)))
            continue
        lines.append("  %-9s ngcc build --flags %-11s %s" % (
            folder.kind, folder.flags, folder.shown(root)))
    lines.append("each build that fails may be run again with the fixes its own diagnosis "
                 "is certain of (a missing -m flag, the define that leaves out a guarded "
                 "main), each recorded as an adjustment; nothing was built")
    if _ct_step.wanted(ct):
        lines.append(_ct_step.plan_line(sum(1 for _, f in pairs if f.linked_to is None)))
    return lines


def _label_for(name: str, folder: Folder, taken: set[str]) -> str:
    """``Pavelor-512@ref``, ``Pavelor-512@opt``; when that is taken or a built-in's label,
    with the folder above it or the submission (``Wish512@opt@avx2``), then a number:
    the rule of every run's labels (:func:`ngcc.base.names.unique_label`)."""
    reserved = {label.casefold() for label in taken} | _registry.reserved_labels()
    return unique_label("%s@%s" % (name, _archive.KIND_SUFFIX[folder.kind]), reserved,
                        folder.label_hints)


def _kept(previous: dict[str, FolderEntry], shown: str, digest: str, folder: Folder,
          run_dir: Path) -> FolderEntry | None:
    """The row of an earlier evaluation of the same folder, when its sources are
    unchanged and its library is still the one it built."""
    old = previous.get(shown)
    if old is None or old.status == "build failed" or old.source_sha256 != digest \
            or old.flags != folder.flags or old.library is None:
        return None
    library = run_dir / old.library
    if not library.is_file() or _files.sha256_file(library) != old.library_sha256:
        return None
    return old


def build_folder(folder: Folder, shown: str, run_dir: Path, taken: set[str],
                 timeout: float = _build.DEFAULT_TIMEOUT) -> FolderEntry:
    """Build one folder into ``RUN_DIR/builds/<label>/`` with its kind's flag set and
    the fixes its build diagnosis is certain of; a failure is the row's reason."""
    digest = _archive.source_digest(folder.path)
    defines: list[str] = []
    extra: list[str] = []
    adjustments: list[str] = []
    builds = run_dir / _records.BUILDS_DIR
    staging = builds / _STAGING
    for _ in range(MAX_FIX_ROUNDS):
        shutil.rmtree(staging, ignore_errors=True)
        try:
            result = _build.build(folder.path, flags=folder.flags, out_dir=staging,
                                  defines=defines, extra_cflags=extra, timeout=timeout,
                                  adjustments=adjustments)
        except (InvalidNameError, AmbiguousInstanceError) as exc:  # the header's name
            return _failed(folder, shown, digest, adjustments,
                           str(exc).replace(str(folder.path), shown))
        except BuildError as exc:
            new = [fix for fix in exc.fixes
                   if fix.value not in (defines if fix.option == "define" else extra)]
            if not new:  # the page shows the folder as found, not where it lies here
                return _failed(folder, shown, digest, adjustments,
                               str(exc).replace(str(folder.path), shown))
            for fix in new:
                (defines if fix.option == "define" else extra).append(fix.value)
                adjustments.append(str(fix))
            continue
        inst = result.instance
        label = _label_for(inst.name, folder, taken)
        target = inside(builds, label)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
        missing = inst.missing_cpu_features
        return FolderEntry(
            submission=folder.submission, kind=folder.kind, folder=shown,
            source_sha256=digest, flags=folder.flags, adjustments=tuple(adjustments),
            status="cannot run here" if missing else "built",
            reason="built for CPU features this CPU lacks: %s" % ", ".join(missing)
            if missing else None, label=label, instance=inst.name,
            candidate=inst.candidate,
            library=(Path(_records.BUILDS_DIR) / label / inst.library.name).as_posix(),
            library_sha256=result.sha256)
    return _failed(folder, shown, digest, adjustments, "the build still failed after %d "
                   "rounds of fixes" % MAX_FIX_ROUNDS)


def _failed(folder: Folder, shown: str, digest: str, adjustments: list[str],
            reason: str) -> FolderEntry:
    return FolderEntry(
        submission=folder.submission, kind=folder.kind, folder=shown, source_sha256=digest,
        flags=folder.flags, adjustments=tuple(adjustments), status="build failed",
        reason=reason, label=None, instance=None, candidate=None, library=None,
        library_sha256=None)


def _not_followed(folder: Folder, shown: str) -> FolderEntry:
    """The row of a symbolic link to a folder: not followed, nothing of it read."""
    return FolderEntry(
        submission=folder.submission, kind=folder.kind, folder=shown,
        source_sha256=_archive.source_digest(folder.path), flags=folder.flags,
        adjustments=(), status="not followed",
        reason="a symbolic link to %s: a submission is the files in its archive (copy "
               "the folder in to evaluate it)" % folder.linked_to,
        label=None, instance=None, candidate=None, library=None, library_sha256=None)


def build_all(archives: Archives, run_dir: str | os.PathLike[str],
              timeout: float = _build.DEFAULT_TIMEOUT) -> Evaluation:
    """Build every folder of the archives into ``run_dir`` (keeping the unchanged
    libraries of an earlier evaluation there), writing ``evaluation.json`` after each.

    Raises:
        ArchiveError: an archive that is not a folder, or no implementation folder.
        ForeignRunDirError: ``run_dir`` is a folder of something else.
    """
    pairs = _archive.folders_of(archives)
    path = Path(run_dir)
    refuse_foreign(path, evaluation=True)
    earlier = _evaluation.load(path) if (path / _records.EVALUATION_FILE).exists() else None
    previous = {f.folder: f for f in earlier.folders} if earlier else {}
    (path / _records.BUILDS_DIR).mkdir(parents=True, exist_ok=True)
    archive_names = tuple(str(root) for root in dict.fromkeys(root for root, _ in pairs))
    entries: list[FolderEntry] = []
    taken: set[str] = set()
    for root, folder in pairs:
        shown = folder.shown(root)
        entry = (_not_followed(folder, shown) if folder.linked_to is not None
                 else _kept(previous, shown, _archive.source_digest(folder.path), folder,
                            path))
        if entry is None or (entry.label or "").casefold() in (
                {label.casefold() for label in taken} | _registry.reserved_labels()):
            entry = build_folder(folder, shown, path, taken, timeout)
        if entry.label is not None:
            taken.add(entry.label)
        entries.append(entry)
        _evaluation.dump(path, Evaluation(archives=archive_names, folders=tuple(entries)))
    shutil.rmtree(path / _records.BUILDS_DIR / _STAGING, ignore_errors=True)
    entries = _no_bare_label_for_a_shared_name([folder for _, folder in pairs], entries, path)
    evaluation = Evaluation(archives=archive_names, folders=tuple(entries))
    _evaluation.dump(path, evaluation)
    return evaluation


def _no_bare_label_for_a_shared_name(folders: list[Folder], entries: list[FolderEntry],
                                     run_dir: Path) -> list[FolderEntry]:
    """When folders of one kind declare one instance name, none keeps the bare label
    (``TinyHash-256@ref``): the one that got it first gets its folder too (its library
    moved), so no submission takes the bare label from another, the genuine one
    included, by the order of their names."""
    declared: dict[tuple[str, str], int] = {}
    for entry in entries:
        if entry.label is not None and entry.instance is not None:
            key = (entry.instance.casefold(), entry.kind)
            declared[key] = declared.get(key, 0) + 1
    taken = {str(e.label).casefold() for e in entries} | _registry.reserved_labels()
    result = []
    for folder, entry in zip(folders, entries, strict=True):
        bare = "%s@%s" % (entry.instance, _archive.KIND_SUFFIX.get(entry.kind, entry.kind))
        if (entry.label != bare or entry.library is None
                or declared[(str(entry.instance).casefold(), entry.kind)] < 2):
            result.append(entry)  # unlabelled (not built, not followed), or alone
            continue
        label = unique_label(bare, taken | {bare.casefold()}, folder.label_hints)
        taken.add(label.casefold())
        builds = run_dir / _records.BUILDS_DIR
        os.replace(inside(builds, bare), inside(builds, label))
        result.append(replace(entry, label=label, library=(
            Path(_records.BUILDS_DIR) / label / Path(entry.library).name).as_posix()))
    return result


def evaluate(archives: Archives,
             run_dir: str | os.PathLike[str] | None = None, *, report: bool = True,
             formats: Sequence[str] = ("markdown", "html"), plots: bool = True,
             build_timeout: float = _build.DEFAULT_TIMEOUT, ct: bool | None = None,
             **campaign: Any) -> EvaluationResult:
    """Evaluate submission archives: build, KAT-gate, measure, report (module docs).

    Args:
        archives: the folders of unpacked submission archives (one path, or several).
        run_dir: the run directory (default ``runs/<UTC start time>``); an existing
            evaluation there is resumed.
        report: write the report (``RUN_DIR/report/``) at the end.
        formats, plots: what the report holds (:func:`ngcc.report.write.write_report`).
        build_timeout: seconds the compiler runs of one build may take together.
        ct: analyse each library built for constant time (default: where valgrind is
            on PATH).
        campaign: the settings of :class:`ngcc.Campaign` (``quick``, ``lengths``,
            ``trials``, ``cpu``, ``progress``, ``runner``, ``kat_checker``, …); the
            libraries and labels are the evaluation's.

    Raises:
        ArchiveError, ForeignRunDirError: no folder to evaluate, or a run directory
            of something else (nothing written).

    It also raises what :meth:`ngcc.Campaign.run` raises, but the KAT gate's refusal of
    every library (then each is a row, and the report is written).
    """
    path = Path(run_dir) if run_dir is not None else Path("runs") / run_id_now()
    evaluation = build_all(archives, path, build_timeout)
    built = [f for f in evaluation.folders if f.status == "built" and f.library]
    if not built:
        return EvaluationResult(evaluation, None, ())
    campaign.setdefault("command", ["ngcc.evaluate(...)"])
    job = _campaign.Campaign([path / str(f.library) for f in built],
                             labels=[f.label for f in built], run_dir=path, **campaign)
    try:
        run = job.run()
    except KatGateError:  # every library refused: each is a row of the report
        run = Run(path)
    if _ct_step.wanted(ct):
        _ct_step.run(path, [(str(f.label), path / str(f.library)) for f in built])
    written = tuple(_report.write_report(run, formats=formats, plots=plots)) if report else ()
    return EvaluationResult(evaluation, run, written)
