"""Every evidence file of a run directory is checked, and none can stall or crash the
reader: KAT logs against their sha256, FIFOs in place of files, JSON nested 200000
deep, a campaign.json without its jobs. Each reader answers with a difference or a
one-line error, never a traceback or a wait."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _fakerun import make_run

from ngcc.base.errors import CorruptRecordError
from ngcc.evidence import records as _records
from ngcc.evidence.run import load_run
from ngcc.report import write as _write
from ngcc.report.validate import validate


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    path = make_run(tmp_path / "run")
    _write.write_report(load_run(path), plots=False)
    return path


def _ngcc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ngcc", *args], capture_output=True,
                          text=True, timeout=120)


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert done.stderr.startswith("ngcc: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def test_the_fake_run_validates(run_dir: Path):
    assert validate(run_dir).ok


@pytest.mark.parametrize("change", ["delete", "forge"])
def test_a_deleted_or_forged_kat_log_is_a_difference(run_dir: Path, change: str):
    log = run_dir / load_run(run_dir).build.libraries[0].kat.log
    if change == "delete":
        log.unlink()
    else:
        log.write_text("RESULT baseline SM3 PASS\n")
    differences = [str(d) for d in validate(run_dir).differences]
    expected = "missing" if change == "delete" else "its sha256"
    assert any(d.startswith(log.relative_to(run_dir).as_posix()) and expected in d
               for d in differences), differences


def test_a_fifo_for_a_raw_file_is_a_difference_not_a_wait(run_dir: Path):
    raw = sorted((run_dir / "raw").rglob("*.npz"))[0]
    raw.unlink()
    os.mkfifo(raw)
    done = _ngcc("validate", str(run_dir))
    assert done.returncode == 1 and "not a regular file" in done.stderr, done.stderr


def test_a_fifo_for_a_kat_log_is_a_difference_not_a_wait(run_dir: Path):
    log = run_dir / load_run(run_dir).build.libraries[0].kat.log
    log.unlink()
    os.mkfifo(log)
    differences = [str(d) for d in validate(run_dir).differences]
    assert any("not a regular file" in d for d in differences), differences


@pytest.mark.parametrize("command", ["validate", "report", "compare"])
def test_deep_json_is_a_one_line_error(run_dir: Path, command: str):
    (run_dir / "campaign.json").write_bytes(b"[" * 200000)
    args = [command, str(run_dir)] + ([str(run_dir)] if command == "compare" else [])
    assert "nested 200000 deep" in _one_line_error(_ngcc(*args))


def test_deep_json_in_a_record_is_a_difference(run_dir: Path):
    record = sorted((run_dir / "records").rglob("*.json"))[0]
    record.write_bytes(b'{"a": ' * 100000 + b"1" + b"}" * 100000)
    with pytest.raises(CorruptRecordError, match="nested 100000 deep"):
        validate(run_dir)


def test_a_campaign_without_its_jobs_is_corrupt(run_dir: Path):
    data = json.loads((run_dir / "campaign.json").read_text())
    data["jobs"] = []
    (run_dir / "campaign.json").write_text(json.dumps(data))
    with pytest.raises(CorruptRecordError, match=r"jobs.*is empty"):
        _records.load_campaign(run_dir)
    assert "jobs is empty" in _one_line_error(_ngcc("validate", str(run_dir)))


def test_a_campaign_missing_a_planned_job_is_corrupt(run_dir: Path):
    state = _records.load_campaign(run_dir)
    data = json.loads((run_dir / "campaign.json").read_text())
    data["jobs"] = [job.to_json() for job in state.jobs[1:]]
    (run_dir / "campaign.json").write_text(json.dumps(data))
    with pytest.raises(CorruptRecordError, match="lacks 1 planned job"):
        _records.load_campaign(run_dir)
    assert dataclasses.is_dataclass(state)
