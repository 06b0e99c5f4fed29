"""The package's import structure: no module imports the package ``ngcc`` itself (only
its submodules), and the version is written once (``ngcc/_version.py``)."""

from __future__ import annotations

import ast
import pkgutil
import re

from conftest import REPO

import ngcc
from ngcc import _version

PACKAGE = REPO / "ngcc"
SUBMODULES = {module.name for module in pkgutil.iter_modules([str(PACKAGE)])}  # _core too


def _imports_of_the_package(path):
    """(line, text) of every import in ``path`` that reaches ``ngcc/__init__.py``'s names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, "import %s" % a.name) for a in node.names if a.name == "ngcc"]
        elif isinstance(node, ast.ImportFrom) and node.module == "ngcc" and node.level == 0:
            found += [(node.lineno, "from ngcc import %s" % a.name) for a in node.names
                      if a.name not in SUBMODULES]
    return found


def test_no_module_imports_the_package_itself():
    offenders = {path.name: found for path in sorted(PACKAGE.glob("*.py"))
                 if path.name != "__init__.py" and (found := _imports_of_the_package(path))}
    assert offenders == {}


def test_the_version_is_written_once():
    pyproject = (REPO / "pyproject.toml").read_text()
    project = pyproject.partition("[project]\n")[2].partition("\n[")[0]
    assert not re.search(r"^version\s*=", project, re.M)
    assert re.search(r'^dynamic = \[.*"version".*\]$', project, re.M)
    assert 'version = { attr = "ngcc._version.__version__" }' in pyproject
    assert ngcc.__version__ == _version.__version__
    assert not re.search(r"\b0\.\d+\.\d+\b", (PACKAGE / "__init__.py").read_text())
