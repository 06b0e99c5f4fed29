"""Starting ngcc: ``python -m ngcc`` interrupted while it imports says one line (as the
``ngcc`` script does), a source tree without its built C core says what to do, and the
command line loads what a command uses: building its parser loads no numpy and none of
the modules that measure, report or run libraries (``docs/architecture.md``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import REPO

# A sitecustomize that holds the import of one module (named by the environment) until
# a signal ends it, after it says so with a marker file: the SIGINT then comes while
# ngcc is starting on a busy host as on an idle one (a guess of when the start is under
# way would race the child, which may be done, or not yet importing, by then).
HOLDING_IMPORT = """
import os
import sys
import time


class HoldOneImport:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["NGCC_TEST_HOLD_IMPORT"]:
            open(os.environ["NGCC_TEST_MARKER"], "w").close()
            time.sleep(600)
        return None


sys.meta_path.insert(0, HoldOneImport())
"""


@pytest.mark.parametrize("held", ["ngcc.base.version", "ngcc.cli.main"])
def test_python_m_ngcc_interrupted_while_starting_says_one_line(tmp_path, held):
    # ngcc.base.version: while the package imports (ngcc/__init__.py); ngcc.cli.main: while the
    # command line's modules import (ngcc/__main__.py).
    (tmp_path / "sitecustomize.py").write_text(HOLDING_IMPORT)
    marker = tmp_path / "importing"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "NGCC_TEST_HOLD_IMPORT": held,
           "NGCC_TEST_MARKER": str(marker)}
    # SIGINT as a terminal leaves it, even where this test runs as a background job
    # (whose shell made the job ignore it, and a child inherits that)
    child = subprocess.Popen([sys.executable, "-m", "ngcc", "list"], cwd=REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        while not marker.exists() and child.poll() is None:
            time.sleep(0.01)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert (child.returncode, err.decode()) == (
        130, "ngcc: interrupted while starting; nothing was done\n")


def test_importing_a_source_tree_without_its_c_core_says_what_to_do(tmp_path):
    tree = tmp_path / "checkout"
    shutil.copytree(REPO / "ngcc", tree / "ngcc",
                    ignore=shutil.ignore_patterns("_core*.so", "_lib", "__pycache__"))
    for argv in (["-c", "import ngcc"], ["-m", "ngcc", "list"]):
        done = subprocess.run([sys.executable, *argv], cwd=tree, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 1
        message = ("ngcc is imported from the source tree at %s, which has no built C core "
                   "(ngcc/_core*.so): run `pip install -e .` there, or run from another "
                   "folder" % tree)
        assert message in done.stderr.splitlines()[-1], done.stderr
        assert "circular import" not in done.stderr


@pytest.mark.parametrize("argv", [["-c", "import ngcc"]])
def test_the_built_tree_imports(argv):
    done = subprocess.run([sys.executable, *argv], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr


# ------------------------------------------------------------- what a start loads

#: Libraries the command line's start must not load: a command that needs one loads it
#: when it runs.
HEAVY_LIBRARIES = ("numpy", "pandas", "scipy", "matplotlib", "elftools", "tqdm")
#: The stages that measure, report or run libraries, and the only modules of theirs the
#: parser may load: the numbers and words its options state (each option is the
#: settings schema's, so these are what the schema's declarations read).
LATER_STAGES = ("evidence", "stats", "driver", "measure", "campaign", "report", "app")
PARSER_MAY_LOAD = {"ngcc.evidence.choices", "ngcc.evidence.figures", "ngcc.evidence.analyses",
                   "ngcc.driver.limits", "ngcc.measure.plan", "ngcc.measure.waiting",
                   "ngcc.campaign.schema", "ngcc.campaign.settings", "ngcc.campaign.failures",
                   "ngcc.report.tables", "ngcc.report.export"}
# A fresh interpreter builds the parser (or runs a command through main) and writes the
# modules it then holds to the file named last.
LOADED = ("import json, sys\n"
          "from ngcc.cli.main import build_parser, main\n"
          "argv, out = sys.argv[1:-1], sys.argv[-1]\n"
          "build_parser() if argv == ['build_parser'] else main(argv)\n"
          "json.dump(sorted(sys.modules), open(out, 'w'))\n")


def _loaded(tmp_path, *argv: str) -> set[str]:
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", LOADED, *argv, str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert out.exists(), done.stderr
    return set(json.loads(out.read_text()))


def _too_heavy(loaded: set[str]) -> list[str]:
    """The heavy libraries and the modules of the later stages beyond the parser's own."""
    return sorted(name for name in loaded if name.split(".")[0] in HEAVY_LIBRARIES or (
        name.split(".")[:2][-1] in LATER_STAGES and name.startswith("ngcc.")
        and name.count(".") > 1 and name not in PARSER_MAY_LOAD))


@pytest.mark.parametrize("argv", [["build_parser"], ["--version"], ["--help"], ["list"],
                                  ["campaign", "--help"]])
def test_the_parser_loads_no_numpy_nor_the_stages_that_measure(tmp_path, argv):
    loaded = _loaded(tmp_path, *argv)
    assert "ngcc.cli.main" in loaded and "argparse" in loaded  # it did build the parser
    assert _too_heavy(loaded) == []


def test_the_check_of_the_heavy_modules_can_fail(tmp_path):
    assert _too_heavy({"numpy", "numpy.linalg", "ngcc.driver.child", "ngcc.measure.plan",
                       "ngcc.evidence", "ngcc.cli.main"}) == [
        "ngcc.driver.child", "numpy", "numpy.linalg"]


def test_a_kat_check_of_a_built_in_library_loads_no_numpy(tmp_path):
    loaded = _loaded(tmp_path, "kat", "WChain-V1-512", "--out", str(tmp_path / "kat"),
                     "--no-progress")
    assert "ngcc.driver.kat" in loaded and (tmp_path / "kat").is_dir()  # it did check
    assert [name for name in loaded if name.split(".")[0] in HEAVY_LIBRARIES] == []
