"""``ngcc info``, ``ngcc check`` and ``ngcc host``: this machine's fingerprint, as a run
stores it; (``check``) whether it is fixed for measurement on the CPU a campaign would
pin to; (``host``) what makes it unfit to publish, setting by setting, with the command
that fixes each, and ``--tune``/``--reset`` for what may change at run time."""

from __future__ import annotations

import argparse

from ngcc.base import sandbox as _sandbox
from ngcc.base.errors import SandboxUnavailableError
from ngcc.base.untrusted import plain
from ngcc.cli.common import EXIT_RUNTIME_ERROR, add_wait, print_wait, table, usage_checks
from ngcc.cli.options import add_setting
from ngcc.report.tables import fitted_table, notes

# What reads the host loads when a command runs, not when the parser is built.


def add_info(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "info", help="show the cycle counter and this machine",
        description="Calibrate the cycle counter (about 50 ms) and show it with the facts "
                    "that decide whether figures from this machine are comparable.")
    parser.set_defaults(run=_run_info)


def _run_info(args: argparse.Namespace) -> int:
    from ngcc.measure import host as _host
    from ngcc.report import host as _host_words

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
    from ngcc.measure import host as _host
    from ngcc.measure import locks as _locks
    from ngcc.report import host as _host_words

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
    from ngcc.driver import child as _child

    if not _sandbox.sandbox_enabled():
        return ("submitted code runs with the driver's seccomp filter alone (--no-sandbox or "
                "%s=1): it sees what you see" % _sandbox.ENVIRONMENT_VARIABLE), True
    try:
        _child.check_isolation()
    except SandboxUnavailableError as exc:
        return str(exc), True
    return ("submitted code runs isolated: its own user, PID, network, IPC and mount "
            "namespaces, a read-only view, no network"), False


def add_host(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "host", help="show what makes this host unfit to publish, and how to fix it",
        description="List the settings that decide whether figures measured here are fit "
                    "to publish (the measuring CPU's governor, turbo/boost, the interrupts "
                    "it may take, its SMT siblings, its isolation, the load, a virtual "
                    "machine), each with the command that fixes it. As root, --tune "
                    "applies what may change at run time (governor, turbo/boost, "
                    "interrupt affinity) and saves the values it replaced; --reset puts "
                    "them back.")
    add_setting(parser, "cpu", help="the CPU a campaign would pin to (default: the last one "
                                    "allowed that no other running ngcc campaign holds)")
    change = parser.add_mutually_exclusive_group()
    change.add_argument("--tune", action="store_true",
                        help="as root, set the governor to performance, turn turbo/boost "
                             "off and move the interrupts off the CPU (the values replaced "
                             "are saved for --reset)")
    change.add_argument("--reset", action="store_true",
                        help="as root, put back the values --tune replaced")
    parser.set_defaults(run=_run_host)


def _run_host(args: argparse.Namespace) -> int:
    from ngcc.measure import locks as _locks
    from ngcc.measure import tuning as _tuning

    with usage_checks():
        cpu = _locks.default_cpu() if args.cpu is None else _locks.check_cpu(args.cpu)
    if args.reset:
        for line in _tuning.reset() or ["nothing to reset: --tune changed nothing"]:
            print("reset %s" % line)
    found = _tuning.settings(cpu)
    if args.tune:
        for line in _tuning.tune(found) or ["nothing to tune"]:
            print("tuned %s" % line)
        found = _tuning.settings(cpu)
    print("\n".join(fitted_table([("setting", "now", "fit"), *(
        (s.name, s.now, "yes" if s.fit else "no" + (" *" if s.tunable else ""))
        for s in found)])))
    unfit = _tuning.unfit(found)
    if not unfit:
        print("this host is fit to publish")
        return 0
    # the fixes under the table: a command line is too long for a column
    print("\n".join(notes(("%s: %s" % (s.name, s.fix) for s in unfit), prefix="fix ")))
    tunable = sum(s.tunable for s in unfit)
    print("\n".join(notes(["this host is not fit to publish: %s%s" % (
        ", ".join(s.name for s in unfit),
        "; `sudo ngcc host --tune` fixes the %d marked *" % tunable if tunable else "")],
        prefix="")))
    return 0
