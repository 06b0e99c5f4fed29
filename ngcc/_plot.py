"""Plots of a run: cycles/byte against message length, per-call cycle distributions.

Every function builds a :class:`matplotlib.figure.Figure` without pyplot, so it
neither needs a display nor changes global state; Jupyter shows the returned
figure, and :func:`save` writes it as PNG and SVG. The style is fixed here (white
background, dark text, the tab10 colours) so a figure reads the same in a light
notebook, in a README and on paper, whatever the user's matplotlib defaults are.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator

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
    "axes.prop_cycle": cycler(
        color=["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]),
    "font.size": 10,
    "legend.frameon": False,
    "svg.hashsalt": "ngcc",       # stable element ids: the same figure gives the same SVG
}

DISTRIBUTION_CLIP = (0.5, 99.5)
"""Percentiles of the calls a distribution plot shows; interrupts put single calls far
out, and a few of them would squash every trial's shape into a line."""


def _figure(width: float = 7.0, height: float = 4.2) -> Figure:
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
        figure.add_subplot()
    return figure


def length_label(message_bytes: int) -> str:
    """Axis label of a message length: ``32 B``, ``1 KiB``, ``64 KiB``."""
    if message_bytes >= 1024 and message_bytes % 1024 == 0:
        return f"{message_bytes // 1024} KiB"
    return f"{message_bytes} B"


def cycles_per_byte(points: Any, title: str = "") -> Figure:
    """Cycles/byte against message length, one line per instance, 95 % CI error bars.

    Args:
        points: a pandas DataFrame with one row per instance and message length and
            the columns ``instance``, ``message_bytes``, ``cycles_per_byte``,
            ``cpb_ci_low`` and ``cpb_ci_high`` (the confidence interval of the mean,
            in cycles/byte), as :meth:`ngcc.Run.summary` returns it. A row flagged
            ``kat_passed == False`` is drawn dashed and its legend entry carries ⚠.
        title: the figure title.

    The x axis is log2 with a tick at every measured length; the y axis turns
    logarithmic when the values span more than a factor of 20 (a whole run mixes
    WChain's 7 cycles/byte with Wish's thousands).
    """
    with matplotlib.rc_context(STYLE):
        figure = _figure(width=8.0)
        axes = figure.axes[0]
        for index, (name, rows) in enumerate(points.groupby("instance", sort=False)):
            rows = rows.sort_values("message_bytes")
            # The ten colours repeat in a whole run: a new marker tells the lines apart.
            marker = "os^D"[index // 10 % 4]
            passed = bool(rows["kat_passed"].all()) if "kat_passed" in rows else True
            low = rows["cycles_per_byte"] - rows["cpb_ci_low"]
            high = rows["cpb_ci_high"] - rows["cycles_per_byte"]
            axes.errorbar(rows["message_bytes"], rows["cycles_per_byte"],
                          yerr=np.vstack([low.clip(lower=0), high.clip(lower=0)]),
                          marker=marker, markersize=4, linewidth=1.6, capsize=3,
                          linestyle="-" if passed else "--",
                          label=str(name) if passed else f"{name} ⚠ no KAT pass")
        _length_axis(axes, sorted(set(points["message_bytes"])))
        values = points["cycles_per_byte"][points["cycles_per_byte"] > 0]
        if len(values) and values.max() / values.min() > 20:
            axes.set_yscale("log")
        else:
            axes.set_ylim(bottom=0)
        axes.set_ylabel("cycles/byte (mean, 95 % CI)")
        axes.set_title(title)
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    return figure


def _length_axis(axes: Any, lengths: Sequence[int]) -> None:
    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_locator(FixedLocator(list(lengths)))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.set_xticklabels([length_label(n) for n in lengths])
    axes.set_xlabel("message length (log₂ scale)")


def distribution(cycles_by_trial: Sequence[np.ndarray], title: str = "") -> Figure:
    """The per-call cycle counts of one instance at one length: a violin per trial.

    The violins and the y axis cover the calls between the 0.5th and 99.5th
    percentile of all trials together (the clipped count is written under the axis);
    each trial's median is a black bar and its mean a white dot. A mean that rare
    slow calls pull beyond the axis is drawn as a triangle on the edge with its value,
    so a disturbed trial stands out without squashing the others. Trials are numbered
    from 0, as in the records and the flags.
    """
    trials = [np.asarray(c, dtype=np.float64) for c in cycles_by_trial]
    pooled = np.concatenate(trials)
    low, high = (float(v) for v in np.percentile(pooled, DISTRIBUTION_CLIP))
    kept = [c[(c >= low) & (c <= high)] for c in trials]
    with matplotlib.rc_context(STYLE):
        figure = _figure(width=max(6.5, 2.5 + 1.0 * len(trials)))
        axes = figure.axes[0]
        positions = list(range(len(trials)))
        _violins(axes, kept, positions)
        axes.scatter(positions, [np.median(c) for c in trials], marker="_", s=400,
                     color="black", label="median", zorder=3)
        _means(axes, [float(c.mean()) for c in trials], positions, low, high)
        clipped = len(pooled) - sum(len(k) for k in kept)
        axes.set_xticks(positions, [f"trial {i}" for i in positions])
        axes.set_xlabel(f"{len(pooled)} calls; the {clipped} outside the "
                        f"{DISTRIBUTION_CLIP[0]}–{DISTRIBUTION_CLIP[1]} percentiles not drawn")
        axes.set_ylabel("cycles per call")
        axes.set_title(title)
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    return figure


def _violins(axes: Any, kept: Sequence[np.ndarray], positions: Sequence[int]) -> None:
    drawable = [(p, k) for p, k in zip(positions, kept, strict=True) if len(np.unique(k)) > 1]
    if drawable:
        parts = axes.violinplot([k for _, k in drawable], [p for p, _ in drawable],
                                showextrema=False, widths=0.8)
        for body in parts["bodies"]:
            body.set_facecolor("#1f77b4")
            body.set_edgecolor("#1f77b4")
            body.set_alpha(0.45)


def _means(axes: Any, means: Sequence[float], positions: Sequence[int], low: float,
           high: float) -> None:
    pad = 0.05 * (high - low) or max(1.0, 0.05 * high)
    bottom, top = low - pad, high + pad
    axes.set_ylim(bottom, top)
    inside = [(p, m) for p, m in zip(positions, means, strict=True) if bottom <= m <= top]
    axes.scatter([p for p, _ in inside], [m for _, m in inside], marker="o", s=22,
                 color="white", edgecolors="black", label="mean", zorder=4)
    for position, mean in zip(positions, means, strict=True):
        if bottom <= mean <= top:
            continue
        edge, marker, offset = (top, "^", -12) if mean > top else (bottom, "v", 6)
        axes.scatter([position], [edge], marker=marker, s=40, color="black", zorder=4,
                     clip_on=False)
        axes.annotate(f"mean {mean:.0f}", (position, edge), textcoords="offset points",
                      xytext=(8, offset), fontsize=8)


def save(figure: Figure, stem: Path) -> list[Path]:
    """Write ``figure`` as ``<stem>.png`` and ``<stem>.svg``; return both paths.

    Metadata that would change from one save to the next (the date) is left out, so
    the same figure gives the same files.
    """
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    with matplotlib.rc_context(STYLE):
        for suffix, metadata in ((".png", {"Software": None}), (".svg", {"Date": None})):
            path = stem.with_suffix(suffix)
            figure.savefig(path, dpi=150, metadata=metadata)
            written.append(path)
    return written
