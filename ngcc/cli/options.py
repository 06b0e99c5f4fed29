"""The command line's options of the campaign settings and the ones several commands
share: each option's flag, placeholder, kind, choices and help come from the settings
schema (``campaign/schema``), so no command states a default or a number of its own, and
a command's settings are read back from its arguments by name (:func:`settings_of`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ngcc.campaign import schema as _schema
from ngcc.campaign.settings import CampaignSettings


def _kind_of(name: str) -> Callable[[str], Any]:
    """The ``type`` of setting ``name``'s option: its text read and checked by the
    schema (argparse then names the option in the error: ``argument --trials: ...``)."""
    def parse(text: str) -> Any:
        try:
            return _schema.parse(CampaignSettings, name, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def flag(name: str) -> str:
    """The command-line option of setting ``name`` (``calls_rule``: ``--plan``)."""
    found = _schema.spec(CampaignSettings, name).flag
    if found is None:
        raise LookupError("the setting %s has no option" % name)
    return found


def add_setting(parser: argparse.ArgumentParser | argparse._ActionsContainer, name: str, *,
                help: str | None = None, **argparse_options: Any) -> None:
    """Add setting ``name``'s option to ``parser``: flag, placeholder, kind and choices
    from the schema, its help too unless ``help`` words it for another command (with
    no number of its own); ``argparse_options`` add to or replace what argparse gets."""
    spec = _schema.spec(CampaignSettings, name)
    text = help if help is not None else _schema.help_of(CampaignSettings, name)
    options: dict[str, Any] = {"dest": name, "help": text.replace("%", "%%")}
    if spec.kind is _schema.FLAG or argparse_options.get("action") == "store_true":
        options["action"] = "store_true"
    elif spec.choices:
        options["choices"] = spec.choices
    else:
        options.update(metavar=spec.metavar, type=_kind_of(name))
    options.update(argparse_options)
    parser.add_argument(flag(name), **options)


def add_settings(parser: argparse.ArgumentParser, *names: str) -> None:
    """Add the options of settings ``names``, in that order (:func:`add_setting`)."""
    for name in names:
        add_setting(parser, name)


def settings_of(args: argparse.Namespace, **given: Any) -> dict[str, Any]:
    """The settings a command's arguments give (those its parser has, by name), with
    ``given`` added or replaced: the keywords of ``CampaignSettings.make``."""
    found = {name: getattr(args, name) for name in _schema.fields(CampaignSettings)
             if hasattr(args, name) and _schema.spec(CampaignSettings, name).flag}
    return {**found, **given}


def add_labels(parser: argparse.ArgumentParser) -> None:
    """``--label NAME``, repeatable: the label of each library path named, in order."""
    add_setting(parser, "labels", action="append", default=[], type=str)


def add_out(parser: argparse.ArgumentParser, what: str,
            default: Path | None = None) -> None:
    """``--out DIR``: the folder a command writes ``what`` into (``default``, or the
    command's own default said in ``what``)."""
    parser.add_argument("--out", type=Path, metavar="DIR", default=default,
                        help="folder for %s%s" % (what, "; default: %s" % default
                                                  if default is not None else ""))
