"""``Additional_Implementation/`` folders (platform ports, alternative code) are folders
of their own kind: listed, built for this host with the performance flag set and
measured where they build, else a row saying why (``tests/fixtures/additional``: a
small hash of our own, its reference, an unrolled alternative and an AArch64 port)."""

from __future__ import annotations

import platform
import shutil
from pathlib import Path

import pytest

import ngcc
from ngcc.app import evaluate as _evaluate
from ngcc.app.dryrun import plan_lines
from ngcc.library import archive as _archive

ARCHIVE = Path(__file__).parent / "fixtures" / "additional"


@pytest.fixture()
def archive(tmp_path):
    return Path(shutil.copytree(ARCHIVE, tmp_path / "archive"))


def test_additional_folders_are_listed_with_their_own_kind(archive):
    found = {folder.path.name: folder for _, folder in _archive.folders_of([archive])}
    assert {name: (f.kind, f.flags) for name, f in found.items()} == {
        "Addi-256": ("reference", "reference"),
        "Addi-256-unrolled": ("additional", "performance"),
        "Addi-256-neon": ("additional", "performance")}
    lines = plan_lines([archive])
    assert sum(line.lstrip().startswith("additional ") for line in lines) == 2


def test_an_additional_folder_is_built_where_it_builds_else_a_row_says_why(archive,
                                                                          tmp_path):
    evaluation = _evaluate.build_all([archive], tmp_path / "run")
    rows = {Path(row.folder).name: row for row in evaluation.folders}
    reference, unrolled, port = rows["Addi-256"], rows["Addi-256-unrolled"], \
        rows["Addi-256-neon"]
    assert (unrolled.kind, unrolled.status, unrolled.label) == ("additional", "built",
                                                                "Addi-256@add")
    assert reference.label == "Addi-256@ref"
    libraries = [str(tmp_path / "run" / str(row.library)) for row in (reference, unrolled)]
    for message in (b"", b"abc", bytes(range(256)) * 3 + b"x"):
        assert ngcc.hash(libraries[0], message) == ngcc.hash(libraries[1], message)
    if platform.machine() == "aarch64":
        assert port.status == "built"
    else:
        assert (port.kind, port.status) == ("additional", "build failed")
        assert port.reason is not None and port.reason.startswith(
            "an additional implementation (a platform port or alternative code) that does "
            "not build for this host (%s): " % platform.machine())
        assert "this port is for AArch64 only" in port.reason
