"""The ratio figure of ``ngcc compare``: A / B against message length with its CI, one
series per pair, on a log axis centred on 1 (``Run.plot_compare``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from ngcc.base.errors import PlotDataError
from ngcc.report.plots import common as _common
from ngcc.report.plots.common import COLOURS, MARKERS, PANEL, STYLE


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
        group: as in :class:`~ngcc.report.plots.cycles.CpbSeries`, for more than eight pairs.
    """

    label: str
    message_bytes: Sequence[int]
    ratio: Sequence[float]
    ci_low: Sequence[float]
    ci_high: Sequence[float]
    significant: Sequence[bool] | None = None
    geometric_mean: float | None = None
    group: str = ""


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
    :func:`~ngcc.report.plots.cycles.cycles_per_byte`.

    Raises:
        PlotDataError: two pairs with one label, columns of unequal length, or a
            ratio or bound that is not positive.
    """
    pairs = list(pairs)
    _common.check_unique([p.label for p in pairs])
    for pair in pairs:
        _common.check_lengths(pair.label, {"message_bytes": pair.message_bytes,
                                           "ratio": pair.ratio, "ci_low": pair.ci_low,
                                           "ci_high": pair.ci_high,
                                           "significant": pair.significant})
        values = np.asarray([*pair.ratio, *pair.ci_low, *pair.ci_high], dtype=np.float64)
        if np.any(values[np.isfinite(values)] <= 0):
            raise PlotDataError(f"pair {pair.label!r}: a ratio and its CI bounds must be "
                                "positive (a log-scale interval never reaches 0)")
    lengths = sorted({int(n) for p in pairs for n in p.message_bytes})
    panels = _common.panels(pairs)
    with matplotlib.rc_context(STYLE):
        single = len(panels) == 1
        figure, axes_list = _common.grid(len(panels), (8.0, 4.2) if single else PANEL, title)
        if not pairs:
            return _common.nothing(figure, axes_list[0], "no pairs to compare")
        for axes, (name, members) in zip(axes_list, panels, strict=True):
            _common.legend(axes, single, _ratio_panel(axes, members, a, b, statistic))
            _common.length_axis(axes, lengths)
            _common.title(axes, title if single else name, single)
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
