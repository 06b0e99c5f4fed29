"""What ``ngcc evaluate`` made of each folder of the archives it was given
(``evaluation.json`` in the run directory).

:class:`Evaluation` is the evidence of one evaluation: a row per folder (built with
which flag set and adjustments, or why not), read by the report pages (a table per
candidate and on the index) and by a resumed ``ngcc evaluate``. Folder names are shown,
never used as names: the library labels follow the name rule.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.codec import Evidence, FieldError, added
from ngcc.base.errors import InvalidNameError
from ngcc.base.names import check_name
from ngcc.evidence.model import page_key
from ngcc.evidence.records import EVALUATION_FILE, load_file, write_json
from ngcc.library.archive import KIND_FLAGS, UNKNOWN_KIND

SCHEMA_EVALUATION = "ngcc.evaluation/1"
EVALUATION_REMEDY = ("Run `ngcc evaluate` with the same archives and --run-dir again to "
                     "rebuild it, or start a new --run-dir.")

FOLDER_STATUSES = ("built", "build failed", "cannot run here", "not followed")
#: The statuses of a folder with a library (and so a label).
BUILT_STATUSES = ("built", "cannot run here")


@dataclass(frozen=True)
class FolderEntry(Evidence):
    """What ``ngcc evaluate`` made of one folder.

    Attributes:
        submission: the submission's name (its archive's top folder).
        kind: ``reference``, ``optimized`` or ``additional`` (``unknown``: a symbolic
            link outside every kind folder, not followed).
        folder: the folder relative to its archive's parent.
        source_sha256: :func:`source_digest` of the folder when it was built.
        flags: the flag set it was built with (``reference``, ``performance``).
        adjustments: each option the build's own diagnosis added, with why
            (``--extra-cflags=-maes (its intrinsics need it: …)``).
        status: ``built`` (then measured by the campaign), ``build failed``,
            ``cannot run here`` (built with ``-m`` flags for CPU features this CPU
            lacks: not measured), or ``not followed`` (a symbolic link to a folder:
            what it points at is not the archive, so nothing of it was read).
        reason: why it was not built or is not measured, else None.
        label: the library's label in the run (None when not built).
        instance: the instance name its header gives (None when not built).
        candidate: the candidate ``ngcc build`` gave it (None when not built).
        library: the library, relative to the run directory (None when not built).
        library_sha256: the library's SHA-256 (None when not built).
        requested: the build options given for it on the command line
            (``--exclude core.c``, from ``ngcc evaluate --exclude FOLDER:core.c``).
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
    requested: tuple[str, ...] = added(())

    def _check(self, where: str) -> None:
        kinds = (*KIND_FLAGS, UNKNOWN_KIND) if self.status == "not followed" else KIND_FLAGS
        if self.kind not in kinds:
            raise FieldError(where + "kind", "is %r, not one of %s"
                             % (self.kind, ", ".join(kinds)))
        if self.status not in FOLDER_STATUSES:
            raise FieldError(where + "status", "is %r, not one of %s"
                             % (self.status, ", ".join(FOLDER_STATUSES)))
        if (self.status in BUILT_STATUSES) != (self.label is not None):
            raise FieldError(where + "label", "a built folder has a label, any other none")
        if self.label is not None:
            try:
                check_name(self.label, "label")
            except InvalidNameError as exc:
                raise FieldError(where + "label", str(exc)) from None
        if self.library is not None and (Path(self.library).is_absolute()
                                         or ".." in Path(self.library).parts):
            raise FieldError(where + "library", "is not a path inside the run directory")

    def name_note(self) -> str:
        """What a folder that declares a built-in instance's name is in the run (after
        its folder name, which the caller shows as untrusted text)."""
        return ("declares the instance name %s, a built-in instance's: it is labelled %s, "
                "never read as the built-in one nor as a × pseudoXOF baseline"
                % (self.instance, self.label))

    @property
    def options(self) -> str:
        """The build's options as a command line shows them (``--flags performance
        --extra-cflags=-maes``; ``-`` for a folder not followed)."""
        if self.status == "not followed":
            return "-"
        return " ".join(["--flags %s" % self.flags, *self.requested,
                         *(a.split(" (", 1)[0] for a in self.adjustments)])


@dataclass(frozen=True)
class Evaluation(Evidence):
    """``evaluation.json``: the archives evaluated and a row per folder found."""

    archives: tuple[str, ...]
    folders: tuple[FolderEntry, ...]

    def builtin_names(self) -> list[FolderEntry]:
        """The folders whose library declares a built-in instance's name
        (``pseudoXOF-256``, any case): each has a label of its own and is never the
        × pseudoXOF baseline; the pages and the command line say so
        (:meth:`FolderEntry.name_note`)."""
        from ngcc.library.registry import reserved_labels  # loads _core: not at import

        return [f for f in self.folders
                if f.instance is not None and f.instance.casefold() in reserved_labels()]

    def of_candidate(self, candidate: str) -> list[FolderEntry]:
        """The rows of every submission with a library on the page ``candidate`` (a
        candidate's, or an unclaimed library's own: :func:`~ngcc.evidence.model.page_key`;
        its folders that did not build included: they have no candidate of their own)."""
        submissions = {f.submission for f in self.folders if f.candidate is not None
                       and page_key(f.candidate, f.label or "") == candidate}
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
