"""Plots: what is drawn (series, markers, legends, scales, panels) and the files.

Each plot is built from small synthetic data and inspected through matplotlib's
artists; nothing here times anything. Files are saved at a low dpi except where the
resolution itself is the point.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
from _fakerun import make_run
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ngcc.base.errors import PlotDataError
from ngcc.evidence.run import Run, load_run
from ngcc.report.plots import common as _common
from ngcc.report.plots import cycles as _cycles
from ngcc.report.plots import distribution as _distribution
from ngcc.report.plots import leak_plot as _leak_plot
from ngcc.report.plots import ratio as _ratio
from ngcc.report.plots.cycles import CpbSeries
from ngcc.report.plots.ratio import RatioSeries

LENGTHS = [32, 128, 1024, 65536]


def series(label: str, per_byte: float, fixed: float = 2000.0, group: str = "",
           kat_passed: bool = True) -> CpbSeries:
    cpb = [per_byte + fixed / n for n in LENGTHS]
    return CpbSeries(label, LENGTHS, cpb, [v * 0.9 for v in cpb], [v * 1.2 for v in cpb],
                     kat_passed, group)


def frame(rows: list[CpbSeries], **columns: list[object]) -> pd.DataFrame:
    """The summary-table shape of ``rows`` (as Run.summary gives it), plus ``columns``
    given per series."""
    records = []
    for index, item in enumerate(rows):
        for n, cpb, low, high in zip(item.message_bytes, item.cycles_per_byte,
                                     item.ci_low or [], item.ci_high or [], strict=True):
            record = {"candidate": item.group or "hash-22", "instance": item.label,
                      "variant": "ref", "message_bytes": n, "cycles_per_byte": cpb,
                      "cpb_ci_low": low, "cpb_ci_high": high, "kat_passed": item.kat_passed}
            record.update({name: values[index] for name, values in columns.items()})
            records.append(record)
    return pd.DataFrame(records)


def legend_of(axes: Axes) -> list[tuple[str, Line2D]]:
    """(text, handle) of every entry of the legend that belongs to ``axes``: its own,
    or, for a panel of a grid, that of its subfigure."""
    legend = axes.get_legend()
    if legend is None:
        (legend,) = axes.get_figure(root=False).legends  # type: ignore[union-attr]
    return [(t.get_text(), h) for t, h in zip(legend.get_texts(), legend.legend_handles,
                                               strict=True)]


def drawn_lines(axes: Axes) -> list[Line2D]:
    """The data line of every error-bar series, in drawing order."""
    return [container.lines[0] for container in axes.containers]


def hlines_at(axes: Axes) -> list[float]:
    """The y of every horizontal line across the axes (axhline)."""
    return [float(line.get_ydata()[0]) for line in axes.lines
            if len(line.get_xdata()) == 2 and list(line.get_xdata()) == [0, 1]]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return load_run(make_run(tmp_path_factory.mktemp("run") / "run", calls=100))


# ------------------------------------------------------------------ the y-scale rule

def test_y_scale_rule_turns_log_beyond_ten_times() -> None:
    assert not _common.uses_log_scale([5.0, 50.0])          # exactly 10×: linear
    assert _common.uses_log_scale([5.0, 50.5])
    assert not _common.uses_log_scale([0.0, -3.0, 5.0, 40.0, float("nan")])  # positives only
    assert not _common.uses_log_scale([])


@pytest.mark.parametrize(("long_message", "scale"), [(10.0, "linear"), (2.0, "log")])
def test_cycles_per_byte_scale_and_unit_on_the_axis(long_message: float, scale: str) -> None:
    # 10 + 2000/32 = 72.5 vs 10.03: 7×; 2 + 62.5 = 64.5 vs 2.03: 32×
    axes = _cycles.cycles_per_byte([series("A", long_message)], unit="ticks/byte").axes[0]
    assert axes.get_yscale() == scale
    assert axes.get_ylabel() == f"ticks/byte ({scale} scale)"
    if scale == "linear":
        assert axes.get_ylim()[0] == 0


def test_every_plot_states_its_y_scale() -> None:
    rng = np.random.default_rng(3)
    figures = [
        _cycles.cycles_per_byte([series("A", 10.0)]),
        _distribution.distribution([rng.normal(1000, 20, 200)]),
        _ratio.ratio_plot([RatioSeries("A/B", [32], [0.5], [0.4], [0.6])]),
        _leak_plot.leak_trace_plot([100, 1000], {"raw": [1.0, 2.0]}),
    ]
    for figure in figures:
        label = figure.axes[0].get_ylabel()
        assert label.endswith(f"({figure.axes[0].get_yscale()} scale)"), label


# ------------------------------------------------------------------ cycles/byte

def test_cycles_per_byte_axes_and_lines() -> None:
    figure = _cycles.cycles_per_byte([series("A", 10.0), series("B", 12.0)], "title")
    (axes,) = figure.axes
    assert axes.get_xscale() == "log" and axes.xaxis.get_transform().base == 2
    assert list(axes.get_xticks()) == LENGTHS
    assert [t.get_text() for t in axes.get_xticklabels()] == ["32 B", "128 B", "1 KiB",
                                                              "64 KiB"]
    assert axes.get_title() == "title"
    assert len(axes.containers) == 2  # one error-bar line per library
    line = drawn_lines(axes)[0]
    assert list(line.get_xdata()) == LENGTHS
    np.testing.assert_allclose(np.asarray(line.get_ydata(), dtype=float),
                               [10 + 2000 / n for n in LENGTHS])


def test_legend_matches_the_lines_and_says_what_the_bars_are() -> None:
    figure = _cycles.cycles_per_byte([series(f"L{i}", 10.0 + i) for i in range(8)])
    (axes,) = figure.axes
    entries = legend_of(axes)
    lines = drawn_lines(axes)
    assert [text for text, _ in entries] == [f"L{i}" for i in range(8)]
    for (_, handle), line in zip(entries, lines, strict=True):
        assert handle.get_marker() == line.get_marker()
        assert handle.get_color() == line.get_color()
        assert handle.get_linestyle() == line.get_linestyle()
    assert len({line.get_color() for line in lines}) == 8  # distinct colours
    assert len({line.get_marker() for line in lines}) == 8  # and distinct markers
    assert axes.get_legend().get_title().get_text() == "mean, 95 % CI bars"


def test_error_bars_span_the_confidence_interval() -> None:
    bars = _cycles.cycles_per_byte([series("A", 10.0)]).axes[0].containers[0]
    segments = bars.lines[2][0].get_segments()
    expected = np.array([10 + 2000 / n for n in LENGTHS])
    np.testing.assert_allclose([s[0][1] for s in segments], expected * 0.9)
    np.testing.assert_allclose([s[1][1] for s in segments], expected * 1.2)


def test_a_lower_bound_below_zero_stops_at_zero() -> None:
    skewed = CpbSeries("A", [32, 64], [100.0, 1.0], [-50.0, 0.5], [150.0, 1.5])
    axes = _cycles.cycles_per_byte([skewed]).axes[0]
    assert axes.get_yscale() == "log"
    lows = [s[0][1] for s in axes.containers[0].lines[2][0].get_segments()]
    assert lows == [0.0, 0.5]


def test_a_library_without_kat_pass_is_dashed_and_marked() -> None:
    axes = _cycles.cycles_per_byte([series("fast", 6.0),
                                  series("slow", 5000.0, kat_passed=False)]).axes[0]
    assert [text for text, _ in legend_of(axes)] == ["fast", "slow ⚠ no KAT pass"]
    assert [line.get_linestyle() for line in drawn_lines(axes)] == ["-", "--"]
    assert legend_of(axes)[1][1].get_linestyle() == "--"


def test_a_summary_table_gives_one_series_per_label() -> None:
    theirs, ours = series("Pavelor-512", 100.0), series("Pavelor-512", 150.0)
    table = frame([theirs, ours], label=["Pavelor-512@perf", "Pavelor-512"])
    axes = _cycles.cycles_per_byte(table).axes[0]
    assert [text for text, _ in legend_of(axes)] == ["Pavelor-512@perf", "Pavelor-512"]
    for line in drawn_lines(axes):  # never a zig-zag: each line once over the lengths
        assert list(line.get_xdata()) == LENGTHS


def test_without_labels_the_variant_tells_libraries_apart() -> None:
    table = frame([series("Wish512", 3000.0), series("Wish512", 2000.0)],
                  variant=["ref", "opt"])
    assert [s.label for s in _cycles.series_from_frame(table)] == ["Wish512", "Wish512@opt"]


def test_two_libraries_under_one_label_are_refused() -> None:
    table = frame([series("Pavelor-512", 100.0), series("Pavelor-512", 150.0)])
    with pytest.raises(PlotDataError, match=r"'Pavelor-512'.*twice at 32 B.*--label"):
        _cycles.cycles_per_byte(table)
    with pytest.raises(PlotDataError, match=r"two series are labelled 'A'"):
        _cycles.cycles_per_byte([series("A", 1.0), series("A", 2.0)])
    with pytest.raises(PlotDataError, match=r"'A'.*differ in length"):
        _cycles.cycles_per_byte([CpbSeries("A", [32, 64], [1.0])])


def test_nine_series_or_more_are_drawn_in_panels() -> None:
    groups = {"hash-22": 4, "hash-34": 3, "baseline": 2}
    many = [series(f"{g}-{i}", 10.0 * (k + 1) + i, group=g)
            for k, (g, n) in enumerate(groups.items()) for i in range(n)]
    figure = _cycles.cycles_per_byte(many, "Run X", unit="ticks/byte")
    assert len(figure.axes) == 3
    assert figure.get_suptitle() == "Run X"
    first = figure.axes[0]
    for axes, (group, count) in zip(figure.axes, groups.items(), strict=True):
        assert axes.get_title() == group
        assert len(axes.containers) == count
        assert [text for text, _ in legend_of(axes)] == [f"{group}-{i}" for i in range(count)]
        assert axes.get_ylabel().startswith("ticks/byte (")
        assert axes.get_shared_x_axes().joined(first, axes)
        assert [t.get_text() for t in axes.get_xticklabels()] == ["32 B", "128 B", "1 KiB",
                                                                  "64 KiB"]
    assert len(_cycles.cycles_per_byte(many[:8]).axes) == 1


def test_a_whole_run_of_twenty_keeps_colours_and_markers_distinct_per_panel() -> None:
    many = [series(f"c{c}-{i}", 5.0 * (c + 1) + i, group=f"hash-{c}")
            for c in range(5) for i in range(4)]
    figure = _cycles.cycles_per_byte(many)
    assert len(figure.axes) == 5
    for axes in figure.axes:
        lines = drawn_lines(axes)
        assert len({line.get_color() for line in lines}) == len(lines) == 4
        assert len({line.get_marker() for line in lines}) == 4


def test_a_crowded_candidate_keeps_the_builds_of_an_instance_together() -> None:
    builds = [series(f"Pavelor-{bits}{suffix}", 100.0, group="hash-22")
              for bits in (256, 384, 512, 1024) for suffix in ("", "@perf", "@opt")]
    figure = _cycles.cycles_per_byte(builds)
    titles = [axes.get_title() for axes in figure.axes]
    assert titles == ["hash-22: Pavelor-256, Pavelor-384", "hash-22: Pavelor-512, Pavelor-1024"]
    assert [text for text, _ in legend_of(figure.axes[1])][:3] == [
        "Pavelor-512", "Pavelor-512@perf", "Pavelor-512@opt"]


def test_nothing_measured_is_a_figure_that_says_so() -> None:
    axes = _cycles.cycles_per_byte([]).axes[0]
    assert [t.get_text() for t in axes.texts] == ["nothing measured"]
    empty = frame([series("A", 1.0)]).iloc[0:0]  # a summary of a run that measured nothing
    assert _cycles.cycles_per_byte(empty).axes[0].texts[0].get_text() == "nothing measured"


# ------------------------------------------------------------------ distributions

def distribution_legend(axes: Axes) -> dict[str, object]:
    return dict(legend_of(axes))


def test_distribution_one_violin_per_trial_and_a_legend_of_its_markers() -> None:
    rng = np.random.default_rng(1)
    trials = [rng.integers(1000, 1100, 500).astype(np.uint64) for _ in range(4)]
    trials[3][:5] = 10**7  # five interrupted calls pull trial 3's mean far up
    axes = _distribution.distribution(trials, "d", unit="ticks/call").axes[0]
    violins = [c for c in axes.collections if isinstance(c, PolyCollection)]
    assert len(violins) == 4
    assert [t.get_text() for t in axes.get_xticklabels()] == [f"trial {i}" for i in range(4)]
    assert axes.get_ylim()[1] < 2000  # the outliers do not squash the violins
    assert axes.get_ylabel() == "ticks/call (linear scale)"
    assert axes.get_xlabel() == ("y axis clipped to the 0.5th–99.5th percentile of all 2000 "
                                 "calls: 5 not drawn")  # the five far ones
    assert [t.get_text() for t in axes.texts] == [
        "mean %.0f" % trials[3].astype(float).mean()]
    legend = distribution_legend(axes)
    assert list(legend) == ["calls of a trial (density)", "median of a trial",
                            "mean of a trial", "mean above the axis (value beside)"]
    drawn = {line.get_label(): line for line in axes.lines}
    for text in list(legend)[1:]:  # each marker entry is the very line drawn
        assert legend[text].get_marker() == drawn[text].get_marker()
        assert legend[text].get_markerfacecolor() == drawn[text].get_markerfacecolor()
    assert drawn["mean of a trial"].get_marker() == "o"
    assert drawn["mean above the axis (value beside)"].get_marker() == "^"
    assert list(drawn["mean of a trial"].get_xdata()) == [0, 1, 2]
    assert list(drawn["mean above the axis (value beside)"].get_ydata()) == [1.0]  # the edge


def test_distribution_without_far_means_has_no_triangle_entry() -> None:
    rng = np.random.default_rng(2)
    trials = [rng.normal(1000, 10, 300) for _ in range(3)]
    trials[0][:2] = 10.0  # two fast calls below the clip: ▼ only if the mean left the axis
    axes = _distribution.distribution(trials).axes[0]
    assert "mean of a trial" in distribution_legend(axes)
    assert not any("the axis" in text for text in distribution_legend(axes))
    assert axes.get_ylabel() == "cycles/call (linear scale)"


def test_distribution_mean_below_the_axis_is_a_down_triangle() -> None:
    trials = [np.full(100, 1000.0), np.r_[np.full(99, 1000.0), -1e6]]
    axes = _distribution.distribution(trials).axes[0]
    assert "mean below the axis (value beside)" in distribution_legend(axes)
    below = [line for line in axes.lines if line.get_label().startswith("mean below")]
    assert below[0].get_marker() == "v" and list(below[0].get_ydata()) == [0.0]


def test_distribution_of_a_wide_spread_turns_log() -> None:
    trials = [np.geomspace(100, 100_000, 1000)]
    axes = _distribution.distribution(trials).axes[0]
    assert axes.get_yscale() == "log"
    assert axes.get_ylabel() == "cycles/call (log scale)"


def test_distribution_of_constant_calls() -> None:
    trials = [np.full(50, 1234, dtype=np.uint64), np.full(50, 1234, dtype=np.uint64)]
    axes = _distribution.distribution(trials).axes[0]
    low, high = axes.get_ylim()
    assert low < 1234 < high
    assert "calls of a trial (density)" not in distribution_legend(axes)  # no violin drawn


# ------------------------------------------------------------------ ratio (compare)

def pair(label: str, ratios: list[float], significant: list[bool] | None = None,
         geometric_mean: float | None = None) -> RatioSeries:
    return RatioSeries(label, LENGTHS, ratios, [r * 0.9 for r in ratios],
                       [r * 1.1 for r in ratios], significant, geometric_mean)


def test_ratio_plot_is_log_centred_on_one_with_bars_and_regions() -> None:
    figure = _ratio.ratio_plot([pair("opt/ref", [0.5, 0.6, 0.7, 0.8], geometric_mean=0.64)],
                              "theirs vs ours", a="theirs", b="ours")
    (axes,) = figure.axes
    assert axes.get_yscale() == "log"
    low, high = axes.get_ylim()
    assert low * high == pytest.approx(1.0) and high > 1 / (0.5 * 0.9)  # holds the bars
    assert axes.get_ylabel() == "median of theirs / median of ours (log scale)"
    assert 1.0 in hlines_at(axes) and 0.64 in hlines_at(axes)
    texts = [t.get_text() for t in axes.texts]
    assert texts == ["▲ ours faster", "▼ theirs faster"]
    segments = axes.containers[0].lines[2][0].get_segments()
    np.testing.assert_allclose([s[0][1] for s in segments], [0.45, 0.54, 0.63, 0.72])
    np.testing.assert_allclose([s[1][1] for s in segments], [0.55, 0.66, 0.77, 0.88])
    assert [t for t, _ in legend_of(axes)] == ["opt/ref", "geometric mean 0.64×"]
    assert [t.get_text() for t in axes.get_yticklabels()][:1] == ["0.5×"]


def test_ratio_plot_marks_insignificant_points_hollow() -> None:
    figure = _ratio.ratio_plot([pair("p", [1.0, 1.02, 0.7, 0.6], [False, False, True, True]),
                               pair("q", [1.5, 1.4, 1.3, 1.2])])
    (axes,) = figure.axes
    markers = [line for line in axes.lines if line.get_marker() not in ("None", "none", "")
               and len(line.get_xdata())]
    filled = {(line.get_color(), line.get_markerfacecolor() != "white", len(line.get_xdata()))
              for line in markers}
    assert ("#1f77b4", True, 2) in filled and ("#1f77b4", False, 2) in filled
    assert ("#ff7f0e", True, 4) in filled
    entries = legend_of(axes)
    assert [t for t, _ in entries] == ["p", "q", "hollow: not significant"]
    assert entries[0][1].get_marker() != entries[1][1].get_marker()
    assert entries[2][1].get_markerfacecolor() == "white"
    # drawn slightly apart along x so the bars do not cover each other
    p_x, q_x = (max(line.get_xdata()[-1] for line in markers if line.get_color() == colour)
                for colour in ("#1f77b4", "#ff7f0e"))
    assert p_x != q_x and p_x == pytest.approx(65536, rel=0.1) == q_x


def test_ratio_plot_refuses_non_positive_ratios() -> None:
    with pytest.raises(PlotDataError, match="positive"):
        _ratio.ratio_plot([RatioSeries("p", [32], [0.5], [-0.1], [0.9])])
    with pytest.raises(PlotDataError, match="two series are labelled 'p'"):
        _ratio.ratio_plot([pair("p", [1.0] * 4), pair("p", [2.0] * 4)])


# ------------------------------------------------------------------ leakage trace

CALLS = [1000, 10_000, 100_000, 1_000_000]


def test_leak_trace_draws_tests_max_and_labelled_thresholds() -> None:
    traces = {"raw": [0.5, 2.0, 6.0, 20.0], "crop 50 %": [-0.3, -1.0, 1.0, 3.0],
              "second order": [1.0, 1.1, 0.9, 1.2]}
    figure = _leak_plot.leak_trace_plot(CALLS, traces, "LEAK")
    (axes,) = figure.axes
    assert axes.get_xscale() == "log"
    assert axes.get_yscale() == "log"  # 20 / 1 (the max) > 10×
    assert sorted(hlines_at(axes)) == [4.5, 10.0]
    assert [t.get_text() for t in axes.texts] == [
        "above 10: LEAK", "4.5–10: possible leak", "below 4.5: no leak detected"]
    entries = legend_of(axes)
    assert [t for t, _ in entries] == ["raw", "crop 50 %", "second order", "max |t| of 3 tests"]
    peak = next(line for line in axes.lines if line.get_label() == "max |t| of 3 tests")
    assert list(peak.get_ydata()) == [1.0, 2.0, 6.0, 20.0]  # |t|: the sign is dropped
    crop = next(line for line in axes.lines if line.get_label() == "crop 50 %")
    assert list(crop.get_ydata()) == [0.3, 1.0, 1.0, 3.0]
    label = axes.xaxis.get_major_formatter()
    assert [label(n, 0) for n in (100, 1000, 10**6)] == ["100", "1 k", "1 M"]


def test_leak_trace_of_many_tests_is_grey_under_one_entry() -> None:
    rng = np.random.default_rng(5)
    traces = {f"crop {p}": rng.normal(0, 1, len(CALLS)) for p in range(100)}
    axes = _leak_plot.leak_trace_plot(CALLS, traces).axes[0]
    assert [t for t, _ in legend_of(axes)] == ["each of 100 tests", "max |t| of 100 tests"]
    assert len([line for line in axes.lines if len(line.get_xdata()) == 4]) == 101
    assert axes.get_yscale() == "linear" and axes.get_ylim()[0] == 0
    only = _leak_plot.leak_trace_plot(CALLS, traces, max_only=True).axes[0]
    assert [t for t, _ in legend_of(only)] == ["max |t| of 100 tests"]


def test_leak_trace_refuses_a_trace_of_another_length() -> None:
    with pytest.raises(PlotDataError, match="'raw' has 2 values for 4 call counts"):
        _leak_plot.leak_trace_plot(CALLS, {"raw": [1.0, 2.0]})


# ------------------------------------------------------------------ files

PLOTS = {
    "cpb": lambda: _cycles.cycles_per_byte([series("A", 10.0), series("B", 300.0)], "t"),
    "cpb-panels": lambda: _cycles.cycles_per_byte(
        [series(f"x{i}", 5.0 + i, group=f"g{i % 3}") for i in range(9)], "t"),
    "distribution": lambda: _distribution.distribution(
        [np.random.default_rng(7).normal(1000, 30, 300) for _ in range(3)]),
    "ratio": lambda: _ratio.ratio_plot([pair("p", [0.5, 0.6, 0.7, 0.8], [True] * 4, 0.64)]),
    "leak": lambda: _leak_plot.leak_trace_plot(CALLS, {"raw": [0.5, 2.0, 6.0, 20.0]}),
}


@pytest.mark.parametrize("name", [name for name in PLOTS if name != "cpb"])
def test_every_plot_writes_png_and_svg(name: str, tmp_path: Path) -> None:
    png, svg = _common.save(PLOTS[name](), tmp_path / name, dpi=20)
    assert [png.name, svg.name] == [f"{name}.png", f"{name}.svg"]
    assert png.stat().st_size > 2_000
    assert svg.stat().st_size > 10_000
    assert svg.read_text().count("<path") > 20  # lines, markers and text drawn


def test_the_same_figure_gives_the_same_sharp_light_files(tmp_path: Path) -> None:
    # what could make two files of one figure differ (dates, ids) is save's, not a plot's
    first = _common.save(PLOTS["cpb"](), tmp_path / "a")
    second = _common.save(PLOTS["cpb"](), tmp_path / "b")
    assert first[1].read_bytes() == second[1].read_bytes()
    assert first[0].read_bytes() == second[0].read_bytes()
    assert first[1].stat().st_size > 10_000
    image = matplotlib.image.imread(first[0])
    assert image.shape[1] >= 1000  # 150 dpi: sharp in a README
    assert np.allclose(image[2, 2, :3], 1.0)  # white background, also in a dark viewer


def test_save_keeps_every_dot_of_a_label(tmp_path: Path) -> None:
    written = _common.save(Figure(figsize=(1, 1)), tmp_path / "Pavelor-512.external__hash_64-calls",
                         dpi=10)
    assert [p.name for p in written] == ["Pavelor-512.external__hash_64-calls.png",
                                         "Pavelor-512.external__hash_64-calls.svg"]


# ------------------------------------------------------------------ through a Run

def test_run_plots(run: Run) -> None:
    figure = run.plot_cpb()
    assert isinstance(figure, Figure)
    assert len(figure.axes[0].containers) == 3
    only = run.plot_cpb("hash-22")
    assert [text for text, _ in legend_of(only.axes[0])] == [
        "Pavelor-512", "Pavelor-1024 ⚠ no KAT pass"]
    violins = run.plot_distribution("Pavelor-512", 1024).axes[0]
    assert len(violins.get_xticklabels()) == 3


def test_length_labels() -> None:
    assert [_common.length_label(n) for n in (32, 1000, 1024, 16384)] == [
        "32 B", "1000 B", "1 KiB", "16 KiB"]


def test_a_label_measured_on_two_hosts_is_two_lines() -> None:
    # a distributed run: one library's lengths went to two machines; no line joins them
    table = frame([series("SM3", 100.0)], label=["SM3"])
    table = table.assign(host=["node-a" if i % 2 else "node-b" for i in range(len(table))])
    assert [s.label for s in _cycles.series_from_frame(table)] == ["SM3 (node-b)",
                                                                  "SM3 (node-a)"]
    one_host = table.assign(host="node-a")
    assert [s.label for s in _cycles.series_from_frame(one_host)] == ["SM3"]
