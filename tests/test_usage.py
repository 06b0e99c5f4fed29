"""Small faults an evaluator met (issue 29): usage mistakes exit 2, unreadable files and
missing run directories are said plainly, HTML figures align right."""

from __future__ import annotations

import pytest

from ngcc.cli.main import main
from ngcc.report import export as _export


@pytest.mark.parametrize("argv", [["campaign"], ["kat"], ["leak", "SM3", "--calls", "10"]])
def test_usage_mistakes_exit_2_with_one_line(argv, tmp_path, capsys):
    assert main([*argv, *(["--out", str(tmp_path / "o")] if argv[0] == "leak" else [])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ngcc: error: ") and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


#: (command line, what its one error line says): every usage mistake of every subcommand
#: exits 2 before any work; {tmp} is a fresh folder (where --out/--run-dir point).
MISTAKES = [
    (["hash", "NOPE", "-"], "unknown instance 'NOPE'"),
    (["hash", "SM3", "/dev/null", "--bits", "-5"], "--bits must be 0 or more"),
    (["kat", "NOPE", "--out", "{tmp}"], "unknown instance 'NOPE'"),
    (["kat", "SM3", "--files", "2_99", "--out", "{tmp}"], "unknown KAT file '2_99'"),
    (["kat", "--candidate", "hash-99", "--out", "{tmp}"], "unknown --candidate 'hash-99'"),
    (["kat", "--all", "--candidate", "hash-34", "--out", "{tmp}"],
     "--all and --candidate exclude each other"),
    (["kat", "SM3", "--timeout", "-1", "--out", "{tmp}"],
     "--timeout: expected a positive, finite number of seconds, got '-1'"),
    (["kat", "SM3", "--label", "x", "--out", "{tmp}"], "1 --label given for 0 library path"),
    (["campaign", "NOPE", "--run-dir", "{tmp}"], "unknown instance 'NOPE'"),
    (["campaign", "--candidate", "hash-14", "--run-dir", "{tmp}"],
     "candidate hash-14 has no built-in instance"),
    (["campaign", "--run-dir", "{tmp}"], "name the instances to measure"),
    (["campaign", "--all", "--candidate", "hash-34", "--run-dir", "{tmp}"],
     "--all and --candidate exclude each other"),
    (["campaign", "SM3", "--trials", "0", "--run-dir", "{tmp}"],
     "argument --trials: expected a positive whole number, got '0'"),
    (["campaign", "SM3", "--cpu", "999", "--run-dir", "{tmp}"], "CPU 999 does not exist"),
    (["campaign", "SM3", "--kat-files", "zz", "--run-dir", "{tmp}"], "unknown KAT file 'zz'"),
    (["campaign", "SM3", "--target-ci", "-1", "--run-dir", "{tmp}"],
     "argument --target-ci: expected a positive, finite number (a percentage)"),
    (["campaign", "SM3", "--trials", "5", "--max-trials", "3", "--target-ci", "1",
      "--run-dir", "{tmp}"], "--max-trials (3) is fewer than the 5 trials"),
    (["campaign", "SM3", "--max-trials", "5", "--run-dir", "{tmp}"],
     "--max-trials applies to --target-ci"),
    (["campaign", "SM3", "--leak-calls", "5000", "--run-dir", "{tmp}"],
     "--leak-calls applies to --leak"),
    (["campaign", "SM3", "--leak-calls", "0", "--run-dir", "{tmp}"],
     "--leak-calls applies to --leak"),  # 0 is given, though 0 == False
    (["campaign", "SM3", "--leak-length", "-1", "--run-dir", "{tmp}"],
     "--leak-length applies to --leak"),
    (["campaign", "SM3", "--leak", "--leak-calls", "0", "--run-dir", "{tmp}"],
     "--leak-calls must be 2000 to"),
    (["campaign", "SM3", "--leak", "--leak-length", "-1", "--run-dir", "{tmp}"],
     "leak must be 1 to"),
    (["campaign", "SM3", "--leak", "--leak-length", "0", "--run-dir", "{tmp}"],
     "leak must be 1 to"),
    (["campaign", "SM3", "--workers", "0", "--run-dir", "{tmp}"],
     "argument --workers: expected a positive whole number, got '0'"),
    (["campaign", "SM3", "--workers", "2", "--scheduler", "tcp://h:1", "--run-dir", "{tmp}"],
     "not allowed with argument --workers"),
    (["campaign", "SM3", "--trial-target", "x", "--run-dir", "{tmp}"],
     "--trial-target: expected a positive, finite number of seconds, got 'x'"),
    (["campaign", "SM3", "--leak-seconds", "x", "--run-dir", "{tmp}"],
     "--leak-seconds: expected a positive, finite number of seconds, got 'x'"),
    (["campaign", "SM3", "--wait", "x", "--run-dir", "{tmp}"],
     "--wait: expected a number of seconds, got 'x'"),
    (["leak", "SM3", "--fixed", "0011", "--length", "5", "--out", "{tmp}"],
     "--fixed has 2 bytes (4 hex digits), but --length is 5"),
    (["leak", "SM3", "--fixed", "zz", "--out", "{tmp}"], "expected hex digits, got 'zz'"),
    (["leak", "SM3", "--seed", "-1", "--out", "{tmp}"], "--seed must be 0 to"),
    (["leak", "NOPE", "--out", "{tmp}"], "unknown instance 'NOPE'"),
    (["leak", "SM3", "--cpu", "999", "--out", "{tmp}"], "CPU 999 does not exist"),
    (["leak", "SM3", "--length", "0", "--out", "{tmp}"], "length must be 1 to"),
    (["check", "--cpu", "999"], "CPU 999 does not exist"),
    (["report", "{tmp}", "--distribution", "x"], "expected INSTANCE:BYTES"),
    (["compare", "{tmp}", "--published", "x86_1", "--host", "h"],
     "--published compares one run with the published figures"),
    (["compare", "{tmp}", "--alpha", "2"], "a significance level lies strictly between"),
    (["build", "{tmp}", "--timeout", "0"], "--timeout: expected a positive, finite number"),
    (["build", "{tmp}", "--candidate", "hash-99"], "unknown --candidate 'hash-99'"),
    (["build", "{tmp}", "--extra-cflags=-o x.so"], "--extra-cflags may not name an output"),
    (["evaluate", "{tmp}", "--lengths", "0"],
     "argument --lengths: expected positive whole numbers of bytes up to"),
    (["evaluate", "{tmp}", "--trials", "0"], "argument --trials: expected a positive whole"),
    (["evaluate", "{tmp}", "--kat-files", "zz"], "unknown KAT file 'zz'"),
    (["evaluate", "{tmp}", "--cpu", "999"], "CPU 999 does not exist"),
]


@pytest.mark.parametrize(("argv", "said"), MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_every_usage_mistake_exits_2_with_one_line_before_any_work(argv, said, tmp_path,
                                                                   capsys):
    out = tmp_path / "out"
    out.mkdir()  # an empty folder: what a command that started work would write into
    assert main([arg.replace("{tmp}", str(out)) for arg in argv]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("ngcc: error: ") and captured.err.count("\n") == 1
    assert said in captured.err
    assert "_positive_seconds" not in captured.err and "invalid" not in captured.err
    assert list(out.iterdir()) == []


def test_a_failure_of_the_work_keeps_its_status(tmp_path, capsys):
    """A missing file is not a usage mistake: 1, as an error of the work."""
    assert main(["hash", "SM3", str(tmp_path / "missing")]) == 1
    assert main(["build", str(tmp_path / "missing")]) == 1
    assert capsys.readouterr().err.count("ngcc: error: ") == 2


def test_an_unreadable_file_and_a_missing_run_directory_are_said_plainly(tmp_path, capsys):
    assert main(["hash", "SM3", str(tmp_path / "nonexist.bin")]) == 1
    assert capsys.readouterr().err == "ngcc: error: cannot read %s: No such file or directory\n" \
        % (tmp_path / "nonexist.bin")
    assert main(["report", str(tmp_path / "nothere")]) == 1
    assert "nothere does not exist" in capsys.readouterr().err


def test_html_tables_align_figures_right():
    page = _export.html_pages({"p.md": "# t\n\n| instance | mean | n |\n|---|---|---|\n"
                                       "| `SM3` | 17.5 k | 240 (2 × 120) |\n"}, {})["p.html"]
    assert "<td><code>SM3</code></td>" in page
    assert '<td class="num">17.5\u00a0k</td><td class="num">240 (2\u00a0×\u00a0120)</td>' in page
    assert "td.num{text-align:right" in page


def test_the_rightmost_mean_label_leans_away_from_the_legend():
    import numpy as np

    from ngcc.report.plots import distribution as _distribution

    rng = np.random.default_rng(1)
    quiet = [rng.normal(1000, 10, 2000) for _ in range(3)]
    spiky = rng.normal(1000, 10, 2000)
    spiky[:30] = 1e7  # rare slow calls pull the last trial's mean beyond the axis
    figure = _distribution.distribution([*quiet, spiky], "x", unit="ticks/call")
    axes = figure.axes[0]
    (label,) = [t for t in axes.texts if t.get_text().startswith("mean ")]
    assert label.get_horizontalalignment() == "right"
    assert axes.get_ylabel().startswith("ticks/call")
