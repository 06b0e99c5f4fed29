"""The documentation site (docs/): every page in a toctree, the CLI reference generated
from the parser the ``ngcc`` command runs, the API page covering ``ngcc.__all__`` with
the real exception tree, and no page naming a private module.

The tests that build the site need the ``docs`` extra, which the ``test`` extra
installs (``pip install -e ".[test]"``, the README's test command).
"""

from __future__ import annotations

import ast
import fnmatch
import html
import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

import ngcc

DOCS = REPO / "docs"
TOCTREE = re.compile(r"^```\{toctree\}\n(.*?)^```$", re.S | re.M)


def _exclude_patterns() -> list[str]:
    """``exclude_patterns`` of docs/conf.py, read without running it (it imports Sphinx)."""
    for node in ast.parse((DOCS / "conf.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "exclude_patterns" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("docs/conf.py sets no exclude_patterns")


def _excluded(name: str, patterns: list[str]) -> bool:
    parts = name.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes
               for pattern in patterns)


def _sources() -> set[str]:
    """The documents Sphinx reads: every .md and .ipynb under docs/ (docs/notebooks is a
    link to notebooks/) that no exclude pattern matches, without their suffix."""
    patterns = _exclude_patterns()
    found = set()
    for folder, _, files in os.walk(DOCS, followlinks=True):
        for file in files:
            name = str((Path(folder) / file).relative_to(DOCS))
            if name.endswith((".md", ".ipynb")) and not _excluded(name, patterns):
                found.add(name.rsplit(".", 1)[0])
    return found


def _toctree_entries() -> dict[str, set[str]]:
    """Per document, the documents its toctrees list (resolved against its folder)."""
    entries: dict[str, set[str]] = {}
    for doc in _sources():
        path = next(DOCS.glob(doc + ".*"))
        if path.suffix != ".md":
            continue
        for body in TOCTREE.findall(path.read_text()):
            for line in body.splitlines():
                if line.strip() and not line.startswith(":"):
                    target = os.path.normpath(os.path.join(os.path.dirname(doc), line.strip()))
                    entries.setdefault(doc, set()).add(target)
    return entries


def test_every_page_is_in_a_toctree():
    sources = _sources()
    listed = set().union(*_toctree_entries().values())
    assert {"index", "api", "cli", "architecture", "guide/campaigns"} <= sources
    assert listed - sources == set(), "toctree entries that are no page"
    assert sources - listed == {"index"}, "pages in no toctree"


def test_the_notebooks_are_pages_and_are_never_executed():
    assert (DOCS / "notebooks").resolve() == REPO / "notebooks"
    notebooks = {"notebooks/" + p.stem for p in (REPO / "notebooks").glob("*.ipynb")}
    assert notebooks and notebooks <= _sources()
    assert re.search(r'^nb_execution_mode = "off"$', (DOCS / "conf.py").read_text(), re.M)


# ----------------------------------------------------------------------------- CLI


def _help(parser) -> str:
    return parser.format_help()


def _words(text: str) -> str:
    """``text`` unwrapped, with the page parser's markup undone (``|`` escaped, code
    spans as inline literals)."""
    return " ".join(text.replace("\\|", "|").replace("``", "`").split())


def test_the_cli_page_is_generated_from_the_parser(monkeypatch):
    """docs/cli.md holds no option text of its own: one sphinx-argparse directive over
    the parser of the ``ngcc`` command itself (whose help is what the command prints)."""
    page = (DOCS / "cli.md").read_text()
    [directive] = re.findall(r"^```\{argparse\}\n(.*?)^```$", page, re.S | re.M)
    assert set(directive.split("\n")) >= {":module: _cli_reference", ":func: build_parser",
                                          ":prog: ngcc"}
    assert not re.search(r"^\s*(usage:|-{1,2}[a-z])", page, re.M), "hand-written options"

    monkeypatch.syspath_prepend(str(DOCS))
    monkeypatch.setenv("COLUMNS", "100")
    paths = importlib.import_module("_ngcc_paths")
    reference = importlib.import_module("_cli_reference")
    printed = subprocess.run([sys.executable, "-m", "ngcc", "--help"], cwd=REPO,
                             env=dict(os.environ, COLUMNS="100"), capture_output=True,
                             text=True, check=True).stdout
    assert _help(paths.build_parser()) == printed
    # the page's parser is that one, with its markup for reStructuredText and nothing else
    assert _words(_help(reference.build_parser())) == _words(printed)
    for name, sub in _subcommands(paths.build_parser()).items():
        assert _words(_help(_subcommands(reference.build_parser())[name])) \
            == _words(_help(sub)), name


def _subcommands(parser) -> dict:
    import argparse

    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


# ----------------------------------------------------------------------------- API


def test_the_api_page_documents_every_public_name_by_its_kind():
    page = (DOCS / "api.md").read_text()
    documented = {kind: set(re.findall(r"^\.\. auto%s:: ngcc\.(\w+)$" % kind, page, re.M))
                  for kind in ("function", "class", "exception", "module")}
    public = {name: getattr(ngcc, name) for name in ngcc.__all__ if name != "__version__"}
    assert documented == {
        "function": {n for n, o in public.items() if inspect.isfunction(o)},
        "class": {n for n, o in public.items()
                  if inspect.isclass(o) and not issubclass(o, BaseException)},
        "exception": {n for n, o in public.items()
                      if inspect.isclass(o) and issubclass(o, BaseException)},
        "module": {n for n, o in public.items() if inspect.ismodule(o)},
    }


def test_the_exception_tree_is_the_class_tree():
    """Each exception of the API page's tree sits under its ngcc base class and names its
    other bases (built-in exceptions) in brackets."""
    page = (DOCS / "api.md").read_text()
    rows = re.findall(r"^( *)- \{py:exc\}`ngcc\.(\w+)`(?: \((.*)\))?$", page, re.M)
    exceptions = {n for n in ngcc.__all__
                  if inspect.isclass(getattr(ngcc, n)) and issubclass(getattr(ngcc, n),
                                                                      BaseException)}
    assert sorted(name for _, name, _ in rows) == sorted(exceptions)
    parents: list[str] = []
    for indent, name, extra in rows:
        depth = len(indent) // 2
        parents[depth:] = [name]
        cls = getattr(ngcc, name)
        ours = [b.__name__ for b in cls.__bases__ if getattr(ngcc, b.__name__, None) is b]
        builtin = [b.__name__ for b in cls.__bases__ if b.__name__ not in ours]
        assert ours == parents[depth - 1:depth], name
        assert builtin == re.findall(r"`(\w+)`", extra or "") or (
            not ours and builtin == ["Exception"] and not extra), name


# ------------------------------------------------------------------ private modules


#: The package's internal folders (docs/architecture.md, "Stages").
STAGE_FOLDERS = ("base", "library", "evidence", "stats", "driver", "measure", "campaign",
                 "report", "app", "cli")


def test_only_the_paths_file_names_a_private_module():
    """The modules of ngcc/ move; the pages name public names, and the one private
    import the docs need is in docs/_ngcc_paths.py. (architecture.md says what each
    module owns, evidence-format.md predates the site, the specifications in docs/spec
    map their sections to the code: all are left as they are.)"""
    private = re.compile(r"\bngcc[./](_(?!_)\w+|(%s)\b)" % "|".join(STAGE_FOLDERS))
    files = [REPO / "README.md", *DOCS.rglob("*.md"), *DOCS.glob("*.py")]
    leave = {DOCS / "architecture.md", DOCS / "evidence-format.md", DOCS / "_ngcc_paths.py"}
    named = ["%s:%d: %s" % (path.relative_to(REPO), number, line.strip())
             for path in files if path not in leave and "_build" not in path.parts
             and "spec" not in path.relative_to(DOCS if DOCS in path.parents else REPO).parts
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if private.search(line)]
    assert named == []
    assert private.search((DOCS / "_ngcc_paths.py").read_text())


# ------------------------------------------------------------------------ the build


def _conf_in_a_fresh_clone(tmp_path: Path, installed: bool) -> subprocess.CompletedProcess[str]:
    """docs/conf.py run from the root of a clone whose ngcc has no built C core (as
    ``python3 -m sphinx`` runs it there), with or without an installed, built ngcc on
    the path; it prints which ngcc it imported."""
    pytest.importorskip("docutils")  # the docs extra, as the build tests below
    tree = tmp_path / "clone"
    shutil.copytree(REPO / "ngcc", tree / "ngcc",
                    ignore=shutil.ignore_patterns("_core*.so", "_lib", "__pycache__"))
    (tree / "docs").mkdir()
    shutil.copy(DOCS / "conf.py", tree / "docs" / "conf.py")
    installed_at = tmp_path / "site-packages"
    installed_at.mkdir()
    if installed:
        (installed_at / "ngcc").symlink_to(REPO / "ngcc")
    code = ("import runpy, sys; sys.path.append(%r); runpy.run_path('docs/conf.py'); "
            "print(sys.modules['ngcc'].__file__)" % str(installed_at))
    return subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True,
                          text=True, timeout=300, check=False)


def test_the_docs_of_a_fresh_clone_document_the_installed_ngcc(tmp_path):
    done = _conf_in_a_fresh_clone(tmp_path, installed=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "site-packages" / "ngcc" / "__init__.py")


def test_the_docs_of_a_clone_with_no_ngcc_built_say_what_to_do(tmp_path):
    done = _conf_in_a_fresh_clone(tmp_path, installed=False)
    assert done.returncode == 1
    assert "which has no built C core" in done.stderr.splitlines()[-1], done.stderr



@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as .ci/run builds it (warnings are errors), into a scratch folder;
    or the one .ci/run's documentation step built from these sources (``NGCC_BUILT_SITE``),
    which it does not build twice."""
    built_site = os.environ.get("NGCC_BUILT_SITE")
    if built_site and (Path(built_site) / "cli.html").is_file():
        return Path(built_site)
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E",
                            "-d", str(out / ".doctrees"), "-b", "html", str(DOCS), str(out)],
                           cwd=REPO, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    return out


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))


def test_the_built_cli_page_holds_every_subcommand_and_option(site):
    from importlib import import_module

    sys.path.insert(0, str(DOCS))
    try:
        parser = import_module("_ngcc_paths").build_parser()
    finally:
        sys.path.remove(str(DOCS))
    text = _text(site / "cli.html")
    for name, sub in _subcommands(parser).items():
        assert "ngcc %s" % name in text, name
        for action in sub._actions:
            for option in action.option_strings:
                assert option in text, (name, option)


def test_the_built_api_page_has_every_public_name(site):
    page = (site / "api.html").read_text()
    for name in ngcc.__all__:
        if name not in ("__version__", "kat"):
            assert 'id="ngcc.%s"' % name in page, name
    assert 'id="module-ngcc.kat"' in page and 'id="ngcc.kat.check"' in page


def test_the_built_notebook_pages_show_their_code(site):
    for notebook in (REPO / "notebooks").glob("*.ipynb"):
        assert "import ngcc" in _text(site / "notebooks" / (notebook.stem + ".html")), notebook
