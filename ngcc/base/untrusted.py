"""Text that came from a library (or from anything it can write) shown as data.

A submitted library chooses the bytes of its ERROR frames, what it prints on stderr,
what its sources make the compiler say, and (through the run directory) anything a
tampered file holds. Wherever ngcc shows such text, one function per medium renders
it so that it cannot act:

* :func:`plain` — the terminal and the evidence files: every C0 and C1 control
  character, DEL, and the Unicode characters that reorder or break lines (bidi
  overrides and isolates, U+2028/U+2029) become visible escapes (``\\x1b``), so no
  escape sequence reaches a terminal and no text forges a line of its own; so do lone
  surrogates (``\\udcff``: a file name's bytes that are not UTF-8, as ``os`` decodes
  them), so such a name can be printed and written as UTF-8.
* :func:`markdown` — a Markdown page: :func:`plain`, then one code span fenced by
  more backticks than the text holds, so nothing in it is a link, an image, HTML or
  emphasis in any CommonMark renderer.
* :func:`markdown_text` — the same as prose (an implementation string in a sentence):
  every Markdown metacharacter backslash-escaped.
* :func:`html` — an HTML page: :func:`plain`, then escaped (``<`` ``>`` ``&`` and
  both quotes).

:func:`local_href` is the other half of the HTML rule: the only links a page may
hold are relative paths to files of the run directory; ``report.export`` emits no other
``href`` and ``ngcc validate`` refuses a page that has one.

Files anyone could have written (a run directory's, a library's sidecar) are read
with :func:`read_regular` (never blocks on a FIFO or a device) and JSON is parsed
with :func:`loads_json` (nesting bounded before the parser sees it).
"""

from __future__ import annotations

import errno
import html as _html
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, BinaryIO

#: The deepest nesting of arrays and objects :func:`loads_json` accepts (ngcc's
#: evidence nests at most 6 deep).
MAX_JSON_DEPTH = 64
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                       "\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_BACKTICKS = re.compile("`+")
#: A Markdown code span: a run of backticks, the text, the same run (CommonMark).
CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)")  # not after \ (escaped)
#: What a link of a report may point at: a relative path of the run directory's
#: names (letters, digits, ``- _ . + @`` and ``/``), optionally with a fragment.
_LOCAL = re.compile(r"[A-Za-z0-9_.+@-]+(?:/[A-Za-z0-9_.+@-]+)*(?:#[A-Za-z0-9_.+@-]+)?")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return "\\x%02x" % code if code < 0x100 else "\\u%04x" % code


def plain(text: str) -> str:
    """``text`` with every control and line- or order-changing character (and every lone
    surrogate) as a visible escape (``\\x1b``, ``\\x0a``, ``\\u202e``, ``\\udcff``): safe
    on a terminal, one line in a file, encodable as UTF-8."""
    return _CONTROLS.sub(_escape, text)


def markdown(text: str) -> str:
    """``text`` as one literal Markdown code span (empty text: nothing)."""
    text = plain(text)
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: What makes Markdown text act: code, emphasis, links, images, HTML, table cells.
MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]<>|!~#])")


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown prose (not a code span): :func:`plain`, then each
    character that could start code, emphasis, a link, an image, HTML or a table cell
    backslash-escaped (CommonMark). Text without them is unchanged."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", plain(text))


def html(text: str) -> str:
    """``text`` as inert HTML text: :func:`plain`, then escaped for an element or an
    attribute value."""
    return _html.escape(plain(text), quote=True)


def local_href(target: str) -> bool:
    """Whether ``target`` may be a link of a report page (which lies in ``report/``): a
    relative path made of names (no scheme such as ``javascript:`` or ``data:``, no
    ``//host``, no absolute path, ``..`` only first: up from ``report/`` into the run
    directory), optionally with a ``#fragment``; or a bare ``#fragment``."""
    if target.startswith("#"):
        return _LOCAL.fullmatch("x" + target) is not None
    return (_LOCAL.fullmatch(target) is not None
            and ".." not in target.split("#", 1)[0].split("/")[1:])


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """A regular file opened for reading without blocking: a FIFO, a device, a socket
    or a directory is an OSError (``not a regular file``), never a wait."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    handle = open(fd, "rb", closefd=True)  # noqa: SIM115 (the caller's to close)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a directory)",
                      str(path))
    return handle


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file (:func:`open_regular`)."""
    with open_regular(path) as handle:
        return handle.read()


def read_text(path: str | os.PathLike[str]) -> str:
    """:func:`read_regular` as UTF-8 text (undecodable bytes replaced)."""
    return read_regular(path).decode("utf-8", errors="replace")


def json_depth(data: bytes) -> int:
    """How deep the arrays and objects of JSON text nest (strings skipped)."""
    import numpy as np  # here, not at import: the command line's start needs no numpy

    codes = np.frombuffer(_JSON_STRING.sub(b'""', data), dtype=np.uint8)
    steps = (np.isin(codes, (ord("["), ord("{"))).astype(np.int64)
             - np.isin(codes, (ord("]"), ord("}"))))
    return int(np.cumsum(steps).max(initial=0))


def loads_json(data: bytes | str) -> Any:
    """``json.loads`` with the nesting bounded by :data:`MAX_JSON_DEPTH`: deeper text is
    a ValueError, never a RecursionError."""
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    depth = json_depth(raw)
    if depth > MAX_JSON_DEPTH:
        raise ValueError("arrays or objects nested %d deep (at most %d)"
                         % (depth, MAX_JSON_DEPTH))
    return json.loads(data)


def load_json_file(path: str | os.PathLike[str]) -> Any:
    """A JSON file read by :func:`read_regular` and parsed by :func:`loads_json`."""
    return loads_json(read_regular(Path(path)))
