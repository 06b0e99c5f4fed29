"""The evidence files: atomic writes, schema checks, raw samples, and a real run as fixture."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import ngcc
from ngcc import _records, _stats
from ngcc._errors import CorruptRecordError, ForeignRunDirError

FIXTURE_RUN = Path(__file__).resolve().parent / "data" / "run-quick"


# ------------------------------------------------------------------------ atomic writes

def test_write_json_replaces_the_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "sub" / "campaign.json"
    _records.write_json(path, {"a": 1})
    _records.write_json(path, {"a": 2, "b": [1.5, None]})
    assert json.loads(path.read_text()) == {"a": 2, "b": [1.5, None]}
    assert [p.name for p in path.parent.iterdir()] == ["campaign.json"]


def test_an_interrupted_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "record.json"
    _records.write_json(path, {"version": "old"})

    def killed(src, dst):
        raise KeyboardInterrupt  # Ctrl-C between fsync and rename

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        _records.write_json(path, {"version": "new"})
    monkeypatch.undo()
    assert json.loads(path.read_text()) == {"version": "old"}
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]


def test_leftover_temp_files_are_removed(tmp_path):
    (tmp_path / "records" / "x").mkdir(parents=True)
    leftover = tmp_path / "records" / "x" / ".SM3__hash_32.json.tmp-4242"
    leftover.write_text('{"half')
    keep = tmp_path / "records" / "x" / "SM3__hash_32.json"
    keep.write_text("{}")
    assert _records.remove_temp_files(tmp_path) == [leftover]
    assert keep.exists() and not leftover.exists()


def test_dumps_json_refuses_nan():
    with pytest.raises(ValueError):
        _records.dumps_json({"mean_cycles": float("nan")})


# ------------------------------------------------------------------------ loading

def test_load_json_names_the_file_and_the_defect(tmp_path):
    path = tmp_path / "campaign.json"
    path.write_text("{not json")
    with pytest.raises(CorruptRecordError, match=r"campaign\.json: not valid JSON"):
        _records.load_campaign(tmp_path)
    path.write_text(json.dumps({"schema": "something-else"}))
    with pytest.raises(CorruptRecordError, match=r"schema 'something-else', expected "
                                                 r"'ngcc\.campaign/1'"):
        _records.load_campaign(tmp_path)
    path.write_text(json.dumps({"schema": _records.SCHEMA_CAMPAIGN, "run_id": "x"}))
    with pytest.raises(CorruptRecordError, match=r"missing field.*plan"):
        _records.load_campaign(tmp_path)
    path.write_text("[1, 2]")
    with pytest.raises(CorruptRecordError, match=r"not a JSON object.*start a new --run-dir"):
        _records.load_campaign(tmp_path)
    (tmp_path / "build.json").write_text("{")
    with pytest.raises(CorruptRecordError, match=r"build\.json.*check the KAT verdicts again"):
        _records.load_build(tmp_path)
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"schema": _records.SCHEMA_RECORD, "statistics": 5,
                                  **{key: {} for key in _records._REQUIRED[_records.SCHEMA_RECORD]
                                     if key != "statistics"}}))
    with pytest.raises(CorruptRecordError, match=r"record\.json: statistics is not a JSON object"):
        _records.load_record(record, tmp_path)


def test_paths_follow_the_layout():
    assert _records.record_relpath("hash-35", "Wish512", 32) == \
        "records/hash-35/Wish512__hash_32.json"
    assert _records.raw_relpath("hash-22", "Pavelor-512", 65536) == \
        "raw/hash-22/Pavelor-512__hash_65536.npz"
    assert _records.kat_log_relpath("hash-34", "WChain-V1-512") == \
        "kat/hash-34/WChain-V1-512.log"
    assert _records.file_stem("Wish512", "ref") == "Wish512"
    assert _records.file_stem("Wish512", "opt") == "Wish512.opt"


# ------------------------------------------------------------------------ raw samples

def test_raw_round_trip_is_exact(tmp_path):
    trials = [np.array([1, 2**63 + 5, 7], dtype=np.uint64), np.arange(1000, dtype=np.uint64)]
    path = tmp_path / "raw.npz"
    sha = _records.dump_raw(path, 32, trials)
    assert sha == _records.sha256_file(path)
    loaded = _records.load_raw(path, sha)
    assert len(loaded) == 2
    for got, want in zip(loaded, trials, strict=True):
        assert got.dtype == np.uint64 and np.array_equal(got, want)


def test_raw_with_another_digest_or_schema_is_refused(tmp_path):
    path = tmp_path / "raw.npz"
    _records.dump_raw(path, 32, [np.arange(5, dtype=np.uint64)])
    with pytest.raises(CorruptRecordError, match="sha256 differs"):
        _records.load_raw(path, "0" * 64)
    np.savez(path, schema=np.array("other/1"), trial_0=np.arange(3, dtype=np.uint64))
    with pytest.raises(CorruptRecordError, match="schema 'other/1'"):
        _records.load_raw(path)
    path.write_bytes(b"not a zip")
    with pytest.raises(CorruptRecordError, match=r"not a valid \.npz"):
        _records.load_raw(path)
    _records.dump_raw(path, 32, [np.arange(5, dtype=np.uint64)])
    path.write_bytes(path.read_bytes()[:100])  # truncated: zipfile's own BadZipFile
    with pytest.raises(CorruptRecordError, match=r"not a valid \.npz"):
        _records.load_raw(path)
    np.save(tmp_path / "bare.npy", np.arange(3, dtype=np.uint64))
    with pytest.raises(CorruptRecordError, match=r"not an \.npz archive"):
        _records.load_raw(tmp_path / "bare.npy")


# ------------------------------------------------------------------------ a real run

def test_fixture_run_loads():
    run = ngcc.load_run(FIXTURE_RUN)
    assert run.complete and len(run.records) == len(run.jobs) == 4
    assert {(r.instance, r.message_bytes) for r in run.records} == {
        ("WChain-V1-512", 32), ("WChain-V1-512", 1024), ("SM3", 32), ("SM3", 1024)}
    assert [r.message_bytes for r in run.records if r.instance == "SM3"] == [32, 1024]
    assert "jobs done" in repr(run) and "cycles/byte" in repr(run.records[0])


def test_fixture_statistics_recompute_from_raw_samples():
    run = ngcc.load_run(FIXTURE_RUN)
    for record in run.records:
        cycles = record.cycles()
        stats = _stats.aggregate(cycles, [t["total_seconds"] for t in record.trials],
                                 [t["counter_rate_ratio"] for t in record.trials],
                                 record.message_bytes, run.plan["cpu"])
        assert stats == record.statistics
        for trial, samples in zip(record.trials, cycles, strict=True):
            assert trial["calls"] == len(samples)
            assert trial["mean_cycles"] == pytest.approx(float(np.mean(samples)))


def test_fixture_records_carry_the_documented_fields():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "evidence-format.md").read_text()
    run = ngcc.load_run(FIXTURE_RUN)
    record = run.records[0].data
    for key in record:
        assert '"%s"' % key in doc, "record field %r is not documented" % key
    for key in record["statistics"]:
        assert "`%s`" % key in doc, "statistic %r is not documented" % key
    for key in record["trials"][0]:
        assert '"%s"' % key in doc, "trial field %r is not documented" % key
    for key in record["environment"]:
        assert '"%s"' % key in doc, "environment field %r is not documented" % key


def test_load_run_of_a_foreign_folder(tmp_path):
    with pytest.raises(ForeignRunDirError, match=r"no campaign\.json"):
        ngcc.load_run(tmp_path)
