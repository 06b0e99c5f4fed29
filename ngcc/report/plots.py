"""Plots of a run: cycles/byte against message length, per-call distributions, the
ratio of two libraries, a leakage test's |t| trace.

Every function takes plain data (sequences, numpy arrays, the small dataclasses
below) and builds a :class:`matplotlib.figure.Figure` without pyplot, so it neither
needs a display nor changes global state; Jupyter shows the returned figure, and
:func:`save` writes it as PNG and SVG. The style is fixed here (white background,
dark text, the tab10 colours) so a figure reads the same in a light notebook, in a
README and on paper, whatever the user's matplotlib defaults are.

Rules every plot keeps:

* **y scale**: logarithmic when the plotted values span more than
  :data:`LOG_SPAN` (10×), else linear (from 0 for per-byte figures), and the axis
  label ends in ``(log scale)`` or ``(linear scale)`` (:func:`y_scale`). The ratio
  plot is the one exception: a ratio is always drawn on a log axis centred on 1, so
  that 2× faster and 2× slower lie equally far from it.
* **series**: one per library label; two series never share a label, so a
  theirs-vs-ours run never joins two libraries into one zig-zag line.
* **panels**: up to :data:`SERIES_PER_PANEL` series share one axes; more are split
  into a grid of panels (one per group, e.g. per candidate, with a shared x axis),
  and inside a panel every series has its own colour and its own marker.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator
from matplotlib.transforms import blended_transform_factory

from ngcc.base.errors import PlotDataError

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
SERIES_PER_PANEL = len(MARKERS)
"""More series than this in one plot are split into panels (colours and markers stay
distinct inside a panel: 8 markers, 10 colours)."""
LOG_SPAN = 10.0
"""The y axis turns logarithmic when the largest plotted value exceeds the smallest
(positive) one by more than this factor."""
LEAK_THRESHOLDS = (4.5, 10.0)
"""max |t| below the first after enough calls: no leak detected; above the second: LEAK."""
DISTRIBUTION_CLIP = (0.5, 99.5)
"""Percentiles of the calls a distribution plot shows; interrupts put single calls far
out, and a few of them would squash every trial's shape into a line."""
NO_KAT_PASS = "⚠ no KAT pass"
PANEL = (5.0, 4.2)
"""Inches of one panel of a grid, its legend below it included."""

STYLE: dict[Any, Any] = {
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.edgecolor": "#333333",
    "axes.labelcolor": "#222222",
    "text.color": "#222222",
    "xtick.color": "#333333",
    "ytick.color": "#333333",
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.8,
    "axes.prop_cycle": cycler(color=list(COLOURS)),
    "font.size": 10,
    "legend.frameon": False,
    "svg.hashsalt": "ngcc",       # stable element ids: the same figure gives the same SVG
}


@dataclass(frozen=True)
class CpbSeries:
    """One library's cycles/byte at each measured length (one line of the plot).

    Attributes:
        label: the library's label in the run, unique among the series of a plot
            (``Pavelor-512``, ``Pavelor-512@perf``).
        message_bytes: the measured lengths.
        cycles_per_byte: the figure at each length (e.g. the mean per call / length).
        ci_low, ci_high: the bounds of its confidence interval at each length, in the
            same unit; None: no error bars.
        kat_passed: False when the library was timed without a KAT pass: drawn dashed,
            its legend entry carries ⚠.
        group: what it belongs to when a crowded plot is split into panels (the
            candidate id); series of one group share a panel.
    """

    label: str
    message_bytes: Sequence[int]
    cycles_per_byte: Sequence[float]
    ci_low: Sequence[float] | None = None
    ci_high: Sequence[float] | None = None
    kat_passed: bool = True
    group: str = ""


@dataclass(frozen=True)
class RatioSeries:
    """The ratio of one pair of libraries (A / B) at each length, with its CI.

    Attributes:
        label: the pair, e.g. ``Wish512@opt / Wish512``.
        message_bytes: the lengths both sides measured.
        ratio: A's figure divided by B's (a time per call: below 1, A is faster).
        ci_low, ci_high: the bounds of the ratio's confidence interval (> 0).
        significant: per length, whether the difference is significant; not
            significant points are drawn hollow. None: all drawn filled.
        geometric_mean: the pair's geometric mean ratio across lengths, drawn as a
            dashed line in the pair's colour; None: not drawn.
        group: as in :class:`CpbSeries`, for more than eight pairs.
    """

    label: str
    message_bytes: Sequence[int]
    ratio: Sequence[float]
    ci_low: Sequence[float]
    ci_high: Sequence[float]
    significant: Sequence[bool] | None = None
    geometric_mean: float | None = None
    group: str = ""


# ------------------------------------------------------------------ shared rules

def length_label(message_bytes: int) -> str:
    """Axis label of a message length: ``32 B``, ``1 KiB``, ``64 KiB``."""
    if message_bytes >= 1024 and message_bytes % 1024 == 0:
        return f"{message_bytes // 1024} KiB"
    return f"{message_bytes} B"


def uses_log_scale(values: Sequence[float] | np.ndarray) -> bool:
    """The y-scale rule: True when the positive finite ``values`` span more than
    :data:`LOG_SPAN` (max / min > 10)."""
    array = np.asarray(values, dtype=np.float64).ravel()
    positive = array[np.isfinite(array) & (array > 0)]
    return bool(len(positive)) and float(positive.max() / positive.min()) > LOG_SPAN


def y_scale(axes: Axes, values: Sequence[float] | np.ndarray, quantity: str,
            from_zero: bool = True) -> str:
    """Apply the y-scale rule to ``axes`` and label it; return ``"log"`` or ``"linear"``.

    The label is ``<quantity> (log scale)`` or ``<quantity> (linear scale)``. A linear
    axis starts at 0 when ``from_zero`` (bars of a positive quantity read honestly).
    """
    if uses_log_scale(values):
        axes.set_yscale("log", nonpositive="clip")
        _log_ticks(axes.yaxis, values)
        axes.set_ylabel(f"{quantity} (log scale)")
        return "log"
    axes.set_yscale("linear")
    if from_zero:
        axes.set_ylim(bottom=0)
    axes.set_ylabel(f"{quantity} (linear scale)")
    return "linear"


def _log_ticks(axis: Any, values: Sequence[float] | np.ndarray) -> None:
    """Plain numbers (``20``, ``500``, ``2000``) at 1-2-5 steps on a log axis, fewer
    steps when it spans many decades: a reader should not decode ``10^3``."""
    array = np.asarray(values, dtype=np.float64).ravel()
    positive = array[np.isfinite(array) & (array > 0)]
    decades = math.log10(positive.max() / positive.min()) if len(positive) else 0.0
    subs = (1.0, 2.0, 5.0) if decades <= 3 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10))))
    axis.set_major_formatter(FuncFormatter(lambda v, _: _number(v)))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def _number(value: float) -> str:
    if value >= 1e5 or value < 1e-3:
        return f"{value:.0e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{value:g}"


def _length_axis(axes: Axes, lengths: Sequence[int]) -> None:
    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_locator(FixedLocator([float(n) for n in lengths]))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _: length_label(round(v))))
    if len(lengths) > 6:
        axes.tick_params(axis="x", labelrotation=45)
    axes.set_xlabel("message length (log₂ scale)")


def _check_lengths(label: str, columns: Mapping[str, Sequence[Any] | None]) -> None:
    sizes = {name: len(column) for name, column in columns.items() if column is not None}
    if len(set(sizes.values())) > 1:
        raise PlotDataError(f"series {label!r}: its columns differ in length ("
                            + ", ".join(f"{k} {v}" for k, v in sizes.items()) + ")")


def _check_unique(labels: Sequence[str]) -> None:
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise PlotDataError(f"two series are labelled {label!r}: each library of a "
                                "plot needs its own label (e.g. Pavelor-512@perf)")
        seen.add(label)


def _grid(count: int, panel: tuple[float, float], title: str) -> tuple[Figure, list[Axes]]:
    """A figure of ``count`` panels, three per row at most. Each panel of several is a
    subfigure of its own, with its legend below its axes (no legend covers a line),
    and all share the x axis of the first."""
    columns = 1 if count == 1 else 2 if count <= 4 else 3
    rows = math.ceil(count / columns)
    figure = Figure(figsize=(panel[0] * columns, panel[1] * rows + (0.4 if title else 0)),
                    dpi=100, layout="constrained")
    if count <= 1:
        return figure, [figure.add_subplot()]
    if title:
        figure.suptitle(title)
    cells = figure.subfigures(rows, columns, squeeze=False)
    axes: list[Axes] = []
    for cell in [c for row in cells for c in row][:count]:
        axes.append(cell.add_subplot(sharex=axes[0] if axes else None))
    return figure, axes


def _title(axes: Axes, text: str, single: bool) -> None:
    if single:
        axes.set_title(text, pad=10)
    else:
        axes.set_title(text, fontsize=10)


def _legend(axes: Axes, single: bool, handles: Sequence[Any] | None = None,
            title: str | None = None) -> None:
    """The legend right of a lone axes, or below the axes of a panel."""
    if handles is None:
        handles = axes.get_legend_handles_labels()[0]
    if single:
        axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9,
                    title=title, title_fontsize=9, alignment="left")
    else:
        axes.get_figure(root=False).legend(  # type: ignore[union-attr]
            handles=handles, loc="outside lower center", ncols=2, fontsize=8, title=title,
            title_fontsize=8)


def _panels(items: Sequence[Any]) -> list[tuple[str, list[Any]]]:
    """Split series (with ``label`` and ``group``) into panels of at most
    :data:`SERIES_PER_PANEL`: all in one when they fit, else one panel per group; a
    group that is still too big keeps the builds of one instance together (the label
    before ``@``) and fills panels in order."""
    if len(items) <= SERIES_PER_PANEL:
        return [("", list(items))]
    groups: dict[str, list[Any]] = {}
    for item in items:
        groups.setdefault(item.group, []).append(item)
    panels: list[tuple[str, list[Any]]] = []
    for group, members in groups.items():
        packed = _pack(members)
        for chunk in packed:
            instances = ", ".join(dict.fromkeys(_instance_of(item.label) for item in chunk))
            if len(packed) == 1:
                panels.append((group, chunk))
            else:
                panels.append((f"{group}: {instances}" if group else instances, chunk))
    return panels


def _instance_of(label: str) -> str:
    """The instance part of a label: ``Pavelor-512`` of ``Pavelor-512@perf``."""
    return label.split("@")[0]


def _pack(members: Sequence[Any]) -> list[list[Any]]:
    by_instance: dict[str, list[Any]] = {}
    for item in members:
        by_instance.setdefault(_instance_of(item.label), []).append(item)
    packed: list[list[Any]] = [[]]
    for builds in by_instance.values():
        for start in range(0, len(builds), SERIES_PER_PANEL):
            chunk = builds[start:start + SERIES_PER_PANEL]
            if len(packed[-1]) + len(chunk) > SERIES_PER_PANEL:
                packed.append([])
            packed[-1].extend(chunk)
    return packed


def _nothing(figure: Figure, axes: Axes, text: str) -> Figure:
    axes.text(0.5, 0.5, text, transform=axes.transAxes, ha="center", va="center")
    axes.set_xticks([])
    axes.set_yticks([])
    return figure


# ------------------------------------------------------------------ cycles/byte

def series_from_frame(points: Any) -> list[CpbSeries]:
    """The :class:`CpbSeries` of a summary table (a pandas DataFrame as
    :meth:`ngcc.Run.summary` returns it: one row per library × message length).

    The series key is the ``label`` column when there is one, else the instance with
    ``@variant`` for a variant other than ``ref``, with `` (host)`` after it when the
    ``host`` column names more than one host (a line never joins two hosts);
    ``candidate`` is the group;
    ``cpb_ci_low``/``cpb_ci_high`` give the error bars and ``kat_passed`` (false on
    any row) the ⚠. Two rows of one key at one length are two libraries that would
    be drawn as one line: refused.

    Raises:
        PlotDataError: a key with two rows at one length, or a missing column.
    """
    columns = set(points.columns)
    missing = {"message_bytes", "cycles_per_byte"} - columns
    if missing or not ({"label", "instance"} & columns):
        raise PlotDataError("a cycles/byte table needs the columns label (or instance), "
                            "message_bytes and cycles_per_byte; missing: "
                            + ", ".join(sorted(missing) or ["label"]))
    keys = [_frame_key(row) for row in points.to_dict("records")]
    if "host" in columns and points["host"].nunique() > 1:  # never one line across hosts
        keys = [f"{key} ({row_host})" for key, row_host in zip(keys, points["host"],
                                                               strict=True)]
    frame = points.assign(_series=keys)
    series = []
    for key, rows in frame.groupby("_series", sort=False):
        rows = rows.sort_values("message_bytes")
        lengths = [int(n) for n in rows["message_bytes"]]
        twice = sorted({n for n in lengths if lengths.count(n) > 1})
        if twice:
            raise PlotDataError(f"{key!r} has {len(lengths)} rows for {len(set(lengths))} "
                                f"lengths (twice at {twice[0]} B): two libraries share the "
                                "label; give each its own (--label)")
        bars = {"cpb_ci_low", "cpb_ci_high"} <= columns
        series.append(CpbSeries(
            label=str(key), message_bytes=lengths,
            cycles_per_byte=[float(v) for v in rows["cycles_per_byte"]],
            ci_low=[float(v) for v in rows["cpb_ci_low"]] if bars else None,
            ci_high=[float(v) for v in rows["cpb_ci_high"]] if bars else None,
            kat_passed=bool(rows["kat_passed"].all()) if "kat_passed" in columns else True,
            group=str(rows["candidate"].iloc[0]) if "candidate" in columns else ""))
    return series


def _frame_key(row: Mapping[str, Any]) -> str:
    label = row.get("label")
    if isinstance(label, str) and label:
        return label
    variant = row.get("variant")
    if isinstance(variant, str) and variant not in ("", "ref"):
        return f"{row['instance']}@{variant}"
    return str(row["instance"])


def cycles_per_byte(points: Any, title: str = "", unit: str = "cycles/byte",
                    statistic: str = "mean") -> Figure:
    """Cycles/byte against message length: one line per library, CI error bars.

    Args:
        points: a sequence of :class:`CpbSeries`, or a summary table (see
            :func:`series_from_frame`).
        title: the figure title.
        unit: what the values are, named on the y axis: ``ticks/byte``,
            ``core cycles/byte``.
        statistic: which figure per call the values are, named in the legend's title
            with the bars (``mean, 95 % CI bars``).

    The x axis is log2 with a tick at every measured length; each y axis follows the
    y-scale rule of :func:`y_scale`. Up to eight series share one axes; more are
    drawn as a grid of panels (one per group, a big group split with the builds of
    one instance kept together), each with its own y scale. A series timed without
    a KAT pass is dashed and its legend entry ends in ⚠.

    Raises:
        PlotDataError: two series with one label, or columns of unequal length.
    """
    series = list(points) if _is_series_list(points) else series_from_frame(points)
    _check_unique([s.label for s in series])
    for item in series:
        _check_lengths(item.label, {"message_bytes": item.message_bytes,
                                    "cycles_per_byte": item.cycles_per_byte,
                                    "ci_low": item.ci_low, "ci_high": item.ci_high})
    lengths = sorted({int(n) for s in series for n in s.message_bytes})
    panels = _panels(series)
    with matplotlib.rc_context(STYLE):
        single = len(panels) == 1
        figure, axes_list = _grid(len(panels), (8.0, 4.2) if single else PANEL, title)
        if not series:
            return _nothing(figure, axes_list[0], "nothing measured")
        bars = f"{statistic}, 95 % CI bars" if any(s.ci_low for s in series) else statistic
        for axes, (name, members) in zip(axes_list, panels, strict=True):
            handles = _cpb_panel(axes, members, unit)
            _length_axis(axes, lengths)
            _title(axes, title if single else name, single)
            _legend(axes, single, handles, title=bars)
    return figure


def _is_series_list(points: Any) -> bool:
    return isinstance(points, Sequence) and all(isinstance(p, CpbSeries) for p in points)


def _cpb_panel(axes: Axes, members: Sequence[CpbSeries], unit: str) -> list[Line2D]:
    """Draw the series; return one legend handle each, with the line's own colour,
    marker and line style (an error-bar handle would show the bar, not the marker)."""
    plotted: list[float] = []
    handles = []
    for index, item in enumerate(members):
        x = np.asarray(item.message_bytes, dtype=np.float64)
        y = np.asarray(item.cycles_per_byte, dtype=np.float64)
        keep = np.isfinite(y)
        yerr = None
        if item.ci_low is not None and item.ci_high is not None:
            # a bound below zero (a skewed CI) would run off a log axis: stop it at 0
            low = np.minimum(y - np.asarray(item.ci_low, dtype=np.float64), y)
            high = np.asarray(item.ci_high, dtype=np.float64) - y
            yerr = np.nan_to_num(np.vstack([low.clip(min=0), high.clip(min=0)])[:, keep])
        style: dict[str, Any] = {"color": COLOURS[index % len(COLOURS)],
                                 "marker": MARKERS[index], "markersize": 5, "linewidth": 1.6,
                                 "linestyle": "-" if item.kat_passed else "--"}
        axes.errorbar(x[keep], y[keep], yerr=yerr, capsize=3, **style)
        label = item.label if item.kat_passed else f"{item.label} {NO_KAT_PASS}"
        handles.append(Line2D([], [], label=label, **style))
        plotted.extend(y[keep])
    y_scale(axes, plotted, unit)
    return handles


# ------------------------------------------------------------------ distributions

def distribution(cycles_by_trial: Sequence[np.ndarray], title: str = "",
                 unit: str = "cycles/call") -> Figure:
    """The per-call counts of one library at one length: a violin per trial.

    Args:
        cycles_by_trial: the timed calls of each trial (any numeric arrays).
        title: the figure title.
        unit: what a count is, named on the y axis (``ticks/call``,
            ``core cycles/call``).

    The violins and the y axis cover the calls between the 0.5th and 99.5th
    percentile of all trials together (:data:`DISTRIBUTION_CLIP`); the x label says
    so and how many calls lie outside. Each trial's median is a black bar and its
    mean a white dot; a mean that rare slow calls pull beyond the axis is a ▲ (▼) on
    its edge with the value beside it, so a disturbed trial stands out without
    squashing the others. The legend shows exactly the markers drawn. The y axis
    follows the rule of :func:`y_scale` on the drawn range (not from 0). Trials are
    numbered from 0, as in the records and the flags.
    """
    trials = [np.asarray(c, dtype=np.float64).ravel() for c in cycles_by_trial]
    trials = [t[np.isfinite(t)] for t in trials]
    with matplotlib.rc_context(STYLE):
        figure, (axes,) = _grid(1, (max(6.5, 3.5 + 0.8 * len(trials)), 4.2), title)
        _title(axes, title, single=True)
        if not any(len(t) for t in trials):
            return _nothing(figure, axes, "no calls")
        pooled = np.concatenate(trials)
        low, high = (float(v) for v in np.percentile(pooled, DISTRIBUTION_CLIP))
        kept = [t[(t >= low) & (t <= high)] for t in trials]
        bottom, top = _clipped_limits(axes, low, high, unit)
        positions = [i for i, t in enumerate(trials) if len(t)]
        legend = _violins(axes, [kept[i] for i in positions], positions)
        legend += axes.plot(positions, [np.median(trials[i]) for i in positions],
                            linestyle="none", marker="_", markersize=22, markeredgewidth=2,
                            color="black", label="median of a trial", zorder=3)
        legend += _means(axes, [float(trials[i].mean()) for i in positions], positions,
                         bottom, top)
        axes.set_xticks(range(len(trials)), [f"trial {i}" for i in range(len(trials))])
        axes.set_xlim(-0.6, len(trials) - 0.4)
        clipped = len(pooled) - sum(len(k) for k in kept)
        axes.set_xlabel(f"y axis clipped to the {DISTRIBUTION_CLIP[0]:g}th–"
                        f"{DISTRIBUTION_CLIP[1]:g}th percentile of all {len(pooled)} calls: "
                        f"{clipped} not drawn", fontsize=9)
        _legend(axes, single=True, handles=legend)
    return figure


def _clipped_limits(axes: Axes, low: float, high: float, unit: str) -> tuple[float, float]:
    """Scale the y axis by the rule over [low, high] and pad it by 5 % (linear) or
    by the same share of a decade (log); return the limits."""
    if y_scale(axes, [low, high], unit, from_zero=False) == "log":
        factor = (high / low) ** 0.05
        bottom, top = low / factor, high * factor
    else:
        pad = 0.05 * (high - low) or max(1.0, 0.05 * high)
        bottom, top = low - pad, high + pad
    axes.set_ylim(bottom, top)
    return bottom, top


def _violins(axes: Axes, kept: Sequence[np.ndarray], positions: Sequence[int]) -> list[Any]:
    drawable = [(p, k) for p, k in zip(positions, kept, strict=True) if len(np.unique(k)) > 1]
    if not drawable:
        return []
    parts = axes.violinplot([k for _, k in drawable], [p for p, _ in drawable],
                            showextrema=False, widths=0.8)
    bodies: list[Any] = list(parts["bodies"])  # type: ignore[call-overload]
    for body in bodies:
        body.set_facecolor(COLOURS[0])
        body.set_edgecolor(COLOURS[0])
        body.set_alpha(0.45)
    return [Patch(facecolor=COLOURS[0], edgecolor=COLOURS[0], alpha=0.45,
                  label="calls of a trial (density)")]


def _means(axes: Axes, means: Sequence[float], positions: Sequence[int], bottom: float,
           top: float) -> list[Any]:
    """Means on the axis as white dots, means beyond it as ▲/▼ on its edge with the
    value; return the legend handles of the kinds drawn."""
    at = list(zip(positions, means, strict=True))
    inside = [(p, m) for p, m in at if bottom <= m <= top]
    handles = []
    if inside:
        handles += axes.plot([p for p, _ in inside], [m for _, m in inside],
                             linestyle="none", marker="o", markersize=5,
                             markerfacecolor="white", markeredgecolor="black",
                             color="black", label="mean of a trial", zorder=4)
    edge_of_axes = blended_transform_factory(axes.transData, axes.transAxes)
    for marker, beyond, edge, words in (("^", [(p, m) for p, m in at if m > top], 1.0, "above"),
                                        ("v", [(p, m) for p, m in at if m < bottom], 0.0,
                                         "below")):
        if not beyond:
            continue
        handles += axes.plot([p for p, _ in beyond], [edge] * len(beyond),
                             transform=edge_of_axes, linestyle="none", marker=marker,
                             markersize=7, color="black", clip_on=False, zorder=4,
                             label=f"mean {words} the axis (value beside)")
        last = max(positions)
        for position, mean in beyond:  # the rightmost label leans left, off the legend
            left = position == last and position > 0
            axes.annotate(f"mean {mean:.0f}", (position, edge), xycoords=edge_of_axes,
                          textcoords="offset points", xytext=(-7 if left else 7,
                                                              -3 if edge else 3),
                          ha="right" if left else "left", va="top" if edge else "bottom",
                          fontsize=8)
    return handles


# ------------------------------------------------------------------ ratios (compare)

RATIO_TICKS = (1.02, 1.05, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)


def ratio_plot(pairs: Sequence[RatioSeries], title: str = "", a: str = "A", b: str = "B",
               statistic: str = "median") -> Figure:
    """The ratio A / B against message length, with its CI, for one or more pairs.

    Args:
        pairs: one :class:`RatioSeries` per pair of libraries.
        title: the figure title.
        a, b: the names of the two sides in the region labels and on the y axis
            (``theirs``/``ours``, two run ids).
        statistic: the figure whose ratio is drawn (``median``, ``mean``), on the axis.

    The y axis is logarithmic and centred on 1 (a line), so 2× either way lies
    equally far from it; below the line "A faster", above it "B faster". Each pair
    has its colour and marker and 95 % CI bars; points that are not significant are
    hollow, and the pair's geometric mean is a dashed line when given. With several
    pairs the points are drawn slightly apart along x so their bars do not cover
    each other. More than eight pairs are split into panels as in
    :func:`cycles_per_byte`.

    Raises:
        PlotDataError: two pairs with one label, columns of unequal length, or a
            ratio or bound that is not positive.
    """
    pairs = list(pairs)
    _check_unique([p.label for p in pairs])
    for pair in pairs:
        _check_lengths(pair.label, {"message_bytes": pair.message_bytes, "ratio": pair.ratio,
                                    "ci_low": pair.ci_low, "ci_high": pair.ci_high,
                                    "significant": pair.significant})
        values = np.asarray([*pair.ratio, *pair.ci_low, *pair.ci_high], dtype=np.float64)
        if np.any(values[np.isfinite(values)] <= 0):
            raise PlotDataError(f"pair {pair.label!r}: a ratio and its CI bounds must be "
                                "positive (a log-scale interval never reaches 0)")
    lengths = sorted({int(n) for p in pairs for n in p.message_bytes})
    panels = _panels(pairs)
    with matplotlib.rc_context(STYLE):
        single = len(panels) == 1
        figure, axes_list = _grid(len(panels), (8.0, 4.2) if single else PANEL, title)
        if not pairs:
            return _nothing(figure, axes_list[0], "no pairs to compare")
        for axes, (name, members) in zip(axes_list, panels, strict=True):
            _legend(axes, single, _ratio_panel(axes, members, a, b, statistic))
            _length_axis(axes, lengths)
            _title(axes, title if single else name, single)
    return figure


def _ratio_panel(axes: Axes, members: Sequence[RatioSeries], a: str, b: str,
                 statistic: str) -> list[Any]:
    """Draw the pairs; return the legend handles (one per pair, its geometric mean,
    and the hollow marker when some point is not significant)."""
    drawn: list[float] = []
    handles: list[Any] = []
    hollow = False
    for index, pair in enumerate(members):
        colour, marker = COLOURS[index % len(COLOURS)], MARKERS[index]
        dodge = 2.0 ** (0.06 * (index - (len(members) - 1) / 2)) if len(members) > 1 else 1.0
        x = np.asarray(pair.message_bytes, dtype=np.float64) * dodge
        y, low, high = (np.asarray(v, dtype=np.float64)
                        for v in (pair.ratio, pair.ci_low, pair.ci_high))
        significant = (np.ones(len(y), dtype=bool) if pair.significant is None
                       else np.asarray(pair.significant, dtype=bool))
        keep = np.isfinite(y) & np.isfinite(low) & np.isfinite(high)
        axes.errorbar(x[keep], y[keep], yerr=np.vstack([(y - low)[keep], (high - y)[keep]]),
                      color=colour, linewidth=1.2, capsize=3)
        for filled in (True, False):
            chosen = keep & (significant == filled)
            axes.plot(x[chosen], y[chosen], linestyle="none", marker=marker, markersize=6,
                      color=colour, markeredgecolor=colour, zorder=3,
                      markerfacecolor=colour if filled else "white")
        hollow |= bool((keep & ~significant).any())
        handles.append(Line2D([], [], color=colour, marker=marker, markersize=6,
                              linewidth=1.2, label=pair.label))
        drawn += [*low[keep], *high[keep]]
        if pair.geometric_mean is not None:
            handles.append(axes.axhline(
                pair.geometric_mean, color=colour, linestyle="--", linewidth=1.0,
                label=f"geometric mean {pair.geometric_mean:.3g}×"))
            drawn.append(pair.geometric_mean)
    axes.axhline(1.0, color="black", linewidth=1.0, zorder=2)
    _ratio_axis(axes, drawn, f"{statistic} of {a} / {statistic} of {b}")
    axes.text(0.01, 0.98, f"▲ {b} faster", transform=axes.transAxes, ha="left", va="top",
              fontsize=9, color="#555555")
    axes.text(0.01, 0.02, f"▼ {a} faster", transform=axes.transAxes, ha="left",
              va="bottom", fontsize=9, color="#555555")
    if hollow:
        handles.append(Line2D([], [], linestyle="none", marker="o", color="#555555",
                              markerfacecolor="white", label="hollow: not significant"))
    return handles


def _ratio_axis(axes: Axes, drawn: Sequence[float], quantity: str) -> None:
    """A log y axis symmetric about 1 that holds every bound, at least ±10 %, with at
    most four ticks each side, spaced evenly enough not to collide."""
    logs = np.abs(np.log(np.asarray(drawn, dtype=np.float64)))
    reach = max(float(logs.max()) * 1.15 if len(logs) else 0.0, math.log(1.1))
    axes.set_yscale("log")
    axes.set_ylim(math.exp(-reach), math.exp(reach))
    ticks, last = [], 0.0
    for tick in RATIO_TICKS:
        if math.log(tick) > reach:
            break
        if math.log(tick) - last >= reach / 4:
            ticks.append(tick)
            last = math.log(tick)
    axes.yaxis.set_major_locator(FixedLocator(sorted({1.0, *ticks, *(1 / t for t in ticks)})))
    axes.yaxis.set_minor_locator(NullLocator())
    axes.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _times(v)))
    axes.set_ylabel(f"{quantity} (log scale)")


def _times(ratio: float) -> str:
    return f"{ratio:.3g}×" if ratio >= 1 else f"{ratio:.2g}×"


# ------------------------------------------------------------------ leakage (dudect)

def leak_trace_plot(calls: Sequence[int], t_by_test: Mapping[str, Sequence[float]],
                    title: str = "", max_only: bool = False) -> Figure:
    """Welch's |t| of a fixed-vs-random leakage test against the number of calls.

    Args:
        calls: the numbers of calls (both classes together) at which t was taken.
        t_by_test: per test (``raw``, ``crop 95 %`` …), t at each of ``calls``; the
            sign is dropped.
        title: the figure title (the verdict, say).
        max_only: draw only the maximum over the tests.

    The x axis is logarithmic. The maximum over the tests (the verdict's figure) is a
    thick black line; with up to eight tests each has its own colour, beyond that
    they are thin grey lines under one legend entry. The thresholds of
    :data:`LEAK_THRESHOLDS` are drawn and the three regions labelled (below 4.5 no
    leak detected, 4.5–10 possible leak, above 10 LEAK). The y axis follows the rule
    of :func:`y_scale` over the maximum and the thresholds, so tests near 0 do not
    stretch a log axis down to 10⁻⁴.

    Raises:
        PlotDataError: a trace whose length differs from ``calls``.
    """
    x = np.asarray(calls, dtype=np.float64)
    traces = {name: np.abs(np.asarray(t, dtype=np.float64)) for name, t in t_by_test.items()}
    for name, trace in traces.items():
        if len(trace) != len(x):
            raise PlotDataError(f"leak trace {name!r} has {len(trace)} values for "
                                f"{len(x)} call counts")
    with matplotlib.rc_context(STYLE):
        figure, (axes,) = _grid(1, (8.0, 4.2), title)
        _title(axes, title, single=True)
        if not traces or not len(x):
            return _nothing(figure, axes, "no t values")
        peak = np.nanmax(np.vstack(list(traces.values())), axis=0)
        if not max_only and len(traces) <= SERIES_PER_PANEL:
            for index, (name, trace) in enumerate(traces.items()):
                axes.plot(x, trace, color=COLOURS[index % len(COLOURS)], linewidth=1.2,
                          marker=MARKERS[index], markevery=max(1, len(x) // 8),
                          markersize=4, label=name)
        elif not max_only:
            for trace in traces.values():
                axes.plot(x, trace, color="#aaaaaa", linewidth=0.6, label="_nolegend_")
            axes.plot([], [], color="#aaaaaa", linewidth=0.6,
                      label=f"each of {len(traces)} tests")
        if max_only or len(traces) > 1:
            axes.plot(x, peak, color="black", linewidth=2.2,
                      label=f"max |t| of {len(traces)} tests" if len(traces) > 1
                      else "max |t|")
        axes.set_xscale("log")
        axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _count(v)))
        axes.set_xlabel("calls (both classes; log scale)")
        bottom = min(float(np.nanmin(peak)), LEAK_THRESHOLDS[0])  # the thresholds in view
        scale = y_scale(axes, [bottom, *peak, *LEAK_THRESHOLDS], "|t|, Welch fixed vs random")
        top = max(float(np.nanmax(peak)), LEAK_THRESHOLDS[1]) * (1.4 if scale == "log" else 1.1)
        axes.set_ylim((bottom / 1.4 if scale == "log" else 0.0), top)
        _thresholds(axes)
        _legend(axes, single=True)
    return figure


def _thresholds(axes: Axes) -> None:
    """The two threshold lines and the words of the three regions they make."""
    possible, leak = LEAK_THRESHOLDS
    at_right = blended_transform_factory(axes.transAxes, axes.transData)
    for value, colour in ((possible, "#e69f00"), (leak, "#d62728")):
        axes.axhline(value, color=colour, linestyle="--", linewidth=1.4, zorder=2)
    for value, offset, va, colour, words in (
            (leak, 3, "bottom", "#d62728", f"above {leak:g}: LEAK"),
            (possible, 3, "bottom", "#b07800", f"{possible:g}–{leak:g}: possible leak"),
            (possible, -3, "top", "#2a7a2a", f"below {possible:g}: no leak detected")):
        axes.annotate(words, (1.0, value), xycoords=at_right, xytext=(-4, offset),
                      textcoords="offset points", ha="right", va=va, fontsize=8,
                      color=colour)


def _count(value: float) -> str:
    for size, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if value >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


# ------------------------------------------------------------------ files

def save(figure: Figure, stem: Path, dpi: int = 150) -> list[Path]:
    """Write ``figure`` as ``<stem>.png`` and ``<stem>.svg``; return both paths.

    ``stem`` is used as given plus the suffix (a label with dots such as
    ``Pavelor-512.external__hash_64-calls`` keeps every dot). Metadata that would
    change from one save to the next (the date, the version) is left out, so the same
    figure gives the same files.
    """
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    with matplotlib.rc_context(STYLE):
        for suffix, metadata in ((".png", {"Software": None}), (".svg", {"Date": None})):
            path = stem.with_name(stem.name + suffix)
            figure.savefig(path, dpi=dpi, metadata=metadata)
            written.append(path)
    return written
