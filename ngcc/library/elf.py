"""The static memory of an instance library: the size of its loadable ELF image."""

from __future__ import annotations

import os
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from ngcc.base.errors import LibraryError


def elf_image_bytes(path: str | os.PathLike[str]) -> int:
    """Σ ``p_memsz`` over the ``PT_LOAD`` program headers of an ELF file.

    This is the memory the loader maps for the library (code, read-only data, data
    and bss), the reports' "static: ELF image" figure. Debug sections, symbol tables
    and other parts that are never loaded do not count.

    Raises:
        LibraryError: the file cannot be read or is not an ELF file.
    """
    try:
        with open(Path(path), "rb") as handle:
            elf = ELFFile(handle)
            return sum(segment["p_memsz"] for segment in elf.iter_segments()
                       if segment["p_type"] == "PT_LOAD")
    except OSError as exc:
        raise LibraryError("%s: cannot read the library (%s)" % (path, exc)) from exc
    except ELFError as exc:
        raise LibraryError("%s: not an ELF shared library (%s)" % (path, exc)) from exc
