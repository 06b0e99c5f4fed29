"""``ngcc report``: a run's pages (Markdown or HTML), tables and plots."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ngcc.cli.common import usage_checks
from ngcc.cli.options import add_out
from ngcc.report import export as _export


def _distribution_choice(text: str) -> tuple[str, int]:
    instance, _, length = text.rpartition(":")
    if not instance or not length.isdigit():
        raise argparse.ArgumentTypeError("expected INSTANCE:BYTES, e.g. Wish512:1024; got %r"
                                         % text)
    return instance, int(length)


def add_report(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "report", help="write the pages (Markdown or HTML), tables and plots of a run",
        description="Write one page per candidate (sections 1-5 and 7 of the NICCS "
                    "x86 self-assessment structure, plus confidence intervals, medians and "
                    "the ratio to pseudoXOF), a summary page, an index page, and the plots "
                    "(cycles/byte, per-call distributions; PNG and SVG). Pages depend only "
                    "on the run directory, so `ngcc validate` can regenerate them.")
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a campaign's run "
                        "directory")
    add_out(parser, "the report (default: RUN_DIR/report)")
    parser.add_argument("--no-plots", action="store_true", help="write the pages only")
    parser.add_argument("--format", dest="formats", action="append", choices=_export.FORMATS,
                        metavar="FORMAT",
                        help="markdown (default): the pages as .md; html: the same pages as "
                             "self-contained .html files (plots inline, nothing fetched); "
                             "csv, json: every statistic per library x length in "
                             "statistics.csv / statistics.json (repeatable)")
    parser.add_argument("--distribution", type=_distribution_choice, action="append",
                        default=[], metavar="INSTANCE:BYTES",
                        help="also plot the per-call distribution of this instance at this "
                             "length (repeatable; each instance's shortest length is always "
                             "plotted)")
    parser.set_defaults(run=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    from ngcc.evidence.run import load_run
    from ngcc.report import write as _report
    from ngcc.stats import groups as _analysis

    run = load_run(args.run_dir)
    with usage_checks():  # a --distribution the run has no record of, before any page
        _report.chosen_records(run, args.distribution)
    written = _report.write_report(run, args.out, plots=not args.no_plots,
                                   distributions=args.distribution,
                                   formats=args.formats or ("markdown",))
    for path in written:
        print(path)
    unmeasured = [job for job in run.jobs if job.status != "done"]
    if unmeasured:
        print("ngcc: %d of %d jobs of %s were not measured (%s); each page says why at its "
              "top" % (len(unmeasured), len(run.jobs), run.path,
                       _analysis.status_counts(run.jobs)), file=sys.stderr)
    return 0
