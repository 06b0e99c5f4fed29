"""The examples of the README and of the guide pages run, in the order a reader meets
them, so they cannot rot.

One test walks the README top to bottom and then each guide page of ``PAGES``, in that
order, in one fresh folder, as a new user following them would: every ```python block
runs (one namespace for all the pages, the folder as working directory), and in every
```console block each `$ ` line runs in bash there, with `ngcc` meaning this
checkout's `python -m ngcc`; a ```c block whose first line names a file (`/* toy/a.c */`)
is written to that file, as a reader saves it. Each command must succeed; its
standard output must be what the page shows, or, where the page elides lines with
`...`, hold the lines shown in that order (compared by their first word, as
figures differ from run to run). So two examples that share a run directory, or an
example that depends on a file an earlier one did not leave, fail here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

#: The pages whose examples run, in this order (an example may use what an earlier one
#: made: the names of the Python blocks, the files of the console lines).
PAGES = ("README.md", "docs/guide/basics.md", "docs/guide/campaigns.md",
         "docs/guide/submissions.md", "docs/guide/own-code.md", "docs/guide/reports.md",
         "docs/guide/checks.md")
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)
#: The first line of a ```c block that a reader saves: the file's path, relative.
SAVED_AS = re.compile(r"\A/\* ([\w./-]+) \*/\n")


def _page_blocks(language: str | None = None) -> list[tuple[str, str, str]]:
    """(page, language, body) of every fenced block, in reading order."""
    return [(page, lang, body) for page in PAGES
            for lang, body in BLOCK.findall((REPO / page).read_text())
            if language is None or lang == language]


def _blocks(language: str | None = None) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in reading order."""
    return [(lang, body) for _, lang, body in _page_blocks(language)]


def _console_examples(body: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of every `$ ` line in one console block."""
    examples: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            examples.append((line[2:], []))
        elif examples:
            examples[-1][1].append(line)
    return examples


def _saved_file(body: str) -> str | None:
    """The path a ```c block names on its first line, or None."""
    named = SAVED_AS.match(body)
    return named.group(1) if named else None


def _first_words(lines: list[str]) -> list[str]:
    return [line.split()[0] for line in lines if line.strip()]


def _shows(output: list[str], expected: list[str]) -> bool:
    """Whether ``output`` holds the ``expected`` lines around ``...``: exactly without
    one, else their first words in order."""
    if "..." not in expected:
        return output == expected
    wanted = _first_words([line for line in expected if line != "..."])
    words = iter(_first_words(output))
    return all(any(word == have for have in words) for word in wanted)


def _run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    ngcc = 'ngcc() { "%s" -m ngcc "$@"; }; ' % sys.executable
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    return subprocess.run(["bash", "-c", ngcc + command], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_the_readme_has_examples():
    assert _blocks("python") and any(_console_examples(body) for _, body in _blocks("console"))
    readme = [lang for page, lang, _ in _page_blocks() if page == "README.md"]
    assert "python" in readme and "console" in readme


def test_every_page_with_examples_is_walked():
    """A page of docs/ with a python block or a `$ ` line is in ``PAGES``, so that its
    examples run too (the pages Sphinx builds into docs/_build are copies)."""
    pages = sorted(str(path.relative_to(REPO)) for path in (REPO / "docs").rglob("*.md")
                   if "_build" not in path.relative_to(REPO / "docs").parts
                   and any(lang == "python" or (lang == "console" and _console_examples(body))
                           or (lang == "c" and _saved_file(body))
                           for lang, body in BLOCK.findall(path.read_text())))
    assert pages and set(pages) <= set(PAGES), sorted(set(pages) - set(PAGES))


def test_every_c_block_of_the_walked_pages_is_saved():
    """A ```c block of a walked page names its file, so that the walk compiles it: a
    block a reader must save by hand but the tests never build could rot."""
    unsaved = [(page, body.splitlines()[0]) for page, lang, body in _page_blocks("c")
               if not _saved_file(body)]
    assert _page_blocks("c") and not unsaved, unsaved


@pytest.mark.e2e  # every example, campaigns included, as a reader runs them
def test_the_examples_run_in_order_in_one_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    ran: list[str] = []
    for page, language, body in _page_blocks():
        if language == "python":
            try:
                exec(compile(body, page, "exec"), namespace)
            except AssertionError as failed:  # name the block (exec's code has no lines)
                line = (failed.__traceback__.tb_next or failed.__traceback__).tb_lineno
                raise AssertionError("%s: the python block starting %r failed at its line "
                                     "%d: %s" % (page, body.splitlines()[0], line,
                                                 body.splitlines()[line - 1])) from failed
            ran.append("%s: python: %s" % (page, body.splitlines()[0]))
        elif language == "c":
            saved_as = _saved_file(body)
            assert saved_as, "%s: a ```c block that names no file" % page
            path = tmp_path / saved_as
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body)
            ran.append("%s: %s" % (page, path.name))
        elif language == "console":
            for command, expected in _console_examples(body):
                shell = _run(command, tmp_path)
                assert shell.returncode == 0, "%s (%s)\nafter %s\n%s" % (
                    command, page, ran, shell.stderr)
                assert "\r" not in shell.stdout + shell.stderr, command
                assert _shows(shell.stdout.splitlines(), expected), (
                    "%s (%s) printed:\n%s" % (command, page, shell.stdout))
                ran.append("%s: %s" % (page, command))
    assert len(ran) == sum(len(_console_examples(body)) for _, body in _blocks("console")) \
        + len(_blocks("python")) + len(_blocks("c"))


def test_every_campaign_example_has_its_own_run_dir():
    """Run in order, a campaign in another's run directory would be refused (another
    plan) or measure nothing; only a --dry-run leaves its directory to the next one."""
    commands = [part for _, body in _blocks("console") for command, _ in
                _console_examples(body) for part in command.split("&&")]
    dirs = [re.search(r"--run-dir (\S+)", part).group(1)  # type: ignore[union-attr]
            for part in commands if "ngcc campaign" in part and "--dry-run" not in part]
    assert dirs and len(dirs) == len(set(dirs)), dirs


def test_a_mismatch_shows(tmp_path):
    assert _shows(["a 1", "b 2"], ["a 1", "b 2"]) and not _shows(["a 1"], ["a 1", "b 2"])
    assert _shows(["x", "instance 1", "SM3 2", "y"], ["instance", "SM3", "..."])
    assert not _shows(["SM3 2", "instance 1"], ["instance", "SM3", "..."])
