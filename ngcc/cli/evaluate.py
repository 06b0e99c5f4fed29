"""``ngcc evaluate``: every folder of submission archives built, KAT-checked, measured
and reported."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ngcc.base.clock import run_id_now
from ngcc.base.errors import MeasurementWarning
from ngcc.base.untrusted import plain
from ngcc.campaign.settings import CampaignSettings
from ngcc.cli.common import (
    EXIT_RUNTIME_ERROR,
    _lengths,
    _positive_seconds,
    add_wait,
    print_wait,
    table,
    usage_checks,
)
from ngcc.cli.summary import FlagWarnings, kept_words, print_plan, verdict_text
from ngcc.library import build as _build
from ngcc.measure import plan as _plan
from ngcc.stats import groups as _analysis


def add_evaluate(subcommands: argparse._SubParsersAction) -> None:
    from ngcc.report import export as _export

    parser = subcommands.add_parser(
        "evaluate", help="build, KAT-check, measure and report every folder of "
                         "submission archives",
        description="Find every implementation folder of every candidate in the "
                    "submission archives (<Name>/.../Reference_Implementation/<instance>/ "
                    "and .../Optimized_Implementation/<instance>/), build each with the "
                    "guide's flag set of its kind (reference: reference; optimized: "
                    "performance), applying only the fixes the build's own diagnosis is "
                    "certain of (a missing -m flag for the intrinsics used, the define "
                    "that leaves out a guarded main), each recorded as an adjustment; "
                    "then one campaign over every library built (KAT gate, interleaved "
                    "trials) and the report (RUN_DIR/report/: index, a page per "
                    "candidate, summary). A folder that does not build or pass is a row "
                    "with its reason. Run again with the same arguments, it resumes. Exit "
                    "status 1 when a folder was not built or a job not measured.")
    parser.add_argument("archives", nargs="+", type=Path, metavar="ARCHIVE",
                        help="the folder of an unpacked submission archive")
    parser.add_argument("--run-dir", type=Path, metavar="DIR",
                        help="run directory (default: runs/<UTC start time>); an existing "
                             "evaluation there is resumed")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the folders found and how each will be built; build "
                             "and measure nothing")
    parser.add_argument("--quick", action="store_true",
                        help="a small plan for smoke tests: T = 0.02 s, 3 trials, 5 s budget")
    parser.add_argument("--lengths", type=_lengths, metavar="LIST",
                        default=list(_plan.DEFAULT_LENGTHS),
                        help="message lengths in bytes (default: the eight guide lengths)")
    parser.add_argument("--trials", type=int, metavar="N",
                        help="trials per library x length (default 5; 3 with --quick)")
    parser.add_argument("--cpu", type=int, metavar="N",
                        help="pin every trial to CPU N (default: the last CPU allowed that "
                             "no other running ngcc campaign holds)")
    parser.add_argument("--kat-files", default="2_12,2_23", metavar="LIST",
                        help="KAT files the gate checks (default: %(default)s)")
    parser.add_argument("--allow-kat-fail", action="store_true",
                        help="time libraries whose KAT verdict is not PASS (marked)")
    parser.add_argument("--format", dest="formats", action="append", choices=_export.FORMATS,
                        metavar="FORMAT",
                        help="the report's formats (repeatable; default: markdown and html)")
    parser.add_argument("--no-plots", action="store_true", help="write the pages only")
    parser.add_argument("--no-ct", action="store_true",
                        help="skip the constant-time analysis of each library built (ngcc "
                             "ct: on by default where valgrind is installed)")
    parser.add_argument("--build-timeout", type=_positive_seconds, metavar="SECONDS",
                        default=_build.DEFAULT_TIMEOUT,
                        help="time the compiler runs of one build may take together; "
                             "default: %(default)g")
    parser.add_argument("--quiet", action="store_true",
                        help="no plan and no progress; the table of folders still")
    add_wait(parser)
    parser.set_defaults(run=_run_evaluate)


def _run_evaluate(args: argparse.Namespace) -> int:
    from ngcc.app import evaluate as _evaluate
    from ngcc.report import folders as _folders

    with usage_checks():  # the campaign's settings, checked before any folder is built
        CampaignSettings.make(lengths=args.lengths, trials=args.trials, cpu=args.cpu,
                              quick=args.quick, kat_files=args.kat_files.split(","))
    if args.dry_run:
        for line in _evaluate.plan_lines(args.archives, ct=False if args.no_ct else None):
            print(plain(line))
        return 0
    run_dir = args.run_dir or Path("runs") / run_id_now()
    flag_warnings = FlagWarnings()
    with warnings.catch_warnings():
        warnings.simplefilter("always", MeasurementWarning)
        warnings.showwarning = flag_warnings.show
        try:
            result = _evaluate.evaluate(
                args.archives, run_dir, formats=args.formats or ("markdown", "html"),
                plots=not args.no_plots, build_timeout=args.build_timeout,
                ct=False if args.no_ct else None, quick=args.quick,
                lengths=args.lengths, trials=args.trials, cpu=args.cpu,
                kat_files=args.kat_files.split(","), allow_kat_fail=args.allow_kat_fail,
                progress=not args.quiet, wait=args.wait, on_wait=print_wait,
                on_plan=None if args.quiet else print_plan(sys.stderr),
                command=["ngcc", *sys.argv[1:]] if sys.argv[1:2] == ["evaluate"] else None)
        except KeyboardInterrupt:
            print("ngcc: interrupted; the folders built and %s: run the same command "
                  "again to resume" % plain(kept_words(run_dir)), file=sys.stderr)
            return 130
    verdicts = ({b.label: b.kat.verdict for b in result.run.build_entries}
                if result.run is not None else {})
    rows = [("folder", "kind", "built with", "library", "outcome")]
    rows += [(plain(f.folder), f.kind, plain(f.options), f.label or "-",
              _folders.outcome(f, verdicts, plain)) for f in result.evaluation.folders]
    print(table(rows))
    for entry in result.evaluation.builtin_names():
        print("ngcc: note: %s %s" % (plain(entry.folder), entry.name_note()), file=sys.stderr)
    if result.run is not None:
        for line in flag_warnings.summary(result.run):
            print("ngcc: warning: %s" % plain(line), file=sys.stderr)
        index = next((p for p in result.report if p.name == "index.md"), None)
        print(plain("evidence: %s%s" % (run_dir, "   report: %s" % index if index else "")))
        print(verdict_text(result.run))
    else:
        print("ngcc: no folder built, so nothing was measured (each row says why)",
              file=sys.stderr)
    failed = result.run.failed_jobs if result.run is not None else []
    if failed and result.run is not None:
        print("ngcc: %s" % _analysis.status_counts(result.run.jobs), file=sys.stderr)
    return EXIT_RUNTIME_ERROR if result.not_built or failed or result.run is None else 0
