"""Whole jobs as the unit of work: what a job needs, what it gives back, who measures it.

A campaign's own trial loop (``_campaign``) measures on this host, on its one CPU. With
an **executor** the campaign hands out whole jobs instead — one library × message
length, calibrated and measured from start to end on one CPU of one host — and gets
back, for each, the trial measurements and the facts of the host and CPU they were
made on (:class:`JobResult`). The campaign checks every arriving result
(:func:`result_defects`) and writes its record exactly as it writes its own: the
executor never touches the run directory.

:class:`SerialExecutor` measures the jobs one after another in this process (the
reference for other executors, and what the tests drive with fake runners);
``_distributed.DaskExecutor`` sends them to Dask workers, one worker per CPU.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from ngcc.base.clock import utc_now
from ngcc.base.errors import ChildError
from ngcc.driver import child as _child
from ngcc.driver.contract import TrialRunner
from ngcc.evidence.model import Environment, RejectedTrial, Trial, TrialMeasurement
from ngcc.library.registry import Instance
from ngcc.measure import host as _host
from ngcc.measure import locks as _locks
from ngcc.measure import plan as _plan
from ngcc.stats import trials as _stats


@dataclass(frozen=True)
class JobOrder:
    """Everything a worker needs to measure one job, and nothing of the run directory.

    Attributes:
        key: the job's name while it is out (unique per start of a campaign).
        label: the library's label in the run.
        instance: the library (``library`` is the client's path; a worker loads its
            own copy, checked against ``library_sha256``).
        library_sha256: the sha256 of the library the plan names.
        message_bytes: the message length.
        trials, max_trials, target_ci: how many trials (more, up to ``max_trials``,
            until the 95 % CI is within ``target_ci`` percent).
        trial_target, op_budget: the plan rule's T and budget (``_plan.calls_per_trial``).
        trial_timeout: seconds a trial or cold-call child may take (None: the default).
        run_dir: the client's run directory, named in the worker's CPU lock.
        calls_rule: ``harness`` (calls per trial from the cold call) or ``warm`` (from
            a short calibration trial of warm calls), as ``_plan`` has them.
        statistic: what ``target_ci`` aims at (``mean`` or ``median``).
        attempts: the most attempts at one trial: 1, or ``--strict``'s
            ``STRICT_ATTEMPTS`` (a disturbed or slow-process trial is repeated, and
            listed as rejected: ``_stats.rejection``).
    """

    key: str
    label: str
    instance: Instance
    library_sha256: str
    message_bytes: int
    trials: int
    max_trials: int
    target_ci: float | None
    trial_target: float
    op_budget: float
    trial_timeout: float | None
    run_dir: str
    calls_rule: str = "harness"
    statistic: str = "mean"
    attempts: int = 1


@dataclass(frozen=True)
class Taken:
    """A trial kept for a job: when it started, what it measured, its place among the
    job's trials (a job's trials run in a row on its worker)."""

    started: str
    measured: TrialMeasurement
    position: int


@dataclass(frozen=True)
class Lost:
    """An earlier attempt at a job that died with its worker: its trials are gone."""

    worker: str
    reason: str


@dataclass(frozen=True)
class JobResult:
    """What came back for one job: its calibration, its trials, where they were made.

    Attributes:
        key: the :attr:`JobOrder.key`.
        worker: who measured it (``serial``, or the Dask worker's address).
        environment: the fingerprint of the host and CPU measured on (None only when
            the job failed before it was taken).
        status: ``done``, or the failed child's status (``crash``, ``timeout``,
            ``error``, ``protocol``) with the message in ``error``.
        library_sha256: the sha256 of the library bytes the worker loaded.
        t1_seconds, warm_call_seconds, calls_per_trial, warmup_calls: the calibration
            and the plan made from it on the worker (by ``_plan``'s rule, which the
            client checks).
        trials: every trial kept, in order.
        rejected: the attempts ``--strict`` set aside (disturbed, measured again).
        lost: earlier attempts that died with their worker (filled in by the executor).
    """

    key: str
    worker: str
    environment: Environment | None
    status: str = "done"
    error: str | None = None
    library_sha256: str | None = None
    t1_seconds: float | None = None
    warm_call_seconds: float | None = None
    calls_per_trial: int | None = None
    warmup_calls: int | None = None
    trials: tuple[Taken, ...] = ()
    rejected: tuple[RejectedTrial, ...] = ()
    lost: tuple[Lost, ...] = ()


class JobExecutor(Protocol):
    """Measures whole jobs somewhere and hands back their results as they arrive."""

    def describe(self) -> str:
        """What measures the jobs, as ``campaign.json`` records it."""
        ...

    def measure(self, orders: Sequence[JobOrder], runner: TrialRunner
                ) -> Iterator[JobResult]:
        """One :class:`JobResult` per order, in the order they complete."""
        ...


def enough(cycles: Sequence[np.ndarray], order: JobOrder) -> bool:
    """Whether a job has its trials: the planned ones, then (``target_ci``) more until
    the CI of the mean is narrow enough or ``max_trials`` are done."""
    if len(cycles) < order.trials:
        return False
    if order.target_ci is None or len(cycles) >= order.max_trials:
        return True
    relative = _stats.stop_rule_precision(list(cycles), order.statistic)
    return relative is not None and 100 * relative <= order.target_ci


def planned(order: JobOrder, t1: float, warm_call: float | None) -> tuple[int, int]:
    """(calls per trial, warm-up calls) by the order's rule: from the cold call ``t1``,
    or from the warm call of the warm plan."""
    if order.calls_rule == "warm" and warm_call is not None:
        return (_plan.warm_calls_per_trial(warm_call, order.trial_target, order.op_budget,
                                           order.trials), _plan.warmup_calls(warm_call))
    return (_plan.calls_per_trial(t1, order.trial_target, order.op_budget, order.trials),
            _plan.warmup_calls(t1))


def measure_job(order: JobOrder, runner: TrialRunner, cpu: int, worker: str,
                library: Path | None = None, library_sha256: str | None = None) -> JobResult:
    """Calibrate, plan and measure one job on ``cpu`` of this host, as the campaign's
    own loop does (cold call, the warm plan's calibration trial, the plan rule, the
    trials with ``--strict``'s repeats and ``--target-ci``'s extra trials).

    ``library`` is this host's copy of the library (default: the order's path) and
    ``library_sha256`` its checked sha256. A failed child ends the job with its status.
    """
    instance = order.instance if library is None else replace(order.instance, library=library)
    done = JobResult(key=order.key, worker=worker, environment=_host.fingerprint(cpu),
                     library_sha256=library_sha256 or order.library_sha256)
    n = order.message_bytes
    try:
        t1 = runner.cold_call(instance, n, cpu, order.trial_timeout or _child.COLD_TIMEOUT)
        warm_call = _warm_call(order, runner, instance, cpu, t1) \
            if order.calls_rule == "warm" else None
        calls, warmup = planned(order, t1, warm_call)
        done = replace(done, t1_seconds=t1, warm_call_seconds=warm_call,
                       calls_per_trial=calls, warmup_calls=warmup)
        timeout = order.trial_timeout or _child.trial_timeout(t1, calls, warmup)
        taken: list[Taken] = []
        rejected: list[RejectedTrial] = []
        position = 0
        while not enough([t.measured.cycles for t in taken], order):
            for attempt in range(order.attempts):
                started = utc_now()
                measured = runner.trial(instance, n, calls, warmup, cpu, len(taken), timeout)
                trial = Taken(started, measured, position)
                position += 1
                flag = _stats.rejection(_entry(trial, len(taken), warmup),
                                        [t.measured.cycles for t in taken], cpu)
                if flag is None or attempt == order.attempts - 1:
                    taken.append(trial)
                    break
                rejected.append(RejectedTrial(trial=len(taken), position=trial.position,
                                              started=started, code=flag.code,
                                              message=flag.message))
    except ChildError as exc:
        return replace(done, status=exc.status, error=str(exc))
    return replace(done, trials=tuple(taken), rejected=tuple(rejected))


def _warm_call(order: JobOrder, runner: TrialRunner, instance: Instance, cpu: int,
               t1: float) -> float:
    """Seconds of a warm call: the median call of the warm plan's short calibration
    trial (as the campaign's own calibration takes it)."""
    calls = _plan.calibration_calls(t1)
    warmup = max(1, _plan.warmup_calls(t1))
    measured = runner.trial(instance, order.message_bytes, calls, warmup, cpu, 0,
                            order.trial_timeout or _child.trial_timeout(t1, calls, warmup))
    return max(float(np.median(measured.cycles)), 1.0) / measured.frequency_hz


def _entry(trial: Taken, index: int, warmup: int) -> Trial:
    return _stats.trial_entry(index, trial.started, warmup, trial.measured, trial.position)


def result_defects(order: JobOrder, result: JobResult) -> list[str]:
    """Why the client must not write ``result`` as the record of ``order`` (empty: it may).

    A result must name the host and CPU it was measured on, have loaded the library the
    plan names, follow the plan rule from its own calibration, and hold between
    ``trials`` and ``max_trials`` trials of that many calls, each pinned to that CPU.
    """
    env = result.environment
    if result.key != order.key:
        return ["it answers job %s, not %s" % (result.key, order.key)]
    if env is None or env.host is None:
        return ["it does not name the host it was measured on"]
    found = []
    if result.library_sha256 != order.library_sha256:
        found.append("the worker loaded a library of sha256 %s, not the plan's %s"
                     % (result.library_sha256, order.library_sha256))
    t1, warm_call = result.t1_seconds, result.warm_call_seconds
    if t1 is None or not t1 > 0:
        return [*found, "it has no calibration (t1 %r)" % (t1,)]
    if (order.calls_rule == "warm") != (warm_call is not None):
        return [*found, "its warm call (%r) does not fit the %s plan" % (warm_call,
                                                                         order.calls_rule)]
    calls, warmup = planned(order, t1, warm_call)
    if (result.calls_per_trial, result.warmup_calls) != (calls, warmup):
        found.append("its plan (%s calls, %s warm-up) is not the plan rule's for t1 %.3g s "
                     "(%d calls, %d warm-up)" % (result.calls_per_trial, result.warmup_calls,
                                                 t1, calls, warmup))
    if not order.trials <= len(result.trials) <= order.max_trials:
        found.append("it has %d trials, not %d to %d" % (len(result.trials), order.trials,
                                                         order.max_trials))
    for index, measured in enumerate(t.measured for t in result.trials):
        if measured.cpu != env.cpu:
            found.append("trial %d ran on CPU %d, not the worker's CPU %d"
                         % (index, measured.cpu, env.cpu))
        if len(measured.cycles) != result.calls_per_trial:
            found.append("trial %d timed %d calls, not %s" % (index, len(measured.cycles),
                                                               result.calls_per_trial))
    return found


class SerialExecutor:
    """Whole jobs one after another in this process, pinned to one CPU of this host
    (held with its CPU lock while measuring).

    Args:
        cpu: the CPU (default: the last allowed one no other campaign holds).
    """

    def __init__(self, cpu: int | None = None):
        self.cpu = cpu

    def describe(self) -> str:
        """``serial`` (with the CPU when one was asked for)."""
        return "serial" if self.cpu is None else "serial, CPU %d" % self.cpu

    def measure(self, orders: Sequence[JobOrder], runner: TrialRunner
                ) -> Iterator[JobResult]:
        """Each job in turn, on the CPU held for all of them."""
        if not orders:
            return
        with _locks.hold_cpu(self.cpu, orders[0].run_dir) as cpu:
            for order in orders:
                yield measure_job(order, runner, cpu, "serial")
