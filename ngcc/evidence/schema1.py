"""Reading run directories of schema 1 (ngcc before the evidence model): convert on read.

Schema 1 stored the same facts under other names: a library's file-name part was its
*stem* (``Wish512``, ``Wish512.opt``, ``Wish512.external``), which becomes its label;
a trial's ``total_cycles``/``total_seconds``/``counter_frequency_hz``/
``overhead_cycles`` become ``loop_ticks``/``loop_ns``/``frequency_hz``/
``overhead_min_ticks`` and its statistics move into ``statistics``; the starts were
``command``/``host_warnings`` plus a ``resumed`` list. Facts schema 1 did not record
(the implementation string, the trials' context switches …) read as empty or None.
Each function takes the parsed JSON of one file and returns it in the schema-2 form
that ``evidence.model`` checks; only reading converts (a schema-1 run is not resumed).
"""

from __future__ import annotations

from typing import Any

from ngcc.evidence import model as _model

SCHEMA_CAMPAIGN = "ngcc.campaign/1"
SCHEMA_BUILD = "ngcc.build/1"
SCHEMA_RECORD = "ngcc.record/1"
#: The schema-2 string of each schema-1 string.
UPGRADES = {SCHEMA_CAMPAIGN: _model.SCHEMA_CAMPAIGN, SCHEMA_BUILD: _model.SCHEMA_BUILD,
            SCHEMA_RECORD: _model.SCHEMA_RECORD}

_TRIAL_STATISTICS = ("mean_cycles", "median_cycles", "min_cycles", "p5_cycles", "p95_cycles",
                     "stdev_cycles", "counter_rate_ratio")


def label(entry: dict[str, Any]) -> Any:
    """The label of a schema-1 job, build entry or record: its stem (the instance name
    for ``ref`` and ``external``, else ``<name>.<variant>``, when not stored)."""
    if entry.get("stem"):
        return entry["stem"]
    variant = entry.get("variant", "ref")
    name = entry.get("instance")
    return name if variant in ("ref", "external") else "%s.%s" % (name, variant)


def upgrade(schema: str, data: dict[str, Any]) -> dict[str, Any]:
    """The schema-2 form of a schema-1 file's JSON object (``schema`` is its schema)."""
    upgraders = {SCHEMA_CAMPAIGN: _campaign, SCHEMA_BUILD: _build, SCHEMA_RECORD: _record}
    converted = upgraders[schema](dict(data))
    converted.pop("schema", None)
    return converted


def _campaign(data: dict[str, Any]) -> dict[str, Any]:
    environment = data.get("environment") or {}
    first = {"at": data.get("created"), "command": data.pop("command", None), "settings": None,
             "load_average_start": environment.get("load_average_start"),
             "host_warnings": data.pop("host_warnings", [])}
    later = [{"at": start.get("at"), "command": None, "settings": None,
              "load_average_start": start.get("load_average_start"),
              "host_warnings": start.get("host_warnings", [])}
             for start in data.pop("resumed", None) or []]
    plan = dict(data.get("plan") or {})
    plan["libraries"] = [{**_without(entry, "stem"), "label": label(entry)}
                         for entry in plan.pop("instances", [])]
    for key, default in (("trial_target_seconds", None), ("op_budget_seconds", None),
                         ("max_calls", 20000), ("min_calls", 20), ("target_ci_percent", None),
                         ("max_trials", plan.get("trials"))):
        plan.setdefault(key, default)
    return {**data, "plan": plan, "environment": _environment(environment),
            "starts": [first, *later], "jobs": [_job(job) for job in data.get("jobs", [])]}


def _job(job: Any) -> Any:
    if not isinstance(job, dict):
        return job
    job = {**_without(job, "stem"), "label": label(job)}
    for key in ("t1_seconds", "calls_per_trial", "warmup_calls", "estimated_seconds"):
        job.setdefault(key, None)
    try:
        job["record"] = _model.record_relpath(job["candidate"], job["label"],
                                              job["message_bytes"])
        job["raw"] = _model.raw_relpath(job["candidate"], job["label"], job["message_bytes"])
    except (KeyError, TypeError, ValueError):
        pass  # the model names the bad field
    return job


def _build(data: dict[str, Any]) -> dict[str, Any]:
    entries = []
    for entry in data.pop("instances", []):
        if not isinstance(entry, dict):
            entries.append(entry)
            continue
        implementation = {"variant": entry.get("variant"), "library": entry.get("library"),
                          "library_sha256": entry.get("library_sha256"),
                          "compiler": entry.get("compiler", ""),
                          "cflags": entry.get("cflags", [])}
        rest = _without(entry, "stem", "variant", "library", "library_sha256", "compiler",
                        "cflags")
        entries.append({**rest, "label": label(entry), "implementation": implementation})
    return {**data, "libraries": entries}


def _record(data: dict[str, Any]) -> dict[str, Any]:
    library = data.pop("library", None) or {}
    implementation = {"variant": data.pop("variant", "ref"), "library": library.get("path"),
                      "library_sha256": library.get("sha256"),
                      "compiler": library.get("compiler", ""),
                      "cflags": library.get("cflags", [])}
    environment = data.get("environment") or {}
    counter = (environment.get("counter") or {}).get("name", "")
    kat = dict(data.get("kat") or {})
    kat.setdefault("files", [])
    provenance = dict(data.get("provenance") or {})
    provenance["runner"] = provenance.pop("worker", "")
    provenance.setdefault("git_commit", None)
    provenance.setdefault("command", [])
    provenance.setdefault("message", "")
    return {**_without(data, "stem"), "label": label({**data,
                                                       "variant": implementation["variant"]}),
            "implementation": implementation, "kat": kat, "provenance": provenance,
            "environment": _environment(environment),
            "trials": [_trial(trial, counter) for trial in data.get("trials", [])]}


def _trial(trial: Any, counter: str) -> Any:
    if not isinstance(trial, dict):
        return trial
    seconds = trial.get("total_seconds")
    facts = {key: trial[key] for key in ("index", "started", "pid", "cpu", "calls",
                                         "warmup_calls", "baseline_rss_kib", "peak_rss_kib",
                                         "load_average") if key in trial}
    return {**facts, "counter": counter, "unit": _unit(counter),
            "frequency_hz": trial.get("counter_frequency_hz"),
            "loop_ticks": trial.get("total_cycles"),
            "loop_ns": round(seconds * 1e9) if isinstance(seconds, (int, float)) else seconds,
            "overhead_min_ticks": trial.get("overhead_cycles"), "overhead_median_ticks": None,
            "statistics": {key: trial.get(key) for key in _TRIAL_STATISTICS}}


def _unit(counter: str) -> str:
    return {"rdtsc": "tsc-ticks", "clock_monotonic_raw": "ns"}.get(counter, "timer-ticks")


def _environment(environment: Any) -> Any:
    if isinstance(environment, dict):
        return {"executable": None, **environment}
    return environment


def _without(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key not in keys}
