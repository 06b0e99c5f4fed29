"""``ngcc evaluate``: every folder of submission archives built, KAT-checked, measured
and reported."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ngcc.base.errors import CERTAIN_FIXES, MeasurementWarning
from ngcc.base.untrusted import plain
from ngcc.campaign.settings import CampaignSettings
from ngcc.cli.common import (
    EXIT_RUNTIME_ERROR,
    _positive_seconds,
    add_wait,
    print_wait,
    usage_checks,
)
from ngcc.cli.options import add_settings, settings_of
from ngcc.library.archive import KIND_FLAGS
from ngcc.library.cc import DEFAULT_TIMEOUT
from ngcc.report import export as _export
from ngcc.report.tables import WIDTH, fit

if TYPE_CHECKING:
    from ngcc.app.evaluate import FolderOption


def add_evaluate(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "evaluate", help="build, KAT-check, measure and report every folder of "
                         "submission archives",
        description="Find every implementation folder of every candidate in the "
                    "submission archives (<Name>/.../Reference_Implementation/<instance>/, "
                    ".../Optimized_Implementation/<instance>/ and .../Additional_"
                    "Implementation/<instance>/), build each with the guide's flag set of "
                    "its kind (%s), applying only the fixes the build's own diagnosis is "
                    "certain of (%s), each recorded as an adjustment; "
                    "then one campaign over every library built (KAT gate, interleaved "
                    "trials) and the report (RUN_DIR/report/: index, a page per "
                    "candidate, summary). A folder that does not build or pass is a row "
                    "with its reason. Run again with the same arguments, it resumes. Exit "
                    "status 1 when a folder was not built or a job not measured."
                    % ("; ".join("%s: %s" % kind for kind in KIND_FLAGS.items()),
                       CERTAIN_FIXES))
    parser.add_argument("archives", nargs="+", type=Path, metavar="ARCHIVE",
                        help="the folder of an unpacked submission archive")
    add_settings(parser, "run_dir")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the folders found and how each will be built; build "
                             "and measure nothing")
    add_settings(parser, "quick", "lengths", "trials", "cpu", "kat_files", "allow_kat_fail",
                 "kat_manifest", "kat_official", "kat_timeout", "trial_timeout",
                 "max_trial_timeout")
    for option, metavar, what in (
            ("exclude", "FOLDER:FILE", "leave this C file of the folder out of its build "
                                       "(ngcc build --exclude)"),
            ("define", "FOLDER:NAME[=VALUE]", "define this macro for every source of the "
                                              "folder (ngcc build --define)")):
        parser.add_argument("--" + option, dest="requested", action="append", default=[],
                            type=_folder_option(option, metavar), metavar=metavar,
                            help="%s, for what its build's diagnosis is not certain of; "
                                 "FOLDER is the end of its path as the rows show it (its "
                                 "instance folder's name will do); repeatable" % what)
    parser.add_argument("--format", dest="formats", action="append", choices=_export.FORMATS,
                        metavar="FORMAT",
                        help="the report's formats (repeatable; default: markdown and html)")
    parser.add_argument("--no-plots", action="store_true", help="write the pages only")
    parser.add_argument("--no-ct", action="store_true",
                        help="skip the constant-time analysis of each library built (ngcc "
                             "ct: on by default where valgrind is installed)")
    parser.add_argument("--build-timeout", type=_positive_seconds, metavar="SECONDS",
                        default=DEFAULT_TIMEOUT,
                        help="time the compiler runs of one build may take together; "
                             "default: %(default)g")
    parser.add_argument("--quiet", action="store_true",
                        help="no plan and no progress; the table of folders still")
    parser.add_argument("--wide", action="store_true",
                        help="every column in the table of folders (the whole folder, the "
                             "options it was built with, the outcome's reason, the figure "
                             "at every length); by default it fits %d columns" % WIDTH)
    add_wait(parser)
    parser.set_defaults(run=_run_evaluate)


def _folder_option(option: str, metavar: str) -> Callable[[str], FolderOption]:
    """The ``type`` of ``--exclude``/``--define``: ``FOLDER:VALUE``, split at its last
    colon."""
    def parse(text: str) -> FolderOption:
        from ngcc.app.evaluate import FolderOption

        folder, colon, value = text.rpartition(":")
        if not (colon and folder.strip("/") and value):
            raise argparse.ArgumentTypeError("expected %s (the end of a folder's path, a "
                                             "colon, then the value), got %r" % (metavar, text))
        return FolderOption(folder, option, value)

    return parse


def _run_evaluate(args: argparse.Namespace) -> int:
    from ngcc.app import dryrun as _dryrun
    from ngcc.app import evaluate as _evaluate
    from ngcc.cli.summary import folder_table, kept_words, print_plan, show_warning, verdict_text
    from ngcc.stats import groups as _analysis

    with usage_checks():  # the campaign's settings, checked before any folder is built
        settings = CampaignSettings.make(**settings_of(
            args, command=["ngcc", *sys.argv[1:]] if sys.argv[1:2] == ["evaluate"] else None))
    if args.dry_run:
        for line in _dryrun.plan_lines(args.archives, ct=False if args.no_ct else None,
                                       settings=settings):
            print(plain(line))
        return 0
    run_dir = settings.run_dir
    with warnings.catch_warnings():
        warnings.simplefilter("always", MeasurementWarning)
        warnings.showwarning = show_warning
        try:
            result = _evaluate.evaluate(
                args.archives, settings=settings, formats=args.formats or ("markdown", "html"),
                plots=not args.no_plots, build_timeout=args.build_timeout,
                ct=False if args.no_ct else None, requested=args.requested,
                progress=not args.quiet, on_wait=print_wait,
                on_plan=None if args.quiet else print_plan(sys.stderr))
        except KeyboardInterrupt:
            print("ngcc: interrupted; the folders built and %s: run the same command "
                  "again to resume" % plain(kept_words(run_dir)), file=sys.stderr)
            return 130
    print("\n".join(folder_table(result.evaluation.folders, result.run, args.wide)))
    adjusted = [(f.label or f.folder, a) for f in result.evaluation.folders for a in f.adjustments]
    if adjusted:  # what the diagnosis changed, and why, under the table
        print("\n" + "\n".join(fit("adjusted %s: %s" % (plain(label), plain(adjustment)))
                                for label, adjustment in adjusted))
    for entry in result.evaluation.folders:  # the whole reason evaluation.json holds
        if entry.reason is not None and entry.status != "built":
            print("\n%s %s:\n%s" % (entry.status, plain(entry.folder), "\n".join(
                "  " + plain(line) for line in entry.reason.splitlines())))
    for entry in result.evaluation.builtin_names():
        print("ngcc: note: %s %s" % (plain(entry.folder), entry.name_note()), file=sys.stderr)
    if result.run is not None:
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
