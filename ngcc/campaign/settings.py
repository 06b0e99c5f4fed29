"""The settings of a campaign: one frozen object, every value checked and every default
resolved once (the quick plan's among them), before anything is measured or written.

The command line and ``ngcc evaluate`` build a :class:`CampaignSettings` and hand it
to :class:`~ngcc.Campaign`; Python callers may pass the same fields as keyword
arguments of ``Campaign`` instead. What runs code (the trial runner, the KAT checker,
the leak tester, an executor) and what listens (progress, ``on_plan``, ``on_wait``)
are not settings: ``Campaign`` takes them beside.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.clock import run_id_now
from ngcc.base.errors import DistributedError, ForeignRunDirError
from ngcc.driver import child as _child
from ngcc.driver import timing as _timing
from ngcc.evidence.model import (
    CALLS_RULES,
    COUNTER_CHOICES,
    ORDERS,
    STATISTICS,
    Job,
    Plan,
    PlanLibrary,
)
from ngcc.library import katfile as _katfile
from ngcc.library.registry import Instance
from ngcc.measure import leak_measurement as _leak
from ngcc.measure import locks as _locks
from ngcc.measure import plan as _plan
from ngcc.measure.job import STRICT_ATTEMPTS, Calibration, JobExecutor, JobOrder


@dataclass(frozen=True)
class CampaignSettings:
    """Every setting of a campaign, checked (build it with :meth:`make`).

    Attributes:
        candidate: also measure every built-in instance of this candidate id, or,
            when library paths are named, the candidate id of those libraries.
        all_instances: measure every built-in instance.
        labels: a label for each instance named, in order (None or missing: the
            instance's own, else derived: the instance name, ``Wish512@opt`` for
            another built-in variant, ``Pavelor-512@perf`` for one of several builds
            of one instance). Labels name the libraries in files, tables and plots;
            the instance name still selects the KAT manifest line.
        lengths: message lengths in bytes (default: the eight guide lengths).
        trials: trials per instance × length (default 5; 3 with ``quick``).
        trial_target: seconds of calls per trial, T of the plan rule (default 1.0;
            0.02 with ``quick``).
        op_budget: seconds allowed for all trials of one instance × length
            (default 900; 5 with ``quick``).
        cpu: the CPU every trial is pinned to (None: the last allowed one that no
            other running ngcc campaign holds; a resumed run keeps its CPU). With
            ``workers``/``scheduler`` each worker pins to its own CPU, and this one is
            the CPU of the leak tests, which run here.
        run_dir: the run directory (default ``runs/<UTC start time>``); an existing
            run directory with the same plan is resumed.
        quick: a small plan for smoke tests and CI.
        strict: make an unfixed host an error instead of a warning, and repeat
            disturbed trials (a trial that was preempted, whose counter ran off its
            rate, or whose process ran slow as a whole is run again, at most
            ``measure.job.STRICT_ATTEMPTS`` times in all; the record's
            ``rejected_trials`` lists the attempts set aside).
        target_ci: keep adding trials (up to ``max_trials``) until the 95 %
            confidence interval of ``statistic`` is within this many percent (a job
            that stops at ``max_trials`` short of it is said in a warning and in its
            record's ``target_ci_reached_percent``).
        max_trials: the cap on trials (20 with ``target_ci``, else ``trials``).
        allow_kat_fail: time instances whose KAT verdict is not PASS (each record
            is then marked ``timed_without_pass``; reports show ⚠).
        kat_files: the official KAT files the gate checks (default KAT_2_12, KAT_2_23).
        kat_timeout: seconds allowed per KAT file before the verdict is TIMEOUT
            (None: ``ngcc.driver.child.KAT_TIMEOUTS``, 600 s for the quick files).
        kat_manifest, kat_official: the default KAT checker's ``manifest`` (a manifest
            ngcc does not ship) and ``official_dir`` (the official KAT files, the
            reference where no manifest line is).
        trial_timeout: seconds a trial or calibration child may take before it is
            killed (None: ten times the trial's estimate plus 60 s, at most
            ``max_trial_timeout``; 120 s for the cold call).
        max_trial_timeout: the cap on a trial's deadline derived from its cold call
            (default ``ngcc.driver.child.MAX_TRIAL_TIMEOUT``, 300 s): the cold call is
            the library's own, so a slow one cannot buy its trials a long deadline; a
            trial killed at the cap says so. ``trial_timeout`` is not capped.
        statistic: what ``target_ci`` aims at: ``mean`` (the t interval of the trial
            means, as ngcc 0.1) or ``median`` (the log-scale interval of the trial
            medians, which rare preemptions hardly move).
        calls_rule: ``harness`` (the NGCC harness's calls per trial from one cold call,
            the default) or ``warm`` (a short calibration trial of warm calls, then
            enough calls for ``trial_target`` seconds of timed loop).
        order: ``interleaved`` (round k runs trial k of every job before trial k + 1
            of any) or ``sequential`` (job after job); None: interleaved with more
            than one library, sequential with workers or a scheduler.
        counter: the counter of the default runner's trials: ``auto`` (perf core
            cycles where RDPMC is allowed, else the TSC), ``perf``, ``tsc`` or
            ``clock`` (``csrc/common/timer.h``); None: the TSC. Each trial records the
            counter it got.
        leak: also test every library the KAT gate lets through for timing leakage
            (:func:`ngcc.leak`) at this message length in bytes, after the gate;
            evidence in ``RUN_DIR/leak/``, a ``leak`` section in the report.
        leak_calls, leak_seconds: the limits of each leak test (default
            ``measure.leak.DEFAULT_CALLS`` calls, ``measure.leak.DEFAULT_SECONDS`` s).
        workers: measure on a local Dask cluster of this many worker processes, one
            per CPU (the last ones this process may use), whole jobs at a time
            (``ngcc[distributed]``).
        scheduler: measure on the workers of the Dask scheduler at this address
            (``tcp://HOST:PORT``), each worker started with a ``cpu`` resource and its
            CPU in ``$NGCC_CPU``.
        wait: seconds to wait for the trial CPU (with ``workers``: for every CPU of
            the local cluster) when another ngcc measurement holds it (default
            ``measure.locks.DEFAULT_WAIT_SECONDS``, as on the command line; 0 or None:
            refuse at once with :class:`~ngcc.CpuBusyError`). Every setting is checked
            first, and a run with nothing to measure and a plan that does not match
            its run directory need no CPU: they are answered before any wait.
        command: the command line recorded as provenance.
    """

    candidate: str | None = None
    all_instances: bool = False
    labels: tuple[str | None, ...] = ()
    lengths: tuple[int, ...] = tuple(_plan.DEFAULT_LENGTHS)
    trials: int = _plan.DEFAULT_TRIALS
    trial_target: float = _plan.DEFAULT_TRIAL_TARGET
    op_budget: float = _plan.DEFAULT_OP_BUDGET
    cpu: int | None = None
    run_dir: Path = Path("runs")
    quick: bool = False
    strict: bool = False
    target_ci: float | None = None
    max_trials: int = _plan.DEFAULT_TRIALS
    allow_kat_fail: bool = False
    kat_files: tuple[str, ...] = tuple(_plan.KAT_FILES)
    kat_timeout: float | None = None
    kat_manifest: str | os.PathLike[str] | None = None
    kat_official: str | os.PathLike[str] | None = None
    trial_timeout: float | None = None
    max_trial_timeout: float = _child.MAX_TRIAL_TIMEOUT
    statistic: str = "mean"
    calls_rule: str = "harness"
    order: str | None = None
    counter: str | None = None
    leak: int | None = None
    leak_calls: int = _leak.DEFAULT_CALLS
    leak_seconds: float = _leak.DEFAULT_SECONDS
    workers: int | None = None
    scheduler: str | None = None
    wait: float | None = _locks.DEFAULT_WAIT_SECONDS
    command: tuple[str, ...] = ("ngcc.Campaign(...)",)

    @classmethod
    def make(cls, *, lengths: Iterable[int] = _plan.DEFAULT_LENGTHS,
             labels: Iterable[str | None] = (), kat_files: Iterable[str] = _plan.KAT_FILES,
             trials: int | None = None, trial_target: float | None = None,
             op_budget: float | None = None, max_trials: int | None = None,
             run_dir: str | os.PathLike[str] | None = None,
             leak_calls: int | None = None, leak_seconds: float | None = None,
             command: Iterable[str] | None = None, quick: bool = False,
             **fields: object) -> CampaignSettings:
        """The settings with every default resolved (``quick``'s plan where ``quick``),
        each value checked.

        Raises:
            ValueError: a value out of range or not one of its choices (named).
            TypeError: a keyword that is no setting.
            ForeignRunDirError: ``run_dir`` is a symbolic link to nothing.
            DistributedError: ``workers``/``scheduler`` without Dask installed.
        """
        unknown = set(fields) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise TypeError("no campaign setting %s (the settings: %s)" % (
                ", ".join(sorted(unknown)), ", ".join(f.name for f in dataclasses.fields(cls))))
        _check_positive(trials=trials, trial_target=trial_target, op_budget=op_budget,
                        max_trials=max_trials,
                        **{name: fields.get(name) for name in (
                            "target_ci", "kat_timeout", "trial_timeout", "max_trial_timeout")})
        trials = trials or (_plan.QUICK_TRIALS if quick else _plan.DEFAULT_TRIALS)
        if max_trials is not None and max_trials < trials:
            raise ValueError("max_trials (%r) is fewer than the %d trials planned; raise it or "
                             "lower trials" % (max_trials, trials))
        settings = cls(
            lengths=tuple(_checked_lengths(lengths)), labels=tuple(labels),
            kat_files=tuple(kat_files), trials=trials,
            trial_target=trial_target or (_plan.QUICK_TRIAL_TARGET if quick
                                          else _plan.DEFAULT_TRIAL_TARGET),
            op_budget=op_budget or (_plan.QUICK_OP_BUDGET if quick
                                    else _plan.DEFAULT_OP_BUDGET),
            max_trials=max(trials, max_trials or (
                _plan.TARGET_CI_MAX_TRIALS if fields.get("target_ci") else trials)),
            run_dir=Path(run_dir) if run_dir else Path("runs") / run_id_now(),
            leak_calls=_leak.DEFAULT_CALLS if leak_calls is None else leak_calls,
            leak_seconds=_leak.DEFAULT_SECONDS if leak_seconds is None else leak_seconds,
            command=tuple(command) if command else ("ngcc.Campaign(...)",), quick=quick,
            **fields)  # type: ignore[arg-type]
        settings._check()
        return settings

    @property
    def target_ci_percent(self) -> float | None:
        """``target_ci`` as the plan records it."""
        return None if self.target_ci is None else float(self.target_ci)

    def plan(self, libraries: tuple[PlanLibrary, ...], cpu: int) -> Plan:
        """The plan of these settings for ``libraries`` on ``cpu``, as the run directory
        records it (a resumed run must have the same)."""
        return Plan(libraries=libraries, lengths=self.lengths, trials=self.trials,
                    trial_target_seconds=float(self.trial_target),
                    op_budget_seconds=float(self.op_budget), max_calls=_plan.MAX_CALLS,
                    min_calls=_plan.MIN_CALLS, cpu=cpu, quick=self.quick,
                    target_ci_percent=self.target_ci_percent, max_trials=self.max_trials,
                    kat_files=self.kat_files, kat_override=self.allow_kat_fail,
                    statistic=self.statistic, calls_rule=self.calls_rule)

    def job_order(self, job: Job, instance: Instance, library_sha256: str, key: str,
                  run_dir: Path, calibrated: bool) -> JobOrder:
        """``job`` as an executor takes it, under these settings (``calibrated``: with
        the calibration the campaign made and recorded in the job)."""
        calibration = Calibration(job.t1_seconds or 0.0, job.warm_call_seconds,
                                  job.calls_per_trial or 1, job.warmup_calls or 0) \
            if calibrated else None
        return JobOrder(
            key=key, label=job.label, instance=instance, library_sha256=library_sha256,
            message_bytes=job.message_bytes, trials=self.trials, max_trials=self.max_trials,
            target_ci=self.target_ci, trial_target=float(self.trial_target),
            op_budget=float(self.op_budget), trial_timeout=self.trial_timeout,
            run_dir=str(run_dir.resolve()), calls_rule=self.calls_rule,
            statistic=self.statistic, attempts=STRICT_ATTEMPTS if self.strict else 1,
            calibration=calibration, max_trial_timeout=float(self.max_trial_timeout))

    def executor_name(self, executor: JobExecutor | None) -> str | None:
        """What measures whole jobs, as ``campaign.json`` records it (None: this
        process's own executor)."""
        if executor is not None:
            return executor.describe()
        if self.workers is not None:
            return "dask LocalCluster: %d workers" % self.workers
        return None if self.scheduler is None else "dask %s" % self.scheduler

    def trial_order(self, executor: JobExecutor | None, libraries: int) -> str:
        """The order of the trials: ``interleaved`` (round k runs trial k of every job
        before trial k + 1 of any; the default with more than one library) or
        ``sequential`` (job after job; whole jobs, each on one worker, with an executor)."""
        if self.order is not None:
            return self.order
        if (self.workers, self.scheduler, executor) != (None, None, None):
            return "sequential"
        return "interleaved" if libraries > 1 else "sequential"

    def _check(self) -> None:
        """The checks of the values that need no defaults resolved."""
        for name, value, options in (("statistic", self.statistic, STATISTICS),
                                     ("calls_rule", self.calls_rule, CALLS_RULES),
                                     ("order", self.order or ORDERS[0], ORDERS),
                                     ("counter", self.counter or "tsc", COUNTER_CHOICES)):
            if value not in options:
                raise ValueError("%s must be one of %s, got %r" % (name, ", ".join(options),
                                                                   value))
        if self.order == "interleaved" and (self.workers, self.scheduler) != (None, None):
            raise ValueError(INTERLEAVED_WHOLE_JOBS)
        if self.cpu is not None:
            _locks.check_cpu(self.cpu)
        _locks.checked_wait(self.wait)
        _katfile.normalise_files(self.kat_files)  # a typo is refused before the run directory
        if self.leak is not None:  # a mistake is refused now, not after the KAT gate
            _leak.checked_limits(self.leak, self.leak_calls, self.leak_seconds, "leak_")
        if self.run_dir.is_symlink() and not self.run_dir.exists():
            raise ForeignRunDirError("%s is a symbolic link to %s, which does not exist; "
                                     "choose another --run-dir" % (self.run_dir,
                                                                   os.readlink(self.run_dir)))
        _check_distribution(self.workers, self.scheduler)


#: Why ``order="interleaved"`` cannot go with workers, a scheduler or an executor.
INTERLEAVED_WHOLE_JOBS = ("order='interleaved' is the trial loop of one process; with "
                          "workers, scheduler or executor every job is measured whole, its "
                          "trials in a row")


def _check_positive(**settings: object) -> None:
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


def _check_distribution(workers: int | None, scheduler: str | None) -> None:
    """``workers`` and ``scheduler``: at most one, a positive number of workers, a
    ``tcp://`` address, and Dask installed for either."""
    if workers is not None and scheduler is not None:
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
