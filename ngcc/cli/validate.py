"""``ngcc validate``: a run's statistics and pages recomputed from its raw samples."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ngcc.cli.common import EXIT_RUNTIME_ERROR


def add_validate(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "validate", help="recompute a run's statistics and pages from its raw samples",
        description="Recompute every record's statistics from its raw per-call samples "
                    "(with the campaign's own statistics code) and regenerate every report "
                    "page; list each file that differs. Exit status 1 on any difference.")
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a campaign's run "
                        "directory")
    parser.set_defaults(run=_run_validate)


def _run_validate(args: argparse.Namespace) -> int:
    from ngcc.report import validate as _validate

    result = _validate.validate(args.run_dir)
    for difference in result.differences:
        print("ngcc: difference: %s" % difference, file=sys.stderr)
    summary = "%d record(s) recomputed from raw samples, %d report file(s) regenerated" % (
        result.records_checked, result.pages_checked)
    for refused in result.refused:
        print("ngcc: refused by the driver's checks: %s" % refused, file=sys.stderr)
    if result.refused:
        summary += "; %d job(s) refused by the driver's checks, above" % len(result.refused)
    if result.ok:
        print("%s: valid (%s)" % (args.run_dir, summary))
        return 0
    print("%s: %d difference(s) (%s)" % (args.run_dir, len(result.differences), summary),
          file=sys.stderr)
    return EXIT_RUNTIME_ERROR
