"""A submission archive whose names and compiler messages are hostile text, and the
checks that none of it arrives live (``tests/test_archive_trust.py``,
``benchmarks/trust_audit.py``)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "archive"
TINY = (FIXTURE / "Tiny Hash" / "Implementations and Test_Vectors" / "API_CryptHash"
        / "Reference_Implementation" / "TinyHash-256")

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
    vectors = archive / HOSTILE / "Test_Vectors" / "TinyHash-256"  # so it passes: measured
    shutil.copytree(TINY.parents[2] / "Test_Vectors" / "TinyHash-256", vectors)
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


#: ``ngcc evaluate`` as the command line runs it, in a process of its own, with the
#: trials of the fake runner (the builds and the KAT gate are real): ``argv`` follows.
EVALUATE = """
import sys
sys.path[:0] = [%r]
import pytest
from tests._fakes import FakeRunner, fixed_host
from ngcc.cli.main import main
patch = pytest.MonkeyPatch()
fixed_host(patch)
patch.setattr("ngcc.driver.child.DriverRunner", FakeRunner)
sys.exit(main(sys.argv[1:]))
""" % str(Path(__file__).resolve().parents[1])


def live_markdown(text: str) -> list[str]:
    """What acts on a Markdown page outside its code spans: HTML tags, ``javascript:``
    links, control characters."""
    from ngcc.base.untrusted import CODE_SPAN

    outside = CODE_SPAN.sub("", text)
    found = re.findall(r"<(?:img|script)\b|\]\(javascript:", outside, re.I)
    return found + CONTROL.findall(text.replace("\n", "").replace("\t", ""))


def live_html(text: str) -> list[str]:
    """What acts on an HTML page: an ``<img>`` or ``<script>`` tag the page did not
    write itself (ngcc draws its figures as ``<img alt=... src="data:image/png``), a
    ``javascript:`` link, a control character."""
    tags = [tag for tag in re.findall(r"<(?:img|script)\b[^>]*>", text, re.I)
            if not re.fullmatch(r'<img alt="[^"<>]*" src="data:image/png;base64,[^"]*">', tag)]
    links = re.findall(r"""href\s*=\s*["']?\s*javascript:""", text, re.I)
    return tags + links + CONTROL.findall(text.replace("\n", "").replace("\t", ""))


def table_widths(text: str) -> list[set[int]]:
    """The column counts of each Markdown table of a page (one per table: a row that
    breaks out of its table gives a second count)."""
    tables: list[set[int]] = []
    previous = False
    for line in text.splitlines():
        row = line.startswith("|")
        if row:
            cells = len(re.split(r"(?<!\\)\|", line.strip())) - 2
            if not previous:
                tables.append(set())
            tables[-1].add(cells)
        previous = row
    return tables
