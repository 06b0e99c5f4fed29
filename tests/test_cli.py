"""The ``ngcc`` command line: list, hash, info, and how it reports errors."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from conftest import REPO

import ngcc
from ngcc.cli.main import build_parser, main

ABC_SM3 = "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def _one_error_line(text: str) -> str:
    lines = text.splitlines()
    assert len(lines) == 1, text
    assert lines[0].startswith("ngcc: error: "), text
    return lines[0]


# ------------------------------------------------------------------------------- hash

def test_hash_of_standard_input(monkeypatch, capsys):
    _stdin(monkeypatch, b"abc")
    assert main(["hash", "SM3", "-"]) == 0
    assert capsys.readouterr().out == ABC_SM3 + "\n"


def test_hash_reads_standard_input_without_a_file(monkeypatch, capsys):
    _stdin(monkeypatch, b"abc")
    assert main(["hash", "SM3"]) == 0
    assert capsys.readouterr().out.strip() == ABC_SM3


def test_hash_of_a_file_and_of_its_first_bits(tmp_path, capsys):
    path = tmp_path / "message.bin"
    path.write_bytes(b"abcdef")
    assert main(["hash", "SM3", str(path), "--bits", "24"]) == 0
    assert capsys.readouterr().out.strip() == ABC_SM3
    assert main(["hash", "SM3", str(path)]) == 0
    assert capsys.readouterr().out.strip() == ngcc.hash("SM3", b"abcdef").hex()


def test_python_dash_m_ngcc_hashes_standard_input():
    child = subprocess.run([sys.executable, "-m", "ngcc", "hash", "SM3", "-"], input=b"abc",
                           capture_output=True, timeout=120, check=False)
    assert child.returncode == 0, child.stderr
    assert child.stdout.decode().strip() == ABC_SM3


# ------------------------------------------------------------------------------- list

def test_list_shows_every_instance_with_its_facts(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["instance", "family", "candidate", "digest", "bits", "variant",
                                "constant", "time", "runs", "here"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert rows["SM3"] == ["SM3", "baseline", "256", "ref", "yes", "yes"]
    every = ngcc.instances(all_variants=True)
    defaults = set(ngcc.instances())
    assert set(rows) == {i.name if i in defaults else "%s:%s" % (i.name, i.variant)
                         for i in every}
    assert len(rows) == len(every)


# ------------------------------------------------------------------------------- info

def test_info_shows_the_counter_and_the_machine(capsys):
    assert main(["info"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["item", "value"]
    facts = {}
    for line in lines[1:]:
        item, value = line.split("  ", 1)
        facts[item] = value.strip()
    counter = ngcc.counter_info()
    assert facts["cycle counter"].startswith("%s, " % counter.name)
    assert "GHz" in facts["cycle counter"]
    # the resolution and the bracket's cost, each named
    assert "resolution %d tick" % counter.resolution in facts["cycle counter"]
    assert "bracket %d–%d ticks" % (counter.overhead_min, counter.overhead_median) \
        in facts["cycle counter"]
    for key in ("processor", "OS / kernel", "compiler"):
        assert facts[key].strip(), key
    assert "ngcc %s" % ngcc.__version__ in facts["software"]


# ------------------------------------------------------------------------------ errors

def test_unknown_instance_is_a_usage_mistake_in_one_line(monkeypatch, capsys):
    _stdin(monkeypatch, b"")
    assert main(["hash", "SM4", "-"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "unknown instance 'SM4'" in line and "SM3" in line


def test_missing_file_is_one_line_and_status_1(tmp_path, capsys):
    assert main(["hash", "SM3", str(tmp_path / "absent.bin")]) == 1
    assert "absent.bin" in _one_error_line(capsys.readouterr().err)


def test_bits_beyond_the_input_is_a_usage_mistake_in_one_line(monkeypatch, capsys):
    _stdin(monkeypatch, b"abc")
    assert main(["hash", "SM3", "--bits", "25"]) == 2
    assert "bits=25 is longer than the data" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["hash"], ["hash", "SM3", "--bits", "x"],
                                  ["list", "--bogus"]])
def test_usage_errors_are_one_line_and_status_2(argv, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--help" in _one_error_line(captured.err)


def test_a_failing_command_prints_no_traceback():
    child = subprocess.run([sys.executable, "-m", "ngcc", "hash", "NoSuchHash", "-"], input=b"",
                           capture_output=True, timeout=120, check=False)
    assert child.returncode == 2
    assert child.stderr.decode().startswith("ngcc: error: unknown instance 'NoSuchHash'")
    assert "Traceback" not in child.stderr.decode()


# -------------------------------------------------------------------------------- help

def test_every_subcommand_has_help(capsys):
    subcommands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"list", "hash", "info", "build"} <= set(subcommands)
    for name, parser in subcommands.items():
        assert main([name, "--help"]) == 0, name
        text = capsys.readouterr().out
        assert text.startswith("usage: ngcc %s" % name)
        assert parser.description and " ".join(parser.description.split()[:4]) in \
            " ".join(text.split()), name                        # a description, shown


def test_a_library_path_with_no_file_says_so(tmp_path, capsys):
    missing = str(tmp_path / "built" / "X.so")
    for argv in (["hash", missing, "-"], ["kat", missing, "--no-progress"],
                 ["campaign", missing, "--quick"]):
        assert main(argv) == 2  # a name on the command line that names nothing
        line = _one_error_line(capsys.readouterr().err)
        assert line.startswith("ngcc: error: no such file: %s " % missing), argv
        assert "unknown instance" not in line


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == "ngcc %s" % ngcc.__version__


def test_the_console_script_is_this_main():
    scripts = (REPO / "pyproject.toml").read_text().partition("[project.scripts]")[2]
    assert scripts.split("[")[0].strip().split("#")[0].strip() == 'ngcc = "ngcc_script:main"'
    import ngcc_script
    assert ngcc_script.main.__doc__ and "ngcc.cli.main" in (ngcc_script.__doc__ or "")


def test_a_build_error_shows_the_compilers_own_lines_with_controls_escaped(tmp_path, capsys):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "CryptHash_AlgorithmInstance.h").write_text(
        '#define ALGORITHM_INSTANCE "T-256"\n#define DIGEST_BIT_LENGTH 256\n')
    (folder / "t.c").write_text('#include "CryptHash_AlgorithmInstance.h"\n'
                                "#error first \x1b[31mred\n"
                                "int f(void) { return undefined_a; }\n")
    assert main(["build", str(folder), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "\\x0a" not in err and "\x1b" not in err
    errors = [line for line in err.splitlines() if line.startswith("t.c:")]
    assert errors[0] == "t.c:2:2: error: #error first \\x1b[31mred"  # escaped, on its line
    assert errors[1].startswith("t.c:3:22: error: 'undefined_a' undeclared")
    assert err.startswith("ngcc: error: %s does not compile with " % folder)


# ------------------------------------------------------------------- the closing table

def test_the_campaign_table_fits_100_columns_and_wide_has_every_column(tmp_path):
    from _fakerun import make_run

    from ngcc.cli.summary import campaign_summary

    run = ngcc.load_run(make_run(tmp_path / "run", labels={"Pavelor-512": "Pavelor-512@x"}))
    short = campaign_summary(run).splitlines()
    assert max(len(line) for line in short) <= 100, max(short, key=len)
    assert short[0].split() == ["instance", "message", "leads", "ticks/byte", "ticks/call",
                                "95%", "CI", "trials", "KAT", "flags"]
    rows = [line.split() for line in short[1:] if line.startswith("Pavelor-512@x")]
    assert len(rows) == 3
    assert rows[0][3] == "mean" and rows[0][7].startswith("±") and rows[0][9:11] == ["3", "PASS"]
    assert any(line.startswith("leads: ") for line in short)
    assert short[-2:] == ["evidence: %s" % run.path, "next: ngcc report %s" % run.path]

    wide = campaign_summary(run, wide=True).splitlines()
    assert wide[0].split() == ["instance", "message", "leads", "ticks/call", "ticks/byte",
                               "95%", "CI", "(of)", "per-call", "mean", "median", "95%", "CI",
                               "(log-t)", "observer", "core", "c/B", "(est.)", "MB/s", "n",
                               "KAT", "flags"]
    legend = [line for line in wide if not line.startswith(("Pavelor", "pseudoXOF"))][1:]
    assert legend and max(len(line) for line in legend[:-2]) <= 100  # folded legend


def test_wide_goes_with_the_table_only():
    assert main(["campaign", "SM3", "--wide", "--quiet"]) == 2


def test_list_library_prints_one_path_for_a_recipe(capsys):
    assert main(["list", "--library", "WChain-V1-512:opt"]) == 0
    out = capsys.readouterr().out
    assert out == "%s\n" % ngcc.instance("WChain-V1-512:opt").library
    assert main(["list", "--library", "NOPE"]) == 2
    assert main(["list", "--library", "SM3", "--candidates"]) == 2
