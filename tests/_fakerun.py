"""A small run directory written without timing anything, for report and validate tests.

The evidence is written through the real writers (``_records``) and its statistics
through the real ``_stats``; only the per-call cycle counts are drawn from a seeded
random generator instead of a cycle counter, so the tests are fast and exact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ngcc import _records, _stats

ENVIRONMENT: dict[str, Any] = {
    "cpu_model": "12th Gen Intel(R) Core(TM) i7-12700", "machine": "x86_64", "cpu": 2,
    "cpu_count": 20, "cpu_max_mhz": 2100.0, "governor": "performance", "turbo": False,
    "smt_siblings": [2], "virtualization": None, "perf_event_paranoid": 2,
    "memory_mib": 31788,
    "counter": {"name": "rdtsc", "frequency_hz": 2.1e9, "overhead_min": 24,
                "overhead_median": 26},
    "load_average_start": [0.08, 0.15, 0.16], "kernel": "6.12.107+deb13-amd64",
    "os": "Debian GNU/Linux 13 (trixie)", "compiler": "gcc (Debian 14.2.0-19) 14.2.0",
    "python": "3.11.7", "numpy": "2.4.6", "ngcc_version": "0.1.0",
    "git_commit": "38b161e", "git_dirty": False,
}
GUIDE = ["-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-O2", "-fPIC", "-fvisibility=hidden"]
# candidate, instance, family, digest bits, cycles = fixed + per_byte · bytes, KAT verdict
INSTANCES = (
    ("hash-22", "Pavelor-512", "Pavelor", 512, 35_000, 190.0, "PASS"),
    ("hash-22", "Pavelor-1024", "Pavelor", 1024, 70_000, 576.0, "MISMATCH"),
    ("baseline", "pseudoXOF-512", "pseudoXOF", 512, 1_500, 5.0, "PASS"),
)
LENGTHS = (32, 1024, 65536)
TRIALS = 3
RUN_ID = "20260925T100221Z"


def make_run(run_dir: Path, calls: int = 200) -> Path:
    """Write a complete three-instance, three-length run into ``run_dir``; return it."""
    rng = np.random.default_rng(20260925)
    builds, jobs = [], []
    for candidate, name, family, bits, fixed, per_byte, verdict in INSTANCES:
        build = _build_entry(candidate, name, family, bits, verdict)
        builds.append(build)
        (run_dir / build["kat"]["log"]).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / build["kat"]["log"]).write_text(f"{name}: {verdict}\n")
        for length in LENGTHS:
            centre = fixed + per_byte * length
            trials = [np.rint(rng.gamma(400, centre / 400, calls)).astype(np.uint64)
                      for _ in range(TRIALS)]
            _write_job(run_dir, build, length, trials, calls)
            jobs.append({"candidate": candidate, "instance": name, "message_bytes": length,
                         "status": "done", "t1_seconds": centre / 2.1e9,
                         "calls_per_trial": calls, "warmup_calls": 3,
                         "trials_planned": TRIALS, "estimated_seconds": 0.1,
                         "record": _records.record_relpath(candidate, name, length),
                         "raw": _records.raw_relpath(candidate, name, length), "error": None})
    jobs.append({"candidate": "hash-22", "instance": "Pavelor-1024", "message_bytes": 8192,
                 "status": "crash", "record": None, "raw": None,
                 "error": "Pavelor-1024 at 8192 B: SIGSEGV in measure, trial 0"})
    _records.write_json(run_dir / _records.BUILD_FILE, {
        "schema": _records.SCHEMA_BUILD, "run_id": RUN_ID, "instances": builds})
    _records.write_json(run_dir / _records.CAMPAIGN_FILE, _campaign(builds, jobs))
    return run_dir


def _build_entry(candidate: str, name: str, family: str, bits: int, verdict: str
                 ) -> dict[str, Any]:
    log = _records.kat_log_relpath(candidate, name)
    return {"candidate": candidate, "instance": name, "family": family, "variant": "ref",
            "digest_bits": bits, "library": f"/opt/ngcc/_lib/{name}.ref.so",
            "library_sha256": "9f2c" * 16, "compiler": ENVIRONMENT["compiler"],
            "cflags": GUIDE, "elf_image_bytes": 15905 + bits,
            "kat": {"verdict": verdict, "files": ["2_12"], "log": log,
                    "log_sha256": "f46ede9cb33dfcdf" * 4, "override": verdict != "PASS",
                    "timed_without_pass": verdict != "PASS"}}


def _write_job(run_dir: Path, build: dict[str, Any], length: int, trials: list[np.ndarray],
               calls: int) -> None:
    raw = _records.raw_relpath(build["candidate"], build["instance"], length)
    sha = _records.dump_raw(run_dir / raw, length, trials)
    entries = []
    for index, cycles in enumerate(trials):
        total = int(cycles.sum())
        seconds = total / 2.1e9 * 1.001
        entries.append({
            "index": index, "started": "2026-09-25T10:02:30Z", "pid": 4242 + index,
            "cpu": 2, "calls": calls, "warmup_calls": 3, "total_cycles": total,
            "total_seconds": seconds, "counter_frequency_hz": 2.1e9,
            "counter_rate_ratio": _stats.counter_rate_ratio(total, seconds, 2.1e9),
            **_stats.summarize_trial(cycles), "overhead_cycles": 26,
            "baseline_rss_kib": 1664 + 4 * index, "peak_rss_kib": 1772 + 4 * index,
            "load_average": [0.1, 0.18, 0.17]})
    statistics = _stats.aggregate(trials, [e["total_seconds"] for e in entries],
                                  [e["counter_rate_ratio"] for e in entries], length, 2)
    record = _records.record_relpath(build["candidate"], build["instance"], length)
    _records.dump_record(run_dir / record, {
        "run_id": RUN_ID, "candidate": build["candidate"], "instance": build["instance"],
        "family": build["family"], "variant": "ref", "digest_bits": build["digest_bits"],
        "operation": _records.operation(length), "message_bytes": length,
        "library": {"path": build["library"], "sha256": build["library_sha256"],
                    "compiler": build["compiler"], "cflags": build["cflags"]},
        "kat": {key: build["kat"][key] for key in
                ("verdict", "log", "log_sha256", "timed_without_pass")},
        "plan": {"t1_seconds": 1e-5, "calls_per_trial": calls, "warmup_calls": 3,
                 "trials_planned": TRIALS, "cpu": 2},
        "environment": ENVIRONMENT, "trials": entries, "statistics": statistics,
        "resources": {"elf_image_bytes": build["elf_image_bytes"],
                      "baseline_rss_kib": max(e["baseline_rss_kib"] for e in entries),
                      "peak_rss_kib": max(e["peak_rss_kib"] for e in entries)},
        "raw": {"path": raw, "sha256": sha, "calls_per_trial": [calls] * TRIALS},
        "provenance": {"created": "2026-09-25T10:02:41Z", "ngcc_version": "0.1.0"}})


def _campaign(builds: list[dict[str, Any]], jobs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema": _records.SCHEMA_CAMPAIGN, "run_id": RUN_ID,
        "created": "2026-09-25T10:02:21Z", "updated": "2026-09-28T10:51:21Z",
        "finished": "2026-09-28T10:51:21Z", "command": ["ngcc", "campaign", "--quick"],
        "plan": {"instances": [{k: b[k] for k in ("candidate", "instance", "variant",
                                                  "library", "library_sha256")}
                               for b in builds],
                 "lengths": list(LENGTHS), "trials": TRIALS, "cpu": 2, "quick": True,
                 "kat_files": ["2_12"], "kat_override": True},
        "environment": ENVIRONMENT, "load_average_end": [0.12, 0.2, 0.18],
        "host_warnings": [], "jobs": jobs,
    }
