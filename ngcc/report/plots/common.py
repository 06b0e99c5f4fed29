"""What every plot shares: the fixed style, colours and markers, the y-scale rule, the
message-length axis, the checks of a series, the grid of panels and its legends, and
:func:`save` (PNG and SVG, the same bytes for the same figure)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

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


def length_axis(axes: Axes, lengths: Sequence[int]) -> None:
    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_locator(FixedLocator([float(n) for n in lengths]))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _: length_label(round(v))))
    if len(lengths) > 6:
        axes.tick_params(axis="x", labelrotation=45)
    axes.set_xlabel("message length (log₂ scale)")


def check_lengths(label: str, columns: Mapping[str, Sequence[Any] | None]) -> None:
    sizes = {name: len(column) for name, column in columns.items() if column is not None}
    if len(set(sizes.values())) > 1:
        raise PlotDataError(f"series {label!r}: its columns differ in length ("
                            + ", ".join(f"{k} {v}" for k, v in sizes.items()) + ")")


def check_unique(labels: Sequence[str]) -> None:
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise PlotDataError(f"two series are labelled {label!r}: each library of a "
                                "plot needs its own label (e.g. Pavelor-512@perf)")
        seen.add(label)


def grid(count: int, panel: tuple[float, float], title: str) -> tuple[Figure, list[Axes]]:
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


def title(axes: Axes, text: str, single: bool) -> None:
    if single:
        axes.set_title(text, pad=10)
    else:
        axes.set_title(text, fontsize=10)


def legend(axes: Axes, single: bool, handles: Sequence[Any] | None = None,
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


def panels(items: Sequence[Any]) -> list[tuple[str, list[Any]]]:
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


def nothing(figure: Figure, axes: Axes, text: str) -> Figure:
    axes.text(0.5, 0.5, text, transform=axes.transAxes, ha="center", va="center")
    axes.set_xticks([])
    axes.set_yticks([])
    return figure


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
