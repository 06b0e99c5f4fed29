"""``ngcc evaluate``: every implementation folder of one or more submission archives,
built, KAT-gated, measured in one interleaved campaign and reported.

1. :func:`ngcc.library.archive.folders_of` finds the folders (reference, optimized and
   additional, in the ICCS layouts);
2. each is built with ``ngcc build`` and the flag set of its kind (reference: the
   guide's reference flags; optimized and additional: its performance flags; an
   additional folder that does not build for this host is a row saying so); when the
   build fails
   and its own diagnosis is certain of a fix (``base.errors.CERTAIN_FIXES``:
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
import platform
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ngcc.base import files as _files
from ngcc.base.errors import (
    ArchiveError,
    BuildError,
    InvalidNameError,
    KatError,
    KatGateError,
    option_text,
)
from ngcc.base.names import inside, unique_label
from ngcc.base.progress import Progress, progress_of
from ngcc.campaign import campaign as _campaign
from ngcc.campaign import ct_step as _ct_step
from ngcc.campaign import schema as _schema
from ngcc.campaign.cost import CostEstimate
from ngcc.campaign.rundir import refuse_foreign
from ngcc.campaign.settings import CampaignSettings
from ngcc.driver import kat as _kat
from ngcc.driver.contract import TrialRunner
from ngcc.evidence import evaluation as _evaluation
from ngcc.evidence import records as _records
from ngcc.evidence.evaluation import Evaluation, FolderEntry
from ngcc.evidence.run import Run
from ngcc.library import archive as _archive
from ngcc.library import build as _build
from ngcc.library import candidates as _candidates
from ngcc.library import registry as _registry
from ngcc.library.archive import Archives, Folder
from ngcc.library.candidates import AmbiguousInstanceError
from ngcc.measure.gate import KatChecker
from ngcc.measure.waiting import CpuWait
from ngcc.report import write as _report


@dataclass(frozen=True)
class FolderOption:
    """A build option given for the folders whose path ends with ``folder`` (``ngcc
    evaluate --exclude Foo-256:core.c``), for what a diagnosis is not certain of.

    Attributes:
        folder: the end of the folder's path as the rows show it (``Foo-256``,
            ``Optimized_Implementation/Foo-256``).
        option: ``exclude`` (a C file left out), ``define`` (a macro, ``NAME[=VALUE]``)
            or ``extra_cflags`` (compiler flags added).
        value: the file, the macro or the flags.
    """

    folder: str
    option: str
    value: str

    def matches(self, shown: str) -> bool:
        """Whether the folder shown as ``shown`` is one it names."""
        wanted = Path(self.folder.rstrip("/")).parts
        return bool(wanted) and Path(shown).parts[-len(wanted):] == wanted

    def words(self) -> str:
        """The option as ``ngcc build`` would take it: ``--exclude core.c``."""
        return option_text(self.option, self.value)


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


def _label_for(name: str, folder: Folder, taken: set[str], candidate: str = "external"
               ) -> str:
    """``Pavelor-512@ref``, ``Pavelor-512@opt``, in the harness's words (``Laurus-512@ref``
    for ``laurus_512``); when that is taken or a built-in's label, with the folder above
    it or the submission (``Wish512@opt@avx2``), then a number: the rule of every run's
    labels (:func:`ngcc.base.names.unique_label`)."""
    reserved = {label.casefold() for label in taken} | _registry.reserved_labels()
    return unique_label(_bare_label(candidate, name, folder.kind), reserved,
                        folder.label_hints)


def _bare_label(candidate: str, name: str, kind: str) -> str:
    """``Laurus-512@ref``: the harness's name of the instance, and the folder's kind."""
    return "%s@%s" % (_candidates.harness_name(candidate, name),
                      _archive.KIND_SUFFIX.get(kind, kind))


def _kept(previous: dict[str, FolderEntry], shown: str, digest: str, folder: Folder,
          run_dir: Path, requested: Sequence[FolderOption] = ()) -> FolderEntry | None:
    """The row of an earlier evaluation of the same folder, when its sources are
    unchanged and its library is still the one it built."""
    old = previous.get(shown)
    if old is None or old.status == "build failed" or old.source_sha256 != digest \
            or old.flags != folder.flags or old.library is None \
            or old.requested != tuple(o.words() for o in requested):
        return None
    library = run_dir / old.library
    if not library.is_file() or _files.sha256_file(library) != old.library_sha256:
        return None
    return old


def build_folder(folder: Folder, shown: str, run_dir: Path, taken: set[str],
                 timeout: float = _build.DEFAULT_TIMEOUT,
                 requested: Sequence[FolderOption] = (),
                 candidate: str | None = None) -> FolderEntry:
    """Build one folder into ``RUN_DIR/builds/<label>/`` with its kind's flag set, the
    options ``requested`` for it and the fixes its build diagnosis is certain of; a
    failure is the row's reason."""
    digest = _archive.source_digest(folder.path)
    applied: dict[str, list[str]] = {"define": [], "extra_cflags": [], "exclude": []}
    for option in requested:
        applied[option.option].append(option.value)
    asked = tuple(option.words() for option in requested)
    adjustments: list[str] = []
    builds = run_dir / _records.BUILDS_DIR
    staging = builds / _STAGING
    for _ in range(MAX_FIX_ROUNDS):
        shutil.rmtree(staging, ignore_errors=True)
        try:
            result = _build.build(folder.path, flags=folder.flags, out_dir=staging,
                                  candidate=candidate,
                                  defines=applied["define"],
                                  extra_cflags=applied["extra_cflags"],
                                  exclude=applied["exclude"], timeout=timeout,
                                  adjustments=adjustments)
        except (InvalidNameError, AmbiguousInstanceError) as exc:  # the header's name
            return _failed(folder, shown, digest, adjustments,
                           str(exc).replace(str(folder.path), shown))
        except BuildError as exc:
            new = [fix for fix in exc.fixes if fix.value not in applied[fix.option]]
            if not new:  # the page shows the folder as found, not where it lies here
                return _failed(folder, shown, digest, adjustments,
                               str(exc).replace(str(folder.path), shown), asked)
            for fix in new:
                applied[fix.option].append(fix.value)
                adjustments.append(str(fix))
            continue
        inst = result.instance
        label = _label_for(inst.name, folder, taken, inst.candidate)
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
            library_sha256=result.sha256, requested=asked)
    return _failed(folder, shown, digest, adjustments, "the build still failed after %d "
                   "rounds of fixes" % MAX_FIX_ROUNDS, asked)


def _failed(folder: Folder, shown: str, digest: str, adjustments: list[str],
            reason: str, requested: tuple[str, ...] = ()) -> FolderEntry:
    if folder.kind == "additional":  # a port for another platform fails here by design
        reason = ("an additional implementation (a platform port or alternative code) "
                  "that does not build for this host (%s): %s" % (platform.machine(), reason))
    return FolderEntry(
        submission=folder.submission, kind=folder.kind, folder=shown, source_sha256=digest,
        flags=folder.flags, adjustments=tuple(adjustments), status="build failed",
        reason=reason, label=None, instance=None, candidate=None, library=None,
        library_sha256=None, requested=requested)


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
              timeout: float = _build.DEFAULT_TIMEOUT,
              requested: Sequence[FolderOption] = ()) -> Evaluation:
    """Build every folder of the archives into ``run_dir`` (keeping the unchanged
    libraries of an earlier evaluation there), writing ``evaluation.json`` after each;
    ``requested``: options given for some folders.

    Raises:
        ArchiveError: an archive that is not a folder, no implementation folder, or an
            option for a folder that is none of them.
        ForeignRunDirError: ``run_dir`` is a folder of something else.
    """
    pairs = _archive.folders_of(archives)
    shown_all = [folder.shown(root) for root, folder in pairs]
    for option in requested:
        if not any(option.matches(shown) for shown in shown_all):
            raise ArchiveError("%s:%s names no folder of the archives (a folder is named by "
                               "the end of its path, e.g. %s)" % (
                                   option.folder, option.value, Path(shown_all[0]).name))
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
        mine = [option for option in requested if option.matches(shown)]
        entry = (_not_followed(folder, shown) if folder.linked_to is not None
                 else _kept(previous, shown, _archive.source_digest(folder.path), folder,
                            path, mine))
        if entry is None or (entry.label or "").casefold() in (
                {label.casefold() for label in taken} | _registry.reserved_labels()):
            entry = build_folder(folder, shown, path, taken, timeout, mine)
        if entry.label is not None:
            taken.add(entry.label)
        entries.append(entry)
        _evaluation.dump(path, Evaluation(archives=archive_names, folders=tuple(entries)))
    found = {shown: folder for shown, (_, folder) in zip(shown_all, pairs, strict=True)}
    entries = _inherit_candidates(entries, found, path, taken, timeout, requested)
    entries = _labels_by_content(entries, found, path, taken)
    _evaluation.dump(path, Evaluation(archives=archive_names, folders=tuple(entries)))
    shutil.rmtree(path / _records.BUILDS_DIR / _STAGING, ignore_errors=True)
    entries = _no_bare_label_for_a_shared_name([folder for _, folder in pairs], entries, path)
    evaluation = Evaluation(archives=archive_names, folders=tuple(entries))
    _evaluation.dump(path, evaluation)
    return evaluation


def _inherit_candidates(entries: list[FolderEntry], found: dict[str, Folder],
                        run_dir: Path, taken: set[str], timeout: float,
                        requested: Sequence[FolderOption]) -> list[FolderEntry]:
    """A library ``ngcc build`` could not place (``external``: its instance name is in
    no manifest, ``Foo_SIMD512`` for ``Foo512``) is built again as its submission's
    candidate when the submission's other libraries name one: its KAT files are then
    checked against that candidate's manifest lines by content."""
    known: dict[str, set[str]] = {}
    for entry in entries:
        if entry.candidate not in (None, "external"):
            known.setdefault(entry.submission, set()).add(str(entry.candidate))
    for index, entry in enumerate(entries):
        candidates = known.get(entry.submission, set())
        if entry.candidate != "external" or len(candidates) != 1:
            continue
        taken.discard(str(entry.label))
        entries[index] = build_folder(found[entry.folder], entry.folder, run_dir, taken,
                                      timeout, [option for option in requested
                                                if option.matches(entry.folder)],
                                      next(iter(candidates)))
        if entries[index].label is not None:
            taken.add(str(entries[index].label))
    return entries


def _labels_by_content(entries: list[FolderEntry], found: dict[str, Folder],
                       run_dir: Path, taken: set[str]) -> list[FolderEntry]:
    """A library whose instance name is no instance of its candidate (``Foo_SIMD512``
    where the harness says ``Foo512``) is labelled in the harness's words when its
    KAT_2_12 file equals the manifest line of one of them: ``Foo512@opt`` (the folder
    beside it on the pages); the KAT gate then checks every file so (``katref``)."""
    builds = run_dir / _records.BUILDS_DIR
    for index, entry in enumerate(entries):
        if not _unknown_instance(entry):
            continue
        try:
            [result] = _kat.check(run_dir / str(entry.library), files=("2_12",),
                                  out_dir=builds / _STAGING / "kat", progress=False)
        except KatError:  # its manifest unreadable: the KAT gate says so
            continue
        name = "%s@%s" % (result.matched, _archive.KIND_SUFFIX[entry.kind])
        if not result.matched or str(entry.label).casefold() == name.casefold():
            continue
        taken.discard(str(entry.label))
        folder = found[entry.folder]
        label = unique_label(name, {t.casefold() for t in taken} | _registry.reserved_labels(),
                             [folder.path.name, *folder.label_hints])
        os.replace(inside(builds, str(entry.label)), inside(builds, label))
        taken.add(label)
        entries[index] = replace(entry, label=label, library=(
            Path(_records.BUILDS_DIR) / label / Path(str(entry.library)).name).as_posix())
    return entries


def _unknown_instance(entry: FolderEntry) -> bool:
    """A library built here whose candidate the registry lists but not its instance."""
    if entry.status != "built" or entry.library is None or entry.instance is None:
        return False
    try:
        return _candidates.candidate(str(entry.candidate)).instance(entry.instance) is None
    except _candidates.UnknownCandidateError:  # external, baseline
        return False


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
        bare = _bare_label(str(entry.candidate), str(entry.instance), entry.kind)
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
             run_dir: str | os.PathLike[str] | None = None, *,
             settings: CampaignSettings | None = None, report: bool = True,
             formats: Sequence[str] = ("markdown", "html"), plots: bool = True,
             build_timeout: float = _build.DEFAULT_TIMEOUT, ct: bool | None = None,
             progress: bool | Progress = True,
             on_plan: Callable[[CostEstimate], None] | None = None,
             on_wait: Callable[[CpuWait], None] | None = None,
             runner: TrialRunner | None = None, kat_checker: KatChecker | None = None,
             requested: Sequence[FolderOption] = ()) -> EvaluationResult:
    """Evaluate submission archives: build, KAT-gate, measure, report (module docs).

    Args:
        archives: the folders of unpacked submission archives (one path, or several).
        run_dir: the run directory (default: the settings' ``run_dir``); an existing
            evaluation there is resumed.
        settings: the campaign's :class:`~ngcc.CampaignSettings` (default: the
            defaults); its libraries and labels are the evaluation's.
        report: write the report (``RUN_DIR/report/``) at the end.
        formats, plots: what the report holds (:func:`ngcc.report.write.write_report`).
        build_timeout: seconds the compiler runs of one build may take together.
        requested: build options for some folders (:class:`FolderOption`).
        ct: analyse each library built for constant time (default: where valgrind is
            on PATH): its cost in the plan ``on_plan`` is told (``ct_seconds``), each
            library's verdict in the progress.
        progress, on_plan, on_wait, runner, kat_checker: the campaign's
            (:class:`ngcc.Campaign`).

    Raises:
        ArchiveError, ForeignRunDirError: no folder to evaluate, or a run directory
            of something else (nothing written).

    It also raises what :meth:`ngcc.Campaign.run` raises, but the KAT gate's refusal of
    every library (then each is a row, and the report is written).
    """
    settings = settings or CampaignSettings()
    path = Path(run_dir) if run_dir is not None else settings.run_dir
    evaluation = build_all(archives, path, build_timeout, requested)
    built = [f for f in evaluation.folders if f.status == "built" and f.library]
    if not built:
        return EvaluationResult(evaluation, None, ())
    command = settings.command if settings.command != _schema.default(CampaignSettings, "command") \
        else ("ngcc.evaluate(...)",)
    reporter = progress_of(progress)
    analysed = [(str(f.label), path / str(f.library)) for f in built]
    analyse = _ct_step.wanted(ct)
    pending = len(_ct_step.todo(path, analysed)) if analyse else 0

    def planned(cost: CostEstimate) -> None:  # the campaign's plan, then the step's cost
        if on_plan is not None:
            on_plan(replace(cost, ct_libraries=pending, ct_seconds=_ct_step.seconds(pending)))
    job = _campaign.Campaign(
        [path / str(f.library) for f in built], progress=reporter, on_plan=planned,
        on_wait=on_wait, runner=runner, kat_checker=kat_checker,
        settings=replace(settings, labels=tuple(f.label for f in built), run_dir=path,
                         command=command))
    try:
        run = job.run()
    except KatGateError:  # every library refused: each is a row of the report
        run = Run(path)
    if analyse:
        _ct_step.run(path, analysed, progress=reporter)
    written = tuple(_report.write_report(run, formats=formats, plots=plots)) if report else ()
    return EvaluationResult(evaluation, run, written)
