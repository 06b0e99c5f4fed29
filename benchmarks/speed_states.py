"""Benchmark: which estimator across trials a host that switches speed cannot move.

A KVM guest here runs the same code at two speeds 1.6-1.9x apart, each fresh process
in one of them for its life. This script draws a pool of ``--pool`` trials (fresh
``ngcc-driver`` processes, as a campaign runs them) of each instance and length in
four conditions, in this order: **alone**, a spinner on the **same** CPU, a spinner on
the **other** CPU, and **alone again** (the control). For each trial it keeps the
CPU-time figure (the thread's CPU time per call over the uninstrumented batch, the
figure the pages lead with).

Then it simulates ``--draws`` jobs of ``--trials`` trials from each pool and computes
each estimator:

* ``median``: the median of every trial's figure (statistics version 3);
* ``least``: the least trial figure;
* ``fast``: the median of the fast-state trials (``stats.trials.speed_states``), the
  job measuring further trials in place of slow-state ones, up to ``--trials`` more
  (statistics version 4 with the job engine's budget).

It prints, per estimator and condition, the median estimate over the draws ÷ the alone
pool's, and the share of draws within 5 % of that: what a user who ran the same job in
that condition would have published. It also prints each pool's share of slow-state
trials (more than ``SPEED_STATE_TOLERANCE`` above the pool's least), and the median
over the trials that had their CPU throughout the batch of the batch mean (the
harness's own statistic: one counter reading around a loop of calls) ÷ the CPU-time
figure: where nothing disturbs a trial the two agree. Asserts nothing.

    python benchmarks/speed_states.py [--instances Pavelor-512] [--lengths 32,1024]
        [--pool 30] [--trials 5] [--draws 2000] [--seconds 0.05] [--cpu N]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import ngcc
from ngcc.base.clock import utc_now
from ngcc.driver import child as _child
from ngcc.library.registry import Instance
from ngcc.measure.job import take
from ngcc.stats import trials as _stats

CONDITIONS = ("alone", "same CPU busy", "other CPU busy", "alone again")


def spinner(cpu: int) -> subprocess.Popen[bytes]:
    """A Python process spinning on ``cpu``."""
    process = subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity("
                                "0, {%d})\nwhile True: pass" % cpu])
    time.sleep(0.3)
    return process


#: Each condition's batch mean ÷ CPU-time figure of its trials that had their CPU
#: throughout the batch (the harness's own statistic against ngcc's, where both hold).
AGREEMENT: dict[str, list[float]] = {}


def pool(inst: Instance, length: int, cpu: int, calls: int, size: int,
         condition: str = "") -> list[float]:
    """The CPU-time figures (ticks per call) of ``size`` fresh trial processes; the
    undisturbed ones' batch mean ÷ figure goes to :data:`AGREEMENT`."""
    figures = []
    for i in range(size):
        measured = _child.trial(inst, length, calls, 3, cpu=cpu)
        trial = take(utc_now(), measured, i, i, 3).trial
        ticks = trial.statistics.cpu_time_ticks
        if ticks is None:
            continue
        figures.append(ticks)
        batch_cpu, batch_ns = trial.batch_thread_cpu_ns, trial.batch_ns
        if trial.batch_ticks and trial.batch_calls and batch_cpu and batch_ns and \
                batch_cpu >= 0.99 * batch_ns:  # on the CPU the whole batch
            AGREEMENT.setdefault(condition, []).append(
                trial.batch_ticks / trial.batch_calls / ticks)
    return figures


def fast_state_job(draw: Callable[[], float], trials: int,
                   tolerance: float = _stats.SPEED_STATE_TOLERANCE) -> float:
    """Version 4 with the job's budget: draw until ``trials`` trials of the fast state
    or ``2 × trials`` in all; the median of the fast-state ones."""
    figures: list[float] = []
    while len(figures) < 2 * trials:
        figures.append(draw())
        slow = _stats.speed_states(figures, tolerance)
        if len(figures) - len(slow) >= trials:
            break
    slow = _stats.speed_states(figures, tolerance)
    return statistics.median(v for i, v in enumerate(figures) if i not in slow)


ESTIMATORS: dict[str, Callable[[Callable[[], float], int], float]] = {
    "median": lambda draw, n: statistics.median(draw() for _ in range(n)),
    "least": lambda draw, n: min(draw() for _ in range(n)),
    "fast": fast_state_job,
    "fast10": lambda draw, n: fast_state_job(draw, n, 0.10),
}


def simulate(figures: Sequence[float], trials: int, draws: int, rng: random.Random
             ) -> dict[str, list[float]]:
    """Each estimator's value over ``draws`` simulated jobs drawing from ``figures``."""
    return {name: [estimate(lambda: rng.choice(figures), trials) for _ in range(draws)]
            for name, estimate in ESTIMATORS.items()}


def calls_for(inst: Instance, length: int, cpu: int, seconds: float) -> int:
    probe = _child.trial(inst, length, 3, 1, cpu=cpu, batch_calls=3)
    per_call = max((probe.batch_ns or 1) / 3 / 1e9, 1e-7)
    return max(10, round(seconds / per_call))


def report(name: str, length: int, pools: dict[str, list[float]], trials: int,
           draws: int) -> None:
    rng = random.Random(1)
    estimates = {c: simulate(p, trials, draws, rng) for c, p in pools.items()}
    print("\n%s at %d B (pools of %s trials)" % (name, length, "/".join(
        str(len(p)) for p in pools.values())))
    for condition, figures in pools.items():
        slow = len(_stats.speed_states(figures))
        ratios = sorted(v / min(figures) for v in figures)
        agreement = AGREEMENT.get(condition, [])
        print("  %-15s least %9.1f ticks/call, slow state %2d/%d; ÷ least: %s; batch "
              "mean ÷ CPU time, undisturbed: %s" % (
                  condition, min(figures), slow, len(figures),
                  " ".join("%.2f" % ratios[round(q * (len(ratios) - 1))]
                           for q in (0.1, 0.25, 0.5, 0.75, 0.9)),
                  "%.3f (median of %d)" % (statistics.median(agreement), len(agreement))
                  if agreement else "none undisturbed"))
    print("  %-8s %s" % ("", "  ".join("%-22s" % c for c in pools)))
    for estimator in ESTIMATORS:
        reference = statistics.median(estimates["alone"][estimator])
        cells = []
        for condition in pools:
            values = estimates[condition][estimator]
            ratio = statistics.median(values) / reference
            within = sum(abs(v / reference - 1) <= 0.05 for v in values) / len(values)
            cells.append("%.3f (%3.0f %% in 5 %%)" % (ratio, 100 * within))
        print("  %-8s %s" % (estimator, "  ".join("%-22s" % c for c in cells)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", default="Pavelor-512")
    parser.add_argument("--lengths", default="32,1024")
    parser.add_argument("--pool", type=int, default=30)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=0.05)
    parser.add_argument("--cpu", type=int, default=sorted(os.sched_getaffinity(0))[-1])
    args = parser.parse_args()
    other = next((c for c in sorted(os.sched_getaffinity(0)) if c != args.cpu), args.cpu)
    print("ngcc %s, %s, CPU %d (spinner on %d for 'other'), load %.2f" % (
        ngcc.__version__, platform.processor() or platform.machine(), args.cpu, other,
        os.getloadavg()[0]))
    for name in args.instances.split(","):
        inst = ngcc.instance(name)
        for length in (int(n) for n in args.lengths.split(",")):
            calls = calls_for(inst, length, args.cpu, args.seconds)
            pools: dict[str, list[float]] = {}
            for condition in CONDITIONS:
                busy = {"same CPU busy": args.cpu, "other CPU busy": other}.get(condition)
                rival = spinner(busy) if busy is not None else None
                try:
                    AGREEMENT.pop(condition, None)
                    pools[condition] = pool(inst, length, args.cpu, calls, args.pool,
                                            condition)
                finally:
                    if rival is not None:
                        rival.kill()
                        rival.wait()
            report(name, length, pools, args.trials, args.draws)


if __name__ == "__main__":
    main()
