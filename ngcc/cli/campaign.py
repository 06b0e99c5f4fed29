"""``ngcc campaign``: KAT-check, then time instances at every message length."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ngcc.base.errors import MeasurementWarning, UsageError
from ngcc.base.untrusted import plain
from ngcc.campaign import campaign as _campaign
from ngcc.campaign.failures import STOP_AFTER_FAILURES
from ngcc.campaign.settings import CampaignSettings
from ngcc.cli.common import (
    EXIT_RUNTIME_ERROR,
    EXIT_TARGET_MISSED,
    _lengths,
    _positive_seconds,
    add_kat_references,
    add_wait,
    path_labels,
    print_wait,
    refuse_alone,
    refuse_together,
    usage_checks,
)
from ngcc.cli.summary import (
    FlagWarnings,
    campaign_summary,
    failure_lines,
    kept_words,
    print_plan,
    verdict_text,
)
from ngcc.driver import child as _child
from ngcc.evidence.model import COUNTER_CHOICES
from ngcc.measure import leak_measurement as _leak
from ngcc.measure import plan as _plan
from ngcc.stats import groups as _analysis


def add_campaign(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "campaign", help="KAT-check, then time instances at every message length",
        description="The main job: KAT gate, then for every instance x message length one "
                    "cold call (t1), the harness's plan (calls per trial = min(20000, "
                    "max(ceil(T/t1), 20)), capped by the operation budget), and trials, each "
                    "in a fresh process pinned to one CPU. Evidence goes to the run "
                    "directory; a stopped campaign resumes when run again with the same "
                    "settings. Before the trials it prints the plan: jobs, calls and the time "
                    "estimated from the calibration. Progress goes to stderr: a bar per phase "
                    "on a terminal, else one line per finished job (its figure, elapsed time, "
                    "ETA). Exit status 1 if any job failed or was refused (the last line "
                    "counts them: `30 done, 2 crash`), or when the first %d jobs all fail "
                    "with one cause and none succeeds: the campaign then stops there, naming "
                    "the cause; exit status %d when every job was measured but some missed "
                    "--target-ci (a warning names each, with the CI reached)."
                    % (STOP_AFTER_FAILURES, EXIT_TARGET_MISSED))
    parser.add_argument("instances", nargs="*", metavar="INSTANCE",
                        help="instance name (see `ngcc list`) or library path")
    parser.add_argument("--candidate", metavar="ID",
                        help="every built-in instance of this candidate (any id of `ngcc "
                             "list --candidates`), or the id of the libraries named")
    add_kat_references(parser)
    parser.add_argument("--all", action="store_true", help="every built-in instance")
    parser.add_argument("--lengths", type=_lengths, metavar="LIST",
                        default=list(_plan.DEFAULT_LENGTHS),
                        help="message lengths in bytes (default: the eight guide lengths "
                             "32,128,512,1024,4096,8192,16384,65536)")
    parser.add_argument("--trials", type=int, metavar="N",
                        help="trials per instance x length (default 5; 3 with --quick)")
    parser.add_argument("--trial-target", type=_positive_seconds, metavar="SECONDS",
                        help="seconds of calls per trial, T (default 1.0; 0.02 with --quick)")
    parser.add_argument("--op-budget", type=_positive_seconds, metavar="SECONDS",
                        help="seconds for all trials of one instance x length "
                             "(default 900; 5 with --quick)")
    parser.add_argument("--cpu", type=int, metavar="N",
                        help="pin every trial to CPU N (default: the last CPU allowed that "
                             "no other running ngcc campaign holds)")
    parser.add_argument("--run-dir", type=Path, metavar="DIR",
                        help="run directory (default: runs/<UTC start time>); an existing "
                             "one with the same plan is resumed")
    parser.add_argument("--quick", action="store_true",
                        help="a small plan for smoke tests: T = 0.02 s, 3 trials, 5 s budget")
    parser.add_argument("--target-ci", type=float, metavar="PCT",
                        help="add trials until the 95%% CI of --statistic is within PCT %% "
                             "(up to --max-trials); with several libraries only the jobs "
                             "not yet precise enough get extra rounds")
    parser.add_argument("--statistic", choices=("mean", "median"), default="mean",
                        help="what --target-ci aims at: the mean (t interval of the trial "
                             "means, as ngcc 0.1) or the per-call median (log-scale interval "
                             "of the trial medians, robust to preemptions); default: "
                             "%(default)s")
    parser.add_argument("--plan", choices=("harness", "warm"), default="harness",
                        dest="calls_rule",
                        help="calls per trial: the NGCC harness's rule from one cold call "
                             "(comparable with its figures), or warm: calibrated with warm "
                             "calls so that each trial holds about --trial-target seconds "
                             "of timed loop; default: %(default)s")
    parser.add_argument("--order", choices=("interleaved", "sequential"),
                        help="run trial k of every job before trial k+1 of any "
                             "(interleaved: drift hits every library alike; the default "
                             "with more than one library) or job after job (sequential)")
    parser.add_argument("--max-trials", type=int, metavar="N",
                        help="the cap on trials with --target-ci (default 20)")
    parser.add_argument("--counter", choices=COUNTER_CHOICES,
                        help="what times the calls: perf (core cycles of the thread in user "
                             "mode, perf_event_open; RDPMC per call where the kernel allows "
                             "it), tsc (the time-stamp counter: ticks, not core cycles), "
                             "clock (clock_gettime, ns), or auto (perf where RDPMC is "
                             "allowed, else tsc); default: tsc. Each trial records the "
                             "counter it got"),
    parser.add_argument("--allow-kat-fail", action="store_true",
                        help="time instances whose KAT verdict is not PASS; their records "
                             "are marked timed_without_pass and reports show a warning sign")
    parser.add_argument("--kat-files", default="2_12,2_23", metavar="LIST",
                        help="KAT files the gate checks (default: %(default)s)")
    parser.add_argument("--kat-timeout", type=_positive_seconds, metavar="SECONDS",
                        help="time allowed per KAT file (default: 600 s for 2_12 and 2_23, "
                             "7200 s for 2_33 and loop)")
    parser.add_argument("--trial-timeout", type=_positive_seconds, metavar="SECONDS",
                        help="kill a trial after this long (default: 10x its estimate from "
                             "the cold call + 60 s, at most --max-trial-timeout)")
    parser.add_argument("--max-trial-timeout", type=_positive_seconds, metavar="SECONDS",
                        default=_child.MAX_TRIAL_TIMEOUT,
                        help="the cap on a trial deadline derived from the cold call, which "
                             "is the library's own (default: %(default)g); --trial-timeout "
                             "is not capped")
    parser.add_argument("--strict", action="store_true",
                        help="refuse to measure on an unfixed host (see `ngcc check`), and "
                             "repeat a trial that was preempted or whose counter ran off "
                             "its rate (at most 3 attempts; the record lists the rejected)")
    parser.add_argument("--label", action="append", default=[], metavar="NAME",
                        help="the label of a library path in file names, tables and plots "
                             "(repeatable, in the order of the library paths; default: the "
                             "instance name, with @<folder> when two builds clash)")
    distributed = parser.add_mutually_exclusive_group()
    distributed.add_argument("--workers", type=int, metavar="N",
                             help="measure whole jobs on a local Dask cluster of N worker "
                                  "processes, one per CPU (the last N allowed, their locks "
                                  "waited for as --wait says), each pinning its trials to "
                                  "its own CPU; the cluster speaks TLS with a key of this "
                                  "run's (pip install \"ngcc[distributed]\")")
    distributed.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                             help="measure whole jobs on the workers of this Dask scheduler, "
                                  "each started with --resources cpu=1 and NGCC_CPU=<its CPU> "
                                  "(README, Distributed campaigns); its security is yours: "
                                  "tls://HOST:PORT with your certificates in Dask's "
                                  "configuration. A worker refuses a CPU another measurement "
                                  "holds at once (the job's error): --wait is for this "
                                  "process's own CPU (--leak)")
    parser.add_argument("--leak", action="store_true",
                        help="after the KAT gate, test every library it lets through for "
                             "timing leakage (ngcc leak); evidence in RUN_DIR/leak/, a "
                             "section in the report")
    parser.add_argument("--leak-length", type=int, metavar="BYTES",
                        help="the message length of the leak tests (default %d)"
                             % _leak.DEFAULT_LENGTH)
    parser.add_argument("--leak-calls", type=int, metavar="N",
                        help="the most calls of each leak test (default 1000000)")
    parser.add_argument("--leak-seconds", type=_positive_seconds, metavar="S",
                        help="the most seconds of each leak test (default 60)")
    parser.add_argument("--dry-run", action="store_true",
                        help="run the KAT gate and the calibration (one cold call per job), "
                             "print the plan and stop before any trial; the run directory "
                             "keeps both, so the same command without --dry-run resumes there; "
                             "it never waits for the CPU (no lock)")
    parser.add_argument("--wide", action="store_true",
                        help="every column in the closing table (the median and its CI, "
                             "observer effect, core c/B, MB/s, calls); by default it fits "
                             "100 columns")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but warnings and errors: no plan, no progress, "
                             "no summary table")
    add_wait(parser)
    parser.set_defaults(run=_run_campaign)


def _settings(args: argparse.Namespace) -> CampaignSettings:
    return CampaignSettings.make(
        candidate=args.candidate, all_instances=args.all,
        lengths=args.lengths, trials=args.trials, trial_target=args.trial_target,
        op_budget=args.op_budget, cpu=args.cpu, run_dir=args.run_dir, quick=args.quick,
        strict=args.strict, target_ci=args.target_ci, max_trials=args.max_trials,
        allow_kat_fail=args.allow_kat_fail, kat_files=args.kat_files.split(","),
        kat_timeout=args.kat_timeout, trial_timeout=args.trial_timeout,
        max_trial_timeout=args.max_trial_timeout,
        labels=path_labels(args.instances, args.label),
        leak=(_leak.DEFAULT_LENGTH if args.leak_length is None else args.leak_length)
        if args.leak else None, leak_calls=args.leak_calls,
        leak_seconds=args.leak_seconds, statistic=args.statistic,
        calls_rule=args.calls_rule, order=args.order,
        workers=args.workers, scheduler=args.scheduler, counter=args.counter,
        wait=args.wait, kat_manifest=args.manifest, kat_official=args.official,
        command=["ngcc", *sys.argv[1:]] if sys.argv[1:2] == ["campaign"] else None)


def _run_campaign(args: argparse.Namespace) -> int:
    if not (args.instances or args.candidate or args.all):
        raise UsageError("name the instances to measure, or use --candidate ID or --all "
                          "(see `ngcc list`)")
    refuse_together(args, ("all", "candidate"), ("wide", "quiet"))
    refuse_alone(args, ("leak_length", "leak"), ("leak_calls", "leak"),
                 ("leak_seconds", "leak"), ("max_trials", "target_ci"))
    if args.trials == 1 and not args.quiet:
        print("ngcc: note: with --trials 1 no figure gets a confidence interval (it needs "
              "2 trials or more); the tables show — for it", file=sys.stderr)
    with usage_checks():  # the settings and the names, checked before any work
        campaign = _campaign.Campaign(
            args.instances, settings=_settings(args), progress=not args.quiet,
            on_wait=print_wait, on_plan=print_plan(sys.stdout) if args.dry_run
            else None if args.quiet else print_plan(sys.stderr))
    flag_warnings = FlagWarnings()
    with warnings.catch_warnings():
        warnings.simplefilter("always", MeasurementWarning)
        warnings.showwarning = flag_warnings.show
        try:
            if args.dry_run:
                campaign.dry_run()
                print("dry run: nothing measured; the KAT verdicts and the calibration are "
                      "kept in %s (run the command without --dry-run to measure)"
                      % campaign.run_dir)
                return 0
            run = campaign.run()
        except KeyboardInterrupt:
            print("ngcc: interrupted; %s: run the same command again to resume"
                  % kept_words(campaign.run_dir), file=sys.stderr)
            return 130
    for line in flag_warnings.summary(run):
        print("ngcc: warning: %s" % plain(line), file=sys.stderr)
    if not args.quiet and run.records:  # no empty table for a run that measured nothing
        print(campaign_summary(run, wide=args.wide))
        print(verdict_text(run))
    if not run.failed_jobs:
        return EXIT_TARGET_MISSED if any(r.target_missed for r in run.records) else 0
    for line in failure_lines(run.failed_jobs):
        print("ngcc: %s" % plain(line), file=sys.stderr)
    print("ngcc: %s" % _analysis.status_counts(run.jobs), file=sys.stderr)
    return EXIT_RUNTIME_ERROR
