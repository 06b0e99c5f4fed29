"""``ngcc compare``: two runs (or two libraries of one run), or a run beside the
published figures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ngcc.base.errors import UsageError
from ngcc.cli.common import usage_checks
from ngcc.evidence import choices as _choices
from ngcc.report.tables import TEXT_FORMATS, WIDTH


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text) from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError("%r: a significance level lies strictly between "
                                         "0 and 1, e.g. 0.05" % text)
    return value


def add_compare(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "compare", help="is A faster than B, and is the difference real?",
        description="Compare the records of two runs (or two libraries of one run): for "
                    "every library label both runs hold (or each --instance pair) at every "
                    "message length both measured, the ratio A/B of the per-trial figure "
                    "with its confidence interval and Welch's t-test on the logarithms of "
                    "the per-trial figures (the trials are the samples), in plain words; "
                    "then the geometric mean over lengths per pair. Different hosts are "
                    "named, different units converted to core cycles where every trial "
                    "carries the estimate (else refused).")
    parser.add_argument("run_a", type=Path, metavar="RUN_A", help="run directory A")
    parser.add_argument("run_b", type=Path, metavar="RUN_B", nargs="?",
                        help="run directory B (default: RUN_A, comparing --instance pairs "
                             "inside it)")
    parser.add_argument("--instance", action="append", default=[], metavar="NAME[=NAME]",
                        help="compare label NAME of A with label NAME of B, or A_LABEL=B_LABEL "
                             "(e.g. Wish512@built=Wish512); repeatable; default: every "
                             "label both runs hold. With --published: MINE=THEIRS sets "
                             "the run's label MINE against the harness's instance THEIRS "
                             "(default: through the shipped manifest's folder of its "
                             "instance, laurus_512 as Laurus-512)")
    parser.add_argument("--host", action="append", default=[], metavar="NAME",
                        help="only records measured on this host (a run measured by Dask "
                             "workers on several machines); given twice: A's host, then "
                             "B's (with one run: the hosts of --instance A=B)")
    parser.add_argument("--statistic", choices=_choices.COMPARED_STATISTICS,
                        default=_choices.DEFAULT_COMPARED_STATISTIC,
                        help="the per-trial figure compared: figure (default: each trial's "
                             "value of the figure the record leads with, as every table "
                             "shows it), median or mean cycles per call")
    parser.add_argument("--alpha", type=_alpha, default=_choices.ALPHA,
                        help="significance level (default 0.05; the CI is 1 - alpha)")
    parser.add_argument("--format", choices=TEXT_FORMATS, default="table",
                        help="output format (default table; csv prints the notes on stderr)")
    parser.add_argument("--wide", action="store_true",
                        help="every column in the text table (each side's label, the "
                             "figure's name, the trials); by default it fits %d columns"
                             % WIDTH)
    parser.add_argument("--plot", type=Path, metavar="FILE",
                        help="also draw the ratio and its CI against message length to "
                             "FILE.png and FILE.svg")
    parser.add_argument("--published", choices=_choices.PUBLISHED_SYSTEMS, metavar="SYSTEM",
                        help="compare RUN_A with the NGCC harness's published figures on "
                             "SYSTEM (x86_1 or arm_1): per instance and length the run's "
                             "leading figure beside the published one, their ratio, and "
                             "the shape (cycles/byte over that at 64 KiB) beside the "
                             "published shape, with a geometric-mean row over the reference "
                             "builds (an optimized build's rows are marked and left out); "
                             "then the run's ranking at each security target beside the "
                             "published ranking, with Spearman's rank correlation")
    parser.set_defaults(run=_run_compare)


def _run_compare(args: argparse.Namespace) -> int:
    from ngcc.evidence.run import load_run
    from ngcc.report import compare as _compare_runs
    from ngcc.report import published as _published

    if args.published is not None:
        if args.run_b is not None or args.host or args.plot:
            raise UsageError("--published compares one run with the published figures: "
                             "give RUN_A only, without --host or --plot")
        run = load_run(args.run_a)
        with usage_checks():  # an --instance label the run does not hold, or malformed
            beside = _published.compare_published(run, args.published, args.instance)
        sys.stdout.write(_published.render(beside, args.format))
        return 0

    run_a = load_run(args.run_a)
    run_b = load_run(args.run_b) if args.run_b is not None else None
    with usage_checks():  # an --instance label or --host that the runs do not hold
        result = _compare_runs.compare_runs(run_a, run_b, args.instance, args.statistic,
                                            args.alpha, args.host)
    plots = _compare_runs.write_plot(result, args.plot) if args.plot is not None else []
    if args.format == "csv":
        for note in result.notes:
            print("ngcc: note: %s" % note, file=sys.stderr)
    sys.stdout.write(_compare_runs.render(result, args.format, wide=args.wide))
    for path in plots:
        print("ngcc: wrote %s" % path, file=sys.stderr)
    return 0
