"""Submission archives: the implementation folders in them, and what ``ngcc evaluate``
made of each (``evaluation.json`` in the run directory).

An ICCS submission archive holds, per candidate, ``<Name>/…/Reference_Implementation/
<instance>/`` and ``…/Optimized_Implementation/<instance>/`` (often under
``Implementations and Test_Vectors/API_CryptHash/``; names with spaces, sometimes a
level more such as ``Optimized_Implementation/avx2/<instance>/``). :func:`find_folders`
lists every such folder, nearest the kind folder first; a folder is an implementation
when it holds ``CryptHash_AlgorithmInstance.h``, or when it is a kind folder's child
holding C files (so that a folder without the header still gets a row, with the
build's reason).

:class:`Evaluation` is the evidence of one evaluation: a row per folder (built with
which flag set and adjustments, or why not), read by the report pages (a table per
candidate and on the index) and by a resumed ``ngcc evaluate``. Folder names are shown,
never used as names: the library labels follow the name rule.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ngcc._records import EVALUATION_FILE, load_file, write_json
from ngcc.base.codec import Evidence, FieldError
from ngcc.base.errors import ArchiveError, InvalidNameError
from ngcc.base.names import check_name

SCHEMA_EVALUATION = "ngcc.evaluation/1"
EVALUATION_REMEDY = ("Run `ngcc evaluate` with the same archives and --run-dir again to "
                     "rebuild it, or start a new --run-dir.")
#: The folders that say which kind of implementation is below them (case and the
#: separator aside), and the kind.
KIND_FOLDERS = {"reference_implementation": "reference",
                "optimized_implementation": "optimized",
                "optimised_implementation": "optimized"}
#: The flag set of ``ngcc build`` each kind is built with (the NGCC guide's).
KIND_FLAGS = {"reference": "reference", "optimized": "performance"}
KIND_SUFFIX = {"reference": "ref", "optimized": "opt"}
INSTANCE_HEADER = "CryptHash_AlgorithmInstance.h"
#: Folder names that hold a submission's parts rather than name it.
_GENERIC_PREFIXES = ("implementation", "api_", "api ", "submission", "source")
MAX_DEPTH = 8
"""How deep below an archive folders are looked for (the ICCS layouts need 5)."""


@dataclass(frozen=True)
class Folder:
    """One implementation folder of a submission archive.

    Attributes:
        path: the folder, absolute.
        submission: the submission's name: the archive's top folder (``Pavelor``).
        kind: ``reference`` or ``optimized``.
        shown: the folder relative to the archive's parent, as pages show it.
    """

    path: Path
    submission: str
    kind: str

    @property
    def flags(self) -> str:
        """The ``ngcc build`` flag set of its kind."""
        return KIND_FLAGS[self.kind]

    def shown(self, archive: Path) -> str:
        """The folder relative to the archive's parent (``Pavelor/…/Pavelor-512``)."""
        return self.path.relative_to(archive.parent).as_posix()


def _kind(name: str) -> str | None:
    return KIND_FOLDERS.get(name.casefold().replace(" ", "_").replace("-", "_"))


def _submission(archive: Path, parts: Sequence[str]) -> str:
    """The submission a folder belongs to: the first folder below the archive unless it
    is generic (``Implementations and Test_Vectors``), else the archive's own name."""
    if parts and not parts[0].casefold().startswith(_GENERIC_PREFIXES):
        return parts[0]
    return archive.name


def _has_c_files(path: Path) -> bool:
    try:
        return any(p.suffix == ".c" and p.is_file() for p in path.iterdir())
    except OSError:
        return False


def find_folders(archive: str | os.PathLike[str]) -> list[Folder]:
    """Every implementation folder below ``archive`` (see the module's docstring), in
    path order. Symbolic links to folders are not followed.

    Raises:
        ArchiveError: ``archive`` is not a folder.
    """
    root = Path(archive).resolve()
    if not root.is_dir():
        raise ArchiveError("%s is not a folder: give the folder of a submission archive "
                           "(unpacked)" % archive)
    found: list[Folder] = []
    for current, subfolders, files in os.walk(root):
        here = Path(current)
        parts = here.relative_to(root).parts
        subfolders.sort()
        if len(parts) >= MAX_DEPTH:
            subfolders.clear()
        kinds = [(i, _kind(p)) for i, p in enumerate(parts) if _kind(p)]
        if not kinds or kinds[-1][0] == len(parts) - 1:
            continue
        index, kind = kinds[-1]
        child_of_kind = index == len(parts) - 2
        if INSTANCE_HEADER in files or (child_of_kind and _has_c_files(here)
                                        and not _header_below(here)):
            assert kind is not None
            found.append(Folder(here, _submission(root, parts[:index]), kind))
    return found


def _header_below(path: Path) -> bool:
    """Whether a folder below ``path`` holds an instance header (then those are the
    implementations, not ``path``)."""
    return any(INSTANCE_HEADER in files for _, _, files in os.walk(path))


def folders_of(archives: Iterable[str | os.PathLike[str]]) -> list[tuple[Path, Folder]]:
    """(archive, folder) of every implementation folder of every archive, in order.

    Raises:
        ArchiveError: an archive that is not a folder, or none with a folder to build.
    """
    roots = [Path(a).resolve() for a in archives]
    if not roots:
        raise ArchiveError("name at least one submission archive (a folder)")
    pairs = [(root, folder) for root in roots for folder in find_folders(root)]
    if not pairs:
        raise ArchiveError(
            "no implementation folder in %s: expected <Name>/…/Reference_Implementation/"
            "<instance>/ or …/Optimized_Implementation/<instance>/ with %s"
            % (", ".join(map(str, roots)), INSTANCE_HEADER))
    return pairs


def source_digest(path: Path) -> str:
    """SHA-256 over the names and bytes of a folder's C sources and headers (a changed
    folder is built again when an evaluation resumes)."""
    digest = hashlib.sha256()
    for file in sorted(path.iterdir()):
        if file.suffix in (".c", ".h") and file.is_file() and not file.is_symlink():
            digest.update(file.name.encode() + b"\0")
            digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


# ------------------------------------------------------------------ the evidence

FOLDER_STATUSES = ("built", "build failed", "cannot run here")


@dataclass(frozen=True)
class FolderEntry(Evidence):
    """What ``ngcc evaluate`` made of one folder.

    Attributes:
        submission: the submission's name (its archive's top folder).
        kind: ``reference`` or ``optimized``.
        folder: the folder relative to its archive's parent.
        source_sha256: :func:`source_digest` of the folder when it was built.
        flags: the flag set it was built with (``reference``, ``performance``).
        adjustments: each option the build's own diagnosis added, with why
            (``--extra-cflags=-maes (its intrinsics need it: …)``).
        status: ``built`` (then measured by the campaign), ``build failed``, or
            ``cannot run here`` (built with ``-m`` flags for CPU features this CPU
            lacks: not measured).
        reason: why it was not built or is not measured, else None.
        label: the library's label in the run (None when not built).
        instance: the instance name its header gives (None when not built).
        candidate: the candidate ``ngcc build`` gave it (None when not built).
        library: the library, relative to the run directory (None when not built).
        library_sha256: the library's SHA-256 (None when not built).
    """

    submission: str
    kind: str
    folder: str
    source_sha256: str
    flags: str
    adjustments: tuple[str, ...]
    status: str
    reason: str | None
    label: str | None
    instance: str | None
    candidate: str | None
    library: str | None
    library_sha256: str | None

    def _check(self, where: str) -> None:
        if self.kind not in KIND_FLAGS:
            raise FieldError(where + "kind", "is %r, not one of %s"
                             % (self.kind, ", ".join(KIND_FLAGS)))
        if self.status not in FOLDER_STATUSES:
            raise FieldError(where + "status", "is %r, not one of %s"
                             % (self.status, ", ".join(FOLDER_STATUSES)))
        if (self.status != "build failed") != (self.label is not None):
            raise FieldError(where + "label", "a built folder has a label, a failed one none")
        if self.label is not None:
            try:
                check_name(self.label, "label")
            except InvalidNameError as exc:
                raise FieldError(where + "label", str(exc)) from None
        if self.library is not None and (Path(self.library).is_absolute()
                                         or ".." in Path(self.library).parts):
            raise FieldError(where + "library", "is not a path inside the run directory")

    @property
    def options(self) -> str:
        """The build's options as a command line shows them (``--flags performance
        --extra-cflags=-maes``)."""
        return " ".join(["--flags %s" % self.flags, *(a.split(" (", 1)[0]
                                                       for a in self.adjustments)])


@dataclass(frozen=True)
class Evaluation(Evidence):
    """``evaluation.json``: the archives evaluated and a row per folder found."""

    archives: tuple[str, ...]
    folders: tuple[FolderEntry, ...]

    def of_candidate(self, candidate: str) -> list[FolderEntry]:
        """The rows of every submission with a library of ``candidate`` (its folders that
        did not build included: they have no candidate of their own)."""
        submissions = {f.submission for f in self.folders if f.candidate == candidate}
        return [f for f in self.folders if f.submission in submissions]



def load(run_dir: str | os.PathLike[str]) -> Evaluation | None:
    """The evaluation of a run directory, or None when ``ngcc evaluate`` did not make it.

    Raises:
        CorruptRecordError: an ``evaluation.json`` that is not sound (named).
    """
    path = Path(run_dir) / EVALUATION_FILE
    if not path.exists():
        return None
    return load_file(path, Evaluation, SCHEMA_EVALUATION, EVALUATION_REMEDY)


def dump(run_dir: str | os.PathLike[str], evaluation: Evaluation) -> None:
    """Write ``evaluation.json`` atomically (after the model's checks)."""
    data = evaluation.to_json()
    Evaluation.from_json(data)
    write_json(Path(run_dir) / EVALUATION_FILE, {"schema": SCHEMA_EVALUATION, **data})


# ------------------------------------------------------------------ on the pages

FOLDER_COLUMNS = ("submission", "folder", "kind", "built with", "adjustments", "library",
                  "outcome")
ADJUSTMENT_NOTE = ("Adjustments: options the build's own diagnosis was certain of "
                   "(a missing -m flag for the intrinsics a file uses, the define that "
                   "leaves out a guarded main()); nothing else was changed.")


def reason_line(reason: str | None, width: int = 300) -> str:
    """A build's message on one line: its first line and, when that only introduces
    them (``does not compile with …:``), the first error line after it."""
    lines = [line.strip() for line in (reason or "unknown").splitlines() if line.strip()]
    shown = lines[0] if lines else "unknown"
    if shown.endswith(":") and len(lines) > 1:
        shown += " " + next((line for line in lines[1:] if "error" in line), lines[1])
    return shown if len(shown) <= width else shown[:width - 1] + "…"


def outcome(entry: FolderEntry, verdicts: dict[str, str]) -> str:
    """``KAT PASS`` (the gate's verdict of its library), or ``not built: <why>``."""
    if entry.status == "build failed":
        return "not built: " + reason_line(entry.reason)
    if entry.status != "built":
        return "not measured: " + reason_line(entry.reason)
    return "KAT %s" % verdicts.get(entry.label or "", "not checked")


def folder_rows(entries: Sequence[FolderEntry], verdicts: dict[str, str]
                ) -> list[tuple[str, ...]]:
    """A row per folder: submission, folder, kind, flags, adjustments, label, outcome."""
    return [(e.submission, "`%s`" % e.folder, e.kind, e.options,
             "; ".join(e.adjustments) or "none", "`%s`" % e.label if e.label else "—",
             outcome(e, verdicts)) for e in entries]
