"""Campaigns: the plan rule, one quick real campaign end to end, resumption, refusals, the
KAT gate, and children that crash or hang.

The orchestration (plan, gate, resume, refusal, --target-ci, progress, failed jobs,
Ctrl-C) runs with the fakes of ``tests/_fakes.py`` in milliseconds; a few tests keep the
real runner (one shared quick campaign, kill -9 and resume, a hanging child). Timing
figures are never asserted (shared, noisy machines)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _fakes import FREQUENCY_HZ, CrashingRunner, FakeKat, FakeRunner, cost_cycles, fixed_host

import ngcc
from ngcc.base import files as _files
from ngcc.base import format as _format
from ngcc.base.errors import (
    ChildError,
    CorruptRecordError,
    ForeignRunDirError,
    HostError,
    InvalidNameError,
    KatGateError,
    MeasurementWarning,
    PlanMismatchError,
)
from ngcc.campaign.conditions import CHILD_STARTUP_SECONDS, slow_chance
from ngcc.campaign.cost import expected_replacements, warm_call_estimates
from ngcc.campaign.failures import STOP_AFTER_FAILURES
from ngcc.driver import child as _child
from ngcc.driver import kat
from ngcc.evidence import records as _records
from ngcc.evidence.model import Record, Statistics
from ngcc.measure import executors as _executors
from ngcc.measure import host as _host
from ngcc.measure import job as _jobs
from ngcc.measure import locks as _locks
from ngcc.measure import plan as _plan
from ngcc.measure.plan import calls_per_trial, warmup_calls
from ngcc.report import pages as _report
from ngcc.report import write as _write
from ngcc.stats import intervals as _intervals
from ngcc.stats import trials as _stats
from ngcc.stats.groups import status_counts

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")  # busy test hosts

REPO = Path(__file__).resolve().parents[1]
#: A tiny plan: enough to exercise every phase in seconds.
TINY = {"quick": True, "trials": 2, "trial_target": 0.002, "lengths": [32, 1024],
        "progress": False}


# ------------------------------------------------------------------------ the plan rule

# Calls per trial published by the independent harness (seeds: hash-22, hash-34, hash-35).
# The harness's t1 is not printed exactly; any t1 in [1/n, 1/(n-1)) gives n calls when
# the trial target is 1 s, so t1 = 1/(n - 0.5) stands for the harness's measurement.
SEED_COUNTS = [14427, 8515, 2506, 1289, 652, 166, 10490, 6039, 1700, 866, 439, 110, 12910,
               5471, 3096, 852, 435, 218, 56, 17445, 4297, 18333, 10203, 2744, 6459, 2204, 750,
               401, 105, 54, 27, 2557, 1272, 509, 283, 78, 40, 21]


@pytest.mark.parametrize("calls", SEED_COUNTS)
def test_plan_rule_reproduces_the_harness_counts(calls):
    assert calls_per_trial(1 / (calls - 0.5)) == calls


def test_plan_rule_published_examples():
    assert calls_per_trial(69.316e-6) == 14427     # "t1 = 69.3 µs → 14427 calls per trial"
    assert calls_per_trial(0.149) == 20             # Wish512 at 64 KiB: ceil(6.7) → 20
    assert calls_per_trial(0.198) == 20             # Wish1024 at 64 KiB
    assert calls_per_trial(49e-6) == 20000          # fast calls are capped
    assert calls_per_trial(1e-9) == 20000


def test_plan_rule_budget_cap():
    # 5 · 20 · 10 s = 1000 s > 900 s: floor(900 / (5 · 10)) = 18 calls.
    assert calls_per_trial(10.0) == 18
    assert calls_per_trial(200.0) == 1              # never fewer than one call
    assert calls_per_trial(0.01, trial_target=1.0, op_budget=2.0, trials=5) == 40
    assert calls_per_trial(0.01, trial_target=1.0, op_budget=900.0, trials=5) == 100


def test_warmup_rule():
    assert warmup_calls(69.3e-6) == 3
    assert warmup_calls(0.0499) == 3
    assert warmup_calls(0.05) == 1
    assert warmup_calls(0.149) == 1
    assert warmup_calls(4.99) == 1
    assert warmup_calls(5.0) == 0


# ------------------------------------------------------------------------ end to end

@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One tiny campaign on a candidate instance and the SM3 baseline, shared by tests."""
    run_dir = tmp_path_factory.mktemp("campaign") / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementWarning)
        run = ngcc.Campaign(["WChain-V1-512", "SM3"], run_dir=run_dir, **TINY).run()
    return run


def test_quick_campaign_writes_the_run_directory(quick_run):
    path = quick_run.path
    assert (path / "campaign.json").is_file() and (path / "build.json").is_file()
    assert (path / "kat/hash-34/WChain-V1-512.log").is_file()
    assert (path / "kat/baseline/SM3.log").is_file()
    for stem, candidate in (("WChain-V1-512", "hash-34"), ("SM3", "baseline")):
        for n in (32, 1024):
            assert (path / ("records/%s/%s__hash_%d.json" % (candidate, stem, n))).is_file()
            assert (path / ("raw/%s/%s__hash_%d.npz" % (candidate, stem, n))).is_file()
    assert not list(path.rglob(".*.tmp-*"))
    assert quick_run.complete and not quick_run.failed_jobs
    assert quick_run.campaign.finished is not None
    assert [job.status for job in quick_run.jobs] == ["done"] * 4


def test_quick_campaign_records_follow_the_plan(quick_run):
    for record in quick_run.records:
        plan, stats = record.plan, record.statistics
        assert plan.calls_per_trial == calls_per_trial(
            plan.t1_seconds, 0.002, _plan.QUICK_OP_BUDGET, 2)
        assert plan.warmup_calls == warmup_calls(plan.t1_seconds)
        # 2 planned trials; on a host that switches speed, up to 2 more replace trials of
        # its slow state (more than 25 % above the fastest), and the job stops once 2 are
        # not; the figure leaves out those more than 10 % above, replaced or not
        figures = [t.statistics.cpu_time_ticks for t in record.trials]
        slow = _stats.speed_states([float(f or 0.0) for f in figures])
        assert 2 <= stats.trials <= 4 and len(record.trials) == stats.trials
        assert stats.trials - len(slow) >= 2 or stats.trials == 4
        assert set(slow) <= set(stats.left_out_trials or ())
        assert stats.calls == stats.trials * plan.calls_per_trial
        assert all(t.cpu == quick_run.plan.cpu for t in record.trials)
        assert all(t.baseline_rss_kib <= t.peak_rss_kib for t in record.trials)
        resources = record.resources
        assert resources.peak_rss_kib == max(t.peak_rss_kib for t in record.trials)
        assert resources.elf_image_bytes > 0


def test_quick_campaign_statistics_match_the_raw_samples(quick_run):
    for record in quick_run.records:
        cycles = record.cycles()
        assert tuple(len(c) for c in cycles) == record.raw.calls_per_trial
        assert all(c.dtype == np.uint64 for c in cycles)
        recomputed = _stats.aggregate_trials(record.trials, cycles, record.message_bytes,
                                             quick_run.plan.cpu)
        assert recomputed == record.statistics
        assert record.statistics.cycles_per_byte == pytest.approx(
            record.statistics.figure.ticks / record.message_bytes)  # the leading figure's


def test_quick_campaign_kat_gate_and_environment(quick_run):
    wchain = quick_run.record("WChain-V1-512", 32)
    assert wchain.kat.verdict == "PASS" and not wchain.kat.timed_without_pass
    assert wchain.kat.gate == "pass"
    sm3 = quick_run.record("SM3", 1024)
    assert sm3.kat.verdict == "NOKAT" and sm3.kat.gate == "baseline"
    assert not sm3.kat.timed_without_pass
    env = quick_run.environment
    assert env.cpu == quick_run.plan.cpu and env.ngcc_version == ngcc.__version__
    assert env.counter is not None and env.counter.frequency_hz > 0
    assert all(record.environment == env for record in quick_run.records)
    # the implementation timed, from the registry, in build.json and every record
    builtin = ngcc.instance("WChain-V1-512")
    assert wchain.implementation.description == builtin.description != ""
    assert wchain.implementation.library == str(builtin.library)
    assert wchain.implementation.cflags == builtin.cflags
    assert wchain.provenance.runner == "ngcc.driver.child.DriverRunner"
    assert quick_run.campaign.load_average_end is not None
    build = {e.instance: e for e in quick_run.build_entries}
    assert build["WChain-V1-512"].implementation.library_sha256 == _files.sha256_file(
        ngcc.instance("WChain-V1-512").library)


def test_load_run_reads_back_the_same_records(quick_run):
    again = ngcc.load_run(quick_run.path)
    assert [r.to_json() for r in again.records] == [r.to_json() for r in quick_run.records]
    assert again.records == quick_run.records
    with pytest.raises(KeyError, match="SM3 at 64 bytes"):
        again.record("SM3", 64)


def test_rerun_of_a_finished_campaign_measures_nothing(quick_run, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(quick_run.path, copy)
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*.json") if "records" in p.parts}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementWarning)
        run = ngcc.Campaign(["WChain-V1-512", "SM3"], run_dir=copy, **TINY).run()
    assert {p: p.stat().st_mtime_ns for p in before} == before
    assert len(run.campaign.starts) == 2 and run.complete


def test_fresh_campaign_validates_and_tampering_is_found(quick_run, tmp_path):
    from ngcc.report.validate import validate
    run_dir = Path(shutil.copytree(quick_run.path, tmp_path / "run"))
    ngcc.load_run(run_dir).report(plots=False)
    result = validate(run_dir)
    assert result.ok, result.differences
    assert result.records_checked == 4
    record = "records/hash-34/WChain-V1-512__hash_32.json"
    data = json.loads((run_dir / record).read_text())
    data["statistics"]["p95_cycles"] *= 0.9
    _records.write_json(run_dir / record, data)
    assert {d.file for d in validate(run_dir).differences} == {record}


# ------------------------------------------------------------------------ refusals

def test_a_different_plan_is_refused(quick_run):
    before = (quick_run.path / "campaign.json").read_bytes()
    with pytest.raises(PlanMismatchError) as caught:
        ngcc.Campaign(["WChain-V1-512", "SM3"], run_dir=quick_run.path,
                      **{**TINY, "trials": 3}).run()
    message = str(caught.value)
    assert "trials: 2 in the run, 3 asked" in message and "--run-dir" in message
    with pytest.raises(PlanMismatchError, match="libraries: WChain-V1-512"):
        ngcc.Campaign(["SM3"], run_dir=quick_run.path, **TINY).run()
    assert (quick_run.path / "campaign.json").read_bytes() == before


def test_a_library_that_moved_is_named_with_the_field_that_differs(tmp_path):
    """The same library (label and sha256) at another path: the message names the path,
    not two equal sha256 prefixes."""
    from dataclasses import replace

    from ngcc.measure.plan import plan_differences

    plan = ngcc.Campaign(["SM3"], run_dir=tmp_path / "run", **TINY).plan
    moved = replace(plan, libraries=tuple(replace(v, library="/elsewhere/SM3.so")
                                          for v in plan.libraries))
    assert plan_differences(plan, moved) == [
        "libraries: SM3's library %r in the run, '/elsewhere/SM3.so' asked"
        % plan.libraries[0].library]


def test_a_foreign_directory_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("my notes\n")
    with pytest.raises(ForeignRunDirError, match="not an ngcc run directory"):
        ngcc.Campaign(["SM3"], run_dir=tmp_path, **TINY).run()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    with pytest.raises(ForeignRunDirError):
        ngcc.load_run(tmp_path)


def _copy_run(quick_run, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(quick_run.path, copy)
    return copy


def test_strict_refuses_an_unfixed_host_before_writing(tmp_path, monkeypatch):
    real = _host.fingerprint

    def powersave(cpu=None):
        return replace(real(cpu), governor="powersave")

    monkeypatch.setattr(_host, "fingerprint", powersave)
    with pytest.raises(HostError, match="'powersave' cpufreq governor"):
        ngcc.Campaign(["SM3"], run_dir=tmp_path / "run", strict=True, **TINY).run()
    assert not (tmp_path / "run").exists()


def test_instance_selection():
    named = ngcc.Campaign(["pseudoXOF-512", "SM3", "sm3"], candidate="hash-34", **TINY)
    assert [i.name for i in named.instances] == ["WChain-V1-512", "WChain-V2-1024",
                                                 "pseudoXOF-512", "SM3"]
    everything = ngcc.Campaign(all_instances=True, **TINY)
    assert [i.name for i in everything.instances] == [i.name for i in ngcc.instances()]
    with pytest.raises(ngcc.NgccError, match="unknown --candidate 'hash-99'"):
        ngcc.Campaign(candidate="hash-99", **TINY)
    with pytest.raises(ngcc.NothingToMeasureError, match="hash-14 has no built-in instance"):
        ngcc.Campaign(candidate="hash-14", **TINY)
    with pytest.raises(ngcc.NothingToMeasureError, match="no instance to measure"):
        ngcc.Campaign([], **TINY)
    with pytest.raises(ValueError, match="positive"):
        ngcc.Campaign(["SM3"], **{**TINY, "lengths": [0]})
    with pytest.raises(ValueError, match="trials must be a positive whole number, got 0"):
        ngcc.Campaign(["SM3"], **{**TINY, "trials": 0})
    with pytest.raises(ValueError, match="op_budget must be a positive, finite number of seconds"):
        ngcc.Campaign(["SM3"], op_budget=-1.0, **TINY)


def test_unknown_kat_file_is_refused_before_the_run_directory(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(ValueError, match="unknown KAT file 'bogus'"):
        ngcc.Campaign(["SM3"], kat_files=["2_12", "bogus"], run_dir=run_dir, progress=False)
    assert not run_dir.exists()


def test_unavailable_cpu_is_refused():
    with pytest.raises(ValueError, match="does not exist"):  # more in tests/test_locks.py
        ngcc.Campaign(["SM3"], cpu=max(os.sched_getaffinity(0)) + 1000, **TINY)


# ------------------------------------------------------------------------ with fakes

@pytest.fixture
def fake(tmp_path, monkeypatch):
    """Campaigns with the fake runner and KAT checker on a fixed host."""
    fixed_host(monkeypatch)

    def campaign(instances, run_dir=None, runner=None, kat_checker=None, **settings):
        settings = {**TINY, **settings}
        return ngcc.Campaign(instances, run_dir=run_dir or tmp_path / "run",
                             runner=runner or FakeRunner(), kat_checker=kat_checker or FakeKat(),
                             **settings)
    return campaign


def _external(folder: Path, name: str, like: str = "SM3", **sidecar) -> Path:
    """A copy of a built-in library with an ``ngcc build`` sidecar naming it ``name``."""
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / ("%s.so" % name)
    shutil.copyfile(ngcc.instance(like).library, library)
    facts = {"name": name, "family": "Fake", "digest_bits": ngcc.instance(like).digest_bits,
             **sidecar}
    (folder / ("%s.so.json" % name)).write_text(json.dumps(facts))
    return library


def test_fake_campaign_follows_the_plan_rule(fake):
    runner = FakeRunner()
    run = fake(["WChain-V1-512", "SM3"], runner=runner, trials=3).run()
    assert run.complete and len(run.records) == 4
    for record in run.records:
        t1 = cost_cycles(record.instance, record.message_bytes) / 2.1e9
        plan = record.plan
        assert plan.t1_seconds == t1
        assert plan.calls_per_trial == calls_per_trial(t1, 0.002, _plan.QUICK_OP_BUDGET, 3)
        assert plan.warmup_calls == warmup_calls(t1) == 3
        assert plan.estimated_seconds == pytest.approx(3 * (plan.calls_per_trial + 3) * t1)
        assert [t.calls for t in record.trials] == [plan.calls_per_trial] * 3
    # one cold call per job, then the trials, interleaved: trial 0 of every job first
    assert [e[0] for e in runner.log] == ["cold"] * 4 + ["trial"] * 12
    assert runner.trials_run()[:5] == [("WChain-V1-512", 32, 0), ("WChain-V1-512", 1024, 0),
                                       ("SM3", 32, 0), ("SM3", 1024, 0),
                                       ("WChain-V1-512", 32, 1)]


def test_fake_campaign_statistics_come_from_the_measurements(fake):
    run = fake(["SM3"], lengths=[64]).run()
    [record] = run.records
    cycles = record.cycles()
    assert record.statistics == _stats.aggregate_trials(record.trials, cycles, 64,
                                                        run.plan.cpu)
    assert record.statistics.version == _stats.STATISTICS_VERSION
    assert [t.pid for t in record.trials] == [40000, 40001]
    assert record.resources.peak_rss_kib == 1701


def test_rerun_of_a_finished_fake_campaign_runs_nothing(fake):
    fake(["SM3"]).run()
    runner, checker = FakeRunner(), FakeKat()
    run = fake(["SM3"], runner=runner, kat_checker=checker).run()
    assert runner.log == [] and checker.checked == []      # verdicts kept in build.json
    assert run.complete and len(run.campaign.starts) == 2


def test_kat_gate_refuses_a_wrong_instance(fake, tmp_path):
    library = _external(tmp_path / "lib", "WChain-V1-512", like="WChain-V1-512")
    run_dir = tmp_path / "run"
    runner = FakeRunner()
    with pytest.raises(KatGateError, match=r"WChain-V1-512@lib MISMATCH.*--allow-kat-fail"), \
            pytest.warns(MeasurementWarning, match="not timed"):
        fake([str(library)], candidate="hash-34", runner=runner,
             kat_checker=FakeKat({"WChain-V1-512": "MISMATCH"})).run()
    assert runner.log == []
    state = _records.load_campaign(run_dir)
    assert {job.status for job in state.jobs} == {"refused"}
    assert not (run_dir / "records").exists()
    [entry] = _records.load_build(run_dir).libraries
    assert entry.kat.verdict == "MISMATCH" and entry.kat.gate == "refused"
    assert entry.label == "WChain-V1-512@lib"  # never a built-in's name, even alone
    assert entry.implementation.variant == "external"


def test_kat_gate_refuses_one_and_times_the_others(fake):
    with pytest.warns(MeasurementWarning, match=r"WChain-V1-512: KAT verdict CRASH.*not timed"):
        run = fake(["WChain-V1-512", "SM3"],
                   kat_checker=FakeKat({"WChain-V1-512": "CRASH"})).run()
    assert {(j.instance, j.status) for j in run.jobs} == {
        ("WChain-V1-512", "refused"), ("SM3", "done")}
    assert all("--allow-kat-fail" in j.error for j in run.failed_jobs)


def test_kat_gate_override_marks_every_record(fake, tmp_path):
    library = _external(tmp_path / "lib", "WChain-V1-512", like="WChain-V1-512")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementWarning)
        run = fake([str(library)], candidate="hash-34", allow_kat_fail=True,
                   kat_checker=FakeKat({"WChain-V1-512": "MISMATCH"})).run()
    assert len(run.records) == 2
    for record in run.records:
        assert record.kat.verdict == "MISMATCH"
        assert record.kat.timed_without_pass and record.kat.gate == "override"
        assert record.path.parent.name == "hash-34"
        assert record.path.name.startswith("WChain-V1-512@lib__hash_")


def test_several_builds_of_one_instance_are_measured_under_their_own_labels(fake, tmp_path):
    """`ngcc campaign a/X.so b/X.so c/X.so X`: four libraries, four labels, in every file,
    table, plot series and link (it used to measure two and drop the others)."""
    builds = [_external(tmp_path / folder, "SM3", candidate="baseline")
              for folder in ("a", "b", "c")]
    run = fake([*map(str, builds), "SM3"], lengths=[32]).run()
    assert [lib.label for lib in run.plan.libraries] == ["SM3@a", "SM3@b", "SM3@c", "SM3"]
    assert sorted(r.label for r in run.records) == ["SM3", "SM3@a", "SM3@b", "SM3@c"]
    assert {r.instance for r in run.records} == {"SM3"}     # the KAT identity is kept
    assert sorted(p.name for p in (run.path / "kat/baseline").glob("*.log")) == [
        "SM3.log", "SM3@a.log", "SM3@b.log", "SM3@c.log"]
    assert run.record("SM3", 32).implementation.variant == "ref"     # the bare name
    assert run.record("SM3@b", 32).implementation.library == str(builds[1].resolve())
    page = _report.candidate_page(run, "baseline")
    for label in ("SM3", "SM3@a", "SM3@b", "SM3@c"):
        assert "| `%s` | 32 B |" % label in page
        assert "(%s__hash_32-calls.png)" % label in page
    assert run.summary()["label"].nunique() == 4
    assert "SM3@c" in _cli_summary(run)


def test_labels_given_explicitly(fake, tmp_path):
    builds = [_external(tmp_path / folder, "SM3", candidate="baseline") for folder in "xy"]
    run = fake([*map(str, builds)], labels=["theirs.perf", "theirs+opt"], lengths=[32]).run()
    assert sorted(r.label for r in run.records) == ["theirs+opt", "theirs.perf"]
    assert (run.path / "records/baseline/theirs.perf__hash_32.json").is_file()
    with pytest.raises(InvalidNameError, match="given to two libraries"):
        fake([*map(str, builds)], labels=["same", "same"])
    with pytest.raises(InvalidNameError, match=r"label '\.\./escape' is not a valid name"):
        fake([str(builds[0])], labels=["../escape"])
    with pytest.raises(ValueError, match="2 labels given for 1 libraries"):
        fake([str(builds[0])], labels=["a", "b"])
    sidecar = _external(tmp_path / "z", "SM3", label="from-sidecar")
    assert fake([str(sidecar), "SM3"]).labels == ["from-sidecar", "SM3"]


def test_one_library_named_twice_is_measured_once(fake, tmp_path):
    build = _external(tmp_path / "a", "SM3")
    assert fake(["SM3", "sm3", str(build), str(build)]).labels == ["SM3", "SM3@a"]


def test_cli_label_follows_the_library_paths(tmp_path, monkeypatch, capsys):
    from ngcc.cli.main import main
    fixed_host(monkeypatch)
    monkeypatch.setattr(_child, "DriverRunner", FakeRunner)
    monkeypatch.setattr(kat, "check", FakeKat())
    build = _external(tmp_path / "a", "SM3")
    assert main(["campaign", "SM3", str(build), "--label", "mine", "--quick", "--lengths",
                 "32", "--run-dir", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[1:3]] == ["SM3", "mine"]
    assert main(["campaign", "SM3", "--label", "mine", "--run-dir",
                 str(tmp_path / "other")]) == 2
    assert "1 --label given for 0 library path(s)" in capsys.readouterr().err


def _cli_summary(run) -> str:
    from ngcc.cli.summary import campaign_summary as _campaign_summary
    return _campaign_summary(run)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _halve_samples(run_dir: Path) -> None:
    """Raw samples replaced and their sha256 updated: only the statistics give it away."""
    raw = run_dir / "raw/baseline/SM3__hash_64.npz"
    trials = _records.load_raw(raw)
    sha = _records.dump_raw(raw, 64, [t // np.uint64(2) for t in trials])
    _edit(run_dir / "records/baseline/SM3__hash_64.json",
          lambda d: d["raw"].__setitem__("sha256", sha))


RECORD = "records/baseline/SM3__hash_64.json"
# What a resume finds wrong with one record, and the words of its defect.
REJECTED = {
    "truncated": (lambda d: _truncate(d / RECORD), "not valid JSON"),
    "other schema": (lambda d: _edit(d / RECORD, lambda r: r.__setitem__(
        "schema", "ngcc.record/99")), "schema 'ngcc.record/99'"),
    "wrong type": (lambda d: _edit(d / RECORD, lambda r: r["statistics"].__setitem__(
        "mean_cycles", "fast")), "statistics.mean_cycles is 'fast', not a number"),
    "tampered statistic": (lambda d: _edit(d / RECORD, lambda r: r["statistics"].__setitem__(
        "median_cycles", 1.0)), "statistics.median_cycles is 1.0, recomputed from the raw"),
    "tampered raw": (lambda d: _flip_a_byte(d / "raw/baseline/SM3__hash_64.npz"),
                     "sha256 differs"),
    "raw replaced": (_halve_samples, "statistics.mean_cycles is"),
    "raw missing": (lambda d: (d / "raw/baseline/SM3__hash_64.npz").unlink(),
                    "cannot be read"),
    "another job's record": (lambda d: (d / RECORD).write_bytes(
        (d / "records/baseline/SM3__hash_32.json").read_bytes()), "not of its job"),
    "stale KAT facts": (lambda d: _edit(d / RECORD, lambda r: r["kat"].__setitem__(
        "log_sha256", "0" * 64)), "kat.log_sha256 is '000"),
    "raw path outside": (lambda d: _edit(d / RECORD, lambda r: r["raw"].__setitem__(
        "path", "../../elsewhere.npz")), "raw.path is '../../elsewhere.npz'"),
}


@pytest.mark.parametrize("damage", list(REJECTED))
def test_resume_measures_again_what_validate_rejects(fake, tmp_path, damage):
    """A resume keeps a record only when ``ngcc validate`` would: never ``done`` for a
    record validate rejects (it used to be, with status 0)."""
    lengths = [32, 64, 128]
    fake(["SM3"], lengths=lengths).run()
    run_dir = tmp_path / "run"
    kept = {p: p.stat().st_mtime_ns for p in (run_dir / "records").rglob("*.json")
            if p.name != "SM3__hash_64.json"}
    harm, words = REJECTED[damage]
    harm(run_dir)
    runner = FakeRunner()
    with pytest.warns(MeasurementWarning, match=r"SM3 at 64 B: measured again, its record"):
        run = fake(["SM3"], runner=runner, lengths=lengths).run()
    assert {(name, n) for name, n, _ in runner.trials_run()} == {("SM3", 64)}
    [remeasured] = run.campaign.starts[-1].remeasured
    assert remeasured.record == RECORD and words in remeasured.defect
    assert {p: p.stat().st_mtime_ns for p in kept} == kept
    run.report(plots=False)
    assert ngcc.validate(run.path).ok and run.complete and len(run.records) == 3


def test_a_directory_where_a_record_belongs_is_refused_by_name(fake, tmp_path):
    fake(["SM3"]).run()
    record = tmp_path / "run" / "records/baseline/SM3__hash_1024.json"
    record.unlink()
    record.mkdir()
    with pytest.raises(CorruptRecordError, match=r"SM3__hash_1024\.json: is a directory.*"
                                                 r"Remove it"):
        fake(["SM3"]).run()


@pytest.mark.parametrize(("name", "damage", "words"), [
    ("campaign.json", _truncate, "not valid JSON"),
    ("campaign.json", lambda p: (p.unlink(), p.mkdir()), "is a directory"),
    ("campaign.json", lambda p: _edit(p, lambda d: d["jobs"][1].__setitem__("status", 7)),
     "jobs[1].status is 7, not a string"),
    ("build.json", _truncate, "not valid JSON"),
    ("build.json", lambda p: _edit(p, lambda d: d["libraries"][0].__setitem__(
        "label", "../up")), "libraries[0].label is '../up', not a valid name"),
], ids=["campaign-truncated", "campaign-directory", "campaign-type", "build-truncated",
        "build-label"])
def test_resume_of_a_corrupt_run_directory_is_refused_by_name(fake, tmp_path, name, damage,
                                                             words):
    fake(["SM3"]).run()
    damage(tmp_path / "run" / name)
    with pytest.raises(CorruptRecordError) as caught:
        fake(["SM3"]).run()
    assert name in str(caught.value) and words in str(caught.value)


def test_an_environmental_kat_verdict_is_checked_again(fake, tmp_path):
    """ERROR (a full disk, no memory during the gate) is not kept as the final verdict:
    the next run checks again, and times the instance once it passes."""
    with pytest.raises(KatGateError, match="WChain-V1-512 ERROR"), \
            pytest.warns(MeasurementWarning):
        fake(["WChain-V1-512"], kat_checker=FakeKat({"WChain-V1-512": "ERROR"})).run()
    checker = FakeKat()
    run = fake(["WChain-V1-512"], kat_checker=checker).run()
    assert checker.checked == ["WChain-V1-512"]
    assert run.complete and not run.failed_jobs and len(run.records) == 2
    assert run.build is not None and run.build.libraries[0].kat.verdict == "PASS"
    again = FakeKat()
    fake(["WChain-V1-512"], kat_checker=again).run()
    assert again.checked == []                         # PASS is kept


def test_records_with_a_changed_kat_verdict_are_measured_again(fake, tmp_path):
    """Timed under the override after an ERROR, then checked again and passed: the
    records carried the old verdict, so they are measured again with the new one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementWarning)
        fake(["WChain-V1-512"], allow_kat_fail=True,
             kat_checker=FakeKat({"WChain-V1-512": "ERROR"})).run()
        runner = FakeRunner()
        run = fake(["WChain-V1-512"], allow_kat_fail=True, runner=runner).run()
    assert len(runner.trials_run()) == 4
    assert {r.kat.verdict for r in run.records} == {"PASS"}
    assert not any(r.kat.timed_without_pass for r in run.records)


def test_failed_children_are_job_entries_and_the_campaign_goes_on(fake):
    runner = FakeRunner(fail={
        ("SM3", 64, 1): ChildError("crash", "SM3 at 64 B (trial 1) crashed: SIGSEGV"),
        ("SM3", 128, 0): ChildError("timeout", "SM3 at 128 B (trial 0) did not finish"),
        ("SM3", 256, None): ChildError("error", "SM3 at 256 B (calibration) failed: oops")})
    run = fake(["SM3", "WChain-V1-512"], runner=runner, lengths=[32, 64, 128, 256]).run()
    status = {(j.instance, j.message_bytes): j for j in run.jobs}
    assert [status[("SM3", n)].status for n in (32, 64, 128, 256)] == [
        "done", "crash", "timeout", "error"]
    assert "SIGSEGV" in status[("SM3", 64)].error
    assert status[("SM3", 256)].t1_seconds is None           # calibration failed
    assert all(status[("WChain-V1-512", n)].status == "done" for n in (32, 64, 128, 256))
    assert {(r.instance, r.message_bytes) for r in run.records} == {
        ("SM3", 32), *{("WChain-V1-512", n) for n in (32, 64, 128, 256)}}
    assert not (run.path / status[("SM3", 64)].record).exists()
    assert run.complete and run.campaign.finished is not None
    # a rerun tries the failed jobs again and keeps the rest
    again = FakeRunner()
    run = fake(["SM3", "WChain-V1-512"], runner=again, lengths=[32, 64, 128, 256]).run()
    assert sorted({(n, b) for n, b, _ in again.trials_run()}) == [
        ("SM3", 64), ("SM3", 128), ("SM3", 256)]
    assert not run.failed_jobs


def test_ctrl_c_keeps_the_finished_jobs_and_a_rerun_measures_the_rest(fake, tmp_path):
    lengths = [32, 64, 128, 256]
    runner = FakeRunner(fail={("SM3", 128, 1): KeyboardInterrupt()})
    with pytest.raises(KeyboardInterrupt):
        fake(["SM3"], runner=runner, lengths=lengths).run()
    run_dir = tmp_path / "run"
    state = _records.load_campaign(run_dir)
    assert [j.status for j in state.jobs] == ["done", "done", "pending", "pending"]
    assert state.finished is None
    kept = {p: p.stat().st_mtime_ns for p in (run_dir / "records").rglob("*.json")}
    assert len(kept) == 2 and not list(run_dir.rglob(".*.tmp-*"))
    again = FakeRunner()
    run = fake(["SM3"], runner=again, lengths=lengths).run()
    assert [e[0] for e in again.log if e[0] == "cold"] == []     # t1 already planned
    assert sorted({b for _, b, _ in again.trials_run()}) == [128, 256]
    assert run.complete and len(run.records) == 4
    assert {p: p.stat().st_mtime_ns for p in kept} == kept


def test_target_ci_adds_trials_up_to_the_cap(fake, tmp_path):
    noisy = FakeRunner(spread=0.05)
    hard = fake(["SM3"], run_dir=tmp_path / "hard", runner=noisy, target_ci=1e-9,
                max_trials=4, lengths=[32]).run()
    easy = fake(["SM3"], run_dir=tmp_path / "easy", target_ci=1e6, max_trials=4,
                lengths=[32]).run()
    assert hard.records[0].statistics.trials == 4
    assert len(noisy.trials_run()) == 4
    assert easy.records[0].statistics.trials == 2
    assert list(hard.records[0].raw.calls_per_trial) == [
        hard.jobs[0].calls_per_trial] * 4


def test_progress_bars_show_each_phase(fake, monkeypatch, capsys):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    fake(["SM3"], progress=True).run()
    shown = capsys.readouterr().err
    assert "calibrate:" in shown and "measure:" in shown and "%|" in shown
    assert "SM3 1024 B" in shown


def test_cli_campaign_prints_a_summary(tmp_path, monkeypatch, capsys):
    from ngcc.cli.main import main
    fixed_host(monkeypatch)
    monkeypatch.setattr(_child, "DriverRunner", FakeRunner)
    monkeypatch.setattr(kat, "check", FakeKat())
    status = main(["campaign", "SM3", "--quick", "--trials", "2", "--trial-target", "0.002",
                   "--lengths", "64", "--run-dir", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert status == 0
    sm3 = next(line for line in out.splitlines() if line.startswith("SM3"))
    assert sm3.split()[1:4] == ["64", "B", "mean"] and sm3.split()[-3:-1] == ["2", "NOKAT"]
    assert "evidence: %s" % (tmp_path / "run") in out


def test_cli_campaign_interrupted_says_how_to_resume(tmp_path, monkeypatch, capsys):
    from ngcc.cli.main import main
    fixed_host(monkeypatch)
    monkeypatch.setattr(_child, "DriverRunner",
                        lambda: FakeRunner(fail={("SM3", 64, 0): KeyboardInterrupt()}))
    monkeypatch.setattr(kat, "check", FakeKat())
    status = main(["campaign", "SM3", "--quick", "--lengths", "64", "--quiet",
                   "--run-dir", str(tmp_path / "run")])
    assert status == 130
    assert "run the same command again to resume" in capsys.readouterr().err


def test_cli_campaign_with_a_failed_job_exits_1(tmp_path, monkeypatch, capsys):
    from ngcc.cli.main import main
    fixed_host(monkeypatch)
    monkeypatch.setattr(_child, "DriverRunner", lambda: FakeRunner(fail={
        ("SM3", 64, 0): ChildError("crash", "SM3 at 64 B (trial 0) crashed: SIGSEGV")}))
    monkeypatch.setattr(kat, "check", FakeKat())
    assert main(["campaign", "SM3", "--quick", "--lengths", "32,64", "--quiet",
                 "--run-dir", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert "ngcc: SM3 at 64 B (trial 0) crashed: SIGSEGV\n" in err
    assert err.splitlines()[-1] == "ngcc: 1 done, 1 crash"   # the count, last


def test_cli_campaign_without_instances_is_an_error(capsys):
    from ngcc.cli.main import main
    assert main(["campaign"]) == 2  # a usage mistake
    assert "--candidate" in capsys.readouterr().err


# ------------------------------------------------------------------------ the real runner

def _campaign_command(run_dir: Path) -> list[str]:
    return [sys.executable, "-m", "ngcc", "campaign", "SM3", "--quick", "--trials", "3",
            "--trial-target", "0.002", "--lengths", "32,64,128,256,512,1024,2048,4096", "--quiet",
            "--run-dir", str(run_dir)]


@pytest.mark.e2e  # a real campaign: many trials in the real driver
def test_resume_after_the_orchestrator_is_killed(tmp_path):
    run_dir = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # SIGINT as a terminal delivers it, even if this test runs in the background (whose
    # commands inherit SIGINT ignored, so the campaign would just finish)
    orchestrator = subprocess.Popen(_campaign_command(run_dir), env=env, text=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                     signal.SIG_DFL))
    records = run_dir / "records" / "baseline"
    deadline = time.monotonic() + 120
    while not list(records.glob("*.json")) and time.monotonic() < deadline:
        assert orchestrator.poll() is None, "the campaign ended before it could be killed"
        time.sleep(0.01)
    orchestrator.send_signal(signal.SIGKILL)
    orchestrator.communicate(timeout=120)

    # No half-written file: whatever is there under its final name loads completely.
    survivors = sorted(records.glob("*.json"))
    assert 1 <= len(survivors) < 8
    for path in survivors:
        record = _records.load_record(path)
        _records.load_raw(run_dir / record.raw.path, record.raw.sha256)
    state = _records.load_campaign(run_dir)
    assert state.finished is None
    kept = {path: path.stat().st_mtime_ns for path in survivors}

    rerun = subprocess.run(_campaign_command(run_dir), env=env, capture_output=True,
                           text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    run = ngcc.load_run(run_dir)
    assert run.complete and run.campaign.finished and len(run.records) == 8
    assert {path: path.stat().st_mtime_ns for path in kept} == kept   # finished jobs skipped
    assert not list(run_dir.rglob(".*.tmp-*"))


FAKE_HASH = r"""
#include <string.h>
__attribute__((visibility("default")))
int CryptHash(int digest_bits, const unsigned char *msg, unsigned long long bits,
              unsigned char *digest)
{
    (void)msg;
    while (bits == 8 * 64) { }
    memset(digest, 0x5a, (size_t)digest_bits / 8);
    return 0;
}
"""


def test_a_hanging_trial_is_a_timeout_entry(tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    source = tmp_path / "hangs.c"
    source.write_text(FAKE_HASH)
    library = tmp_path / "Hangs-512.so"
    subprocess.run([compiler, "-O1", "-fPIC", "-shared", "-o", str(library), str(source)],
                   check=True)
    (tmp_path / "Hangs-512.so.json").write_text(json.dumps(
        {"name": "Hangs-512", "family": "Fake", "digest_bits": 512}))
    inst = ngcc.instance(str(library))
    cpu = max(os.sched_getaffinity(0))
    runner = _child.DriverRunner()
    assert runner.cold_call(inst, 32, cpu, timeout=60) > 0
    with pytest.raises(ChildError) as caught:
        runner.trial(inst, 64, calls=10, warmup=0, cpu=cpu, index=2, timeout=3)
    assert caught.value.status == "timeout"
    assert "Hangs-512 at 64 B (trial 2)" in str(caught.value)


def test_a_runtime_error_in_the_child_is_an_error_entry(monkeypatch, tmp_path):
    # What the driver reports when the counter stands still: an ERROR frame (code 6).
    from _testlib import fake_driver

    from ngcc.driver import child as _child
    from ngcc.driver import process as _process
    monkeypatch.setattr(_process, "DRIVER", fake_driver(tmp_path, (
        "frame(1, struct.pack('<II', 1, pid))\n"
        "frame(3, struct.pack('<ii', 6, 0) + b'the rdtsc counter did not advance')\n"
        "frame(13)")))
    with pytest.raises(ChildError) as caught:
        _child.DriverRunner().trial(ngcc.instance("SM3"), 64, calls=10, warmup=0, cpu=0,
                                    index=1, timeout=30)
    assert caught.value.status == "error"
    assert "SM3 at 64 B (trial 1) failed: the rdtsc counter did not advance" in str(caught.value)


# ------------------------------------------------ order, --strict, --statistic, --plan warm

def _positions(run):
    """{(label, bytes): [position of trial 0, 1, …]} of a run's records."""
    return {(r.label, r.message_bytes): [t.position for t in r.trials] for r in run.records}


def test_trials_of_several_libraries_are_interleaved_and_record_their_order(fake):
    runner = FakeRunner()
    run = fake(["WChain-V1-512", "SM3"], runner=runner, trials=3).run()
    positions = _positions(run)
    assert sorted(p for ps in positions.values() for p in ps) == list(range(12))
    for k in range(2):   # every trial k ran before any trial k + 1
        assert max(ps[k] for ps in positions.values()) < min(
            ps[k + 1] for ps in positions.values())
    assert [index for _, _, index in runner.trials_run()] == [0] * 4 + [1] * 4 + [2] * 4
    assert {r.plan.order for r in run.records} == {"interleaved"}
    assert run.campaign.starts[-1].settings.order == "interleaved"
    assert ngcc.validate(run.path).differences == [
        d for d in ngcc.validate(run.path).differences if d.file.startswith("report")]


def test_one_library_runs_job_after_job_unless_asked(fake, tmp_path):
    runner = FakeRunner()
    run = fake(["SM3"], runner=runner, trials=2).run()
    assert [(n, i) for _, n, i in runner.trials_run()] == [(32, 0), (32, 1), (1024, 0),
                                                          (1024, 1)]
    assert _positions(run) == {("SM3", 32): [0, 1], ("SM3", 1024): [2, 3]}
    assert run.records[0].plan.order == "sequential"
    asked = FakeRunner()
    fake(["SM3"], runner=asked, run_dir=tmp_path / "asked", order="interleaved").run()
    assert [(n, i) for _, n, i in asked.trials_run()] == [(32, 0), (1024, 0), (32, 1),
                                                         (1024, 1)]
    with pytest.raises(ValueError, match="order must be one of"):
        fake(["SM3"], order="random")


def test_a_failed_trial_leaves_the_rounds_and_the_others_finish(fake):
    runner = FakeRunner(fail={("SM3", 32, 1): ChildError("crash", "SM3 at 32 B: SIGSEGV")})
    run = fake(["WChain-V1-512", "SM3"], runner=runner, trials=3).run()
    assert [(j.label, j.message_bytes, j.status) for j in run.jobs if j.status != "done"] == [
        ("SM3", 32, "crash")]
    assert len(run.records) == 3
    assert ("SM3", 32, 2) not in runner.trials_run()


def test_an_interrupted_round_resumes_with_the_trials_it_kept(fake, tmp_path):
    stop = FakeRunner(fail={("SM3", 32, 1): KeyboardInterrupt()})
    with pytest.raises(KeyboardInterrupt):
        fake(["WChain-V1-512", "SM3"], runner=stop, lengths=[32], trials=3).run()
    state = ngcc.load_run(tmp_path / "run")
    assert [j.status for j in state.jobs] == ["pending", "pending"] and not state.records
    again = FakeRunner()
    run = fake(["WChain-V1-512", "SM3"], runner=again, lengths=[32], trials=3).run()
    # kept: WChain's trials 0 and 1, SM3's 0; SM3 catches up, then the last round
    assert run.complete and again.trials_run() == [
        ("SM3", 32, 1), ("WChain-V1-512", 32, 2), ("SM3", 32, 2)]
    assert [e for e in again.log if e[0] == "cold"] == []   # the calibration is kept
    assert not [d for d in ngcc.validate(run.path).differences if d.file.startswith("records")]


def test_target_ci_gives_extra_rounds_only_to_imprecise_jobs(fake):
    runner = FakeRunner(spikes=50.0)   # SM3 and WChain alike: odd trials spiked
    run = fake(["WChain-V1-512", "SM3"], runner=runner, lengths=[32], trials=2,
               target_ci=1e-9, max_trials=4).run()
    assert [r.statistics.trials for r in run.records] == [4, 4]
    rounds = [index for _, _, index in runner.trials_run()]
    assert rounds == [0, 0, 1, 1, 2, 2, 3, 3]


def test_a_preempted_trial_is_flagged(fake):
    runner = FakeRunner(preempt={("SM3", 32, 1): 1})
    run = fake(["SM3"], runner=runner, lengths=[32], trials=3).run()
    [record] = run.records
    assert record.statistics.preempted_trials == (1,)
    [flag] = [f for f in record.statistics.flags if f.code == "preempted"]
    assert flag.trial == 1 and flag.value == pytest.approx(0.8, abs=1e-3)
    assert "80.0 %" in flag.message and "40 involuntary" in flag.message
    assert "--cpu N" in flag.message and record.rejected_trials == ()


def test_strict_rejects_and_repeats_a_preempted_trial(fake):
    runner = FakeRunner(preempt={("SM3", 32, 1): 1})
    with pytest.warns(MeasurementWarning, match="--strict rejected and repeated 1"):
        run = fake(["SM3"], runner=runner, lengths=[32], trials=3, strict=True).run()
    [record] = run.records
    assert [index for _, _, index in runner.trials_run()] == [0, 1, 1, 2]
    [rejected] = record.rejected_trials
    assert (rejected.trial, rejected.position, rejected.code) == (1, 1, "preempted")
    assert "80.0 %" in rejected.message
    assert record.statistics.preempted_trials == ()
    assert [t.position for t in record.trials] == [0, 2, 3]
    assert not [d for d in ngcc.validate(run.path).differences if d.file.startswith("records")]


def test_strict_repeats_are_bounded_and_the_last_attempt_is_kept_flagged(fake):
    runner = FakeRunner(preempt={("SM3", 32, 0): 10})
    with pytest.warns(MeasurementWarning):
        run = fake(["SM3"], runner=runner, lengths=[32], trials=2, strict=True).run()
    [record] = run.records
    assert len(record.rejected_trials) == _jobs.STRICT_ATTEMPTS - 1 == 2
    assert record.statistics.preempted_trials == (0,)
    assert len(record.trials) == 2


def test_a_slow_process_is_flagged_and_strict_repeats_it(fake, tmp_path):
    """A trial whose process ran slow as a whole (its fastest call 40 % above the other
    trials'): flagged slow_process with the figure, counted on the page; --strict
    measures it again, with an executor too."""
    run = fake(["SM3"], runner=FakeRunner(slow={("SM3", 1024, 1): 1.4}), lengths=[1024],
               trials=3, run_dir=tmp_path / "plain").run()
    [record] = run.records
    [flag] = [f for f in record.statistics.flags if f.code == "slow_process"]
    minima = [trial.statistics.min_cycles for trial in record.trials]
    # the fake's calls are seeded by the library's path: the figure is the record's own
    assert flag.trial == 1 and flag.value == pytest.approx(minima[1] / min(minima[0::2]) - 1)
    assert flag.value > 0.25            # 1.4 times slower, less the spread of the minima
    assert "the whole process ran slow" in flag.message and "--strict" in flag.message
    _write.write_report(run, plots=False)
    page = (run.path / "report" / "baseline.md").read_text()
    assert "`slow_process`: 1 trial in 1 of 1 record" in page
    for executor in (None, _executors.SerialExecutor()):
        runner = FakeRunner(slow={("SM3", 1024, 1): 1.4})
        with pytest.warns(MeasurementWarning, match="--strict rejected and repeated 1"):
            run = fake(["SM3"], runner=runner, lengths=[1024], trials=3, strict=True,
                       executor=executor, run_dir=tmp_path / str(executor)).run()
        [record] = run.records
        [rejected] = record.rejected_trials
        assert (rejected.trial, rejected.code) == (1, "slow_process")
        assert "slow_process" not in {f.code for f in record.statistics.flags}


def test_a_missed_target_is_said_in_the_record_a_warning_and_the_exit_status(
        fake, tmp_path, monkeypatch, capsys):
    with pytest.warns(MeasurementWarning, match=r"SM3 at 32 B missed --target-ci 0.01 %: it "
                      r"stopped at --max-trials 3 with the 95 % CI of the mean at ±\d"):
        run = fake(["SM3"], runner=FakeRunner(spikes=50.0), lengths=[32], trials=2,
                   target_ci=0.01, max_trials=3).run()
    [record] = run.records
    assert record.target_missed and record.statistics.trials == 3
    assert record.target_ci_reached_percent == pytest.approx(
        100 * (_intervals.stop_rule_precision(record.cycles(), "mean") or 0))
    assert not [d for d in ngcc.validate(run.path).differences if d.file.startswith("records")]
    reached = fake(["SM3"], lengths=[32], trials=2, target_ci=50.0, max_trials=3,
                   run_dir=tmp_path / "reached").run()
    assert not reached.records[0].target_missed
    assert not fake(["SM3"], lengths=[32], run_dir=tmp_path / "none").run() \
        .records[0].target_missed  # no target: nothing to miss
    from ngcc.cli.common import EXIT_TARGET_MISSED
    from ngcc.cli.main import main
    monkeypatch.setattr(_child, "DriverRunner", lambda: FakeRunner(spikes=50.0))
    monkeypatch.setattr(kat, "check", FakeKat())
    status = main(["campaign", "SM3", "--quick", "--trials", "2", "--lengths", "32",
                   "--target-ci", "0.01", "--max-trials", "3", "--run-dir",
                   str(tmp_path / "cli")])
    assert status == EXIT_TARGET_MISSED == 3
    assert "missed --target-ci 0.01 %" in capsys.readouterr().err


def test_the_counter_asked_for_is_the_runners_and_the_starts(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    with pytest.raises(ValueError, match="counter must be one of auto, perf, tsc, clock"):
        ngcc.Campaign(["SM3"], counter="cycles", run_dir=tmp_path / "bad")
    with pytest.raises(ValueError, match="a runner given chooses its own"):
        ngcc.Campaign(["SM3"], counter="clock", runner=FakeRunner(), run_dir=tmp_path / "x")
    run = ngcc.Campaign(["SM3"], counter="clock", lengths=[64], quick=True, trials=2,
                        run_dir=tmp_path / "run", kat_checker=FakeKat(), progress=False).run()
    assert run.campaign.starts[0].settings.counter == "clock"
    [record] = run.records
    assert {(t.counter, t.unit) for t in record.trials} == {("clock_monotonic_raw", "ns")}
    assert not [d for d in ngcc.validate(run.path).differences if d.file.startswith("records")]


def test_version_2_records_still_validate(fake):
    """A record whose statistics are of version 2 (no CPU-time figure, no leading figure,
    no slow_process flag) is recomputed by version 2's rules and validates."""
    run = fake(["SM3"], runner=FakeRunner(slow={("SM3", 32, 1): 1.4}), lengths=[32],
               trials=3).run()
    cycles = run.records[0].cycles()
    record = Record.from_json(run.records[0].to_json())
    trials = tuple(replace(t, statistics=_stats.trial_statistics(
        c, t.loop_ticks, t.loop_seconds, t.frequency_hz, t, version=2))
        for t, c in zip(record.trials, cycles, strict=True))
    old = replace(record, trials=trials, statistics=_stats.aggregate_trials(
        trials, cycles, record.message_bytes, record.plan.cpu, version=2))
    _records.dump_record(run.path, old)
    text = (run.path / record.relpath).read_text()
    assert '"version": 2' in text and "cpu_time" not in text and "slow_process" not in text
    _write.write_report(ngcc.load_run(run.path), plots=False)
    assert ngcc.validate(run.path).ok, ngcc.validate(run.path).differences


def test_statistic_median_stops_when_the_median_is_precise(fake, tmp_path):
    spiky = dict(lengths=[32], trials=3, target_ci=2.0, max_trials=6)
    by_median = fake(["SM3"], runner=FakeRunner(spikes=50.0), run_dir=tmp_path / "median",
                     statistic="median", **spiky).run()
    by_mean = fake(["SM3"], runner=FakeRunner(spikes=50.0), run_dir=tmp_path / "mean",
                   **spiky).run()
    median, mean = by_median.records[0], by_mean.records[0]
    assert median.statistics.trials == 3 and median.statistics.median_ci95_relative < 0.02
    assert mean.statistics.trials == 6 and mean.statistics.ci95_relative > 0.02
    assert (median.plan.statistic, mean.plan.statistic) == ("median", "mean")
    assert by_median.plan.statistic == "median"
    with pytest.raises(ValueError, match="statistic must be one of"):
        fake(["SM3"], statistic="mode")


def test_warm_plan_calibrates_with_warm_calls_and_is_recorded(fake):
    runner = FakeRunner()
    plans: list[ngcc.CostEstimate] = []
    run = fake(["SM3"], runner=runner, lengths=[32], trials=2, calls_rule="warm",
               trial_target=0.01, on_plan=plans.append).run()
    [record] = run.records
    assert "estimated from each job's warm calls" in str(plans[0])
    t1 = cost_cycles("SM3", 32) / 2.1e9
    calibration = _plan.calibration_calls(t1)
    assert runner.log[:2] == [("cold", "SM3", 32, None), ("trial", "SM3", 32, 0)]
    cycles = runner.trial(ngcc.instance("SM3"), 32, calibration, 3, 0, 0, 1.0).cycles
    warm = float(np.median(cycles)) / 2.1e9
    assert record.plan.calls_rule == "warm" and run.plan.calls_rule == "warm"
    assert record.plan.warm_call_seconds == pytest.approx(warm)
    assert record.plan.calls_per_trial == _plan.warm_calls_per_trial(
        warm, 0.01, _plan.QUICK_OP_BUDGET, 2) > _plan.MAX_CALLS // 10
    assert [t.calls for t in record.trials] == [record.plan.calls_per_trial] * 2
    harness = fake(["SM3"], lengths=[32], trials=2, trial_target=0.01,
                   run_dir=run.path.parent / "harness").run()
    assert harness.records[0].plan.calls_rule == "harness"
    assert harness.records[0].plan.warm_call_seconds is None


def test_cli_campaign_statistic_plan_order_strict(tmp_path, monkeypatch, capsys):
    from ngcc.cli.main import main
    fixed_host(monkeypatch)
    preempting = FakeRunner(preempt={("SM3", 64, 1): 1})
    monkeypatch.setattr(_child, "DriverRunner", lambda: preempting)
    monkeypatch.setattr(kat, "check", FakeKat())
    status = main(["campaign", "SM3", "pseudoXOF-256", "--quick", "--trials", "3",
                   "--trial-target", "0.002", "--lengths", "64", "--statistic", "median",
                   "--target-ci", "50", "--plan", "warm", "--order", "sequential",
                   "--strict", "--wide", "--run-dir", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert status == 0
    header = next(line for line in out.splitlines() if line.startswith("instance"))
    assert header.split() == ["instance", "message", "leads", "ticks/call", "ticks/byte",
                              "95%", "CI", "(of)", "per-call", "mean", "median", "95%", "CI",
                              "(log-t)", "observer", "core", "c/B", "(est.)", "MB/s", "n",
                              "KAT", "flags"]
    sm3 = next(line for line in out.splitlines() if line.startswith("SM3"))
    assert sm3.endswith("1 rejected")
    run = ngcc.load_run(tmp_path / "run")
    plan = run.record("SM3", 64).plan
    assert (plan.statistic, plan.calls_rule, plan.order) == ("median", "warm", "sequential")
    # the warm calibration trials, then job after job, trial 1 of SM3 run twice
    assert [(n, i) for n, _, i in preempting.trials_run()][:6] == [
        ("SM3", 0), ("pseudoXOF-256", 0), ("SM3", 0), ("SM3", 1), ("SM3", 1), ("SM3", 2)]


def test_a_real_trial_beside_a_busy_process_on_its_cpu_is_flagged(tmp_path, monkeypatch):
    """ngcc-driver's trials with a rival spinning on their CPU: the scheduler shares the
    CPU between them, so every trial loses about half of its loops' wall time and is
    flagged preempted, with the figure."""
    fixed_host(monkeypatch)
    cpu = _locks.default_cpu()
    rival = subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity(0, {%d})\n"
                              "while True: pass" % cpu])
    try:
        time.sleep(0.3)  # the rival is spinning on the trials' CPU
        # loops of about 0.1 s (the warm plan), far longer than a scheduler slice
        run = ngcc.Campaign(["SM3"], lengths=[4096], quick=True, trials=2, cpu=cpu,
                            trial_target=0.1, calls_rule="warm", run_dir=tmp_path / "run",
                            kat_checker=FakeKat(), progress=False).run()
    finally:
        rival.kill()
        rival.wait()
    [record] = run.records
    every = tuple(range(record.statistics.trials))  # 2, or more in place of slow-state ones
    assert record.statistics.preempted_trials == every
    flags = [f for f in record.statistics.flags if f.code == "preempted"]
    assert tuple(f.trial for f in flags) == every
    assert all(f.value is not None and f.value < 0.9 for f in flags), flags
    assert all("involuntary context switches" in f.message for f in flags)


def _spinning_rivals(cpu: int, count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` busy processes pinned to ``cpu`` (kill them after)."""
    rivals = [subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity(0, "
                                "{%d})\nwhile True: pass" % cpu]) for _ in range(count)]
    time.sleep(0.3)  # spinning on the CPU by now
    return rivals


def _alone_then_busy(run_dir: Path, settings: dict[str, Any]) -> tuple[Statistics, Statistics]:
    """SM3's statistics measured alone, then beside a process spinning on its CPU."""
    alone = ngcc.Campaign(["SM3"], run_dir=run_dir / "alone", **settings).run().records[0]
    rivals = _spinning_rivals(settings["cpu"], 1)
    try:
        busy = ngcc.Campaign(["SM3"], run_dir=run_dir / "busy", **settings).run().records[0]
    finally:
        for rival in rivals:
            rival.kill()
            rival.wait()
    return alone.statistics, busy.statistics


def _moves(quiet: Statistics, shared: Statistics) -> tuple[float, float]:
    """(leading, harness): busy ÷ alone of the CPU-time figure and of the harness mean,
    each over its job's fastest call."""
    assert quiet.cpu_time_ticks is not None and shared.cpu_time_ticks is not None
    leading = (shared.cpu_time_ticks / shared.min_cycles) / (
        quiet.cpu_time_ticks / quiet.min_cycles)
    harness = (shared.mean_cycles / shared.min_cycles) / (quiet.mean_cycles / quiet.min_cycles)
    return leading, harness


@pytest.mark.e2e  # two to six real campaigns, half beside a busy process: 7 to 20 s
def test_the_leading_figure_is_immune_to_a_busy_process_on_the_trials_cpu(tmp_path,
                                                                          monkeypatch):
    """SM3 alone, then beside a process spinning on its CPU: the trials lose about half
    of their wall time, which moves the harness mean far off (> 10 %); the record then
    leads with the CPU-time figure, which moves by less than half as much (a third was
    asked first: this guest's speed states moved "alone" against "busy" by 5-12 % in all
    three pairs of one CI run while the harness mean moved 14-33 %). Each figure
    is taken over its job's fastest call, which neither the busy process nor any other
    preemption can move, so that a core that other work on this host slows as a whole
    for a while (the fastest call with it) does not decide the comparison.

    What this test cannot control is the rest of the host: on CI's 2-core guest, work on
    the other vCPU (an SMT sibling, or memory traffic) slows "alone" or "busy" by up to
    40 % for seconds at a time, the CPU time with it. So the pair is measured up to
    three times and the quietest pair judged; a CPU-time figure that held the rival's
    time (the fault this guards against) moves as the harness mean does in every pair.
    benchmarks/shared_host.py measures how near it stays on a quiet host (within 5 %)."""
    fixed_host(monkeypatch)
    # three trials: the median of their CPU-time figures outvotes one slow process
    settings = dict(lengths=[4096], quick=True, trials=3, cpu=_host.default_cpu(),
                    trial_target=0.1, calls_rule="warm", kat_checker=FakeKat(),
                    progress=False)
    pairs = []
    for attempt in range(3):
        quiet, shared = _alone_then_busy(tmp_path / str(attempt), settings)
        assert shared.preempted_trials and shared.leading == "cpu_time"
        # the rival took about half of the CPU: the harness mean holds its time, the
        # CPU-time figure does not
        assert shared.mean_cycles > 1.10 * shared.cpu_time_ticks, shared
        leading, harness = _moves(quiet, shared)
        pairs.append((leading, harness))
        if harness > 1.10 and abs(leading - 1) < (harness - 1) / 2:
            break
    else:
        pytest.fail("in none of 3 pairs did the CPU-time figure stay within half of the "
                    "harness mean's move (busy ÷ alone: leading, harness): %s" % pairs)
    # the pages lead with it too, the per-call mean beside it under its own name
    run = ngcc.load_run(tmp_path / str(attempt) / "busy")
    _write.write_report(run, plots=False)
    page = (run.path / "report" / "baseline.md").read_text()
    assert "Section 4 leads with the CPU time per call." in page
    assert "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n |" in page
    lead = run.record("SM3", 4096).statistics.figure
    assert "| `SM3` | 4096 B | %s" % _format.cycles(lead.ticks) in page
    assert "per-call mean (95 % CI)" in page
    assert "## Cycles/byte (CPU time per call)" in (run.path / "report" / "summary.md"
                                                   ).read_text()
    assert ngcc.validate(run.path).ok, ngcc.validate(run.path).differences


class _OneSpiky(FakeRunner):
    """Spikes in WChain's odd trials only: its mean stays imprecise, SM3's does not."""

    def trial(self, instance, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.spikes = 50.0 if instance.name == "WChain-V1-512" else 0.0
        return super().trial(instance, *args, **kwargs)


def test_interleaved_target_ci_extra_rounds_only_for_the_imprecise_job(fake):
    runner = _OneSpiky()
    run = fake(["WChain-V1-512", "SM3"], runner=runner, lengths=[32], trials=2,
               target_ci=5.0, max_trials=4).run()
    assert run.record("SM3", 32).statistics.trials == 2
    assert run.record("WChain-V1-512", 32).statistics.trials == 4
    assert runner.trials_run() == [("WChain-V1-512", 32, 0), ("SM3", 32, 0),
                                   ("WChain-V1-512", 32, 1), ("SM3", 32, 1),
                                   ("WChain-V1-512", 32, 2), ("WChain-V1-512", 32, 3)]
    assert [t.position for t in run.record("WChain-V1-512", 32).trials] == [0, 2, 4, 5]


def test_flags_of_a_job_warn_once_per_kind(fake):
    runner = FakeRunner(preempt={("SM3", 32, i): 1 for i in range(3)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MeasurementWarning)
        fake(["SM3"], runner=runner, lengths=[32], trials=3).run()
    preempted = [str(w.message) for w in caught if "preempted" in str(w.message)]
    assert len(preempted) == 1
    assert preempted[0].startswith("SM3 at 32 B: 3 trials flagged preempted; the worst: trial ")


# ------------------------------------------- failure is loud, cost up front (issue 17)

def _cli_campaign(monkeypatch, runner_factory, *extra: str) -> int:
    from ngcc.cli.main import main
    fixed_host(monkeypatch)
    monkeypatch.setattr(_child, "DriverRunner", runner_factory)
    monkeypatch.setattr(kat, "check", FakeKat())
    return main(["campaign", "SM3", "WChain-V1-512", "--quick", "--trials", "2",
                 "--trial-target", "0.002", "--lengths", "32,64,128", *extra])


def test_a_library_that_always_crashes_stops_the_campaign_early(fake, tmp_path):
    runner = CrashingRunner("SIGABRT (library setup failed)")
    campaign = fake(["SM3", "WChain-V1-512"], runner=runner, lengths=[32, 64, 128, 256])
    with pytest.raises(ngcc.CampaignFailedError) as caught:
        campaign.run()
    error = caught.value
    assert len(runner.log) == STOP_AFTER_FAILURES == error.failed   # 3 of 8 jobs tried
    assert error.cause == "crash: SIGABRT (library setup failed)"
    assert error.pending == 5 and "SIGABRT (library setup failed)" in str(error)
    statuses = [job.status for job in ngcc.load_run(tmp_path / "run").jobs]
    assert statuses == ["crash"] * 3 + ["pending"] * 5               # a rerun resumes


def test_calibrated_jobs_whose_trials_all_crash_stop_it_too(fake, tmp_path):
    cause = ChildError("error", "failed: sched_setaffinity: Invalid argument")
    runner = FakeRunner(fail={("SM3", n, 0): cause for n in (32, 64, 128, 256)})
    with pytest.raises(ngcc.CampaignFailedError, match="sched_setaffinity") as caught:
        fake(["SM3"], runner=runner, lengths=[32, 64, 128, 256]).run()
    assert caught.value.pending == 1 and len(runner.trials_run()) == 3


def test_the_cli_says_the_common_cause_with_status_1(tmp_path, monkeypatch, capsys):
    status = _cli_campaign(monkeypatch, CrashingRunner, "--run-dir", str(tmp_path / "run"))
    captured = capsys.readouterr()
    assert status == 1 and captured.out == ""        # no empty table, no "next: report"
    [line] = captured.err.splitlines()
    assert line.startswith("ngcc: error: the first 3 jobs tried all failed with the same "
                           "cause")
    assert line.count("crash: SIGABRT (library setup failed)") == 1


def test_failures_after_a_success_or_of_different_causes_do_not_stop_it(fake, tmp_path):
    def crash(cause):
        return ChildError("crash", "crashed: %s" % cause)
    after_success = FakeRunner(fail={("SM3", n, 0): crash("SIGSEGV") for n in (64, 128, 256)})
    run = fake(["SM3"], runner=after_success, lengths=[32, 64, 128, 256]).run()
    assert [job.status for job in run.jobs] == ["done", "crash", "crash", "crash"]
    mixed = FakeRunner(fail={("SM3", 32, None): crash("SIGSEGV"), ("SM3", 64, None): crash(
        "SIGBUS"), ("SM3", 128, None): crash("SIGSEGV"), ("SM3", 256, None): crash("SIGSEGV")})
    run = fake(["SM3"], runner=mixed, lengths=[32, 64, 128, 256],
               run_dir=tmp_path / "mixed").run()
    assert [job.status for job in run.jobs] == ["crash"] * 4
    assert status_counts(run.jobs) == "0 done, 4 crash"


def test_a_partly_failed_campaign_ends_with_the_count_and_status_1(tmp_path, monkeypatch,
                                                                    capsys):
    fail = {("SM3", n, 1): ChildError("timeout", "SM3 at %d B (trial 1) did not finish" % n)
            for n in (32, 64)}
    status = _cli_campaign(monkeypatch, lambda: FakeRunner(fail=fail), "--run-dir",
                           str(tmp_path / "run"))
    err = capsys.readouterr().err.splitlines()
    assert status == 1
    assert "ngcc: 2 jobs timeout (SM3 32 B, SM3 64 B): did not finish" in err
    assert err[-1] == "ngcc: 4 done, 2 timeout"


def test_a_run_that_measured_nothing_prints_no_table(tmp_path, monkeypatch, capsys):
    from ngcc.cli.main import main
    fixed_host(monkeypatch)
    monkeypatch.setattr(_child, "DriverRunner", CrashingRunner)
    monkeypatch.setattr(kat, "check", FakeKat())
    assert main(["campaign", "SM3", "--quick", "--lengths", "32,64",
                 "--run-dir", str(tmp_path / "run")]) == 1      # 2 jobs: too few to stop
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[-2:] == [
        "ngcc: 2 jobs crash (SM3 32 B, SM3 64 B): crashed: SIGABRT (library setup failed)",
        "ngcc: 0 done, 2 crash"]


def test_the_plan_is_printed_before_any_trial(fake, tmp_path):
    seen = []
    runner = FakeRunner()

    def on_plan(estimate):
        seen.append((estimate, len(runner.trials_run())))
    run = fake(["SM3", "WChain-V1-512"], runner=runner, on_plan=on_plan).run()
    [(estimate, trials_before)] = seen
    assert trials_before == 0 and run.complete
    assert (estimate.jobs, estimate.libraries, estimate.lengths, estimate.trials) == (4, 2, 2, 2)
    assert estimate.calls == sum(job.trials_planned * job.calls_per_trial for job in run.jobs)
    # the fake runner cannot measure its start: the constant, and the replacements
    # expected at the share of the host running the test
    assert not estimate.start.measured and estimate.share is not None
    each = expected_replacements(estimate.trials,
                                 slow_chance(estimate.start, "SM3", estimate.share))
    assert estimate.expected_replacements == pytest.approx(4 * each)
    # the fake's cold call is 500 cycles and a cost per byte: a warm call, the line's
    # intercept (the 500 cycles) less
    warm = warm_call_estimates(run.jobs)
    assert warm == pytest.approx({(job.label, job.message_bytes): job.t1_seconds
                                  - 500 / FREQUENCY_HZ for job in run.jobs})
    assert estimate.seconds == pytest.approx(sum(
        (job.trials_planned + each) * (CHILD_STARTUP_SECONDS + (
            2 * job.calls_per_trial + job.warmup_calls) * warm[job.label, job.message_bytes])
        for job in run.jobs))
    text = str(estimate)
    assert text.startswith("plan: 4 job(s) to measure (2 libraries × 2 length(s)), 2 "
                           "trial(s) each, %d timed calls: about " % estimate.calls)


def test_the_plan_with_a_target_names_the_range_it_may_take(fake, tmp_path):
    estimate = fake(["SM3"], target_ci=1.0, max_trials=6).dry_run()
    assert estimate.share is not None  # 6 trials of each job instead of 2 and those expected
    each = expected_replacements(2, slow_chance(estimate.start, "SM3", estimate.share))
    assert estimate.max_trials == 6 and estimate.max_seconds == pytest.approx(
        6 / (2 + each) * estimate.seconds)
    assert "2-6 trials each (--target-ci)" in str(estimate)
    assert "(2 trials each) to " in str(estimate)
    assert "(6 each, if no job reaches --target-ci sooner)" in str(estimate)


def test_dry_run_calibrates_and_measures_nothing(fake, tmp_path):
    runner = FakeRunner()
    estimate = fake(["SM3"], runner=runner).dry_run()
    assert runner.trials_run() == [] and len(runner.log) == 2        # two cold calls
    assert estimate.jobs == 2 and estimate.calls > 0
    again = FakeRunner()
    run = fake(["SM3"], runner=again).run()                        # resumes: no new t1
    assert [entry[0] for entry in again.log] == ["trial"] * 4 and run.complete
    done = fake(["SM3"], runner=FakeRunner()).dry_run()
    assert str(done) == "plan: nothing to measure; 2 job(s) done earlier are kept"


def test_cli_dry_run_prints_the_plan_on_stdout(tmp_path, monkeypatch, capsys):
    runners: list[FakeRunner] = []

    def runner():
        runners.append(FakeRunner())
        return runners[-1]
    status = _cli_campaign(monkeypatch, runner, "--dry-run", "--quiet",
                           "--run-dir", str(tmp_path / "run"))
    out = capsys.readouterr().out.splitlines()
    assert status == 0 and runners[0].trials_run() == []
    assert out[0].startswith("plan: 6 job(s) to measure")
    assert out[1].startswith("dry run: nothing measured")


def test_without_a_terminal_one_line_per_job_and_no_carriage_return(tmp_path, monkeypatch,
                                                                     capsys):
    status = _cli_campaign(monkeypatch, FakeRunner, "--run-dir", str(tmp_path / "run"))
    captured = capsys.readouterr()
    assert status == 0 and "\r" not in captured.err + captured.out
    err = captured.err.splitlines()
    assert err[0].startswith("plan: 6 job(s) to measure")
    measured = [line for line in err if line.startswith("measure ")]
    assert [line.split(":")[0] for line in measured] == ["measure %d/6" % i for i in
                                                          range(1, 7)]
    assert measured[0].startswith("measure 1/6: SM3 32 B  ")
    assert " ticks/byte (" in measured[0] and "(elapsed " in measured[0] and ", ETA " in measured[0]
    assert captured.out.startswith("instance ")                       # stdout: the table


def test_quiet_prints_nothing(tmp_path, monkeypatch, capsys):
    status = _cli_campaign(monkeypatch, FakeRunner, "--quiet",
                           "--run-dir", str(tmp_path / "run"))
    assert status == 0 and capsys.readouterr() == ("", "")


def test_interleaved_rounds_show_in_progress_lines(fake):
    import io

    from ngcc.base.progress import Progress
    stream = io.StringIO()
    fake(["WChain-V1-512", "SM3"], lengths=[32], trials=3,
         progress=Progress("lines", stream)).run()
    lines = [line for line in stream.getvalue().splitlines() if "round" in line]
    assert [line.split(" (")[0] for line in lines] == [
        "measure: round %d done" % k for k in (1, 2, 3)]
    assert "ETA" in lines[0] and "ETA" not in lines[-1] and "\r" not in stream.getvalue()


def test_the_cli_shows_one_job_per_kind_of_flag_and_a_line_for_the_rest(tmp_path, monkeypatch,
                                                                        capsys):
    # every trial of every job preempted: one warning as it comes, then one line per kind
    preempt = {(name, n, i): 1 for name in ("SM3", "WChain-V1-512") for n in (32, 64, 128)
               for i in range(2)}
    status = _cli_campaign(monkeypatch, lambda: FakeRunner(preempt=preempt), "--run-dir",
                           str(tmp_path / "run"))
    err = capsys.readouterr().err.splitlines()
    assert status == 0
    preempted = [line for line in err if "preempted" in line]
    assert len(preempted) == 2, preempted
    assert "further jobs with preempted trials: one line at the end" in preempted[0]
    assert preempted[1].startswith("ngcc: warning: 12 trial(s) in 6 job(s) flagged preempted; "
                                   "the worst: ")


def test_python_warns_of_flagged_trials_as_the_cli_shows_them(fake):
    # every trial of 6 jobs preempted: the first job's warning, then one for the run
    preempt = {(name, n, i): 1 for name in ("SM3", "WChain-V1-512") for n in (32, 64, 128)
               for i in range(2)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = fake(["SM3", "WChain-V1-512"], runner=FakeRunner(preempt=preempt),
                   lengths=[32, 64, 128], trials=2).run()
    flagged = [str(w.message) for w in caught if issubclass(w.category, ngcc.TrialFlagWarning)]
    assert len(run.records) == 6 and sum(len(r.statistics.flags) for r in run.records) == 12
    assert len(flagged) == 2, flagged
    assert "further jobs with preempted trials: one line at the end" in flagged[0]
    assert flagged[1].startswith("12 trial(s) in 6 job(s) flagged preempted; the worst: ")
    assert caught[-1].filename == __file__  # the summary points at the caller's run()


def test_the_campaigns_own_executor_measures_on_a_host_without_a_name(fake, monkeypatch):
    # A container may have no host name (platform.node() is ""): a result from another
    # machine must name its host, the campaign's own results need not.
    fixed = _host.fingerprint
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: replace(fixed(cpu), host=None))
    run = fake(["SM3", "pseudoXOF-512"], lengths=[32]).run()
    assert run.failed_jobs == [] and len(run.records) == 2
    assert {record.environment.host for record in run.records} == {None}
