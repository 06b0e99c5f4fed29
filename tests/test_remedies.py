"""Advice that can be followed: every option a message of ``evaluate``, ``kat``, ``build``
and ``campaign`` names is an option of the command that printed it. Each command is run
on what fails it (the fixture archives: a folder that does not compile, one that needs a
define or a ``-m`` flag, one whose main source ``#include``s another, a wrong answer, a
library no reference covers), and every ``--option`` in what it printed is looked up in
its own parser."""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

import pytest
from _fakes import FakeRunner, fixed_host

from ngcc.cli import main as _cli
from ngcc.evidence import evaluation as _evaluation

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ARCHIVE, INCLUDED = FIXTURES / "archive", FIXTURES / "included"
BROKEN = ARCHIVE / "Broken Hash" / "Reference_Implementation" / "Broken-256"
WRONG = ARCHIVE / "Wrong Answer" / "Reference_Implementation" / "WrongAnswer-256"
CHAIN = ARCHIVE / "Guarded Chain" / "Optimized_Implementation" / "GChain-256"
TINY_OPT = (ARCHIVE / "Tiny Hash" / "Implementations and Test_Vectors" / "API_CryptHash"
            / "Optimized_Implementation" / "TinyHash-256")
CORE = INCLUDED / "Included Core" / "Reference_Implementation" / "Included-256"

#: An option a message names (``--exclude``), not one inside a word or a compiler flag.
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
#: A compiler's own line, quoted in a build's message (its options are the compiler's).
COMPILER_LINE = re.compile(r"^\s*(\S+:\d+(:\d+)?: (fatal error|error|warning|note):|\S+: In "
                           r"function|\d+ \||\|)")


def _options(command: str) -> set[str]:
    parser = _cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {option for p in (parser, sub.choices[command]) for action in p._actions
            for option in action.option_strings}


def _named(text: str) -> set[str]:
    return {option for line in text.splitlines() if not COMPILER_LINE.match(line)
            for option in OPTION.findall(line)}


def _said(command: str, argv: list[str], capsys) -> str:
    status = _cli.main([command, *argv])
    captured = capsys.readouterr()
    assert status != 0  # each scenario is a failure with advice
    return captured.out + captured.err


def _check(command: str, text: str) -> set[str]:
    named = _named(text)
    assert named - _options(command) == set(), (command, text)
    return named


def test_build_names_only_its_own_options(tmp_path, capsys):
    named = set()
    for folder, extra in ((BROKEN, []), (CHAIN, ["--flags", "performance"]),
                          (TINY_OPT, ["--flags", "performance"]), (CORE, [])):
        named |= _check("build", _said("build", [str(folder), "--out", str(tmp_path / "b"),
                                                 *extra], capsys))
    assert {"--define", "--extra-cflags", "--exclude"} <= named


@pytest.fixture()
def libraries(tmp_path):
    """The wrong answer's library (a MISMATCH) and the included core's (no reference:
    NOKAT), built by hand."""
    built = {}
    for name, folder, extra in (("wrong", WRONG, []), ("core", CORE, ["--exclude",
                                                                         "core.c"])):
        assert _cli.main(["build", str(folder), "--out", str(tmp_path / name), *extra]) == 0
        built[name] = next((tmp_path / name).glob("*.so"))
    return built


def test_kat_names_only_its_own_options(libraries, tmp_path, capsys):
    named = set()
    for library in libraries.values():
        named |= _check("kat", _said("kat", [str(library), "--files", "2_12", "--out",
                                             str(tmp_path / "kat")], capsys))
    assert {"--manifest", "--official"} <= named


def test_campaign_names_only_its_own_options(libraries, tmp_path, capsys, monkeypatch):
    fixed_host(monkeypatch)
    monkeypatch.setattr("ngcc.driver.child.DriverRunner", FakeRunner)
    text = _said("campaign", [*map(str, libraries.values()), "--quick", "--lengths", "32",
                              "--kat-files", "2_12", "--run-dir", str(tmp_path / "run"),
                              "--quiet"], capsys)
    assert "--allow-kat-fail" in _check("campaign", text)


def test_evaluate_names_only_its_own_options(tmp_path, capsys, monkeypatch):
    fixed_host(monkeypatch)
    monkeypatch.setattr("ngcc.driver.child.DriverRunner", FakeRunner)
    archives = [shutil.copytree(path, tmp_path / path.name) for path in (ARCHIVE, INCLUDED)]
    run_dir = tmp_path / "run"
    text = _said("evaluate", [*map(str, archives), "--run-dir", str(run_dir), "--quick",
                              "--lengths", "32", "--kat-files", "2_23", "--no-plots",
                              "--quiet", "--no-ct"], capsys)
    folders = _evaluation.load(run_dir).folders
    done = [a.split(" (", 1)[0] for entry in folders for a in entry.adjustments]
    for options in sorted({e.options for e in folders} | set(done), key=len, reverse=True):
        text = text.replace(options, "")  # how each was built ("adjusted" lines): no advice
    named = _check("evaluate", text)
    assert {"--manifest", "--official"} <= named  # the library no reference covers
