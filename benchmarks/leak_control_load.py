"""The leak test's A/A control on a loaded CPU: how often does it say anything but
``no leak detected``?

Starts ``--busy`` processes that stream through memory, pinned to the CPU the leak
test uses, then runs the control (``ngcc.leak(..., control=True)``) ``--runs`` times
with ``--calls`` calls each, constant-time SM3 with a fixed message (``--fixed-runs``,
0xab bytes at 32 B, as ``tests/test_leak.py`` does) and, with ``--leaky``, a library
whose time depends on the message. Prints each verdict count, the
largest |t| seen, and which tests gave the largest |t|.

    python benchmarks/leak_control_load.py --runs 100 --calls 20000 --busy 2 \
        --leaky LIBRARY.so

Nothing here is asserted; it prints figures.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import sys
import time

import ngcc
from ngcc.evidence import leak_evidence as _leak_evidence
from ngcc.measure import host as _host
from ngcc.measure import leak_measurement as _leak


def _spin(cpu: int) -> None:
    """A busy process on ``cpu``: it streams through 16 MiB, so it also takes the
    caches (with a register-only loop the control was never flagged)."""
    import numpy as np

    os.sched_setaffinity(0, {cpu})
    buffer = np.zeros(1 << 21)
    while True:
        buffer += 1.0


def _tally(name: str, results: list[_leak.LeakResult]) -> None:
    verdicts = collections.Counter(r.verdict for r in results)
    tests = collections.Counter(r.max_test for r in results if r.verdict != _leak_evidence.NO_LEAK)
    worst = max(results, key=lambda r: r.max_t)
    print("%-22s %3d runs: %s; largest |t| %.2f (%s)%s" % (
        name, len(results), ", ".join("%s %d" % kv for kv in sorted(verdicts.items())),
        worst.max_t, worst.max_test,
        "; flagged by: " + ", ".join("%s %d" % kv for kv in tests.most_common(4))
        if tests else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--fixed-runs", type=int, default=100)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--leaky", default=None, help="a leaky library (default: none)")
    args = parser.parse_args()
    cpu = _host.default_cpu() if args.cpu is None else args.cpu
    spinners = [multiprocessing.Process(target=_spin, args=(cpu,), daemon=True)
                for _ in range(args.busy)]
    for process in spinners:
        process.start()
    started = time.monotonic()
    try:
        control = [_leak.leak("SM3", args.length, calls=args.calls, seconds=None, cpu=cpu,
                              control=True, seed=run) for run in range(args.runs)]
        fixed = [_leak.leak("SM3", 32, calls=args.calls, seconds=None, cpu=cpu,
                            fixed=b"\xab" * 32, seed=10**6 + run)
                 for run in range(args.fixed_runs)]
        leaky = []
        if args.leaky:
            inst = ngcc.instance(args.leaky)
            leaky = [_leak.leak(inst, args.length, calls=args.calls, seconds=None, cpu=cpu,
                                seed=run) for run in range(max(1, args.runs // 5))]
    finally:
        for process in spinners:
            process.terminate()
    print("load: %d busy process(es) pinned to CPU %d beside the test; %d calls per run; "
          "%.0f s in all" % (args.busy, cpu, args.calls, time.monotonic() - started))
    _tally("SM3 control (A/A)", control)
    _tally("SM3 fixed 0xab, 32 B", fixed)
    if leaky:
        _tally("leaky fixture", leaky)
    return 0


if __name__ == "__main__":
    sys.exit(main())
