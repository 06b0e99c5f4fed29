"""What an instance's KAT files are checked against: the manifest (given, recorded by
``ngcc build --manifest``, or the candidate's shipped one), the official files a user
gave, and the KAT files a submission ships beside its sources (each looked for by the
folder names an instance may have). Nothing here runs the library."""

from __future__ import annotations

import os
from contextlib import suppress
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
    the folders looked in."""
    if official_dir is None:
        return None, []
    tried = [official_dir / inst.candidate / folder for folder in folder_names(inst)]
    tried += [official_dir / folder for folder in folder_names(inst)] + [official_dir]
    for folder in tried:
        if (folder / name).is_file():
            return folder / name, tried
    return None, tried


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


def by_content(manifest: dict[str, ManifestEntry], generated: dict[str, Path],
               own_name: str) -> str | None:
    """The harness instance whose manifest lines the ``generated`` files (by kind:
    ``2_12`` → its file) equal, when no line names ``own_name``'s files: a library
    whose instance name is no manifest label (``Foo_SIMD512`` for ``Foo512``) is
    checked against the lines its content matches. The instance with the most equal
    files wins (at least one; the first by name on a tie); None when none equals."""
    if any(manifest_entry(manifest, own_name, file_name(kind, own_name))
           for kind in generated):
        return None
    lines: dict[str, dict[str, ManifestEntry]] = {}
    for key, entry in manifest.items():
        file = key.rpartition("/")[2]
        for kind in generated:
            prefix = "KAT_%s_" % TAGS[kind]
            if file.startswith(prefix) and file.endswith(".txt"):
                lines.setdefault(file[len(prefix):-len(".txt")], {})[kind] = entry
    digests: dict[tuple[str, str], str] = {}

    def digest(kind: str, mode: str) -> str:
        if (kind, mode) not in digests:
            digests[kind, mode] = canonical_sha256(generated[kind].read_bytes(), mode)
        return digests[kind, mode]

    best, most = None, 0
    for name in sorted(lines):
        equal = sum(digest(kind, entry.mode) == entry.sha256
                    for kind, entry in lines[name].items())
        if equal > most:
            best, most = name, equal
    return best
