"""What a campaign does with each trial its own executor measures."""

from __future__ import annotations

from ngcc.base import progress as _progress
from ngcc.campaign.cost import trial_cost
from ngcc.campaign.failures import FailureWatch
from ngcc.campaign.rundir import RunDirectory
from ngcc.evidence.model import Job
from ngcc.measure import job as _jobs
from ngcc.measure import partial as _partial


class TrialKeeper(_jobs.JobWatcher):
    """What a campaign does with each trial its own executor measures: the trial kept
    on disk at once (``partial``: a stop mid-round loses no trial, a resumed job starts
    with the trials it kept), the failure watch told that a child delivered, and the
    progress bar moved (by estimated seconds; a line per round of interleaved jobs)."""

    def __init__(self, run: RunDirectory, cpu: int, watch: FailureWatch,
                 reporter: _progress.Progress, bar: _progress.Task, index_of: dict[str, int]):
        self.run, self.cpu, self.watch, self.reporter = run, cpu, watch, reporter
        self.bar, self.index_of = bar, index_of

    def _job(self, order: _jobs.JobOrder) -> Job:
        return self.run.jobs[self.index_of[order.key]]

    def kept(self, order: _jobs.JobOrder, calibration: _jobs.Calibration) -> list[_jobs.Taken]:
        """The trials an earlier start kept, measured with this plan on this CPU."""
        job = self._job(order)
        kept = _partial.load(self.run.path, job.raw, calibration.calls_per_trial,
                             calibration.warmup_calls, order.library_sha256, cpu=self.cpu)
        self.bar.advance(min(len(kept), job.trials_planned) * trial_cost(job))
        return kept

    def status(self, order: _jobs.JobOrder) -> None:
        """The bar names the job measured now."""
        self.bar.status("%s %d B" % (order.label, order.message_bytes))

    def trial_done(self, order: _jobs.JobOrder, stepper: _jobs.JobStepper) -> None:
        """Commit the job's last trial on its own; a trial delivered, the job not done
        yet; the bar moves by a planned trial (not by one ``target_ci`` added)."""
        job = self._job(order)
        _partial.save(self.run.path, job.raw, len(stepper.taken) - 1, stepper.taken[-1],
                      stepper.calibration.warmup_calls, order.library_sha256)
        self.watch.success(done=False)
        if len(stepper.taken) <= job.trials_planned:
            self.bar.advance(trial_cost(job))

    def round_done(self, rounds: int, fewest: int, measuring: int, more: bool) -> None:
        """A line per round (the jobs end together: a bar would say nothing for long)."""
        reporter = self.reporter
        if reporter.mode != "lines":
            return
        eta = self.bar.eta()
        reporter.line("measure: round %d done (trial %d of %d jobs; elapsed %s%s)"
                      % (rounds, fewest + 1, measuring, _progress.clock(self.bar.elapsed()),
                         ", ETA %s" % _progress.clock(eta) if more and eta is not None
                         else ""))
