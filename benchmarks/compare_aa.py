"""Benchmark: does ``ngcc compare`` call two runs of the same code different?

An A/A test: ``--tries`` times, the same quick campaign of one instance is run twice
(two run directories, one after the other, as a user runs "before" and "after"), and
the two runs are compared as ``ngcc compare A B`` compares them (the leading figure,
Welch's t on the trials, the ±5 % margin, wider where the trials show the host running
at several speeds). Prints each try's ratios and verdicts, then
how many tries were called significant at any length and overall. The goal: at most 1
of 20 on a busy 2-core guest. Asserts nothing.

    python benchmarks/compare_aa.py [--instance SM3] [--lengths 32,1024,65536]
        [--tries 20] [--statistic figure] [--margin 0.05]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import warnings
from pathlib import Path

import ngcc
from ngcc.evidence import choices as _choices
from ngcc.measure.host import LOAD_LIMIT
from ngcc.stats import compare as _compare
from ngcc.stats import pairing as _pairing


def campaign(instance: str, lengths: list[int], run_dir: Path) -> ngcc.Run:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ngcc.MeasurementWarning)
        return ngcc.Campaign([instance], lengths=lengths, quick=True, run_dir=run_dir,
                             progress=False, wait=3600).run()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instance", default="SM3")
    parser.add_argument("--lengths", default="32,1024,65536")
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--statistic", default=_choices.DEFAULT_COMPARED_STATISTIC,
                        choices=_choices.COMPARED_STATISTICS)
    parser.add_argument("--margin", type=float, default=_compare.MARGIN)
    args = parser.parse_args()
    lengths = [int(n) for n in args.lengths.split(",")]
    print("ngcc %s, %s, %s by %s, margin %g, load %.2f" % (
        ngcc.__version__, platform.processor() or platform.machine(), args.instance,
        args.statistic, args.margin, os.getloadavg()[0]))
    any_length = overall = 0
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(args.tries):
            a = campaign(args.instance, lengths, Path(folder) / ("a%d" % attempt))
            b = campaign(args.instance, lengths, Path(folder) / ("b%d" % attempt))
            result = _pairing.run_comparison(a, b, (), args.statistic, _compare.ALPHA, (),
                                             LOAD_LIMIT, args.margin)
            rows = " ".join("%dB %.3f%s" % (r.message_bytes, r.comparison.ratio,
                                            "*" if r.comparison.significant else "")
                            for r in result.rows)
            summary = result.summaries[0].comparison if result.summaries else None
            any_length += any(r.comparison.significant for r in result.rows)
            overall += bool(summary and summary.significant)
            print("try %2d: %s | overall %s (%s), margin ±%.0f %%, load %.1f" % (
                attempt + 1, rows, "%.3f" % summary.ratio if summary else "—",
                summary.words if summary else "—", 100 * result.margin, os.getloadavg()[0]))
    print("called significant: at some length in %d of %d tries, overall in %d of %d"
          % (any_length, args.tries, overall, args.tries))


if __name__ == "__main__":
    main()
