"""Benchmark: which window of trials keeps runs of one campaign in agreement?

Given run directories of the same campaign (the same libraries and lengths, e.g. run
alone, beside a spinner, alone again), recomputes every cell's figure as the median of
the trials whose CPU-time figure lies within a window above the job's fastest trial
(0 %: the least trial; 25 %: statistics version 4; 10 %: version 5), over the trials
each run measured, and prints per window how many cells of each later run lie within
5 % of the first run's and in how many all runs agree within 5 %. Asserts nothing.

    python benchmarks/figure_windows.py RUN_ALONE RUN_BUSY RUN_ALONE_AGAIN ...
        [--windows 0,0.05,0.1,0.15,0.25] [--within 0.05]
"""

from __future__ import annotations

import argparse

import numpy as np

import ngcc


def trial_figures(run: ngcc.Run) -> dict[tuple[str, int], np.ndarray]:
    """Each cell's trials' CPU-time figures (cells whose every trial has one)."""
    cells = {}
    for record in run.records:
        figures = [t.statistics.cpu_time_ticks for t in record.trials]
        if figures and all(f is not None for f in figures):
            cells[(record.label, record.message_bytes)] = np.asarray(figures, dtype=float)
    return cells


def windowed(figures: np.ndarray, window: float) -> float:
    """The median of the trials within ``window`` above the fastest."""
    return float(np.median(figures[figures <= figures.min() * (1 + window)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run directories, the reference first")
    parser.add_argument("--windows", default="0,0.05,0.1,0.15,0.2,0.25")
    parser.add_argument("--within", type=float, default=0.05)
    args = parser.parse_args()
    runs = [trial_figures(ngcc.Run(path)) for path in args.runs]
    cells = sorted(set.intersection(*(set(run) for run in runs)))
    print("%d runs, %d cells in all of them, trials per run: %s" % (
        len(runs), len(cells), ", ".join(str(sum(len(run[c]) for c in cells)) for run in runs)))
    print("window | later runs within %g %% of the first (of %d) | all within" % (
        100 * args.within, len(cells)))
    for window in (float(w) for w in args.windows.split(",")):
        values = np.array([[windowed(run[c], window) for c in cells] for run in runs])
        within = np.abs(values[1:] / values[0] - 1) <= args.within
        print("%5.0f %% | %s | %d" % (100 * window, ", ".join(str(n) for n in within.sum(1)),
                                      int(within.all(0).sum())))


if __name__ == "__main__":
    main()
