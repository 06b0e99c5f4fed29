"""A submission archive whose names and compiler messages are hostile text, and the
checks that none of it arrives live (``tests/test_archive_trust.py``,
``benchmarks/trust_audit.py``)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "archive"
TINY = FIXTURE / "Tiny Hash/Implementations and Test_Vectors/API_CryptHash/Reference_Implementation/TinyHash-256"

#: Text that acts where it arrives raw: an image with a script, a table cell break,
#: escape sequences that clear the screen and retitle the window, a line break, a
#: right-to-left override and a ``javascript:`` link (no ``/``: it is a folder name).
HOSTILE = ("H <img src=x onerror=alert(1)> <script>alert(2)</script> a|b "
           "\033[2J\033]0;owned\007 line\nbreak \u202eevil [x](javascript:alert(3))")
#: A control character other than the line break and tab.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _c_string(text: str) -> str:
    return '"' + "".join("\\x%02x" % b for b in text.encode()) + '"'


def hostile_archive(root: Path) -> Path:
    """An archive (under ``root``) with three submissions: one whose submission and
    folder names are :data:`HOSTILE` (the tiny hash, which builds and passes), one
    whose source stops the compiler with ``#error`` and the hostile text, and one
    whose header declares it as ``ALGORITHM_NAME`` and ``ALGORITHM_INSTANCE``."""
    archive = root / "archive"
    named = archive / HOSTILE / "Reference_Implementation" / HOSTILE
    shutil.copytree(TINY, named)
    (named / "KAT_CryptHash.c").unlink()
    failing = archive / "Error Text" / "Reference_Implementation" / "ErrorText-256"
    shutil.copytree(TINY, failing)
    (failing / "KAT_CryptHash.c").unlink()
    error_line = HOSTILE.replace("\n", " ")  # #error ends at the line's end
    source = failing / "CryptHash_AlgorithmInstance.c"
    source.write_text("#error " + error_line + "\n" + source.read_text())
    declared = archive / "Declared Name" / "Reference_Implementation" / "DeclaredName-256"
    shutil.copytree(TINY, declared)
    (declared / "KAT_CryptHash.c").unlink()
    header = declared / "CryptHash_AlgorithmInstance.h"
    header.write_text(header.read_text().replace(
        '#define ALGORITHM_INSTANCE "TinyHash-256"',
        "#define ALGORITHM_NAME %s\n#define ALGORITHM_INSTANCE %s"
        % (_c_string(HOSTILE), _c_string(HOSTILE))))
    return archive
