"""Names are data, never paths: the one rule for every name that reaches a file name.

Instance names (from ``CryptHash_AlgorithmInstance.h``, sidecars, the command line),
labels and candidate ids become parts of evidence file names. They are checked
against one rule at the edge (:func:`check_name`), and every path built from them
goes through :func:`inside`, which refuses a result outside its root directory.
A label is the name a library carries in one run's files, tables and plots; it is
separate from the instance name, which selects the KAT manifest line
(:func:`assign_labels` makes the labels of a run unique).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from pathlib import Path

from ngcc.base.errors import InvalidNameError

#: Letters, digits and ``- _ . + @``, starting with a letter or digit, at most 80 long.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+@-]{0,79}")
MAX_NAME_LENGTH = 80


def is_valid_name(text: object) -> bool:
    """True when ``text`` is a string that satisfies the name rule."""
    return isinstance(text, str) and NAME_PATTERN.fullmatch(text) is not None


def check_name(text: object, what: str = "name") -> str:
    """Return ``text`` when it satisfies the name rule, else raise :class:`InvalidNameError`.

    ``what`` says which name it is (``"instance name in include/foo.h"``,
    ``"--label"``), so the message tells the user where to fix it.
    """
    if is_valid_name(text):
        return str(text)
    shown = repr(text) if len(repr(text)) <= 100 else repr(text)[:97] + "..."
    raise InvalidNameError(
        "%s %s is not a valid name: use letters, digits and - _ . + @ only, starting "
        "with a letter or digit, at most %d characters (names become file names, so "
        "no '/', no leading '.')" % (what, shown, MAX_NAME_LENGTH))


def inside(root: str | os.PathLike[str], *parts: str) -> Path:
    """``root / parts...``, refused unless it stays inside ``root``.

    The parts are relative path text (``"records/hash-34/X__hash_32.json"``);
    absolute parts, ``..`` components and symlinked escapes all raise
    :class:`InvalidNameError`. Symlinks inside ``root`` are resolved as they are now.
    """
    base = Path(root)
    candidate = base.joinpath(*parts)
    for part in parts:
        if os.path.isabs(part) or ".." in Path(part).parts:
            raise InvalidNameError("path %r leaves %s" % (os.path.join(*parts), base))
    resolved_root = base.resolve()
    resolved = candidate.resolve()
    if resolved != resolved_root and resolved_root not in resolved.parents:
        raise InvalidNameError("path %s resolves to %s, outside %s" % (candidate, resolved,
                                                                  resolved_root))
    return candidate


def assign_labels(names: Sequence[str], wanted: Sequence[str | None],
                  hints: Sequence[Sequence[str]]) -> list[str]:
    """A unique label for every library of a run, in order.

    Args:
        names: each library's default label (the instance name, or
            ``name@variant`` for a built-in variant other than ``ref``).
        wanted: an explicit label per library (``--label``), or None.
        hints: per library, words to tell it apart when its default clashes
            (for an external library: its folder names, nearest first).

    Explicit labels are kept as given and must be unique. A default label that
    clashes with another gets ``@<hint>`` (the first hint that makes it unique),
    else ``@<n>``; the first library with a default keeps it bare. Labels differing
    only in case clash (they name files, and read alike in a table). Raises
    :class:`InvalidNameError` for a duplicate or invalid explicit label.
    """
    labels: list[str | None] = [None] * len(names)
    taken: set[str] = set()  # casefolded
    for index, label in enumerate(wanted):
        if label is None:
            continue
        check_name(label, "label")
        if label.casefold() in taken:
            raise InvalidNameError("label %r is given to two libraries (case aside); give "
                                   "each its own --label" % label)
        labels[index] = label
        taken.add(label.casefold())
    for index, name in enumerate(names):
        if labels[index] is None:
            labels[index] = unique_label(name, taken, hints[index])
            taken.add(str(labels[index]).casefold())
    return [str(label) for label in labels]


def unique_label(name: str, taken: Collection[str], hints: Sequence[str]) -> str:
    """``name`` when no label of ``taken`` (casefolded) is it, case aside; else
    ``name@<hint>`` for the first hint that makes it unique (the hint's characters
    outside the name rule as ``-``), else ``name@<n>`` (n = 2, 3, …). The one rule of
    :func:`assign_labels` and of ``ngcc evaluate``'s labels.

    Raises:
        InvalidNameError: ``name`` breaks the name rule.
    """
    label = name
    if label.casefold() in taken:
        for hint in hints:
            tried = "%s@%s" % (name, _name_part(hint))
            if is_valid_name(tried) and tried.casefold() not in taken:
                label = tried
                break
        else:
            number = 2
            while ("%s@%d" % (name, number)).casefold() in taken:
                number += 1
            label = "%s@%d" % (name, number)
    return check_name(label, "label")


def _name_part(text: str) -> str:
    """``text`` with every character outside the name rule replaced by ``-``."""
    cleaned = re.sub(r"[^A-Za-z0-9_.+-]", "-", text).strip("-.")
    return cleaned[:32] or "x"


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that orders the numbers in names by value: ``Bar-512`` before
    ``Bar-1024`` (text order puts ``1024`` first), case aside."""
    return tuple((0, int(part)) if part.isdigit() else (1, part.casefold())
                 for part in re.split(r"(\d+)", name) if part)
