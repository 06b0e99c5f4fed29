"""Where a built library came from: :class:`Provenance`, what ``ngcc build`` records
in the library's ``<library>.json`` sidecar (the source folder and its digests, the
flags, the compiler and whether it ran isolated, the ngcc version, the build time, the
files left out, and what a KAT check will rest on), made for a build and read back,
typed, from a sidecar."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngcc.base.clock import utc_now
from ngcc.base.errors import BuildError, LibraryError, NgccError
from ngcc.base.untrusted import loads_json
from ngcc.base.version import __version__
from ngcc.library import candidates as _candidates
from ngcc.library import katfile as _katfile
from ngcc.library.cc import ISOLATED, NOT_ISOLATED, read_input
from ngcc.library.cflags import FLAG_SETS
from ngcc.library.katfile import read_manifest
from ngcc.library.registry import manifest_path, sidecar_path


@dataclass(frozen=True)
class Provenance:
    """Where a library came from: what ``ngcc build`` records in its sidecar.

    Attributes:
        source_dir: the absolute source folder.
        source_sha256: SHA-256 of every C source and header in the folder, by file name.
        flag_set: ``"reference"``, ``"performance"``, ``"resource"``, or None for
            literal flags.
        defines: the ``--define`` additions, as ``NAME`` or ``NAME=VALUE``.
        extra_cflags: the ``--extra-cflags`` additions.
        cflags: every compile flag, in order (set or literal flags, ``-D`` defines,
            extra flags, :data:`ngcc.library.cflags.LIBRARY_FLAGS`).
        compiler: the compiler's version line.
        ngcc_version: the ngcc that built it.
        built_at: when, UTC, ``YYYY-MM-DDTHH:MM:SSZ``.
        skipped: the folder's C files left out, with the reason.
        kat_basis: what a KAT check will rest on, as far as the build can see:
            ``"manifest"`` (the instance name is in a shipped manifest),
            ``"submission files"`` (the submission's own KAT files) or ``"none"``.
        kat_files: the manifest's path, or the submission's KAT files (empty for none).
        libs: the ``--libs`` link options, after the objects (``-lcrypto``).
        compiler_isolation: how the compiler ran on the sources: ``"namespaces"``
            (``ngcc-jail``: the kernel's namespaces, the folder read-only) or ``"none"``
            (``--no-sandbox`` / ``NGCC_NO_SANDBOX=1``, and every ngcc before the jail).
    """

    source_dir: str
    source_sha256: dict[str, str]
    flag_set: str | None
    defines: tuple[str, ...]
    extra_cflags: tuple[str, ...]
    cflags: tuple[str, ...]
    compiler: str
    ngcc_version: str
    built_at: str
    skipped: dict[str, str]
    kat_basis: str
    kat_files: tuple[str, ...]
    libs: tuple[str, ...] = ()
    compiler_isolation: str = NOT_ISOLATED

    def to_json(self) -> dict[str, Any]:
        """The fields as JSON values (tuples as lists), as stored in the sidecar."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in self.__dict__.items()}


def _kat_basis(name: str, candidate: str, folder: Path,
               manifest: Path | None) -> tuple[str, tuple[str, ...]]:
    """What a KAT check of this build will rest on, as far as the build can see: a
    manifest line for one of its KAT file names (in ``manifest`` or the candidate's
    shipped one), else the submission's own KAT files."""
    manifest = manifest or manifest_path(candidate)
    try:
        lines = read_manifest(manifest)
    except (ValueError, UnicodeDecodeError):
        lines = {}
    if any(_katfile.manifest_entry(lines, name, _katfile.file_name(kind, name))
           for kind in _katfile.FILES):
        return "manifest", (str(manifest),)
    names = [name]
    with contextlib.suppress(NgccError):
        listed = _candidates.candidate(candidate).instance(name)
        names += [listed.manifest_folder] if listed is not None else []
    folders = _katfile.submission_kat_folders(folder, names)
    found = []
    for kind in _katfile.FILES:
        file_name = _katfile.file_name(kind, name)
        match = next((f / file_name for f in folders if (f / file_name).is_file()), None)
        if match is not None:
            found.append(str(match))
    return ("submission files", tuple(found)) if found else ("none", ())


def read_provenance(library: str | os.PathLike[str]) -> Provenance | None:
    """The provenance ``ngcc build`` recorded beside ``library``; None for a sidecar
    written by an ngcc that recorded none.

    Raises:
        LibraryError: no sidecar, or one whose provenance fields have the wrong types.
    """
    sidecar = sidecar_path(Path(library))
    try:
        meta = loads_json(read_input(sidecar, 1 << 20))
    except (BuildError, ValueError) as exc:
        raise LibraryError("%s: unreadable sidecar (%s); rebuild with `ngcc build`"
                           % (sidecar, exc)) from exc
    if not isinstance(meta, dict) or "ngcc_version" not in meta:
        return None
    try:
        return _provenance_from(meta)
    except (KeyError, TypeError, ValueError) as exc:
        raise LibraryError("%s: corrupt provenance (%s); rebuild with `ngcc build`"
                           % (sidecar, exc)) from exc


def _provenance_from(meta: dict[str, Any]) -> Provenance:
    def text(key: str) -> str:
        if not isinstance(meta[key], str):
            raise TypeError("%s is not a string" % key)
        return meta[key]

    def texts(key: str) -> tuple[str, ...]:
        if not isinstance(meta[key], list) or not all(isinstance(v, str) for v in meta[key]):
            raise TypeError("%s is not a list of strings" % key)
        return tuple(meta[key])

    def table(key: str) -> dict[str, str]:
        value = meta[key]
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise TypeError("%s is not a table of strings" % key)
        return dict(value)

    flag_set = meta["flag_set"]
    if flag_set is not None and flag_set not in FLAG_SETS:
        raise ValueError("flag_set %r is not one of %s" % (flag_set, ", ".join(FLAG_SETS)))
    basis = text("kat_basis")
    if basis not in ("manifest", "submission files", "none"):
        raise ValueError("kat_basis %r" % basis)
    isolation = text("compiler_isolation") if "compiler_isolation" in meta else NOT_ISOLATED
    if isolation not in (ISOLATED, NOT_ISOLATED):
        raise ValueError("compiler_isolation %r" % isolation)
    return Provenance(text("source_dir"), table("source_sha256"), flag_set, texts("defines"),
                      texts("extra_cflags"), texts("cflags"), text("compiler"),
                      text("ngcc_version"), text("built_at"), table("skipped"), basis,
                      texts("kat_files"), texts("libs") if "libs" in meta else (),
                      isolation)


def build_provenance(folder: Path, name: str, candidate: str, flags: str,
                     defines: list[str], extra: list[str], cflags: list[str], compiler: str,
                     digests: dict[str, str], skipped: dict[str, str], libs: list[str],
                     manifest: Path | None, compiler_isolation: str = ISOLATED) -> Provenance:
    """The provenance of a build of ``folder`` made now by this ngcc, with the KAT basis
    it can see for instance ``name`` of ``candidate``, and how its compiler ran
    (:attr:`ngcc.library.cc.Compiler.isolation`)."""
    basis, kat_files = _kat_basis(name, candidate, folder, manifest)
    return Provenance(
        source_dir=str(folder), source_sha256=digests,
        flag_set=flags if flags in FLAG_SETS else None, defines=tuple(defines),
        extra_cflags=tuple(extra), cflags=tuple(cflags), compiler=compiler,
        ngcc_version=__version__,
        built_at=utc_now(),
        skipped=dict(skipped), kat_basis=basis, kat_files=kat_files, libs=tuple(libs),
        compiler_isolation=compiler_isolation)
