"""``ngcc info`` and ``ngcc check``: this machine's fingerprint, as a run stores it, and
(``check``) whether it is fixed for measurement on the CPU a campaign would pin to."""

from __future__ import annotations

import argparse

from ngcc.base import sandbox as _sandbox
from ngcc.base.errors import SandboxUnavailableError
from ngcc.base.untrusted import plain
from ngcc.cli.common import EXIT_RUNTIME_ERROR, add_wait, print_wait, table, usage_checks
from ngcc.cli.options import add_setting
from ngcc.driver import child as _child
from ngcc.measure import host as _host
from ngcc.measure import locks as _locks
from ngcc.report import host as _host_words


def add_info(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "info", help="show the cycle counter and this machine",
        description="Calibrate the cycle counter (about 50 ms) and show it with the facts "
                    "that decide whether figures from this machine are comparable.")
    parser.set_defaults(run=_run_info)


def _run_info(args: argparse.Namespace) -> int:
    # the same facts, in the same words, as a campaign stores and a report shows them
    print(table([("item", "value"), *_host_words.describe(_host.fingerprint())]))
    return 0


def add_check(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "check", help="check that this host is fixed for measurement",
        description="Show the environment fingerprint every run stores (CPU, counter, "
                    "governor, turbo, SMT, virtualisation, load, software) and warn about "
                    "everything that makes cycle counts drift, with the remedy. Exit status 1 "
                    "under --strict when there is a warning.")
    add_setting(parser, "cpu", help="the CPU a campaign would pin to (default: the last one "
                                    "allowed that no other running ngcc campaign holds)")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 if the host is not fixed")
    add_wait(parser, waits=False)
    parser.set_defaults(run=_run_check)


def _run_check(args: argparse.Namespace) -> int:
    with usage_checks():
        cpu = _locks.default_cpu() if args.cpu is None else _locks.check_cpu(args.cpu)
    if args.wait is not None:  # read the host once no other measurement runs there
        with _locks.hold_cpu(cpu, None, wait=args.wait, on_wait=print_wait):
            pass
    environment = _host.fingerprint(cpu)
    print(table([("item", "value"), *_host_words.describe(environment)]))
    issues = [issue.message for issue in
              (*_host.host_warnings(environment), *_locks.cpu_issues(cpu))]
    isolation, refused = _isolation()
    for issue in issues + ([isolation] if refused else []):
        print("warning: %s" % plain(issue))
    if not refused:
        print(isolation)
    if not issues:
        print("the host is fixed for measurement")
    return EXIT_RUNTIME_ERROR if (issues or refused) and args.strict else 0


def _isolation() -> tuple[str, bool]:
    """What submitted code runs in on this host, and whether that calls for a warning."""
    if not _sandbox.sandbox_enabled():
        return ("submitted code runs with the driver's seccomp filter alone (--no-sandbox or "
                "%s=1): it sees what you see" % _sandbox.ENVIRONMENT_VARIABLE), True
    try:
        _child.check_isolation()
    except SandboxUnavailableError as exc:
        return str(exc), True
    return ("submitted code runs isolated: its own user, PID, network, IPC and mount "
            "namespaces, a read-only view, no network"), False
