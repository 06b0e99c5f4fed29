"""What a default campaign costs, against the plan's own estimate, and the CIs it achieves.

Runs a campaign (default: WChain-V1-512 and SM3 over the eight guide lengths, the
default plan: 5 trials of about 1 s, 900 s budget) and prints, per instance × length,
the cold-call time t1, the planned calls, the plan's estimate (trials · (calls +
warm-up) · t1), the time the trials spent in their timed loops (the per-call loop and
the uninstrumented batch), the relative half-width of the 95 % confidence interval of
the mean (t interval and bootstrap) and of the per-call median (log scale; the goal is
≤ 1 % at every length with the default plan), and the flags; then the overhead: the
share of the campaign's wall time outside the timed loops (goal ≤ 15 % on an idle
host), the trial fixed cost (the parent's wall time around a trial beyond its
loops and warm-up), and the time the plan printed before the trials
(``ngcc.CostEstimate``) against the time the trials took. Asserts nothing about speed;
say how loaded the host was.

    python benchmarks/campaign_cost.py                      # the default plan (minutes)
    python benchmarks/campaign_cost.py --trial-target 0.1   # a reduced budget
    python benchmarks/campaign_cost.py --plan warm          # the warm-calibrated plan
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import ngcc
from ngcc.measure import plan as _plan


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="*", default=["WChain-V1-512", "SM3"])
    parser.add_argument("--lengths", default=",".join(map(str, _plan.DEFAULT_LENGTHS)))
    parser.add_argument("--trials", type=int, default=_plan.DEFAULT_TRIALS)
    parser.add_argument("--trial-target", type=float, default=_plan.DEFAULT_TRIAL_TARGET)
    parser.add_argument("--op-budget", type=float, default=_plan.DEFAULT_OP_BUDGET)
    parser.add_argument("--cpu", type=int)
    parser.add_argument("--run-dir", type=Path, help="default: a new temporary folder")
    parser.add_argument("--plan", choices=("harness", "warm"), default="harness")
    return parser.parse_args()


def _pct(value: float | None) -> str:
    return "%7.3f" % (100 * value) if value is not None else "%7s" % "-"


def main() -> None:
    args = parse_args()
    run_dir = args.run_dir or Path(tempfile.mkdtemp(prefix="ngcc-cost-")) / "run"
    planned: list[tuple[ngcc.CostEstimate, float]] = []
    campaign = ngcc.Campaign(args.instances, lengths=[int(n) for n in args.lengths.split(",")],
                             trials=args.trials, trial_target=args.trial_target,
                             op_budget=args.op_budget, cpu=args.cpu, run_dir=run_dir,
                             calls_rule=args.plan, progress=False,
                             on_plan=lambda plan: planned.append((plan, time.monotonic())))
    load_start = os.getloadavg()
    start = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ngcc.MeasurementWarning)
        run = campaign.run()
    end = time.monotonic()
    wall = end - start
    load_end = os.getloadavg()

    print("%-16s %6s %10s %7s %8s %8s %7s %7s %7s %s" % (
        "instance", "bytes", "t1", "calls", "est s", "loops s", "mean t", "mean bs",
        "median", "flags"))
    print("%-16s %6s %10s %7s %8s %8s %7s %7s %7s" % ("", "", "", "", "", "", "CI ±%",
                                                      "CI ±%", "CI ±%"))
    estimate = loops = 0.0
    fixed: list[float] = []
    trial_wall = 0.0
    worst_median: dict[int, float] = {}
    for job in run.jobs:
        if job.status != "done":
            print("%-16s %6d  %s: %s" % (job.label, job.message_bytes, job.status, job.error))
            continue
        record = run.record(job.label, job.message_bytes)
        stats = record.statistics
        spent = sum(t.loop_seconds + (t.batch_ns or 0) / 1e9 for t in record.trials)
        per_call = (job.warm_call_seconds or job.t1_seconds or 0.0)
        for t in record.trials:
            if t.parent_wall_ns is not None:
                trial_wall += t.parent_wall_ns / 1e9
                fixed.append(t.parent_wall_ns / 1e9 - t.loop_seconds - (t.batch_ns or 0) / 1e9
                             - t.warmup_calls * per_call)
        estimate += job.estimated_seconds or 0.0
        loops += spent
        if stats.median_ci95_relative is not None:
            worst_median[job.message_bytes] = max(worst_median.get(job.message_bytes, 0.0),
                                                  stats.median_ci95_relative)
        codes: dict[str, int] = {}
        for flag in stats.flags:
            codes[flag.code] = codes.get(flag.code, 0) + 1
        print("%-16s %6d %8.1f µs %7d %8.3f %8.3f %s %s %s %s" % (
            job.label, job.message_bytes, 1e6 * (job.t1_seconds or 0.0),
            job.calls_per_trial, job.estimated_seconds, spent, _pct(stats.ci95_relative),
            _pct(stats.mean_bootstrap_ci95_relative), _pct(stats.median_ci95_relative),
            ", ".join("%d %s" % (n, code) for code, n in codes.items()) or "-"))
    trials = sum(len(r.trials) for r in run.records)
    print()
    print("jobs %d, trials %d, plan %s, run directory %s" % (len(run.jobs), trials, args.plan,
                                                            run.path))
    print("load average (1 min) at start %.2f, at end %.2f on %d CPUs" % (
        load_start[0], load_end[0], os.cpu_count() or 0))
    print("plan's estimate (per-call loops)     %8.1f s" % estimate)
    print("timed loops, measured (with batch)   %8.1f s" % loops)
    print("campaign wall time                   %8.1f s" % wall)
    print("overhead share of wall time          %8.1f %%  (everything outside the timed loops: "
          "KAT gate, calibration, warm-up, process start-up, writing)" % (
              100 * (wall - loops) / wall))
    if trial_wall:
        print("overhead share of the trials' time   %8.1f %%  (the parent's clock around "
              "each trial, beyond its loops)" % (100 * (trial_wall - loops) / trial_wall))
    if fixed:
        print("trial fixed cost (wall)              %8.1f ms median, %.1f ms max  (start, "
              "load, the counter's rate, which waits for 50 ms in shorter trials, RSS, exit)" % (
                  1e3 * statistics.median(fixed), 1e3 * max(fixed)))
    if worst_median:
        print("median CI ±% by length (worst instance): " + ", ".join(
            "%d B %.3f" % (n, 100 * v) for n, v in sorted(worst_median.items()))
              + "  -> goal <= 1 %%: %s" % (
                  "met" if max(worst_median.values()) <= 0.01 else "NOT met"))
    [(plan, measuring)] = planned
    print("the plan printed before the trials   %8.1f s  (%s)" % (plan.seconds, plan))
    print("the trials took                      %8.1f s" % (end - measuring))
    print("host warnings: %d; trial flags: %d" % (
        len(run.host_warnings), sum(len(r.statistics.flags) for r in run.records)))
    del caught


if __name__ == "__main__":
    main()
