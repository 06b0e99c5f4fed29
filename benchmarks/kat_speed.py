"""Benchmark: how long each KAT file takes to generate, and the DRNG's throughput.

By default it times the two quick files (KAT_2_12, KAT_2_23: seconds per instance)
and estimates the two slow ones without running them, from ngcc.time_calls on this
machine: KAT_Loop is a chain of 10^6 hashes of a 1024-byte message, KAT_2_33 three
hashes of 1 GiB beside the DRNG's 1 GiB random message (the estimate adds the DRNG's
measured time; on a shared 2-core KVM guest it read 1.5-2x high for Pavelor-512, whose
two slow files took 18 s and 57 s, and 8 s for WChain-V1-512's 11 s KAT_2_33). The
slow files take seconds to minutes per instance, about ten minutes for every candidate
instance: time them with ``--files 2_12,2_23,loop,2_33``. The DRNG's
share of a KAT_2_33 run is printed so one can see that it is not the bottleneck.
Generation times are measured in the generating child process (ngcc.kat.check), one
instance after another (KAT_2_33 needs 1 GiB of memory per run). Progress goes to
stderr: a bar per file on a terminal, else a line per finished file.

    python benchmarks/kat_speed.py [INSTANCE ...] [--files 2_12,2_23,loop,2_33]

Without instances: every built-in instance of hash-22, hash-34 and hash-35.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import ngcc
import ngcc.kat
from ngcc import _core

CANDIDATES = ("hash-22", "hash-34", "hash-35")
DRNG_BYTES = 1 << 28  # 256 MiB per measurement
GIB = 1 << 30
LOOP_CALLS, LOOP_BYTES = 1_000_000, 1024  # KAT_Loop: the chain of docs/spec/kat-format.md §6
LONG_BYTES = 65536  # the throughput that KAT_2_33's three 1 GiB hashes are estimated from


def drng_megabytes_per_second(repeats: int = 3) -> float:
    """Best of ``repeats`` runs of one 256 MiB generate call, in decimal MB/s (CPU time,
    so other processes on the machine do not count against it)."""
    drng = _core.Drng(b"KAT_2_33" * 8)
    buffer = bytearray(DRNG_BYTES)
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        drng.generate_into(buffer, 8 * DRNG_BYTES)
        best = min(best, time.process_time() - started)
    return DRNG_BYTES / best / 1e6


def slow_files_estimate(name: str, drng_seconds: float) -> tuple[float, float]:
    """Estimated seconds of KAT_Loop and KAT_2_33 for one instance: the median call at
    1024 B times 10^6, and three 1 GiB hashes at the 64 KiB rate plus the DRNG."""
    loop = ngcc.time_calls(name, LOOP_BYTES, calls=2000)
    long = ngcc.time_calls(name, LONG_BYTES, calls=50)
    seconds_per_call = loop.total_seconds / 2000
    seconds_per_byte = long.total_seconds / (50 * LONG_BYTES)
    return LOOP_CALLS * seconds_per_call, 3 * GIB * seconds_per_byte + drng_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="*", metavar="INSTANCE")
    parser.add_argument("--files", default="2_12,2_23",
                        help="KAT files to time (default: %(default)s; loop and 2_33 take "
                             "seconds to minutes per instance, estimated when not timed)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()
    names = args.instances or [i.name for i in ngcc.instances() if i.candidate in CANDIDATES]

    rate = drng_megabytes_per_second()
    drng_seconds = GIB / (rate * 1e6)
    print("DRNG  %.1f MB/s: the 1 GiB message of KAT_2_33 takes %.1f s" % (rate, drng_seconds))
    print()
    print("%-16s %-12s %-8s %10s %12s" % ("instance", "file", "verdict", "seconds", "DRNG share"))
    with tempfile.TemporaryDirectory(prefix="ngcc-kat-speed-") as out_dir:
        for name in names:
            [result] = ngcc.kat.check(name, files=args.files, out_dir=out_dir,
                                      progress=not args.no_progress)
            for file in result.files:
                seconds = "%.2f" % file.seconds if file.seconds is not None else "-"
                share = ("%.0f %%" % (100 * drng_seconds / file.seconds)
                         if file.kind == "2_33" and file.seconds else "")
                label = "KAT_Loop" if file.kind == "loop" else "KAT_" + file.kind
                print("%-16s %-12s %-8s %10s %12s" % (name, label, file.verdict, seconds, share),
                      flush=True)
    timed = {kind.strip().lower() for kind in args.files.split(",")}
    if {"loop", "2_33"} <= timed:
        return
    print()
    print("Not timed (--files 2_12,2_23,loop,2_33 times them); estimated from ngcc.time_calls:")
    print("%-16s %12s %12s" % ("instance", "KAT_Loop", "KAT_2_33"))
    total = 0.0
    for name in names:
        loop, long = slow_files_estimate(name, drng_seconds)
        total += loop + long
        print("%-16s %10.0f s %10.0f s" % (name, loop, long), flush=True)
    print("all of them: about %.0f min" % (total / 60))


if __name__ == "__main__":
    main()
