"""The leakage figure of ``ngcc leak`` and ``--leak``: Welch's |t| of a fixed-vs-random
test against the number of calls, with the thresholds of its verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from matplotlib.transforms import blended_transform_factory

from ngcc.base.errors import PlotDataError
from ngcc.report.plots import common as _common
from ngcc.report.plots.common import COLOURS, MARKERS, SERIES_PER_PANEL, STYLE

LEAK_THRESHOLDS = (4.5, 10.0)
"""max |t| below the first after enough calls: no leak detected; above the second: LEAK."""


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
    of :func:`.common.y_scale` over the maximum and the thresholds, so tests near 0 do not
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
        figure, (axes,) = _common.grid(1, (8.0, 4.2), title)
        _common.title(axes, title, single=True)
        if not traces or not len(x):
            return _common.nothing(figure, axes, "no t values")
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
        scale = _common.y_scale(axes, [bottom, *peak, *LEAK_THRESHOLDS],
                                "|t|, Welch fixed vs random")
        top = max(float(np.nanmax(peak)), LEAK_THRESHOLDS[1]) * (1.4 if scale == "log" else 1.1)
        axes.set_ylim((bottom / 1.4 if scale == "log" else 0.0), top)
        _thresholds(axes)
        _common.legend(axes, single=True)
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
