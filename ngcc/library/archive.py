"""Submission archives: the implementation folders in them.

An ICCS submission archive holds, per candidate, ``<Name>/…/Reference_Implementation/
<instance>/`` and ``…/Optimized_Implementation/<instance>/``, some also
``…/Additional_Implementation/<instance>/`` (platform ports, alternative code; often under
``Implementations and Test_Vectors/API_CryptHash/``; names with spaces, sometimes a
level more such as ``Optimized_Implementation/avx2/<instance>/``). :func:`find_folders`
lists every such folder, nearest the kind folder first; a folder is an implementation
when it holds ``CryptHash_AlgorithmInstance.h``, or when it is a kind folder's child
holding C files (so that a folder without the header still gets a row, with the
build's reason). A symbolic link to a folder is never followed (what it points at is
not the archive), but it is listed too, so that it gets a row saying so. What ``ngcc
evaluate`` made of each folder is ``evidence.evaluation``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.errors import ArchiveError
from ngcc.base.names import natural_key

#: The folders that say which kind of implementation is below them (case and the
#: separator aside), and the kind.
KIND_FOLDERS = {"reference_implementation": "reference",
                "optimized_implementation": "optimized",
                "optimised_implementation": "optimized",
                "additional_implementation": "additional",
                "additional_implementations": "additional"}
#: The flag set of ``ngcc build`` each kind is built with (the NGCC guide's; an
#: additional implementation, a platform port or alternative code, is built for speed
#: as an optimized one is).
KIND_FLAGS = {"reference": "reference", "optimized": "performance",
              "additional": "performance"}
KIND_SUFFIX = {"reference": "ref", "optimized": "opt", "additional": "add"}
#: The kind of a linked folder with no kind folder at or above it (it is not followed,
#: so what it holds is not known).
UNKNOWN_KIND = "unknown"
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
        kind: ``reference``, ``optimized`` or ``additional`` (:data:`UNKNOWN_KIND` for a
            linked folder
            outside any kind folder).
        linked_to: for a symbolic link to a folder, where it points (it is not
            followed: nothing below it is read or built); else None.
    """

    path: Path
    submission: str
    kind: str
    linked_to: str | None = None

    @property
    def flags(self) -> str:
        """The ``ngcc build`` flag set of its kind (``none`` for an unknown kind)."""
        return KIND_FLAGS.get(self.kind, "none")

    @property
    def label_hints(self) -> list[str]:
        """What tells two folders of one instance apart in their labels, nearest first:
        the folder above (``avx2``) unless it is the kind folder, then the submission."""
        parent = self.path.parent.name
        return [parent, self.submission] if _kind(parent) is None else [self.submission]

    def shown(self, archive: Path) -> str:
        """The folder relative to the archive's parent (``Pavelor/…/Pavelor-512``)."""
        return self.path.relative_to(archive.parent).as_posix()


def _kind(name: str) -> str | None:
    return KIND_FOLDERS.get(name.casefold().replace(" ", "_").replace("-", "_"))


def path_kind(path: Path) -> str | None:
    """The kind (``reference``, ``optimized``) of the nearest kind folder at or above
    ``path``, None when there is none."""
    kinds = [_kind(part) for part in path.parts if _kind(part)]
    return kinds[-1] if kinds else None


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
    """Every implementation folder below ``archive`` (see the module's docstring), and
    every symbolic link to a folder outside the implementation folders (not followed:
    :attr:`Folder.linked_to`), in path order.

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
        subfolders.sort(key=natural_key)  # Bar-512 before Bar-1024
        if len(parts) >= MAX_DEPTH:
            subfolders.clear()
        folder = _implementation(root, parts, files)
        if folder is not None:
            found.append(folder)
        elif not any(f.path in here.parents for f in found):  # inside one: not its files
            found += [_linked(root, here / name) for name in subfolders
                      if (here / name).is_symlink()]
    return found


def _implementation(root: Path, parts: tuple[str, ...], files: list[str]) -> Folder | None:
    """The implementation folder ``root / parts`` is (the module's rule), or None."""
    kinds = [(i, _kind(p)) for i, p in enumerate(parts) if _kind(p)]
    if not kinds or kinds[-1][0] == len(parts) - 1:
        return None
    index, kind = kinds[-1]
    here = root.joinpath(*parts)
    child_of_kind = index == len(parts) - 2
    if INSTANCE_HEADER in files or (child_of_kind and _has_c_files(here)
                                    and not _header_below(here)):
        assert kind is not None
        return Folder(here, _submission(root, parts[:index]), kind)
    return None


def _linked(root: Path, link: Path) -> Folder:
    """The row of a symbolic link to a folder: its kind from the kind folders at and
    above it, where it points (read from the link itself, never followed)."""
    parts = link.relative_to(root).parts
    kinds = [(i, _kind(p)) for i, p in enumerate(parts) if _kind(p)]
    if not kinds:
        return Folder(link, _submission(root, parts), UNKNOWN_KIND, os.readlink(link))
    index, kind = kinds[-1]
    return Folder(link, _submission(root, parts[:index]), kind or UNKNOWN_KIND,
                  os.readlink(link))


def _header_below(path: Path) -> bool:
    """Whether a folder below ``path`` holds an instance header (then those are the
    implementations, not ``path``)."""
    return any(INSTANCE_HEADER in files for _, _, files in os.walk(path))


Archives = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
"""One archive folder (a path: never taken character by character), or several."""


def folders_of(archives: Archives) -> list[tuple[Path, Folder]]:
    """(archive, folder) of every implementation folder of every archive, in order.

    Raises:
        ArchiveError: an archive that is not a folder, or none with a folder to build.
    """
    given = [archives] if isinstance(archives, (str, os.PathLike)) else list(archives)
    roots = [Path(a).resolve() for a in given]
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
    if path.is_symlink():  # not followed: nothing of it is read
        return digest.hexdigest()
    for file in sorted(path.iterdir()):
        if file.suffix in (".c", ".h") and file.is_file() and not file.is_symlink():
            digest.update(file.name.encode() + b"\0")
            digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()
