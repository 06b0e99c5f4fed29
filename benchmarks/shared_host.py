"""Benchmark: the leading figure on a shared host, against an undisturbed reference.

For each instance (SM3, WChain-V1-512, Pavelor-512, Wish512:vaes) and length (64 B,
1 KiB, 64 KiB), first **alone**: the reference, the minimum over ``--reference``
fresh ``ngcc-driver`` processes of an uninstrumented sub-batch mean (ticks per call of
a loop with no reading between the calls). Then with 0, 1 and 2 busy processes spinning
on the trials' CPU: ``--trials`` trials (fresh driver processes, as a campaign runs
them) of about ``--seconds`` of timed loop each, aggregated by ``ngcc.stats.trials`` as a
campaign's record, and printed as ratios to the reference: the leading figure (which
one it is: ``CPU`` for the CPU-time figure, ``mean`` for the harness mean), the
harness mean, and the pooled per-call median. The goal is a leading figure within 5 %
of the reference at every load and length; the harness mean shows what a busy host
does to the figure the NICCS pages lead with. Prints the 1-minute load average before
each load, since other work on the machine loads it too. Asserts nothing.

    python benchmarks/shared_host.py [--trials 3] [--seconds 0.05] [--cpu N]
        [--instances SM3,...] [--lengths 64,1024,65536] [--loads 0,1,2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence

import ngcc
import ngcc.stats.groups
from ngcc.base.clock import utc_now
from ngcc.driver import child as _child
from ngcc.library.registry import Instance
from ngcc.measure import host as _host
from ngcc.measure.job import take
from ngcc.stats import trials as _stats

INSTANCES = ("SM3", "WChain-V1-512", "Pavelor-512", "Wish512:vaes")
LENGTHS = (64, 1024, 65536)
REFERENCE_CALLS_SECONDS = 0.002  # each reference sub-batch: about this long


def rivals(cpu: int, count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` Python processes spinning, each pinned to ``cpu``."""
    started = [subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity(0, "
                                 "{%d})\nwhile True: pass" % cpu]) for _ in range(count)]
    time.sleep(0.3 if count else 0.0)
    return started


def stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.kill()
        process.wait()


def reference(inst: Instance, length: int, cpu: int, processes: int) -> tuple[float, float]:
    """(ticks per call, seconds per call): the minimum uninstrumented sub-batch mean over
    ``processes`` fresh drivers, each timing one short batch."""
    probe = _child.trial(inst, length, 3, 1, cpu=cpu, batch_calls=3)
    per_call = max((probe.batch_ns or 1) / 3 / 1e9, 1e-7)
    calls = max(3, round(REFERENCE_CALLS_SECONDS / per_call))
    best = min((m.batch_ticks or 0) / calls for m in (
        _child.trial(inst, length, 1, 1, cpu=cpu, batch_calls=calls)
        for _ in range(processes)))
    return best, per_call


def measure(inst: Instance, length: int, cpu: int, calls: int, trials: int
            ) -> ngcc.Statistics:
    """A campaign's statistics of ``trials`` trials of ``calls`` calls (and a batch)."""
    measured = [_child.trial(inst, length, calls, 3, cpu=cpu) for _ in range(trials)]
    entries = [take(utc_now(), m, i, i, 3).trial for i, m in enumerate(measured)]
    return _stats.aggregate_trials(entries, [m.cycles for m in measured], length, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.05,
                        help="timed loop per trial (default %(default)s)")
    parser.add_argument("--reference", type=int, default=9,
                        help="fresh processes of the reference (default %(default)s)")
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--instances", default=",".join(INSTANCES))
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)))
    parser.add_argument("--loads", default="0,1,2")
    args = parser.parse_args()
    cpu = _host.default_cpu() if args.cpu is None else args.cpu
    jobs = [(ngcc.instance(name), int(n)) for name in args.instances.split(",")
            for n in args.lengths.split(",")]
    print("reference: alone, min of %d uninstrumented sub-batch means; load average %.2f"
          % (args.reference, os.getloadavg()[0]), flush=True)
    refs = {(inst.key, n): reference(inst, n, cpu, args.reference) for inst, n in jobs}
    rows = [("instance", "message", "busy", "leads", "leading / ref", "harness mean / ref",
             "median / ref", "reference ticks")]
    for load in (int(x) for x in args.loads.split(",")):
        running = rivals(cpu, load)
        try:
            print("load %d: %d busy process(es) on CPU %d; 1-minute load average %.2f"
                  % (load, load, cpu, os.getloadavg()[0]), flush=True)
            for inst, n in jobs:
                ticks, per_call = refs[(inst.key, n)]
                calls = max(20, round(args.seconds / per_call))
                stats = measure(inst, n, cpu, calls, args.trials)
                lead = ngcc.stats.groups.leading(stats)
                rows.append((inst.key, "%d B" % n, str(load),
                             "CPU" if lead.code == "cpu_time" else "mean",
                             "%.3f" % (lead.ticks / ticks), "%.3f" % (stats.mean_cycles / ticks),
                             "%.3f" % (stats.median_cycles / ticks), "%.0f" % ticks))
        finally:
            stop(running)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print()
    for index, row in enumerate(rows):
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
              + " |")
        if index == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print("\nload average at the end: %s" % " ".join("%.2f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    main()
