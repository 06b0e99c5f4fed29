"""The evidence model and its codec: every field checked on the way in, nothing lost on
the way out, names and derived paths refused when they could leave the run directory."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ngcc.base.codec import FieldError
from ngcc.evidence import model as _model

DATA = Path(__file__).resolve().parent / "data" / "run-quick"
RECORD = json.loads((DATA / "records/hash-34/WChain-V1-512__hash_32.json").read_text())
CAMPAIGN = json.loads((DATA / "campaign.json").read_text())
BUILD = json.loads((DATA / "build.json").read_text())
for data in (RECORD, CAMPAIGN, BUILD):
    data.pop("schema")


def edited(data: dict, path: str, value: object) -> dict:
    """A deep copy of ``data`` with the dotted ``path`` set to ``value`` (``...`` deletes)."""
    data = copy.deepcopy(data)
    *parents, last = path.split(".")
    target = data
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is ...:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return data


def later_fields_at_defaults(data: object, dumped: object, where: str = "") -> list[str]:
    """Where ``dumped`` differs from ``data`` other than by fields added after ``data``
    was written, each at the value that means "not recorded" (null, "mean", "harness",
    version 1, empty)."""
    if isinstance(data, dict) and isinstance(dumped, dict):
        found = [where + key for key in data if key not in dumped]
        for key, value in dumped.items():
            if key in data:
                found += later_fields_at_defaults(data[key], value, where + key + ".")
            elif value not in (None, "mean", "harness", 1, []):
                found.append(where + key)
        return found
    if isinstance(data, list) and isinstance(dumped, list) and len(data) == len(dumped):
        return [f for a, b in zip(data, dumped, strict=True)
                for f in later_fields_at_defaults(a, b, where)]
    return [] if data == dumped else [where]


@pytest.mark.parametrize(("cls", "data"), [(_model.Record, RECORD),
                                           (_model.CampaignState, CAMPAIGN),
                                           (_model.BuildState, BUILD)],
                         ids=["record", "campaign", "build"])
def test_round_trip_is_exact(cls, data):
    value = cls.from_json(data)
    # written before the fields of statistics version 2, the warm plan and the order:
    # those read as "not recorded", and nothing else changes
    assert later_fields_at_defaults(data, value.to_json()) == []
    if cls is _model.Record:
        assert "version" not in data["statistics"] and value.statistics.version == 1
    assert cls.from_json(json.loads(json.dumps(value.to_json()))) == value


def test_readers_use_attributes():
    record = _model.Record.from_json(RECORD)
    assert record.statistics.calls == sum(t.calls for t in record.trials)
    assert record.trials[0].statistics.counter_rate_ratio > 0
    assert record.implementation.description.startswith("portable C99")
    assert record.kat.gate == "pass" and not record.kat.retried
    assert record.relpath == "records/hash-34/WChain-V1-512__hash_32.json"
    assert isinstance(record.trials, tuple) and isinstance(record.trials[0].load_average, tuple)


# Each defect names the field by its dotted path; the message says what is wrong.
RECORD_DEFECTS = [
    ("statistics.mean_cycles", "fast", r"statistics\.mean_cycles is 'fast', not a number"),
    ("statistics.trials", True, r"statistics\.trials is True, not an integer"),
    ("statistics.trials", 2.0, r"statistics\.trials is 2\.0, not an integer"),
    ("statistics.trials", 0, r"statistics\.trials is 0, below 1"),
    ("statistics.mb_per_s", float("nan"), r"statistics\.mb_per_s is nan, not a finite"),
    ("trials.0.calls", -5, r"trials\[0\]\.calls is -5, below 1"),
    ("trials.0.unit", "furlongs", r"trials\[0\]\.unit is 'furlongs', not one of"),
    ("trials.0.load_average", [1.0, 2.0], r"trials\[0\]\.load_average has 2 items, not 3"),
    ("trials.0.started", "yesterday", r"trials\[0\]\.started is 'yesterday', not a UTC"),
    ("trials", [], r"trials is empty"),
    ("trials.0.index", 3, r"trials\[0\]\.index is 3, not 0"),
    ("trials.0.statistics", 7, r"trials\[0\]\.statistics is 7, not a JSON object"),
    ("kat.verdict", "FINE", r"kat\.verdict is 'FINE', not one of PASS"),
    ("kat.timed_without_pass", True, r"kat\.timed_without_pass is True but the gate is 'pass'"),
    ("kat.log", "../../etc/passwd", r"kat\.log is '\.\./\.\./etc/passwd', but its names give"),
    ("raw.path", "/tmp/elsewhere.npz", r"raw\.path is '/tmp/elsewhere\.npz', but its names"),
    ("raw.sha256", "zz", r"raw\.sha256 is 'zz', not a hex sha256"),
    ("label", "../../PWNED", r"label is '\.\./\.\./PWNED', not a valid name"),
    ("candidate", "a b", r"candidate is 'a b', not a valid name"),
    ("operation", "hash_33", r"operation is 'hash_33', but its names give 'hash_32'"),
    ("message_bytes", 0, r"message_bytes is 0, below 1"),
    ("statistics", ..., r"statistics is missing"),
    ("implementation.library_sha256", ..., r"implementation\.library_sha256 is missing"),
    ("bonus", 1, r"bonus is not a field of this file's schema"),
    ("trials.0.bonus", 1, r"trials\[0\]\.bonus is not a field"),
]


@pytest.mark.parametrize(("path", "value", "message"), RECORD_DEFECTS,
                         ids=[d[0] + ":" + repr(d[1])[:12] for d in RECORD_DEFECTS])
def test_a_defective_record_names_the_field(path, value, message):
    with pytest.raises(FieldError, match=message):
        _model.Record.from_json(edited(RECORD, path, value))


CAMPAIGN_DEFECTS = [
    ("jobs.0.status", "finished", r"jobs\[0\]\.status is 'finished', not one of pending"),
    ("jobs.0.record", "../outside.json", r"jobs\[0\]\.record is '\.\./outside\.json'"),
    ("jobs.0.label", "Nobody", r"jobs\[0\]\.record is .*, but its names give "
                               r"'records/hash-34/Nobody__hash_32\.json'"),
    ("jobs.1", "x", r"jobs\[1\] is 'x', not a JSON object"),
    ("plan.lengths", [], r"plan\.lengths is empty"),
    ("plan.lengths.0", 0, r"plan\.lengths\[0\] is 0, below 1"),
    ("plan.cpu", -1, r"plan\.cpu is -1, below 0"),
    ("starts", [], r"starts is empty"),
    ("created", 12, r"created is 12, not a string"),
    ("environment.counter", "rdtsc", r"environment\.counter is 'rdtsc', not a JSON object"),
]


@pytest.mark.parametrize(("path", "value", "message"), CAMPAIGN_DEFECTS,
                         ids=[d[0] for d in CAMPAIGN_DEFECTS])
def test_a_defective_campaign_names_the_field(path, value, message):
    with pytest.raises(FieldError, match=message):
        _model.CampaignState.from_json(edited(CAMPAIGN, path, value))


def test_a_job_of_no_planned_library_is_refused():
    stranger = edited(edited(edited(CAMPAIGN, "jobs.0.label", "Nobody"), "jobs.0.record",
                             "records/hash-34/Nobody__hash_32.json"),
                      "jobs.0.raw", "raw/hash-34/Nobody__hash_32.npz")
    with pytest.raises(FieldError, match=r"jobs\[0\]\.label 'Nobody' is no library of the plan"):
        _model.CampaignState.from_json(stranger)


def test_a_failed_job_needs_its_error_and_jobs_are_unique():
    failed = edited(CAMPAIGN, "jobs.0.status", "crash")
    with pytest.raises(FieldError, match=r"jobs\[0\]\.error is empty for a crash job"):
        _model.CampaignState.from_json(failed)
    twice = copy.deepcopy(CAMPAIGN)
    twice["jobs"].append(twice["jobs"][0])
    with pytest.raises(FieldError, match=r"WChain-V1-512 at 32 B is listed twice"):
        _model.CampaignState.from_json(twice)


def test_labels_are_unique_in_build_and_plan():
    twice = copy.deepcopy(BUILD)
    twice["libraries"][1] = {**twice["libraries"][0]}
    with pytest.raises(FieldError, match=r"libraries\[1\]\.label 'WChain-V1-512' is given to two"):
        _model.BuildState.from_json(twice)
    plan = copy.deepcopy(CAMPAIGN)
    plan["plan"]["libraries"][1]["label"] = "WChain-V1-512"
    with pytest.raises(FieldError, match=r"plan\.libraries\[1\]\.label"):
        _model.CampaignState.from_json(plan)


def test_optional_trial_facts_may_be_absent_and_read_as_none():
    """A trial written before a fact existed still reads (the runner did not say)."""
    data = edited(RECORD, "trials.0.voluntary_switches", ...)
    assert _model.Record.from_json(data).trials[0].voluntary_switches is None


def test_names_build_the_file_names():
    assert _model.record_relpath("hash-22", "Pavelor-512@perf", 64) == \
        "records/hash-22/Pavelor-512@perf__hash_64.json"
    assert _model.plot_stem_distribution("Pavelor-512.external", 32) == \
        "Pavelor-512.external__hash_32-calls"


def test_trials_of_a_record_are_in_their_order():
    data = edited(RECORD, "trials.0.position", 5)
    data = edited(data, "trials.1.position", 3)
    with pytest.raises(FieldError, match=r"trials\[1\]\.position.*not after trial 0's 5"):
        _model.Record.from_json(data)
    assert _model.Record.from_json(edited(data, "trials.1.position", 9)).trials[1].position == 9
