"""Every Round 1 candidate: the registry, the shipped manifests, every KAT basis, the
inferred candidate, the pages and ``--libs`` (issue 26).

The submissions are written here: a tiny hash of our own (no crypto, every bit of the
message counts) whose ``ALGORITHM_INSTANCE`` (``tiny_256``) differs from its folder
(``Tiny-256``), as Laurus's does. Its references are made from the KAT files ngcc itself
generated: a manifest keyed by the label folder, as the harness's are; the official
files; the submission's own files. Where a test needs a registry row for it, the
registry is replaced by a table of the test's own (``registry`` fixture).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

import ngcc
import ngcc.base.format
import ngcc.library.katfile
from ngcc.base.errors import BuildError, KatGateError
from ngcc.cli.main import main
from ngcc.driver import kat
from ngcc.library import candidates as _candidates
from ngcc.library.build import build
from ngcc.library.candidates import AmbiguousInstanceError, UnknownCandidateError
from ngcc.library.katfile import canonical_sha256
from ngcc.report import pages as _report
from tests._fakes import FakeRunner, fixed_host

REPO = Path(__file__).resolve().parent.parent

# The sha256 of every data file shipped in kat/, recorded once (the manifests byte for
# byte as shared/kat/manifests/ has them, from the harness repositories).
SHIPPED_SHA256 = {
    "candidates.tsv": "a10cc67593cb73ce06c0df62a13a6aec52b9e5eb28282dbd74734fb046be73bd",
    "hash-01.sha256": "d2651a5a96d42a5bfb05b528088d445f850d8eb599ef5598a6d4cce97abcefc4",
    "hash-02.sha256": "1c9369705bed1bdfa64f3d82d261b46709cadfac5d8cadc941497c5be4441133",
    "hash-03.sha256": "613fb1d576a1363f825b3a042a7a0c3a190a6ce0a40fbfaafb88c3d4eab86da3",
    "hash-04.sha256": "427d43ca8885bf34bfe47a62a07db92d1e4401e96ebec8ea067e9f5ff111b820",
    "hash-05.sha256": "12a063889541d2c718d70076c23d42c5c9b160d49cc949031c86e5ab91d9a838",
    "hash-06.sha256": "7bc3b7c6623df457a1d4d40633c1984c4b7cdc70f5653eddfe6a0c4dd2741570",
    "hash-07.sha256": "17463c79184072db211ee1f71aad78ff47f7fabfee07241af37dc3f732d4ef6f",
    "hash-08.sha256": "8f8df50177b945176e7879227c204ea80e5b0ffef9a1d50460942faa455632ee",
    "hash-09.sha256": "e169199b841b2a3e70e80f0a1c461d0f58be21dfdb46d49be5f9e300e960df14",
    "hash-10.sha256": "b68acf930a31358a66661822ff3ba14d0db199140e5edb4e7ac61ae84966b4c5",
    "hash-11.sha256": "5166af39db1ffb82ebdc02d0d015170567f01129d38a4a1df400f58e1c8ed70a",
    "hash-12.sha256": "1c60ce5050d6d4462aa912bbb8fdb5cfbf82748f5f77d9ce4253d9e5aca128cf",
    "hash-13.sha256": "65ea386eb1a8d49816498d80739f735628bb26e4b6ae5ff38279c7dee57c1b0b",
    "hash-14.sha256": "37a94ad24038a78e05ebdf8b63b14a0f47b7df49c667648c1c726356adb9a60b",
    "hash-15.sha256": "a14189ad27d2c7ceabc7250cb02715438a1435668c66d30d1a812ba79bb073c9",
    "hash-16.sha256": "b070943387298ac60395f90b6355bf1a6681002e2033a64776c629e6654dd724",
    "hash-17.sha256": "afc4389f78fbe2ef5a3d12a63f80424ccd55d3e39ba33c1e0c45748157df6e44",
    "hash-18.sha256": "848b358e5ec8d70c5b10a1c9fb1b298336945bc4403c13e857d70db67a22227d",
    "hash-19.sha256": "ec239b043043e26f859aa8eabb9f6584ad0dfc2fe738bbc5df94c019b9d547e8",
    "hash-20.sha256": "4544f5ee2f3d2e6c045b14e0a5c173308bace9af361a3d175c08574f9937cbe1",
    "hash-21.sha256": "cf40ba1503497c4f8b4efc73771b73c0c12b282fb5f9580e78a1f603cb2bce00",
    "hash-22.sha256": "370ac5f8f56ca427bacd08a3783f0ba1a16b5a6a5a025f7902d846c9560a98ae",
    "hash-23.sha256": "74691b669523177e794cee7e368b248a7234681cf4e14636e76060386c396d66",
    "hash-24.sha256": "dfc08c0e3e22db751f35328516c315d1f113ef45539c8413ff75bc6754f01bbf",
    "hash-25.sha256": "c32e2d052cb67e506fd8c3c8252026c849287ec67eb511d0b4f328575f557d90",
    "hash-26.sha256": "93b11341ba8b1a51d314baa89760e5625480010971104b66e7b92e1b5b5050eb",
    "hash-27.sha256": "c7e8979963d7e39d87c08ef6873b9aad6e79c81ed65eca026081d9bf8a5adf3e",
    "hash-28.sha256": "341edb4b31ec13a11e309195d3a66ce5a8971c819d22fd83efbdd2672dfc18aa",
    "hash-29.sha256": "a830c220c980ef9facceead86741e3f9074591d8d04f6a13acb0b36570904ca0",
    "hash-30.sha256": "41119a32074cae4a03c49d5db24a8a01728e9d6ffb4da7585a856dc5c3add077",
    "hash-31.sha256": "fa8f77caa69500ff7e61a09f059a2a89ca8a22e6777cb0961cd55bc913320591",
    "hash-32.sha256": "d73000698d084e5b36e698f0f1ab67d7fb29fd5bfbbbd47da724ebaec9a33906",
    "hash-33.sha256": "089a646d3c82267b35d477f60517a5cb7a9b520aec8bbe152d78e664707b1c69",
    "hash-34.sha256": "ee89c21f10facbfefd8a515e2d705abd39028e058bce32d455b169cd39ded24a",
    "hash-35.sha256": "f90a8a4e8d04035fdccf4d4098d11943c531ca156c990cc9a4046c14bd5e049b",
}

TINY = r"""
#include <string.h>
#include "CryptHash_AlgorithmInstance.h"
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    unsigned long long h = 1469598103934665603ULL ^ bits, n = (bits + 7) / 8, i;
    for (i = 0; i < n; i++) {
        unsigned char byte = m[i];
        if (i == n - 1 && bits % 8)
            byte &= (unsigned char)(0xFF << (8 - bits % 8));
        h = (h ^ byte) * 1099511628211ULL;
    }
    for (i = 0; i < (unsigned long long)d / 8; i++) {
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
        out[i] = (unsigned char)(h >> 56);
    }
    return 0;
}
"""

REGISTRY = (
    "id\talgorithm\tinstance\tmanifest_folder\tkat_instance_name\tdigest_bits\n"
    "hash-90\tTiny\tTiny-256\tTiny-256\ttiny_256\t256\n"
    "hash-90\tTiny\tTiny-XOF\tTiny-XOF\ttiny_xof\t\n"
    "hash-91\tTwin\tTwin-A\tTwin-A\ttwin_256\t256\n"
    "hash-92\tOther Twin\tTwin-B\tTwin-B\ttwin_256\t256\n")


def submission(root: Path, folder: str, name: str, bits: int = 256) -> Path:
    """``root/Reference_Implementation/<folder>/`` with the tiny hash as ``name``."""
    path = root / "Reference_Implementation" / folder
    path.mkdir(parents=True)
    (path / "CryptHash_AlgorithmInstance.h").write_text(
        '#define ALGORITHM_INSTANCE "%s"\n#define DIGEST_BIT_LENGTH %d\n' % (name, bits))
    (path / "CryptHash_AlgorithmInstance.c").write_text(TINY)
    return path


def manifest_of(files: list[Path], folder: str, path: Path, spoil: bool = False) -> Path:
    """A harness-style manifest of ``files`` keyed by ``folder`` (one digit changed in
    the first line with ``spoil``)."""
    lines = []
    for file in files:
        digest = canonical_sha256(file.read_bytes())
        if spoil and not lines:
            digest = ("0" if digest[0] != "0" else "1") + digest[1:]
        lines.append("%s strict %s/%s\n" % (digest, folder, file.name))
    path.write_text("".join(lines))
    return path


def spoiled(file: Path, into: Path) -> Path:
    """A copy of a KAT file in ``into`` whose third record's digest differs."""
    lines = file.read_text().split("\n")
    at = [i for i, line in enumerate(lines) if line.startswith("Dst = ")][2]
    lines[at] = "Dst = " + ("1" if lines[at][6] == "0" else "0") + lines[at][7:]
    into.mkdir(parents=True, exist_ok=True)
    (into / file.name).write_text("\n".join(lines))
    return into / file.name


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny submission built (no registry row: candidate external) and its KAT files
    as ngcc generates them."""
    root = tmp_path_factory.mktemp("tiny")
    source = submission(root / "sub", "Tiny-256", "tiny_256")
    library = build(source, out_dir=root / "built").instance.library
    [result] = kat.check(library, files=("2_12",), out_dir=root / "generated", keep=True,
                         progress=False)
    files = [f.path for f in result.files]
    assert all(files) and result.verdict == "NOKAT"  # no reference yet
    return root, source, library, files


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """A candidate registry of this test's own: hash-90 Tiny (its manifest written by the
    test as ``manifests/hash-90.sha256``) and two candidates sharing ``twin_256``."""
    folder = tmp_path / "registry"
    folder.mkdir()
    (folder / _candidates.TABLE_NAME).write_text(REGISTRY)
    monkeypatch.setattr(_candidates, "DATA_DIR", folder)
    return folder


# ------------------------------------------------------------------ shipped data

def test_the_shipped_data_files_are_intact():
    shipped = sorted(p.name for p in (REPO / "kat").iterdir() if p.name != "README.md")
    assert shipped == sorted(SHIPPED_SHA256)
    for name, digest in SHIPPED_SHA256.items():
        assert hashlib.sha256((REPO / "kat" / name).read_bytes()).hexdigest() == digest, name
        installed = _candidates.DATA_DIR / name  # what the package reads
        assert hashlib.sha256(installed.read_bytes()).hexdigest() == digest, installed


def test_the_registry_lists_the_whole_field():
    found = _candidates.candidates()
    assert [c.id for c in found] == ["hash-%02d" % n for n in range(1, 36)]
    assert sum(len(c.instances) for c in found) == 141
    laurus = _candidates.candidate("hash-14")
    assert laurus.algorithm == "Laurus" and laurus.title == "hash-14 Laurus"
    assert [(i.name, i.kat_name, i.digest_bits) for i in laurus.instances] == [
        ("Laurus-512", "laurus_512", 512), ("Laurus-768", "laurus_768", 768),
        ("Laurus-1024", "laurus_1024", 1024), ("Laurus-XOF", "laurus_xof", None)]
    assert laurus.instances[3].xof and laurus.manifest.is_file()
    # each candidate's manifest has four lines per instance, in the instance's folder
    for c in found:
        listed = ngcc.library.katfile.read_manifest(c.manifest)
        assert len(listed) == 4 * len(c.instances), c.id
        assert {p.partition("/")[0] for p in listed} == {i.manifest_folder for i in c.instances}


def test_unknown_ids_are_refused_with_the_known_ones(capsys):
    with pytest.raises(UnknownCandidateError, match=r"hash-01, hash-02, .*hash-35, baseline"):
        _candidates.candidate("hash-99")
    assert main(["kat", "--candidate", "hash-99", "--no-progress"]) == 2  # a usage mistake
    assert "known candidate ids are hash-01" in capsys.readouterr().err


def test_the_candidate_is_inferred_from_the_instance_name():
    assert _candidates.infer_candidate("laurus_512") == "hash-14"   # KAT file name
    assert _candidates.infer_candidate("Laurus-512") == "hash-14"   # harness name
    assert _candidates.infer_candidate("MoFang_256_XOF") == "hash-19"
    assert _candidates.infer_candidate("Wish512") == "hash-35"
    assert _candidates.infer_candidate("no-such-hash") is None


def test_an_ambiguous_instance_name_is_refused_with_the_choices(registry, tmp_path):
    with pytest.raises(AmbiguousInstanceError, match=r"hash-91 \(Twin\), hash-92 \(Other Twin\)"):
        _candidates.infer_candidate("twin_256")
    source = submission(tmp_path, "Twin", "twin_256")
    with pytest.raises(AmbiguousInstanceError, match="--candidate"):
        build(source, out_dir=tmp_path / "out")
    assert not (tmp_path / "out" / "twin_256.so").exists()
    built = build(source, out_dir=tmp_path / "out", candidate="hash-92")  # it chooses
    assert built.instance.candidate == "hash-92"
    assert built.notes[0] == "candidate hash-92: given with --candidate"


def test_list_candidates_shows_the_registry(capsys):
    assert main(["list", "--candidates"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["id", "algorithm", "instance", "KAT", "file", "name", "digest",
                              "bits", "manifest", "lines", "built-in"]
    laurus = [line.split() for line in out if line.startswith("hash-14")]
    assert laurus[0] == ["hash-14", "Laurus", "Laurus-512", "laurus_512", "512", "4", "-"]
    assert laurus[3][:5] == ["hash-14", "Laurus", "Laurus-XOF", "laurus_xof", "XOF"]
    assert ["hash-35", "Wish", "Wish512", "Wish512", "512", "4", "yes"] in \
        [line.split() for line in out]


# ------------------------------------------------------------------ every basis

def test_nokat_names_every_place_tried_and_the_gate_says_what_to_give(tiny, tmp_path):
    (tmp_path / "empty").mkdir()
    _, source, library, _ = tiny
    [result] = kat.check(library, files=("2_12",), out_dir=tmp_path, progress=False,
                         official_dir=tmp_path / "empty")
    [file] = result.files
    assert (result.verdict, result.basis, file.basis) == ("NOKAT", "none", "none")
    assert "no line for KAT_2_12_tiny_256.txt in the manifest" in file.detail
    assert "no file KAT_2_12_tiny_256.txt in --official %s" % (tmp_path / "empty") in file.detail
    assert str(source) in file.detail and "subfolders named tiny_256 or Tiny-256" in file.detail
    from ngcc.measure.gate import NOKAT_ADVICE
    assert NOKAT_ADVICE == ("no reference to check against: give --manifest FILE or "
                            "--official DIR, or --allow-kat-fail to time it unchecked")


def test_pass_and_mismatch_through_a_manifest_given(tiny, tmp_path, capsys):
    _, _, library, files = tiny
    good = manifest_of(files, "Tiny-256", tmp_path / "good.sha256")
    [result] = kat.check(library, files=("2_12",), out_dir=tmp_path / "a", progress=False,
                         manifest=good)
    assert (result.verdict, result.basis, result.reference) == ("PASS", "manifest", str(good))
    assert "basis       manifest" in result.log.read_text()
    bad = manifest_of(files, "Tiny-256", tmp_path / "bad.sha256", spoil=True)
    assert main(["kat", str(library), "--files", "2_12", "--manifest", str(bad),
                 "--no-progress", "--out", str(tmp_path / "b")]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "the canonical digest differs from the manifest" in out


def test_build_records_a_manifest_and_every_check_uses_it(tiny, tmp_path):
    _, source, _, files = tiny
    good = manifest_of(files, "Tiny-256", tmp_path / "good.sha256")
    built = build(source, out_dir=tmp_path / "out", manifest=good)
    assert built.provenance.kat_basis == "manifest"
    [result] = kat.check(built.instance.library, files=("2_12",), out_dir=tmp_path / "k",
                         progress=False)
    assert (result.verdict, result.basis) == ("PASS", "manifest")
    good.write_text(good.read_text().replace("strict", "nolen", 1))  # changed since
    with pytest.raises(ngcc.NgccError, match="has changed since"):
        kat.check(built.instance.library, files=("2_12",), out_dir=tmp_path / "k",
                  progress=False)


def test_a_round1_name_finds_its_shipped_line_under_the_harness_folder(tmp_path, capsys):
    # Laurus ships ALGORITHM_INSTANCE "laurus_512" in a folder Laurus-512, and the
    # harness's line is Laurus-512/KAT_2_12_laurus_512.txt: the tiny hash under that
    # name is hash-14 by inference and is judged against that very line (MISMATCH:
    # it is not Laurus), never NOKAT.
    source = submission(tmp_path, "Laurus-512", "laurus_512", bits=512)
    assert main(["build", str(source), "--out", str(tmp_path / "out")]) == 0
    assert "candidate hash-14 (Laurus): inferred" in capsys.readouterr().out
    [result] = kat.check(tmp_path / "out" / "laurus_512.so", files=("2_12",),
                         out_dir=tmp_path / "k", progress=False)
    [file] = result.files
    assert (result.candidate, file.verdict, file.basis) == ("hash-14", "MISMATCH",
                                                           "shipped manifest")
    assert file.expected_sha256 == (
        "2ceff80229af8472e96e42d66d43efb143c67d2e95fa8ada4e8a69f2284ec1a4")


def test_campaign_takes_a_manifest_and_build_takes_libs_on_the_command_line(tiny, tmp_path):
    _, _, library, files = tiny
    good = manifest_of(files, "Tiny-256", tmp_path / "good.sha256")
    assert main(["campaign", str(library), "--manifest", str(good), "--kat-files", "2_12",
                 "--lengths", "32", "--quick", "--dry-run", "--quiet",
                 "--run-dir", str(tmp_path / "run")]) == 0
    [entry] = ngcc.load_run(tmp_path / "run").build_entries
    assert (entry.kat.verdict, entry.kat.basis) == ("PASS", "manifest")


def test_pass_and_mismatch_through_a_shipped_style_manifest(tiny, registry, tmp_path, capsys):
    _, source, _, files = tiny
    shipped = manifest_of(files, "Tiny-256", registry / "hash-90.sha256")  # label folder
    assert main(["build", str(source), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert ("candidate hash-90 (Tiny): inferred from the instance name 'tiny_256', which only "
            "this Round 1 candidate has (--candidate ID overrides)") in out
    library = tmp_path / "out" / "tiny_256.so"
    [result] = kat.check(library, files=("2_12",), out_dir=tmp_path / "k", progress=False)
    assert (result.candidate, result.verdict, result.basis) == (
        "hash-90", "PASS", "shipped manifest")
    manifest_of(files, "Tiny-256", shipped, spoil=True)
    [result] = kat.check(library, files=("2_12",), out_dir=tmp_path / "k", progress=False)
    assert (result.verdict, result.basis) == ("MISMATCH", "shipped manifest")


def test_pass_and_mismatch_through_the_official_files(tiny, tmp_path):
    _, _, library, files = tiny
    official = tmp_path / "official" / "Tiny-256"  # the label folder, not the instance name
    official.mkdir(parents=True)
    shutil.copy(files[0], official)
    [result] = kat.check(library, files=("2_12",), out_dir=tmp_path / "a", progress=False,
                         official_dir=tmp_path / "official")
    assert (result.verdict, result.basis) == ("PASS", "official files")
    assert result.files[0].reference == str(official / files[0].name)
    spoiled(files[0], official)
    [result] = kat.check(library, files=("2_12",), out_dir=tmp_path / "b", progress=False,
                         official_dir=tmp_path / "official")
    assert (result.verdict, result.basis) == ("MISMATCH", "official files")
    assert "first difference from the official file" in result.files[0].detail
    assert "record 2 (line 11, Msg_Len = 2): Dst differs" in result.files[0].detail


def test_pass_and_mismatch_through_submission_files_under_the_folder_name(tiny, tmp_path):
    _, _, _, files = tiny
    source = submission(tmp_path / "sub", "Tiny-256", "tiny_256")
    vectors = tmp_path / "sub" / "Test_Vectors" / "Tiny-256"  # the folder's name
    vectors.mkdir(parents=True)
    shutil.copy(files[0], vectors)
    built = build(source, out_dir=tmp_path / "out")
    assert built.provenance.kat_basis == "submission files"
    [result] = kat.check(built.instance.library, files=("2_12",), out_dir=tmp_path / "a",
                         progress=False)
    assert (result.verdict, result.basis) == ("PASS", "submission files")
    spoiled(files[0], vectors)
    [result] = kat.check(built.instance.library, files=("2_12",), out_dir=tmp_path / "b",
                         progress=False)
    assert (result.verdict, result.basis) == ("MISMATCH", "submission files")
    assert "first difference from the submission's own KAT file" in result.files[0].detail


def test_an_xof_is_checked_at_the_output_length_of_its_header(registry, tmp_path):
    source = submission(tmp_path, "Tiny-XOF", "tiny_xof", bits=2048)
    built = build(source, out_dir=tmp_path / "out")
    assert (built.instance.candidate, built.instance.digest_bits) == ("hash-90", 2048)
    [made] = kat.check(built.instance.library, files=("2_12",), out_dir=tmp_path / "g",
                       keep=True, progress=False)
    text = made.files[0].path.read_text()
    assert "Dst_Len = 2048\n" in text and len(text.split("Dst = ")[1].split("\n")[0]) == 512
    manifest_of([made.files[0].path], "Tiny-XOF", registry / "hash-90.sha256")
    [result] = kat.check(built.instance.library, files=("2_12",), out_dir=tmp_path / "k",
                         progress=False)
    assert (result.verdict, result.basis) == ("PASS", "shipped manifest")


# ------------------------------------------------------------------ pages

def test_pages_are_titled_by_the_registry_and_say_their_basis(tiny, registry, tmp_path,
                                                             monkeypatch):
    _, source, _, files = tiny
    fixed_host(monkeypatch)
    manifest_of(files, "Tiny-256", registry / "hash-90.sha256")
    library = build(source, out_dir=tmp_path / "out").instance.library
    run = ngcc.Campaign([str(library), "pseudoXOF-256"], run_dir=tmp_path / "run",
                        lengths=[32, 1024], quick=True, progress=False, runner=FakeRunner(),
                        kat_files=["2_12"]).run()
    pages = _report.pages(run, plots=False)
    page = pages["hash-90.md"]
    assert page.startswith("# hash-90 Tiny — performance on ")
    assert "- Algorithm: Tiny\n" in page
    assert ("Each library was checked against the official KAT vectors of the SHA-256 "
            "manifest `kat/hash-90.sha256` in ngcc (KAT files checked: 2_12) before "
            "timing.") in page
    assert "| hash-90 | Tiny | `tiny_256` |" in pages["index.md"]
    assert "[field summary](field.md)" in pages["index.md"]
    field = pages[_report.FIELD_PAGE].splitlines()
    [row] = [line for line in field if "`tiny_256`" in line]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:4] == ["[hash-90](hash-90.md)", "Tiny", "`tiny_256`", "PASS"]
    record = run.record("tiny_256", 32)
    baseline = run.record("pseudoXOF-256", 32)
    assert cells[5] == ngcc.base.format.ratio(record.statistics.mean_cycles
                                          / baseline.statistics.mean_cycles)
    assert cells[8:] == ["—", "—"]  # 65536 B was not measured


def test_nokat_timed_unchecked_says_so_and_not_that_it_is_wrong(tiny, tmp_path, monkeypatch):
    _, _, library, files = tiny
    fixed_host(monkeypatch)
    run = ngcc.Campaign([str(library)], run_dir=tmp_path / "run", lengths=[32], quick=True,
                        progress=False, runner=FakeRunner(), kat_files=["2_12"],
                        allow_kat_fail=True).run()
    page = _report.pages(run, plots=False)["external-tiny_256.md"]
    assert "The KAT files (2_12) were generated but not checked (no reference)" in page
    assert "NOKAT ⚠ not checked (no reference), timed with --allow-kat-fail" in page
    assert "does not compute the candidate's hash" not in page
    refused = ngcc.Campaign([str(library)], run_dir=tmp_path / "refused", lengths=[32],
                            quick=True, progress=False, runner=FakeRunner(),
                            kat_files=["2_12"])
    with pytest.warns(ngcc.MeasurementWarning, match="give --manifest FILE or --official DIR"), \
            pytest.raises(KatGateError, match=r"refused every instance .*: no reference to "
                                              r"check against: give --manifest FILE"):
        refused.run()
    # the advice followed: the same run directory, now with a manifest, is checked again
    good = manifest_of(files, "Tiny-256", tmp_path / "good.sha256")
    run = ngcc.Campaign([str(library)], run_dir=tmp_path / "refused", lengths=[32],
                        quick=True, progress=False, runner=FakeRunner(), kat_files=["2_12"],
                        kat_manifest=good).run()
    [entry] = run.build_entries
    assert (entry.kat.verdict, entry.kat.basis, entry.kat.reference) == (
        "PASS", "manifest", str(good))
    assert [job.status for job in run.jobs] == ["done"]
    assert run.records[0].kat.basis == "manifest"  # the record names it too
    page = _report.pages(run, plots=False)["external-tiny_256.md"]
    assert "checked against the SHA-256 manifest `good.sha256` given with --manifest" in page


# ------------------------------------------------------------------ --libs

def test_libs_link_a_system_library_after_the_objects(tmp_path):
    if not any(Path(d, "libcrypto.so").exists() for d in ("/usr/lib/x86_64-linux-gnu",
                                                           "/usr/lib64", "/usr/lib")):
        pytest.skip("no libcrypto.so to link against here")
    source = tmp_path / "Sha"
    source.mkdir()
    (source / "CryptHash_AlgorithmInstance.h").write_text(
        '#define ALGORITHM_INSTANCE "openssl_sha256"\n#define DIGEST_BIT_LENGTH 256\n')
    (source / "CryptHash_AlgorithmInstance.c").write_text(r"""
#include <stddef.h>
#include "CryptHash_AlgorithmInstance.h"
unsigned char *SHA256(const unsigned char *d, size_t n, unsigned char *md);
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    if (d != 256 || bits % 8) return -1;
    SHA256(m, (size_t)(bits / 8), out);
    return 0;
}
""")
    with pytest.raises(BuildError, match=r"SHA256, used by CryptHash_AlgorithmInstance\.c"):
        build(source, out_dir=tmp_path / "without")
    assert main(["build", str(source), "--libs", "-lcrypto", "--out", str(tmp_path / "cli")]) == 0
    built = build(source, out_dir=tmp_path / "with", libs="-lcrypto")
    assert built.provenance.libs == ("-lcrypto",)
    assert "-lcrypto" in built.instance.sidecar["link_flags"]
    assert "-Wl,-z,defs" in built.instance.sidecar["link_flags"]
    assert ngcc.hash(built.instance, b"abc") == hashlib.sha256(b"abc").digest()
