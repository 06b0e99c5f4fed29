"""Writing a run's report folder: the pages (:mod:`ngcc.report.pages`) in the formats
asked for (:mod:`ngcc.report.export`) and the plots they link (:mod:`ngcc.report.plots`),
the raw samples a plot draws checked before anything is written."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ngcc.base import files as _files
from ngcc.base import format as _format
from ngcc.base.errors import ReportError
from ngcc.base.names import natural_key
from ngcc.evidence import figures as _figures
from ngcc.evidence.analyses import slice_modules
from ngcc.evidence.model import page_key, plot_stem_cpb, plot_stem_distribution
from ngcc.report import export as _export
from ngcc.report import ranking as _ranking_pages
from ngcc.report.pages import PLOT_RUN_CPB, library_columns, pages, run_candidates
from ngcc.stats import groups as _analysis

if TYPE_CHECKING:
    from ngcc.evidence.run import Run, RunRecord


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """``formats`` each once, in order.

    Raises:
        ReportError: an unknown format (the message lists the known ones).
    """
    unknown = [f for f in formats if f not in _export.FORMATS]
    if unknown or not formats:
        raise ReportError(f"unknown report format {', '.join(unknown) or '(none)'}; "
                          f"choose from {', '.join(_export.FORMATS)}")
    return tuple(dict.fromkeys(formats))


def report_files(run: Run, formats: Sequence[str] = ("markdown",), plots: bool = True,
                 images: Mapping[str, bytes] | None = None) -> dict[str, str]:
    """Every file of a report but the plots: file name in ``report/`` → text.

    Args:
        run: the run.
        formats: any of :data:`ngcc.report.export.FORMATS`: ``markdown`` (the pages),
            ``html`` (the same pages, self-contained), ``csv`` and ``json`` (the
            statistics table, ``statistics.csv``/``.json``, with a column of each
            analysis the run holds: ``constant_time``).
        plots: whether the plots are drawn beside the pages (else the pages link none).
        images: the PNG bytes of the drawn plots by file name, which HTML pages inline.

    Raises:
        ReportError: an unknown format.
    """
    formats = check_formats(formats)
    markdown = {**pages(run, plots), **_ranking_pages.ranking_pages(run)}
    files: dict[str, str] = {}
    if "markdown" in formats:
        files.update(markdown)
    if "html" in formats:
        files.update(_export.html_pages(markdown, images or {}))
    analyses = {column.name: column.values for column in library_columns(run)}
    if "csv" in formats:
        files[_export.STATISTICS_STEM + ".csv"] = _export.statistics_csv(run.records, analyses)
    if "json" in formats:
        files[_export.STATISTICS_STEM + ".json"] = _export.statistics_json(run.records,
                                                                           analyses)
    files.update(_ranking_pages.ranking_tables(run, formats))
    return files


def write_report(run: Run, out_dir: str | os.PathLike[str] | None = None, plots: bool = True,
                 distributions: Sequence[tuple[str, int]] = (),
                 formats: Sequence[str] = ("markdown",)) -> list[Path]:
    """Write the pages (and, unless ``plots`` is false, the plots) of a run.

    Args:
        run: the run.
        out_dir: where to write; default the run's ``report/``.
        plots: also draw the cycles/byte plots (per candidate and for the run) and
            the per-call distributions (PNG and SVG).
        distributions: further (label or instance, message bytes) whose per-call
            distribution to draw, besides each library's shortest length.
        formats: what to write (:func:`report_files`); default the Markdown pages.

    Raises:
        ReportError: an unknown format, or a chosen distribution has no record in the
            run (checked before anything is written).
        CorruptRecordError: a raw file to draw is missing or does not match its
            record (checked before anything is written).

    Returns:
        The files written, pages and tables first, then the plots.
    """
    formats = check_formats(formats)
    chosen = chosen_records(run, distributions)
    samples = _distribution_samples(run, chosen) if plots else {}  # raw files checked first
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    out.mkdir(parents=True, exist_ok=True)
    _clear_odd_files(out)
    drawn = write_plots(run, out, samples) if plots else []
    images = {path.name: path.read_bytes() for path in drawn if path.suffix == ".png"}
    written = []
    for name, text in report_files(run, formats, plots, images).items():
        path = out / name
        _files.atomic_write_bytes(path, text.encode("utf-8"))
        written.append(path)
    return written + drawn


def _clear_odd_files(out: Path) -> None:
    """Remove what is neither a regular file nor a folder from the report folder (a
    FIFO would block the write, a symbolic link would send it elsewhere)."""
    for path in out.iterdir():
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            path.unlink()


def _distribution_samples(run: Run, chosen: Sequence[RunRecord]
                          ) -> dict[tuple[str, int], tuple[RunRecord, list[np.ndarray]]]:
    """The records whose per-call distributions are drawn (each library's shortest
    length, and those chosen), with their raw samples, checked against their sha256.

    Raises:
        CorruptRecordError: a raw file that is missing or does not match its record.
    """
    drawn = [r for c in run_candidates(run)
             for r in _analysis.distribution_records(_analysis.of_candidate(run.records, c))]
    drawn += [record for record in chosen if record not in drawn]
    return {(r.label, r.message_bytes): (r, r.cycles()) for r in drawn}


def chosen_records(run: Run, distributions: Sequence[tuple[str, int]]) -> list[RunRecord]:
    """The records of the (label or instance, message bytes) pairs asked for.

    Raises:
        ReportError: a pair the run has no record of; the message lists what it has.
    """
    chosen = []
    for name, length in distributions:
        try:
            chosen.append(run.record(name, length))
        except KeyError:
            measured = [f"{label}:{length}" for label, length in sorted(
                {(r.label, r.message_bytes) for r in run.records},
                key=lambda pair: (natural_key(pair[0]), pair[1]))]
            raise ReportError(f"run {run.run_id} has no record of {name} at {length} B; "
                              f"measured: {', '.join(measured) or 'nothing'}") from None
    return chosen


def write_plots(run: Run, out: Path,
                samples: dict[tuple[str, int], tuple[RunRecord, list[np.ndarray]]]
                ) -> list[Path]:
    """Draw every plot the pages link to into ``out``: the cycles/byte plots and the
    distributions of ``samples``; return the files."""
    from ngcc.report.plots.common import save
    from ngcc.report.plots.cycles import cycles_per_byte
    from ngcc.report.plots.distribution import distribution

    summary = run.summary()  # each row's cycles/byte and CI: its leading figure's
    statistic = _figures.leading_words(run.records)
    per_byte = "%s/byte" % _figures.unit_word(t.unit for r in run.records for t in r.trials)
    written = []
    if len(summary):
        written += save(cycles_per_byte(summary, f"Run {run.run_id}: {per_byte}",
                                                    unit=per_byte, statistic=statistic),
                              out / PLOT_RUN_CPB)
    for candidate in run_candidates(run):
        rows = summary[[page_key(c, label) == candidate for c, label
                        in zip(summary["candidate"], summary["label"], strict=True)]]
        if len(rows):
            figure = cycles_per_byte(rows, f"{candidate}: {per_byte}", unit=per_byte,
                                           statistic=statistic)
            written += save(figure, out / plot_stem_cpb(candidate))
    for (label, length), (record, cycles) in samples.items():
        unit = _figures.unit_word(t.unit for t in record.trials)  # counter ticks, or ns
        figure = distribution(cycles, f"{label}, {_format.message(length)}: "
                                    f"{unit} per call", unit=f"{unit}/call")
        written += save(figure, out / plot_stem_distribution(label, length))
    for section in slice_modules("section"):  # each analysis's own plots
        written += section.draw_plots(run, out)
    return written
