"""What a default campaign costs, against the plan's own estimate, and the CI it achieves.

Runs a campaign (default: WChain-V1-512 and SM3 over the eight guide lengths, the
default plan: 5 trials of about 1 s, 900 s budget) and prints, per instance × length,
the cold-call time t1, the planned calls, the plan's estimate (trials · (calls +
warm-up) · t1), the time the trials actually spent in their timed loops, and the
relative half-width of the 95 % confidence interval of the mean; then the campaign's
wall time against the summed estimate, and the time the plan printed before the trials
(``ngcc.CostEstimate``: process start, warm-up, timed calls and the uninstrumented batch
at t1 each) against the time the trials took. Asserts nothing about speed.

    python benchmarks/campaign_cost.py                      # the default plan (minutes)
    python benchmarks/campaign_cost.py --trial-target 0.1   # a reduced budget
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import ngcc
from ngcc import _plan


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="*", default=["WChain-V1-512", "SM3"])
    parser.add_argument("--lengths", default=",".join(map(str, _plan.DEFAULT_LENGTHS)))
    parser.add_argument("--trials", type=int, default=_plan.DEFAULT_TRIALS)
    parser.add_argument("--trial-target", type=float, default=_plan.DEFAULT_TRIAL_TARGET)
    parser.add_argument("--op-budget", type=float, default=_plan.DEFAULT_OP_BUDGET)
    parser.add_argument("--cpu", type=int)
    parser.add_argument("--run-dir", type=Path, help="default: a new temporary folder")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    run_dir = args.run_dir or Path(tempfile.mkdtemp(prefix="ngcc-cost-")) / "run"
    planned: list[tuple[ngcc.CostEstimate, float]] = []
    campaign = ngcc.Campaign(args.instances, lengths=[int(n) for n in args.lengths.split(",")],
                             trials=args.trials, trial_target=args.trial_target,
                             op_budget=args.op_budget, cpu=args.cpu, run_dir=run_dir,
                             on_plan=lambda plan: planned.append((plan, time.monotonic())))
    start = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ngcc.MeasurementWarning)
        run = campaign.run()
    end = time.monotonic()
    wall = end - start

    print("%-16s %7s %10s %7s %9s %9s %8s %s" % ("instance", "bytes", "t1", "calls",
                                                  "est s", "loops s", "CI ±%", "flags"))
    estimate = loops = 0.0
    for job in run.jobs:
        if job.status != "done":
            print("%-16s %7d  %s: %s" % (job.label, job.message_bytes, job.status,
                                         job.error))
            continue
        record = run.record(job.label, job.message_bytes)
        spent = sum(t.loop_seconds for t in record.trials)
        stats = record.statistics
        estimate += job.estimated_seconds
        loops += spent
        print("%-16s %7d %8.1f µs %7d %9.3f %9.3f %8.3f %s" % (
            job.label, job.message_bytes, 1e6 * job.t1_seconds,
            job.calls_per_trial, job.estimated_seconds, spent,
            100 * (stats.ci95_relative or 0.0),
            ",".join(f.code for f in stats.flags) or "-"))
    trials = sum(len(r.trials) for r in run.records)
    print()
    print("jobs %d, trials %d, run directory %s" % (len(run.jobs), trials, run.path))
    print("plan's estimate (timed loops)  %8.1f s" % estimate)
    print("timed loops, measured          %8.1f s" % loops)
    print("campaign wall time             %8.1f s  (KAT gate, calibration, process start-up "
          "included: %.2f s per trial beyond its loop)" % (wall, (wall - loops) / max(trials, 1)))
    [(plan, measuring)] = planned
    print("the plan printed before the trials %8.1f s  (%s)" % (plan.seconds, plan))
    print("the trials took                   %8.1f s" % (end - measuring))
    print("host warnings: %d; trial flags: %d" % (
        len(run.host_warnings), sum(len(r.statistics.flags) for r in run.records)))
    del caught


if __name__ == "__main__":
    main()
