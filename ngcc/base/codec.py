"""Typed JSON for frozen dataclasses: one ``to_json``, one ``from_json``, one check.

The evidence schema (``ngcc/evidence/model.py``) is written once, as dataclasses with type
annotations; this module turns them into JSON and back. ``from_json`` checks every
value against its annotation (``int`` is not ``bool`` and not ``5.0``; ``float``
is finite; ``X | None``; ``tuple[X, ...]``; nested dataclasses; a JSON object),
refuses unknown and missing fields, then runs the class's own ``_check`` for
ranges, names and paths. Every defect is a :class:`FieldError` naming the field by
its dotted path (``trials[1].cpu``), which the store turns into a
:class:`~ngcc.base.errors.CorruptRecordError` naming the file.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

#: A free-form JSON object kept as it is (for example an ``ngcc build`` sidecar).
JsonObject = dict[str, Any]

T = TypeVar("T", bound="Evidence")


class FieldError(ValueError):
    """One defect of an evidence value: ``field`` (a dotted path) and what is wrong."""

    def __init__(self, field: str, defect: str):
        self.field = field
        self.defect = defect
        super().__init__("%s %s" % (field, defect) if field else defect)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of ``cls`` (cached: they do not change)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _json_fields(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.metadata.get("json", True)]


def added(default: Any) -> Any:
    """A field added to a schema after files were written without it: it reads as
    ``default`` where absent, and is written only when it holds something else, so an
    older file reads and writes back byte for byte."""
    return dataclasses.field(default=default, metadata={"added": True})


class Evidence:
    """Base of the evidence dataclasses: JSON in and out, checked on the way in."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this value (tuples become lists, dataclasses objects); a
        field made with :func:`added` is left out while it holds its default."""
        return {f.name: _dump(getattr(self, f.name)) for f in _json_fields(type(self))
                if not (f.metadata.get("added") and getattr(self, f.name) == f.default)}

    @classmethod
    def from_json(cls: type[T], data: object, where: str = "") -> T:
        """Build and check a value from its JSON object.

        Raises:
            FieldError: a missing or unknown field, a value of the wrong type, or a
                value ``_check`` refuses; ``where`` prefixes the field's name.
        """
        if not isinstance(data, Mapping):
            raise FieldError(where.rstrip("."), "is %s, not a JSON object" % _shown(data))
        fields = _json_fields(cls)
        known = {f.name for f in fields}
        unknown = sorted(str(key) for key in data if key not in known)
        if unknown:
            raise FieldError(where + unknown[0], "is not a field of this file's schema")
        values: dict[str, Any] = {}
        for f in fields:
            if f.name in data:
                values[f.name] = _load(_hints(cls)[f.name], data[f.name], where + f.name)
            elif (f.default is dataclasses.MISSING
                  and f.default_factory is dataclasses.MISSING):
                raise FieldError(where + f.name, "is missing")
        value = cls(**values)
        value._check(where)
        return value

    def _check(self, where: str) -> None:
        """Refuse values of the right type but out of range (subclasses override)."""


def _dump(value: Any) -> Any:
    if isinstance(value, Evidence):
        return value.to_json()
    if isinstance(value, (tuple, list)):
        return [_dump(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _dump(item) for key, item in value.items()}
    return value


def _load(kind: Any, value: Any, where: str) -> Any:
    """``value`` checked against the annotation ``kind`` (and converted: lists to tuples)."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [arg for arg in args if arg is not type(None)]
        if len(options) != 1:
            raise TypeError("only X | None unions are supported, not %s" % kind)
        return _load(options[0], value, where)
    if kind is Any:
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise FieldError(where, "is %s, not a JSON array" % _shown(value))
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_load(args[0], item, "%s[%d]" % (where, i))
                         for i, item in enumerate(value))
        if len(value) != len(args):
            raise FieldError(where, "has %d items, not %d" % (len(value), len(args)))
        return tuple(_load(arg, item, "%s[%d]" % (where, i))
                     for i, (arg, item) in enumerate(zip(args, value, strict=True)))
    if origin is dict:
        if not isinstance(value, dict):
            raise FieldError(where, "is %s, not a JSON object" % _shown(value))
        return dict(value)
    if isinstance(kind, type) and issubclass(kind, Evidence):
        return kind.from_json(value, where + ".")
    return _scalar(kind, value, where)


def _scalar(kind: Any, value: Any, where: str) -> Any:
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise FieldError(where, "is %s, not true or false" % _shown(value))
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise FieldError(where, "is %s, not an integer" % _shown(value))
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise FieldError(where, "is %s, not a finite number" % _shown(value))
            return float(value)
        raise FieldError(where, "is %s, not a number" % _shown(value))
    if kind is str:
        if isinstance(value, str):
            return value
        raise FieldError(where, "is %s, not a string" % _shown(value))
    raise TypeError("no JSON form for %r" % (kind,))
