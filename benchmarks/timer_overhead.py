"""Benchmark: the observer effect of per-call timing, measured in the trial driver.

Every trial (``ngcc-driver``, pinned to one CPU) times its calls twice: the per-call
loop, each call between two serialised counter readings, then an uninstrumented
batch of as many calls with one reading around the whole loop. The per-call mean
minus the batch mean is what timing each call separately adds (the observer
effect), measured rather than assumed; the counter's own overhead (an empty timed
region) is printed beside it, never subtracted. Figures are counter ticks; the
trial's core-cycles-per-tick estimate (a dependency chain of known latency)
converts them where it exists.

A mean is only as good as the loop's hold on its CPU: a preemption inside either
loop adds milliseconds to it. So the loops are short (about --loop-ms each), and
only *undisturbed* trials count: no involuntary context switch and at least 97 %
of the wall time on the CPU, in both loops. The effect is the median over those.

    python benchmarks/timer_overhead.py [INSTANCE ...] [--bytes 32] [--trials 21]
                                        [--loop-ms 1] [--cpu N]
"""

from __future__ import annotations

import argparse
import os
import statistics

import numpy as np

import ngcc
from ngcc.driver import child as _child
from ngcc.evidence.model import TrialMeasurement


def undisturbed(t: TrialMeasurement) -> bool:
    """Both loops ran with no involuntary switch and >= 97 % of their wall time on CPU."""
    return (t.involuntary_switches == 0 and t.batch_involuntary_switches == 0
            and t.thread_cpu_ns is not None and t.batch_thread_cpu_ns is not None
            and t.thread_cpu_ns >= 0.97 * t.loop_ns
            and t.batch_ns is not None and t.batch_thread_cpu_ns >= 0.97 * t.batch_ns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="*", help="default: every built-in instance")
    parser.add_argument("--bytes", type=int, default=32)
    parser.add_argument("--trials", type=int, default=21)
    parser.add_argument("--loop-ms", type=float, default=1.0)
    parser.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    args = parser.parse_args()
    chosen = [ngcc.instance(n) for n in args.instances] or ngcc.instances()

    print("%d trials per instance at %d B, loops of about %g ms, pinned to CPU %d\n"
          % (args.trials, args.bytes, args.loop_ms, args.cpu))
    header = ("instance", "calls", "kept", "per-call", "batch", "effect", "effect", "overhead",
              "cycles/")
    print("%-16s %6s %5s %10s %10s %8s %7s %9s %8s" % header)
    print("%-16s %6s %5s %10s %10s %8s %7s %9s %8s" % (
        "", "", "", "mean", "mean", "ticks", "%", "ticks", "tick"))
    counter = None
    for inst in chosen:
        probe = _child.trial(inst, args.bytes, 200, 3, cpu=args.cpu, batch_calls=0)
        ticks_per_ms = probe.frequency_hz / 1e3
        calls = max(20, int(args.loop_ms * ticks_per_ms / float(np.median(probe.cycles))))
        trials = [_child.trial(inst, args.bytes, calls, 3, cpu=args.cpu)
                  for _ in range(args.trials)]
        kept = [t for t in trials if undisturbed(t)]
        counter = trials[0]
        if not kept:
            print("%-16s %6d %5d  no undisturbed trial: the CPU is busy" % (
                inst.name, calls, 0))
            continue
        per_call = statistics.median(float(t.cycles.mean()) for t in kept)
        batch = statistics.median(t.batch_ticks / t.batch_calls for t in kept)  # type: ignore[operator]
        effect = statistics.median(float(t.cycles.mean()) - t.batch_ticks / t.batch_calls  # type: ignore[operator]
                                   for t in kept)
        ratio = [t.core_cycles_per_tick for t in kept if t.core_cycles_per_tick]
        print("%-16s %6d %5d %10.1f %10.1f %8.1f %7.2f %9d %8s" % (
            inst.name, calls, len(kept), per_call, batch, effect, 100 * effect / batch,
            statistics.median(t.overhead_min_ticks for t in kept),
            "%.3f" % statistics.median(ratio) if ratio else "-"))
    if counter is not None:
        print("\ncounter: %s (%s); kept = undisturbed trials of %d" % (
            counter.counter, counter.unit, args.trials))


if __name__ == "__main__":
    main()
