"""One figure in every view: a fake run whose per-call mean, per-call median, batch mean
and CPU-time figure all differ shows, for each record, the same leading number in the
command line's tables (narrow and wide), section 4 of its page, the summary and field
pages, the statistics CSV and JSON, the data frames the plots draw, ``repr``, Jupyter's
HTML, the record's ``statistics`` and ``ngcc compare``."""

from __future__ import annotations

import io
import json
import re

import pandas as pd
import pytest

import ngcc
from ngcc.base import format as _format
from ngcc.cli.summary import campaign_summary
from ngcc.evidence import figures as _figures
from ngcc.report import export as _export
from ngcc.report import pages as _pages
from ngcc.report.compare import compare_runs
from ngcc.report.sections.performance import performance_row
from tests._fakes import FakeKat, FakeRunner, fixed_host

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")

LIBRARIES = ["SM3", "pseudoXOF-256"]
LENGTHS = [32, 1024]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        fixed_host(monkeypatch)
        return ngcc.Campaign(LIBRARIES, lengths=LENGTHS, trials=3, trial_target=0.001,
                             run_dir=tmp_path_factory.mktemp("one") / "run", progress=False,
                             runner=FakeRunner(batch=True), kat_checker=FakeKat()).run()


def test_the_four_figures_differ_and_the_cpu_time_leads(run):
    for record in run.records:
        stats = record.statistics
        figures = [stats.mean_cycles, stats.median_cycles, stats.batch_mean_ticks,
                   stats.cpu_time_ticks]
        assert None not in figures and len({round(f) for f in figures}) == 4, figures
        assert stats.figure.figure is _figures.CPU_TIME
        assert stats.figure.ticks == stats.cpu_time_ticks


def _per_byte(record) -> str:
    return _format.cycles_per_byte(record.statistics.figure.ticks / record.message_bytes)


def _per_call(record) -> str:
    return _format.cycles(record.statistics.figure.ticks)


def _row_of(lines, record):
    name, length = record.label, _format.message(record.message_bytes)
    return next(line for line in lines if line.startswith(name + " ") and f" {length} " in
                f" {line} ")


def test_the_command_line_tables(run):
    for wide in (False, True):
        lines = campaign_summary(run, wide=wide).splitlines()
        for record in run.records:
            line = _row_of(lines, record)
            assert _per_byte(record) in line.split() and " CPU time " in line, (wide, line)
            if wide:  # the per-call figure too
                assert " %s " % _per_call(record) in line


def test_the_pages(run):
    pages = _pages.pages(run, plots=False)
    for record in run.records:
        assert _per_byte(record) in performance_row(record)
        page = pages[_pages.page_name(record.candidate)]
        assert "| %s |" % _per_byte(record) in page  # section 4
        summary_row = next(line for line in pages[_pages.SUMMARY_PAGE].splitlines()
                           if line.startswith("|") and "`%s`" % record.label in line)
        assert "| %s |" % _per_byte(record) in summary_row
        field_row = next(line for line in pages[_pages.FIELD_PAGE].splitlines()
                         if line.startswith("|") and "`%s`" % record.label in line)
        assert "| %s |" % _per_call(record) in field_row
    assert "Section 4 leads with the CPU time per call." in pages[_pages.INDEX_PAGE]


def test_the_exports_and_frames(run):
    rows = json.loads(_export.statistics_json(run.records))
    frame = pd.read_csv(io.StringIO(_export.statistics_csv(run.records)))
    summary = run.summary()  # what the cycles/byte plots draw
    for i, record in enumerate(run.records):
        expected = record.statistics.figure.ticks / record.message_bytes
        assert rows[i]["cycles_per_byte"] == pytest.approx(expected)
        assert frame["cycles_per_byte"][i] == pytest.approx(expected)
        assert summary["cycles_per_byte"][i] == pytest.approx(expected)
        assert rows[i]["figure"] == "CPU time per call"
        assert record.statistics.cycles_per_byte == pytest.approx(expected)


def test_python_views(run):
    assert _per_byte(run.records[0]) in run._repr_html_()
    for record in run.records:
        assert re.search(r": %s ticks/byte \(CPU time\)" % re.escape(_per_byte(record)),
                         repr(record)), repr(record)
        assert _per_call(record) in record._repr_html_()


def test_compare_shows_the_leading_figures(run):
    result = compare_runs(run, run)
    for row in result.rows:
        record = run.record(row.pair.label_a, row.message_bytes)
        assert row.figure_a == row.figure_b == record.statistics.figure.ticks
        assert row.comparison.ratio == 1.0 and row.comparison.words == "not significant"
