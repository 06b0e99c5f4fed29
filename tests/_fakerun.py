"""A small run directory written without timing anything, for report and validate tests.

The evidence is built as the evidence model's objects, written through the real store
(``_records``) and its statistics made by the real ``_stats``; only the per-call cycle
counts are drawn from a seeded random generator instead of a cycle counter, so the
tests are fast and exact.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from ngcc.evidence import records as _records
from ngcc.evidence.model import (
    BuildEntry,
    BuildState,
    CampaignState,
    Counter,
    Environment,
    Implementation,
    Job,
    JobPlan,
    KatFacts,
    Plan,
    PlanLibrary,
    Provenance,
    RawRef,
    Record,
    Resources,
    Start,
    Trial,
    kat_log_relpath,
    operation,
    raw_relpath,
    record_relpath,
)
from ngcc.stats import trials as _stats

ENVIRONMENT = Environment(
    cpu_model="12th Gen Intel(R) Core(TM) i7-12700", machine="x86_64", cpu=2, cpu_count=20,
    cpu_max_mhz=2100.0, governor="performance", turbo=False, smt_siblings=(2,),
    virtualization=None, perf_event_paranoid=2, memory_mib=31788,
    counter=Counter(name="rdtsc", frequency_hz=2.1e9, overhead_min=24, overhead_median=26),
    load_average_start=(0.08, 0.15, 0.16), kernel="6.12.107+deb13-amd64",
    os="Debian GNU/Linux 13 (trixie)", compiler="gcc (Debian 14.2.0-19) 14.2.0",
    python="3.11.7", numpy="2.4.6", ngcc_version="0.1.0", git_commit="38b161e",
    git_dirty=False, executable="/usr/bin/python3")
GUIDE = ("-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-O2", "-fPIC", "-fvisibility=hidden")
# candidate, instance, family, digest bits, cycles = fixed + per_byte · bytes, KAT verdict
INSTANCES = (
    ("hash-22", "Pavelor-512", "Pavelor", 512, 35_000, 190.0, "PASS"),
    ("hash-22", "Pavelor-1024", "Pavelor", 1024, 70_000, 576.0, "MISMATCH"),
    ("baseline", "pseudoXOF-512", "pseudoXOF", 512, 1_500, 5.0, "PASS"),
)
LENGTHS = (32, 1024, 65536)
TRIALS = 3
RUN_ID = "20260925T100221Z"
SHA = "9f2c" * 16


def make_run(run_dir: Path, calls: int = 200, labels: dict[str, str] | None = None) -> Path:
    """Write a complete three-instance, three-length run into ``run_dir``; return it.
    ``labels``: instance name → the label it carries (default: its name)."""
    rng = np.random.default_rng(20260925)
    builds, jobs = [], []
    for candidate, name, family, bits, fixed, per_byte, verdict in INSTANCES:
        build = _build_entry(candidate, name, family, bits, verdict, (labels or {}).get(name))
        builds.append(build)
        log = run_dir / build.kat.log
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_bytes(kat_log_text(name, verdict))
        for length in LENGTHS:
            centre = fixed + per_byte * length
            trials = [np.rint(rng.gamma(400, centre / 400, calls)).astype(np.uint64)
                      for _ in range(TRIALS)]
            _write_job(run_dir, build, length, trials)
            jobs.append(_job(build, length, "done", t1=centre / 2.1e9, calls=calls))
    jobs.append(_job(builds[1], 8192, "crash",
                     error="Pavelor-1024 at 8192 B: SIGSEGV in measure, trial 0"))
    _records.dump_build(run_dir, BuildState(run_id=RUN_ID, libraries=tuple(builds)))
    _records.dump_campaign(run_dir, _campaign(builds, jobs))
    return run_dir


def kat_log_text(name: str, verdict: str) -> bytes:
    """The one-line KAT log the fake run holds for a library (its sha256 is in the
    evidence, as ``ngcc.kat.check``'s logs are)."""
    return f"{name}: {verdict}\n".encode()


def _build_entry(candidate: str, name: str, family: str, bits: int, verdict: str,
                 label: str | None = None) -> BuildEntry:
    gate = "pass" if verdict == "PASS" else "override"
    return BuildEntry(
        candidate=candidate, instance=name, label=label or name, family=family,
        digest_bits=bits,
        implementation=Implementation(variant="ref", library=f"/opt/ngcc/_lib/{name}.ref.so",
                                      library_sha256=SHA, compiler=ENVIRONMENT.compiler or "",
                                      cflags=GUIDE),
        elf_image_bytes=15905 + bits,
        kat=KatFacts(verdict=verdict, files=("2_12",),
                     log=kat_log_relpath(candidate, label or name),
                     log_sha256=hashlib.sha256(kat_log_text(name, verdict)).hexdigest(),
                     gate=gate,
                     timed_without_pass=gate == "override"))


def _job(build: BuildEntry, length: int, status: str, t1: float | None = None,
         calls: int | None = None, error: str | None = None) -> Job:
    return Job(candidate=build.candidate, instance=build.instance, label=build.label,
               message_bytes=length, status=status, t1_seconds=t1, calls_per_trial=calls,
               warmup_calls=3 if calls else None, trials_planned=TRIALS,
               estimated_seconds=0.1 if calls else None,
               record=record_relpath(build.candidate, build.label, length),
               raw=raw_relpath(build.candidate, build.label, length), error=error)


def _write_job(run_dir: Path, build: BuildEntry, length: int, trials: list[np.ndarray]) -> None:
    raw = raw_relpath(build.candidate, build.label, length)
    sha = _records.dump_raw(run_dir / raw, length, trials)
    entries = []
    for index, cycles in enumerate(trials):
        ticks = int(cycles.sum())
        loop_ns = round(ticks / 2.1 * 1.001)
        entries.append(Trial(
            index=index, started="2026-09-25T10:02:30Z", pid=4242 + index, cpu=2,
            calls=len(cycles), warmup_calls=3, counter="rdtsc", unit="tsc-ticks",
            frequency_hz=2.1e9, loop_ticks=ticks, loop_ns=loop_ns, overhead_min_ticks=24,
            overhead_median_ticks=26, baseline_rss_kib=1664 + 4 * index,
            peak_rss_kib=1772 + 4 * index, load_average=(0.1, 0.18, 0.17),
            statistics=_stats.trial_statistics(cycles, ticks, loop_ns / 1e9, 2.1e9)))
    statistics = _stats.aggregate(trials, [t.loop_seconds for t in entries],
                                  [t.statistics.counter_rate_ratio for t in entries], length, 2)
    _records.dump_record(run_dir, Record(
        run_id=RUN_ID, candidate=build.candidate, instance=build.instance, label=build.label,
        family=build.family, digest_bits=build.digest_bits, operation=operation(length),
        message_bytes=length, implementation=build.implementation, kat=build.kat,
        plan=JobPlan(t1_seconds=1e-5, calls_per_trial=len(trials[0]), warmup_calls=3,
                     trials_planned=TRIALS, trial_target_seconds=1.0, op_budget_seconds=900.0,
                     target_ci_percent=None, max_trials=TRIALS, cpu=2,
                     estimated_seconds=0.1),
        environment=ENVIRONMENT, trials=tuple(entries), statistics=statistics,
        resources=Resources(elf_image_bytes=build.elf_image_bytes,
                            baseline_rss_kib=max(t.baseline_rss_kib for t in entries),
                            peak_rss_kib=max(t.peak_rss_kib for t in entries)),
        raw=RawRef(path=raw, sha256=sha, calls_per_trial=tuple(t.calls for t in entries)),
        provenance=Provenance(created="2026-09-25T10:02:41Z", ngcc_version="0.1.0",
                              git_commit="38b161e", command=("ngcc", "campaign", "--quick"),
                              runner="tests._fakerun", message="synthetic")))


def _campaign(builds: list[BuildEntry], jobs: list[Job]) -> CampaignState:
    plan = Plan(
        libraries=tuple(PlanLibrary(candidate=b.candidate, instance=b.instance, label=b.label,
                                    variant="ref", library=b.implementation.library,
                                    library_sha256=SHA) for b in builds),
        lengths=LENGTHS, trials=TRIALS, trial_target_seconds=1.0, op_budget_seconds=900.0,
        max_calls=20000, min_calls=20, cpu=2, quick=True, target_ci_percent=None,
        max_trials=TRIALS, kat_files=("2_12",), kat_override=True)
    start = Start(at="2026-09-25T10:02:21Z", command=("ngcc", "campaign", "--quick"),
                  settings=None, load_average_start=ENVIRONMENT.load_average_start,
                  host_warnings=())
    return CampaignState(
        run_id=RUN_ID, created="2026-09-25T10:02:21Z", updated="2026-09-28T10:51:21Z",
        finished="2026-09-28T10:51:21Z", plan=plan, environment=ENVIRONMENT, starts=(start,),
        load_average_end=(0.12, 0.2, 0.18), jobs=tuple(jobs))
