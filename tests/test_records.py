"""The store: atomic writes, schema checks, raw samples, and real runs as fixtures (one of
schema 2, one of schema 1, which is converted on read)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import ngcc
from ngcc.base import files as _files
from ngcc.base.errors import CorruptRecordError, ForeignRunDirError, InvalidNameError, RunDirError
from ngcc.cli.main import main
from ngcc.evidence import model as _model
from ngcc.evidence import records as _records
from ngcc.evidence.model import TrialMeasurement
from ngcc.stats import trials as _stats

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
    assert _files.remove_temp_files(tmp_path) == [leftover]
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
    assert sha == _files.sha256_file(path)
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
    assert "jobs done" in repr(run) and "ticks/byte" in repr(run.records[0])
    assert run.record("SM3", 32).kat.gate == "baseline"
    assert run.build is not None and [e.label for e in run.build.libraries] == [
        "WChain-V1-512", "SM3"]


@pytest.mark.parametrize("fixture", [FIXTURE_RUN, SCHEMA1_RUN], ids=["schema2", "schema1"])
def test_fixture_statistics_recompute_from_raw_samples(fixture):
    run = ngcc.load_run(fixture)
    for record in run.records:
        cycles = record.cycles()
        assert record.statistics.version == 1  # written by ngcc 0.1: read as it was
        stats = _stats.aggregate_trials(record.trials, cycles, record.message_bytes,
                                        run.plan.cpu, record.statistics.version)
        assert stats == record.statistics
        for trial, samples in zip(record.trials, cycles, strict=True):
            assert trial.calls == len(samples)
            assert trial.statistics.mean_cycles == pytest.approx(float(np.mean(samples)))
    # the pages stored beside the evidence (written with --no-plots: no plot is kept, so
    # none is linked) regenerate byte for byte; those of the schema-1 run from the
    # converted evidence
    result = ngcc.validate(fixture)
    assert result.ok, result.differences
    assert result.records_checked == 4 and result.pages_checked == 5  # + field.md


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


# ------------------------------------------------------------------------ corrupt run dirs

WCHAIN = "records/hash-34/WChain-V1-512__hash_32.json"
WCHAIN_RAW = "raw/hash-34/WChain-V1-512__hash_32.npz"
CAMPAIGN_WORDS = "start a new --run-dir"
BUILD_WORDS = "check the KAT verdicts again"
RECORD_WORDS = "Delete it to measure that job again"
RAW_WORDS = "Delete its record to measure that job again"


def _json_edit(relpath, change):
    def damage(run_dir):
        path = run_dir / relpath
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))
    return damage


def _replace_by_directory(relpath):
    def damage(run_dir):
        (run_dir / relpath).unlink()
        (run_dir / relpath).mkdir()
    return damage


def _write(relpath, data: bytes):
    def damage(run_dir):
        (run_dir / relpath).write_bytes(data)
    return damage


def _escape_by_symlink(run_dir):
    outside = run_dir.parent / "outside"
    shutil.copytree(run_dir / "records/hash-34", outside)
    shutil.rmtree(run_dir / "records/hash-34")
    (run_dir / "records/hash-34").symlink_to(outside)


def _float_samples(run_dir):
    path = run_dir / WCHAIN_RAW
    np.savez(path, schema=np.array(_model.SCHEMA_RAW), message_bytes=np.array(32),
             trial_0=np.arange(3, dtype=np.float64))
    _json_edit(WCHAIN, lambda d: d["raw"].__setitem__("sha256", _files.sha256_file(path)))(
        run_dir)


# name: (damage, file named in the message, words of the defect, words of the remedy)
CORRUPT_JSON = {
    "campaign truncated": (_write("campaign.json", b'{"schema": "ngcc.campaign/2", "ru'),
                           "campaign.json", "not valid JSON", CAMPAIGN_WORDS),
    "campaign garbled": (_write("campaign.json", b"\xff\xfe\x00garbage\x81"),
                         "campaign.json", "not UTF-8", CAMPAIGN_WORDS),
    "campaign not an object": (_write("campaign.json", b"[1, 2, 3]"),
                               "campaign.json", "not a JSON object", CAMPAIGN_WORDS),
    "campaign is a directory": (_replace_by_directory("campaign.json"),
                                "campaign.json", "is a directory", CAMPAIGN_WORDS),
    "campaign wrong type": (_json_edit("campaign.json", lambda d: d["jobs"][0].__setitem__(
        "message_bytes", "32")), "campaign.json", "jobs[0].message_bytes is '32', not an int",
        CAMPAIGN_WORDS),
    "campaign NaN": (_json_edit("campaign.json", lambda d: d["plan"].__setitem__(
        "trial_target_seconds", float("nan"))), "campaign.json", "not a finite number",
        CAMPAIGN_WORDS),
    "campaign job path outside": (_json_edit("campaign.json", lambda d: d["jobs"][0].__setitem__(
        "record", "../../../etc/passwd")), "campaign.json", "jobs[0].record is '../../../etc",
        CAMPAIGN_WORDS),
    "build truncated": (_write("build.json", b'{"schema": "ngcc.build/2", "libr'),
                        "build.json", "not valid JSON", BUILD_WORDS),
    "build wrong type": (_json_edit("build.json", lambda d: d["libraries"][0]["kat"].__setitem__(
        "verdict", 5)), "build.json", "libraries[0].kat.verdict is 5, not a string",
        BUILD_WORDS),
    "build is a directory": (_replace_by_directory("build.json"), "build.json",
                             "is a directory", BUILD_WORDS),
    "record truncated": (_write(WCHAIN, b'{"schema": "ngcc.record/2", "trials": ['),
                         WCHAIN, "not valid JSON", RECORD_WORDS),
    "record garbled": (_write(WCHAIN, bytes(range(256))), WCHAIN, "not valid JSON",
                       RECORD_WORDS),
    "record wrong type": (_json_edit(WCHAIN, lambda d: d["trials"][0].__setitem__("cpu", "one")),
                          WCHAIN, "trials[0].cpu is 'one', not an integer", RECORD_WORDS),
    "record unknown field": (_json_edit(WCHAIN, lambda d: d.__setitem__("extra", 1)), WCHAIN,
                             "extra is not a field", RECORD_WORDS),
    "record is a directory": (_replace_by_directory(WCHAIN), WCHAIN, "is a directory",
                              RECORD_WORDS),
    "record missing": (lambda d: (d / WCHAIN).unlink(), WCHAIN, "cannot be read",
                       RECORD_WORDS),
    "record raw path outside": (_json_edit(WCHAIN, lambda d: d["raw"].__setitem__(
        "path", "../../../outside.npz")), WCHAIN, "raw.path is '../../../outside.npz'",
        RECORD_WORDS),
    "record KAT log absolute": (_json_edit(WCHAIN, lambda d: d["kat"].__setitem__(
        "log", "/etc/passwd")), WCHAIN, "kat.log is '/etc/passwd'", RECORD_WORDS),
    "record of another job": (_write(WCHAIN, (FIXTURE_RUN / "records/baseline/SM3__hash_32.json")
                                     .read_bytes()), WCHAIN, "not of its job", RECORD_WORDS),
    "records behind a symlink": (_escape_by_symlink, "WChain-V1-512__hash_32.json",
                                 "outside", RECORD_WORDS),
}
CORRUPT_RAW = {
    "raw truncated": (_write(WCHAIN_RAW, b"PK\x03\x04 truncated"), "sha256 differs"),
    "raw is a directory": (_replace_by_directory(WCHAIN_RAW), "cannot be read"),
    "raw missing": (lambda d: (d / WCHAIN_RAW).unlink(), "cannot be read"),
    "raw float samples": (_float_samples, "float64 array"),
}


def _damaged(tmp_path, damage):
    run_dir = Path(shutil.copytree(FIXTURE_RUN, tmp_path / "run"))
    damage(run_dir)
    return run_dir


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err
    [line] = err.strip().splitlines()
    assert line.startswith("ngcc: error: ")
    return line


@pytest.mark.parametrize("case", list(CORRUPT_JSON))
def test_a_corrupt_run_directory_is_a_clear_error(tmp_path, case, capsys):
    """Every way a run directory's JSON can be broken ends in one error naming the file,
    the defect and the remedy: for the API, ngcc report and ngcc validate alike."""
    damage, named, defect, remedy = CORRUPT_JSON[case]
    run_dir = _damaged(tmp_path, damage)
    with pytest.raises(RunDirError) as caught:
        ngcc.load_run(run_dir)
    message = str(caught.value)
    assert named in message and defect in message and remedy in message, message
    for command in (["report", str(run_dir), "--no-plots"], ["validate", str(run_dir)]):
        assert main(command) == 1
        line = _one_error_line(capsys.readouterr().err)
        assert named in line and defect in line and remedy in line


@pytest.mark.parametrize("case", list(CORRUPT_RAW))
def test_corrupt_raw_samples_are_named(tmp_path, case, capsys):
    damage, defect = CORRUPT_RAW[case]
    run_dir = _damaged(tmp_path, damage)
    before = {p.name: p.stat().st_mtime_ns for p in (run_dir / "report").iterdir()}
    assert main(["report", str(run_dir)]) == 1           # before anything is written
    line = _one_error_line(capsys.readouterr().err)
    assert WCHAIN_RAW in line and defect in line and RAW_WORDS in line
    assert {p.name: p.stat().st_mtime_ns for p in (run_dir / "report").iterdir()} == before
    assert main(["validate", str(run_dir)]) == 1
    err = capsys.readouterr().err
    assert "ngcc: difference: %s: " % WCHAIN_RAW in err and defect in err
    assert "Traceback" not in err
