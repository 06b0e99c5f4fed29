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
from pathlib import Path

import pytest

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


def _evaluate(archive: Path, run_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", EVALUATE, "evaluate", str(archive), "--run-dir", str(run_dir),
         "--quick", "--lengths", "32", "--kat-files", "2_23", "--no-plots", "--quiet"],
        capture_output=True, text=True, errors="surrogateescape", timeout=300)


def _all_text(run_dir: Path) -> str:
    """Every file of a run directory as text (evidence, logs, pages, libraries' bytes)."""
    return "".join(path.read_bytes().decode("utf-8", "replace")
                   for path in sorted(run_dir.rglob("*")) if path.is_file())


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    return _evaluate(hostile_archive(root), root / "run"), root / "run"


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
