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
    assert '<td class="num">17.5 k</td><td class="num">240 (2 × 120)</td>' in page
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
