"""Benchmark: how long each KAT file takes to generate, and the DRNG's throughput.

The DRNG makes the 1 GiB random message of KAT_2_33, beside three hashes of 1 GiB;
its share of a KAT_2_33 run is printed so one can see that it is not the bottleneck.
Generation times are measured in the generating child process (ngcc.kat.check), one
instance after another (KAT_2_33 needs 1 GiB of memory per run).

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="*", metavar="INSTANCE")
    parser.add_argument("--files", default="2_12,2_23,loop,2_33",
                        help="KAT files to time (default: all four)")
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


if __name__ == "__main__":
    main()
