"""Report pages: the structure of the seed pages, their numbers, ⚠, stability, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _fakerun import make_run

from ngcc import _analysis, _format, _report
from ngcc._cli import main
from ngcc._errors import CorruptRecordError, ReportError
from ngcc._run import Run, load_run

SEED_TABLE_SEEDS = ("000_401931b3ff49f000.txt", "003_644e4640a805ac3a.txt")  # tab-separated
SECTION = re.compile(r"^\d\. ")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return load_run(make_run(tmp_path_factory.mktemp("run") / "20260925T100221Z"))


@pytest.fixture(scope="module")
def page(run: Run) -> str:
    return _report.candidate_page(run, "hash-22")


def seed_sections(text: str) -> dict[str, list[str]]:
    """A seed page cut into its numbered sections: title → lines."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if SECTION.match(line):
            current = line.strip()
            sections[current] = []
        elif current is not None and line.strip():
            sections[current].append(line)
    return sections


def page_sections(text: str) -> dict[str, list[str]]:
    """A generated page cut into its level-2 sections: title → lines."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:]
            sections[current] = []
        elif current is not None and line.strip():
            sections[current].append(line)
    return sections


def markdown_header(lines: list[str]) -> list[str]:
    header = next(line for line in lines if line.startswith("| "))
    return [cell.strip() for cell in header.strip("|").split(" | ")]


def markdown_rows(lines: list[str]) -> list[list[str]]:
    rows = [line for line in lines if line.startswith("| ")][1:]
    return [[cell.strip() for cell in row.strip().strip("|").split(" | ")] for row in rows]


# ------------------------------------------------------------------ structure vs seeds

def test_section_titles_are_the_seeds(seeds_dir: Path, page: str) -> None:
    numbered = [title for title in page_sections(page) if SECTION.match(title)]
    for seed in sorted(seeds_dir.glob("*.txt")):
        assert list(seed_sections(seed.read_text(encoding="utf-8"))) == numbered, seed.name
    assert tuple(numbered) == _report.SECTION_TITLES


def test_extra_section_is_separate_and_after_performance(page: str) -> None:
    titles = list(page_sections(page))
    assert titles.index(_report.EXTRA_TITLE) == titles.index("4. Performance") + 1
    assert not SECTION.match(_report.EXTRA_TITLE)


def test_column_headers_are_the_seeds(seeds_dir: Path, page: str) -> None:
    mine = page_sections(page)
    for name in SEED_TABLE_SEEDS:
        seed = seed_sections((seeds_dir / name).read_text(encoding="utf-8"))
        for title, lines in seed.items():
            tables = [line for line in lines if "\t" in line]
            if not tables:
                continue
            assert markdown_header(mine[title]) == tables[0].split("\t"), (name, title)


def test_basic_information_items_are_the_seeds(seeds_dir: Path, page: str) -> None:
    seed = seed_sections((seeds_dir / SEED_TABLE_SEEDS[0]).read_text("utf-8"))
    seed_keys = [line.split(":")[0] for line in seed["1. Basic information"]]
    mine = [line[2:].split(":")[0] for line in page_sections(page)["1. Basic information"]]
    assert mine == seed_keys


def test_environment_items_start_with_the_seeds(seeds_dir: Path, page: str) -> None:
    seed = seed_sections((seeds_dir / SEED_TABLE_SEEDS[0]).read_text("utf-8"))
    seed_items = [line.split("\t")[0] for line in seed["2. Assessment environment"][1:]]
    mine = [row[0] for row in markdown_rows(page_sections(page)["2. Assessment environment"])]
    assert mine[:len(seed_items)] == seed_items


# ------------------------------------------------------------------ content

def test_performance_rows_format_the_records(run: Run, page: str) -> None:
    rows = markdown_rows(page_sections(page)["4. Performance"])
    records = _analysis.of_candidate(run.records, "hash-22")
    assert len(rows) == len(records) == 6
    for row, record in zip(rows, records, strict=True):
        stats = record.statistics
        assert row[1] == f"{record.message_bytes} B"
        assert row[2] == _format.cycles(stats.mean_cycles)
        assert row[3] == _format.cycles_per_byte(stats.cycles_per_byte)
        assert row[4] == _format.duration(stats.mean_seconds)
        assert row[5] == _format.megabytes_per_second(stats.mb_per_s)
        assert row[6] == "600 (3 × 200)"


def test_instances_timed_without_kat_pass_carry_a_warning(page: str) -> None:
    for title in ("4. Performance", _report.EXTRA_TITLE, "5. Resource consumption"):
        for row in markdown_rows(page_sections(page)[title]):
            assert ("⚠" in row[0]) == row[0].startswith("`Pavelor-1024`"), (title, row)
    section = page_sections(page)["3. Functional testing (KAT)"]
    kat = {row[0]: row[2] for row in markdown_rows(section)}
    assert kat["`Pavelor-512`"] == "PASS"
    assert kat["`Pavelor-1024`"].startswith("MISMATCH ⚠")


def test_extra_statistics(run: Run, page: str) -> None:
    rows = {(r[0], r[1]): r for r in markdown_rows(page_sections(page)[_report.EXTRA_TITLE])}
    record = run.record("Pavelor-512", 1024)
    baseline = run.record("pseudoXOF-512", 1024)
    stats = record.statistics
    row = rows[("`Pavelor-512`", "1024 B")]
    assert stats.version == 2   # the bootstrap interval, which cannot go below zero
    assert row[3] == "%s – %s" % (_format.cycles(stats.mean_bootstrap_ci95_low_ticks),
                                  _format.cycles(stats.mean_bootstrap_ci95_high_ticks))
    assert row[4] == "± " + _format.percent(stats.mean_bootstrap_ci95_relative)
    assert row[5] == _format.cycles(stats.median_cycles)
    ratio = stats.mean_cycles / baseline.statistics.mean_cycles
    assert 10 < ratio < 100
    assert row[6] == _format.ratio(ratio)
    # no pseudoXOF-1024 in the run: no ratio
    assert rows[("`Pavelor-1024` ⚠", "1024 B")][6] == _format.MISSING


def test_robust_statistics(run: Run, page: str) -> None:
    rows = {(r[0], r[1]): r for r in markdown_rows(page_sections(page)[_report.ROBUST_TITLE])}
    stats = run.record("Pavelor-512", 1024).statistics
    row = rows[("`Pavelor-512`", "1024 B")]
    assert row[2] == _format.cycles(stats.per_call_mean_ticks)
    assert row[3] == "%s – %s" % (_format.cycles(stats.mean_bootstrap_ci95_low_ticks),
                                  _format.cycles(stats.mean_bootstrap_ci95_high_ticks))
    assert row[5] == "%s – %s" % (_format.cycles(stats.median_ci95_low_ticks),
                                  _format.cycles(stats.median_ci95_high_ticks))
    assert row[6] == _format.MISSING   # the fake trials timed no batch


def test_failed_job_is_listed(page: str) -> None:
    assert "Not measured: `Pavelor-1024` at 8192 B: crash" in page


def test_evidence_index_points_at_files_of_the_run(run: Run, page: str) -> None:
    rows = markdown_rows(page_sections(page)["7. Raw evidence index"])
    assert len(rows) == 2 * (1 + 3 + 3)
    for _instance, _item, file in rows:
        assert (run.path / file.strip("`")).is_file(), file
    timing = [item for _, item, _ in rows if item.startswith("timing")]
    assert timing[:3] == ["timing hash_1024", "timing hash_32", "timing hash_65536"]


def test_resource_rows(run: Run, page: str) -> None:
    rows = markdown_rows(page_sections(page)["5. Resource consumption"])
    record = run.record("Pavelor-512", 32)
    assert rows[0] == ["`Pavelor-512`", "hash_32", "16417", "1672 KiB", "1780 KiB"]
    assert record.resources.elf_image_bytes == 16417


def test_summary_page(run: Run) -> None:
    text = _report.summary_page(run)
    rows = markdown_rows(page_sections(text)["Cycles/byte (mean over all calls)"])
    assert [row[1] for row in rows] == ["`Pavelor-512`", "`Pavelor-1024` ⚠", "`pseudoXOF-512`"]
    assert rows[0][3:] == [_format.cycles_per_byte(run.record("Pavelor-512", n)
                                                   .statistics.cycles_per_byte)
                           for n in (32, 1024, 65536)]
    assert "[hash-22](hash-22.md)" in text and "[baseline](baseline.md)" in text
    assert "Jobs not measured" in text


# ------------------------------------------------------------------ byte stability

def test_pages_are_byte_stable_and_relative(run: Run, tmp_path: Path) -> None:
    first = _report.pages(run)
    assert first == _report.pages(load_run(run.path))
    for name, text in first.items():
        assert str(run.path) not in text, name
        assert "/opt/" not in text, name  # library paths stay in the records
    copy = tmp_path / "moved"
    import shutil
    shutil.copytree(run.path, copy)
    assert _report.pages(load_run(copy)) == first


@pytest.fixture(scope="module")
def written(run: Run, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """``ngcc report RUN --out DIR --distribution Pavelor-1024:65536``, drawn once for the
    tests below (the plots are most of a report's time): the folder and the lines printed."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("report") / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["report", str(run.path), "--out", str(out),
                     "--distribution", "Pavelor-1024:65536"]) == 0
    return out, printed.getvalue().splitlines()


def test_write_report_writes_pages_and_plots(written: tuple[Path, list[str]]) -> None:
    out, printed = written
    names = {Path(line).name for line in printed}
    assert {"hash-22.md", "baseline.md", "summary.md", "run-cpb.png", "run-cpb.svg",
            "hash-22-cpb.png", "Pavelor-512__hash_32-calls.svg"} <= names
    assert printed[:3] == [str(out / name) for name in ("hash-22.md", "baseline.md",
                                                        "summary.md")]     # pages first
    for line in printed:
        assert Path(line).stat().st_size > 0
    for page in ("hash-22.md", "summary.md"):
        for link in re.findall(r"\]\(([^)]+\.png)\)", (out / page).read_text(encoding="utf-8")):
            assert (out / link).is_file(), link


def test_cli_report_chosen_distribution(written: tuple[Path, list[str]]) -> None:
    out, printed = written
    assert (out / "Pavelor-1024__hash_65536-calls.png").is_file()
    assert str(out / "Pavelor-1024__hash_65536-calls.svg") in printed


def test_the_python_api_writes_the_same_pages(run: Run, written: tuple[Path, list[str]],
                                              tmp_path: Path) -> None:
    pages = run.report(tmp_path / "api", plots=False)
    assert [p.name for p in pages] == ["hash-22.md", "baseline.md", "summary.md"]
    for page in pages:
        assert page.read_bytes() == (written[0] / page.name).read_bytes()


# ------------------------------------------------------------------ bad input

def test_missing_field_names_the_record(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run", calls=20)
    record = run_dir / "records/hash-22/Pavelor-512__hash_32.json"
    data = json.loads(record.read_text())
    del data["resources"]["peak_rss_kib"]
    record.write_text(json.dumps(data))
    with pytest.raises(CorruptRecordError, match=r"Pavelor-512__hash_32\.json.*peak_rss_kib"):
        _report.pages(load_run(run_dir))


def test_cli_report_on_corrupt_run_is_one_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = make_run(tmp_path / "run", calls=20)
    record = run_dir / "records/baseline/pseudoXOF-512__hash_1024.json"
    data = json.loads(record.read_text())
    data["statistics"]["mean_cycles"] = "fast"
    record.write_text(json.dumps(data))
    assert main(["report", str(run_dir), "--no-plots"]) == 1
    err = capsys.readouterr().err
    assert "pseudoXOF-512__hash_1024.json" in err and "mean_cycles" in err
    assert "Traceback" not in err


def test_cli_report_on_foreign_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("not a run")
    assert main(["report", str(tmp_path)]) == 1
    assert "not an ngcc run directory" in capsys.readouterr().err


def test_cli_report_unknown_distribution(run: Run, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["report", str(run.path), "--out", str(out), "--distribution", "Wish512:32"]) == 1
    assert "no record of Wish512 at 32 B" in capsys.readouterr().err
    assert not out.exists()  # refused before anything was written
    with pytest.raises(ReportError):
        _report.chosen_records(run, [("Pavelor-512", 4096)])


# ------------------------------------------------------------------ Jupyter

def test_html_tables(run: Run) -> None:
    html = run._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 1 + len(run.records)
    assert "Pavelor-1024 ⚠" in html and "`" not in html
    record_html = run.record("Pavelor-512", 32)._repr_html_()
    assert "<table>" in record_html and "95 % CI of the mean" in record_html
    assert _format.cycles(run.record("Pavelor-512", 32).statistics.mean_cycles) in record_html


def test_run_without_build_json_still_indexes_its_records(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run", calls=20)
    (run_dir / "build.json").unlink()
    page = _report.candidate_page(load_run(run_dir), "hash-22")
    assert markdown_rows(page_sections(page)["3. Functional testing (KAT)"]) == []
    rows = markdown_rows(page_sections(page)["7. Raw evidence index"])
    assert len(rows) == 2 * (3 + 3)  # no KAT logs known, every record and raw file
    assert "Parameter sets: Pavelor-512, Pavelor-1024" in page
