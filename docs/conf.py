"""Sphinx configuration of the ngcc documentation.

Build: ``pip install ".[docs]"``, then ``python3 -m sphinx -W --keep-going -b html docs
docs/_build/html`` from the repository root (``.ci/run`` does).
"""

from __future__ import annotations

import importlib.machinery
import sys
from pathlib import Path
from typing import Any

from docutils import nodes

DOCS = Path(__file__).resolve().parent
SOURCE_TREE = DOCS.parent


def _document_the_built_ngcc() -> None:
    """Sphinx run as ``python3 -m sphinx`` from the repository root puts the source tree
    first on ``sys.path``; after ``pip install ".[docs]"`` (not editable) that tree has
    no built C core and cannot be imported, while the installed copy, built from it, can:
    then the tree leaves ``sys.path``. An editable install or an in-place build keeps it;
    with no installed copy, the import says what to do (ngcc/__init__.py)."""
    if any((SOURCE_TREE / "ngcc").glob("_core*.so")):
        return
    others = [entry for entry in sys.path if Path(entry or ".").resolve() != SOURCE_TREE]
    if importlib.machinery.PathFinder.find_spec("ngcc", others) is not None:
        sys.path[:] = others


_document_the_built_ngcc()
import ngcc  # noqa: E402  (after the path is settled)

sys.path.insert(0, str(DOCS))  # _ngcc_paths, _cli_reference

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

# --------------------------------------------------------------------------- names

def _public_bases(app: Any, name: str, obj: Any, options: Any, bases: list[Any]) -> None:
    """A base class ngcc exports is named as ngcc exports it (``ngcc.NgccError``)."""
    for i, base in enumerate(bases):
        if getattr(ngcc, getattr(base, "__name__", ""), None) is base:
            bases[i] = ":py:class:`ngcc.%s`" % base.__name__


def _public_target(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """A type named by its defining module (inside a stage folder) is shown as and links to
    the name ngcc exports (``ngcc.Run``), where it exports one."""
    target = node.get("reftarget", "")
    short = target.rpartition(".")[2]
    if node.get("refdomain") != "py" or not target.startswith("ngcc.") \
            or target == "ngcc." + short or getattr(ngcc, short, None) is None:
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
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("missing-reference", _public_target)
