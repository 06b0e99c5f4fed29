"""Bad input of issue 45, each refused with a clear error or given the right behaviour:
one archive path given as a string, a folder whose header names an invalid instance
(a row; the rest built), two folders declaring one instance (neither keeps the bare
label), a FIFO for the run directory's lock, an object array to hash, an unknown
candidate id, a sidecar field of the wrong type."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import ngcc
from ngcc.app import dryrun as _dryrun
from ngcc.app import evaluate as _evaluate
from ngcc.base.errors import InvalidNameError, LibraryError
from ngcc.library.candidates import UnknownCandidateError
from ngcc.measure.locks import RUN_DIR_LOCK, hold_run_dir

TINY = (Path(__file__).resolve().parent / "fixtures" / "archive" / "Tiny Hash"
        / "Implementations and Test_Vectors" / "API_CryptHash" / "Reference_Implementation"
        / "TinyHash-256")


def _submission(archive: Path, submission: str, declared: str) -> Path:
    folder = archive / submission / "Reference_Implementation" / "TinyHash-256"
    shutil.copytree(TINY, folder)
    header = folder / "CryptHash_AlgorithmInstance.h"
    header.write_text(header.read_text().replace('"TinyHash-256"', '"%s"' % declared))
    return folder


def test_one_archive_given_as_a_string_is_one_path(tmp_path, monkeypatch):
    from _fakes import FakeRunner, still_dry_run

    still_dry_run(monkeypatch)  # what the plan states of the host, between the two plans
    archive = tmp_path / "archive"
    _submission(archive, "Tiny", "TinyHash-256")
    lines = _dryrun.plan_lines(str(archive), runner=FakeRunner())  # not a walk from "/"
    assert lines[0] == "1 implementation folder(s) found in 1 archive(s):"
    assert _dryrun.plan_lines(archive, runner=FakeRunner()) == lines


def test_a_header_naming_an_invalid_instance_is_a_row_and_the_rest_is_built(tmp_path):
    archive = tmp_path / "archive"
    _submission(archive, "A Hostile", "<img src=x onerror=alert(1)>")
    _submission(archive, "B Honest", "TinyHash-256")
    evaluation = _evaluate.build_all(str(archive), tmp_path / "run")
    rows = {row.submission: row for row in evaluation.folders}
    assert rows["A Hostile"].status == "build failed"
    assert "'<img src=x onerror=alert(1)>' is not a valid name" in str(rows["A Hostile"].reason)
    assert "archive/A Hostile/Reference_Implementation/TinyHash-256" in str(
        rows["A Hostile"].reason)
    assert rows["B Honest"].status == "built" and rows["B Honest"].label == "TinyHash-256@ref"


def test_two_folders_declaring_one_instance_neither_keeps_the_bare_label(tmp_path):
    """The impostor sorts first (``Aaa``): it does not take ``TinyHash-256@ref`` from
    the genuine submission; each carries its folder, its library moved along."""
    archive = tmp_path / "archive"
    _submission(archive, "Aaa Impostor", "TinyHash-256")
    _submission(archive, "Tiny Hash", "TinyHash-256")
    run_dir = tmp_path / "run"
    evaluation = _evaluate.build_all([archive], run_dir)
    labels = {row.submission: row.label for row in evaluation.folders}
    assert labels == {"Aaa Impostor": "TinyHash-256@ref@Aaa-Impostor",
                      "Tiny Hash": "TinyHash-256@ref@Tiny-Hash"}
    for row in evaluation.folders:
        assert (run_dir / str(row.library)).is_file(), row.library
    assert not (run_dir / "builds" / "TinyHash-256@ref").exists()
    stored = json.loads((run_dir / "evaluation.json").read_text())
    assert sorted(f["label"] for f in stored["folders"]) == sorted(labels.values())
    again = _evaluate.build_all([archive], run_dir)  # resumed: the same labels, kept
    assert {row.submission: row.label for row in again.folders} == labels


def test_a_fifo_as_the_run_directorys_lock_is_named(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "campaign.json").write_text("{}")  # a run directory: it may be held
    os.mkfifo(run_dir / RUN_DIR_LOCK)
    with pytest.raises(OSError, match="the lock file %s is not a regular file" % (
            run_dir / RUN_DIR_LOCK)), hold_run_dir(run_dir):
        pass


def test_an_object_array_is_refused_not_hashed_as_pointers():
    objects = np.array([b"abc", 1], dtype=object)
    with pytest.raises(TypeError, match="array of Python objects"):
        ngcc.hash("SM3", objects)
    with pytest.raises(TypeError, match="array of Python objects"):
        ngcc.time_calls("SM3", 16, message=objects, calls=10)
    assert ngcc.hash("SM3", np.frombuffer(b"abc", dtype=np.uint8)) == ngcc.hash("SM3", b"abc")


def test_an_unknown_candidate_id_is_refused_whatever_the_instance():
    with pytest.raises(UnknownCandidateError, match="unknown candidate id 'hash-99'"):
        ngcc.instance("SM3", candidate="hash-99")
    assert isinstance(UnknownCandidateError("x"), InvalidNameError)
    assert ngcc.instance("SM3", candidate="baseline").name == "SM3"


@pytest.mark.parametrize(("field", "value", "said"), [
    ("digest_bits", "256", "field 'digest_bits' is str '256', not an integer"),
    ("digest_bits", 256.0, "field 'digest_bits' is float 256.0, not an integer"),
    ("digest_bits", True, "field 'digest_bits' is bool True, not an integer"),
    ("digest_bits", 255, "field 'digest_bits' is 255, not a positive whole number of bytes"),
    ("name", 7, "field 'name' is int 7, not a string"),
    ("cflags", ["-O2", 3], "field 'cflags' is list ['-O2', 3], not a list of strings"),
])
def test_a_sidecar_field_of_the_wrong_type_is_refused_by_name(tmp_path, field, value, said):
    built = ngcc.build(TINY, out_dir=tmp_path / "out")
    library = built.instance.library
    sidecar = library.with_name(library.name + ".json")
    meta = json.loads(sidecar.read_text())
    meta[field] = value
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(LibraryError, match="corrupt sidecar") as refused:
        ngcc.instance(str(library))
    assert said in str(refused.value)
