"""The settings schema: what each field of :class:`~ngcc.CampaignSettings` carries beside
its default (its default under ``quick``, its choices, the kind of value it takes, its
help and its command-line flag), the help worded from those, and the check of a value.

A field is declared with :func:`setting`; everything else reads the schema: the
settings' own checks (:func:`checked`, whenever a ``CampaignSettings`` is made), their
docstring (:func:`documented`) and the command line's options (``cli/options``), so no
default, choice or number is written twice.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngcc.base.errors import SettingError, UnknownSettingError


@dataclass(frozen=True)
class Kind:
    """The kind of value a setting takes: ``words`` say what it must be ("a positive
    whole number"), ``test`` tells a value of it, ``parse`` reads one from the
    command line (raising ``ValueError``)."""

    words: str
    test: Callable[[Any], bool]
    parse: Callable[[str], Any] = str


def is_number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) \
        and math.isfinite(value)


def is_whole(value: object) -> bool:
    return not isinstance(value, bool) and hasattr(value, "__index__")


def _words(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


POSITIVE_WHOLE = Kind("a positive whole number", lambda v: is_whole(v) and v > 0, int)
POSITIVE_SECONDS = Kind("a positive, finite number of seconds",
                        lambda v: is_number(v) and v > 0, float)
POSITIVE_PERCENT = Kind("a positive, finite number (a percentage)",
                        lambda v: is_number(v) and v > 0, float)
FLAG = Kind("True or False", lambda v: isinstance(v, bool))
TEXT = Kind("a text", lambda v: isinstance(v, str))
WHOLE = Kind("a whole number", is_whole, int)
PATH = Kind("a path", lambda v: isinstance(v, (str, os.PathLike)), Path)
NAMES = Kind("a list of names", lambda v: isinstance(v, tuple)
             and all(isinstance(n, str) for n in v), _words)
LABELS = Kind("a list of labels (or None)", lambda v: isinstance(v, tuple)
              and all(n is None or isinstance(n, str) for n in v))
ANY = Kind("anything", lambda v: True)


@dataclass(frozen=True)
class Setting:
    """What the schema holds of one setting, beside its field's default.

    Attributes:
        help: its help, a template: ``{default}``, ``{quick}`` and ``{choices}`` are
            the setting's own, ``{quicks[name]}`` another setting's quick default, and
            ``facts`` name the other numbers it states.
        kind: the kind of value it takes (:class:`Kind`).
        flag: its command-line option (None: it has none of its own).
        metavar: the option's placeholder.
        quick: its default under ``quick`` (None: the default).
        choices: the values it may take (empty: any of its kind).
        facts: other numbers the help states, by name (their source is the constant).
        optional: None is one of its values.
    """

    help: str
    kind: Kind = ANY
    flag: str | None = None
    metavar: str | None = None
    quick: object = None
    choices: tuple[str, ...] = ()
    facts: tuple[tuple[str, object], ...] = ()
    optional: bool = False


def setting(default: object = dataclasses.MISSING, *,
            factory: Callable[[], object] | None = None, help: str, kind: Kind = ANY,
            flag: str | None = None, metavar: str | None = None, quick: object = None,
            choices: Sequence[str] = (), facts: Mapping[str, object] | None = None,
            optional: bool | None = None) -> Any:
    """A field of the settings with its schema (``optional`` defaults to a None default)."""
    spec = Setting(help=help, kind=kind, flag=flag, metavar=metavar, quick=quick,
                   choices=tuple(choices), facts=tuple((facts or {}).items()),
                   optional=default is None if optional is None else optional)
    metadata = {"setting": spec}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The fields of ``cls`` that are settings, by name, in order."""
    return {f.name: f for f in dataclasses.fields(cls) if "setting" in f.metadata}


def spec(cls: type, name: str) -> Setting:
    """The schema of setting ``name`` of ``cls``."""
    return fields(cls)[name].metadata["setting"]


def default(cls: type, name: str, quick: bool = False) -> Any:
    """The default of setting ``name`` (under ``quick``, its quick default if it has one)."""
    field = fields(cls)[name]
    if quick and field.metadata["setting"].quick is not None:
        return field.metadata["setting"].quick
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def shown(value: object) -> str:
    """A value as help and messages state it: ``0.02``, ``900``, ``2_12,2_23``."""
    if isinstance(value, float):
        return "%g" % value
    if isinstance(value, (tuple, list)):
        return ",".join(shown(v) for v in value)
    return str(value)


def help_of(cls: type, name: str) -> str:
    """The help of setting ``name``, its numbers and choices filled in from the schema."""
    s = spec(cls, name)
    field = fields(cls)[name]
    value = field.default if field.default_factory is dataclasses.MISSING else None
    quicks = {n: shown(f.metadata["setting"].quick) for n, f in fields(cls).items()
              if f.metadata["setting"].quick is not None}
    return s.help.format(default=shown(value), quick=shown(s.quick),
                         choices=", ".join(s.choices), quicks=quicks,
                         **{key: shown(fact) for key, fact in s.facts})


def unknown(cls: type, given: Iterable[str]) -> None:
    """Refuse a keyword that is no setting of ``cls``, naming the nearest one.

    Raises:
        UnknownSettingError: one line, e.g. ``no campaign setting 'length' (did you
            mean lengths?)``.
    """
    names = list(fields(cls))
    for name in sorted(set(given) - set(names)):
        near = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        raise UnknownSettingError("no campaign setting %r (%s)" % (
            name, "did you mean %s?" % near[0] if near else
            "see help(ngcc.CampaignSettings)"))


def checked(cls: type, name: str, value: object) -> None:
    """Refuse a value of setting ``name`` that is not of its kind or choices.

    Raises:
        SettingError: naming the setting, what it must be, and the value.
    """
    s = spec(cls, name)
    if value is None and s.optional:
        return
    if s.choices and value not in s.choices:
        raise SettingError(name, "%s must be one of %s, got %r" % (
            name, ", ".join(s.choices), value))
    if not s.kind.test(value):
        raise SettingError(name, "%s must be %s, got %r" % (name, s.kind.words, value))


def parse(cls: type, name: str, text: str) -> Any:
    """A command-line value of setting ``name``, read and checked.

    Raises:
        ValueError: it is not one (the message says what it must be, not whose).
    """
    s = spec(cls, name)
    try:
        value = s.kind.parse(text)
    except ValueError:
        value = text
    if not s.kind.test(value) or (s.choices and value not in s.choices):
        raise ValueError("expected %s, got %r" % (
            "one of " + ", ".join(s.choices) if s.choices else s.kind.words, text))
    return value


def documented(cls: type, head: str) -> str:
    """``head`` and an ``Attributes:`` section with the help of every setting."""
    lines = [head.rstrip(), "", "Attributes:"]
    for name in fields(cls):
        lines.append("    %s: %s%s" % (name, help_of(cls, name), " (``%s``)" % spec(
            cls, name).flag if spec(cls, name).flag else ""))
    return "\n".join(lines) + "\n"
