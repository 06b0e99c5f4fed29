"""A ``.c`` file that another source of the submission folder ``#include``s is compiled
there, not alone: ``ngcc build`` names leaving it out as a certain fix, and ``ngcc
evaluate`` applies it and records it as an adjustment (``tests/fixtures/included``: a
tiny hash of our own whose main source sets ``W`` then ``#include``s ``core.c``, which
``#error``s alone)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import ngcc
from ngcc.app import evaluate as _evaluate
from ngcc.base.errors import BuildError
from ngcc.evidence import evaluation as _evaluation
from ngcc.report import folders as _folders

ARCHIVE = Path(__file__).parent / "fixtures" / "included"
FOLDER = Path("Included Core") / "Reference_Implementation" / "Included-256"
FIX = ("--exclude core.c (CryptHash_AlgorithmInstance.c #includes it, so its code is "
       "compiled there, not alone)")


@pytest.fixture()
def archive(tmp_path):
    return Path(shutil.copytree(ARCHIVE, tmp_path / "archive"))


def test_the_build_names_leaving_the_included_file_out_as_its_fix(archive, tmp_path):
    with pytest.raises(BuildError) as failed:
        ngcc.build(archive / FOLDER, out_dir=tmp_path / "out")
    assert [str(fix) for fix in failed.value.fixes] == [FIX]
    message = str(failed.value)
    assert "core.c does not compile alone: CryptHash_AlgorithmInstance.c #includes it" \
        in message and "(--exclude core.c)" in message
    assert "#error" in message  # the compiler's own words come first


def test_evaluate_builds_the_folder_without_it_and_records_the_adjustment(archive, tmp_path):
    run_dir = tmp_path / "run"
    evaluation = _evaluate.build_all([archive], run_dir)
    [row] = evaluation.folders
    assert (row.status, row.instance, row.adjustments) == ("built", "Included-256", (FIX,))
    assert _evaluation.load(run_dir).folders[0].adjustments == (FIX,)
    library = run_dir / str(row.library)
    sidecar = ngcc.instance(str(library)).sidecar or {}
    assert sidecar.get("adjustments") == [FIX]
    # the library is the folder's function: the same digests as a build told the fix
    by_hand = ngcc.build(archive / FOLDER, out_dir=tmp_path / "by-hand", exclude=["core.c"])
    for message in (b"", b"abc", bytes(range(256)) * 5):
        digest = ngcc.hash(str(library), message)
        assert len(digest) == 32 and digest == ngcc.hash(by_hand.instance, message)
    assert ngcc.hash(str(library), b"abc") != ngcc.hash(str(library), b"abd")
    note = _folders.ADJUSTMENT_NOTE
    assert "#includes" in note and "guarded main()" in note


def test_an_option_given_for_a_folder_is_applied_and_recorded_as_asked(archive, tmp_path):
    """``ngcc evaluate --exclude Included-256:core.c``: asked for, so no adjustment."""
    asked = [_evaluate.FolderOption("Reference_Implementation/Included-256", "exclude",
                                    "core.c")]
    evaluation = _evaluate.build_all([archive], tmp_path / "run", requested=asked)
    [row] = evaluation.folders
    assert (row.status, row.adjustments, row.requested) == ("built", (), ("--exclude core.c",))
    assert row.options == "--flags reference --exclude core.c"
    other = [_evaluate.FolderOption("Other-256", "define", "X")]
    with pytest.raises(ngcc.ArchiveError, match=r"Other-256:X names no folder of the "
                       r"archives .*e\.g\. Included-256"):
        _evaluate.build_all([archive], tmp_path / "run2", requested=other)


@pytest.mark.parametrize("given", ["core.c", ":core.c", "Included-256:"])
def test_a_folder_option_without_its_folder_is_a_usage_mistake(given, tmp_path, capsys):
    from ngcc.cli.main import main

    assert main(["evaluate", str(tmp_path), "--exclude", given]) == 2
    assert "argument --exclude: expected FOLDER:FILE" in capsys.readouterr().err
