"""Benchmark: the counter's overhead, and per-call against batch timing in one run.

For each message length, one ``ngcc.time_calls`` gives both the mean of the
per-call readings and the batch mean (one reading around the whole loop,
divided by the calls). Their ratio shows what timing each call separately
costs or hides; the counter overhead is printed beside it, not subtracted.

    python benchmarks/timer_overhead.py [--instance SM3] [--calls 20000,1000]
"""

from __future__ import annotations

import argparse

import ngcc

LENGTHS = (32, 65536)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="SM3")
    parser.add_argument("--calls", default="20000,1000",
                        help="timed calls per length, comma-separated (default: 20000,1000)")
    args = parser.parse_args()
    calls = [int(c) for c in args.calls.split(",")]

    counter = ngcc.counter_info()
    print("counter   %s at %.3f MHz (measured against CLOCK_MONOTONIC_RAW)"
          % (counter.name, counter.frequency_hz / 1e6))
    print("overhead  %d ticks minimum, %d median (empty timed region)"
          % (counter.overhead_min, counter.overhead_median))
    print()
    print("%-8s %8s %16s %16s %12s %10s" % ("instance", "bytes", "per-call mean", "batch mean",
                                           "batch/call", "c/B"))
    for message_bytes, n in zip(LENGTHS, calls, strict=True):
        result = ngcc.time_calls(args.instance, message_bytes, n)
        print("%-8s %8d %16.1f %16.1f %12.4f %10.2f"
              % (result.instance.name, message_bytes, result.mean_cycles,
                 result.batch_mean_cycles, result.batch_mean_cycles / result.mean_cycles,
                 result.cycles_per_byte))


if __name__ == "__main__":
    main()
