"""A run's report in other formats: self-contained HTML pages, and tables of statistics.

* :func:`html_page` turns one of ``report.pages``'s Markdown pages into one HTML file that
  needs nothing else: the plots it shows are inline (base64 PNG), a link to a
  distribution plot points at a figure further down the same page, a link to another
  page points at its ``.html`` (its ``#fragment`` kept); no script, no style sheet, no
  font or image from anywhere else. It converts only the Markdown ``report.pages``
  writes (headings, paragraphs, bullets, tables, code, bold, links, images, anchors), so
  the HTML says exactly what the Markdown says. A link's ``#fragment`` names an anchor
  both forms have: a heading's id as GitHub makes it (:func:`heading_id`), or an anchor
  a page writes itself (:func:`anchor`: ``<a id="NAME"></a>``, which GitHub renders too).
* :func:`statistics_frame` is one row per record (library × message length): the keys
  of the record (candidate, instance, label, implementation, message_bytes, the host
  when the record names one), every field of :class:`~ngcc.evidence.model.Statistics`, and
  what ``stats.tables.summary_frame`` adds; :func:`statistics_csv` and
  :func:`statistics_json` write it. A list-valued field (the trial indices such as
  ``outlying_trials``, and ``flags``) is a JSON list in JSON and the same JSON text in
  a CSV cell. Each analysis whose evidence the run holds adds its column last
  (``constant_time``: the library's verdict), absent from a run without it.

Pure functions of their inputs, like the pages: ``ngcc validate`` regenerates the
files and compares them byte for byte.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from ngcc.base import untrusted as _untrusted

if TYPE_CHECKING:  # pandas loads only when a table is asked for, the model when a record
    import pandas as pd  # is (the command line's start reads FORMATS)

    from ngcc.evidence.model import Record

FORMATS = ("markdown", "html", "csv", "json")
"""What ``ngcc report --format`` writes: the Markdown pages (default), the same pages
as self-contained HTML, the statistics table as CSV or JSON."""
STATISTICS_STEM = "statistics"

STYLE = """\
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.45;
color:#1b1b1b;background:#fff;max-width:78rem;margin:2rem auto;padding:0 1.5rem}
h1{font-size:1.5rem;border-bottom:2px solid #ccc;padding-bottom:.3rem}
h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.8rem 0;font-size:.9rem;display:block;max-width:100%;
overflow-x:auto}
th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f0f0f0}tr:nth-child(even) td{background:#fafafa}
td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em;background:#f3f3f3;
padding:0 .2rem;border-radius:3px;white-space:nowrap}
img{max-width:min(100%,52rem);height:auto}figure{margin:1rem 0}
figcaption{font-size:.9rem;color:#555}
.warning{background:#fff4e5;border-left:4px solid #e69500;padding:.4rem .8rem}"""


# ------------------------------------------------------------------ tables

def statistics_frame(records: Sequence[Record],
                     analyses: Mapping[str, Mapping[str, str]] | None = None) -> pd.DataFrame:
    """One row per record: ``stats.tables.summary_frame`` (keys, every statistic but the
    flags, the leading figure, the KAT verdict, the ratio to pseudoXOF, the CI in
    cycles/byte: ``cycles_per_byte`` is the leading figure's), the flags
    (each as its JSON object) and, when any record names its host, ``host`` (from the
    summary frame). A
    tuple-valued statistic (trial indices) is a list. ``analyses``: column name → the
    value by library label of each analysis the run holds (``report.pages.
    library_columns``), each a last column (None for a library it did not analyse)."""
    from ngcc.evidence.model import Statistics
    from ngcc.stats import tables as _frames

    frame = _frames.summary_frame(records)
    for name in (f.name for f in fields(Statistics) if f.name in frame.columns):
        values = [getattr(r.statistics, name) for r in records]
        if any(isinstance(value, tuple) for value in values):  # trial indices: lists
            frame[name] = [list(v) if isinstance(v, tuple) else v for v in values]
    after = [*frame.columns].index(_frames.SUMMARY_COLUMNS[-1]) + 1
    frame.insert(after, "flags", [[flag.to_json() for flag in r.statistics.flags]
                                  for r in records])
    for column, verdicts in (analyses or {}).items():
        frame[column] = [verdicts.get(r.label) for r in records]
    return frame


def _plain(value: Any) -> Any:
    """A cell as JSON has it: numpy scalars as Python numbers, NaN as null."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def statistics_rows(records: Sequence[Record],
                    analyses: Mapping[str, Mapping[str, str]] | None = None
                    ) -> list[dict[str, Any]]:
    """:func:`statistics_frame` as a list of JSON objects, one per record."""
    frame = statistics_frame(records, analyses)
    return [{column: _plain(value) for column, value in zip(frame.columns, row, strict=True)}
            for row in frame.itertuples(index=False, name=None)]


def statistics_json(records: Sequence[Record],
                    analyses: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """The statistics table as a JSON list of objects (``pandas.read_json`` reads it)."""
    return json.dumps(statistics_rows(records, analyses), indent=1, ensure_ascii=False,
                      allow_nan=False) + "\n"


def statistics_csv(records: Sequence[Record],
                   analyses: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """The statistics table as CSV (``pandas.read_csv`` reads it); list-valued cells hold
    their JSON text, missing values are empty."""
    frame = statistics_frame(records, analyses)
    for name in frame.columns:
        if any(isinstance(value, list) for value in frame[name]):
            frame[name] = [json.dumps(value, ensure_ascii=False) if isinstance(value, list)
                           else value for value in frame[name]]
        if any(isinstance(value, str) for value in frame[name]):
            frame[name] = [_csv_text(value) if isinstance(value, str) else value
                           for value in frame[name]]
    text: str = frame.to_csv(index=False, lineterminator="\n")
    return text


def _csv_text(text: str) -> str:
    """A text cell as a spreadsheet reads it back as text: controls escaped, and a
    leading ``=``, ``+``, ``-`` or ``@`` (a formula, to a spreadsheet) behind a ``'``.
    A sidecar's implementation string is the submitter's text."""
    text = _untrusted.plain(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


# ------------------------------------------------------------------ HTML

def html_name(page: str) -> str:
    """The HTML file of a Markdown page: ``hash-22.md`` → ``hash-22.html``."""
    return page[:-len(".md")] + ".html" if page.endswith(".md") else page + ".html"


_CODE = _untrusted.CODE_SPAN
_HELD = re.compile("\ue000([0-9]+)\ue001")
_ESCAPED = re.compile(r"\\([\\`*\[\]<>|!~#])")  # _untrusted.markdown_text's escapes
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s\ue000\ue001]+)\)")
_LINK = re.compile(r"\[(.+?)\]\(([^)\s\ue000\ue001]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
#: An anchor a page writes (:func:`anchor`); its name as ``base.untrusted.local_href``
#: allows in a fragment. Library text cannot write one: its ``<`` is escaped or in code.
_ANCHOR = re.compile(r'<a id="([A-Za-z0-9_.+@-]+)"></a>')
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _anchor(name: str) -> str:
    """The id of a plot's figure: its file name (names hold only letters, digits and
    ``- _ . + @``, each allowed in an id and a URL fragment)."""
    return "fig-" + html.escape(name, quote=True)


def anchor(name: str) -> str:
    """An anchor of a page, for a ``[text](#name)`` link to where it stands: ``<a
    id="name"></a>``, kept as it is in the HTML. ``name``: letters, digits and ``- _ . +
    @``.

    Raises:
        ValueError: another character in ``name`` (a link to it would not be live).
    """
    made = '<a id="%s"></a>' % name
    if not _ANCHOR.fullmatch(made):
        raise ValueError("an anchor's name holds only letters, digits and - _ . + @: %r"
                         % name)
    return made


def heading_id(text: str) -> str:
    """The id of a heading, as GitHub makes it from its text (code spans and links as
    the text they show): lower case, every character but letters, digits, ``-``, ``_``
    and spaces dropped, spaces made ``-``: ``## Constant time (beyond the guide's
    structure)`` → ``constant-time-beyond-the-guides-structure``."""
    shown = _LINK.sub(r"\1", text.replace("`", ""))
    return re.sub(r"[^\w\- ]", "", shown.strip().lower()).replace(" ", "-")


def markdown_anchors(markdown: str) -> list[str]:
    """The anchors of a Markdown page: its headings' ids (a repeated one numbered ``-1``,
    ``-2``, as GitHub numbers them) and the anchors it writes."""
    ids: list[str] = []
    for line in markdown.split("\n"):
        if line.startswith(("# ", "## ")):
            ids.append(_unique(heading_id(line.split(" ", 1)[1]), ids))
        ids += _ANCHOR.findall(line)
    return ids


def _unique(name: str, taken: Sequence[str]) -> str:
    number, unique = 0, name
    while unique in taken:
        number += 1
        unique = "%s-%d" % (name, number)
    return unique


class _Inline:
    """Inline Markdown of one block to HTML; collects the figures its links point at.

    Code spans (fenced by any number of backticks, as ``base.untrusted.markdown`` writes
    library text) are taken out first and put back escaped, so nothing inside one is
    a link, an image or emphasis; a link is live only when its target is a file of
    the run directory (``base.untrusted.local_href``), else its text alone is shown."""

    def __init__(self, images: Mapping[str, bytes]):
        self.images = images
        self.figures: list[tuple[str, str]] = []  # (file, caption HTML)
        self._held: list[tuple[str, str]] = []  # (HTML, the same as attribute text)

    def __call__(self, text: str) -> str:
        self._held = []

        def hold(match: re.Match[str]) -> str:
            content = match.group(2)
            if content.startswith(" ") and content.endswith(" ") and content.strip():
                content = content[1:-1]
            shown = html.escape(content, quote=True)
            return self._hold(f"<code>{shown}</code>", shown)

        def escaped(match: re.Match[str]) -> str:
            shown = html.escape(match.group(1), quote=True)
            return self._hold(shown, shown)

        text = text.replace("\ue000", "").replace("\ue001", "").replace("\\|", "|")
        text = _CODE.sub(hold, text)
        text = _ESCAPED.sub(escaped, text)  # what is left of "<" is the page's own
        text = _ANCHOR.sub(lambda match: self._hold(match.group(0), ""), text)
        out = html.escape(text, quote=True)
        out = _IMAGE.sub(self._image, out)
        out = _LINK.sub(self._link, out)
        out = _BOLD.sub(r"<strong>\1</strong>", out)
        return self._restore(out)

    def _hold(self, shown: str, attribute: str) -> str:
        """Keep ``shown`` (and its form inside an attribute) out of the inline rules
        until :meth:`_restore`; the marker is private-use text no page holds (the
        input's are removed first)."""
        self._held.append((shown, attribute))
        return "\ue000%d\ue001" % (len(self._held) - 1)

    def _restore(self, out: str, attribute: bool = False) -> str:
        """``out`` with every held piece back: as HTML, or as an attribute's text."""
        side = 1 if attribute else 0
        return _HELD.sub(lambda match: self._held[int(match.group(1))][side], out)

    def _image(self, match: re.Match[str]) -> str:
        alt = self._restore(match.group(1), attribute=True)
        src = html.unescape(match.group(2))
        png = self.images.get(src)
        if png is None:  # not drawn: say what would be there, link nothing
            return f"<em>({alt}: not drawn)</em>"
        return f'<img alt="{alt}" src="{_data_uri(png)}">'

    def _link(self, match: re.Match[str]) -> str:
        text, href = match.group(1), html.unescape(match.group(2))
        if not _untrusted.local_href(href):
            return text  # not a file of the run directory: never a live link
        page, mark, fragment = href.partition("#")
        if page.endswith(".md"):
            return f'<a href="{html.escape(html_name(page) + mark + fragment)}">{text}</a>'
        if href in self.images:
            if href not in [name for name, _ in self.figures]:
                # the caption is shown after this block: its held pieces go back now
                self.figures.append((href, self._restore(text)))
            return f'<a href="#{_anchor(href)}">{text}</a>'
        if href.endswith(".png"):
            return text  # a plot that was not drawn
        return f'<a href="{html.escape(href)}">{text}</a>'

    def take_figures(self) -> list[str]:
        figures = [f'<figure id="{_anchor(name)}"><img alt="{html.escape(name)}" '
                   f'src="{_data_uri(self.images[name])}"><figcaption>{caption}'
                   "</figcaption></figure>" for name, caption in self.figures]
        self.figures = []
        return figures


def _table(rows: Sequence[str], inline: _Inline) -> list[str]:
    def cells(row: str) -> list[str]:
        return [cell.strip() for cell in _CELL_SPLIT.split(row.strip().strip("|"))]

    header, body = cells(rows[0]), [cells(row) for row in rows[2:]]
    lines = ["<table>", "<thead><tr>" + "".join(f"<th>{inline(c)}</th>" for c in header)
             + "</tr></thead>", "<tbody>"]
    lines += ["<tr>" + "".join(f'<td class="num">{inline(_figure_breaks(c))}</td>'
                               if _NUMBER.fullmatch(c)
                               else f"<td>{inline(c)}</td>" for c in row) + "</tr>"
              for row in body]
    return lines + ["</tbody>", "</table>"]


def _figure_breaks(cell: str) -> str:
    """A figure cell that breaks only before its interval or loop figure (``1930 k`` /
    ``(1789 k – 2054 k)``): a wide table's columns take two lines, not the window's width
    (and a table wider still scrolls inside the page: ``STYLE``)."""
    return (cell.replace(" ", "\u00a0").replace("\u00a0(", " (")
            .replace(",\u00a0loop", ", loop"))


#: A cell that is a figure (``1455``, ``17.5 k``, ``± 16.45 %``, ``629 ns``, ``240 (2 × 120)``,
#: ``1215 – 1694``), or one with its interval or spread (``1930 (1789 – 2054)``,
#: ``1968 – 2318 (± 8.40 %)``, ``1914 (1899 – 1929), loop 2023``): aligned right, so
#: that the digits line up.
_FIGURE = r"[±+−-]?\s?\d[\d.,]*(?:\s?[kMG])?(?:\s?(?:%|ns|µs|ms|s|B|KiB|MiB|GiB))?"
_RANGE = rf"{_FIGURE}(?: – {_FIGURE})?"
_NUMBER = re.compile(rf"{_RANGE}(?: \(\d+ × \d+\)| \({_RANGE}(?: of {_FIGURE})?\))?"
                     rf"(?:, loop {_FIGURE})?")


def _blocks(markdown: str) -> list[tuple[str, list[str]]]:
    """The page cut into blocks: (kind, lines) with kind ``h1``, ``h2``, ``table``,
    ``list`` or ``p``."""
    blocks: list[tuple[str, list[str]]] = []
    for line in markdown.split("\n"):
        kind = ("h2" if line.startswith("## ") else "h1" if line.startswith("# ")
                else "table" if line.startswith("|") else "list" if line.startswith("- ")
                else "" if not line.strip() else "p")
        if not kind:
            blocks.append(("", []))
        elif blocks and blocks[-1][0] == kind and kind in ("table", "list", "p"):
            blocks[-1][1].append(line)
        else:
            blocks.append((kind, [line]))
    return [(kind, lines) for kind, lines in blocks if kind]


def html_page(markdown: str, images: Mapping[str, bytes]) -> str:
    """One Markdown page of ``report.pages`` as a self-contained HTML document.

    Args:
        markdown: the page.
        images: the PNG bytes of the plots drawn beside it, by file name
            (``hash-22-cpb.png``); an image or plot link without bytes here is shown
            as text and links nothing.
    """
    inline = _Inline(images)
    body: list[str] = []
    title = "ngcc report"
    ids: list[str] = []
    for kind, lines in _blocks(markdown):
        if kind in ("h1", "h2"):
            text = lines[0].split(" ", 1)[1]
            title = text if kind == "h1" else title
            ids.append(_unique(heading_id(text), ids))
            body.append(f'<{kind} id="{html.escape(ids[-1], quote=True)}">{inline(text)}'
                        f"</{kind}>")
        elif kind == "table":
            body += _table(lines, inline)
        elif kind == "list":
            body += ["<ul>"] + [f"<li>{inline(line[2:])}</li>" for line in lines] + ["</ul>"]
        else:
            text = " ".join(lines)
            css = ' class="warning"' if text.startswith("**⚠") else ""
            body.append(f"<p{css}>{inline(text)}</p>")
        body += inline.take_figures()
    return "\n".join(['<!DOCTYPE html>', '<html lang="en">', "<head>",
                      '<meta charset="utf-8">',
                      '<meta name="viewport" content="width=device-width, initial-scale=1">',
                      f"<title>{html.escape(title)}</title>", f"<style>{STYLE}</style>",
                      "</head>", "<body>", *body, "</body>", "</html>", ""])


def html_pages(pages: Mapping[str, str], images: Mapping[str, bytes]) -> dict[str, str]:
    """Every Markdown page as HTML: ``hash-22.html`` → the document."""
    return {html_name(name): html_page(text, images) for name, text in pages.items()}
