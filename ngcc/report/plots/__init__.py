"""Plots of a run, one module per figure: cycles/byte against message length
(:mod:`~ngcc.report.plots.cycles`), per-call distributions
(:mod:`~ngcc.report.plots.distribution`), the ratio of two libraries
(:mod:`~ngcc.report.plots.ratio`), a leakage test's |t| trace
(:mod:`~ngcc.report.plots.leak_plot`); the style, the shared rules and saving a figure in
:mod:`~ngcc.report.plots.common`.

Every function takes plain data (sequences, numpy arrays, the small dataclasses of
its module) and builds a :class:`matplotlib.figure.Figure` without pyplot, so it
neither needs a display nor changes global state; Jupyter shows the returned figure,
and :func:`~ngcc.report.plots.common.save` writes it as PNG and SVG. The style is
fixed (white background, dark text, the tab10 colours) so a figure reads the same in
a light notebook, in a README and on paper, whatever the user's matplotlib defaults
are.

Rules every plot keeps:

* **y scale**: logarithmic when the plotted values span more than
  :data:`~ngcc.report.plots.common.LOG_SPAN` (10×), else linear (from 0 for per-byte
  figures), and the axis label ends in ``(log scale)`` or ``(linear scale)``
  (:func:`~ngcc.report.plots.common.y_scale`). The ratio plot is the one exception: a
  ratio is always drawn on a log axis centred on 1, so that 2× faster and 2× slower
  lie equally far from it.
* **series**: one per library label; two series never share a label, so a
  theirs-vs-ours run never joins two libraries into one zig-zag line.
* **panels**: up to :data:`~ngcc.report.plots.common.SERIES_PER_PANEL` series share
  one axes; more are split into a grid of panels (one per group, e.g. per candidate,
  with a shared x axis), and inside a panel every series has its own colour and its
  own marker.
"""
