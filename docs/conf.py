"""Sphinx configuration of the ngcc documentation.

Build: ``pip install ".[docs]"``, then ``python3 -m sphinx -W --keep-going -b html docs
docs/_build/html`` from the repository root (``.ci/run`` does).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util import logging

import ngcc

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _ngcc_paths, _cli_reference

project = "ngcc"
author = "ngcc developers"
copyright = "ngcc developers"
release = version = ngcc.__version__

extensions = [
    "myst_nb",  # MyST Markdown pages and the notebooks (it loads myst_parser)
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
]

exclude_patterns = [
    "_build",
    "**/.ipynb_checkpoints",
]

# notebooks/ (linked here as docs/notebooks) is rendered as stored, without outputs;
# never executed here: tests/test_notebooks.py runs it.
nb_execution_mode = "off"

myst_heading_anchors = 3  # `page.md#a-heading` links, as on GitHub
default_role = "literal"  # `x` in a docstring is code, as on a terminal
smartquotes_action = "qe"  # quotes and ellipses, never dashes: `--option` stays two hyphens

html_theme = "furo"
html_title = "ngcc %s" % release

autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = False

# --------------------------------------------------------------------------- docstrings

#: Docstrings of ngcc/ that reStructuredText misreads, and the fix autodoc renders
#: instead (the fix belongs in ngcc/; this page only borrows it): (where, pattern,
#: replacement). A fix that no longer applies (the docstring was fixed) fails the
#: build with a warning: remove it here.
DOCSTRING_FIXES: list[tuple[str, str, str]] = [
    # `|t|` is a substitution reference in reStructuredText: an inline literal instead.
    ("ngcc.leak, ngcc.LeakResult", r"(?<!`)\|t\|(?!`)", "``|t|``"),
    # kat.check: its return value under Args (no `Returns:` heading).
    ("ngcc.kat.check",
     r"\n(    One :class:`KatResult` per instance, in the order given\.)",
     "\n\nReturns:\n\\1"),
    # evaluate: a sentence inside `Raises:` that names no exception.
    ("ngcc.evaluate",
     r"\n    What (:meth:`ngcc\.Campaign\.run` raises) but the KAT gate's refusal of every\n"
     r"    library \(then each is a row, and the report is written\)\.",
     "\n\nIt also raises what \\1, but the KAT gate's refusal of every library (then\n"
     "each is a row, and the report is written)."),
]
_applied: set[str] = set()


def _fix_docstring(app: Any, what: str, name: str, obj: Any, options: Any,
                   lines: list[str]) -> None:
    text = "\n".join(lines)
    for where, pattern, replacement in DOCSTRING_FIXES:
        text, count = re.subn(pattern, replacement, text)
        if count:
            _applied.add(where)
    lines[:] = text.split("\n")


def _report_stale_fixes(app: Any, exception: Exception | None) -> None:
    if exception is None and app.builder.name == "html":
        for where, _, _ in DOCSTRING_FIXES:
            if where not in _applied:
                logging.getLogger(__name__).warning(
                    "docs/conf.py: the docstring fix for %s no longer applies; remove it", where)


def _public_bases(app: Any, name: str, obj: Any, options: Any, bases: list[Any]) -> None:
    """A base class ngcc exports is named as ngcc exports it (``ngcc.NgccError``)."""
    for i, base in enumerate(bases):
        if getattr(ngcc, getattr(base, "__name__", ""), None) is base:
            bases[i] = ":py:class:`ngcc.%s`" % base.__name__


def _public_target(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """A type named by its defining module (``ngcc._<module>.Run``) is shown as and links to
    the name ngcc exports (``ngcc.Run``), where it exports one."""
    target = node.get("reftarget", "")
    short = target.rpartition(".")[2]
    if node.get("refdomain") != "py" or not target.startswith("ngcc._") \
            or getattr(ngcc, short, None) is None:
        return None
    public = "ngcc." + short
    shown = contnode.deepcopy()
    for text in list(shown.findall(nodes.Text)):
        text.parent.replace(text, nodes.Text(str(text).replace(target, public)))
    if isinstance(shown, nodes.Text):
        shown = nodes.Text(str(shown).replace(target, public))
    return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder,
                                             node["reftype"], public, node, shown)


def setup(app: Any) -> None:
    app.connect("autodoc-process-docstring", _fix_docstring, priority=400)  # before napoleon
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("missing-reference", _public_target)
    app.connect("build-finished", _report_stale_fixes)
