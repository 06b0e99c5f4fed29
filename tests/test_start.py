"""Starting ngcc: ``python -m ngcc`` interrupted while it imports says one line (as the
``ngcc`` script does), and a source tree without its built C core says what to do."""

from __future__ import annotations

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
