"""Plots: axes, lines, error bars and files (what they show, not how fast anything is)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
from _fakerun import make_run
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from ngcc import _plot
from ngcc._run import Run, load_run

LENGTHS = [32, 128, 1024, 65536]


def points(instances: dict[str, float], kat_passed: bool = True) -> pd.DataFrame:
    rows = []
    for name, long_message_cpb in instances.items():
        for length in LENGTHS:
            cpb = long_message_cpb + 2000.0 / length
            rows.append({"instance": name, "message_bytes": length, "cycles_per_byte": cpb,
                         "cpb_ci_low": cpb * 0.9, "cpb_ci_high": cpb * 1.2,
                         "kat_passed": kat_passed})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return load_run(make_run(tmp_path_factory.mktemp("run") / "run", calls=100))


def test_cycles_per_byte_axes_and_lines() -> None:
    figure = _plot.cycles_per_byte(points({"A": 10.0, "B": 12.0}), "title")
    axes = figure.axes[0]
    assert axes.get_xscale() == "log" and axes.xaxis.get_transform().base == 2
    assert list(axes.get_xticks()) == LENGTHS
    assert [t.get_text() for t in axes.get_xticklabels()] == ["32 B", "128 B", "1 KiB",
                                                              "64 KiB"]
    assert axes.get_yscale() == "linear" and axes.get_ylim()[0] == 0
    legend = [t.get_text() for t in axes.get_legend().get_texts()]
    assert legend == ["A", "B"]
    assert axes.get_title() == "title"
    assert len(axes.containers) == 2  # one error-bar line per instance
    line = axes.containers[0].lines[0]
    assert list(line.get_xdata()) == LENGTHS
    np.testing.assert_allclose(np.asarray(line.get_ydata(), dtype=float),
                               [10 + 2000 / n for n in LENGTHS])


def test_error_bars_span_the_confidence_interval() -> None:
    figure = _plot.cycles_per_byte(points({"A": 10.0}))
    bars = figure.axes[0].containers[0]
    segments = bars.lines[2][0].get_segments()
    lows = [segment[0][1] for segment in segments]
    highs = [segment[1][1] for segment in segments]
    expected = np.array([10 + 2000 / n for n in LENGTHS])
    np.testing.assert_allclose(lows, expected * 0.9)
    np.testing.assert_allclose(highs, expected * 1.2)


def test_wide_range_turns_log_and_warns_for_kat() -> None:
    frame = pd.concat([points({"fast": 6.0}), points({"slow": 5000.0}, kat_passed=False)])
    axes = _plot.cycles_per_byte(frame).axes[0]
    assert axes.get_yscale() == "log"
    legend = [t.get_text() for t in axes.get_legend().get_texts()]
    assert legend == ["fast", "slow ⚠ no KAT pass"]
    assert axes.containers[0].lines[0].get_linestyle() == "-"
    assert axes.containers[1].lines[0].get_linestyle() == "--"


def test_distribution_one_violin_per_trial() -> None:
    rng = np.random.default_rng(1)
    trials = [rng.integers(1000, 1100, 500).astype(np.uint64) for _ in range(4)]
    trials[3][:5] = 10**7  # five interrupted calls pull trial 3's mean far up
    axes = _plot.distribution(trials, "d").axes[0]
    violins = [c for c in axes.collections if isinstance(c, PolyCollection)]
    assert len(violins) == 4
    assert [t.get_text() for t in axes.get_xticklabels()] == [f"trial {i}" for i in range(4)]
    assert axes.get_xlabel().startswith("2000 calls; the ")
    assert axes.get_ylim()[1] < 2000  # the outliers do not squash the violins
    notes = [t.get_text() for t in axes.texts]
    assert notes == ["mean %.0f" % trials[3].astype(float).mean()]


def test_distribution_of_constant_calls() -> None:
    trials = [np.full(50, 1234, dtype=np.uint64), np.full(50, 1234, dtype=np.uint64)]
    axes = _plot.distribution(trials).axes[0]
    low, high = axes.get_ylim()
    assert low < 1234 < high


def test_save_writes_stable_light_files(tmp_path: Path) -> None:
    figure = _plot.cycles_per_byte(points({"A": 10.0}), "t")
    written = _plot.save(figure, tmp_path / "a")
    assert [p.name for p in written] == ["a.png", "a.svg"]
    again = _plot.save(_plot.cycles_per_byte(points({"A": 10.0}), "t"), tmp_path / "b")
    assert written[0].read_bytes() == again[0].read_bytes()
    assert written[1].read_bytes() == again[1].read_bytes()
    image = matplotlib.image.imread(written[0])
    assert image.shape[1] >= 1000  # 150 dpi: sharp in a README
    assert np.allclose(image[2, 2, :3], 1.0)  # white background, also in a dark viewer
    assert "<svg" in written[1].read_text()


def test_run_plots(run: Run) -> None:
    figure = run.plot_cpb()
    assert isinstance(figure, Figure)
    assert len(figure.axes[0].containers) == 3
    only = run.plot_cpb("hash-22")
    assert [t.get_text() for t in only.axes[0].get_legend().get_texts()] == [
        "Pavelor-512", "Pavelor-1024 ⚠ no KAT pass"]
    violins = run.plot_distribution("Pavelor-512", 1024).axes[0]
    assert len(violins.get_xticklabels()) == 3


def test_length_labels() -> None:
    assert [_plot.length_label(n) for n in (32, 1000, 1024, 16384)] == [
        "32 B", "1000 B", "1 KiB", "16 KiB"]
