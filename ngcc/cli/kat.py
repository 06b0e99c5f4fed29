"""``ngcc kat``: instances checked against the official known-answer tests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ngcc.base.errors import UsageError
from ngcc.cli.common import (
    EXIT_RUNTIME_ERROR,
    _positive_seconds,
    path_labels,
    refuse_together,
    table,
    usage_checks,
)
from ngcc.cli.options import add_labels, add_out, add_setting
from ngcc.library.katfile import normalise_files
from ngcc.measure import plan as _plan


def add_kat(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "kat", help="check instances against the official known-answer tests",
        description="Regenerate the official KAT files of each instance (in a child "
                    "process, so a crash or hang is a verdict), compare each file's canonical "
                    "SHA-256 with the official manifest, and write a KAT log per instance. "
                    "Verdicts: PASS, MISMATCH, NOKAT, CRASH, TIMEOUT, ERROR. The exit status "
                    "is 0 only if every file of every instance is PASS. Progress goes to "
                    "stderr: a bar per file on a terminal, else a line per finished file.")
    parser.add_argument("instances", nargs="*", metavar="INSTANCE",
                        help="instance name (see `ngcc list`) or library path")
    parser.add_argument("--all", action="store_true", help="every built-in instance")
    add_setting(parser, "kat_files", dest="files", default=",".join(_plan.KAT_FILES),
                help="comma-separated KAT files: 2_12, 2_23, 2_33 (long messages: minutes "
                     "and a GiB of memory), loop (a million hash calls); default: %s (the "
                     "spelling of campaign and evaluate; the old --files still works)"
                % ",".join(_plan.KAT_FILES))
    parser.add_argument("--files", dest="files", default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS)
    add_out(parser, "the logs (DIR/<candidate>/<label>.log) and the generated files",
            Path("ngcc-kat"))
    parser.add_argument("--keep", action="store_true",
                        help="keep the generated KAT files (DIR/<candidate>/<label>/)")
    parser.add_argument("--timeout", type=_positive_seconds, metavar="SECONDS",
                        help="time allowed per file and for the guard probe (default: 600 s "
                             "for 2_12 and 2_23, 7200 s for 2_33 and loop)")
    add_setting(parser, "kat_manifest", dest="manifest")
    add_setting(parser, "kat_official", dest="official")
    parser.add_argument("--candidate", metavar="ID",
                        help="every built-in instance of this candidate (any id of `ngcc "
                             "list --candidates`); or, when library paths are named, their "
                             "candidate id, whose manifest is used (default: the one `ngcc "
                             "build` recorded)")
    add_labels(parser)
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars or lines")
    parser.set_defaults(run=_run_kat)


def _run_kat(args: argparse.Namespace) -> int:
    from ngcc.driver import kat

    if not (args.instances or args.candidate or args.all):
        raise UsageError("name the instances to check, or use --candidate ID or --all "
                          "(see `ngcc list`)")
    refuse_together(args, ("all", "candidate"))
    with usage_checks():
        chosen, labels = _plan.resolve_libraries(args.instances, args.candidate, args.all,
                                                 path_labels(args.instances, args.labels))
        normalise_files(args.files)
    results = kat.check(chosen, files=args.files, out_dir=args.out,
                        keep=args.keep, progress=not args.no_progress,
                        timeout=args.timeout, official_dir=args.official, labels=labels,
                        manifest=args.manifest)
    rows = [("instance", "candidate", "verdict", "files", "basis", "log")]
    rows += [(r.label, r.candidate, r.verdict,
              " ".join("%s:%s" % (f.kind, f.verdict) for f in r.files), r.basis, str(r.log))
             for r in results]
    print(table(rows))
    for r in results:
        if r.by_content:
            print("%s by content: %s" % (r.label, r.by_content))
        for f in r.files:
            if f.verdict != "PASS":
                print("%s %s %s: %s" % (r.label, f.name, f.verdict, f.detail))
    if any(f.verdict == "NOKAT" for r in results if r.candidate != "baseline" for f in r.files):
        print("ngcc: NOKAT: no reference to check against: give --manifest FILE or --official "
              "DIR", file=sys.stderr)
    return 0 if all(r.passed for r in results) else EXIT_RUNTIME_ERROR
