"""A submission folder's sources: its C files and headers, read as untrusted input
(printable names, none the compiler would read as options, no symbolic link out of the
folder), the C files chosen for compiling, and what one compiles to
(:class:`CompiledObject`: the object and the global symbols it defines and uses)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.errors import BuildError

KAT_DRIVER = "KAT_CryptHash.c"


def folder_files(folder: Path) -> list[Path]:
    """The folder's C sources and headers (no hidden files), checked to be readable."""
    files = sorted(p for p in folder.iterdir()
                   if p.suffix in (".c", ".h") and not p.name.startswith("."))
    for path in files:
        if not path.name.isprintable():
            raise BuildError("%s: file name %r has control characters; rename it"
                             % (folder, path.name))
        if path.name[:1] in ("@", "-"):  # the compiler would read it as options
            raise BuildError("%s: file name %r starts with %r, which a C compiler reads as "
                             "options, not a file; rename it" % (folder, path.name, path.name[0]))
        refuse_link_out(folder, path)
    return files


def refuse_link_out(folder: Path, path: Path) -> None:
    """Refuse, naming it, a file of ``folder`` that is a symbolic link to a file outside
    it (the build would read another file of the evaluator's: its text could reach
    the compiler's messages and so the pages). A link to a FIFO or a device is
    :func:`ngcc.library.cc.read_input`'s to refuse.

    Raises:
        BuildError: it is such a link.
    """
    if (path.is_symlink() and path.resolve().is_file()
            and not path.resolve().is_relative_to(folder.resolve())):
        raise BuildError("%s: %s is a symbolic link to %s, outside the folder; a "
                         "submission is the files in its folder (copy it in)"
                         % (folder, path.name, path.resolve()))


@dataclass(frozen=True)
class CompiledObject:
    """One source compiled to an object, and the global symbols it defines and uses."""

    source: str
    path: Path
    defined: frozenset[str]
    undefined: frozenset[str]


def select_sources(source_dir: str | os.PathLike[str],
                   exclude: Iterable[str] = ()) -> tuple[list[Path], dict[str, str]]:
    """The folder's C files to compile, and those left out before compiling (the
    official KAT driver, and the ``exclude`` file names). Programs are found later,
    by the compiler: see :func:`ngcc.library.build.build`."""
    folder = Path(source_dir)
    excluded = set(exclude)
    sources: list[Path] = []
    skipped: dict[str, str] = {}
    for path in folder_files(folder):
        if path.suffix != ".c":
            continue
        if path.name in excluded:
            skipped[path.name] = "excluded by request"
        elif path.name == KAT_DRIVER:
            skipped[path.name] = "the official KAT driver (ngcc generates KATs itself)"
        else:
            sources.append(path)
    missing = excluded - set(skipped)
    if missing:
        raise BuildError("%s: no C file %s to exclude" % (folder, ", ".join(sorted(missing))))
    return sources, skipped
