"""A campaign's run directory: whose it is, whether its plan is this one, and which of
its records still stand (a record passes every check of ``ngcc validate``, or its job
is measured again)."""

from __future__ import annotations

from pathlib import Path

from ngcc.base.errors import CorruptRecordError, ForeignRunDirError, PlanMismatchError
from ngcc.evidence import records as _records
from ngcc.evidence.model import BuildEntry, BuildState, CampaignState, Job, Plan
from ngcc.evidence.run import RunRecord
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
