"""A campaign: KAT gate → calibrate → plan → measure → write, resumable.

``Campaign(["WChain-V1-512", "SM3"]).run()`` times every library at every message
length in trials run by a :class:`~ngcc.driver.contract.TrialRunner` (by default each trial a
fresh ``ngcc-driver`` pinned to one CPU, ``_child``), checks every library with a KAT
checker first (``ngcc.kat.check``), and leaves the evidence in a run directory
(``_records``; the evidence model ``_model``, format in ``docs/evidence-format.md``).
The plan (libraries, labels, the harness's call-count rule) is ``_plan``.

The campaign can be stopped at any instant and run again with the same settings:
it keeps every job whose record passes the checks of ``ngcc validate`` and measures
the rest.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ngcc.base import files as _files
from ngcc.base import format as _format
from ngcc.base import progress as _progress
from ngcc.base.clock import run_id_now, utc_now
from ngcc.base.errors import (
    CampaignFailedError,
    ChildError,
    CorruptRecordError,
    DistributedError,
    ForeignRunDirError,
    HostError,
    KatGateError,
    MeasurementWarning,
    NgccError,
    PlanMismatchError,
    RunDirError,
    TrialFlagWarning,
)
from ngcc.driver import child as _child
from ngcc.driver import kat
from ngcc.driver import timing as _timing
from ngcc.driver.contract import TrialRunner
from ngcc.evidence import leak as _leak_evidence
from ngcc.evidence import records as _records
from ngcc.evidence import schema1 as _schema1
from ngcc.evidence.model import (
    CALLS_RULES,
    COUNTER_CHOICES,
    ORDERS,
    STATISTICS,
    BuildEntry,
    BuildState,
    CampaignState,
    Environment,
    HostWarning,
    Job,
    JobPlan,
    Plan,
    PlanLibrary,
    Provenance,
    RawRef,
    Record,
    RejectedTrial,
    Remeasured,
    Resources,
    Resubmitted,
    Settings,
    Start,
    operation,
    raw_relpath,
    record_relpath,
)
from ngcc.evidence.run import Run, RunRecord
from ngcc.library import katfile as _katfile
from ngcc.library.registry import Instance
from ngcc.measure import gate as _gate
from ngcc.measure import host as _host
from ngcc.measure import job as _jobs
from ngcc.measure import leak as _leak
from ngcc.measure import locks as _locks
from ngcc.measure import partial as _partial
from ngcc.measure import plan as _plan
from ngcc.stats import recheck as _recheck
from ngcc.stats import trials as _stats

# ---------------------------------------------------------------- small helpers

def _check_positive(**settings: float | None) -> None:
    """Refuse a setting that is given but not a positive finite number (None means
    default; ``inf`` is no number of seconds or trials)."""
    for name, value in settings.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError("%s must be positive, got %r" % (name, value))
        if value == float("inf"):
            raise ValueError("%s must be a finite number, got inf" % name)


def _checked_lengths(lengths: Iterable[object]) -> list[int]:
    """Message lengths as whole byte counts from 1 to the driver's 1 GiB: ``1.5`` or
    ``True`` is refused, not planned as 1 B."""
    checked = []
    for n in lengths:
        if isinstance(n, bool) or not hasattr(n, "__index__"):
            raise ValueError("message lengths must be whole numbers of bytes, got %r" % (n,))
        checked.append(int(n))  # a numpy integer too
    if not checked or not all(1 <= n <= _timing.MAX_MESSAGE_BYTES for n in checked):
        raise ValueError("message lengths must be positive byte counts up to %d, got %s"
                         % (_timing.MAX_MESSAGE_BYTES, checked))
    return checked


def _is_temp_file(path: Path) -> bool:
    return path.name.startswith(".") and ".tmp-" in path.name


def _per_byte(record: Record) -> str:
    """``16.3 ticks/byte``: a finished job's figure for its progress line, in the
    counter's unit (``ns`` where the counter gave nanoseconds)."""
    return "%s %s/byte" % (_format.cycles_per_byte(record.statistics.cycles_per_byte),
                           _format.unit_word(t.unit for t in record.trials))


def _runner_name(runner: object) -> str:
    """``ngcc.driver.child.DriverRunner``: the runner as records name it."""
    return "%s.%s" % (type(runner).__module__, type(runner).__qualname__)


def _executor_settings(workers: int | None, scheduler: str | None,
                       executor: _jobs.JobExecutor | None
                       ) -> tuple[int | None, str | None, _jobs.JobExecutor | None]:
    """``workers``, ``scheduler`` and ``executor`` checked: at most one, a positive
    number of workers, a ``tcp://`` address, and Dask installed for the first two."""
    if sum(x is not None for x in (workers, scheduler, executor)) > 1:
        raise ValueError("give at most one of workers, scheduler and executor")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError("workers must be a positive number of CPUs, got %r" % (workers,))
    if scheduler is not None and "://" not in scheduler:
        raise ValueError("scheduler must be a Dask scheduler address such as "
                         "tcp://HOST:8786, got %r" % scheduler)
    if workers is not None or scheduler is not None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise DistributedError(
                "%s needs Dask distributed, which is not installed in this Python (%s): "
                'pip install "ngcc[distributed]"' % (
                    "--workers" if workers is not None else "--scheduler", sys.executable)
            ) from None
    return workers, scheduler, executor


#: Seconds a trial process takes beyond its calls (start, calibration of its counter,
#: exit), for the plan's estimate and the ETA: `benchmarks/campaign_cost.py` measured
#: 0.04 s per trial on a shared 2-core KVM guest (48 trials of 0.02 s).
CHILD_STARTUP_SECONDS = 0.05
#: The message every trial hashes, as records state it.
MESSAGE = "ngcc.default_message: byte i = (i·131 + message_bytes) mod 256"
#: A campaign stops when its first this many failures share one cause and nothing
#: succeeded yet: the rest would most likely fail the same way.
STOP_AFTER_FAILURES = 3


# ---------------------------------------------------------------- failure and cost

def failure_cause(error: ChildError) -> str:
    """``crash: SIGSEGV``: a failure without the job's name, so that the failures of
    several jobs can be told alike (the driver's own words where it gave them)."""
    return "%s: %s" % (error.status, getattr(error, "detail", "") or error.message)


class _FailureWatch:
    """Stops a campaign whose first failures all share one cause, before it works
    through every job to fail the same way (a library that cannot start, a broken
    driver): :data:`STOP_AFTER_FAILURES` consecutive failures alike and no job done."""

    def __init__(self) -> None:
        self.succeeded = False
        self.causes: list[str] = []

    def success(self, done: bool = True) -> None:
        """A child delivered: a job ``done``, or only its calibration (which breaks a
        run of failures, but a library may still fail every trial)."""
        self.succeeded = self.succeeded or done
        self.causes = []

    def failure(self, error: ChildError, pending: int) -> None:
        """Count one failure; raise when the campaign should stop.

        Raises:
            CampaignFailedError: the last failures share one cause, nothing succeeded.
        """
        cause = failure_cause(error)
        self.causes = [*self.causes, cause] if self.causes[-1:] == [cause] else [cause]
        if self.succeeded or len(self.causes) < STOP_AFTER_FAILURES:
            return
        raise CampaignFailedError(
            "the first %d jobs tried all failed with the same cause and none succeeded, so "
            "the campaign stopped (%d job(s) not measured): %s; fix that and run the same "
            "command again to resume" % (len(self.causes), pending, cause),
            cause, len(self.causes), pending)


def _target_missed(job: Job, trials: int, reached: float | None, target: float,
                   statistic: str) -> str:
    """The warning of a job that stopped at ``--max-trials`` above ``--target-ci``."""
    return ("%s at %d B missed --target-ci %g %%: it stopped at --max-trials %d with the "
            "95 %% CI of the %s at %s; raise --max-trials, lengthen the trials "
            "(--trial-target), or measure on an isolated CPU (--cpu N, `ngcc check`)"
            % (job.label, job.message_bytes, target, trials, statistic,
               "±%.2f %%" % reached if reached is not None else "— (one trial)"))


def _duration(seconds: float) -> str:
    """``40 s``, ``3 min 10 s``, ``2 h 05 min``."""
    whole = round(seconds)
    if whole < 60:
        return "%.0f s" % seconds if seconds >= 1 else "%.1f s" % seconds
    if whole < 3600:
        return "%d min %02d s" % divmod(whole, 60)
    return "%d h %02d min" % divmod(whole // 60, 60)


@dataclass(frozen=True)
class CostEstimate:
    """What a campaign is about to measure, from its calibration (each job's cold
    call and plan), before it measures: the plan the command line prints.

    Attributes:
        jobs: jobs to measure (library × length).
        libraries, lengths: how many of each have a job to measure.
        trials: trials per job (the minimum with ``target_ci``).
        max_trials: the cap on trials with ``target_ci`` (None without).
        calls: timed calls of all planned trials (warm-up and the uninstrumented batch
            not counted).
        seconds: the estimated time of those trials, from each job's t1 (the cold call,
            usually slower than a warm one, so the estimate tends to be high), the
            uninstrumented batch and the start of each trial process included.
        max_seconds: the estimate at ``max_trials`` (None without ``target_ci``).
        leak_seconds: the most time the leak tests may take (0 without ``leak``).
        kept: jobs already done in the run directory, kept.
        failed: jobs that failed their calibration or were refused by the KAT gate.
        calibration: what each job's time per call came from (``cold call``, or
            ``warm calls`` under ``calls_rule="warm"``).
        executor: what measures the jobs whole, when not this process
            (``--workers``/``--scheduler``): each job is then calibrated where it is
            measured, so ``calls`` and ``seconds`` count only jobs calibrated before.
    """

    jobs: int
    libraries: int
    lengths: int
    trials: int
    max_trials: int | None
    calls: int
    seconds: float
    max_seconds: float | None
    leak_seconds: float
    kept: int
    failed: int
    calibration: str = "cold call"
    executor: str | None = None

    def __str__(self) -> str:
        trials = ("%d-%d trials each (--target-ci)" % (self.trials, self.max_trials)
                  if self.max_trials else "%d trial(s) each" % self.trials)
        seconds = ("%s (%d trials each) to %s (%d each, if no job reaches --target-ci "
                   "sooner)" % (_duration(self.seconds), self.trials,
                                _duration(self.max_seconds), self.max_trials or 0)
                   if self.max_seconds else _duration(self.seconds))
        text = ("plan: %d job(s) to measure (%d librar%s × %d length(s)), %s, %d timed "
                "calls: about %s of trials (estimated from each job's %s)"
                % (self.jobs, self.libraries, "y" if self.libraries == 1 else "ies",
                   self.lengths, trials, self.calls, seconds, self.calibration)) \
            if self.jobs else \
            "plan: nothing to measure"
        if self.executor and self.jobs:  # the workers calibrate: no time estimate here
            text = ("plan: %d job(s) to measure (%d librar%s × %d length(s)), %s, whole "
                    "jobs on %s (each calibrated and timed where it is measured)"
                    % (self.jobs, self.libraries, "y" if self.libraries == 1 else "ies",
                       self.lengths, trials, self.executor))
        if self.leak_seconds:
            text += ", and at most %s of leak tests" % _duration(self.leak_seconds)
        if self.kept:
            text += "; %d job(s) done earlier are kept" % self.kept
        if self.failed:
            text += "; %d job(s) failed or refused" % self.failed
        return text


class Campaign:
    """A measurement campaign over instances × message lengths.

    Build it with the settings, inspect :attr:`plan`, then :meth:`run` it::

        run = ngcc.Campaign(["WChain-V1-512", "SM3"], quick=True).run()
        run.record("SM3", 1024).statistics.cycles_per_byte

    Args:
        instances: instance names (``"Wish512"``), :class:`Instance` objects or
            library paths.
        labels: a label for each of ``instances``, in order (None or missing: the
            instance's own, else derived: the instance name, ``Wish512@opt`` for
            another built-in variant, ``Pavelor-512@perf`` for one of several builds
            of one instance). Labels name the libraries in files, tables and plots;
            the instance name still selects the KAT manifest line.
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
            other running ngcc campaign holds; a resumed run keeps its CPU). With
            ``workers``/``scheduler`` each worker pins to its own CPU, and this one is
            the CPU of the leak tests, which run here.
        run_dir: the run directory (default ``runs/<UTC start time>``); an existing
            run directory with the same plan is resumed.
        quick: a small plan for smoke tests and CI.
        strict: make an unfixed host an error instead of a warning, and repeat
            disturbed trials (below).
        target_ci: keep adding trials (up to ``max_trials``) until the 95 %
            confidence interval of ``statistic`` is within this many percent.
        max_trials: the cap on trials in ``target_ci`` mode (default 20).
        allow_kat_fail: time instances whose KAT verdict is not PASS (each record
            is then marked ``timed_without_pass``; reports show ⚠).
        kat_files: the official KAT files the gate checks (default KAT_2_12, KAT_2_23).
        kat_timeout: seconds allowed per KAT file before the verdict is TIMEOUT
            (default: ``ngcc.driver.child.KAT_TIMEOUTS``, 600 s for the quick files).
        trial_timeout: seconds a trial or calibration child may take before it is
            killed (default: ten times the trial's estimate plus 60 s; 120 s for the
            cold call).
        progress: how the campaign shows its progress on stderr: True (a bar per
            phase on a terminal, otherwise one line per finished job with its figure,
            the elapsed time and the ETA), False (nothing), or a
            :class:`ngcc.base.progress.Progress`.
        on_plan: called with the :class:`CostEstimate` once the calibration has
            planned every job, before any trial (the command line prints it).
        command: the command line recorded as provenance.
        runner: what runs the cold calls and trials (default: each in a fresh
            ``ngcc-driver`` pinned to ``cpu``, :class:`ngcc.driver.child.DriverRunner`).
        kat_checker: what the KAT gate calls (default :func:`ngcc.kat.check`).
        kat_manifest, kat_official: the default checker's ``manifest`` (a manifest
            ngcc does not ship) and ``official_dir`` (the official KAT files, the
            reference where no manifest line is).
        leak: also test every library the KAT gate lets through for timing leakage
            (:func:`ngcc.leak`) at this message length in bytes, after the gate;
            evidence in ``RUN_DIR/leak/``, a ``leak`` section in the report.
        leak_calls, leak_seconds: the limits of each leak test (default
            :data:`ngcc.measure.leak.DEFAULT_CALLS` calls,
            :data:`ngcc.measure.leak.DEFAULT_SECONDS` s).
        leak_tester: what runs a leak test (default :func:`ngcc.leak`).
        statistic: what ``target_ci`` aims at: ``mean`` (the t interval of the trial
            means, as ngcc 0.1) or ``median`` (the log-scale interval of the trial
            medians, which rare preemptions hardly move).
        calls_rule: ``harness`` (the NGCC harness's calls per trial from one cold call,
            the default) or ``warm`` (a short calibration trial of warm calls, then
            enough calls for ``trial_target`` seconds of timed loop).
        order: ``interleaved`` (round k runs trial k of every job before trial k + 1
            of any) or ``sequential`` (job after job); default: interleaved with more
            than one library.
        workers: measure on a local Dask cluster of this many worker processes, one
            per CPU (the last ones this process may use), whole jobs at a time
            (``ngcc[distributed]``; ``_distributed``).
        scheduler: measure on the workers of the Dask scheduler at this address
            (``tcp://HOST:PORT``), each worker started with a ``cpu`` resource and its
            CPU in ``$NGCC_CPU`` (README, Distributed campaigns).
        executor: what measures whole jobs instead of this process's own trial loop
            (a :class:`ngcc.measure.job.JobExecutor`; ``workers`` and ``scheduler`` make one).
        counter: the counter of the default runner's trials: ``auto`` (perf core
            cycles where RDPMC is allowed, else the TSC), ``perf``, ``tsc`` or
            ``clock`` (``csrc/timer.h``); None: the TSC. Each trial records the
            counter it got.
        wait: seconds to wait for the trial CPU when another ngcc measurement holds it
            (default None: refuse at once with :class:`~ngcc.CpuBusyError`; the command
            line waits up to :data:`ngcc.measure.locks.DEFAULT_WAIT_SECONDS`). A run with
            nothing to measure, and a plan that does not match its run directory, need
            no CPU: they are answered first, without waiting.
        on_wait: told once, in a line naming the holder, that the campaign waits.

    With ``strict``, a trial that was preempted, whose counter ran off its rate, or
    whose process ran slow as a whole (``slow_process``) is run again (at most
    :data:`STRICT_ATTEMPTS` times in all; the record's ``rejected_trials`` lists the
    attempts set aside). A job that stops at ``max_trials`` with its interval wider than
    ``target_ci`` is said in a warning and in its record (``target_ci_reached_percent``).
    """

    def __init__(self, instances: Iterable[str | os.PathLike[str] | Instance] = (), *,
                 candidate: str | None = None, all_instances: bool = False,
                 lengths: Iterable[int] = _plan.DEFAULT_LENGTHS, trials: int | None = None,
                 trial_target: float | None = None, op_budget: float | None = None,
                 cpu: int | None = None, run_dir: str | os.PathLike[str] | None = None,
                 quick: bool = False, strict: bool = False, target_ci: float | None = None,
                 max_trials: int | None = None, allow_kat_fail: bool = False,
                 kat_files: Sequence[str] = _plan.KAT_FILES, kat_timeout: float | None = None,
                 trial_timeout: float | None = None,
                 progress: bool | _progress.Progress = True,
                 on_plan: Callable[[CostEstimate], None] | None = None,
                 command: Sequence[str] | None = None,
                 labels: Sequence[str | None] = (), runner: TrialRunner | None = None,
                 kat_checker: _gate.KatChecker | None = None, leak: int | None = None,
                 leak_calls: int | None = None, leak_seconds: float | None = None,
                 leak_tester: Callable[..., _leak.LeakResult] | None = None,
                 statistic: str = "mean", calls_rule: str = "harness",
                 order: str | None = None,
                 workers: int | None = None, scheduler: str | None = None,
                 executor: _jobs.JobExecutor | None = None,
                 kat_manifest: str | os.PathLike[str] | None = None,
                 kat_official: str | os.PathLike[str] | None = None,
                 counter: str | None = None,
                 wait: float | None = None, on_wait: Callable[[str], None] | None = None):
        for name, value, options in (("statistic", statistic, STATISTICS),
                                     ("calls_rule", calls_rule, CALLS_RULES),
                                     ("order", order or ORDERS[0], ORDERS),
                                     ("counter", counter or "tsc", COUNTER_CHOICES)):
            if value not in options:
                raise ValueError("%s must be one of %s, got %r" % (name, ", ".join(options),
                                                                   value))
        self.statistic, self.calls_rule = statistic, calls_rule
        self._order_asked = order
        if order == "interleaved" and (workers, scheduler, executor) != (None, None, None):
            raise ValueError("order='interleaved' is the trial loop of one process; with "
                             "workers, scheduler or executor every job is measured whole, "
                             "its trials in a row")
        self._token = uuid.uuid4().hex[:8]  # names this start's jobs while they are out
        _check_positive(trials=trials, trial_target=trial_target, op_budget=op_budget,
                        target_ci=target_ci, max_trials=max_trials, kat_timeout=kat_timeout,
                        trial_timeout=trial_timeout)
        self.instances, self.labels = _plan.resolve_libraries(
            list(instances), candidate, all_instances, list(labels))
        self.lengths = _checked_lengths(lengths)
        self.trials = trials or (_plan.QUICK_TRIALS if quick else _plan.DEFAULT_TRIALS)
        self.trial_target = trial_target or (_plan.QUICK_TRIAL_TARGET if quick
                                             else _plan.DEFAULT_TRIAL_TARGET)
        self.op_budget = op_budget or (_plan.QUICK_OP_BUDGET if quick else _plan.DEFAULT_OP_BUDGET)
        self.cpu = _locks.default_cpu() if cpu is None else _locks.check_cpu(cpu)
        self._cpu_asked = cpu  # None: run() takes a CPU no other campaign holds
        self.target_ci = target_ci
        if max_trials is not None and max_trials < self.trials:
            raise ValueError("max_trials (%r) is fewer than the %d trials planned; raise it or "
                             "lower trials" % (max_trials, self.trials))
        self.max_trials = max(self.trials, max_trials or (
            _plan.TARGET_CI_MAX_TRIALS if target_ci else self.trials))
        self.quick, self.strict, self.allow_kat_fail = quick, strict, allow_kat_fail
        self.kat_files = list(kat_files)
        _katfile.normalise_files(self.kat_files)  # a typo is refused before the run directory
        self.kat_timeout = kat_timeout
        self.trial_timeout = trial_timeout
        self.reporter = _progress.progress_of(progress)
        self.on_plan = on_plan
        self._watch = _FailureWatch()
        self.command = list(command) if command else ["ngcc.Campaign(...)"]
        if runner is not None and counter is not None:
            raise ValueError("counter= sets the default runner's counter; a runner given "
                             "chooses its own")
        self.counter = counter
        self.runner: TrialRunner = runner if runner is not None else (
            _child.DriverRunner(counter=counter) if counter else _child.DriverRunner())
        self.kat_checker: _gate.KatChecker = kat_checker if kat_checker is not None else (
            functools.partial(kat.check, manifest=kat_manifest, official_dir=kat_official)
            if (kat_manifest, kat_official) != (None, None) else kat.check)
        self.leak = leak
        self.leak_calls = _leak.DEFAULT_CALLS if leak_calls is None else leak_calls
        self.leak_seconds = _leak.DEFAULT_SECONDS if leak_seconds is None else leak_seconds
        if leak is not None:  # a mistake is refused now, not after the KAT gate
            _leak.checked_limits(leak, self.leak_calls, self.leak_seconds, "leak_")
        self.leak_tester = leak_tester if leak_tester is not None else _leak.leak
        self.run_dir = Path(run_dir) if run_dir else Path("runs") / run_id_now()
        if self.run_dir.is_symlink() and not self.run_dir.exists():
            raise ForeignRunDirError("%s is a symbolic link to %s, which does not exist; "
                                     "choose another --run-dir" % (self.run_dir,
                                                                   os.readlink(self.run_dir)))
        self.workers, self.scheduler, self.executor = _executor_settings(workers, scheduler,
                                                                         executor)
        self._resubmitted: list[Resubmitted] = []
        self.wait, self.on_wait = wait, on_wait
        self._cpu_stack: contextlib.ExitStack | None = None  # holds the CPU lock, once taken
        self._by_label = dict(zip(self.labels, self.instances, strict=True))
        self._sha = {label: _files.sha256_file(inst.library)
                     for label, inst in self._by_label.items()}
        self.plan = self._make_plan()
        self._environment: Environment | None = None
        self._state: CampaignState | None = None
        self._jobs: list[Job] = []
        self._build: dict[str, BuildEntry] = {}

    # ------------------------------------------------------------ plan and state

    def _make_plan(self) -> Plan:
        return Plan(
            libraries=tuple(PlanLibrary(candidate=inst.candidate, instance=inst.name,
                                        label=label, variant=inst.variant,
                                        library=str(inst.library),
                                        library_sha256=self._sha[label])
                            for label, inst in self._by_label.items()),
            lengths=tuple(self.lengths), trials=self.trials,
            trial_target_seconds=float(self.trial_target),
            op_budget_seconds=float(self.op_budget), max_calls=_plan.MAX_CALLS,
            min_calls=_plan.MIN_CALLS,
            cpu=self.cpu, quick=self.quick,
            target_ci_percent=None if self.target_ci is None else float(self.target_ci),
            max_trials=self.max_trials, kat_files=tuple(self.kat_files),
            kat_override=self.allow_kat_fail, statistic=self.statistic,
            calls_rule=self.calls_rule)

    def _fresh_jobs(self) -> list[Job]:
        return [Job(candidate=inst.candidate, instance=inst.name, label=label,
                    message_bytes=n, status="pending", t1_seconds=None, calls_per_trial=None,
                    warmup_calls=None, trials_planned=self.trials, estimated_seconds=None,
                    record=record_relpath(inst.candidate, label, n),
                    raw=raw_relpath(inst.candidate, label, n), error=None)
                for label, inst in self._by_label.items() for n in self.lengths]

    @property
    def _campaign(self) -> CampaignState:
        if self._state is None:
            raise RuntimeError("the run directory is not open")
        return self._state

    @property
    def _env(self) -> Environment:
        if self._environment is None:
            raise RuntimeError("the campaign has not started")
        return self._environment

    def _save(self, **changes: Any) -> None:
        self._state = replace(self._campaign, jobs=tuple(self._jobs), updated=utc_now(),
                              **changes)
        _records.dump_campaign(self.run_dir, self._state)

    def _start(self, environment: Environment, issues: Sequence[HostWarning]) -> Start:
        return Start(at=utc_now(), command=tuple(self.command),
                     settings=Settings(kat_timeout_seconds=self.kat_timeout,
                                       trial_timeout_seconds=self.trial_timeout,
                                       strict=self.strict, runner=_runner_name(self.runner),
                                       order=self.order, executor=self._executor_name(),
                                       counter=self.counter),
                     load_average_start=environment.load_average_start,
                     host_warnings=tuple(issues))

    def _refuse_foreign(self) -> None:
        """Refuse a run directory that is a file, or a folder of something else.

        Raises:
            ForeignRunDirError: saying which (nothing is written there).
        """
        path = self.run_dir
        if path.exists() and not path.is_dir():
            raise ForeignRunDirError("%s is a file, not a run directory; choose another "
                                     "--run-dir" % path)
        if path.exists() and not (path / _records.CAMPAIGN_FILE).exists() and any(
                not _is_temp_file(p) and p.name != _locks.RUN_DIR_LOCK
                and p.name not in _records.EVALUATION_NAMES for p in path.iterdir()):
            raise ForeignRunDirError(
                "%s is not empty and has no %s, so it is not an ngcc run directory; choose "
                "a new or empty --run-dir (nothing was written)" % (path, _records.CAMPAIGN_FILE))

    def _open_run_dir(self, environment: Environment, issues: Sequence[HostWarning]) -> None:
        """Start a new run directory, or resume the one there (same plan only)."""
        path = self.run_dir
        self._refuse_foreign()
        if (path / _records.CAMPAIGN_FILE).exists():
            self._resume(environment, issues)
            return
        path.mkdir(parents=True, exist_ok=True)
        _files.remove_temp_files(path)
        start = self._start(environment, issues)
        self._jobs = self._fresh_jobs()
        self._state = CampaignState(
            run_id=path.name, created=start.at, updated=None, finished=None, plan=self.plan,
            environment=environment, starts=(start,), load_average_end=None,
            jobs=tuple(self._jobs))
        self._save()

    def _resume(self, environment: Environment, issues: Sequence[HostWarning]) -> None:
        if _records.schema_of(self.run_dir / _records.CAMPAIGN_FILE) == _schema1.SCHEMA_CAMPAIGN:
            raise RunDirError(
                "%s was written by an older ngcc (evidence schema 1): it can still be read "
                "(ngcc report, ngcc validate, ngcc.load_run) but not resumed; start a new "
                "--run-dir" % self.run_dir)
        state = _records.load_campaign(self.run_dir)
        self._check_plan(state, self.plan)
        _files.remove_temp_files(self.run_dir)
        self._state = state
        self._jobs = list(state.jobs)
        self._save(starts=(*state.starts, self._start(environment, issues)), finished=None)

    def _check_plan(self, state: CampaignState, plan: Plan) -> None:
        """Refuse to resume a run directory started with another plan.

        Raises:
            PlanMismatchError: naming each setting that differs.
        """
        differences = _plan.plan_differences(state.plan, plan)
        if differences:
            raise PlanMismatchError(
                "run directory %s was started with another plan (%s); rerun with the run's "
                "settings to resume it, or choose a new --run-dir"
                % (self.run_dir, "; ".join(differences)))

    def _nothing_to_measure(self, cpu: int) -> bool:
        """Whether the run directory holds a run of this plan with every job finished
        (then no CPU is needed); refuses a plan that does not match first, before any
        CPU is waited for.

        Raises:
            PlanMismatchError: the run directory's plan differs.
            ForeignRunDirError: it is no run directory.
        """
        self._refuse_foreign()
        if not (self.run_dir / _records.CAMPAIGN_FILE).is_file():
            return False
        try:
            if _records.schema_of(self.run_dir / _records.CAMPAIGN_FILE) \
                    == _schema1.SCHEMA_CAMPAIGN:
                return False
            state = _records.load_campaign(self.run_dir)
        except CorruptRecordError:
            return False  # the run says what is wrong once it is opened
        self._check_plan(state, replace(self.plan, cpu=cpu))
        return self.leak is None and all(job.status != "pending" for job in state.jobs)

    def _hold_cpu(self) -> None:
        """Hold the trial CPU (waiting for it with ``wait``) before the first work that
        runs on it, if that is not done yet."""
        if self._cpu_stack is None:
            return
        stack, self._cpu_stack = self._cpu_stack, None
        self.cpu = stack.enter_context(_locks.hold_cpu(self.cpu, self.run_dir,
                                                       wait=self.wait, on_wait=self.on_wait))

    def _reconcile(self) -> None:
        """The records decide: a job whose record passes every check of ``ngcc validate``
        (it belongs to its job, its raw samples match their sha256 and its statistics
        recompute from them, its KAT and implementation facts are the library's in
        build.json) is ``done``; any other job is measured (again)."""
        remeasured: list[Remeasured] = []
        for index, job in enumerate(self._jobs):
            defect = self._record_defect(job) if self._has_record(job) else "no record"
            if defect is None:
                self._jobs[index] = replace(job, status="done", error=None)
                continue
            if defect != "no record":
                remeasured.append(Remeasured(record=job.record, defect=defect))
                warnings.warn("%s at %d B: measured again, its record %s is defective (%s)"
                              % (job.label, job.message_bytes, self.run_dir / job.record,
                                 defect), MeasurementWarning, stacklevel=3)
            self._jobs[index] = replace(job, status="pending", error=None)
        if remeasured:
            *earlier, start = self._campaign.starts
            self._save(starts=(*earlier, replace(start, remeasured=tuple(remeasured))))

    def _has_record(self, job: Job) -> bool:
        """Whether the job's record file exists.

        Raises:
            CorruptRecordError: a directory where the record or its raw file belongs,
                which a new measurement could not replace.
        """
        for where in (self.run_dir / job.record, self.run_dir / job.raw):
            if where.is_dir():
                raise CorruptRecordError(where, "is a directory, not a file",
                                         "Remove it to measure that job again.")
        return (self.run_dir / job.record).exists()

    def _record_defect(self, job: Job) -> str | None:
        """What is wrong with the job's record, or None when ``ngcc validate`` finds
        nothing."""
        path = self.run_dir / job.record
        try:
            record = RunRecord.located(_records.load_job_record(self.run_dir, job), path,
                                       self.run_dir)
        except CorruptRecordError as exc:
            return exc.defect
        build = BuildState(run_id=self._campaign.run_id, libraries=tuple(self._build.values()))
        problems = _recheck.record_problems(record, self._campaign.run_id, build)
        return "; ".join(str(problem) for problem in problems) or None

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
        which (the command line then exits with status 1).
        """
        if self.workers is not None or self.scheduler is not None or self.executor:
            return self._run_distributed()
        return self._locked(dry_run=False)

    def dry_run(self) -> CostEstimate:
        """The KAT gate and the calibration, then stop: what :meth:`run` would measure.

        Writes the run directory as far as that (``build.json``, the KAT logs, each
        job's t1 and plan in ``campaign.json``), so a later :meth:`run` with the same
        settings resumes from there without calibrating again. Raises what
        :meth:`run` raises before its trials. (With ``workers``/``scheduler`` too: the
        calibration runs here; the workers calibrate each job again where they measure
        it.)
        """
        self._locked(dry_run=True)
        return self.estimate()

    def _locked(self, dry_run: bool) -> Run:
        """Hold the run directory, then (unless nothing is left to measure) the trial
        CPU, and run."""
        with _locks.hold_run_dir(self.run_dir), contextlib.ExitStack() as stack:
            resume = _locks.stored_cpu(self.run_dir) if self._cpu_asked is None else None
            if self._nothing_to_measure(_locks.choose_cpu(self._cpu_asked, resume)):
                self.cpu = _locks.choose_cpu(self._cpu_asked, resume)
                self._cpu_stack = stack  # held only if a defective record is measured again
            else:
                self.cpu = stack.enter_context(_locks.hold_cpu(
                    self._cpu_asked, self.run_dir, resume, wait=self.wait,
                    on_wait=self.on_wait))
            self.plan = replace(self.plan, cpu=self.cpu)
            try:
                return self._run_held(dry_run)
            finally:
                self._cpu_stack = None

    def estimate(self) -> CostEstimate:
        """The cost of the jobs still to measure, from their calibration (jobs not yet
        calibrated count no time)."""
        todo = [self._jobs[i] for i in self._pending()]
        leak = 0.0
        if self.leak is not None:
            out = self.run_dir / _leak_evidence.LEAK_DIR
            leak = self.leak_seconds * sum(
                entry.kat.gate != "refused" and not _leak_evidence.kept(
                    out, entry.candidate, label, self.leak, self.leak_calls, self.leak_seconds)
                for label, entry in self._build.items())
        target = self.target_ci is not None and self.max_trials > self.trials
        return CostEstimate(
            jobs=len(todo), libraries=len({job.label for job in todo}),
            lengths=len({job.message_bytes for job in todo}), trials=self.trials,
            max_trials=self.max_trials if target else None,
            calls=sum(job.trials_planned * (job.calls_per_trial or 0) for job in todo),
            seconds=sum(job.trials_planned * self._trial_cost(job) for job in todo),
            max_seconds=sum(self.max_trials * self._trial_cost(job) for job in todo)
            if target else None,
            leak_seconds=leak, kept=sum(job.status == "done" for job in self._jobs),
            failed=sum(job.status not in ("done", "pending") for job in self._jobs),
            calibration="warm calls" if self.calls_rule == "warm" else "cold call",
            executor=self.executor.describe() if self.executor is not None else None)

    def _run_held(self, dry_run: bool) -> Run:
        environment = _host.fingerprint(self.cpu)
        issues = _host.host_warnings(environment)
        if self.strict and issues:
            raise HostError("the host is not fixed for measurement (--strict): "
                            + "; ".join(issue.message for issue in issues))
        self._open_run_dir(environment, issues)
        self._environment = environment
        for issue in issues:
            warnings.warn(issue.message, MeasurementWarning, stacklevel=2)
        self._kat_gate()
        self._reconcile()
        self._apply_gate()
        if self._pending() and (self.executor is None or dry_run):
            self._hold_cpu()  # the calibration and the trials run on it
        if self.executor is None or dry_run:  # an executor calibrates where it measures
            self._calibrate()
        if self.on_plan is not None:
            self.on_plan(self.estimate())
        if dry_run:
            return Run(self.run_dir)
        self._leak_tests()
        self._measure_jobs(self.executor)
        self._finish()
        return Run(self.run_dir)

    def _pending(self) -> list[int]:
        """Indices of the jobs still to measure."""
        return [i for i, job in enumerate(self._jobs) if job.status == "pending"]

    def _task(self, total: float, name: str, items: int | None = None) -> _progress.Task:
        """The progress of one phase (``self.reporter``): a bar on a terminal, a line
        per finished job otherwise; the ETA comes from the work done so far."""
        return self.reporter.task(name, total, items)

    def _failed(self, index: int, error: ChildError) -> None:
        """Mark a job failed and save; stop the campaign if its failures look alike."""
        self._jobs[index] = replace(self._jobs[index], status=error.status, error=str(error))
        self._save()
        self._watch.failure(error, len(self._pending()))

    # KAT gate ----------------------------------------------------------------

    def _kat_gate(self) -> None:
        """Check every library against its official KAT files (``_gate``) and write
        ``build.json``; the refusals follow in :meth:`_apply_gate`."""
        stored = (_records.load_build(self.run_dir)
                  if (self.run_dir / _records.BUILD_FILE).exists() else None)
        self._build = _gate.check(self.kat_checker, self._by_label, self._sha, self.kat_files,
                                  self.run_dir, stored, self.allow_kat_fail, self.reporter,
                                  self.kat_timeout)
        _records.dump_build(self.run_dir, BuildState(run_id=self._campaign.run_id,
                                                     libraries=tuple(self._build.values())))

    def _apply_gate(self) -> None:
        refused = []
        for label, entry in self._build.items():
            if entry.kat.gate != "refused":
                continue
            refused.append("%s %s" % (label, entry.kat.verdict))
            message = _gate.refusal(label, entry, self.run_dir)
            self._jobs = [replace(job, status="refused", error=message)
                          if job.label == label and job.status != "done" else job
                          for job in self._jobs]
            warnings.warn(message, MeasurementWarning, stacklevel=4)
        self._save()
        if refused and len(refused) == len(self._build):
            unchecked = all(entry.kat.verdict == "NOKAT" for entry in self._build.values())
            raise KatGateError(
                "the KAT gate refused every instance (%s); see the logs under %s%s"
                % (", ".join(refused), self.run_dir / "kat", ": " + _gate.NOKAT_ADVICE
                   if unchecked else ", or rerun with --allow-kat-fail to time them anyway "
                   "(marked ⚠)"))

    # leak tests (--leak) -----------------------------------------------------

    def _leak_tests(self) -> None:
        """The timing-leakage test of every library the gate let through, at one length,
        into ``RUN_DIR/leak/`` (a result made with the same limits is kept); a test that
        fails is a warning, and the campaign goes on."""
        if self.leak is None:
            return
        out = self.run_dir / _leak_evidence.LEAK_DIR
        todo = [label for label, entry in self._build.items() if entry.kat.gate != "refused"
                and not _leak_evidence.kept(out, entry.candidate, label, self.leak,
                                            self.leak_calls, self.leak_seconds)]
        with self._leak_cpu(bool(todo)), self._task(len(todo), "leak") as bar:
            for label in todo:
                bar.status("%s %d B" % (label, self.leak))
                try:
                    result = self.leak_tester(self._by_label[label], self.leak,
                                              calls=self.leak_calls, seconds=self.leak_seconds,
                                              cpu=self.cpu, label=label)
                except NgccError as exc:
                    warnings.warn("%s: the leak test at %d B failed: %s" % (label, self.leak, exc),
                                  MeasurementWarning, stacklevel=3)
                    outcome = "failed"
                else:
                    _leak_evidence.write_evidence(result.evidence(), out)
                    outcome = "%s, max |t| %.2f" % (result.verdict, result.max_t)
                bar.advance(1)
                bar.item_done("%s %d B" % (label, self.leak), outcome)

    @contextlib.contextmanager
    def _leak_cpu(self, needed: bool) -> Iterator[None]:
        """With an executor the client holds no CPU lock but for the leak tests it runs
        (none either on a CPU its local workers have, idle before the jobs go out)."""
        if self.executor is None or not needed:
            yield
            return
        held = getattr(self.executor, "held", ())
        if held and self._cpu_asked in (None, *held):
            self.cpu = self._cpu_asked if self._cpu_asked is not None else held[-1]
            yield
            return
        with _locks.hold_cpu(self._cpu_asked, self.run_dir) as cpu:
            self.cpu = cpu
            yield

    # calibrate and plan ------------------------------------------------------

    def _calibrate(self) -> None:
        """Calibrate every pending job that lacks its calibration (``job.calibrate``: the
        cold call in a fresh pinned child, with the warm plan a short trial of warm
        calls) and plan it, before any trial: so the cost estimate comes first."""
        warm = self.calls_rule == "warm"
        todo = [i for i in self._pending() if self._jobs[i].t1_seconds is None
                or (warm and self._jobs[i].warm_call_seconds is None)]
        with self._task(len(todo), "calibrate") as bar:
            for index in todo:
                job = self._jobs[index]
                bar.status("%s %d B" % (job.label, job.message_bytes))
                try:
                    calibration = _jobs.calibrate(self._order(job), self.runner,
                                                  self._by_label[job.label], self.cpu,
                                                  t1=job.t1_seconds)
                except ChildError as exc:
                    bar.advance(1)
                    self._failed(index, exc)
                else:
                    self._jobs[index] = self._planned(job, calibration)
                    self._watch.success(done=False)
                    self._save()
                    bar.advance(1)

    def _planned(self, job: Job, calibration: _jobs.Calibration) -> Job:
        """The job with its calibration, its plan and the plan's estimated seconds."""
        c = calibration
        return replace(job, t1_seconds=c.t1_seconds, warm_call_seconds=c.warm_call_seconds,
                       calls_per_trial=c.calls_per_trial, warmup_calls=c.warmup_calls,
                       estimated_seconds=self.trials * (c.calls_per_trial + c.warmup_calls)
                       * (c.warm_call_seconds or c.t1_seconds))

    # measure and write -------------------------------------------------------

    @property
    def order(self) -> str:
        """The order of the trials: ``interleaved`` (round k runs trial k of every job
        before trial k + 1 of any; the default with more than one library) or
        ``sequential`` (job after job)."""
        if self._order_asked is not None:
            return self._order_asked
        if (self.workers, self.scheduler, self.executor) != (None, None, None):
            return "sequential"  # whole jobs, each on one worker
        return "interleaved" if len(self._by_label) > 1 else "sequential"

    @staticmethod
    def _trial_cost(job: Job) -> float:
        """A trial's estimated seconds: the process start, the warm-up, the timed calls
        and the uninstrumented batch of as many calls, each call taking t1 (the warm
        call with the warm plan)."""
        calls = job.calls_per_trial or 0
        return CHILD_STARTUP_SECONDS + (2 * calls + (job.warmup_calls or 0)) \
            * (job.warm_call_seconds or job.t1_seconds or 0.0)

    def _write_job(self, job: Job, taken: Sequence[_jobs.Taken], rejected: list[RejectedTrial],
                   env: Environment | None = None) -> Record:
        """Raw samples first, then the record (the commit point); return the record.
        ``env`` is the host and CPU the trials ran on (default: this campaign's)."""
        raw_sha = _records.dump_raw(_records.path_in(self.run_dir, job.raw), job.message_bytes,
                                    [t.measured.cycles for t in taken])
        record = self._record(job, taken, rejected, raw_sha, env)
        _records.dump_record(self.run_dir, record)
        return record

    def _record(self, job: Job, taken: Sequence[_jobs.Taken], rejected: list[RejectedTrial],
                raw_sha: str, env: Environment | None = None) -> Record:
        env = env or self._env
        build = self._build[job.label]
        entries = tuple(t.trial for t in taken)
        statistics = _stats.aggregate_trials(
            entries, [t.measured.cycles for t in taken], job.message_bytes, env.cpu)
        if rejected:
            warnings.warn("%s at %d B: --strict rejected and repeated %d disturbed trial(s) "
                          "(%s)" % (job.label, job.message_bytes, len(rejected), "; ".join(
                              r.message for r in rejected[:2])), MeasurementWarning,
                          stacklevel=5)
        reached = _stats.target_reached_percent([t.measured.cycles for t in taken],
                                                self.statistic) \
            if self.target_ci is not None else None
        if self.target_ci is not None and (reached is None or reached > self.target_ci):
            warnings.warn(MeasurementWarning(_target_missed(
                job, len(taken), reached, self.target_ci, self.statistic)), stacklevel=5)
        for code, count, worst in _stats.flag_groups(statistics.flags):
            warnings.warn(TrialFlagWarning(
                "%s at %d B: %s" % (job.label, job.message_bytes, worst.message)
                if count == 1 else "%s at %d B: %d trials flagged %s; the worst: %s"
                % (job.label, job.message_bytes, count, code, worst.message), code),
                stacklevel=5)
        return Record(
            run_id=self._campaign.run_id, candidate=job.candidate, instance=job.instance,
            label=job.label, family=build.family, digest_bits=build.digest_bits,
            operation=operation(job.message_bytes), message_bytes=job.message_bytes,
            implementation=build.implementation, kat=build.kat,
            plan=JobPlan(t1_seconds=job.t1_seconds or 0.0,
                         calls_per_trial=job.calls_per_trial or 1,
                         warmup_calls=job.warmup_calls or 0, trials_planned=self.trials,
                         trial_target_seconds=float(self.trial_target),
                         op_budget_seconds=float(self.op_budget),
                         target_ci_percent=self.plan.target_ci_percent,
                         max_trials=self.max_trials, cpu=env.cpu,
                         estimated_seconds=job.estimated_seconds or 0.0,
                         calls_rule=self.calls_rule, statistic=self.statistic,
                         order=self.order, warm_call_seconds=job.warm_call_seconds),
            environment=env, trials=entries, statistics=statistics,
            resources=Resources(elf_image_bytes=build.elf_image_bytes,
                                baseline_rss_kib=max(t.baseline_rss_kib for t in entries),
                                peak_rss_kib=max(t.peak_rss_kib for t in entries)),
            raw=RawRef(path=job.raw, sha256=raw_sha,
                       calls_per_trial=tuple(t.calls for t in entries)),
            provenance=Provenance(created=utc_now(), ngcc_version=env.ngcc_version,
                                  git_commit=env.git_commit, command=tuple(self.command),
                                  runner=_runner_name(self.runner), message=MESSAGE),
            rejected_trials=tuple(rejected), target_ci_reached_percent=reached)

    # measure on an executor (--workers, --scheduler) ----------------------------

    def _executor_name(self) -> str | None:
        if self.executor is not None:
            return self.executor.describe()
        if self.workers is not None:
            return "dask LocalCluster: %d workers" % self.workers
        return None if self.scheduler is None else "dask %s" % self.scheduler

    def _run_distributed(self) -> Run:
        """Run with an executor: this process holds the run directory (and a local
        cluster's CPUs, ``_distributed.local_executor``), a remote worker its CPU for each
        job; ``workers``/``scheduler`` make the executor and close it after."""
        from ngcc.measure import (
            distributed as _distributed,  # Dask is optional: imported only when asked for
        )

        given = self.executor
        try:
            with contextlib.ExitStack() as stack:
                if self.executor is None:
                    self.executor = stack.enter_context(
                        _distributed.local_executor(self.workers, self.run_dir)
                        if self.workers is not None
                        else _distributed.remote_executor(str(self.scheduler)))
                stack.enter_context(_locks.hold_run_dir(self.run_dir))
                return self._run_held(dry_run=False)
        finally:
            self.executor = given  # a cluster made here is closed: the next run makes one

    def _order(self, job: Job, calibrated: bool = False) -> _jobs.JobOrder:
        """The job as an executor takes it (``calibrated``: with the calibration this
        campaign made, for its own executor)."""
        calibration = _jobs.Calibration(job.t1_seconds or 0.0, job.warm_call_seconds,
                                        job.calls_per_trial or 1, job.warmup_calls or 0)
        return _jobs.JobOrder(
            key="ngcc %s %s %d B %s" % (self._campaign.run_id, job.label, job.message_bytes,
                                         self._token),
            label=job.label, instance=self._by_label[job.label],
            library_sha256=self._sha[job.label], message_bytes=job.message_bytes,
            trials=self.trials, max_trials=self.max_trials, target_ci=self.target_ci,
            trial_target=float(self.trial_target), op_budget=float(self.op_budget),
            trial_timeout=self.trial_timeout, run_dir=str(self.run_dir.resolve()),
            calls_rule=self.calls_rule, statistic=self.statistic,
            attempts=_jobs.STRICT_ATTEMPTS if self.strict else 1,
            calibration=calibration if calibrated else None)

    def _measure_jobs(self, executor: _jobs.JobExecutor | None) -> None:
        """Hand every pending job to ``executor`` (None: the campaign's own
        :class:`~ngcc.measure.job.LocalExecutor`, which keeps each trial as it comes);
        check each result as it arrives (``job.result_defects``) and write its record."""
        orders = {}
        for index in self._pending():
            order = self._order(self._jobs[index], calibrated=executor is None)
            orders[order.key] = (index, order)
        local = executor is None
        # Here the bar counts estimated seconds, so jobs of different cost move it fairly.
        total = sum(self._jobs[i].trials_planned * self._trial_cost(self._jobs[i])
                    for i, _ in orders.values()) if local else len(orders)
        with self._task(total, "measure", len(orders)) as bar:
            if executor is None:
                executor = _jobs.LocalExecutor(self.cpu, self.order, self._env, _TrialKeeper(
                    self, bar, {key: index for key, (index, _) in orders.items()}))
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
        job = self._jobs[index]
        what = "%s %d B" % (job.label, job.message_bytes)
        if not local:
            bar.advance(1)
        record = self._arrived(index, order, result)
        if isinstance(record, ChildError):
            if local:
                _partial.discard(self.run_dir, job.raw)
                bar.advance(max(0, job.trials_planned - len(result.trials))
                            * self._trial_cost(job))
            bar.item_done(what, record.status)
            self._failed(index, record)
            return
        self._watch.success()
        self._save()
        if local:
            _partial.discard(self.run_dir, job.raw)  # the record supersedes them
            bar.item_done(what, _per_byte(record))
        else:
            bar.item_done(what, "%s on %s CPU %d" % (
                _per_byte(record), record.environment.host, record.environment.cpu))

    def _arrived(self, index: int, order: _jobs.JobOrder, result: _jobs.JobResult
                 ) -> Record | ChildError:
        """Take a job's result: note each attempt lost with its worker (a warning and
        ``resubmitted`` in campaign.json), keep its calibration, then write its record
        (``done``) and return it, or return why the job failed (a failed child, or a result
        refused)."""
        job = self._jobs[index]
        for lost in result.lost:
            self._resubmitted.append(Resubmitted(record=job.record, worker=lost.worker,
                                                 reason=lost.reason))
            *earlier, start = self._campaign.starts
            self._save(starts=(*earlier, replace(start, resubmitted=tuple(self._resubmitted))))
            warnings.warn("%s at %d B: %s %s; its partial trials were discarded and the job "
                          "was measured again from the start" % (
                              job.label, job.message_bytes, lost.worker, lost.reason),
                          MeasurementWarning, stacklevel=5)
        if result.t1_seconds is not None:  # planned here by the rule, not as it says
            job = self._jobs[index] = self._planned(job, _jobs.planned(
                order, result.t1_seconds, result.warm_call_seconds))
        if result.status != "done":
            return ChildError(result.status, result.error or result.status)
        defects = _jobs.result_defects(order, result)
        if defects or result.environment is None:
            message = "the result from %s was refused: %s" % (result.worker, "; ".join(defects))
            warnings.warn("%s at %d B: %s" % (job.label, job.message_bytes, message),
                          MeasurementWarning, stacklevel=5)
            return ChildError("error", message)
        record = self._write_job(job, result.trials, list(result.rejected),
                                 result.environment)
        self._jobs[index] = replace(job, status="done", error=None)
        return record

    def _finish(self) -> None:
        one, five, fifteen = (round(x, 2) for x in os.getloadavg())
        self._save(load_average_end=(one, five, fifteen),
                   finished=None if self._pending() else utc_now())


class _TrialKeeper(_jobs.JobWatcher):
    """What a campaign does with each trial its own executor measures: the trial kept
    on disk at once (``partial``: a stop mid-round loses no trial, a resumed job starts
    with the trials it kept), the failure watch told that a child delivered, and the
    progress bar moved (by estimated seconds; a line per round of interleaved jobs)."""

    def __init__(self, campaign: Campaign, bar: _progress.Task, index_of: dict[str, int]):
        self.campaign, self.bar, self.index_of = campaign, bar, index_of

    def _job(self, order: _jobs.JobOrder) -> Job:
        return self.campaign._jobs[self.index_of[order.key]]

    def kept(self, order: _jobs.JobOrder, calibration: _jobs.Calibration) -> list[_jobs.Taken]:
        """The trials an earlier start kept, measured with this plan on this CPU."""
        campaign, job = self.campaign, self._job(order)
        kept = _partial.load(campaign.run_dir, job.raw, calibration.calls_per_trial,
                             calibration.warmup_calls, order.library_sha256, cpu=campaign.cpu)
        self.bar.advance(min(len(kept), job.trials_planned) * campaign._trial_cost(job))
        return kept

    def status(self, order: _jobs.JobOrder) -> None:
        """The bar names the job measured now."""
        self.bar.status("%s %d B" % (order.label, order.message_bytes))

    def trial_done(self, order: _jobs.JobOrder, stepper: _jobs.JobStepper) -> None:
        """Commit the job's last trial on its own; a trial delivered, the job not done
        yet; the bar moves by a planned trial (not by one ``target_ci`` added)."""
        campaign, job = self.campaign, self._job(order)
        _partial.save(campaign.run_dir, job.raw, len(stepper.taken) - 1, stepper.taken[-1],
                      stepper.calibration.warmup_calls, order.library_sha256)
        campaign._watch.success(done=False)
        if len(stepper.taken) <= job.trials_planned:
            self.bar.advance(campaign._trial_cost(job))

    def round_done(self, rounds: int, fewest: int, measuring: int, more: bool) -> None:
        """A line per round (the jobs end together: a bar would say nothing for long)."""
        reporter = self.campaign.reporter
        if reporter.mode != "lines":
            return
        eta = self.bar.eta()
        reporter.line("measure: round %d done (trial %d of %d jobs; elapsed %s%s)"
                      % (rounds, fewest + 1, measuring, _progress.clock(self.bar.elapsed()),
                         ", ETA %s" % _progress.clock(eta) if more and eta is not None
                         else ""))
