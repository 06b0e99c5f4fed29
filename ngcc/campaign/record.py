"""A job's record, assembled from its trials and written: raw samples first, then the
record (the commit point). The warnings a finished job gives (``--strict``'s repeats,
a missed ``--target-ci``, flagged trials) are said here, once per record; flagged trials
collapsed across a run (:class:`FlagWarnings`) for every entry point alike."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

from ngcc.base import format as _format
from ngcc.base.clock import utc_now
from ngcc.base.errors import MeasurementWarning, TrialFlagWarning
from ngcc.campaign.settings import CampaignSettings
from ngcc.evidence import figures as _figures
from ngcc.evidence import records as _records
from ngcc.evidence.model import (
    BuildEntry,
    Environment,
    Job,
    JobPlan,
    Provenance,
    RawRef,
    Record,
    RejectedTrial,
    Resources,
    operation,
)
from ngcc.measure.job import Taken
from ngcc.stats import flags as _flags
from ngcc.stats import groups as _groups
from ngcc.stats import intervals as _intervals
from ngcc.stats import trials as _stats

#: The message every trial hashes, as records state it.
MESSAGE = "ngcc.default_message: byte i = (i·131 + message_bytes) mod 256"


def runner_name(runner: object) -> str:
    """``ngcc.driver.child.DriverRunner``: the runner as records name it."""
    return "%s.%s" % (type(runner).__module__, type(runner).__qualname__)


def target_missed(job: Job, trials: int, reached: float | None, target: float,
                  statistic: str) -> str:
    """The warning of a job that stopped at ``--max-trials`` above ``--target-ci``."""
    return ("%s at %d B missed --target-ci %g %%: it stopped at --max-trials %d with the "
            "95 %% CI of the %s at %s; raise --max-trials, lengthen the trials "
            "(--trial-target), or measure on an isolated CPU (--cpu N, `ngcc check`)"
            % (job.label, job.message_bytes, target, trials, statistic,
               "±%.2f %%" % reached if reached is not None else "— (one trial)"))


class FlagWarnings:
    """A run's trial-flag warnings collapsed: the first job's warning of each kind of flag
    as it comes, the others counted, then :meth:`warn_summary` one warning per kind for
    the run (a campaign on a busy host would otherwise warn for nearly every job)."""

    def __init__(self) -> None:
        self.held: dict[str, int] = {}

    def warn(self, message: str, code: str, stacklevel: int) -> None:
        """Warn of one job's ``code`` trials if it is the first such job of the run."""
        if code in self.held:
            self.held[code] += 1
            return
        self.held[code] = 0
        warnings.warn(TrialFlagWarning("%s (further jobs with %s trials: one line at the "
                                       "end)" % (message, code), code), stacklevel=stacklevel + 1)

    def summary(self, records: Sequence[Record]) -> list[tuple[str, str]]:
        """(code, line) per kind of flag that had jobs held back: trials, jobs, the worst."""
        return [(code, "%d trial(s) in %d job(s) flagged %s; the worst: %s at %d B: %s" % (
            len(flagged), len({(r.label, r.message_bytes) for r, _ in flagged}), code,
            worst_record.label, worst_record.message_bytes, worst.message))
            for code, flagged, (worst_record, worst) in _groups.flag_kinds(records)
            if self.held.get(code)]

    def warn_summary(self, records: Sequence[Record], stacklevel: int) -> None:
        """One :class:`TrialFlagWarning` per kind held back (:meth:`summary`)."""
        for code, line in self.summary(records):
            warnings.warn(TrialFlagWarning(line, code), stacklevel=stacklevel + 1)


def per_byte(record: Record) -> str:
    """``16.3 ticks/byte (CPU time)``: a finished job's leading figure for its progress
    line, in the counter's unit (``ns`` where the counter gave nanoseconds)."""
    lead = record.statistics.figure
    return "%s %s/byte (%s)" % (_format.cycles_per_byte(lead.per_byte(record.message_bytes)),
                                _figures.unit_word(t.unit for t in record.trials),
                                lead.figure.short)


def write_job(run_dir: Path, job: Job, taken: Sequence[Taken],
              rejected: Sequence[RejectedTrial], *, run_id: str, build: BuildEntry,
              settings: CampaignSettings, order: str, runner: str, env: Environment,
              flags: FlagWarnings | None = None) -> Record:
    """Write the job's raw samples, then its record (:func:`job_record`); return it."""
    raw_sha = _records.dump_raw(_records.path_in(run_dir, job.raw), job.message_bytes,
                                [t.measured.cycles for t in taken])
    record = job_record(job, taken, rejected, raw_sha, run_id=run_id, build=build,
                        settings=settings, order=order, runner=runner, env=env, flags=flags)
    _records.dump_record(run_dir, record)
    return record


def job_record(job: Job, taken: Sequence[Taken], rejected: Sequence[RejectedTrial],
               raw_sha: str, *, run_id: str, build: BuildEntry, settings: CampaignSettings,
               order: str, runner: str, env: Environment,
               flags: FlagWarnings | None = None) -> Record:
    """The record of a finished job: its plan, its trials (their statistics as measured)
    and the job's statistics, on ``env`` (the host and CPU its trials ran on); its
    flagged trials told through ``flags`` (None: a warning per kind of this job)."""
    entries = tuple(t.trial for t in taken)
    statistics = _stats.aggregate_trials(
        entries, [t.measured.cycles for t in taken], job.message_bytes, env.cpu)
    if rejected:
        warnings.warn("%s at %d B: --strict rejected and repeated %d disturbed trial(s) "
                      "(%s)" % (job.label, job.message_bytes, len(rejected), "; ".join(
                          r.message for r in rejected[:2])), MeasurementWarning,
                      stacklevel=6)
    reached = _intervals.target_reached_percent([t.measured.cycles for t in taken],
                                                settings.statistic) \
        if settings.target_ci is not None else None
    target = settings.target_ci
    if target is not None and (reached is None or reached > target):
        warnings.warn(MeasurementWarning(target_missed(
            job, len(taken), reached, target, settings.statistic)), stacklevel=6)
    for code, count, worst in _flags.flag_groups(statistics.flags):
        (flags or FlagWarnings()).warn(
            "%s at %d B: %s" % (job.label, job.message_bytes, worst.message)
            if count == 1 else "%s at %d B: %d trials flagged %s; the worst: %s"
            % (job.label, job.message_bytes, count, code, worst.message), code, stacklevel=6)
    return Record(
        run_id=run_id, candidate=job.candidate, instance=job.instance,
        label=job.label, family=build.family, digest_bits=build.digest_bits,
        operation=operation(job.message_bytes), message_bytes=job.message_bytes,
        implementation=build.implementation, kat=build.kat,
        plan=JobPlan(t1_seconds=job.t1_seconds or 0.0,
                     calls_per_trial=job.calls_per_trial or 1,
                     warmup_calls=job.warmup_calls or 0, trials_planned=settings.trials,
                     trial_target_seconds=float(settings.trial_target),
                     op_budget_seconds=float(settings.op_budget),
                     target_ci_percent=settings.target_ci_percent,
                     max_trials=settings.max_trials, cpu=env.cpu,
                     estimated_seconds=job.estimated_seconds or 0.0,
                     calls_rule=settings.calls_rule, statistic=settings.statistic,
                     order=order, warm_call_seconds=job.warm_call_seconds),
        environment=env, trials=entries, statistics=statistics,
        resources=Resources.of(build.elf_image_bytes, entries),
        raw=RawRef(path=job.raw, sha256=raw_sha,
                   calls_per_trial=tuple(t.calls for t in entries)),
        provenance=Provenance(created=utc_now(), ngcc_version=env.ngcc_version,
                              git_commit=env.git_commit, command=tuple(settings.command),
                              runner=runner, message=MESSAGE),
        rejected_trials=tuple(rejected), target_ci_reached_percent=reached)
