"""The executors that measure jobs in this process: whole jobs one after another
(:class:`SerialExecutor`, the reference of the remote ones), or a campaign's own jobs in
its order (:class:`LocalExecutor`). Each is a loop over the job engine's steppers
(``measure.job``); Dask's executor is ``measure.distributed``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from ngcc.base.errors import ChildError
from ngcc.driver.contract import TrialRunner
from ngcc.evidence.model import Environment
from ngcc.measure import locks as _locks
from ngcc.measure.job import (
    JobOrder,
    JobResult,
    JobStepper,
    JobWatcher,
    Positions,
    calibrated,
    measure_job,
)


class SerialExecutor:
    """Whole jobs one after another in this process, pinned to one CPU of this host
    (held with its CPU lock while measuring), each job's trials counted from its first
    (as a remote worker counts them): the reference for other executors.

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


class LocalExecutor:
    """The campaign's own executor: its jobs on the CPU this process holds for it, with
    the calibration the campaign made, in its order: ``interleaved`` (round k runs trial k
    of every job still measuring, in job order, before trial k + 1 of any, so drift over
    time hits them alike) or ``sequential`` (job after job); trial places are counted over
    the whole start. A job is handed back as soon as it has its trials, or its trial
    failed; a job kept whole by an earlier start is handed back in its first round.

    Args:
        cpu: the CPU, held by the caller.
        order: ``interleaved`` or ``sequential``.
        environment: the fingerprint every result records.
        watcher: told of every trial (the campaign keeps each one and shows progress).
    """

    def __init__(self, cpu: int, order: str, environment: Environment,
                 watcher: JobWatcher | None = None):
        if order not in ("interleaved", "sequential"):
            raise ValueError("order must be interleaved or sequential, not %r" % order)
        self.cpu, self.order, self.environment = cpu, order, environment
        self.watcher = watcher or JobWatcher()

    def describe(self) -> str:
        """``this process, CPU N`` and the order."""
        return "this process, CPU %d, %s" % (self.cpu, self.order)

    def measure(self, orders: Sequence[JobOrder], runner: TrialRunner
                ) -> Iterator[JobResult]:
        """Every job measured in rounds, in groups of the order's."""
        positions = Positions()
        groups = [list(orders)] if self.order == "interleaved" else [[o] for o in orders]
        for group in groups:
            yield from self._rounds(group, runner, positions)

    def _rounds(self, group: list[JobOrder], runner: TrialRunner, positions: Positions
                ) -> Iterator[JobResult]:
        """The rounds of one group: a round runs only the jobs with the fewest trials (the
        others kept more from an earlier start), so the order stays interleaved."""
        steppers = {}
        for order in group:
            if order.calibration is None:
                raise ValueError("%s has no calibration: the campaign calibrates before its "
                                 "own executor measures" % order.key)
            steppers[order.key] = JobStepper(
                order, runner, order.instance, self.cpu, order.calibration,
                self.watcher.kept(order, order.calibration), positions)
        active = list(group)
        rounds = 0
        while active:
            rounds += 1
            measuring = len(active)
            fewest = min(len(steppers[order.key].taken) for order in active)
            for order in list(active):
                stepper = steppers[order.key]
                if len(stepper.taken) > fewest and not stepper.enough():
                    continue  # kept from an earlier start: the others catch up first
                self.watcher.status(order)
                if not stepper.enough():  # else whole from kept trials
                    try:
                        stepper.step()
                    except ChildError as exc:
                        active.remove(order)
                        yield replace(self._base(order, stepper), status=exc.status,
                                      error=str(exc))
                        continue
                    self.watcher.trial_done(order, stepper)
                if stepper.enough():
                    active.remove(order)
                    yield stepper.result(self._base(order, stepper))
            if len(group) > 1:
                self.watcher.round_done(rounds, fewest, measuring, bool(active))

    def _base(self, order: JobOrder, stepper: JobStepper) -> JobResult:
        return calibrated(JobResult(key=order.key, worker="this process",
                                     environment=self.environment,
                                     library_sha256=order.library_sha256),
                           stepper.calibration)
