"""Text tables of a report: the one Markdown table and the one table of aligned columns
that every page and every ``--format table|markdown`` output is written with.

A cell is text already formatted (:mod:`ngcc.base.format`); these functions only lay
it out, and return the table's lines (no trailing newline).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence

#: The formats a comparison is printed in (``ngcc compare --format``, with or without
#: ``--published``).
TEXT_FORMATS = ("table", "markdown", "csv", "json")


def markdown_cell(value: object) -> str:
    """One cell of a Markdown table: a ``|`` escaped, a line break a space."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[object]],
                   spaced_rule: bool = False) -> list[str]:
    """A Markdown table: header, rule, one line per row.

    The header is Markdown as given (a ``|`` in it is written ``\\|`` by the caller);
    each cell is escaped (:func:`markdown_cell`). The rule is ``|---|---|``, or
    ``| --- | --- |`` with ``spaced_rule`` (``ngcc compare``'s tables); both render
    alike.
    """
    rule = ("| " + " | ".join(["---"] * len(columns)) + " |" if spaced_rule
            else "|" + "---|" * len(columns))
    lines = ["| " + " | ".join(columns) + " |", rule]
    lines += ["| " + " | ".join(markdown_cell(value) for value in row) + " |" for row in rows]
    return lines


def aligned_table(rows: Sequence[Sequence[str]], right_from: int | None = None) -> list[str]:
    """Columns two spaces apart, each as wide as its widest cell (the header is
    ``rows[0]``), no trailing blanks: left-aligned, or right-aligned from column
    ``right_from`` on (figures)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    right = len(widths) if right_from is None else right_from
    return ["  ".join(cell.rjust(w) if i >= right else cell.ljust(w)
                      for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in rows]


#: The widest line a command prints by default, table and notes alike (``--wide``:
#: a table's every column, as wide as they come).
WIDTH = 100


def fit(line: str, width: int = WIDTH) -> str:
    """A line cut to ``width`` with ``…`` (a long label or cell; ``--wide`` shows it)."""
    return line if len(line) <= width else line[:width - 1] + "…"


def fitted_table(rows: Sequence[Sequence[str]], right_from: int | None = None,
                 width: int = WIDTH) -> list[str]:
    """:func:`aligned_table` with each line cut to ``width`` (:func:`fit`)."""
    return [fit(line, width) for line in aligned_table(rows, right_from)]


def notes(texts: Iterable[str], prefix: str = "note: ", width: int = WIDTH) -> list[str]:
    """Each text as a paragraph of lines within ``width``, the first after ``prefix``,
    the others indented two spaces: notes printed under a table."""
    return [line for text in texts for line in textwrap.wrap(
        prefix + text, width, subsequent_indent="  ", break_on_hyphens=False)]
