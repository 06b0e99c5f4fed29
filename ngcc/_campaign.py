"""A campaign: KAT gate → calibrate → plan → measure → write, resumable.

``Campaign(["WChain-V1-512", "SM3"]).run()`` times every instance at every message
length in trials of fresh, pinned child processes (``_worker``) and leaves the
evidence in a run directory (``_records``, format in ``docs/evidence-format.md``).
The plan rule is the independent NGCC harness's, so the figures are comparable:

    calls  = min(20000, max(ceil(T / t1), 20))
    if trials · calls · t1 > budget:  calls = max(1, floor(budget / (trials · t1)))
    warm-up = 3 if t1 < 50 ms, 1 if t1 < 5 s, else 0

The campaign can be stopped at any instant and run again with the same settings:
it skips every job whose record is complete and measures the rest.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from ngcc import _host, _locks, _records, _stats, _worker, kat
from ngcc._elf import elf_image_bytes
from ngcc._errors import (
    CorruptRecordError,
    ForeignRunDirError,
    HostError,
    KatGateError,
    MeasurementWarning,
    NgccError,
    PlanMismatchError,
)
from ngcc._measure import ChildError, TrialMeasurement, TrialRunner
from ngcc._registry import Instance, external_instance, instance, instances, stem
from ngcc._run import Run

#: The eight message lengths of the NGCC guide (S1–S8), in bytes.
DEFAULT_LENGTHS = (32, 128, 512, 1024, 4096, 8192, 16384, 65536)
MAX_CALLS = 20000
MIN_CALLS = 20
DEFAULT_TRIALS = 5
DEFAULT_TRIAL_TARGET = 1.0     # seconds of calls per trial (T)
DEFAULT_OP_BUDGET = 900.0      # seconds for all trials of one instance × length
QUICK_TRIALS = 3
QUICK_TRIAL_TARGET = 0.02
QUICK_OP_BUDGET = 5.0
TARGET_CI_MAX_TRIALS = 20      # the cap on trials in --target-ci mode
CHILD_STARTUP_SECONDS = 0.25   # a fresh interpreter with numpy, for the progress ETA
KAT_FILES = ("2_12", "2_23")


# ---------------------------------------------------------------- the plan rule

def calls_per_trial(t1: float, trial_target: float = DEFAULT_TRIAL_TARGET,
                    op_budget: float = DEFAULT_OP_BUDGET, trials: int = DEFAULT_TRIALS,
                    max_calls: int = MAX_CALLS, min_calls: int = MIN_CALLS) -> int:
    """Calls per trial for a cold-call time ``t1`` (seconds), by the harness's rule.

    Enough calls to fill ``trial_target`` seconds, at least ``min_calls`` and at most
    ``max_calls``; then, if all trials together would exceed ``op_budget``, as many as
    the budget allows (at least one).
    """
    if t1 <= 0:
        return max_calls
    calls = min(max_calls, max(math.ceil(trial_target / t1), min_calls))
    if trials * calls * t1 > op_budget:
        calls = max(1, math.floor(op_budget / (trials * t1)))
    return calls


def warmup_calls(t1: float) -> int:
    """Untimed warm-up calls before a trial: 3 if t1 < 50 ms, 1 if t1 < 5 s, else 0."""
    if t1 < 0.05:
        return 3
    return 1 if t1 < 5.0 else 0


# ---------------------------------------------------------------- small helpers

def _utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _new_run_id() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _json_roundtrip(data: Any) -> Any:
    """``data`` as it reads back from JSON (tuples become lists …), for comparisons."""
    return json.loads(json.dumps(data))


def _is_path(name: object) -> bool:
    return isinstance(name, os.PathLike) or (
        isinstance(name, str) and (os.sep in name or name.endswith(".so")))


def _resolve_instances(names: Sequence[str | os.PathLike[str] | Instance],
                       candidate: str | None, all_instances: bool) -> list[Instance]:
    """The instances a campaign measures, each once: with ``all_instances`` every
    built-in one; with ``candidate`` the built-in instances of that candidate (unless
    library paths are named: ``candidate`` is then their id); then the named ones."""
    chosen: list[Instance] = []
    if all_instances:
        chosen.extend(instances())
    elif candidate and not any(_is_path(name) for name in names):
        chosen.extend(i for i in instances() if i.candidate == candidate)
        if not chosen:
            raise NgccError("no built-in instance of candidate %r; candidates: %s"
                            % (candidate, ", ".join(sorted({i.candidate for i in instances()}))))
    for name in names:
        if candidate and _is_path(name):
            chosen.append(external_instance(Path(name), candidate))  # type: ignore[arg-type]
        else:
            chosen.append(instance(name))
    unique: dict[tuple[str, str], Instance] = {}
    for inst in chosen:
        unique.setdefault((inst.candidate, stem(inst)), inst)
    if not unique:
        raise NgccError("no instance to measure: name instances, or use --candidate ID or "
                        "--all (see `ngcc list`)")
    return list(unique.values())


def _plan_differences(stored: dict[str, Any], asked: dict[str, Any]) -> list[str]:
    def show(value: Any) -> str:
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return ", ".join("%s(%s)" % (v.get("instance"), str(v.get("library_sha256"))[:12])
                             for v in value)
        return json.dumps(value)
    return ["%s: %s in the run, %s asked" % (key, show(stored.get(key)), show(asked.get(key)))
            for key in sorted(set(stored) | set(asked)) if stored.get(key) != asked.get(key)]


def _check_positive(**settings: float | None) -> None:
    """Refuse a setting that is given but not a positive number (None means default)."""
    for name, value in settings.items():
        if value is not None and not value > 0:
            raise ValueError("%s must be positive, got %r" % (name, value))


def _is_temp_file(path: Path) -> bool:
    return path.name.startswith(".") and ".tmp-" in path.name


class KatChecker(Protocol):
    """What the KAT gate calls to check instances: :func:`ngcc.kat.check` by default.

    It returns one :class:`~ngcc.kat.KatResult` per instance, in order, each naming the
    KAT log it wrote under ``out_dir``; tests hand the campaign a fake.
    """

    def __call__(self, instances: Sequence[Instance], *, files: Sequence[str], out_dir: Path,
                 progress: bool, timeout: float | None) -> list[kat.KatResult]:
        ...


def _trial_facts(started: str, measured: TrialMeasurement) -> dict[str, Any]:
    return {"started": started, "pid": measured.pid, "cpu": measured.cpu,
            "cycles": measured.cycles, "total_cycles": measured.loop_ticks,
            "total_seconds": measured.loop_ns / 1e9, "frequency_hz": measured.frequency_hz,
            "overhead_cycles": measured.overhead_min_ticks,
            "baseline_rss_kib": measured.baseline_rss_kib,
            "peak_rss_kib": measured.peak_rss_kib,
            "load_average": list(measured.load_average)}


class Campaign:
    """A measurement campaign over instances × message lengths.

    Build it with the settings, inspect :attr:`plan`, then :meth:`run` it::

        run = ngcc.Campaign(["WChain-V1-512", "SM3"], quick=True).run()
        run.record("SM3", 1024).statistics["cycles_per_byte"]

    Args:
        instances: instance names (``"Wish512"``), :class:`Instance` objects or
            library paths.
        candidate: also measure every built-in instance of this candidate id, or,
            when library paths are named, the candidate id of those libraries.
        all_instances: measure every built-in instance.
        lengths: message lengths in bytes (default: the eight guide lengths).
        trials: trials per instance × length (default 5; 3 with ``quick``).
        trial_target: seconds of calls per trial, T of the plan rule (default 1.0;
            0.02 with ``quick``).
        op_budget: seconds allowed for all trials of one instance × length
            (default 900; 5 with ``quick``).
        cpu: the CPU every trial is pinned to (default: the last allowed one that no
            other running ngcc campaign holds; a resumed run keeps its CPU).
        run_dir: the run directory (default ``runs/<UTC start time>``); an existing
            run directory with the same plan is resumed.
        quick: a small plan for smoke tests and CI.
        strict: make an unfixed host an error instead of a warning.
        target_ci: keep adding trials (up to ``max_trials``) until the 95 %
            confidence interval of the mean is within this many percent.
        max_trials: the cap on trials in ``target_ci`` mode (default 20).
        allow_kat_fail: time instances whose KAT verdict is not PASS (each record
            is then marked ``timed_without_pass``; reports show ⚠).
        kat_files: the official KAT files the gate checks (default KAT_2_12, KAT_2_23).
        kat_timeout: seconds allowed per KAT file before the verdict is TIMEOUT
            (default: ``ngcc._child.KAT_TIMEOUTS``, 600 s for the quick files).
        trial_timeout: seconds a trial or calibration child may take before it is
            killed (default: ten times the trial's estimate plus 60 s; 120 s for the
            cold call).
        progress: show a progress bar on a terminal.
        command: the command line recorded as provenance.
        runner: what runs the cold calls and trials (default: each in a fresh pinned
            Python child, :class:`ngcc._worker.PythonChildRunner`).
        kat_checker: what the KAT gate calls (default :func:`ngcc.kat.check`).
    """

    def __init__(self, instances: Iterable[str | os.PathLike[str] | Instance] = (), *,
                 candidate: str | None = None, all_instances: bool = False,
                 lengths: Iterable[int] = DEFAULT_LENGTHS, trials: int | None = None,
                 trial_target: float | None = None, op_budget: float | None = None,
                 cpu: int | None = None, run_dir: str | os.PathLike[str] | None = None,
                 quick: bool = False, strict: bool = False, target_ci: float | None = None,
                 max_trials: int | None = None, allow_kat_fail: bool = False,
                 kat_files: Sequence[str] = KAT_FILES, kat_timeout: float | None = None,
                 trial_timeout: float | None = None,
                 progress: bool = True, command: Sequence[str] | None = None,
                 runner: TrialRunner | None = None, kat_checker: KatChecker | None = None):
        _check_positive(trials=trials, trial_target=trial_target, op_budget=op_budget,
                        target_ci=target_ci, max_trials=max_trials, kat_timeout=kat_timeout,
                        trial_timeout=trial_timeout)
        self.instances = _resolve_instances(list(instances), candidate, all_instances)
        self.lengths = [int(n) for n in lengths]
        if not self.lengths or min(self.lengths) < 1:
            raise ValueError("message lengths must be positive byte counts, got %s"
                             % self.lengths)
        self.trials = trials or (QUICK_TRIALS if quick else DEFAULT_TRIALS)
        self.trial_target = trial_target or (QUICK_TRIAL_TARGET if quick
                                             else DEFAULT_TRIAL_TARGET)
        self.op_budget = op_budget or (QUICK_OP_BUDGET if quick else DEFAULT_OP_BUDGET)
        self.cpu = _host.default_cpu() if cpu is None else _locks.check_cpu(cpu)
        self._cpu_asked = cpu  # None: run() takes a CPU no other campaign holds
        self.target_ci = target_ci
        self.max_trials = max(self.trials, max_trials or (
            TARGET_CI_MAX_TRIALS if target_ci else self.trials))
        self.quick, self.strict, self.allow_kat_fail = quick, strict, allow_kat_fail
        self.kat_files = list(kat_files)
        kat._normalise_files(self.kat_files)  # a typo is refused before the run directory
        self.kat_timeout = kat_timeout
        self.trial_timeout = trial_timeout
        self.progress = progress and sys.stderr.isatty()
        self.command = list(command) if command else ["ngcc.Campaign(...)"]
        self.runner: TrialRunner = runner if runner is not None else _worker.PythonChildRunner()
        self.kat_checker: KatChecker = kat_checker if kat_checker is not None else kat.check
        self.run_dir = Path(run_dir) if run_dir else Path("runs") / _new_run_id()
        self._by_key = {(i.candidate, stem(i)): i for i in self.instances}
        self._sha = {key: _records.sha256_file(i.library) for key, i in self._by_key.items()}
        self.plan = self._make_plan()
        self._environment: dict[str, Any] = {}
        self._state: dict[str, Any] = {}
        self._build: dict[tuple[str, str], dict[str, Any]] = {}

    # ------------------------------------------------------------ plan and state

    def _make_plan(self) -> dict[str, Any]:
        return _json_roundtrip({
            "instances": [{"candidate": i.candidate, "instance": i.name, "stem": stem(i),
                           "variant": i.variant, "library": str(i.library),
                           "library_sha256": self._sha[(i.candidate, stem(i))]}
                          for i in self.instances],
            "lengths": self.lengths, "trials": self.trials,
            "trial_target_seconds": self.trial_target, "op_budget_seconds": self.op_budget,
            "max_calls": MAX_CALLS, "min_calls": MIN_CALLS, "cpu": self.cpu,
            "quick": self.quick,
            "target_ci_percent": self.target_ci, "max_trials": self.max_trials,
            "kat_files": self.kat_files, "kat_override": self.allow_kat_fail,
        })

    def _fresh_jobs(self) -> list[dict[str, Any]]:
        return [{"candidate": i.candidate, "instance": i.name, "stem": stem(i),
                 "message_bytes": n, "status": "pending", "t1_seconds": None,
                 "calls_per_trial": None, "warmup_calls": None,
                 "trials_planned": self.trials, "estimated_seconds": None,
                 "record": _records.record_relpath(i.candidate, stem(i), n),
                 "raw": _records.raw_relpath(i.candidate, stem(i), n), "error": None}
                for i in self.instances for n in self.lengths]

    def _save(self) -> None:
        self._state["updated"] = _utc_now()
        _records.write_json(self.run_dir / _records.CAMPAIGN_FILE, self._state)

    def _open_run_dir(self, environment: dict[str, Any],
                      issues: list[dict[str, str]]) -> None:
        """Start a new run directory, or resume the one there (same plan only)."""
        path = self.run_dir
        if path.exists() and not path.is_dir():
            raise ForeignRunDirError("%s is a file, not a run directory; choose another "
                                     "--run-dir" % path)
        if (path / _records.CAMPAIGN_FILE).exists():
            self._resume(_records.load_campaign(path), environment, issues)
            return
        if path.exists() and any(not _is_temp_file(p) and p.name != _locks.RUN_DIR_LOCK
                                 for p in path.iterdir()):
            raise ForeignRunDirError(
                "%s is not empty and has no %s, so it is not an ngcc run directory; choose "
                "a new or empty --run-dir (nothing was written)" % (path, _records.CAMPAIGN_FILE))
        path.mkdir(parents=True, exist_ok=True)
        _records.remove_temp_files(path)
        self._state = {
            "schema": _records.SCHEMA_CAMPAIGN, "run_id": path.name, "created": _utc_now(),
            "updated": None, "finished": None, "resumed": [], "command": self.command,
            "plan": self.plan, "environment": environment, "load_average_end": None,
            "host_warnings": issues, "jobs": self._fresh_jobs()}
        self._save()

    def _resume(self, state: dict[str, Any], environment: dict[str, Any],
                issues: list[dict[str, str]]) -> None:
        differences = _plan_differences(state["plan"], self.plan)
        if differences:
            raise PlanMismatchError(
                "run directory %s was started with another plan (%s); rerun with the run's "
                "settings to resume it, or choose a new --run-dir"
                % (self.run_dir, "; ".join(differences)))
        _records.remove_temp_files(self.run_dir)
        for job in state["jobs"]:
            self._reconcile(job)
        state["resumed"] = [*state.get("resumed", []), {
            "at": _utc_now(), "load_average_start": environment["load_average_start"],
            "host_warnings": issues}]
        state["finished"] = None
        self._state = state
        self._save()

    def _reconcile(self, job: dict[str, Any]) -> None:
        """The record decides: a complete record is ``done``; anything else is retried."""
        record_path = self.run_dir / job["record"]
        if not record_path.exists():
            job.update(status="pending", error=None)
            return
        record = _records.load_record(record_path, self.run_dir)
        try:
            record.cycles()
        except CorruptRecordError as exc:
            raise CorruptRecordError(record_path, "its raw samples are unusable (%s)"
                                     % exc.defect) from exc
        job.update(status="done", error=None)

    # ------------------------------------------------------------ the phases

    def run(self) -> Run:
        """Run (or resume) the campaign; return the run it wrote.

        Raises:
            HostError: ``strict`` and the host is not fixed for measurement.
            ForeignRunDirError, PlanMismatchError, CorruptRecordError: the run
                directory cannot be used (the message says what to do).
            KatGateError: the KAT gate refused every instance.
            RunDirBusyError, CpuBusyError: another campaign holds the run directory,
                or the CPU (the message names its pid).
        """
        with _locks.hold_campaign(self.run_dir, self._cpu_asked) as cpu:
            self.cpu = self.plan["cpu"] = cpu
            return self._run_held()

    def _run_held(self) -> Run:
        environment = _host.fingerprint(self.cpu)
        issues = _host.host_warnings(environment)
        if self.strict and issues:
            raise HostError("the host is not fixed for measurement (--strict): "
                            + "; ".join(issue.message for issue in issues))
        self._open_run_dir(environment, [issue.to_json() for issue in issues])
        self._environment = environment
        for issue in issues:
            warnings.warn(issue.message, MeasurementWarning, stacklevel=2)
        self._kat_gate()
        self._calibrate()
        self._measure()
        self._finish()
        return Run(self.run_dir)

    def _jobs(self, *statuses: str) -> list[dict[str, Any]]:
        return [job for job in self._state["jobs"] if job["status"] in statuses]

    def _instance_of(self, job: dict[str, Any]) -> Instance:
        return self._by_key[(job["candidate"], job["stem"])]

    def _bar(self, total: float, desc: str) -> tqdm:
        """A progress bar on stderr; its ETA comes from the work done so far."""
        return tqdm(total=total, desc=desc, disable=not self.progress, leave=False,
                    dynamic_ncols=True, file=sys.stderr,
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}"
                               "{postfix}")

    # KAT gate ----------------------------------------------------------------

    def _kat_gate(self) -> None:
        """Check every instance against its official KAT files; refuse failures.

        Instances already checked in this run directory (same library sha256) keep
        their verdict; the others go through ``ngcc.kat.check``.
        """
        stored = (_records.load_build(self.run_dir)["instances"]
                  if (self.run_dir / _records.BUILD_FILE).exists() else [])
        known = {(e["candidate"], e["stem"]): e for e in stored}
        entries: dict[tuple[str, str], dict[str, Any]] = {}
        for key in self._by_key:
            entry = known.get(key)
            if entry and entry["library_sha256"] == self._sha[key]:
                entries[key] = entry
        to_check = [inst for key, inst in self._by_key.items() if key not in entries]
        if to_check:
            results = self.kat_checker(to_check, files=tuple(self.kat_files),
                                       out_dir=self.run_dir / "kat", progress=self.progress,
                                       timeout=self.kat_timeout)
            for inst, result in zip(to_check, results, strict=True):
                key = (inst.candidate, stem(inst))
                entries[key] = self._build_entry(inst, key, result.verdict, Path(result.log))
        self._build = {key: entries[key] for key in self._by_key}
        _records.write_json(self.run_dir / _records.BUILD_FILE, {
            "schema": _records.SCHEMA_BUILD, "run_id": self._state["run_id"],
            "instances": list(self._build.values())})
        self._apply_gate()

    def _gate(self, candidate: str, verdict: str) -> str:
        """How the gate treats a verdict: ``pass``, ``baseline``, ``override`` or ``refused``.

        A baseline instance (SM3, pseudohash, pseudoXOF) is no submission and has no
        official KAT: its ``NOKAT`` is admitted (its vectors are checked by the test
        suite). Any other verdict but ``PASS`` needs the explicit override.
        """
        if verdict == "PASS":
            return "pass"
        if candidate == "baseline" and verdict == "NOKAT":
            return "baseline"
        return "override" if self.allow_kat_fail else "refused"

    def _build_entry(self, inst: Instance, key: tuple[str, str], verdict: str,
                     log: Path) -> dict[str, Any]:
        gate = self._gate(inst.candidate, verdict)
        return {
            "candidate": inst.candidate, "instance": inst.name, "stem": key[1],
            "family": inst.family, "variant": inst.variant, "digest_bits": inst.digest_bits,
            "library": str(inst.library), "library_sha256": self._sha[key],
            "compiler": inst.compiler, "cflags": list(inst.cflags),
            "elf_image_bytes": elf_image_bytes(inst.library),
            "kat": {"verdict": verdict, "files": self.kat_files,
                    "log": Path(os.path.relpath(log, self.run_dir)).as_posix(),
                    "log_sha256": _records.sha256_file(log) if log.exists() else None,
                    "gate": gate, "timed_without_pass": gate == "override"}}

    def _apply_gate(self) -> None:
        refused = []
        for key, entry in self._build.items():
            if entry["kat"]["gate"] != "refused":
                continue
            verdict = entry["kat"]["verdict"]
            refused.append("%s %s" % (entry["instance"], verdict))
            message = ("%s: KAT verdict %s (log %s), so it is not timed; fix the "
                       "implementation, or rerun with --allow-kat-fail to time it anyway "
                       "(every record is then marked ⚠)"
                       % (entry["instance"], verdict, self.run_dir / entry["kat"]["log"]))
            for job in self._state["jobs"]:
                if (job["candidate"], job["stem"]) == key and job["status"] != "done":
                    job.update(status="refused", error=message)
            warnings.warn(message, MeasurementWarning, stacklevel=4)
        self._save()
        if refused and len(refused) == len(self._build):
            raise KatGateError(
                "the KAT gate refused every instance (%s); see the logs under %s, or rerun "
                "with --allow-kat-fail to time them anyway (marked ⚠)"
                % (", ".join(refused), self.run_dir / "kat"))

    # calibrate and plan ------------------------------------------------------

    def _calibrate(self) -> None:
        """One cold call per pending job without a t1, in a fresh pinned child; plan it."""
        todo = [job for job in self._jobs("pending") if job["t1_seconds"] is None]
        with self._bar(len(todo), "calibrate") as bar:
            for job in todo:
                bar.set_postfix_str("%s %d B" % (job["instance"], job["message_bytes"]))
                try:
                    t1 = self.runner.cold_call(self._instance_of(job), job["message_bytes"],
                                               self.cpu, self.trial_timeout
                                               or _worker.CALIBRATION_TIMEOUT)
                except ChildError as exc:
                    job.update(status=exc.status, error=str(exc))
                else:
                    self._plan_job(job, t1)
                self._save()
                bar.update(1)

    def _plan_job(self, job: dict[str, Any], t1: float) -> None:
        calls = calls_per_trial(t1, self.trial_target, self.op_budget, self.trials)
        warmup = warmup_calls(t1)
        job.update(t1_seconds=t1, calls_per_trial=calls, warmup_calls=warmup,
                   estimated_seconds=self.trials * (calls + warmup) * t1)

    # measure and write -------------------------------------------------------

    def _trial_cost(self, job: dict[str, Any]) -> float:
        return CHILD_STARTUP_SECONDS + (job["calls_per_trial"] + job["warmup_calls"]) * \
            job["t1_seconds"]

    def _measure(self) -> None:
        todo = self._jobs("pending")
        # The bar counts estimated seconds, so jobs of different cost move it fairly.
        total = sum(job["trials_planned"] * self._trial_cost(job) for job in todo)
        with self._bar(total, "measure") as bar:
            for job in todo:
                bar.set_postfix_str("%s %d B" % (job["instance"], job["message_bytes"]))
                try:
                    trials = self._run_trials(job, bar)
                except ChildError as exc:
                    job.update(status=exc.status, error=str(exc))
                else:
                    self._write_job(job, trials)
                    job.update(status="done", error=None)
                self._save()

    def _run_trials(self, job: dict[str, Any], bar: tqdm) -> list[dict[str, Any]]:
        """Run the planned trials (more in ``target_ci`` mode) of one job."""
        inst = self._instance_of(job)
        trials: list[dict[str, Any]] = []
        while not self._enough(trials):
            started = _utc_now()
            timeout = self.trial_timeout or _worker.trial_timeout(
                job["t1_seconds"], job["calls_per_trial"], job["warmup_calls"])
            measured = self.runner.trial(inst, job["message_bytes"], job["calls_per_trial"],
                                         job["warmup_calls"], self.cpu, len(trials), timeout)
            trials.append(_trial_facts(started, measured))
            if len(trials) <= job["trials_planned"]:  # extra --target-ci trials: unplanned
                bar.update(min(self._trial_cost(job), bar.total - bar.n))
        return trials

    def _enough(self, trials: list[dict[str, Any]]) -> bool:
        if len(trials) < self.trials:
            return False
        if self.target_ci is None or len(trials) >= self.max_trials:
            return True
        relative = _stats.relative_half_width(_stats.trial_means([t["cycles"] for t in trials]))
        return relative is not None and 100 * relative <= self.target_ci

    def _write_job(self, job: dict[str, Any], trials: list[dict[str, Any]]) -> None:
        """Raw samples first, then the record (the commit point)."""
        cycles = [t["cycles"] for t in trials]
        raw_sha = _records.dump_raw(self.run_dir / job["raw"], job["message_bytes"], cycles)
        _records.dump_record(self.run_dir / job["record"], self._record(job, trials, raw_sha))

    def _trial_entry(self, index: int, trial: dict[str, Any], warmup: int) -> dict[str, Any]:
        ratio = _stats.counter_rate_ratio(trial["total_cycles"], trial["total_seconds"],
                                          trial["frequency_hz"])
        return {"index": index, "started": trial["started"], "pid": trial["pid"],
                "cpu": trial["cpu"], "calls": len(trial["cycles"]), "warmup_calls": warmup,
                "total_cycles": trial["total_cycles"], "total_seconds": trial["total_seconds"],
                "counter_frequency_hz": trial["frequency_hz"], "counter_rate_ratio": ratio,
                **_stats.summarize_trial(trial["cycles"]),
                "overhead_cycles": trial["overhead_cycles"],
                "baseline_rss_kib": trial["baseline_rss_kib"],
                "peak_rss_kib": trial["peak_rss_kib"], "load_average": trial["load_average"]}

    def _record(self, job: dict[str, Any], trials: list[dict[str, Any]],
                raw_sha: str) -> dict[str, Any]:
        build = self._build[(job["candidate"], job["stem"])]
        entries = [self._trial_entry(i, t, job["warmup_calls"]) for i, t in enumerate(trials)]
        statistics = _stats.aggregate(
            [t["cycles"] for t in trials], [t["total_seconds"] for t in trials],
            [e["counter_rate_ratio"] for e in entries], job["message_bytes"], self.cpu)
        for flag in statistics["flags"]:
            warnings.warn("%s at %d B: %s" % (job["instance"], job["message_bytes"],
                                              flag["message"]), MeasurementWarning,
                          stacklevel=5)
        return {
            "run_id": self._state["run_id"], "candidate": job["candidate"],
            "instance": job["instance"], "stem": job["stem"], "family": build["family"],
            "variant": build["variant"], "digest_bits": build["digest_bits"],
            "operation": _records.operation(job["message_bytes"]),
            "message_bytes": job["message_bytes"],
            "library": {"path": build["library"], "sha256": build["library_sha256"],
                        "compiler": build["compiler"], "cflags": build["cflags"]},
            "kat": {key: build["kat"][key] for key in
                    ("verdict", "log", "log_sha256", "gate", "timed_without_pass")},
            "plan": {"t1_seconds": job["t1_seconds"], "calls_per_trial": job["calls_per_trial"],
                     "warmup_calls": job["warmup_calls"], "trials_planned": self.trials,
                     "trial_target_seconds": self.trial_target,
                     "op_budget_seconds": self.op_budget, "target_ci_percent": self.target_ci,
                     "max_trials": self.max_trials, "cpu": self.cpu,
                     "estimated_seconds": job["estimated_seconds"]},
            "environment": self._environment,
            "trials": entries,
            "statistics": statistics,
            "resources": {"elf_image_bytes": build["elf_image_bytes"],
                          "baseline_rss_kib": max(e["baseline_rss_kib"] for e in entries),
                          "peak_rss_kib": max(e["peak_rss_kib"] for e in entries)},
            "raw": {"path": job["raw"], "sha256": raw_sha,
                    "calls_per_trial": [e["calls"] for e in entries]},
            "provenance": self._provenance(),
        }

    def _provenance(self) -> dict[str, Any]:
        return {"created": _utc_now(), "ngcc_version": self._environment["ngcc_version"],
                "git_commit": self._environment["git_commit"], "command": self.command,
                "worker": "ngcc-driver trial (csrc/driver.c, ngcc/_child.py)",
                "message": "ngcc.default_message: byte i = (i·131 + message_bytes) mod 256"}

    def _finish(self) -> None:
        self._state["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        if not self._jobs("pending"):
            self._state["finished"] = _utc_now()
        self._save()

