"""Report pages: the structure of the seed pages, their numbers, ⚠, stability, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _fakerun import make_run

from ngcc.base import format as _format
from ngcc.base.errors import CorruptRecordError, ReportError
from ngcc.cli.main import main
from ngcc.evidence.model import Flag, Record
from ngcc.evidence.run import Run, load_run
from ngcc.report import pages as _report
from ngcc.report import write as _write
from ngcc.report.sections import common as _sections
from ngcc.report.sections import failures as _failures
from ngcc.report.sections import statistics as _statistics
from ngcc.stats import groups as _analysis

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
    assert tuple(numbered) == _sections.SECTION_TITLES


def test_robustness_is_one_section_right_after_performance(page: str) -> None:
    titles = list(page_sections(page))
    assert titles.index(_statistics.ROBUSTNESS_TITLE) == titles.index("4. Performance") + 1
    assert not SECTION.match(_statistics.ROBUSTNESS_TITLE)
    extra = [t for t in titles if not SECTION.match(t)]
    assert extra == [_statistics.ROBUSTNESS_TITLE]  # no other table beyond the guide's


def test_sections_are_as_long_as_the_seeds(seeds_dir: Path, run: Run) -> None:
    """Each numbered section has the seed's rows and at most a few lines more (a legend,
    section 2's further facts), and a figure of section 4 is not said again after it."""
    seed = seed_sections((seeds_dir / SEED_TABLE_SEEDS[0]).read_text("utf-8"))
    page = page_sections(_report.candidate_page(run, "hash-22"))
    records = len(_analysis.of_candidate(run.records, "hash-22"))
    allowance = {"2. Assessment environment": 5}  # counter, virtualization, load, software
    for title, lines in seed.items():
        rows = {"4. Performance": records, "5. Resource consumption": records,
                "7. Raw evidence index": 2 + records}.get(title)
        mine = page[title]
        if rows is not None:
            assert len(markdown_rows(mine)) == rows, title
            assert len(mine) <= rows + 4, (title, len(mine))
        else:
            assert len(mine) <= len(lines) + 2 + allowance.get(title, 0), (title, len(mine))
    section4 = markdown_header(page["4. Performance"])
    robust = markdown_header(page[_statistics.ROBUSTNESS_TITLE])
    assert set(section4) & set(robust) == {"instance", "message"}
    assert not any("mean cycles" in column for column in robust)


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
    for title in ("4. Performance", _statistics.ROBUSTNESS_TITLE, "5. Resource consumption"):
        for row in markdown_rows(page_sections(page)[title]):
            assert ("⚠" in row[0]) == row[0].startswith("`Pavelor-1024`"), (title, row)
    section = page_sections(page)["3. Functional testing (KAT)"]
    kat = {row[0]: row[2] for row in markdown_rows(section)}
    assert kat["`Pavelor-512`"] == "PASS"
    assert kat["`Pavelor-1024`"].startswith("MISMATCH ⚠")


def robustness_rows(page: str) -> dict[tuple[str, str], dict[str, str]]:
    """The robustness table: (instance, message) → header → cell."""
    section = page_sections(page)[_statistics.ROBUSTNESS_TITLE]
    header = markdown_header(section)
    return {(r[0], r[1]): dict(zip(header, r, strict=True)) for r in markdown_rows(section)}


def test_robustness_figures(run: Run, page: str) -> None:
    rows = robustness_rows(page)
    record = run.record("Pavelor-512", 1024)
    baseline = run.record("pseudoXOF-512", 1024)
    stats = record.statistics
    row = rows[("`Pavelor-512`", "1024 B")]
    assert stats.version >= 2   # the bootstrap interval, which cannot go below zero
    assert list(row) == ["instance", "message", "95 % CI of the figure",
                         "per-call mean (95 % CI)", "median (95 % CI)", "× pseudoXOF"]
    # the fake trials measured no CPU time: the per-call mean leads, with its interval
    assert stats.figure.name == "per-call mean"
    assert row["95 % CI of the figure"] == "%s – %s (± %s)" % (
        _format.cycles(stats.mean_bootstrap_ci95_low_ticks),
        _format.cycles(stats.mean_bootstrap_ci95_high_ticks),
        _format.percent(stats.mean_bootstrap_ci95_relative))
    assert row["per-call mean (95 % CI)"] == "%s (%s – %s)" % (
        _format.cycles(stats.mean_cycles), _format.cycles(stats.mean_bootstrap_ci95_low_ticks),
        _format.cycles(stats.mean_bootstrap_ci95_high_ticks))
    assert row["median (95 % CI)"] == "%s (%s – %s)" % (
        _format.cycles(stats.median_cycles), _format.cycles(stats.median_ci95_low_ticks),
        _format.cycles(stats.median_ci95_high_ticks))
    ratio = stats.mean_cycles / baseline.statistics.mean_cycles
    assert 10 < ratio < 100
    assert row["× pseudoXOF"] == _format.ratio(ratio)
    # no pseudoXOF-1024 in the run: no ratio
    assert rows[("`Pavelor-1024` ⚠", "1024 B")]["× pseudoXOF"] == _format.MISSING
    # the fake trials timed no batch and no CPU time, and none was flagged: those columns
    # are not shown, nor their legend
    assert "CPU time/call over" not in page and "Batch mean" not in page \
        and "Flags:" not in page


def test_robustness_cells_of_newer_figures(run: Run) -> None:
    from dataclasses import replace

    record = run.record("Pavelor-512", 1024)
    stats = replace(record.statistics, version=4, cpu_time_ticks=1914.2,
                    cpu_time_ci95_low_ticks=1899.0, cpu_time_ci95_high_ticks=1929.4,
                    cpu_time_ci95_relative=0.008, loop_cpu_time_ticks=2023.0,
                    batch_mean_ticks=1962.0, leading="cpu_time", left_out_trials=(1,))
    newer = replace(record, statistics=stats)
    assert _statistics.lead_ci_cell(newer) == "1899 – 1929 (± 0.80 %); 1 of 3 trials left out"
    assert _statistics.loop_cell(newer) == "2023"
    assert _statistics.batch_cell(newer).startswith("1962; ")
    headers = [c.header for c in _statistics.columns(run, [record, newer])]
    assert "CPU time/call over the loop" in headers and "batch mean; observer effect" in headers
    assert _statistics.loop_cell(record) == _format.MISSING
    assert "flags" not in headers
    flagged = replace_flags(newer, [Flag("slow_trial", 0, "0: +6 %", 0.06)])
    assert _statistics.flags_cell(flagged) == "1 slow_trial"
    assert [c.header for c in _statistics.columns(run, [flagged])][-1] == "flags"


def test_failed_job_is_listed_once_at_the_top(page: str) -> None:
    assert page.count("`Pavelor-1024` at 8192 B") == 1
    top = page.split("## 1.")[0]
    assert "**⚠ 1 of 7 jobs not measured** (6 done, 1 crash); one cause:" in top
    assert "- crash, 1 job (`Pavelor-1024` at 8192 B): `Pavelor-1024 at 8192 B: SIGSEGV" in top


def test_evidence_index_points_at_files_of_the_run(run: Run, page: str) -> None:
    rows = markdown_rows(page_sections(page)["7. Raw evidence index"])
    assert len(rows) == 2 * (1 + 3)  # as the seeds: the KAT log, a row per record
    for _instance, item, files in rows:
        paths = [file.strip("`") for file in files.split(", ")]
        assert len(paths) == (2 if item.startswith("timing") else 1), files
        for path in paths:
            assert (run.path / path).is_file(), path
    timing = [(item, files) for _, item, files in rows if item.startswith("timing")]
    assert [item for item, _ in timing[:3]] == ["timing hash_1024", "timing hash_32",
                                                "timing hash_65536"]
    assert timing[0][1] == ("`records/hash-22/Pavelor-512__hash_1024.json`, "
                            "`raw/hash-22/Pavelor-512__hash_1024.npz`")


def test_resource_rows(run: Run, page: str) -> None:
    rows = markdown_rows(page_sections(page)["5. Resource consumption"])
    record = run.record("Pavelor-512", 32)
    assert rows[0] == ["`Pavelor-512`", "hash_32", "16417", "1672 KiB", "1780 KiB"]
    assert record.resources.elf_image_bytes == 16417


def test_summary_page(run: Run) -> None:
    text = _report.summary_page(run)
    rows = markdown_rows(page_sections(text)["Cycles/byte (per-call mean)"])  # no CPU time
    assert [row[1] for row in rows] == ["`Pavelor-512`", "`Pavelor-1024` ⚠", "`pseudoXOF-512`"]
    assert rows[0][3:] == [_format.cycles_per_byte(run.record("Pavelor-512", n)
                                                   .statistics.cycles_per_byte)
                           for n in (32, 1024, 65536)]
    assert "[hash-22](hash-22.md)" in text and "[baseline](baseline.md)" in text
    assert text.count("`Pavelor-1024` at 8192 B") == 1  # the failed job once, at the top
    assert text.count("SIGSEGV") == 1  # the cause once, at the top; the table has no errors


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
    assert {"index.md", "hash-22.md", "baseline.md", "summary.md", "run-cpb.png",
            "run-cpb.svg", "hash-22-cpb.png", "Pavelor-512__hash_32-calls.svg"} <= names
    assert printed[:4] == [str(out / name) for name in ("index.md", "hash-22.md",
                                                        "baseline.md", "summary.md")]
    for line in printed:
        assert Path(line).stat().st_size > 0
    for page in ("index.md", "hash-22.md", "baseline.md", "summary.md"):
        links = re.findall(r"\]\(([^)]+)\)", (out / page).read_text(encoding="utf-8"))
        assert links, page
        for link in links:
            assert (out / link).is_file(), (page, link)


def test_cli_report_chosen_distribution(written: tuple[Path, list[str]]) -> None:
    out, printed = written
    assert (out / "Pavelor-1024__hash_65536-calls.png").is_file()
    assert str(out / "Pavelor-1024__hash_65536-calls.svg") in printed


def test_the_python_api_writes_the_same_pages(run: Run, written: tuple[Path, list[str]],
                                              tmp_path: Path) -> None:
    pages = run.report(tmp_path / "api", plots=False)
    assert [p.name for p in pages] == ["index.md", "hash-22.md", "baseline.md", "summary.md",
                                       "field.md"]
    assert main(["report", str(run.path), "--out", str(tmp_path / "cli"), "--no-plots"]) == 0
    for page in pages:
        assert page.read_bytes() == (tmp_path / "cli" / page.name).read_bytes()
        text = page.read_text(encoding="utf-8")
        assert ".png" not in text and "distributions:" not in text, page.name
    # with the plots drawn, the pages are those of `_report.pages`, plot links and all
    for name, text in _report.pages(run).items():
        assert (written[0] / name).read_text(encoding="utf-8") == text


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
    assert main(["report", str(run.path), "--out", str(out), "--distribution", "Wish512:32"]) == 2
    assert "no record of Wish512 at 32 B" in capsys.readouterr().err
    assert not out.exists()  # refused before anything was written
    with pytest.raises(ReportError):
        _write.chosen_records(run, [("Pavelor-512", 4096)])


# ------------------------------------------------------------------ Jupyter

def test_html_tables(run: Run) -> None:
    html = run._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 1 + len(run.records)
    assert "Pavelor-1024 ⚠" in html and "`" not in html
    record_html = run.record("Pavelor-512", 32)._repr_html_()
    assert "<table>" in record_html and "95 % CI of the figure" in record_html
    assert "per-call mean (95 % CI)" in record_html
    assert _format.cycles(run.record("Pavelor-512", 32).statistics.mean_cycles) in record_html


def test_run_without_build_json_still_indexes_its_records(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run", calls=20)
    (run_dir / "build.json").unlink()
    page = _report.candidate_page(load_run(run_dir), "hash-22")
    assert markdown_rows(page_sections(page)["3. Functional testing (KAT)"]) == []
    rows = markdown_rows(page_sections(page)["7. Raw evidence index"])
    assert len(rows) == 2 * 3  # no KAT logs known, every record with its raw file
    assert "Parameter sets: Pavelor-512, Pavelor-1024" in page


# ------------------------------------------------------------------ index, failures, flags

def test_index_page(run: Run) -> None:
    text = _report.index_page(run)
    rows = markdown_rows(page_sections(text)["Candidates"])
    assert markdown_header(page_sections(text)["Candidates"]) == list(_report.INDEX_COLUMNS)
    assert [row[0] for row in rows] == ["hash-22", "baseline"]
    assert rows[0][2] == "`Pavelor-512`, `Pavelor-1024` ⚠"  # timed without a KAT pass
    assert rows[0][3] == "32 B, 1024 B, 8192 B, 65536 B"
    assert rows[0][4] == "6 done, 1 crash" and rows[1][4] == "3 done"
    assert rows[0][5] == "[hash-22](hash-22.md)"
    assert "[summary](summary.md)" in text
    assert "jobs measured" not in text and text.count("9 done, 1 crash") == 1  # said once
    assert text.count("SIGSEGV") == 1


def test_run_pages_name_the_cpu_once_and_count_jobs_when_all_were_measured() -> None:
    run = load_run(Path(__file__).resolve().parent / "data" / "run-quick")
    for text in (_report.index_page(run), _report.summary_page(run), _report.field_page(run)):
        head = text.split("## ")[0]
        assert head.count(run.environment.cpu_model or "?") == 1
        assert "4 of 4 jobs measured." in head and "jobs not measured" not in text


def fail_jobs(run_dir: Path, labels: set[str], error: str, status: str = "crash") -> Path:
    """Mark every job of ``labels`` as failed with ``error`` (``{label}``/``{n}`` filled
    in per job, as a campaign's messages name their job) and delete its record."""
    from dataclasses import replace

    from ngcc.evidence import records as _records

    campaign = _records.load_campaign(run_dir)
    jobs = []
    for job in campaign.jobs:
        if job.label in labels:
            (run_dir / job.record).unlink(missing_ok=True)
            (run_dir / job.raw).unlink(missing_ok=True)
            job = replace(job, status=status, error=error.format(label=job.label,
                                                                 n=job.message_bytes))
        jobs.append(job)
    _records.dump_campaign(run_dir, replace(campaign, jobs=tuple(jobs)))
    return run_dir


CAUSE = ("{label} at {n} B (calibration) crashed: cannot load /opt/lib/{label}.so: "
         "undefined symbol: wchain_crypt_hash_c")


def test_a_run_where_every_job_failed_says_so_once(tmp_path: Path) -> None:
    from ngcc.report.validate import check_links

    run_dir = fail_jobs(make_run(tmp_path / "run", calls=20),
                        {"Pavelor-512", "Pavelor-1024", "pseudoXOF-512"}, CAUSE)
    run = load_run(run_dir)
    assert run.records == []
    written = _write.write_report(run)  # plots asked for, but there is nothing to draw
    assert [p.suffix for p in written] == [".md"] * 5  # index, 2 candidates, summary, field
    for path in written:
        text = path.read_text(encoding="utf-8")
        top = text.split("## ")[0]
        assert "not measured**" in top, path.name
        assert ".png" not in text and "distributions:" not in text, path.name
        assert text.count("undefined symbol") <= 1, path.name  # the common cause once
    summary = (run_dir / "report/summary.md").read_text(encoding="utf-8")
    assert "**⚠ 10 of 10 jobs not measured** (0 done, 10 crash); one cause:" in summary
    assert ("- crash, 10 jobs (`Pavelor-512` at 32 B, 1024 B, 65536 B; `Pavelor-1024` at "
            "32 B, 1024 B, 65536 B, 8192 B; `pseudoXOF-512` at 32 B, 1024 B, 65536 B): "
            "`Pavelor-512 at 32 B (calibration) crashed: cannot load /opt/lib/Pavelor-512.so: "
            "undefined symbol: wchain_crypt_hash_c") in summary
    assert "No job was measured." in summary
    assert check_links(run) == []


def test_failure_causes_group_by_what_is_not_particular_to_the_job(run: Run) -> None:
    from dataclasses import replace

    job = run.jobs[0]
    jobs = [replace(job, label=label, instance=label, message_bytes=n, status="crash",
                    error=f"{label} timing 200 calls at {n} B (trial {k}) crashed: SIGILL")
            for k, (label, n) in enumerate([("Wish512", 32), ("WChain-V1-512", 64),
                                                    ("Wish512", 64)])]
    jobs += [replace(job, label=label, instance=label, status="timeout", message_bytes=n,
                     error=f"{label} at {n} B (trial 0) did not finish within {t} s (its "
                           "process group was killed)")
             for label, n, t in [("Wish512", 32, 9), ("Wish512", 64, 12.5)]]
    groups = _analysis.failure_groups([*jobs, job])
    assert [(status, len(group)) for status, group in groups] == [("crash", 3), ("timeout", 2)]
    assert _analysis.failure_cause(jobs[1]) == ("<library> timing <k> calls at <n> B "
                                              "(trial <k>) crashed: SIGILL")


def test_flags_are_grouped_one_line_per_kind(run: Run) -> None:
    from dataclasses import replace

    first, second = run.record("Pavelor-512", 32), run.record("Pavelor-512", 1024)
    centre = first.statistics.median_of_trial_means_cycles
    far = replace(first.trials[2], statistics=replace(first.trials[2].statistics,
                                                      mean_cycles=1.5 * centre))
    first = replace(first, trials=(*first.trials[:2], far), statistics=replace(
        first.statistics, flags=(Flag("outlying_trial", 0, "trial 0 was slow"),
                                 Flag("outlying_trial", 2, "trial 2 was 50 % slow"),
                                 Flag("counter_rate", 1, "trial 1 ran at 80 %"))))
    second = replace(second, statistics=replace(
        second.statistics, flags=(Flag("outlying_trial", 1, "trial 1 was slow"),)))
    lines = _failures.flag_lines([first, second, run.record("Pavelor-512", 65536)])
    assert lines == [
        "- ⚠ `outlying_trial`: 3 trials in 2 of 3 records; worst: `Pavelor-512` 32 B, "
        "trial 2 was 50 % slow",
        "- ⚠ `counter_rate`: 1 trial in 1 of 3 records; worst: `Pavelor-512` 32 B, "
        "trial 1 ran at 80 %", ""]
    assert _failures.flag_lines([second]) != [] and _failures.flag_lines([]) == []


def test_a_campaign_whose_every_job_crashes_reports_it_once(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """End to end with the campaign's fakes: every cold call crashes with one setup error
    (as a library that cannot load would); the pages say so once, and link nothing."""
    import contextlib

    from _fakes import FakeKat, FakeRunner, fixed_host

    import ngcc
    from ngcc.base.errors import ChildError, NgccError
    from ngcc.report.validate import check_links

    class Crashing(FakeRunner):
        def cold_call(self, instance, message_bytes, cpu, timeout):  # type: ignore[no-untyped-def]
            raise ChildError("crash", f"{instance.name} at {message_bytes} B (calibration) "
                             "crashed: the process died of SIGSEGV (invalid memory access "
                             f"at {0x7f00 + message_bytes:#x})")

    fixed_host(monkeypatch)
    run_dir = tmp_path / "run"
    # a campaign may stop early when every job fails; its run directory stays
    with contextlib.suppress(NgccError):
        ngcc.Campaign(["WChain-V1-512", "SM3"], run_dir=run_dir, runner=Crashing(),
                      kat_checker=FakeKat(), quick=True, trials=2, trial_target=0.002,
                      lengths=[32, 64, 1024, 4096], progress=False).run()
    run = load_run(run_dir)
    assert run.records == [] and run.failed_jobs
    _write.write_report(run)
    summary = (run_dir / "report/summary.md").read_text(encoding="utf-8")
    top = summary.split("## ")[0]
    assert "of 8 jobs not measured**" in top and "SIGSEGV" in top
    assert summary.count("SIGSEGV") == 1
    assert ("- crash, %d jobs (`WChain-V1-512` at 32 B" % len(run.failed_jobs)) in top
    for page in (run_dir / "report").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert text.count("SIGSEGV") == 1, page.name  # SM3 is a baseline: on baseline.md
        assert ".png" not in text, page.name
    assert check_links(run) == []


def test_cli_report_of_a_run_with_failures_says_so(run: Run, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run.path), "--out", str(tmp_path / "out"), "--no-plots"]) == 0
    assert capsys.readouterr().err == (f"ngcc: 1 of 10 jobs of {run.path} were not measured "
                                       "(9 done, 1 crash); each page says why at its top\n")


def test_the_worst_flag_is_the_one_of_highest_severity(run: Run) -> None:
    record = run.records[0]
    slow = [Flag("slow_trial", 0, "0: +6 %", 0.06), Flag("slow_trial", 1, "1: +31 %", 0.31)]
    rate = [Flag("counter_rate", 2, "2: 97 %", 0.97), Flag("counter_rate", 0, "0: 120 %", 1.2)]
    assert [_analysis.flag_severity(record, f) for f in slow + rate] == pytest.approx(
        [0.06, 0.31, 0.03, 0.2])
    [line, _] = _failures.flag_lines([replace_flags(record, slow)])
    assert line.endswith("worst: `Pavelor-512` 32 B, 1: +31 %")


def replace_flags(record: Record, flags: list[Flag]) -> Record:
    from dataclasses import replace

    return replace(record, statistics=replace(record.statistics, flags=tuple(flags)))


def test_index_of_a_run_on_several_hosts_names_them(run: Run) -> None:
    from dataclasses import replace

    several = Run.__new__(Run)
    several.__dict__.update(run.__dict__)
    several.records = [replace(r, environment=replace(r.environment, host=f"node{i % 2}"))
                       for i, r in enumerate(run.records)]
    section = page_sections(_report.index_page(several))["Candidates"]
    assert markdown_header(section)[-1] == "hosts"
    assert [row[-1] for row in markdown_rows(section)] == ["node0, node1", "node0, node1"]
    assert "hosts" not in markdown_header(page_sections(_report.index_page(run))["Candidates"])
