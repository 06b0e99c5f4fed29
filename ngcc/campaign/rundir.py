"""A campaign's run directory: whose it is, whether its plan is this one, and which of
its records still stand (a record passes every check of ``ngcc validate``, or its job
is measured again)."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from ngcc.base import files as _files
from ngcc.base.clock import utc_now
from ngcc.base.errors import (
    CorruptRecordError,
    ForeignRunDirError,
    MeasurementWarning,
    PlanMismatchError,
    RunDirError,
)
from ngcc.campaign.settings import CampaignSettings
from ngcc.evidence import records as _records
from ngcc.evidence import schema1 as _schema1
from ngcc.evidence.model import (
    BuildEntry,
    BuildState,
    CampaignState,
    Environment,
    Job,
    Plan,
    Remeasured,
    Start,
    raw_relpath,
    record_relpath,
)
from ngcc.evidence.run import RunRecord
from ngcc.library.registry import Instance
from ngcc.measure import locks as _locks
from ngcc.measure import plan as _plan
from ngcc.stats import recheck as _recheck


def refuse_foreign(path: Path, evaluation: bool = False) -> None:
    """Refuse a run directory that is a file, or a folder of something else: not empty
    and no campaign's (its own lock, files being written and an evaluation's files
    aside); for an ``evaluation``, also a campaign's run directory that is no
    evaluation's.

    Raises:
        ForeignRunDirError: saying which (nothing is written there).
    """
    if path.exists() and not path.is_dir():
        raise ForeignRunDirError("%s is a file, not a run directory; choose another "
                                 "--run-dir" % path)
    if not path.exists():
        return
    if (path / _records.CAMPAIGN_FILE).exists():
        if evaluation and not (path / _records.EVALUATION_FILE).exists():
            raise ForeignRunDirError("%s is the run directory of a campaign, not of an "
                                     "evaluation; choose a new --run-dir (nothing was "
                                     "written)" % path)
        return
    strays = sorted(p.name for p in path.iterdir() if not _is_temp_file(p)
                    and p.name != _locks.RUN_DIR_LOCK and p.name not in _records.EVALUATION_NAMES)
    if strays:
        raise ForeignRunDirError(
            "%s is not empty and has no %s, so it is not an ngcc run directory (it holds "
            "%s); choose a new or empty --run-dir (nothing was written)"
            % (path, _records.CAMPAIGN_FILE, ", ".join(strays[:3])))


def _is_temp_file(path: Path) -> bool:
    return path.name.startswith(".") and ".tmp-" in path.name


def fresh_jobs(libraries: dict[str, Instance], settings: CampaignSettings) -> list[Job]:
    """A new run's jobs: every library (by label) at every length, pending."""
    return [Job(candidate=inst.candidate, instance=inst.name, label=label, message_bytes=n,
                status="pending", t1_seconds=None, calls_per_trial=None, warmup_calls=None,
                trials_planned=settings.trials, estimated_seconds=None,
                record=record_relpath(inst.candidate, label, n),
                raw=raw_relpath(inst.candidate, label, n), error=None)
            for label, inst in libraries.items() for n in settings.lengths]


def check_plan(run_dir: Path, state: CampaignState, plan: Plan) -> None:
    """Refuse to resume a run directory started with another plan.

    Raises:
        PlanMismatchError: naming each setting that differs.
    """
    differences = _plan.plan_differences(state.plan, plan)
    if differences:
        raise PlanMismatchError(
            "run directory %s was started with another plan (%s); rerun with the run's "
            "settings to resume it, or choose a new --run-dir"
            % (run_dir, "; ".join(differences)))


def has_record(run_dir: Path, job: Job) -> bool:
    """Whether the job's record file exists.

    Raises:
        CorruptRecordError: a directory where the record or its raw file belongs,
            which a new measurement could not replace.
    """
    for where in (run_dir / job.record, run_dir / job.raw):
        if where.is_dir():
            raise CorruptRecordError(where, "is a directory, not a file",
                                     "Remove it to measure that job again.")
    return (run_dir / job.record).exists()


def record_defect(run_dir: Path, job: Job, run_id: str, build: dict[str, BuildEntry]
                  ) -> str | None:
    """What is wrong with the job's record, or None when ``ngcc validate`` finds
    nothing."""
    path = run_dir / job.record
    try:
        record = RunRecord.located(_records.load_job_record(run_dir, job), path, run_dir)
    except CorruptRecordError as exc:
        return exc.defect
    state = BuildState(run_id=run_id, libraries=tuple(build.values()))
    problems = _recheck.record_problems(record, run_id, state)
    return "; ".join(str(problem) for problem in problems) or None


def nothing_to_measure(run_dir: Path, plan: Plan, leak: int | None, cpu: int) -> bool:
    """Whether ``run_dir`` holds a run of this plan (on ``cpu``) with every job finished
    and no leak test asked (then no CPU is needed); refuses a plan that does not match
    first, before any CPU is waited for.

    Raises:
        PlanMismatchError: the run directory's plan differs.
        ForeignRunDirError: it is no run directory.
    """
    refuse_foreign(run_dir)
    if not (run_dir / _records.CAMPAIGN_FILE).is_file():
        return False
    try:
        if _records.schema_of(run_dir / _records.CAMPAIGN_FILE) == _schema1.SCHEMA_CAMPAIGN:
            return False
        state = _records.load_campaign(run_dir)
    except CorruptRecordError:
        return False  # the run says what is wrong once it is opened
    check_plan(run_dir, state, replace(plan, cpu=cpu))
    return leak is None and all(job.status != "pending" for job in state.jobs)


class RunDirectory:
    """A campaign's run directory while the campaign holds it: ``campaign.json``'s state
    and its jobs, saved (atomically, after the model's checks) after every change."""

    def __init__(self, path: Path):
        self.path = path
        self.jobs: list[Job] = []
        self._state: CampaignState | None = None

    @property
    def state(self) -> CampaignState:
        """``campaign.json`` as last saved."""
        if self._state is None:
            raise RuntimeError("the run directory is not open")
        return self._state

    def open(self, plan: Plan, start: Start, environment: Environment,
             libraries: dict[str, Instance], settings: CampaignSettings) -> None:
        """Start a new run directory, or resume the one there (same plan only), with
        this ``start`` recorded.

        Raises:
            ForeignRunDirError, PlanMismatchError, RunDirError, CorruptRecordError: the
                run directory cannot be used (the message says what to do).
        """
        refuse_foreign(self.path)
        if (self.path / _records.CAMPAIGN_FILE).exists():
            self._resume(plan, start)
            return
        self.path.mkdir(parents=True, exist_ok=True)
        _files.remove_temp_files(self.path)
        self.jobs = fresh_jobs(libraries, settings)
        self._state = CampaignState(
            run_id=self.path.name, created=start.at, updated=None, finished=None, plan=plan,
            environment=environment, starts=(start,), load_average_end=None,
            jobs=tuple(self.jobs))
        self.save()

    def _resume(self, plan: Plan, start: Start) -> None:
        if _records.schema_of(self.path / _records.CAMPAIGN_FILE) == _schema1.SCHEMA_CAMPAIGN:
            raise RunDirError(
                "%s was written by an older ngcc (evidence schema 1): it can still be read "
                "(ngcc report, ngcc validate, ngcc.load_run) but not resumed; start a new "
                "--run-dir" % self.path)
        state = _records.load_campaign(self.path)
        check_plan(self.path, state, plan)
        _files.remove_temp_files(self.path)
        self._state = state
        self.jobs = list(state.jobs)
        self.save(starts=(*state.starts, start), finished=None)

    def save(self, **changes: Any) -> None:
        """Write ``campaign.json`` with the jobs as they are and ``changes``."""
        self._state = replace(self.state, jobs=tuple(self.jobs), updated=utc_now(), **changes)
        _records.dump_campaign(self.path, self._state)

    def change_start(self, **changes: Any) -> None:
        """Save with ``changes`` to this start's entry (``remeasured``, ``resubmitted``)."""
        *earlier, start = self.state.starts
        self.save(starts=(*earlier, replace(start, **changes)))

    def reconcile(self, build: dict[str, BuildEntry]) -> None:
        """The records decide: a job whose record passes every check of ``ngcc validate``
        (it belongs to its job, its raw samples match their sha256 and its statistics
        recompute from them, its KAT and implementation facts are the library's in
        ``build``) is ``done``; any other job is measured (again), a defective record
        said in a warning and in this start's ``remeasured``."""
        remeasured: list[Remeasured] = []
        for index, job in enumerate(self.jobs):
            defect = record_defect(self.path, job, self.state.run_id, build) \
                if has_record(self.path, job) else "no record"
            if defect is None:
                self.jobs[index] = replace(job, status="done", error=None)
                continue
            if defect != "no record":
                remeasured.append(Remeasured(record=job.record, defect=defect))
                warnings.warn("%s at %d B: measured again, its record %s is defective (%s)"
                              % (job.label, job.message_bytes, self.path / job.record,
                                 defect), MeasurementWarning, stacklevel=3)
            self.jobs[index] = replace(job, status="pending", error=None)
        if remeasured:
            self.change_start(remeasured=tuple(remeasured))
