"""Starting ngcc: ``python -m ngcc`` interrupted while it imports says one line (as the
``ngcc`` script does), and a source tree without its built C core says what to do."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO


def _importing_ngcc(pid: int) -> bool:
    """Whether the process is importing ngcc: numpy's extension is mapped (ngcc imports it
    first; Python's own start, which a SIGINT would end fatally, never does), read from
    /proc, so no guess of how long a start takes."""
    try:
        return "numpy" in Path("/proc/%d/maps" % pid).read_text()
    except OSError:
        return True  # gone already: it finished (the caller reads its status)


def test_python_m_ngcc_interrupted_while_starting_says_one_line():
    interrupted = []
    for _ in range(5):  # retried only when the command finished before the signal came
        child = subprocess.Popen([sys.executable, "-m", "ngcc", "list"], cwd=REPO,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while child.poll() is None and not _importing_ngcc(child.pid):
            pass
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
        assert "Traceback" not in err.decode(), err.decode()
        if child.returncode == 130:
            interrupted.append(err.decode())
            break
        assert child.returncode == 0, (child.returncode, err.decode())
    assert interrupted, "ngcc list finished before every SIGINT"
    assert interrupted[0].startswith("ngcc: interrupted") and interrupted[0].count("\n") == 1


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
