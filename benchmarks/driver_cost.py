"""Benchmark: what one trial in ``ngcc-driver`` costs beside its timed loops.

Runs trials of one call (no warm-up, no batch) of a trivial library and of SM3 and
prints, per trial, the CPU time of the driver process (user + system, from the
kernel's accounting of our children: exec, dynamic loading, the library's load,
counter calibration and the cycles-per-tick chain), its wall time as the parent
sees it (which includes the counter-frequency interval: the driver sleeps until
50 ms have passed since its first counter reading, so a trial whose loops take
longer sleeps not at all), and the peak resident set of driver + library, for
comparison with the seed pages' C driver. Asserts nothing.

    python benchmarks/driver_cost.py [--trials 20] [--cpu N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import ngcc
from ngcc.driver import child as _child

TRIVIAL = r"""
#include <string.h>
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    (void)m; (void)bits;
    memset(out, 0, (size_t)d / 8);
    return 0;
}
"""


def trivial_library(folder: Path) -> ngcc.Instance:
    (folder / "trivial.c").write_text(TRIVIAL)
    library = folder / "trivial.so"
    subprocess.run(shlex.split(os.environ.get("CC", "cc")) + [
        "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-o", str(library),
        str(folder / "trivial.c")], check=True)
    (folder / "trivial.so.json").write_text('{"name": "trivial", "digest_bits": 256}')
    return ngcc.instance(library)


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(inst: ngcc.Instance, trials: int, cpu: int) -> None:
    cpu_before, wall, setup, peak = children_cpu_s(), [], [], []
    for _ in range(trials):
        started = time.monotonic()
        measured = _child.trial(inst, 32, 1, 0, cpu=cpu, batch_calls=0)
        wall.append(time.monotonic() - started)
        peak.append(measured.peak_rss_kib)
        setup.append(measured.baseline_rss_kib)
    per_trial_cpu = (children_cpu_s() - cpu_before) / trials
    print("%-10s %9.2f %10.1f %10.1f %12d %10d" % (
        inst.name, 1e3 * per_trial_cpu, 1e3 * statistics.median(wall), 1e3 * min(wall),
        statistics.median(setup), statistics.median(peak)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    args = parser.parse_args()
    print("%d one-call trials each, pinned to CPU %d\n" % (args.trials, args.cpu))
    print("%-10s %9s %10s %10s %12s %10s" % ("library", "CPU ms", "wall ms", "wall ms",
                                             "baseline", "peak RSS"))
    print("%-10s %9s %10s %10s %12s %10s" % ("", "/trial", "median", "min", "RSS KiB", "KiB"))
    with tempfile.TemporaryDirectory() as folder:
        measure(trivial_library(Path(folder)), args.trials, args.cpu)
        measure(ngcc.instance("SM3"), args.trials, args.cpu)


if __name__ == "__main__":
    main()
