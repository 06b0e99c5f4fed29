"""Exports: the statistics table as CSV and JSON (round trips into pandas), and the
pages as self-contained HTML (no network, plots inline)."""

from __future__ import annotations

import base64
import io
import json
import re
from dataclasses import fields
from pathlib import Path

import pandas as pd
import pytest
from _fakerun import make_run

from ngcc.base.errors import ReportError
from ngcc.cli.main import main
from ngcc.evidence.model import Statistics
from ngcc.evidence.run import Run, load_run
from ngcc.report import export as _export
from ngcc.report import pages as _report
from ngcc.report import write as _write
from ngcc.stats.tables import KEY_COLUMNS

PNG = b"\x89PNG\r\n\x1a\n fake image bytes"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return load_run(make_run(tmp_path_factory.mktemp("run") / "run", calls=30))


# ------------------------------------------------------------------ tables

def test_csv_round_trips_into_pandas(run: Run) -> None:
    frame = pd.read_csv(io.StringIO(_export.statistics_csv(run.records)))
    assert len(frame) == len(run.records) == 9
    assert set(KEY_COLUMNS) | {f.name for f in fields(Statistics)} <= set(frame.columns)
    assert "host" not in frame.columns  # no record of the fake run names its host
    for row, record in zip(frame.itertuples(), run.records, strict=True):
        stats = record.statistics
        assert (row.candidate, row.label, row.message_bytes) == (
            record.candidate, record.label, record.message_bytes)
        assert row.mean_cycles == stats.mean_cycles
        assert row.ci95_low_cycles == stats.ci95_low_cycles
        assert row.calls == stats.calls and row.min_cycles == stats.min_cycles
        assert json.loads(row.outlying_trials) == list(stats.outlying_trials)
        assert json.loads(row.flags) == [flag.to_json() for flag in stats.flags]
    assert frame["pseudoxof_ratio"].isna().sum() == 3  # Pavelor-1024 has no baseline


def test_json_round_trips_into_pandas(run: Run) -> None:
    text = _export.statistics_json(run.records)
    rows = json.loads(text)
    assert len(rows) == 9 and rows[0]["label"] == "Pavelor-512"
    assert rows[3]["pseudoxof_ratio"] is None and isinstance(rows[0]["flags"], list)
    assert rows[0]["mean_cycles"] == run.records[0].statistics.mean_cycles
    frame = pd.read_json(io.StringIO(text))
    assert list(frame.columns) == list(_export.statistics_frame(run.records).columns)
    assert list(frame["message_bytes"]) == [r.message_bytes for r in run.records]


def test_tables_of_a_run_without_records(run: Run) -> None:
    assert json.loads(_export.statistics_json([])) == []
    assert pd.read_csv(io.StringIO(_export.statistics_csv([]))).empty


def test_host_column_when_the_evidence_names_one(run: Run) -> None:
    from dataclasses import replace

    records = [replace(r, environment=replace(r.environment, host=f"node{i % 2}"))
               for i, r in enumerate(run.records)]  # Environment.host (the dask branch)
    frame = _export.statistics_frame(records)
    assert list(frame.columns[:len(KEY_COLUMNS) + 1]) == [*KEY_COLUMNS, "host"]
    assert list(frame["host"][:3]) == ["node0", "node1", "node0"]


# ------------------------------------------------------------------ HTML

EXTERNAL = re.compile(r"(https?:|//|<script|<link|@import|url\()", re.I)


def assert_self_contained(text: str) -> None:
    """No address outside the page's folder, nothing fetched: every src is inline data,
    every href another page of the report or an anchor of this one."""
    found = EXTERNAL.search(re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]*", "", text))
    assert found is None, found
    for src in re.findall(r'src="([^"]*)"', text):
        assert src.startswith("data:image/png;base64,"), src[:40]
    for href in re.findall(r'href="([^"]*)"', text):
        assert href.startswith("#") or re.fullmatch(r"[\w.+@-]+\.html", href), href
    ids = set(re.findall(r'id="([^"]*)"', text))
    for anchor in re.findall(r'href="#([^"]*)"', text):
        assert anchor in ids, anchor


def test_html_pages_are_self_contained_with_their_plots_inline(run: Run) -> None:
    images = {f"{stem}.png": PNG + stem.encode() for stem in _report.plot_stems(run)}
    pages = _export.html_pages(_report.pages(run), images)
    assert set(pages) == {"index.html", "hash-22.html", "baseline.html", "summary.html",
                          "field.html"}
    for text in pages.values():
        assert_self_contained(text)
        assert text.startswith("<!DOCTYPE html>") and "<style>" in text
    page = pages["hash-22.html"]
    inline = base64.b64encode(images["hash-22-cpb.png"]).decode()
    assert f'src="data:image/png;base64,{inline}"' in page
    # the distributions, linked in Markdown, are figures further down the page
    assert page.count("<figure id=") == 2
    assert '<a href="#fig-Pavelor-512__hash_32-calls.png"><code>Pavelor-512</code> 32 B</a>' \
        in page
    assert '<a href="hash-22.html">hash-22</a>' in pages["index.html"]
    # tables keep their cells, escaped pipes and all
    assert page.count("<tr>") == page.count("</tr>")
    assert "<th>95 % CI of the figure</th>" in page
    assert "<td><code>Pavelor-1024</code> ⚠</td>" in page


def test_html_without_plots_shows_none(run: Run) -> None:
    pages = _export.html_pages(_report.pages(run, plots=False), {})
    for text in pages.values():
        assert_self_contained(text)
        assert "<img" not in text and "<figure" not in text


def test_markdown_subset() -> None:
    text = _export.html_page("# A <b> & `c|d`\n\n**⚠ two** lines\nof text\n\n- x\n- y\n\n"
                             "| a | b \\| c |\n|---|---|\n| 1 | ![p](p.png) |\n", {})
    assert '<h1 id="a-b--cd">A &lt;b&gt; &amp; <code>c|d</code></h1>' in text
    assert '<p class="warning"><strong>⚠ two</strong> lines of text</p>' in text
    assert "<ul>\n<li>x</li>\n<li>y</li>\n</ul>" in text
    assert "<th>b | c</th>" in text and "<td><em>(p: not drawn)</em></td>" in text


def test_anchors_and_links_to_them_survive_the_html(tmp_path: Path) -> None:
    """A heading's id as GitHub makes it, an anchor a page writes, and a link to either
    (on the page or on another) live in the HTML as in the Markdown; validate checks
    each fragment in both forms."""
    from ngcc.base.untrusted import markdown, markdown_text
    from ngcc.report.validate import link_problem

    page = ("# Top\n\n## A section (x's) `b`\n\n- %s`a.c:3` quoted\n\n[see](#site-1), "
            "[there](other.md#a-section-xs-b), [up](#top)\n" % _export.anchor("site-1"))
    text = _export.html_page(page, {})
    assert '<h2 id="a-section-xs-b">A section (x&#x27;s) <code>b</code></h2>' in text
    assert '<li><a id="site-1"></a><code>a.c:3</code> quoted</li>' in text
    assert '<a href="#site-1">see</a>' in text and '<a href="#top">up</a>' in text
    assert '<a href="other.html#a-section-xs-b">there</a>' in text
    assert _export.markdown_anchors(page + "# Top\n") == ["top", "a-section-xs-b", "site-1",
                                                           "top-1"]
    inert = _export.html_page("%s %s\n" % (markdown_text('<a id="x"></a>'),
                                            markdown('<a id="y"></a>')), {})
    assert 'id="x"' not in inert and 'id="y"' not in inert  # library text writes none
    with pytest.raises(ValueError, match="letters, digits"):
        _export.anchor("a b")
    report = tmp_path / "report"
    report.mkdir()
    (report / "other.md").write_text("## A section (x's) `b`\n")
    (report / "other.html").write_text(_export.html_page("## A section (x's) `b`\n", {}))
    here = report / "here.md"
    here.write_text(page)
    assert [link_problem(tmp_path, here, t) for t in ("#site-1", "#top", "other.md#a-section-xs-b",
                                                       "other.html#a-section-xs-b")] == [None] * 4
    assert link_problem(tmp_path, here, "#nowhere") == "an anchor the page lacks"
    assert link_problem(tmp_path, here, "other.md#nowhere") == "an anchor other.md lacks"


def test_figures_with_their_intervals_align_right() -> None:
    text = _export.html_page("| a | b | c | d |\n|---|---|---|---|\n| 1930 (1789 – 2054) | "
                             "1968 – 2318 (± 8.40 %) | 1914 (1899 – 1929), loop 2023 | "
                             "1 slow_trial |\n", {})
    for cell in ("1930 (1789 – 2054)", "1968 – 2318 (± 8.40 %)",
                 "1914 (1899 – 1929), loop 2023"):
        assert f'<td class="num">{cell}</td>' in text.replace("\u00a0", " ")
    assert "<td>1 slow_trial</td>" in text


# ------------------------------------------------------------------ files, CLI

def test_report_formats(run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["report", str(run.path), "--out", str(out), "--no-plots", "--format", "html",
                 "--format", "csv", "--format", "json", "--format", "csv"]) == 0
    names = [Path(line).name for line in capsys.readouterr().out.splitlines()]
    assert names == ["index.html", "hash-22.html", "baseline.html", "summary.html",
                     "field.html", "statistics.csv", "statistics.json"]
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    assert (out / "statistics.csv").read_text() == _export.statistics_csv(run.records)
    assert main(["report", str(run.path), "--format", "pdf"]) == 2
    assert "invalid choice: 'pdf'" in capsys.readouterr().err
    with pytest.raises(ReportError, match="unknown report format pdf; choose from markdown"):
        _write.write_report(run, out, formats=["pdf"])


def test_labels_with_dots_and_at_signs(tmp_path: Path) -> None:
    """Labels such as ``Pavelor-512@perf`` and ``Pavelor-1024.external`` (issue 16): each
    plot its own file, every link resolves (Markdown) and every anchor its figure (HTML)."""
    from ngcc.report.validate import check_links

    labels = {"Pavelor-512": "Pavelor-512@perf", "Pavelor-1024": "Pavelor-1024.external"}
    run = load_run(make_run(tmp_path / "run", calls=20, labels=labels))
    stems = _report.plot_stems(run)
    assert {"Pavelor-512@perf__hash_32-calls", "Pavelor-1024.external__hash_32-calls"} <= stems
    report = run.path / "report"
    report.mkdir()
    images = {}
    for stem in stems:  # stand-ins for the plots: the links are what is checked
        images[f"{stem}.png"] = PNG + stem.encode()
        (report / f"{stem}.png").write_bytes(images[f"{stem}.png"])
    for name, text in _write.report_files(run, ("markdown", "html"), True, images).items():
        (report / name).write_text(text, encoding="utf-8")
    assert check_links(run) == []
    page = (report / "hash-22.html").read_text(encoding="utf-8")
    assert_self_contained(page)
    assert 'id="fig-Pavelor-1024.external__hash_32-calls.png"' in page
    assert "[`Pavelor-512@perf` 32 B](Pavelor-512@perf__hash_32-calls.png)" in (
        report / "hash-22.md").read_text(encoding="utf-8")
    rows = json.loads(_export.statistics_json(run.records))
    assert [row["label"] for row in rows[:4:3]] == ["Pavelor-512@perf", "Pavelor-1024.external"]
    assert {row["instance"] for row in rows[:6]} == {"Pavelor-512", "Pavelor-1024"}


def test_every_tuple_statistic_is_a_json_list(run: Run) -> None:
    from dataclasses import replace

    records = [replace(r, statistics=replace(r.statistics, preempted_trials=(0, 2)))
               for r in run.records[:2]]
    frame = pd.read_csv(io.StringIO(_export.statistics_csv(records)))
    assert [json.loads(cell) for cell in frame["preempted_trials"]] == [[0, 2], [0, 2]]
    assert json.loads(_export.statistics_json(records))[0]["preempted_trials"] == [0, 2]
