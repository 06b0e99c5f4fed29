"""Fakes for the campaign's two seams: a trial runner and a KAT checker that run nothing.

``Campaign(..., runner=FakeRunner(), kat_checker=FakeKat())`` exercises the whole
orchestration (plan, gate, resume, refusals, ``--target-ci``, progress, failed jobs)
in milliseconds. The fake runner answers with synthetic :class:`TrialMeasurement`
objects whose per-call cycles come from a seeded generator, so every figure is
reproducible; the statistics, records and reports are made by the real code.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ngcc.base import files as _files
from ngcc.driver import kat
from ngcc.driver import process as _process
from ngcc.evidence.model import Counter, Environment, TrialMeasurement
from ngcc.library.registry import Instance, run_labels
from ngcc.measure import host as _host
from ngcc.measure import locks as _locks

FREQUENCY_HZ = 2.1e9
#: A fixed host, so a fake campaign neither calibrates a counter nor asks systemd.
ENVIRONMENT = Environment(
    cpu_model="Fake CPU", machine="x86_64", cpu=1, cpu_count=2, cpu_max_mhz=2100.0,
    governor="performance", turbo=False, smt_siblings=(1,), virtualization=None,
    perf_event_paranoid=2, memory_mib=4096,
    counter=Counter(name="rdtsc", frequency_hz=FREQUENCY_HZ, overhead_min=24,
                    overhead_median=26),
    load_average_start=(0.01, 0.02, 0.03), kernel="6.1.0", os="Fake OS", compiler="cc 12",
    python="3.11.7", numpy=np.__version__, ngcc_version="0.1.0", git_commit=None,
    git_dirty=None, executable="/usr/bin/python3", host="fake-host")


def fixed_host(monkeypatch: Any) -> None:
    """Make ``_host.fingerprint`` return :data:`ENVIRONMENT` (for the pinned CPU)."""
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: replace(
        ENVIRONMENT, cpu=_locks.default_cpu() if cpu is None else cpu))


def still_dry_run(monkeypatch: Any) -> None:
    """Hold still what a dry run's trials line states of this host: its CPU share (from
    a load of 1.0 on 2 CPUs) and the built-in SM3's calls (a runner that cannot measure
    its start, such as :class:`FakeRunner`, gives the constant for the rest)."""
    from ngcc.campaign import conditions as _conditions
    from ngcc.campaign import cost as _cost

    monkeypatch.setattr(_conditions, "host_share",
                        lambda own=0.0, cpu=None: _conditions.cpu_share(1.0, 2, own))
    monkeypatch.setattr(_cost, "reference_calls", lambda *_: _cost.ReferenceCalls(5e-7, 4e-4))


def cost_cycles(name: str, message_bytes: int) -> float:
    """The typical cycles of one call of ``name`` at ``message_bytes`` in the fake."""
    return 500.0 + 40.0 * (zlib.crc32(name.encode()) % 7 + 1) * message_bytes


class FakeRunner:
    """A :class:`~ngcc.driver.contract.TrialRunner` whose trials run nothing.

    Args:
        fail: ``(instance name, message bytes, trial index)`` → exception raised instead
            of answering; index ``None`` is the cold call.
        spread: relative trial-to-trial spread of the trial means (alternating sign).
        preempt: ``(instance name, message bytes, trial index)`` → how many attempts
            of that trial are preempted (80 % of the wall time on the CPU, 40
            involuntary switches); with it every trial reports its CPU time and
            switches (quiet ones: 99.9 %, none).
        spikes: every odd-numbered trial has one call in 20 this many times slower
            (rare preemptions inside a trial: they move its mean, not its median).
        batch: every trial also times an uninstrumented batch, as the real driver does:
            its ticks 8 % under the per-call loop's (no counter bracket), its thread's CPU
            time 25 % under its wall time (a busy host), so the per-call mean, median,
            batch mean and CPU-time figure all differ.
    """

    def __init__(self, fail: dict[tuple[str, int, int | None], BaseException] | None = None,
                 spread: float = 0.0,
                 preempt: dict[tuple[str, int, int], int] | None = None,
                 spikes: float = 0.0,
                 slow: dict[tuple[str, int, int], float] | None = None,
                 batch: bool = False):
        self.fail = dict(fail or {})
        self.slow = dict(slow or {})  # (name, bytes, index): every call this much slower, once
        self.spread = spread
        self.preempt = None if preempt is None else dict(preempt)
        self.spikes = spikes
        self.batch = batch
        self.log: list[tuple[str, str, int, int | None]] = []

    def _maybe_fail(self, instance: Instance, message_bytes: int, index: int | None) -> None:
        error = self.fail.get((instance.name, message_bytes, index))
        if error is not None:
            raise error

    def cold_call(self, instance: Instance, message_bytes: int, cpu: int,
                  timeout: float) -> float:
        self.log.append(("cold", instance.name, message_bytes, None))
        self._maybe_fail(instance, message_bytes, None)
        return cost_cycles(instance.name, message_bytes) / FREQUENCY_HZ

    def trial(self, instance: Instance, message_bytes: int, calls: int, warmup: int,
              cpu: int, index: int, timeout: float) -> TrialMeasurement:
        self.log.append(("trial", instance.name, message_bytes, index))
        self._maybe_fail(instance, message_bytes, index)
        # The library's file name, not its path: the same trials in every checkout
        seed = zlib.crc32(("%s/%s/%d/%d" % (instance.name, Path(instance.library).name,
                                             message_bytes, index)).encode())
        centre = cost_cycles(instance.name, message_bytes) * (
            1 + self.spread * (1 if index % 2 else -1))
        rng = np.random.default_rng(seed)
        # A floor 10 % under the centre, as a real function has one: each trial's fastest
        # call then lies at it, so no seed makes a quiet fake process look slow as a whole
        cycles = np.rint(np.maximum(rng.gamma(400, centre / 400, calls), 0.9 * centre)
                         ).astype(np.uint64)
        if self.spikes and index % 2:
            cycles[::20] *= np.uint64(self.spikes)
        factor = self.slow.pop((instance.name, message_bytes, index), None)
        if factor is not None:  # a process slow as a whole: its fastest call too
            cycles = np.rint(cycles * factor).astype(np.uint64)
        ticks = int(cycles.sum(dtype=np.uint64)) + 30 * calls
        loop_ns = round(ticks / FREQUENCY_HZ * 1e9)
        facts: dict[str, Any] = {}
        if self.preempt is not None:
            key = (instance.name, message_bytes, index)
            preempted = self.preempt.get(key, 0) > 0
            if preempted:
                self.preempt[key] -= 1
            facts = dict(thread_cpu_ns=round(loop_ns * (0.8 if preempted else 0.999)),
                         involuntary_switches=40 if preempted else 0, voluntary_switches=0)
        if self.batch:
            batch_ticks = round((ticks - 30 * calls) * 0.92)
            batch_ns = round(batch_ticks / FREQUENCY_HZ * 1e9)
            facts.update(batch_calls=calls, batch_ticks=batch_ticks, batch_ns=batch_ns,
                         batch_thread_cpu_ns=round(batch_ns * 0.75),
                         thread_cpu_ns=facts.get("thread_cpu_ns", loop_ns),
                         core_cycles_per_tick=1.3)
        return TrialMeasurement(
            pid=40000 + index, cpu=cpu, cycles=cycles, loop_ticks=ticks,
            loop_ns=loop_ns, counter="rdtsc", unit="tsc-ticks",
            frequency_hz=FREQUENCY_HZ, overhead_min_ticks=24, overhead_median_ticks=26,
            baseline_rss_kib=1600 + index, peak_rss_kib=1700 + index,
            load_average=(0.01, 0.02, 0.03), **facts)

    def trials_run(self) -> list[tuple[str, int, int | None]]:
        """(instance, bytes, index) of every trial asked for, in order."""
        return [entry[1:] for entry in self.log if entry[0] == "trial"]


class CrashingRunner(FakeRunner):
    """A runner whose every cold call and trial crashes alike, as a library that cannot
    set itself up does: ``<name> at <n> B (<phase>) crashed: <cause>``."""

    def __init__(self, cause: str = "SIGABRT (library setup failed)"):
        super().__init__()
        self.cause = cause

    def _maybe_fail(self, instance: Instance, message_bytes: int, index: int | None) -> None:
        phase = "calibration" if index is None else "trial %d" % index
        raise _process.DriverError("crash", "%s at %d B (%s) crashed: %s" % (
            instance.name, message_bytes, phase, self.cause), "", self.cause)


class FakeKat:
    """A KAT checker that generates nothing: a verdict per instance name (default PASS,
    NOKAT for a baseline) and a one-line log where ``ngcc.kat.check`` writes its log."""

    def __init__(self, verdicts: dict[str, str] | None = None):
        self.verdicts = dict(verdicts or {})
        self.checked: list[str] = []

    def __call__(self, instances: Sequence[Instance], *, labels: Sequence[str | None] = (),
                 files: Sequence[str] = (), out_dir: Path = Path("kat"), progress: bool = False,
                 timeout: float | None = None) -> list[kat.KatResult]:
        results = []
        for inst, label in zip(instances, run_labels(instances, labels), strict=True):
            verdict = self.verdicts.get(inst.name) or (
                "NOKAT" if inst.candidate == "baseline" else "PASS")
            self.checked.append(inst.name)
            log = Path(out_dir) / inst.candidate / (label + ".log")
            _files.atomic_write_bytes(log, ("RESULT %s %s %s\n" % (
                inst.candidate, inst.name, verdict)).encode())
            results.append(kat.KatResult(inst.name, inst.candidate, verdict, log, (),
                                         inst.variant, label))
        return results


class SlowRunner(FakeRunner):
    """A :class:`FakeRunner` whose every trial takes ``seconds`` (a job that is still
    running when a test kills its campaign)."""

    def __init__(self, seconds: float, **kwargs: Any):
        super().__init__(**kwargs)
        self.seconds = seconds

    def trial(self, instance: Instance, message_bytes: int, calls: int, warmup: int,
              cpu: int, index: int, timeout: float) -> TrialMeasurement:
        import time

        time.sleep(self.seconds)
        return super().trial(instance, message_bytes, calls, warmup, cpu, index, timeout)


class KillingRunner(FakeRunner):
    """A :class:`FakeRunner` that kills its own process (a Dask worker) with SIGKILL in
    trial ``index`` of ``(instance name, message bytes)``, the first time only (the
    file ``marker`` remembers it, across worker processes)."""

    def __init__(self, job: tuple[str, int], index: int, marker: Path, **kwargs: Any):
        super().__init__(**kwargs)
        self.job, self.index, self.marker = job, index, Path(marker)

    def trial(self, instance: Instance, message_bytes: int, calls: int, warmup: int,
              cpu: int, index: int, timeout: float) -> TrialMeasurement:
        import os
        import signal

        if (instance.name, message_bytes) == self.job and index == self.index:
            try:
                self.marker.open("x").close()
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return super().trial(instance, message_bytes, calls, warmup, cpu, index, timeout)
