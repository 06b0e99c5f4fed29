"""Attribution by content: within a candidate's archive, a library whose instance name
is no manifest label (an optimized folder ``Foo_SIMD512`` where the harness says
``Foo512``) is checked against the manifest lines its generated KAT files equal, and
labelled in the harness's words (``Foo512@opt``); a partial match is a MISMATCH naming
both. ``tests/fixtures/bycontent`` is code of our own: a reference ``Foo512``, the same
function as ``Foo_SIMD512``, and ``Foo_Wide512``, which differs on KAT_2_23 alone. The
registry (one candidate, ``hash-90 Foo``) and its manifest are this test's, the manifest
written from the reference's own generated files, as the harness writes its lines."""

from __future__ import annotations

from pathlib import Path

import pytest

import ngcc
from ngcc.app import evaluate as _evaluate
from ngcc.cli.main import main
from ngcc.library import candidates as _candidates
from ngcc.library.katfile import canonical_sha256

ARCHIVE = Path(__file__).parent / "fixtures" / "bycontent"
REGISTRY = ("id\talgorithm\tinstance\tmanifest_folder\tkat_instance_name\tdigest_bits\n"
            "hash-90\tFoo\tFoo512\tFoo512\tFoo512\t512\n")
FILES = ("2_12", "2_23")


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """The archive built twice by ``ngcc evaluate``'s first step: before the manifest
    exists (nothing to match), then after (labels by content), and the rows by folder."""
    root = tmp_path_factory.mktemp("bycontent")
    registry = root / "registry"
    registry.mkdir()
    (registry / _candidates.TABLE_NAME).write_text(REGISTRY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_candidates, "DATA_DIR", registry)
        first = _evaluate.build_all([ARCHIVE], root / "run")
        rows = {Path(row.folder).name: row for row in first.folders}
        assert {r.candidate for r in rows.values()} == {"hash-90"}  # inherited
        assert rows["Foo_SIMD512"].label == "Foo_SIMD512@opt"  # no manifest yet
        [reference] = ngcc.kat.check(root / "run" / str(rows["Foo512"].library),
                                     files=FILES, keep=True, out_dir=root / "ref",
                                     progress=False)
        (registry / "hash-90.sha256").write_text("".join(
            "%s strict Foo512/%s\n" % (canonical_sha256(f.path), f.name)
            for f in reference.files))
        again = _evaluate.build_all([ARCHIVE], root / "run")
        yield root, {Path(row.folder).name: row for row in again.folders}


def test_a_folder_named_apart_is_labelled_by_the_lines_its_files_equal(evaluated):
    root, rows = evaluated
    assert rows["Foo512"].label == "Foo512@ref"
    assert rows["Foo_SIMD512"].label == "Foo512@opt"
    assert rows["Foo_SIMD512"].instance == "Foo_SIMD512"  # the folder's own name kept
    assert rows["Foo_Wide512"].label == "Foo512@opt@Foo_Wide512"  # KAT_2_12 equal too
    for row in rows.values():
        assert (root / "run" / str(row.library)).is_file()


def test_equal_files_pass_by_content(evaluated):
    root, rows = evaluated
    [result] = ngcc.kat.check(root / "run" / str(rows["Foo_SIMD512"].library), files=FILES,
                              out_dir=root / "simd", progress=False)
    assert result.verdict == "PASS" and result.matched == "Foo512"
    assert result.by_content == ("equal to Foo512's manifest lines (Foo_SIMD512 is no "
                                 "manifest label)")
    for checked in result.files:
        assert checked.verdict == "PASS" and checked.basis == "shipped manifest"
        assert checked.detail == ("by content: equal to Foo512's manifest line "
                                  "(Foo_SIMD512 is no manifest label)")
    assert "by content  equal to Foo512's manifest lines" in result.log.read_text()


def test_a_partial_match_is_a_mismatch_naming_both(evaluated):
    root, rows = evaluated
    [result] = ngcc.kat.check(root / "run" / str(rows["Foo_Wide512"].library), files=FILES,
                              out_dir=root / "wide", progress=False)
    assert result.verdict == "MISMATCH" and result.matched == "Foo512"
    assert result.by_content.startswith("partly equal to Foo512's manifest lines")
    first, second = result.files
    assert first.verdict == "PASS" and second.verdict == "MISMATCH"
    assert second.detail.startswith("by content: Foo_Wide512's other files equal Foo512's "
                                    "manifest lines, this one differs from its line")


def test_ngcc_kat_candidate_matches_by_content(evaluated, capsys, monkeypatch):
    """``ngcc kat --candidate`` on a library ``ngcc build`` left ``external``."""
    root, _ = evaluated
    monkeypatch.setattr(_candidates, "DATA_DIR", root / "registry")
    library = ngcc.build(ARCHIVE / "Foo Sub" / "Optimized_Implementation" / "Foo_SIMD512",
                         out_dir=root / "alone").instance.library
    assert main(["kat", str(library), "--no-progress", "--out", str(root / "cli")]) == 1
    capsys.readouterr()
    assert main(["kat", str(library), "--candidate", "hash-90", "--no-progress",
                 "--out", str(root / "cli2")]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "equal to Foo512's manifest lines" in out
