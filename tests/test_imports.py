"""The package's import structure: no module imports the package ``ngcc`` itself (only
its submodules), and the version is written once (``ngcc/_version.py``)."""

from __future__ import annotations

import ast
import functools
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


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """module → the ngcc modules it imports at run time (function-level imports
    included, ``if TYPE_CHECKING:`` imports left out), read from the source with ast."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        type_only = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If)
                     and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                     for inner in ast.walk(node)}
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in type_only:
                continue
            if isinstance(node, ast.Import):
                targets |= {a.name.split(".")[1] for a in node.names
                            if a.name.startswith("ngcc.")}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "ngcc":
                    targets |= {a.name for a in node.names if a.name in SUBMODULES}
                elif node.module.startswith("ngcc."):
                    targets.add(node.module.split(".")[1])
        graph[path.stem] = targets - {path.stem}
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle a depth-first walk of ``graph`` meets, as module lists."""
    cycles: list[list[str]] = []
    state: dict[str, str] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                cycles.append(trail[trail.index(target):] + [target])
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_the_cycle_finder_finds_cycles():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    assert "_model" in graph["_records"]
    assert "_frames" in graph["_run"]          # a function-level import is an edge too
    assert "_run" not in graph["_report"]      # an import under TYPE_CHECKING is not
    cycles = find_cycles(graph)
    assert cycles == [], " ; ".join(" → ".join(cycle) for cycle in cycles)


def test_nothing_imports_the_package_init():
    """``ngcc/__init__.py`` is the public surface: it imports every layer, so no module
    below it may import it back (that was the circle through the version)."""
    assert not [module for module, targets in import_graph().items() if "__init__" in targets]
