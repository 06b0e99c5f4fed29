"""Benchmark: the CPU time a start costs, beside ``import numpy``'s.

Each line is the median (with the range) of ``--repeats`` fresh interpreters'
user + system CPU time (so other processes on a busy host count less than in wall
time): ``import numpy``, ``import ngcc`` (which loads each public name's module when it
is first used), ``import ngcc`` with ``ngcc.Campaign`` used, and two short commands.
Run it from the checkout whose ``ngcc`` it should time; it asserts nothing.

    python benchmarks/start_cost.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys

STARTS = (
    ("python", ["-c", "pass"]),
    ("import numpy", ["-c", "import numpy"]),
    ("import ngcc", ["-c", "import ngcc"]),
    ("import ngcc; ngcc.Campaign", ["-c", "import ngcc; ngcc.Campaign"]),
    ("ngcc --version", ["-m", "ngcc", "--version"]),
    ("ngcc list", ["-m", "ngcc", "list"]),
)


def cpu_seconds(arguments: list[str], repeats: int) -> list[float]:
    """The CPU time of ``repeats`` fresh interpreters running ``arguments``."""
    spent = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, *arguments], check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print("load average %.2f %.2f %.2f; %d CPUs" % (*os.getloadavg(), os.cpu_count() or 0))
    numpy = None
    for name, arguments in STARTS:
        spent = cpu_seconds(arguments, args.repeats)
        median = statistics.median(spent)
        numpy = median if name == "import numpy" else numpy
        print("%-28s %.3f s CPU (%.3f–%.3f)%s" % (
            name, median, min(spent), max(spent),
            "  %.2f× import numpy" % (median / numpy) if numpy and name != "import numpy"
            else ""))


if __name__ == "__main__":
    main()
