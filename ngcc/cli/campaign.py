"""``ngcc campaign``: KAT-check, then time instances at every message length."""

from __future__ import annotations

import argparse
import sys
import warnings

from ngcc.base.errors import MeasurementWarning, UsageError
from ngcc.base.untrusted import plain
from ngcc.campaign.failures import STOP_AFTER_FAILURES
from ngcc.campaign.settings import CampaignSettings
from ngcc.cli.common import (
    EXIT_RUNTIME_ERROR,
    EXIT_TARGET_MISSED,
    add_wait,
    path_labels,
    print_wait,
    refuse_alone,
    refuse_together,
    usage_checks,
)
from ngcc.cli.options import add_labels, add_setting, add_settings, settings_of
from ngcc.measure import plan as _plan
from ngcc.report.tables import WIDTH


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
    add_settings(parser, "candidate", "kat_manifest", "kat_official", "all_instances",
                 "lengths", "trials", "trial_target", "op_budget", "cpu", "run_dir", "quick",
                 "target_ci", "statistic", "calls_rule", "order", "max_trials", "counter",
                 "allow_kat_fail", "kat_files", "kat_timeout", "trial_timeout",
                 "max_trial_timeout", "strict")
    add_labels(parser)
    distributed = parser.add_mutually_exclusive_group()
    add_setting(distributed, "workers")
    add_setting(distributed, "scheduler")
    add_setting(parser, "leak", action="store_true")
    parser.add_argument("--leak-length", type=int, metavar="BYTES",
                        help="the message length of the leak tests (default %d)"
                             % _plan.LEAK_LENGTH)
    add_settings(parser, "leak_calls", "leak_seconds")
    parser.add_argument("--dry-run", action="store_true",
                        help="run the KAT gate and the calibration (one cold call per job), "
                             "print the plan and stop before any trial; the run directory "
                             "keeps both, so the same command without --dry-run resumes there; "
                             "it never waits for the CPU (no lock)")
    parser.add_argument("--wide", action="store_true",
                        help="every column in the closing table (the median and its CI, "
                             "observer effect, core c/B, MB/s, calls); by default it fits "
                             "%d columns" % WIDTH)
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but warnings and errors: no plan, no progress, "
                             "no summary table")
    add_wait(parser)
    parser.set_defaults(run=_run_campaign)


def _settings(args: argparse.Namespace) -> CampaignSettings:
    return CampaignSettings.make(**settings_of(
        args, labels=path_labels(args.instances, args.labels),
        leak=(_plan.LEAK_LENGTH if args.leak_length is None else args.leak_length)
        if args.leak else None,
        command=["ngcc", *sys.argv[1:]] if sys.argv[1:2] == ["campaign"] else None))


def _run_campaign(args: argparse.Namespace) -> int:
    # the campaign, its summary and numpy load here, not when the parser is built
    from ngcc.campaign import campaign as _campaign
    from ngcc.cli.summary import (
        campaign_summary,
        failure_lines,
        kept_words,
        print_plan,
        show_warning,
        verdict_text,
    )
    from ngcc.stats import groups as _analysis

    if not (args.instances or args.candidate or args.all_instances):
        raise UsageError("name the instances to measure, or use --candidate ID or --all "
                          "(see `ngcc list`)")
    refuse_together(args, ("all_instances", "candidate"), ("wide", "quiet"))
    refuse_alone(args, ("leak_calls", "leak"), ("leak_seconds", "leak"), ("leak_length", "leak"),
                 ("max_trials", "target_ci"))
    if args.trials == 1 and not args.quiet:
        print("ngcc: note: with --trials 1 no figure gets a confidence interval (it needs "
              "2 trials or more); the tables show — for it", file=sys.stderr)
    with usage_checks():  # the settings and the names, checked before any work
        campaign = _campaign.Campaign(
            args.instances, settings=_settings(args), progress=not args.quiet,
            on_wait=print_wait, on_plan=print_plan(sys.stdout) if args.dry_run
            else None if args.quiet else print_plan(sys.stderr))
    with warnings.catch_warnings():
        warnings.simplefilter("always", MeasurementWarning)
        warnings.showwarning = show_warning
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
    if not args.quiet and run.records:  # no empty table for a run that measured nothing
        print(campaign_summary(run, wide=args.wide))
        print(verdict_text(run))
    if not run.failed_jobs:
        return EXIT_TARGET_MISSED if any(r.target_missed for r in run.records) else 0
    for line in failure_lines(run.failed_jobs):
        print("ngcc: %s" % plain(line), file=sys.stderr)
    print("ngcc: %s" % _analysis.status_counts(run.jobs), file=sys.stderr)
    return EXIT_RUNTIME_ERROR
