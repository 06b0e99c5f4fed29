"""Benchmark: the CPU time a start costs, beside ``import numpy``'s.

Each line is the median (with the range) of ``--repeats`` fresh interpreters'
user + system CPU time (so other processes on a busy host count less than in wall
time): ``import numpy``, ``import ngcc`` (which loads each public name's module when it
is first used), ``import ngcc`` with ``ngcc.Campaign`` used, and the short commands:
``--version``, ``--help``, ``list`` and ``kat`` of one built-in library (``--kat``,
default WChain-V1-512). The command line loads what a command uses (the parser loads
no numpy), so each should cost about ``import numpy`` or less. ``kat`` is given twice:
the whole command, the driver processes that generate its KAT files included, and its
own Python process alone (its start and its reading of the files). Run it from the
checkout whose ``ngcc`` it should time; it asserts nothing.

    python benchmarks/start_cost.py [--repeats 5] [--kat INSTANCE]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

#: The Python process's own CPU seconds, printed on stderr at its exit (its children's
#: left out): ``ngcc kat`` without the driver processes that generate the files.
OWN_CPU = ("import atexit, resource, sys; atexit.register(lambda: print('own-cpu', sum("
           "resource.getrusage(resource.RUSAGE_SELF)[:2]), file=sys.stderr)); "
           "from ngcc.cli.main import main; sys.exit(main(sys.argv[1:]))")


def starts(kat: str, out: str) -> list[tuple[str, list[str], bool]]:
    """(name, interpreter arguments, whether to time its own process only)."""
    kat_args = ["kat", kat, "--out", out, "--no-progress"]
    return [
        ("python", ["-c", "pass"], False),
        ("import numpy", ["-c", "import numpy"], False),
        ("import ngcc", ["-c", "import ngcc"], False),
        ("import ngcc; ngcc.Campaign", ["-c", "import ngcc; ngcc.Campaign"], False),
        ("ngcc --version", ["-m", "ngcc", "--version"], False),
        ("ngcc --help", ["-m", "ngcc", "--help"], False),
        ("ngcc list", ["-m", "ngcc", "list"], False),
        ("ngcc kat %s" % kat, ["-m", "ngcc", *kat_args], False),
        ("  its own process", ["-c", OWN_CPU, *kat_args], True),
    ]


def cpu_seconds(arguments: list[str], repeats: int, own: bool) -> list[float]:
    """The CPU time of ``repeats`` fresh interpreters running ``arguments`` (``own``:
    of the interpreter alone, as it reports it)."""
    spent = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, *arguments], check=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        reported = [line.split()[1] for line in done.stderr.splitlines()
                    if line.startswith("own-cpu ")]
        spent.append(float(reported[-1]) if own else
                     after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--kat", default="WChain-V1-512", metavar="INSTANCE",
                        help="the built-in instance `ngcc kat` checks (default %(default)s)")
    args = parser.parse_args()
    print("load average %.2f %.2f %.2f; %d CPUs" % (*os.getloadavg(), os.cpu_count() or 0))
    numpy = None
    with tempfile.TemporaryDirectory() as out:
        for name, arguments, own in starts(args.kat, out):
            numpy = _show(name, cpu_seconds(arguments, args.repeats, own), numpy)
    print("load average %.2f %.2f %.2f at the end" % os.getloadavg())


def _show(name: str, spent: list[float], numpy: float | None) -> float | None:
    """Print one line; return ``import numpy``'s median once it is known."""
    median = statistics.median(spent)
    numpy = median if name == "import numpy" else numpy
    print("%-28s %.3f s CPU (%.3f–%.3f)%s" % (
        name, median, min(spent), max(spent),
        "  %.2f× import numpy" % (median / numpy) if numpy and name != "import numpy"
        else ""))
    return numpy


if __name__ == "__main__":
    main()
