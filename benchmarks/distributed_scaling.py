"""Benchmark: the same campaign serial and on a local Dask cluster (``--workers N``).

    python benchmarks/distributed_scaling.py [--workers 2] [--trials 3]
        [--trial-target 0.4] [--lengths 64,1024,4096,16384] [INSTANCE ...]

Runs the campaign twice into fresh run directories, first serial (this process's trial
loop, one CPU), then whole jobs on N local workers, one per CPU; both with the real
trial driver and the real KAT gate. It prints the wall time of each campaign (KAT gate,
calibration, trials, records), the time the local cluster took to start (once per
``ngcc campaign --workers``), the speed-up with and without that start, and the
figures' agreement: per job, the distributed mean (and median) cycles per call over
the serial one, with the geometric mean and the spread of those ratios. The goal is a speed-up of at
least 0.9 × N.

The speed-up is a lower bound where other work runs on the machine: a serial campaign
leaves the other CPUs to that work, N workers compete with it on every CPU; the load
averages before and after each run are printed for that reason.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import ngcc
from ngcc.measure import distributed as _distributed

INSTANCES = ["pseudoXOF-512", "SM3", "WChain-V1-512", "Wish512"]


def _lengths(text: str) -> list[int]:
    return [int(n) for n in text.split(",")]


def timed(label: str, run_dir: Path, args: argparse.Namespace, **settings: object
          ) -> tuple[ngcc.Run, float]:
    """One campaign: (run, seconds)."""
    load = os.getloadavg()[0]
    started = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the busy-host flags: the point is the time here
        run = ngcc.Campaign(args.instances, lengths=args.lengths, trials=args.trials,
                            trial_target=args.trial_target, run_dir=run_dir, progress=False,
                            **settings).run()  # type: ignore[arg-type]
    seconds = time.monotonic() - started
    print("%-10s %3d jobs done in %6.1f s  (1-minute load %.2f before, %.2f after)"
          % (label, len(run.records), seconds, load, os.getloadavg()[0]))
    return run, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("instances", nargs="*", default=INSTANCES)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--trial-target", type=float, default=0.4)  # T of a real plan: 1 s
    parser.add_argument("--lengths", type=_lengths, default=[64, 1024, 4096, 16384])
    args = parser.parse_args()
    print("ngcc %s, %s, %d CPUs, %d instances x %d lengths, %d trials of %.2f s"
          % (ngcc.__version__, sys.executable, len(os.sched_getaffinity(0)),
             len(args.instances), len(args.lengths), args.trials, args.trial_target))
    with tempfile.TemporaryDirectory(prefix="ngcc-scaling-") as folder:
        serial, serial_seconds = timed("serial", Path(folder) / "serial", args)
        started = time.monotonic()
        with _distributed.local_executor(args.workers) as executor:
            start = time.monotonic() - started
            print("cluster    %d workers started in %.1f s" % (args.workers, start))
            spread, spread_seconds = timed("workers=%d" % args.workers, Path(folder) / "dask",
                                           args, executor=executor)
    print("speed-up: %.2fx (%.2fx with the cluster's start; goal: %.1fx)"
          % (serial_seconds / spread_seconds, serial_seconds / (spread_seconds + start),
             0.9 * args.workers))
    by_key = {(r.label, r.message_bytes): r for r in serial.records}
    ratios: dict[str, list[float]] = {"mean": [], "median": []}
    print("\n%-16s %8s %14s %14s %8s %8s  %s" % (
        "label", "bytes", "serial mean", "dask mean", "ratio", "median", "worker CPU"))
    for record in spread.records:
        other = by_key.get((record.label, record.message_bytes))
        if other is None:
            continue
        ratio = record.statistics.mean_cycles / other.statistics.mean_cycles
        median = record.statistics.median_cycles / other.statistics.median_cycles
        ratios["mean"].append(ratio)
        ratios["median"].append(median)
        print("%-16s %8d %14.1f %14.1f %8.3f %8.3f  %d" % (
            record.label, record.message_bytes, other.statistics.mean_cycles,
            record.statistics.mean_cycles, ratio, median, record.environment.cpu))
    for statistic, found in ratios.items():
        if not found:
            continue
        logs = [math.log(r) for r in found]
        print("ratio dask/serial of the %s cycles: geometric mean %.3f, min %.3f, max "
              "%.3f, spread of the logs %.3f (%d jobs)" % (
                  statistic, math.exp(statistics.fmean(logs)), min(found), max(found),
                  statistics.pstdev(logs), len(found)))
    return 0


if __name__ == "__main__":  # the workers are spawned processes: they import this module
    sys.exit(main())
