"""What the subcommands share: the exit statuses, the usage error, the aligned table,
the ``--label`` values of library paths, and the options several commands take
that are no campaign setting (``--wait``'s variants, positive seconds; the settings'
options are ``cli/options``)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator, Sequence

from ngcc.base.errors import SettingError, UsageError
from ngcc.campaign import schema as _schema
from ngcc.campaign.settings import CampaignSettings
from ngcc.library.registry import is_library_path
from ngcc.measure import waiting as _waiting
from ngcc.measure.waiting import CpuWait, ShowWait
from ngcc.report.tables import aligned_table

EXIT_RUNTIME_ERROR = 1
EXIT_USAGE = 2
#: ``ngcc campaign``: every job measured, but some stopped at --max-trials above
#: --target-ci (each named in a warning).
EXIT_TARGET_MISSED = 3


@contextlib.contextmanager
def usage_checks() -> Iterator[None]:
    """The checks of a command line's arguments, made before any work starts: a value out
    of range (a ``ValueError``) or a name that does not exist (a ``LookupError``: instance,
    candidate, label) raised there is a usage mistake, a :class:`UsageError` (exit 2); a
    file that cannot be read or a busy CPU stays an error of the work (exit 1)."""
    try:
        yield
    except UsageError:
        raise
    except SettingError as exc:  # in the words of the command line: its option
        text = str(exc)
        if text.startswith(exc.setting):
            text = _option(exc.setting) + text[len(exc.setting):]
        raise UsageError(text) from exc
    except (ValueError, LookupError) as exc:
        raise UsageError(str(exc)) from exc


def refuse_together(args: argparse.Namespace, *pairs: tuple[str, str]) -> None:
    """Refuse two options given together whose meanings exclude each other (``--all``
    with ``--candidate``: one would silently win); each pair names two ``args``
    attributes, whose options are their names with ``--`` and dashes."""
    for first, second in pairs:
        if _given(getattr(args, first)) and _given(getattr(args, second)):
            raise UsageError("%s and %s exclude each other: give one of them" % (
                _option(first), _option(second)))


def refuse_alone(args: argparse.Namespace, *pairs: tuple[str, str]) -> None:
    """Refuse an option given without the one it qualifies (``--leak-calls`` without
    ``--leak``: it would be silently ignored); each pair is (option, the one it needs)."""
    for option, needed in pairs:
        if _given(getattr(args, option)) and not _given(getattr(args, needed)):
            raise UsageError("%s applies to %s: give %s too, or leave %s out" % (
                _option(option), _option(needed), _option(needed), _option(option)))


def _given(value: object) -> bool:
    """Whether an option was given: ``--leak-calls 0`` was (0 == False, but is not it)."""
    return not (value is None or value is False or value == [])


def _option(attribute: str) -> str:
    """The option of an ``args`` attribute: a setting's flag (``calls_rule``: ``--plan``),
    else the attribute's name with ``--`` and dashes."""
    setting = _schema.fields(CampaignSettings).get(attribute)
    found = setting.metadata["setting"].flag if setting is not None else None
    return found or "--" + attribute.replace("_", "-")


def table(rows: Sequence[Sequence[str]]) -> str:
    """A terminal table: left-aligned columns, two spaces apart (``report.tables``)."""
    return "\n".join(aligned_table(rows))


def path_labels(names: Sequence[str], labels: Sequence[str]) -> list[str | None]:
    """The ``--label`` values (given in the order of the library paths) aligned with
    every name of the command line (None for the others)."""
    paths = [index for index, name in enumerate(names) if is_library_path(name)]
    if len(labels) > len(paths):
        raise UsageError("%d --label given for %d library path(s): --label names library "
                        "paths, one each, in their order" % (len(labels), len(paths)))
    aligned: list[str | None] = [None] * len(names)
    for index, label in zip(paths, labels, strict=False):
        aligned[index] = label
    return aligned


# The type functions of options raise ArgumentTypeError only: argparse would name the
# function in its message for any other error (`invalid _positive_seconds value: 'abc'`).
def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")  # refused below, in the same words
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("expected a positive, finite number of seconds, got %r"
                                         % text)
    return value


def _wait_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number of seconds, got %r" % text) from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("expected a number of seconds >= 0, got %r" % text)
    return value


def add_wait(parser: argparse.ArgumentParser, waits: bool = True) -> None:
    """``--wait [SECONDS]``: how long to wait for a CPU another ngcc measurement holds."""
    bound = _waiting.DEFAULT_WAIT_SECONDS
    parser.add_argument(
        "--wait", type=_wait_seconds, nargs="?", metavar="SECONDS",
        const=bound, default=bound if waits else None,
        help="wait up to SECONDS (alone: %g) for a CPU another ngcc measurement holds, "
             "saying for whom; 0 refuses at once%s" % (
                 bound, "; default: %g" % bound if waits else "; default: do not wait"))


def print_wait(wait: CpuWait) -> None:
    """Show a wait for a CPU on stderr, as every entry point does (a bar on a terminal,
    else a line when it begins, when its holder or queue changes, and when it ends)."""
    _WAIT_SHOWN(wait)


_WAIT_SHOWN = ShowWait()
