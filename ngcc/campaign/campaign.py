"""A campaign: host → run directory → KAT gate → calibrate → leak tests → jobs handed to
an executor → records, resumable.

``Campaign(["WChain-V1-512", "SM3"]).run()`` times every library at every message
length: it checks every library with a KAT checker first (``ngcc.kat.check``),
calibrates and plans each job (``measure.job``), and hands the jobs to an executor
(its own ``measure.executors.LocalExecutor``, or Dask's), whose trials a
``driver.contract.TrialRunner`` runs (by default each trial a fresh ``ngcc-driver``
pinned to one CPU); each result becomes a record (``campaign.record``) in the run
directory (``campaign.rundir``; format in ``docs/evidence-format.md``). The settings
are ``campaign.settings``; the plan rule is ``measure.plan``.

The campaign can be stopped at any instant and run again with the same settings:
it keeps every job whose record passes the checks of ``ngcc validate`` and measures
the rest.
"""

from __future__ import annotations

import contextlib
import functools
import os
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from ngcc.base import files as _files
from ngcc.base import progress as _progress
from ngcc.base.clock import utc_now
from ngcc.base.errors import ChildError, HostError, MeasurementWarning
from ngcc.campaign import conditions as _conditions
from ngcc.campaign import leak_step as _leaks
from ngcc.campaign import results as _results
from ngcc.campaign.cost import CostEstimate, estimate, planned_job, slow_probes, trial_cost
from ngcc.campaign.failures import FailureWatch
from ngcc.campaign.keeper import TrialKeeper
from ngcc.campaign.record import FlagWarnings, per_byte, runner_name, write_job
from ngcc.campaign.rundir import RunDirectory, nothing_to_measure
from ngcc.campaign.settings import INTERLEAVED_WHOLE_JOBS, CampaignSettings
from ngcc.driver import child as _child
from ngcc.driver import kat
from ngcc.driver.contract import TrialRunner
from ngcc.evidence import records as _records
from ngcc.evidence.model import (
    BuildEntry,
    BuildState,
    Environment,
    HostWarning,
    Job,
    PlanLibrary,
    Record,
    RejectedTrial,
    Resubmitted,
    Settings,
    Start,
)
from ngcc.evidence.run import Run
from ngcc.library.registry import Instance
from ngcc.measure import executors as _executors
from ngcc.measure import gate as _gate
from ngcc.measure import host as _host
from ngcc.measure import job as _jobs
from ngcc.measure import leak_measurement as _leak
from ngcc.measure import locks as _locks
from ngcc.measure import partial as _partial
from ngcc.measure import plan as _plan
from ngcc.measure.waiting import CpuWait, ShowWait


class Campaign:
    """A measurement campaign over instances × message lengths.

    Build it with the settings, inspect :attr:`plan`, then :meth:`run` it::

        run = ngcc.Campaign(["WChain-V1-512", "SM3"], quick=True).run()
        run.record("SM3", 1024).statistics.cycles_per_byte

    Args:
        instances: instance names (``"Wish512"``), :class:`Instance` objects or
            library paths.
        settings: the campaign's :class:`~ngcc.CampaignSettings` (its fields are
            documented there); or give them as keyword arguments (``quick=True``,
            ``lengths=[64]``, ``run_dir=…``), not both.
        progress: how the campaign shows its progress on stderr: True (a bar per
            phase on a terminal or, with ipywidgets, in Jupyter; otherwise one line
            per finished job with its figure,
            the elapsed time and the ETA), False (nothing), or a
            :class:`ngcc.base.progress.Progress`.
        on_plan: called with the :class:`CostEstimate` once the calibration has
            planned every job, before any trial (the command line prints it).
        runner: what runs the cold calls and trials (default: each in a fresh
            ``ngcc-driver`` pinned to the CPU, :class:`ngcc.driver.child.DriverRunner`).
        kat_checker: what the KAT gate calls (default :func:`ngcc.kat.check`, with the
            settings' ``kat_manifest`` and ``kat_official``).
        leak_tester: what runs a leak test (default :func:`ngcc.leak`).
        executor: what measures whole jobs instead of this process's own executor
            (a :class:`ngcc.measure.job.JobExecutor`; the settings' ``workers`` and
            ``scheduler`` make one).
        on_wait: told where a wait for its CPU stands, about once a second (a
            :class:`~ngcc.measure.waiting.CpuWait`: who holds it, since when, until when);
            default: shown as progress (``progress``), as the command line shows it.

    Raises:
        ValueError, TypeError: a setting out of range, or no setting at all (named).
    """

    def __init__(self, instances: Iterable[str | os.PathLike[str] | Instance] = (), *,
                 settings: CampaignSettings | None = None,
                 progress: bool | _progress.Progress = True,
                 on_plan: Callable[[CostEstimate], None] | None = None,
                 runner: TrialRunner | None = None,
                 kat_checker: _gate.KatChecker | None = None,
                 leak_tester: Callable[..., _leak.LeakResult] | None = None,
                 executor: _jobs.JobExecutor | None = None,
                 on_wait: Callable[[CpuWait], None] | None = None, **options: Any):
        if settings is not None and options:
            raise TypeError("give the campaign's settings or its keyword settings (%s), "
                            "not both" % ", ".join(sorted(options)))
        self.settings = s = settings or CampaignSettings.make(**options)
        if executor is not None and (s.workers, s.scheduler) != (None, None):
            raise ValueError("give at most one of workers, scheduler and executor")
        if executor is not None and s.order == "interleaved":
            raise ValueError(INTERLEAVED_WHOLE_JOBS)
        if runner is not None and s.counter is not None:
            raise ValueError("counter= sets the default runner's counter; a runner given "
                             "chooses its own")
        self.instances, self.labels = _plan.resolve_libraries(
            list(instances), s.candidate, s.all_instances, list(s.labels))
        self.run_dir = s.run_dir
        self.cpu = _locks.default_cpu() if s.cpu is None else s.cpu  # run() may take another
        self.reporter = _progress.progress_of(progress)
        self.on_plan, self.executor = on_plan, executor
        self.on_wait = on_wait if on_wait is not None else ShowWait(self.reporter)
        self.runner: TrialRunner = runner if runner is not None else (
            _child.DriverRunner(counter=s.counter) if s.counter else _child.DriverRunner())
        self.kat_checker: _gate.KatChecker = kat_checker if kat_checker is not None else (
            functools.partial(kat.check, manifest=s.kat_manifest, official_dir=s.kat_official)
            if (s.kat_manifest, s.kat_official) != (None, None) else kat.check)
        self.leak_tester = leak_tester if leak_tester is not None else _leak.leak
        self._token = uuid.uuid4().hex[:8]  # names this start's jobs while they are out
        self._watch, self._flags = FailureWatch(), FlagWarnings()
        self._trial_start = _conditions.StartCost()  # measured before each plan
        self._resubmitted: list[Resubmitted] = []
        self._cpu_stack: contextlib.ExitStack | None = None  # holds the CPU lock, once taken
        self._by_label = dict(zip(self.labels, self.instances, strict=True))
        self._sha = {label: _files.sha256_file(inst.library)
                     for label, inst in self._by_label.items()}
        self.plan = s.plan(tuple(
            PlanLibrary(candidate=inst.candidate, instance=inst.name, label=label,
                        variant=inst.variant, library=str(inst.library),
                        library_sha256=self._sha[label])
            for label, inst in self._by_label.items()), self.cpu)
        self._environment: Environment | None = None
        self._run = RunDirectory(self.run_dir)
        self._build: dict[str, BuildEntry] = {}

    # ------------------------------------------------------------ state

    @property
    def _env(self) -> Environment:
        if self._environment is None:
            raise RuntimeError("the campaign has not started")
        return self._environment

    def _start(self, environment: Environment, issues: Sequence[HostWarning]) -> Start:
        return Start(at=utc_now(), command=tuple(self.settings.command),
                     settings=Settings(kat_timeout_seconds=self.settings.kat_timeout,
                                       trial_timeout_seconds=self.settings.trial_timeout,
                                       strict=self.settings.strict,
                                       runner=runner_name(self.runner), order=self.order,
                                       executor=self.settings.executor_name(self.executor),
                                       counter=self.settings.counter),
                     load_average_start=environment.load_average_start,
                     host_warnings=tuple(issues))

    def _hold_cpu(self) -> None:
        """Hold the trial CPU (waiting for it with ``wait``) before the first work that
        runs on it, if that is not done yet; the host is read again once it is held."""
        if self._cpu_stack is None:
            return
        stack, self._cpu_stack = self._cpu_stack, None
        self.cpu = stack.enter_context(_locks.hold_cpu(
            None if self._any_cpu else self.cpu, self.run_dir, wait=self.settings.wait,
            on_wait=self.on_wait))
        self._environment = _host.fingerprint(self.cpu)
        if len(self._run.state.starts) == 1:  # a new run: its host is the one it measures on
            self.plan = replace(self.plan, cpu=self.cpu)  # maybe the CPU free first
            self._run.save(plan=self.plan, environment=self._environment)

    # ------------------------------------------------------------ the phases

    def run(self) -> Run:
        """Run (or resume) the campaign; return the run it wrote.

        Raises:
            HostError: ``strict`` and the host is not fixed for measurement.
            ForeignRunDirError, PlanMismatchError, RunDirError, CorruptRecordError: the
                run directory cannot be used (the message says what to do); a defective
                record is not an error: its job is measured again.
            KatGateError: the KAT gate refused every instance.
            CampaignFailedError: the first jobs all failed with one cause and none
                succeeded, so the campaign stopped (the rest stay pending).
            RunDirBusyError, CpuBusyError: another campaign holds the run directory,
                or the CPU (the message names its pid).

        A run whose jobs partly failed is returned: its :attr:`Run.failed_jobs` say
        which (the command line then exits with status 1). Flagged trials warn as the
        command line shows them: the first job of each kind, then one line per kind.
        """
        self._flags = FlagWarnings()  # this run's (``record.FlagWarnings``)
        run = self._run_distributed() if (self.settings.workers, self.settings.scheduler,
                                          self.executor) != (None, None, None) \
            else self._locked(dry_run=False)
        self._flags.warn_summary(run.records, stacklevel=2)
        return run

    def dry_run(self) -> CostEstimate:
        """The KAT gate and the calibration, then stop: what :meth:`run` would measure.

        Writes the run directory as far as that (``build.json``, the KAT logs, each
        job's t1 and plan in ``campaign.json``), so a later :meth:`run` with the same
        settings resumes from there without calibrating again. Raises what
        :meth:`run` raises before its trials. (With ``workers``/``scheduler`` too: the
        calibration runs here; the workers calibrate each job again where they measure
        it.) It takes no CPU lock, so never waits: the estimate is this host's now.
        """
        self._locked(dry_run=True)
        return self.estimate()

    def _locked(self, dry_run: bool) -> Run:
        """Hold the run directory, choose the trial CPU, and run: its lock is taken after
        every decision that needs no CPU (:meth:`_hold_cpu`); a dry run never takes it."""
        with _locks.hold_run_dir(self.run_dir), contextlib.ExitStack() as stack:
            resume = _locks.stored_cpu(self.run_dir) if self.settings.cpu is None else None
            self.cpu = _locks.choose_cpu(self.settings.cpu, resume)
            self._any_cpu = self.settings.cpu is None and resume is None  # a new run
            # a foreign folder or another plan is refused here, before anything else
            nothing_to_measure(self.run_dir, self.plan, self.settings.leak, self.cpu)
            self._cpu_stack = stack
            self.plan = replace(self.plan, cpu=self.cpu)
            try:
                return self._run_held(dry_run)
            finally:
                self._cpu_stack = None

    def estimate(self) -> CostEstimate:
        """The cost of the jobs still to measure (``cost.estimate``), from this start's probes."""
        return estimate(self._run.jobs, self.settings, start=self._trial_start,
                        leak_tests=len(_leaks.todo(self.settings, self.run_dir, self._build)),
                        executor=self.executor.describe() if self.executor is not None else None)

    def _run_held(self, dry_run: bool) -> Run:
        environment = _host.fingerprint(self.cpu)
        issues = _host.host_warnings(environment)
        if self.settings.strict and issues:
            raise HostError("the host is not fixed for measurement (--strict): "
                            + "; ".join(issue.message for issue in issues))
        self._run.open(self.plan, self._start(environment, issues), environment,
                       self._by_label, self.settings)
        self._environment = environment
        for issue in issues:
            warnings.warn(issue.message, MeasurementWarning, stacklevel=2)
        self._kat_gate()
        self._run.reconcile(self._build)
        self._apply_gate()
        if self.executor is None and not dry_run and (
                self._pending() or _leaks.todo(self.settings, self.run_dir, self._build)):
            self._hold_cpu()  # the calibration, the leak tests and the trials run on it
        if self.executor is None or dry_run:  # an executor calibrates where it measures
            self._calibrate()  # then each trial's start on this host now, for the plan
            self._trial_start = _conditions.start_cost(  # and each library's slow state
                self.runner, self.cpu, libraries=slow_probes(self._run.jobs, self._by_label))
        cost = self.estimate()
        if self.on_plan is not None:
            self.on_plan(cost)
        _locks.expect_end(cost.wall_seconds + cost.leak_seconds)  # shown to whoever waits
        if dry_run:
            return Run(self.run_dir)
        self._leak_tests()
        self._measure_jobs(self.executor)
        self._finish()
        return Run(self.run_dir)

    def _pending(self) -> list[int]:
        """Indices of the jobs still to measure."""
        return [i for i, job in enumerate(self._run.jobs) if job.status == "pending"]

    def _task(self, total: float, name: str, items: int | None = None) -> _progress.Task:
        """The progress of one phase (``self.reporter``): a bar on a terminal, a line
        per finished job otherwise; the ETA comes from the work done so far."""
        return self.reporter.task(name, total, items)

    def _failed(self, index: int, error: ChildError) -> None:
        """Mark a job failed and save; stop the campaign if its failures look alike."""
        jobs = self._run.jobs
        jobs[index] = replace(jobs[index], status=error.status, error=str(error))
        self._run.save()
        self._watch.failure(error, len(self._pending()))

    # KAT gate ----------------------------------------------------------------

    def _kat_gate(self) -> None:
        """Check every library against its official KAT files (``measure.gate``) and write
        ``build.json``; the refusals follow in :meth:`_apply_gate`."""
        stored = (_records.load_build(self.run_dir)
                  if (self.run_dir / _records.BUILD_FILE).exists() else None)
        s = self.settings
        self._build = _gate.check(self.kat_checker, self._by_label, self._sha, s.kat_files,
                                  self.run_dir, stored, s.allow_kat_fail, self.reporter,
                                  s.kat_timeout)
        _records.dump_build(self.run_dir, BuildState(run_id=self._run.state.run_id,
                                                     libraries=tuple(self._build.values())))

    def _apply_gate(self) -> None:
        """The jobs of the libraries the gate refused are ``refused`` (``gate.refuse``)."""
        self._run.jobs = _gate.refuse(self._run.jobs, self._build, self.run_dir)
        self._run.save()
        _gate.refuse_all(self._build, self.run_dir)

    # leak tests (--leak) -----------------------------------------------------

    def _leak_tests(self) -> None:
        """The leak tests (``--leak``) of every library the gate let through, on this
        campaign's CPU (``campaign.leaks``)."""
        todo = _leaks.todo(self.settings, self.run_dir, self._build)
        with self._leak_cpu(bool(todo)), self._task(len(todo), "leak") as bar:
            _leaks.run(todo, self.settings, self.run_dir, self._by_label, self.leak_tester,
                       self.cpu, bar)

    @contextlib.contextmanager
    def _leak_cpu(self, needed: bool) -> Iterator[None]:
        """With an executor the client holds no CPU lock but for the leak tests it runs
        (none either on a CPU its local workers have, idle before the jobs go out)."""
        if self.executor is None or not needed:
            yield
            return
        held = getattr(self.executor, "held", ())
        if held and self.settings.cpu in (None, *held):
            self.cpu = self.settings.cpu if self.settings.cpu is not None else held[-1]
            yield
            return
        with _locks.hold_cpu(self.settings.cpu, self.run_dir, wait=self.settings.wait,
                             on_wait=self.on_wait) as cpu:
            self.cpu = cpu
            yield

    # calibrate and plan ------------------------------------------------------

    def _calibrate(self) -> None:
        """Calibrate every pending job that lacks its calibration (``job.calibrate``: the
        cold call in a fresh pinned child, with the warm plan a short trial of warm
        calls) and plan it, before any trial: so the cost estimate comes first."""
        warm = self.settings.calls_rule == "warm"
        todo = [i for i in self._pending() if self._run.jobs[i].t1_seconds is None
                or (warm and self._run.jobs[i].warm_call_seconds is None)]
        with self._task(len(todo), "calibrate") as bar:
            for index in todo:
                job = self._run.jobs[index]
                bar.status("%s %d B" % (job.label, job.message_bytes))
                try:
                    calibration = _jobs.calibrate(self._order(job), self.runner,
                                                  self._by_label[job.label], self.cpu,
                                                  t1=job.t1_seconds)
                except ChildError as exc:
                    bar.advance(1)
                    self._failed(index, exc)
                else:
                    self._run.jobs[index] = planned_job(job, calibration, self.settings.trials)
                    self._watch.success(done=False)
                    self._run.save()
                    bar.advance(1)

    # measure and write -------------------------------------------------------

    @property
    def order(self) -> str:
        """The order of the trials (``CampaignSettings.trial_order``)."""
        return self.settings.trial_order(self.executor, len(self._by_label))

    def _write_job(self, job: Job, taken: Sequence[_jobs.Taken], rejected: list[RejectedTrial],
                   env: Environment) -> Record:
        """The job's raw samples and record (``record.write_job``), as this campaign's."""
        return write_job(self.run_dir, job, taken, rejected, run_id=self._run.state.run_id,
                         build=self._build[job.label], settings=self.settings,
                         order=self.order, runner=runner_name(self.runner), env=env,
                         flags=self._flags)

    # measure on an executor (--workers, --scheduler) ----------------------------

    def _run_distributed(self) -> Run:
        """Run with an executor: this process holds the run directory (and a local
        cluster's CPUs, ``measure.distributed.local_executor``), a remote worker its CPU for each
        job; ``workers``/``scheduler`` make the executor and close it after."""
        # Dask is optional: imported only when asked for
        from ngcc.measure import distributed as _distributed

        given = self.executor
        try:
            with contextlib.ExitStack() as stack:
                stack.enter_context(_locks.hold_run_dir(self.run_dir))
                # a foreign folder or another plan is refused before the CPUs are waited for
                nothing_to_measure(self.run_dir, self.plan, self.settings.leak, self.plan.cpu)
                if self.executor is None:
                    self.executor = stack.enter_context(
                        _distributed.local_executor(self.settings.workers, self.run_dir,
                                                    self.settings.wait, self.on_wait)
                        if self.settings.workers is not None
                        else _distributed.remote_executor(str(self.settings.scheduler)))
                return self._run_held(dry_run=False)
        finally:
            self.executor = given  # a cluster made here is closed: the next run makes one

    def _order(self, job: Job, calibrated: bool = False) -> _jobs.JobOrder:
        """The job as an executor takes it (``calibrated``: with the calibration this
        campaign made, for its own executor)."""
        return self.settings.job_order(
            job, self._by_label[job.label], self._sha[job.label],
            "ngcc %s %s %d B %s" % (self._run.state.run_id, job.label, job.message_bytes,
                                    self._token), self.run_dir, calibrated)

    def _measure_jobs(self, executor: _jobs.JobExecutor | None) -> None:
        """Hand every pending job to ``executor`` (None: the campaign's own
        :class:`~ngcc.measure.executors.LocalExecutor`, which keeps each trial as it comes);
        check each result as it arrives (``job.result_defects``) and write its record."""
        orders = {}
        for index in self._pending():
            order = self._order(self._run.jobs[index], calibrated=executor is None)
            orders[order.key] = (index, order)
        local = executor is None
        # Here the bar counts estimated seconds, so jobs of different cost move it fairly.
        total = sum(self._run.jobs[i].trials_planned * trial_cost(self._run.jobs[i])
                    for i, _ in orders.values()) if local else len(orders)
        with self._task(total, "measure", len(orders)) as bar:
            if executor is None:
                keeper = TrialKeeper(self._run, self.cpu, self._watch, self.reporter, bar,
                                     {key: index for key, (index, _) in orders.items()})
                executor = _executors.LocalExecutor(self.cpu, self.order, self._env, keeper)
            else:
                bar.status("%d jobs on %s" % (len(orders), executor.describe()))
            for result in executor.measure([order for _, order in orders.values()],
                                           self.runner):
                index, order = orders[result.key]
                self._take(index, order, result, bar, local)

    def _take(self, index: int, order: _jobs.JobOrder, result: _jobs.JobResult,
              bar: _progress.Task, local: bool) -> None:
        """One job's result: its record written, or the job failed (its kept trials
        discarded); the progress told."""
        job = self._run.jobs[index]
        what = "%s %d B" % (job.label, job.message_bytes)
        if not local:
            bar.advance(1)
        record = self._arrived(index, order, result, checked=not local)
        if isinstance(record, ChildError):
            if local:
                _partial.discard(self.run_dir, job.raw)
                bar.advance(max(0, job.trials_planned - len(result.trials))
                            * trial_cost(job))
            bar.item_done(what, record.status)
            self._failed(index, record)
            return
        self._watch.success()
        self._run.save()
        _locks.expect_end(bar.eta())
        if local:
            _partial.discard(self.run_dir, job.raw)  # the record supersedes them
            bar.item_done(what, per_byte(record))
        else:
            bar.item_done(what, "%s on %s CPU %d" % (
                per_byte(record), record.environment.host, record.environment.cpu))

    def _arrived(self, index: int, order: _jobs.JobOrder, result: _jobs.JobResult,
                 checked: bool) -> Record | ChildError:
        """Take a job's result: note each attempt lost with its worker (a warning and
        ``resubmitted`` in campaign.json), keep its calibration, then write its record
        (``done``) and return it, or return why the job failed (a failed child, or a result
        refused). ``checked``: a result from another executor than the campaign's own is
        held to the plan first (``campaign.results.refusal``)."""
        job = self._run.jobs[index]
        lost = _results.lost_attempts(job, result)
        if lost:
            self._resubmitted += lost
            self._run.change_start(resubmitted=tuple(self._resubmitted))
        if result.t1_seconds is not None:  # planned here by the rule, not as it says
            job = self._run.jobs[index] = planned_job(job, _jobs.planned(
                order, result.t1_seconds, result.warm_call_seconds), self.settings.trials)
        refused = _results.refusal(job, order, result, checked)
        if refused is not None or result.environment is None:  # refusal() says none
            return refused or ChildError("error", "the result names no environment")
        record = self._write_job(job, result.trials, list(result.rejected),
                                 result.environment)
        self._run.jobs[index] = replace(job, status="done", error=None)
        return record

    def _finish(self) -> None:
        one, five, fifteen = (round(x, 2) for x in os.getloadavg())
        self._run.save(load_average_end=(one, five, fifteen),
                       finished=None if self._pending() else utc_now())
