"""The ``ngcc`` command line; ``python -m ngcc`` runs the same :func:`main`.

Each subcommand is one ``add_<name>(subcommands)`` function in its module of
``ngcc/cli/`` that adds its parser and sets ``run`` to a function ``(args) -> exit
status``; listing it in ``SUBCOMMANDS`` makes it available. An analysis's command is
its slice's ``cli/<analysis>_command.add_command`` (``ngcc.evidence.analyses``).
Errors the user can fix (an ``NgccError``, a ``ValueError`` or an ``OSError`` such as
a missing file) become one line ``ngcc: error: ...`` on stderr and exit status 1;
usage mistakes (argparse's, and a ``UsageError``: what ``common.usage_checks`` finds
before any work starts) exit with 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from ngcc.base.errors import BuildError, NgccError, UsageError
from ngcc.base.sandbox import disable_sandbox
from ngcc.base.untrusted import plain
from ngcc.base.version import __version__
from ngcc.cli import build, campaign, compare, evaluate, hash, host, kat, report, validate
from ngcc.cli.common import EXIT_RUNTIME_ERROR, EXIT_USAGE
from ngcc.evidence.analyses import slice_modules


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, like the runtime errors."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, "ngcc: error: %s (see `%s --help`)\n" % (message, self.prog))


#: One function per subcommand, in the order ``ngcc --help`` lists them.
SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    hash.add_list,
    hash.add_hash,
    host.add_info,
    kat.add_kat,
    campaign.add_campaign,
    host.add_check,
    host.add_host,
    report.add_report,
    validate.add_validate,
    compare.add_compare,
    build.add_build,
    evaluate.add_evaluate,
    *(command.add_command for command in slice_modules("command")),  # one per analysis
]


def build_parser() -> argparse.ArgumentParser:
    """The ``ngcc`` argument parser with every subcommand of ``SUBCOMMANDS``."""
    parser = _Parser(prog="ngcc", description="Measure cryptographic hash functions the way "
                     "a competition evaluator does.")
    parser.add_argument("--version", action="version", version="ngcc %s" % __version__)
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run submitted code with the seccomp filter alone, without its "
                        "own user, PID, network, IPC and mount namespaces (where the kernel "
                        "refuses them; the evidence records it)")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(subcommands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ngcc`` command line with ``argv`` (default: ``sys.argv[1:]``); return
    the exit status."""
    try:
        args = build_parser().parse_args(_glue_flag_values(
            sys.argv[1:] if argv is None else argv))
    except SystemExit as stop:  # --help, --version, or a usage error already printed
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    if args.no_sandbox:
        disable_sandbox()
    try:
        return args.run(args)
    except BrokenPipeError:  # `ngcc list | head -1`: the reader left; not an error
        _silence_stdout()
        return 0
    except UsageError as exc:
        print("ngcc: error: %s" % plain(str(exc)), file=sys.stderr)
        return EXIT_USAGE
    except (NgccError, ValueError, OSError) as exc:
        print("ngcc: error: %s" % _terminal_text(exc), file=sys.stderr)
        return EXIT_RUNTIME_ERROR
    except MemoryError:  # `ngcc hash SM3 /dev/zero` under a memory limit
        print("ngcc: error: out of memory (a message larger than the memory this process "
              "may use?)", file=sys.stderr)
        return EXIT_RUNTIME_ERROR
    except KeyboardInterrupt:
        print("ngcc: interrupted", file=sys.stderr)
        return 130


def _terminal_text(error: Exception) -> str:
    """The error's message, safe on a terminal: escaped whole, so that it is one line
    (no text a library chose can forge a line of its own); but a build error's newlines
    are ngcc's own, between the compiler's lines (each escaped where the compiler said
    it, ``library.cc``), so there each line is escaped and the newlines are kept."""
    if isinstance(error, BuildError):
        return "\n".join(plain(line) for line in str(error).split("\n"))
    return plain(str(error))


def _glue_flag_values(argv: Sequence[str]) -> list[str]:
    """``--extra-cflags -maes`` as ``--extra-cflags=-maes``: argparse would take a value
    that starts with ``-`` for an option."""
    glued: list[str] = []
    for arg in argv:
        if glued and glued[-1] in ("--extra-cflags", "--flags", "--libs"):
            glued[-1] += "=" + arg
        else:
            glued.append(arg)
    return glued


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
