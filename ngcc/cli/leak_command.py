"""``ngcc leak``: instances tested for timing leakage (fixed against random messages)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ngcc.base import progress as _progress
from ngcc.base.errors import NgccError, UsageError
from ngcc.base.untrusted import plain
from ngcc.cli.common import (
    EXIT_RUNTIME_ERROR,
    _positive_seconds,
    add_wait,
    path_labels,
    print_wait,
    usage_checks,
)
from ngcc.cli.options import add_labels, add_out, add_setting
from ngcc.library.registry import Instance, instance
from ngcc.measure import plan as _plan


def add_command(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "leak", help="test instances for timing leakage (dudect: fixed vs random messages)",
        description="Time each instance in ngcc-driver on two classes of messages of one "
                    "length, the class of each call drawn at random: one fixed message (all "
                    "zero unless --fixed) and fresh random ones. Welch's t between the classes "
                    "(every call, the fastest calls under several percentiles, first and "
                    "second order), updated as calls arrive. Verdict from the largest |t|: "
                    "'no leak detected' below 4.5, 'LEAK' above 10 (the test stops once a "
                    "test is above 10 at two looks in a row), "
                    "'possible leak' between. A pass never proves constant time. Evidence: "
                    "DIR/<candidate>/<instance>__leak_<bytes>.json, the t trace (.npz) and a "
                    "plot of |t| against calls. Exit status 0 if no leak was detected in any "
                    "instance, 1 for a LEAK, a possible leak, too few calls or an error.")
    parser.add_argument("instances", nargs="+", metavar="INSTANCE",
                        help="instance name (see `ngcc list`) or library path")
    parser.add_argument("--length", type=int, metavar="BYTES",
                        help="message length of both classes, 1 to %d; default: the --fixed "
                             "message's, else %d" % (_plan.LEAK_MAX_LENGTH, _plan.LEAK_LENGTH))
    # the fewest calls is the leak statistics' rule, stated where numpy is loaded: in
    # the error that refuses fewer
    parser.add_argument("--calls", type=int, default=_plan.LEAK_CALLS, metavar="N",
                        help="the most timed calls per instance, at most %d and at least "
                             "twice the calls of each class a test needs to count; "
                             "default: %%(default)s" % _plan.LEAK_MAX_CALLS)
    parser.add_argument("--seconds", type=_positive_seconds, default=_plan.LEAK_SECONDS,
                        metavar="S", help="the most seconds of calls per instance; default: "
                                          "%(default)g")
    add_setting(parser, "cpu", help="pin the calls to CPU N (default: the last CPU allowed)")
    parser.add_argument("--fixed", type=_hex_bytes, metavar="HEX",
                        help="the fixed message in hex (its length is the --length); default: "
                             "all zero")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="seed of the driver's PRNG (classes, random messages); default: "
                             "a random one, recorded in the evidence")
    parser.add_argument("--control", action="store_true",
                        help="also run the A/A control of each instance: both classes random, "
                             "so only the harness or the host can make them differ; its "
                             "verdict should be 'no leak detected' (a flagged control makes "
                             "the exit status 1 too: the host cannot be trusted)")
    parser.add_argument("--no-early-stop", action="store_true",
                        help="make every call even once a test is above |t| = 10")
    add_labels(parser)
    add_out(parser, "the evidence", Path("ngcc-leak"))
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar on a terminal (without one there is none: "
                             "the result line of each instance is the progress)")
    add_wait(parser)
    parser.set_defaults(run=_run_leak)


def _hex_bytes(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected hex digits, got %r" % text) from None


def _run_leak(args: argparse.Namespace) -> int:
    from ngcc.library.registry import run_labels
    from ngcc.measure import leak_measurement as _leak
    from ngcc.measure import locks as _locks

    length = args.length if args.length is not None else \
        len(args.fixed) if args.fixed is not None else _leak.DEFAULT_LENGTH
    with usage_checks():  # a setting out of range or a typo, said before any call
        _leak.checked_limits(length, args.calls, args.seconds)
        _check_fixed_and_seed(args.fixed, length, args.seed)
        if args.cpu is not None:
            _locks.check_cpu(args.cpu)
        found = [instance(name) for name in args.instances]
        labels = run_labels(found, path_labels(args.instances, args.labels))
    # a bar on a terminal only: without one, each instance's result line is its progress
    reporter = _progress.Progress("off" if args.no_progress or not sys.stderr.isatty()
                                  else "bar")
    with _locks.hold_cpu(args.cpu, None, wait=args.wait, on_wait=print_wait) as cpu:
        status = _leak_each(args, found, labels, length, cpu, reporter)
    print("evidence: %s" % args.out)
    return status


def _check_fixed_and_seed(fixed: bytes | None, length: int, seed: int | None) -> None:
    if fixed is not None and len(fixed) != length:
        raise UsageError("--fixed has %d bytes (%d hex digits), but --length is %d: give "
                         "%d hex digits, or leave --length out" % (
                             len(fixed), 2 * len(fixed), length, 2 * length))
    if seed is not None and not 0 <= seed < 2 ** 64:
        raise UsageError("--seed must be 0 to %d, got %d" % (2 ** 64 - 1, seed))


def _leak_each(args: argparse.Namespace, found: Sequence[Instance], labels: Sequence[str],
               length: int, cpu: int, reporter: _progress.Progress) -> int:
    """Run the leak test of each instance on ``cpu`` (held); return the exit status."""
    from ngcc.evidence import leak_evidence as _leak_evidence
    from ngcc.measure import leak_measurement as _leak
    from ngcc.report.plots.common import save
    from ngcc.report.plots.leak_plot import leak_trace_plot

    status = 0
    for inst, label in zip(found, labels, strict=True):
        for control in (False, True) if args.control else (False,):
            try:
                with reporter.task("%s%s" % (label, " (control)" if control else ""),
                                   args.calls) as task:
                    result = _leak.leak(inst, length, calls=args.calls, seconds=args.seconds,
                                        cpu=cpu, fixed=None if control else args.fixed,
                                        seed=args.seed, early_stop=not args.no_early_stop,
                                        control=control, label=label,
                                        progress=task)
            except NgccError as exc:  # this instance failed; the others still run
                print("%s  ERROR  %s" % (label, plain(str(exc))), flush=True)
                status = EXIT_RUNTIME_ERROR
                break
            calls, traces = result.trace_series()
            evidence = result.evidence()
            save(leak_trace_plot(calls, traces, title=result.title),
                 _leak_evidence.evidence_path(evidence, args.out, ""))
            _leak_evidence.write_evidence(evidence, args.out, plot=True)
            print(result.summary(), flush=True)
            if result.leaks:
                status = EXIT_RUNTIME_ERROR
    return status
