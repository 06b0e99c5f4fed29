"""The README's examples run, so they cannot rot.

Every ```python block runs (in order, one namespace). In every ```console block
each `$ ` line runs in bash, in a scratch folder, with `ngcc` meaning this
checkout's `python -m ngcc`; it must succeed, and its expected output must match
unless the example elides lines with `...`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import REPO

README = (REPO / "README.md").read_text()
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README) if lang == language]


def _console_examples() -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of every `$ ` line in the console blocks."""
    examples: list[tuple[str, list[str]]] = []
    for body in _blocks("console"):
        for line in body.splitlines():
            if line.startswith("$ "):
                examples.append((line[2:], []))
            elif examples:
                examples[-1][1].append(line)
    return examples


def test_the_readme_has_examples():
    assert _blocks("python") and _console_examples()


def test_python_examples_run(capsys):
    namespace: dict[str, object] = {}
    for body in _blocks("python"):
        exec(compile(body, "README.md", "exec"), namespace)


@pytest.mark.parametrize(("command", "expected"), _console_examples(),
                         ids=[c for c, _ in _console_examples()])
def test_console_examples_run(command, expected, tmp_path):
    ngcc = 'ngcc() { "%s" -m ngcc "$@"; }; ' % sys.executable
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    shell = subprocess.run(["bash", "-c", ngcc + command], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120, check=False)
    assert shell.returncode == 0, shell.stderr
    if "..." not in expected:
        assert shell.stdout.splitlines() == expected
