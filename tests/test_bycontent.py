"""Attribution by content: within a candidate's archive, a library whose instance name
is no manifest label (an optimized folder ``Foo_SIMD512`` where the harness says
``Foo-512``) is checked against the manifest lines its generated KAT files equal, and
labelled in the harness's words (``Foo-512@opt``); a partial match is a MISMATCH naming
both. ``tests/fixtures/bycontent`` is code of our own: a reference folder ``Foo-512``
declaring ``foo_512`` (as Laurus ships ``laurus_512``), the same function as
``Foo_SIMD512``, and ``Foo_Wide512``, which differs on KAT_2_23 alone. The registry
(one candidate, ``hash-90 Foo``: harness name ``Foo-512``, KAT files ``foo_512``) and its
manifest are this test's, the manifest written from the reference's own generated
files, as the harness writes its lines."""

from __future__ import annotations

from pathlib import Path

import pytest

import ngcc
from ngcc.app import evaluate as _evaluate
from ngcc.cli.main import main
from ngcc.library import candidates as _candidates
from ngcc.library.katfile import canonical_sha256
from tests._fakes import FakeRunner, fixed_host

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")

ARCHIVE = Path(__file__).parent / "fixtures" / "bycontent"
REGISTRY = ("id\talgorithm\tinstance\tmanifest_folder\tkat_instance_name\tdigest_bits\n"
            "hash-90\tFoo\tFoo-512\tFoo-512\tfoo_512\t512\n")
FILES = ("2_12", "2_23")


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """The archive built by ``ngcc evaluate``'s first step before the manifest exists
    (nothing to match), then evaluated (real builds and KAT gate, fake trials): the rows
    by folder, and the run."""
    root = tmp_path_factory.mktemp("bycontent")
    registry = root / "registry"
    registry.mkdir()
    (registry / _candidates.TABLE_NAME).write_text(REGISTRY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_candidates, "DATA_DIR", registry)
        fixed_host(patch)
        first = _evaluate.build_all([ARCHIVE], root / "run")
        rows = {Path(row.folder).name: row for row in first.folders}
        assert {r.candidate for r in rows.values()} == {"hash-90"}  # inherited
        assert rows["Foo_SIMD512"].label == "Foo_SIMD512@opt"  # no manifest yet
        [reference] = ngcc.kat.check(root / "run" / str(rows["Foo-512"].library),
                                     files=FILES, keep=True, out_dir=root / "ref",
                                     progress=False)
        (registry / "hash-90.sha256").write_text("".join(
            "%s strict Foo-512/%s\n" % (canonical_sha256(f.path), f.name)
            for f in reference.files))
        result = _evaluate.evaluate([ARCHIVE], root / "run", runner=FakeRunner(),
                                    plots=False, ct=False, progress=False,
                                    settings=ngcc.CampaignSettings.make(
                                        quick=True, lengths=[32], kat_files=list(FILES)))
        yield root, {Path(row.folder).name: row for row in result.evaluation.folders}, result


def test_a_folder_named_apart_is_labelled_by_the_lines_its_files_equal(evaluated):
    root, rows, _ = evaluated
    assert rows["Foo-512"].label == "Foo-512@ref"  # the harness's name, not foo_512
    assert rows["Foo_SIMD512"].label == "Foo-512@opt"
    assert rows["Foo_SIMD512"].instance == "Foo_SIMD512"  # the folder's own name kept
    assert rows["Foo_Wide512"].label == "Foo-512@opt@Foo_Wide512"  # KAT_2_12 equal too
    for row in rows.values():
        assert (root / "run" / str(row.library)).is_file()


def test_equal_files_pass_by_content(evaluated):
    root, rows, _ = evaluated
    [result] = ngcc.kat.check(root / "run" / str(rows["Foo_SIMD512"].library), files=FILES,
                              out_dir=root / "simd", progress=False)
    assert result.verdict == "PASS" and result.matched == "Foo-512"
    assert result.by_content == ("equal to Foo-512's manifest lines (Foo_SIMD512 is no "
                                 "manifest label)")
    for checked in result.files:
        assert checked.verdict == "PASS" and checked.basis == "shipped manifest"
        assert checked.detail == ("by content: equal to Foo-512's manifest line "
                                  "(Foo_SIMD512 is no manifest label)")
    assert "by content  equal to Foo-512's manifest lines" in result.log.read_text()


def test_a_partial_match_is_a_mismatch_naming_both(evaluated):
    root, rows, _ = evaluated
    [result] = ngcc.kat.check(root / "run" / str(rows["Foo_Wide512"].library), files=FILES,
                              out_dir=root / "wide", progress=False)
    assert result.verdict == "MISMATCH" and result.matched == "Foo-512"
    assert result.by_content.startswith("partly equal to Foo-512's manifest lines")
    first, second = result.files
    assert first.verdict == "PASS" and second.verdict == "MISMATCH"
    assert second.detail.startswith("by content: Foo_Wide512's other files equal Foo-512's "
                                    "manifest lines, this one differs from its line")


def test_ngcc_kat_candidate_matches_by_content(evaluated, capsys, monkeypatch):
    """``ngcc kat --candidate`` on a library ``ngcc build`` left ``external``."""
    root, _, _ = evaluated
    monkeypatch.setattr(_candidates, "DATA_DIR", root / "registry")
    library = ngcc.build(ARCHIVE / "Foo Sub" / "Optimized_Implementation" / "Foo_SIMD512",
                         out_dir=root / "alone").instance.library
    assert main(["kat", str(library), "--no-progress", "--out", str(root / "cli")]) == 1
    capsys.readouterr()
    assert main(["kat", str(library), "--candidate", "hash-90", "--no-progress",
                 "--out", str(root / "cli2")]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "equal to Foo-512's manifest lines" in out


def test_the_pages_say_the_folders_kind_and_the_harness_names(evaluated):
    """The candidate page names each library's kind from its folder (never "external
    library" for a library whose candidate is known), its labels in the harness's words,
    each beside its folder; the gate records the match by content."""
    root, rows, result = evaluated
    page = (root / "run" / "report" / "hash-90.md").read_text()
    assert "- Implementation versions measured: optimized, reference\n" in page
    assert "external library" not in page
    assert "`Foo_SIMD512@opt`" not in page
    for folder, label, outcome in (("Foo-512", "Foo-512@ref", "KAT PASS"),
                                   ("Foo_SIMD512", "Foo-512@opt", "KAT PASS"),
                                   ("Foo_Wide512", "Foo-512@opt@Foo_Wide512", "KAT MISMATCH")):
        assert "/%s` | %s" % (folder, rows[folder].kind) in page
        assert "| `%s` | %s |" % (label, outcome) in page
    facts = {b.label: b.kat for b in result.run.build_entries}
    assert facts["Foo-512@opt"].by_content == ("equal to Foo-512's manifest lines "
                                               "(Foo_SIMD512 is no manifest label)")
    assert facts["Foo-512@ref"].by_content is None
    assert ("by content: equal to Foo-512's manifest lines (Foo_SIMD512 is no manifest "
            "label)") in page  # section 3's basis
    assert ngcc.validate(root / "run").ok


def test_the_dry_run_names_each_folders_candidate_and_label(evaluated):
    """Read from the headers, nothing built: the folder named apart takes its
    submission's candidate, and its label may come from its files' content."""
    from ngcc.app.dryrun import plan_lines

    lines = "\n".join(plan_lines([ARCHIVE], ct=False))
    assert ("instance foo_512, 512 bits, candidate hash-90 (Foo), label Foo-512@ref\n"
            in lines)
    assert ("instance Foo_SIMD512, 512 bits, candidate hash-90 (Foo), its submission's, "
            "label Foo_SIMD512@opt unless its KAT_2_12 file equals another instance's "
            "manifest line\n") in lines
