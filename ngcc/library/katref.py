"""What an instance's KAT files are checked against: the manifest (given, recorded by
``ngcc build --manifest``, or the candidate's shipped one), the official files a user
gave, and the KAT files a submission ships beside its sources (each looked for by the
folder names an instance may have). Nothing here runs the library."""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.errors import KatError
from ngcc.base.files import sha256_file
from ngcc.base.names import is_valid_name
from ngcc.base.untrusted import load_json_file
from ngcc.library import candidates as _candidates
from ngcc.library.katfile import (
    TAGS,
    ManifestEntry,
    canonical_sha256,
    file_name,
    first_difference,
    manifest_entry,
    read_manifest,
    submission_kat_folders,
)
from ngcc.library.registry import Instance, manifest_path, sidecar_path


def reference_manifest(inst: Instance, given: Path | None = None) -> tuple[Path, str]:
    """The manifest an instance is checked against and its basis: ``given``, else the one
    ``ngcc build --manifest`` recorded (``manifest``), else the candidate's shipped one.

    Raises:
        KatError: the recorded manifest is gone or changed since the build.
    """
    if given is not None:
        return given, "manifest"
    recorded = (inst.sidecar or {}).get("kat_manifest")
    if isinstance(recorded, str):
        path = Path(recorded)
        try:
            same = sha256_file(path) == (inst.sidecar or {}).get("kat_manifest_sha256")
        except OSError as exc:
            raise KatError("%s was built with --manifest %s, which cannot be read now (%s): "
                           "give --manifest FILE or rebuild" % (inst.library, path, exc)) from exc
        if not same:
            raise KatError("%s was built with --manifest %s, which has changed since: give "
                           "--manifest FILE or rebuild" % (inst.library, path))
        return path, "manifest"
    return manifest_path(inst.candidate), "shipped manifest"


def read_reference(path: Path) -> dict[str, ManifestEntry]:
    """A reference manifest's lines by path (a corrupt one is a :class:`KatError`)."""
    try:
        return read_manifest(path)
    except (ValueError, UnicodeDecodeError) as exc:
        raise KatError("the KAT manifest %s is corrupt: %s" % (path, exc)) from exc


def folder_names(inst: Instance) -> list[str]:
    """The folder names that may hold an instance's KAT files: its instance name, its
    source folder's name and the registry's manifest folder (``Laurus-512`` for
    ``laurus_512``), each once."""
    names = [inst.name]
    folder = source_dir(inst)
    if folder is not None:
        names.append(folder.name)
    with suppress(_candidates.UnknownCandidateError):
        found = _candidates.candidate(inst.candidate).instance(inst.name)
        if found is not None:
            names.append(found.manifest_folder)
    return [name for name in dict.fromkeys(names) if is_valid_name(name)]  # never a path


def official_file(inst: Instance, name: str, official_dir: Path | None
                   ) -> tuple[Path | None, list[Path]]:
    """The official copy of a KAT file, when the user gave a folder that holds it, and
    the folders looked in.

    Raises:
        KatError: the first one found is a symbolic link, or lies under one below
            ``official_dir`` (a folder of files handed over could point at any file of
            the evaluator's, whose first line would land in the log): refused by name,
            never opened. ``official_dir`` itself may be a link: the user named it.
    """
    if official_dir is None:
        return None, []
    tried = [official_dir / inst.candidate / folder for folder in folder_names(inst)]
    tried += [official_dir / folder for folder in folder_names(inst)] + [official_dir]
    for folder in tried:
        path = folder / name
        link = _link_below(official_dir, path) if os.path.lexists(path) else None
        if link is not None:
            raise KatError("the official KAT file %s is a symbolic link (or lies under one, "
                           "%s) to %s: not read; ngcc reads --official files only as "
                           "regular files of the folder given (copy the file in)"
                           % (path, link, path.resolve()))
        if path.is_file():  # a regular file: never a FIFO or a device
            return path, tried
    return None, tried


def _link_below(root: Path, path: Path) -> Path | None:
    """The first of ``path`` and its folders below ``root`` that is a symbolic link."""
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def source_dir(inst: Instance) -> Path | None:
    """The source folder an ``ngcc build`` sidecar records, else None."""
    if inst.builtin:
        return None
    try:
        return Path(load_json_file(sidecar_path(inst.library))["source_dir"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def submission_file(inst: Instance, name: str) -> tuple[Path | None, list[Path]]:
    """The KAT file ``name`` shipped with an ``ngcc build`` submission (first found in
    :func:`submission_kat_folders`), and the folders looked in.

    Raises:
        KatError: the first one found is a symbolic link, or lies under one (it would
            read a file outside the archive, whose lines would land in the logs):
            refused by name, never opened.
    """
    folder = source_dir(inst)
    if folder is None:
        return None, []
    folders = submission_kat_folders(folder, folder_names(inst))
    for folder in folders:
        path = folder / name
        if os.path.lexists(path) and path.resolve() != path.absolute():
            raise KatError(
                "the submission's KAT file %s is a symbolic link (or lies under one) to %s: "
                "not read; ngcc reads a submission's own KAT files only as regular files "
                "of its archive (copy the file in)" % (path, path.resolve()))
        if path.is_file():  # a regular file: never a FIFO or a device
            return path, folders
    return None, folders


def nokat_detail(inst: Instance, name: str, manifest: Path, official_tried: list[Path],
                 searched: list[Path]) -> str:
    """Every place a reference for ``name`` was looked for, and the names tried."""
    parts = ["no line for %s in the manifest %s" % (name, manifest)]
    parts.append("no file %s in --official %s" % (name, ", ".join(map(str, official_tried)))
                 if official_tried else "no --official DIR given")
    if searched:
        parts.append("no submission KAT file %s in %s (subfolders named %s tried)" % (
            name, ", ".join(map(str, searched)), " or ".join(folder_names(inst))))
    elif not inst.builtin:
        parts.append("no source folder recorded, so no submission KAT file was looked for")
    return "; ".join(parts)


def mismatch_detail(path: Path, official: Path | None) -> str:
    """Where the generated file ``path``, whose digest differs from its manifest line,
    first departs from the official file (when one is at hand)."""
    if official is None:
        return ("the canonical digest differs from the manifest (official file not at hand: "
                "pass official_dir to name the first differing record)")
    where = first_difference(path, official)
    if where is None:
        return "equal to the official file %s, which does not match the manifest" % official
    return "first difference from %s: %s" % (official, where)


def against_file(path: Path, reference: Path, what: str) -> tuple[str, str]:
    """PASS when the canonical texts of the generated file ``path`` and ``reference``
    are equal, else MISMATCH naming the first differing record; ``what`` names the
    reference (``the official file``). Both are read a line at a time, as regular
    files of at most ``katfile.MAX_KAT_BYTES``."""
    if canonical_sha256(path) == canonical_sha256(reference):
        return "PASS", "equal to %s %s (no manifest line)" % (what, reference)
    return "MISMATCH", "first difference from %s %s: %s" % (
        what, reference, first_difference(path, reference) or "canonical text differs")


@dataclass(frozen=True)
class ContentMatch:
    """The manifest label whose lines a library's generated KAT files equal, when its
    own instance name is no label (``Foo_SIMD512`` computing the harness's ``Foo512``).

    Attributes:
        label: the harness's instance name of the lines (``Foo512``).
        lines: its manifest line of each kind checked (``2_12`` → line).
        equal: how many of the generated files equal their line.
    """

    label: str
    lines: dict[str, ManifestEntry]
    equal: int

    def words(self, own_name: str) -> str:
        """``equal to Foo512's manifest lines (Foo_SIMD512 is no manifest label)``."""
        partly = "" if self.equal == len(self.lines) else "partly "
        return "%sequal to %s's manifest lines (%s is no manifest label)" % (
            partly, self.label, own_name)


def content_match(inst: Instance, manifest: dict[str, ManifestEntry],
                  generated: dict[str, Path]) -> ContentMatch | None:
    """The manifest label whose lines the ``generated`` files (kind → file) equal, when
    no line names ``inst``'s own files: the label with the most equal files (at least
    one; the first by name on a tie), among those of ``inst``'s digest width where the
    registry knows it. Files are read a line at a time, each digest once per mode."""
    if any(manifest_entry(manifest, inst.name, file_name(kind, inst.name))
           for kind in generated):
        return None
    widths = _harness_widths(inst.candidate)
    lines: dict[str, dict[str, ManifestEntry]] = {}
    for key, entry in manifest.items():
        folder, _, file = key.rpartition("/")
        for kind in generated:
            prefix = "KAT_%s_" % TAGS[kind]
            if file.startswith(prefix) and file.endswith(".txt"):
                label = folder or file[len(prefix):-len(".txt")]
                if widths.get(label, inst.digest_bits) in (inst.digest_bits, None):
                    lines.setdefault(label, {})[kind] = entry
    digests: dict[tuple[str, str], str] = {}
    best: ContentMatch | None = None
    for label in sorted(lines):
        equal = 0
        for kind, entry in lines[label].items():
            if (kind, entry.mode) not in digests:
                digests[kind, entry.mode] = canonical_sha256(generated[kind], entry.mode)
            equal += digests[kind, entry.mode] == entry.sha256
        if equal > (best.equal if best else 0):
            best = ContentMatch(_harness_name(inst.candidate, label), lines[label], equal)
    return best


def _harness_widths(candidate: str) -> dict[str, int | None]:
    """The digest width of each manifest folder of a registry candidate (none known
    for another id)."""
    try:
        found = _candidates.candidate(candidate)
    except _candidates.UnknownCandidateError:
        return {}
    return {i.manifest_folder: i.digest_bits for i in found.instances}


def _harness_name(candidate: str, folder: str) -> str:
    """The harness's instance name of a manifest folder (the folder where the registry
    does not list it)."""
    with suppress(_candidates.UnknownCandidateError):
        for inst in _candidates.candidate(candidate).instances:
            if inst.manifest_folder == folder:
                return inst.name
    return folder
