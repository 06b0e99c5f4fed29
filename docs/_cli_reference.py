"""The parser docs/cli.md renders: the ``ngcc`` command's own (from ``_ngcc_paths``).

sphinx-argparse reads every description and help text as reStructuredText, while the
parser writes them as plain text for a terminal. So here ``|`` is escaped (``max |t|``
would be a substitution), and a `code span` in single backquotes, as the help texts
write commands, becomes an inline literal (it would be a title reference, in italics).
Nothing else is changed.
"""

from __future__ import annotations

import argparse
import re

from _ngcc_paths import build_parser as _ngcc_parser


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and every subcommand's parser below it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases: once
                found += _parsers(sub)
    return found


def _plain(text: str | None) -> str | None:
    if text is None:
        return None
    return re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", text.replace("|", r"\|"))


def build_parser() -> argparse.ArgumentParser:
    """The ``ngcc`` parser, its texts escaped for reStructuredText."""
    parser = _ngcc_parser()
    for each in _parsers(parser):
        each.description = _plain(each.description)
        each.epilog = _plain(each.epilog)
        for action in each._actions:
            action.help = _plain(action.help)
    return parser
