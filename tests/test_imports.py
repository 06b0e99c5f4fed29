"""The package's import structure: the layers of ``docs/architecture.md`` (no module
imports one of a later layer, at import time, in a function or for type checking), no
import circle, no module importing the package ``ngcc`` itself (only its submodules),
and the version written once (``ngcc/base/version.py``)."""

from __future__ import annotations

import ast
import functools
import pkgutil
import re

import pytest
from conftest import REPO

import ngcc
from ngcc.base import version as _version

PACKAGE = REPO / "ngcc"
SUBMODULES = {module.name for module in pkgutil.iter_modules([str(PACKAGE)])}  # _core too


def _module_name(path) -> str:
    """``ngcc/base/errors.py`` as ``base.errors``, ``ngcc/kat.py`` as ``kat``."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


#: Every module of the package, by its dotted name below ``ngcc``.
MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


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
    offenders = {module: found for module, path in MODULES.items()
                 if module != "__init__" and (found := _imports_of_the_package(path))}
    assert offenders == {}


def test_the_version_is_written_once():
    pyproject = (REPO / "pyproject.toml").read_text()
    project = pyproject.partition("[project]\n")[2].partition("\n[")[0]
    assert not re.search(r"^version\s*=", project, re.M)
    assert re.search(r'^dynamic = \[.*"version".*\]$', project, re.M)
    assert 'version = { attr = "ngcc.base.version.__version__" }' in pyproject
    assert ngcc.__version__ == _version.__version__
    assert not re.search(r"\b0\.\d+\.\d+\b", (PACKAGE / "__init__.py").read_text())


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """module → the ngcc modules it imports at run time (function-level imports
    included, ``if TYPE_CHECKING:`` imports left out), read from the source with ast."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for (module, target), kinds in imports_by_kind().items():
        if kinds - {"type"}:
            graph[module].add(target)
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
    assert "evidence.model" in graph["evidence.records"]
    assert "stats.tables" in graph["evidence.run"]          # a function-level import is an edge too
    assert "evidence.run" not in graph["report.pages"]      # an import under TYPE_CHECKING is not
    cycles = find_cycles(graph)
    assert cycles == [], " ; ".join(" → ".join(cycle) for cycle in cycles)


def test_nothing_imports_the_package_init():
    """``ngcc/__init__.py`` is the public surface: it imports every layer, so no module
    below it may import it back (that was the circle through the version)."""
    assert not [module for module, targets in import_graph().items() if "__init__" in targets]


# ------------------------------------------------------------------- the stages

#: The stages in order: a module imports only from its own stage and earlier ones.
#: A module's stage is its folder (``ngcc/<stage>/``); the package root is the surface.
STAGES = ("base", "library", "evidence", "stats", "driver", "measure", "campaign", "report",
          "app", "cli", "surface")
#: Stages that never import each other: statistics never load the code that runs
#: foreign libraries, and the campaign and the pages stand side by side.
APART = ({"stats", "driver"}, {"campaign", "report"})
#: The modules of the package root and their stage (``_core``: the compiled extension).
ROOT_STAGE = {"_core": "library", "__init__": "surface", "__main__": "surface",
              "kat": "surface"}
#: The only imports of a later stage: the run object's methods that open frames, plots,
#: comparisons, reports and Jupyter tables, imported when called (so
#: loading a run, or running a campaign, loads none of them).
DOORS = {("evidence.run", "stats.tables"), ("evidence.run", "report.plots.cycles"),
         ("evidence.run", "report.plots.distribution"),
         ("evidence.run", "report.compare"), ("evidence.run", "report.write"),
         ("evidence.run", "report.jupyter")}


def stage(module: str) -> str:
    """A module's stage: its folder, else the root's table."""
    if "." in module or (PACKAGE / module).is_dir():
        return module.split(".")[0]
    return ROOT_STAGE[module]


@functools.cache
def imports_by_kind() -> dict[tuple[str, str], set[str]]:
    """(module, ngcc module it imports) → how: ``module`` (at import time), ``function``
    (inside a function), ``type`` (under ``if TYPE_CHECKING:``)."""
    edges: dict[tuple[str, str], set[str]] = {}
    for name, path in MODULES.items():
        def visit(node: ast.AST, kind: str, module: str = name) -> None:
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                    and node.test.id == "TYPE_CHECKING":
                kind = "type"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                kind = "function" if kind == "module" else kind
            for target in _targets(node, module):
                if target != module:
                    edges.setdefault((module, target), set()).add(kind)
            for child in ast.iter_child_nodes(node):
                visit(child, kind)
        visit(ast.parse(path.read_text(), str(path)), "module")
    return edges


def _targets(node: ast.AST, module: str) -> set[str]:
    """The ngcc modules one import names: an ``import``/``from`` statement, absolute or
    relative, or a call ``importlib.import_module("ngcc...")``."""
    if isinstance(node, ast.Import):
        return {_known(a.name[len("ngcc."):]) for a in node.names if a.name.startswith("ngcc.")}
    if isinstance(node, ast.ImportFrom):
        base = _absolute(node, module)
        if base is None:
            return set()
        if base == "":  # from ngcc import x, y: submodules, or names of __init__
            return {_known(a.name) if _known(a.name) in MODULES or a.name.startswith("_")
                    else "__init__" for a in node.names}
        return {_known(base + "." + a.name) if _known(base + "." + a.name) in MODULES
                else _known(base) for a in node.names}
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module" and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            and node.args[0].value.startswith("ngcc.")):
        return {_known(node.args[0].value[len("ngcc."):])}
    return set()


def _absolute(node: ast.ImportFrom, module: str) -> str | None:
    """The ngcc-relative module an ``ImportFrom`` reads from (``""``: the package),
    or None for another package."""
    if node.level == 0:
        if node.module == "ngcc":
            return ""
        return node.module[len("ngcc."):] if node.module and node.module.startswith("ngcc.") \
            else None
    package = module.split(".")[:-1] if MODULES[module].name != "__init__.py" \
        else module.split(".")
    package = package[:len(package) - (node.level - 1)] if node.level > 1 else package
    return ".".join([*package, *([node.module] if node.module else [])])


def _known(name: str) -> str:
    """A module's dotted name, or its package's (``base`` for ``base/__init__.py``)."""
    return name if name in MODULES or name == "_core" or "." not in name \
        else _known(name.rsplit(".", 1)[0])


def test_relative_and_importlib_imports_are_edges():
    def targets(source: str, module: str = "evidence.model") -> set[str]:
        return set().union(*(_targets(n, module) for n in ast.walk(ast.parse(source))))

    assert targets("from . import records") == {"evidence.records"}
    assert targets("from .records import write_json") == {"evidence.records"}
    assert targets("from ..base import errors") == {"base.errors"}
    assert targets("from ngcc.evidence import records") == {"evidence.records"}
    assert targets("import importlib\nimportlib.import_module('ngcc.evidence.records')") \
        == {"evidence.records"}
    assert targets("from ngcc import hash") == {"__init__"}
    assert targets("from numpy import array") == set()


def test_no_module_uses_a_relative_import():
    relative = [(module, node.lineno) for module, path in MODULES.items()
                for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.ImportFrom) and node.level]
    assert relative == []


def test_every_module_has_its_stage():
    assert {module: stage(module) in STAGES for module in [*MODULES, "_core"]} \
        == {module: True for module in [*MODULES, "_core"]}
    assert set(ROOT_STAGE) - {"_core"} == {m for m in MODULES if "." not in m
                                           and not (PACKAGE / m).is_dir()}
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert folders <= set(STAGES)


def test_no_module_imports_a_later_stage():
    rank = {name: index for index, name in enumerate(STAGES)}
    later = sorted("%s (%s) imports %s (%s) %s" % (module, stage(module), target,
                                                     stage(target), "/".join(sorted(kinds)))
                   for (module, target), kinds in imports_by_kind().items()
                   if rank[stage(target)] > rank[stage(module)] and (module, target) not in DOORS)
    assert later == []


def test_stages_set_apart_never_import_each_other():
    crossing = sorted("%s (%s) imports %s (%s)" % (module, stage(module), target, stage(target))
                      for (module, target) in imports_by_kind()
                      if {stage(module), stage(target)} in APART)
    assert crossing == []


def test_the_doors_open_only_when_called():
    kinds = imports_by_kind()
    assert {door: kinds.get(door) for door in DOORS} == {door: {"function"} for door in DOORS}


def test_the_stage_table_is_the_documented_one():
    """docs/architecture.md's table lists the same modules in the same stages, in order."""
    text = (REPO / "docs" / "architecture.md").read_text()
    table = text.split("\n## Stages\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| stage ")]
    documented = {_documented(name.strip().strip("`/"), module): name.strip().strip("`/")
                  for name, modules in rows for module in re.findall(r"`([\w.]+)`", modules)}
    assert [name.strip().strip("`/") for name, _ in rows] == list(STAGES)
    assert documented == {module: stage(module) for module in [*MODULES, "_core"]
                          if not (PACKAGE / module).is_dir()}  # a stage's own __init__ aside


def _documented(stage_name: str, name: str) -> str:
    """A module as the table names it: ``errors`` in the row of ``base/`` is ``base.errors``."""
    return "%s.%s" % (stage_name, name) if "%s.%s" % (stage_name, name) in MODULES else name


def _loaded_at_import(module: str) -> set[str]:
    """The ngcc modules importing ``module`` loads (its import-time imports, followed)."""
    kinds = imports_by_kind()
    found, todo = set(), [module]
    while todo:
        current = todo.pop()
        for (source, target), how in kinds.items():
            if source == current and "module" in how and target not in found:
                found.add(target)
                todo.append(target)
    return found


def test_the_evidence_model_loads_nothing_compiled():
    assert "_core" not in _loaded_at_import("evidence.model")
    assert "_core" not in _loaded_at_import("evidence.run")


def test_nothing_below_the_pages_loads_a_renderer():
    renderers = {module for module in MODULES if stage(module) == "report"}
    below = [m for m in MODULES if STAGES.index(stage(m)) < STAGES.index("report")]
    assert {m: _loaded_at_import(m) & renderers for m in below
            if _loaded_at_import(m) & renderers} == {}


#: The longest a module may grow (docs/architecture.md: split along seams beyond it);
#: the evidence schema alone is exempt, being every file of a run directory written once.
MAX_MODULE_LINES = 500
LONG_BY_DESIGN = {"evidence.model"}


def test_no_module_is_over_the_house_limit():
    lengths = {module: len(path.read_text().splitlines()) for module, path in MODULES.items()}
    assert {m: n for m, n in lengths.items() if n > MAX_MODULE_LINES
            and m not in LONG_BY_DESIGN} == {}
    assert all(module in MODULES for module in LONG_BY_DESIGN)


# ------------------------------------------------------------------- the analyses

#: The modules that serve every analysis, and the roles of the slices' modules each one
#: imports by name (``ngcc.evidence.analyses.slice_modules``, ``Analysis.module``).
DISPATCHERS = {"cli.main": ("command",), "evidence.run": ("evidence",),
               "report.validate": ("evidence",), "report.pages": ("section",),
               "report.write": ("section",)}
#: What a slice's module of each role offers its dispatchers.
ROLE_FUNCTIONS = {"command": ("add_command",), "evidence": ("read_evidence", "run_evidence"),
                  "section": ("section", "library_column", "plot_stems", "draw_plots")}


def test_each_slice_module_is_in_its_roles_stage_and_named_after_its_analysis():
    from ngcc.evidence.analyses import ANALYSES, ROLES

    for analysis in ANALYSES:
        for role in analysis.roles:
            module = analysis.module(role)[len("ngcc."):]
            assert module in MODULES, "%s's %s module %s is missing" % (
                analysis.name, role, module)
            assert module.startswith(ROLES[role] + ".") and stage(module) == \
                ROLES[role].split(".")[0]
            assert module.rsplit(".", 1)[1] == "%s_%s" % (analysis.name, role)


def test_a_slice_module_name_is_unique_in_the_package():
    from ngcc.evidence.analyses import ANALYSES

    names = [path.stem for path in MODULES.values()]
    slices = {analysis.module(role).rsplit(".", 1)[1]
              for analysis in ANALYSES for role in analysis.roles}
    assert {name: names.count(name) for name in slices} == {name: 1 for name in slices}


def test_the_modules_serving_every_analysis_import_no_later_stage():
    """Their imports by name are edges too: from the dispatcher to each analysis's
    module of the roles it serves."""
    import importlib

    from ngcc.evidence.analyses import ANALYSES

    rank = {name: index for index, name in enumerate(STAGES)}
    for dispatcher, roles in DISPATCHERS.items():
        text = MODULES[dispatcher].read_text()
        assert "slice_modules(" in text or ".module(" in text, dispatcher
        for analysis in ANALYSES:
            for role in set(roles) & set(analysis.roles):
                target = analysis.module(role)[len("ngcc."):]
                assert rank[stage(target)] <= rank[stage(dispatcher)], (dispatcher, target)
                module = importlib.import_module("ngcc." + target)
                assert [f for f in ROLE_FUNCTIONS[role] if not hasattr(module, f)] == [], \
                    target


# ------------------------------------------------------------------ the cost of a start


def test_import_ngcc_loads_the_exceptions_alone():
    """``import ngcc`` loads no stage but the exceptions and the version, and none of
    numpy, the C core, pandas, matplotlib, scipy or Dask: a public name's module is
    imported when the name is first used (``benchmarks/start_cost.py`` times it)."""
    import subprocess
    import sys

    code = ("import sys, ngcc; print(' '.join(sorted(m for m in sys.modules if m == 'ngcc' or "
            "m.startswith('ngcc.') or m.split('.')[0] in ('numpy', 'pandas', 'matplotlib', "
            "'scipy', 'dask', 'tqdm'))))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.split()
    assert loaded == ["ngcc", "ngcc.base", "ngcc.base.errors", "ngcc.base.version"]


def test_every_public_name_loads_from_its_module_on_first_use():
    import importlib

    eager = {name for name in ngcc.__all__ if isinstance(getattr(ngcc, name), type)
             and issubclass(getattr(ngcc, name), (ngcc.NgccError, Warning))}
    assert set(ngcc._HOMES) | eager | {"__version__"} == set(ngcc.__all__)
    for name, home in ngcc._HOMES.items():
        module = importlib.import_module(home)
        assert getattr(ngcc, name) is (module if home == "ngcc." + name
                                       else getattr(module, name)), name
    assert set(ngcc.__all__) <= set(dir(ngcc))
    namespace: dict[str, object] = {}
    exec("from ngcc import *", namespace)
    assert namespace["Campaign"] is ngcc.Campaign and namespace["kat"] is ngcc.kat
    assert ngcc.stats is importlib.import_module("ngcc.stats")  # a stage, as before
    with pytest.raises(AttributeError, match=r"^module 'ngcc' has no attribute 'Campagin'$"):
        ngcc.Campagin  # noqa: B018  # a misspelt name fails as any module's would
