"""An archive's text and files as untrusted input (issue 36, findings 5, 6 and 7):
hostile folder, submission and compiler text arrives inert on the terminal and the
pages; no file outside the archive is read; non-UTF-8 names and symlinked folders get
rows; a damaged ``campaign.json`` is named at once on resume. ``ngcc evaluate`` runs as
the command line, in a process of its own (the builds and the KAT gate real, the trials
the fake runner's)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import ngcc
from ngcc.base.errors import InvalidNameError
from ngcc.stats import groups as _groups
from tests._fakes import FakeKat, FakeRunner, fixed_host
from tests._hostile_archive import (
    CONTROL,
    EVALUATE,
    HOSTILE,
    TINY,
    hostile_archive,
    live_html,
    live_markdown,
    table_widths,
)

VECTORS = TINY.parents[2] / "Test_Vectors" / "TinyHash-256"


def _evaluate(archive: Path, run_dir: Path, ct: bool = False
              ) -> subprocess.CompletedProcess[str]:
    """``ngcc evaluate --wide`` of ``archive`` (every name of it in the table); its
    constant-time step (valgrind) only with ``ct``."""
    return subprocess.run(
        [sys.executable, "-c", EVALUATE, "evaluate", str(archive), "--run-dir", str(run_dir),
         "--quick", "--lengths", "32", "--kat-files", "2_23", "--no-plots", "--quiet", "--wide",
         *([] if ct else ["--no-ct"])],
        capture_output=True, text=True, errors="surrogateescape", timeout=300)


def _all_text(run_dir: Path) -> str:
    """Every file of a run directory as text (evidence, logs, pages, libraries' bytes)."""
    return "".join(path.read_bytes().decode("utf-8", "replace")
                   for path in sorted(run_dir.rglob("*")) if path.is_file())


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    return _evaluate(hostile_archive(root), root / "run", ct=True), root / "run"


def test_hostile_names_and_compiler_text_reach_no_terminal_live(hostile):
    done, _ = hostile
    assert done.returncode == 1, done.stderr  # two folders do not build
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    assert CONTROL.findall(out) == []
    assert "\\x1b[2J\\x1b]0;owned\\x07" in done.stdout  # shown, escaped
    assert "line\\x0abreak" in done.stdout and "\\u202eevil" in done.stdout
    assert "#error H <img" in done.stdout  # the compiler's line, inert
    assert "KAT PASS" in done.stdout  # the hostile-named folder was measured


def test_hostile_names_and_compiler_text_are_inert_on_every_page(hostile):
    _, run_dir = hostile
    pages = sorted((run_dir / "report").glob("*.*"))
    assert {p.suffix for p in pages} == {".md", ".html"}
    index = (run_dir / "report" / "index.md").read_text()
    assert "onerror=alert(1)" in index and "#error H" in index  # shown, not dropped
    for page in pages:
        text = page.read_text()
        if page.suffix == ".md":
            assert live_markdown(text) == [], page.name
            assert all(len(widths) == 1 for widths in table_widths(text)), page.name
        else:
            assert live_html(text) == [], page.name
    if shutil.which("valgrind"):  # the constant-time step ran on the hostile folders too
        assert list((run_dir / "ct").glob("*/*__ct.json"))


def test_a_declared_hostile_instance_name_is_refused_and_shown_inert(hostile):
    done, run_dir = hostile
    evaluation = json.loads((run_dir / "evaluation.json").read_text())
    declared = next(f for f in evaluation["folders"] if f["submission"] == "Declared Name")
    assert declared["status"] == "build failed"
    assert "ALGORITHM_INSTANCE" in declared["reason"]
    assert "archive/Declared Name/Reference_Implementation/DeclaredName-256" in done.stdout


def test_a_kat_file_linked_out_of_the_archive_is_refused_by_name(tmp_path):
    archive = tmp_path / "archive"
    shutil.copytree(TINY, archive / "Sneaky" / "Reference_Implementation" / "TinyHash-256")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-FIRST-LINE-4242\nsecond line\n")
    kat = archive / "Sneaky" / "Test_Vectors" / "TinyHash-256" / "KAT_2_23_TinyHash-256.txt"
    kat.parent.mkdir(parents=True)
    kat.symlink_to(secret)
    done = _evaluate(archive, tmp_path / "run")
    assert done.returncode == 1
    assert "KAT ERROR" in done.stdout
    assert "SECRET" not in done.stdout + done.stderr
    assert "SECRET" not in _all_text(tmp_path / "run")
    log = next((tmp_path / "run" / "kat").rglob("*.log")).read_text()
    assert "%s is a symbolic link (or lies under one) to %s: not read" % (kat, secret) in log


def test_a_kat_folder_linked_out_of_the_archive_is_refused_too(tmp_path):
    archive = tmp_path / "archive"
    shutil.copytree(TINY, archive / "Sneaky" / "Reference_Implementation" / "TinyHash-256")
    outside = tmp_path / "outside"
    shutil.copytree(VECTORS, outside)
    (archive / "Sneaky" / "Test_Vectors").mkdir()
    (archive / "Sneaky" / "Test_Vectors" / "TinyHash-256").symlink_to(outside)
    done = _evaluate(archive, tmp_path / "run")
    assert "KAT ERROR" in done.stdout  # not PASS: the reference was not read
    log = next((tmp_path / "run" / "kat").rglob("*.log")).read_text()
    assert "lies under one) to %s" % (outside / "KAT_2_23_TinyHash-256.txt") in log


def test_a_folder_name_that_is_not_utf8_is_shown_escaped_and_evaluated(tmp_path):
    archive = tmp_path / "archive"
    name = os.fsdecode(b"Bad\xff\xfeName")
    shutil.copytree(TINY, archive / name / "Reference_Implementation" / "TinyHash-256")
    shutil.copytree(VECTORS, archive / name / "Test_Vectors" / "TinyHash-256")
    done = _evaluate(archive, tmp_path / "run")
    assert done.returncode == 0, done.stderr
    assert "archive/Bad\\udcff\\udcfeName/Reference_Implementation" in done.stdout
    assert "KAT PASS" in done.stdout
    index = (tmp_path / "run" / "report" / "index.md").read_text(encoding="utf-8")
    assert "`Bad\\udcff\\udcfeName`" in index


def test_a_symlinked_folder_is_a_row_saying_it_was_not_followed(tmp_path):
    archive = tmp_path / "archive"
    shutil.copytree(TINY, archive / "Real" / "Reference_Implementation" / "TinyHash-256")
    shutil.copytree(VECTORS, archive / "Real" / "Test_Vectors" / "TinyHash-256")
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(TINY, elsewhere / "Reference_Implementation" / "Linked-256")
    (archive / "Linked").symlink_to(elsewhere)
    (archive / "Real" / "Optimized_Implementation").mkdir()
    (archive / "Real" / "Optimized_Implementation" / "Opt-256").symlink_to(TINY)
    done = _evaluate(archive, tmp_path / "run")
    assert done.returncode == 1  # two folders not evaluated
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:4]}
    assert "not followed: a symbolic link to %s" % elsewhere in rows["archive/Linked"]
    assert "unknown" in rows["archive/Linked"]
    opt = rows["archive/Real/Optimized_Implementation/Opt-256"]
    assert "optimized" in opt and "not followed: a symbolic link to %s" % TINY in opt
    assert "KAT PASS" in rows["archive/Real/Reference_Implementation/TinyHash-256"]
    assert not (tmp_path / "run" / "builds" / "Linked-256@ref").exists()
    index = (tmp_path / "run" / "report" / "index.md").read_text()
    assert "3 folders found, 1 built, 2 not built" in index


@pytest.mark.parametrize("damage", ["fifo", "deep"])
def test_a_damaged_campaign_json_is_named_at_once_on_resume(tmp_path, damage):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    if damage == "fifo":
        os.mkfifo(run_dir / "campaign.json")
    else:
        (run_dir / "campaign.json").write_bytes(b"[" * 200_000)
    done = subprocess.run([sys.executable, "-m", "ngcc", "campaign", "SM3", "--quick",
                           "--lengths", "32", "--trials", "2", "--quiet", "--run-dir",
                           str(run_dir)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ngcc: error: corrupt evidence file %s" % (run_dir / "campaign.json"))
    assert ("not a regular file" if damage == "fifo" else "nested 200000 deep") in last
    assert not (run_dir / ".campaign.lock").exists() or _lock_free(run_dir)


def _lock_free(run_dir: Path) -> bool:
    """Whether the run directory's lock is free again (a second campaign may take it)."""
    from ngcc.measure import locks as _locks

    with _locks.hold_run_dir(run_dir):
        return True


def test_hostile_text_constant_holds_every_hostile_class():
    """The test's own input: each class the issue names is in it (so a test that passes
    is not passing on a tame name)."""
    for part in ("<img src=x onerror=", "<script>", "|", "\033[2J", "\033]0;owned\007", "\n",
                 "\u202e", "javascript:"):
        assert part in HOSTILE


# ------------------------------------------------------------------ names (finding 4d)

def _declaring(folder: Path, name: str, like: str = "pseudoXOF-256") -> Path:
    """A copy of a built-in library whose ``ngcc build`` sidecar declares ``name``."""
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / ("%s.so" % name)
    shutil.copyfile(ngcc.instance(like).library, library)
    (folder / ("%s.so.json" % name)).write_text(json.dumps(
        {"name": name, "family": "Fake", "digest_bits": ngcc.instance(like).digest_bits}))
    return library


def test_external_libraries_never_take_a_builtin_name_nor_each_others(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    impostor = _declaring(tmp_path / "impostor", "pseudoXOF-256")
    lower = _declaring(tmp_path / "lower", "sm3", like="SM3")
    twin_a = _declaring(tmp_path / "a", "Twin-256", like="SM3")
    twin_b = _declaring(tmp_path / "b", "Twin-256", like="SM3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ngcc.MeasurementWarning)
        run = ngcc.Campaign([str(impostor), str(lower), str(twin_a), str(twin_b),
                             "pseudoXOF-256"], run_dir=tmp_path / "run", runner=FakeRunner(),
                            kat_checker=FakeKat(), quick=True, lengths=[32], trials=2,
                            progress=False).run()
    labels = [lib.label for lib in run.plan.libraries]
    assert labels == ["pseudoXOF-256@impostor", "sm3@lower", "Twin-256@a", "Twin-256@b",
                      "pseudoXOF-256"]
    baseline = run.record("pseudoXOF-256", 32)
    assert baseline.candidate == "baseline"
    for label in labels[1:4]:  # every 256-bit library is held against the built-in
        assert _groups.baseline_record(run.records, run.record(label, 32)) is baseline
    assert _groups.baseline_record(run.records, run.record(labels[0], 32)) is baseline


def test_an_external_library_alone_is_no_baseline_and_no_builtin(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    impostor = _declaring(tmp_path / "impostor", "pseudoXOF-256")
    other = _declaring(tmp_path / "other", "Other-256", like="SM3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ngcc.MeasurementWarning)
        run = ngcc.Campaign([str(impostor), str(other)], run_dir=tmp_path / "run",
                            runner=FakeRunner(), kat_checker=FakeKat(), quick=True,
                            lengths=[32], trials=2, progress=False).run()
    assert run.plan.libraries[0].label == "pseudoXOF-256@impostor"
    assert _groups.baseline_ratio(run.records, run.record("Other-256", 32)) is None
    with pytest.raises(InvalidNameError, match="built-in instance"):
        ngcc.Campaign([str(other)], labels=["PSEUDOXOF-256"], run_dir=tmp_path / "run2",
                      runner=FakeRunner(), kat_checker=FakeKat(), quick=True, lengths=[32])
    with pytest.raises(InvalidNameError, match="two libraries"):
        ngcc.Campaign([str(other), str(impostor)], labels=["Same", "same"],
                      run_dir=tmp_path / "run3", runner=FakeRunner(), kat_checker=FakeKat(),
                      quick=True, lengths=[32])


def test_a_submission_declaring_a_baseline_name_gets_its_own_label_and_a_note(tmp_path):
    archive = tmp_path / "archive"
    for submission, name in (("Fake Baseline", "pseudoXOF-256"), ("Honest", "TinyHash-256")):
        folder = archive / submission / "Reference_Implementation" / name
        shutil.copytree(TINY, folder)
        header = folder / "CryptHash_AlgorithmInstance.h"
        header.write_text(header.read_text().replace('"TinyHash-256"', '"%s"' % name))
        vectors = archive / submission / "Test_Vectors" / name
        shutil.copytree(VECTORS, vectors)
        for file in vectors.iterdir():
            file.rename(vectors / file.name.replace("TinyHash-256", name))
    done = _evaluate(archive, tmp_path / "run")
    assert done.returncode == 0, done.stderr
    assert ("ngcc: note: archive/Fake Baseline/Reference_Implementation/pseudoXOF-256 "
            "declares the instance name pseudoXOF-256, a built-in instance's: it is labelled "
            "pseudoXOF-256@ref") in done.stderr
    run = ngcc.load_run(tmp_path / "run")
    assert sorted(r.label for r in run.records) == ["TinyHash-256@ref", "pseudoXOF-256@ref"]
    honest = run.record("TinyHash-256@ref", 32)
    assert _groups.baseline_record(run.records, honest) is None  # not the impostor
    page = (tmp_path / "run" / "report" / "external-pseudoXOF-256@ref.md").read_text()
    assert "Note: `archive/Fake Baseline/Reference_Implementation/pseudoXOF-256` declares" in page
    assert "(the baseline itself)" not in page


def test_evaluate_labels_follow_the_one_label_rule(tmp_path):
    """Two folders of one instance and kind: the second gets its submission (the rule of
    ``base.names.unique_label``); one declaring a built-in variant's label
    (``Wish512@opt``) never carries it."""
    from ngcc.app import evaluate as _evaluate_app
    from ngcc.library.archive import Folder

    first = Folder(tmp_path / "A" / "Optimized_Implementation" / "Wish512", "A", "optimized")
    second = Folder(tmp_path / "B B" / "Optimized_Implementation" / "Wish512", "B B",
                    "optimized")
    deeper = Folder(tmp_path / "C" / "Optimized_Implementation" / "avx2" / "Wish512", "C",
                    "optimized")
    taken: set[str] = set()
    labels = []
    for folder in (first, second, deeper):
        labels.append(_evaluate_app._label_for("Wish512", folder, taken))
        taken.add(labels[-1])
    assert labels == ["Wish512@opt@A", "Wish512@opt@B-B", "Wish512@opt@avx2"]
    assert _evaluate_app._label_for("Tiny-256", first, {"tiny-256@opt"}) == "Tiny-256@opt@A"


def test_an_instance_header_linked_out_of_its_folder_is_refused_by_name(tmp_path):
    from ngcc.library.header import read_instance_header

    folder = tmp_path / "folder"
    shutil.copytree(TINY, folder)
    outside = tmp_path / "outside.h"
    shutil.move(folder / "CryptHash_AlgorithmInstance.h", outside)
    (folder / "CryptHash_AlgorithmInstance.h").symlink_to(outside)
    with pytest.raises(ngcc.BuildError, match="CryptHash_AlgorithmInstance.h is a symbolic "
                                              "link to %s, outside the folder" % outside):
        read_instance_header(folder)
