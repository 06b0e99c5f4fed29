"""ngcc as a user installs it: the wheel, in a fresh virtual environment, run from the root
of a fresh checkout (whose ``./ngcc`` has no built ``_core``, and here a ``json.py`` that
raises), where no process ngcc starts may import anything from the working directory.

No network: the wheel is built without build isolation and installed without
dependencies; the environment sees this interpreter's site-packages for numpy & co.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.e2e  # builds and installs the wheel: the end-to-end tier

#: What a fresh clone does not have: build output, caches, virtual environments.
NOT_IN_A_FRESH_CLONE = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "*.so", "_lib", "__pycache__", ".pytest_cache",
    ".ruff_cache", "runs", ".venv", "ngcc-build", "ngcc-kat")


class Installed:
    """A virtual environment with the wheel installed, and a fresh checkout to run in."""

    def __init__(self, root: Path):
        self.checkout = root / "checkout"
        self.venv = root / "venv"
        self.bin = self.venv / "bin"

    def ngcc(self, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run the installed ``ngcc`` script with the checkout as working directory."""
        return subprocess.run([str(self.bin / "ngcc"), *args], cwd=self.checkout, input=input,
                              capture_output=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("packaging")
    env = Installed(root)
    shutil.copytree(REPO, env.checkout, ignore=NOT_IN_A_FRESH_CLONE)
    build_copy = root / "build-copy"  # the wheel is built in a copy, so the checkout stays clean
    shutil.copytree(env.checkout, build_copy)
    # Beside ./ngcc, a second trap for any Python child that would import from its cwd.
    (env.checkout / "json.py").write_text("raise ImportError('imported from the cwd')\n")
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(root / "wheel"), str(build_copy))
    [wheel] = (root / "wheel").glob("ngcc-*.whl")
    _run(sys.executable, "-m", "venv", "--without-pip", str(env.venv))
    [purelib] = env.venv.glob("lib/python*/site-packages")
    (purelib / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    _run(sys.executable, "-m", "pip", "--python", str(env.bin / "python"), "install",
         "--quiet", "--no-deps", "--no-index", str(wheel))
    return env


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, "%s failed:\n%s%s" % (" ".join(command), done.stdout,
                                                      done.stderr[-3000:])


def test_the_environment_imports_the_wheel(installed):
    located = subprocess.run([str(installed.bin / "python"), "-c", "import ngcc; "
                              "print(ngcc.__file__)"], cwd=installed.venv, capture_output=True,
                             text=True, check=True)
    assert Path(located.stdout.strip()).is_relative_to(installed.venv)
    assert not list((installed.checkout / "ngcc").glob("_core*.so")), "the checkout is unbuilt"


def test_quick_campaign_from_the_checkout_root(installed, tmp_path):
    run_dir = tmp_path / "run"
    done = installed.ngcc("campaign", "SM3", "WChain-V1-512", "--quick", "--lengths", "64",
                          "--run-dir", str(run_dir), "--quiet")
    assert done.returncode == 0, done.stderr.decode()
    jobs = json.loads((run_dir / "campaign.json").read_text())["jobs"]
    assert [(job["instance"], job["status"]) for job in jobs] == [
        ("SM3", "done"), ("WChain-V1-512", "done")], [job["error"] for job in jobs]


def test_hash_from_the_checkout_root(installed, tmp_path):
    abc = "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
    done = installed.ngcc("hash", "SM3", "-", input=b"abc")
    assert (done.returncode, done.stdout.decode().strip()) == (0, abc), done.stderr.decode()
    # a library named by its path is foreign code: it is hashed in a child process
    [built_in] = installed.venv.glob("lib/python*/site-packages/ngcc/_lib/SM3.*.so")
    library = tmp_path / "SM3.so"
    shutil.copyfile(built_in, library)
    (tmp_path / "SM3.so.json").write_text(json.dumps({"name": "SM3", "digest_bits": 256}))
    done = installed.ngcc("hash", str(library), "-", input=b"abc")
    assert (done.returncode, done.stdout.decode().strip()) == (0, abc), done.stderr.decode()


def test_kat_from_the_checkout_root(installed, tmp_path):
    done = installed.ngcc("kat", "WChain-V1-512", "--no-progress", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "hash-34" / "WChain-V1-512.log").read_text().splitlines()[-1] == (
        "RESULT hash-34 WChain-V1-512 PASS")



def test_the_wheel_carries_the_candidate_registry_and_every_manifest(installed):
    [data] = installed.venv.glob("lib/python*/site-packages/ngcc/_lib/kat")
    shipped = sorted(p.name for p in (REPO / "kat").iterdir() if p.name != "README.md")
    assert sorted(p.name for p in data.iterdir()) == shipped
    assert len([name for name in shipped if name.endswith(".sha256")]) == 35
    done = installed.ngcc("list", "--candidates")
    assert done.returncode == 0, done.stderr.decode()
    assert "hash-14   Laurus" in done.stdout.decode()


def test_the_published_figures_ship_in_the_wheel(installed):
    [published] = installed.venv.glob("lib/python*/site-packages/ngcc/published")
    assert {p.name for p in published.iterdir()} >= {"README.md", "hash_x86_1.tsv",
                                                     "hash_arm_1.tsv",
                                                     "iccs_baselines_x86_1.tsv",
                                                     "iccs_baselines_arm_1.tsv"}


def test_the_recipes_find_the_installed_libraries_from_the_checkout_root(installed):
    """docs/guide/checks.md's valgrind recipe: `ngcc list --library` answers from the
    checkout's root, where `python -c 'import ngcc'` meets the unbuilt source tree and says
    what to do in one line."""
    done = installed.ngcc("list", "--library", "WChain-V1-512:opt")
    assert done.returncode == 0, done.stderr.decode()
    library = Path(done.stdout.decode().strip())
    assert library.is_file() and library.is_relative_to(installed.venv)
    shadowed = subprocess.run([str(installed.bin / "python"), "-c", "import ngcc"],
                              cwd=installed.checkout, capture_output=True, text=True,
                              timeout=120, check=False)
    assert shadowed.returncode == 1
    assert shadowed.stderr.splitlines()[-1] == (
        "ImportError: ngcc is imported from the source tree at %s, which has no built C "
        "core (ngcc/_core*.so): run `pip install -e .` there, or run from another folder"
        % installed.checkout)


def test_the_compare_notebook_runs_from_the_wheel(installed, tmp_path):
    """notebooks/compare.ipynb's code (its %-magics left out) with the installed ngcc: its
    submitter's folder comes from the sources the wheel ships, not from a checkout."""
    import nbformat

    notebook = nbformat.read(REPO / "notebooks" / "compare.ipynb", as_version=4)
    code = "\n".join(line for cell in notebook.cells if cell.cell_type == "code"
                     for line in cell.source.splitlines() if not line.startswith("%"))
    (tmp_path / "compare.py").write_text(code + "\n")
    done = subprocess.run([str(installed.bin / "python"), "compare.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "geometric mean over lengths" in done.stdout
    assert (tmp_path / "runs" / "notebook-compare" / "run" / "campaign.json").is_file()
