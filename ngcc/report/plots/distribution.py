"""The per-call distribution figure: a violin per trial of one library at one length,
clipped to the bulk of the calls (the report's distributions, ``Run.plot_distribution``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.transforms import blended_transform_factory

from ngcc.report.plots import common as _common
from ngcc.report.plots.common import COLOURS, STYLE

DISTRIBUTION_CLIP = (0.5, 99.5)
"""Percentiles of the calls a distribution plot shows; interrupts put single calls far
out, and a few of them would squash every trial's shape into a line."""


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
    follows the rule of :func:`.common.y_scale` on the drawn range (not from 0). Trials are
    numbered from 0, as in the records and the flags.
    """
    trials = [np.asarray(c, dtype=np.float64).ravel() for c in cycles_by_trial]
    trials = [t[np.isfinite(t)] for t in trials]
    with matplotlib.rc_context(STYLE):
        figure, (axes,) = _common.grid(1, (max(6.5, 3.5 + 0.8 * len(trials)), 4.2), title)
        _common.title(axes, title, single=True)
        if not any(len(t) for t in trials):
            return _common.nothing(figure, axes, "no calls")
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
        _common.legend(axes, single=True, handles=legend)
    return figure


def _clipped_limits(axes: Axes, low: float, high: float, unit: str) -> tuple[float, float]:
    """Scale the y axis by the rule over [low, high] and pad it by 5 % (linear) or
    by the same share of a decade (log); return the limits."""
    if _common.y_scale(axes, [low, high], unit, from_zero=False) == "log":
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
