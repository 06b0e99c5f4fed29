"""The cycles/byte figure: one line per library against message length, with CI
error bars (a run's, a candidate's, ``Run.plot_cpb``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ngcc.base.errors import PlotDataError
from ngcc.report.plots import common as _common
from ngcc.report.plots.common import COLOURS, MARKERS, PANEL, STYLE

NO_KAT_PASS = "⚠ no KAT pass"


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
    y-scale rule of :func:`.common.y_scale`. Up to eight series share one axes; more are
    drawn as a grid of panels (one per group, a big group split with the builds of
    one instance kept together), each with its own y scale. A series timed without
    a KAT pass is dashed and its legend entry ends in ⚠.

    Raises:
        PlotDataError: two series with one label, or columns of unequal length.
    """
    series = list(points) if _is_series_list(points) else series_from_frame(points)
    _common.check_unique([s.label for s in series])
    for item in series:
        _common.check_lengths(item.label, {"message_bytes": item.message_bytes,
                                           "cycles_per_byte": item.cycles_per_byte,
                                           "ci_low": item.ci_low, "ci_high": item.ci_high})
    lengths = sorted({int(n) for s in series for n in s.message_bytes})
    panels = _common.panels(series)
    with matplotlib.rc_context(STYLE):
        single = len(panels) == 1
        figure, axes_list = _common.grid(len(panels), (8.0, 4.2) if single else PANEL, title)
        if not series:
            return _common.nothing(figure, axes_list[0], "nothing measured")
        bars = f"{statistic}, 95 % CI bars" if any(s.ci_low for s in series) else statistic
        for axes, (name, members) in zip(axes_list, panels, strict=True):
            handles = _cpb_panel(axes, members, unit)
            _common.length_axis(axes, lengths)
            _common.title(axes, title if single else name, single)
            _common.legend(axes, single, handles, title=bars)
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
    _common.y_scale(axes, plotted, unit)
    return handles
