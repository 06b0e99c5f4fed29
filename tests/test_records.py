"""The store: atomic writes, schema checks, raw samples, and real runs as fixtures (one of
schema 2, one of schema 1, which is converted on read)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pytest

import ngcc
from ngcc import _model, _records, _stats, _validate
from ngcc._errors import CorruptRecordError, ForeignRunDirError, InvalidNameError, RunDirError
from ngcc._measure import TrialMeasurement

DATA = Path(__file__).resolve().parent / "data"
FIXTURE_RUN = DATA / "run-quick"                  # schema 2
SCHEMA1_RUN = DATA / "run-quick-schema1"          # the same campaign, written by ngcc 0.1.0


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

def test_loading_names_the_file_and_the_defect(tmp_path):
    path = tmp_path / "campaign.json"
    path.write_text("{not json")
    with pytest.raises(CorruptRecordError, match=r"campaign\.json: not valid JSON"):
        _records.load_campaign(tmp_path)
    path.write_text(json.dumps({"schema": "something-else"}))
    with pytest.raises(CorruptRecordError, match=r"schema 'something-else', expected "
                                                 r"'ngcc\.campaign/2'"):
        _records.load_campaign(tmp_path)
    path.write_text(json.dumps({"schema": _model.SCHEMA_CAMPAIGN, "run_id": "x"}))
    with pytest.raises(CorruptRecordError, match=r"campaign\.json: created is missing"):
        _records.load_campaign(tmp_path)
    path.write_text("[1, 2]")
    with pytest.raises(CorruptRecordError, match=r"not a JSON object.*start a new --run-dir"):
        _records.load_campaign(tmp_path)
    (tmp_path / "build.json").write_text("{")
    with pytest.raises(CorruptRecordError, match=r"build\.json.*check the KAT verdicts again"):
        _records.load_build(tmp_path)
    record = tmp_path / "record.json"
    data = json.loads((FIXTURE_RUN / "records/baseline/SM3__hash_32.json").read_text())
    record.write_text(json.dumps({**data, "statistics": 5}))
    with pytest.raises(CorruptRecordError, match=r"record\.json: statistics is 5, not a JSON "
                                                 r"object.*Delete it"):
        _records.load_record(record)


def test_paths_follow_the_layout():
    assert _model.record_relpath("hash-35", "Wish512", 32) == \
        "records/hash-35/Wish512__hash_32.json"
    assert _model.raw_relpath("hash-22", "Pavelor-512@perf", 65536) == \
        "raw/hash-22/Pavelor-512@perf__hash_65536.npz"
    assert _model.kat_log_relpath("hash-34", "WChain-V1-512") == \
        "kat/hash-34/WChain-V1-512.log"
    assert _model.plot_stem_distribution("Wish512.external", 32) == \
        "Wish512.external__hash_32-calls"
    assert _model.page_name("hash-22") == "hash-22.md"
    for bad in ("../x", "a/b", ".hidden"):
        with pytest.raises(InvalidNameError):
            _model.record_relpath("hash-22", bad, 32)
        with pytest.raises(InvalidNameError):
            _model.kat_log_relpath(bad, "X")


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


# ------------------------------------------------------------------------ real runs

@pytest.mark.parametrize("fixture", [FIXTURE_RUN, SCHEMA1_RUN], ids=["schema2", "schema1"])
def test_fixture_run_loads(fixture):
    run = ngcc.load_run(fixture)
    assert run.complete and len(run.records) == len(run.jobs) == 4
    assert {(r.label, r.message_bytes) for r in run.records} == {
        ("WChain-V1-512", 32), ("WChain-V1-512", 1024), ("SM3", 32), ("SM3", 1024)}
    assert [r.message_bytes for r in run.records if r.instance == "SM3"] == [32, 1024]
    assert "jobs done" in repr(run) and "cycles/byte" in repr(run.records[0])
    assert run.record("SM3", 32).kat.gate == "baseline"
    assert run.build is not None and [e.label for e in run.build.libraries] == [
        "WChain-V1-512", "SM3"]


@pytest.mark.parametrize("fixture", [FIXTURE_RUN, SCHEMA1_RUN], ids=["schema2", "schema1"])
def test_fixture_statistics_recompute_from_raw_samples(fixture):
    run = ngcc.load_run(fixture)
    for record in run.records:
        cycles = record.cycles()
        stats = _stats.aggregate(cycles, [t.loop_seconds for t in record.trials],
                                 [t.statistics.counter_rate_ratio for t in record.trials],
                                 record.message_bytes, run.plan.cpu)
        assert stats == record.statistics
        for trial, samples in zip(record.trials, cycles, strict=True):
            assert trial.calls == len(samples)
            assert trial.statistics.mean_cycles == pytest.approx(float(np.mean(samples)))
    assert ngcc.validate(fixture).differences == [
        _validate.Difference("report/%s" % page, "missing; run `ngcc report %s` to write it"
                             % fixture) for page in ("hash-34.md", "baseline.md", "summary.md")]


def test_schema1_run_converts_to_the_same_facts():
    old, new = ngcc.load_run(SCHEMA1_RUN), ngcc.load_run(FIXTURE_RUN)
    trial = old.records[0].trials[0]
    raw = json.loads((SCHEMA1_RUN / old.jobs[0].record).read_text())["trials"][0]
    assert trial.loop_ticks == raw["total_cycles"]
    assert trial.loop_seconds == pytest.approx(raw["total_seconds"], rel=1e-12)
    assert trial.frequency_hz == raw["counter_frequency_hz"]
    assert trial.overhead_min_ticks == raw["overhead_cycles"]
    assert trial.statistics.min_cycles == raw["min_cycles"]
    assert trial.unit == "tsc-ticks" and trial.voluntary_switches is None
    assert old.records[0].implementation.description == ""   # schema 1 did not keep it
    assert [s.at for s in old.campaign.starts] == [old.campaign.created]
    assert type(old.campaign) is type(new.campaign)


def test_a_schema1_run_is_read_but_not_resumed(tmp_path):
    import shutil
    copy = Path(shutil.copytree(SCHEMA1_RUN, tmp_path / "run"))
    with pytest.raises(RunDirError, match=r"schema 1.*ngcc report.*new --run-dir"):
        ngcc.Campaign(["WChain-V1-512", "SM3"], run_dir=copy, quick=True, trials=2,
                      trial_target=0.002, lengths=[32, 1024], progress=False).run()


def test_documented_fields_are_the_model():
    """evidence-format.md names every field of every evidence class, and nothing else
    under its JSON examples' keys goes undocumented."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "evidence-format.md").read_text()
    assert all(schema in doc for schema in _model.SCHEMAS.values())
    for cls in (_model.CampaignState, _model.Plan, _model.PlanLibrary, _model.Start,
                _model.Settings, _model.Job, _model.BuildState, _model.BuildEntry,
                _model.Implementation, _model.KatFacts, _model.Record, _model.JobPlan,
                _model.Trial, _model.TrialStatistics, _model.Statistics, _model.Resources,
                _model.RawRef, _model.Provenance, _model.Environment, _model.Counter):
        for f in dataclasses.fields(cls):
            assert '"%s"' % f.name in doc or "`%s`" % f.name in doc, (
                "%s.%s is not documented" % (cls.__name__, f.name))
    record = json.loads((FIXTURE_RUN / "records/baseline/SM3__hash_32.json").read_text())
    for key in [*record, *record["statistics"], *record["trials"][0],
                *record["environment"]]:
        assert '"%s"' % key in doc or "`%s`" % key in doc, "field %r is not documented" % key


def test_trials_keep_every_fact_of_a_measurement():
    """Every fact a runner reports (but the cycles, which go to the raw file) has its
    field in a record's trial, so no fact is lost on the way to the evidence."""
    measured = {f.name for f in dataclasses.fields(TrialMeasurement)} - {"cycles"}
    assert measured <= {f.name for f in dataclasses.fields(_model.Trial)}


def test_kat_verdicts_are_those_of_ngcc_kat():
    assert _model.KAT_VERDICTS == ngcc.kat.VERDICTS


def test_load_run_of_a_foreign_folder(tmp_path):
    with pytest.raises(ForeignRunDirError, match=r"no campaign\.json"):
        ngcc.load_run(tmp_path)
