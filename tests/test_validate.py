"""``ngcc validate``: passes on a fresh run, names the file of every tampering."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from _fakerun import make_run

import ngcc
import ngcc.report.validate
from ngcc.base.errors import ValidationError
from ngcc.cli.main import main
from ngcc.evidence import records as _records
from ngcc.evidence.run import load_run
from ngcc.report import export as _export
from ngcc.report import write as _write
from ngcc.report.validate import Difference, check_links, page_links, validate

RECORD = "records/hash-22/Pavelor-512__hash_1024.json"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake run with its report pages written (no plots: validate reads pages only)."""
    run_dir = make_run(tmp_path_factory.mktemp("pristine") / "run", calls=50)
    load_run(run_dir).report(plots=False)
    return run_dir


@pytest.fixture
def run_dir(pristine: Path, tmp_path: Path) -> Path:
    """A private copy of the pristine run, free to tamper with."""
    return Path(shutil.copytree(pristine, tmp_path / "run"))


def edit_record(path: Path, edit: object) -> None:
    """Change a record through the real writer, so only the edited value differs."""
    data = json.loads(path.read_text())
    edit(data)  # type: ignore[operator]
    _records.write_json(path, data)


def files(result: ngcc.report.validate.Validation) -> set[str]:
    return {difference.file for difference in result.differences}


def test_fresh_fake_run_validates(run_dir: Path) -> None:
    result = ngcc.validate(run_dir)
    assert result.ok, result.differences
    assert result.records_checked == 9 and result.pages_checked == 5
    result.raise_for_differences()  # does not raise


def test_tampered_statistic_names_the_record(run_dir: Path) -> None:
    edit_record(run_dir / RECORD,
                lambda d: d["statistics"].__setitem__("median_cycles",
                                                      d["statistics"]["median_cycles"] / 2))
    result = validate(run_dir)
    assert files(result) == {RECORD, "report/hash-22.md"}
    what = next(d.what for d in result.differences if d.file == RECORD)
    assert what.startswith("statistics.median_cycles is ")
    with pytest.raises(ValidationError, match="Pavelor-512__hash_1024"):
        result.raise_for_differences()


def test_tampered_trial_names_the_record(run_dir: Path) -> None:
    edit_record(run_dir / RECORD,
                lambda d: d["trials"][1]["statistics"].__setitem__("min_cycles", 1))
    result = validate(run_dir)
    assert [d.what.split(" is ")[0] for d in result.differences if d.file == RECORD] == [
        "trials[1].statistics.min_cycles"]


def test_tampered_resources_names_the_record(run_dir: Path) -> None:
    edit_record(run_dir / RECORD, lambda d: d["resources"].__setitem__("peak_rss_kib", 1))
    assert RECORD in files(validate(run_dir))


def test_tampered_raw_samples_name_the_raw_file(run_dir: Path) -> None:
    raw = run_dir / "raw/hash-22/Pavelor-512__hash_1024.npz"
    trials = _records.load_raw(raw)
    trials[0][3] += np.uint64(1000)
    _records.dump_raw(raw, 1024, trials)
    result = validate(run_dir)
    assert files(result) == {"raw/hash-22/Pavelor-512__hash_1024.npz"}
    assert "sha256" in result.differences[0].what


def test_raw_samples_and_record_changed_together(run_dir: Path) -> None:
    """Samples replaced and the sha256 updated to match: the statistics give it away."""
    raw = run_dir / "raw/hash-22/Pavelor-512__hash_1024.npz"
    trials = _records.load_raw(raw)
    trials[2] = trials[2] // np.uint64(2)
    sha = _records.dump_raw(raw, 1024, trials)
    edit_record(run_dir / RECORD, lambda d: d["raw"].__setitem__("sha256", sha))
    result = validate(run_dir)
    assert files(result) == {RECORD}
    whats = [d.what for d in result.differences]
    assert any(w.startswith("statistics.mean_cycles") for w in whats)
    assert any(w.startswith("trials[2].statistics.mean_cycles") for w in whats)


def test_tampered_page_names_the_page(run_dir: Path) -> None:
    page = run_dir / "report/hash-22.md"
    page.write_text(page.read_text(encoding="utf-8").replace("1024 B", "1025 B", 1),
                    encoding="utf-8")
    result = validate(run_dir)
    assert files(result) == {"report/hash-22.md"}
    assert "line" in result.differences[0].what and "1025 B" in result.differences[0].what


def test_missing_and_foreign_pages(run_dir: Path) -> None:
    (run_dir / "report/baseline.md").unlink()
    (run_dir / "report/hash-99.md").write_text("# mine\n")
    result = validate(run_dir)
    # the index, the summary and the field summary link the missing page: broken links
    assert files(result) == {"report/baseline.md", "report/hash-99.md", "report/index.md",
                             "report/summary.md", "report/field.md"}
    assert Difference("report/index.md", "links 'baseline.md', which does not exist") in \
        result.differences


def test_record_not_listed_in_the_campaign(run_dir: Path) -> None:
    extra = run_dir / "records/hash-22/Pavelor-512__hash_7.json"
    shutil.copy(run_dir / RECORD, extra)
    assert files(validate(run_dir)) == {"records/hash-22/Pavelor-512__hash_7.json"}


def test_cli_validate(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(run_dir)]) == 0
    assert "valid (9 record(s) recomputed" in capsys.readouterr().out
    edit_record(run_dir / RECORD, lambda d: d["statistics"].__setitem__("mb_per_s", 1.0))
    assert main(["validate", str(run_dir)]) == 1
    err = capsys.readouterr().err
    assert f"ngcc: difference: {RECORD}: statistics.mb_per_s is 1.0" in err
    assert "Traceback" not in err


def test_cli_validate_corrupt_json(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (run_dir / RECORD).write_text('{"schema": "ngcc.record/1", "trials": [')
    assert main(["validate", str(run_dir)]) == 1
    err = capsys.readouterr().err
    assert "Pavelor-512__hash_1024.json" in err and "not valid JSON" in err


# ------------------------------------------------------------------ links (issue 16)

@pytest.fixture(scope="module")
def plotted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake run with a full report: plots, and every format (the one validate fixture
    that draws plots: a few seconds)."""
    run_dir = make_run(tmp_path_factory.mktemp("plotted") / "run", calls=50)
    _write.write_report(load_run(run_dir), formats=_export.FORMATS)
    return run_dir


@pytest.fixture
def plotted_dir(plotted: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(plotted, tmp_path / "run"))


def test_full_report_validates(plotted_dir: Path) -> None:
    result = validate(plotted_dir)
    assert result.ok, result.differences
    assert result.pages_checked == 5 + 5 + 2  # Markdown and HTML pages, CSV and JSON
    links = page_links(plotted_dir / "report/hash-22.md")
    assert "Pavelor-512__hash_32-calls.png" in links and "hash-22-cpb.png" in links
    from test_export import assert_self_contained
    for page in (plotted_dir / "report").glob("*.html"):
        assert_self_contained(page.read_text(encoding="utf-8"))


def test_deleted_plot_is_a_broken_link(plotted_dir: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    (plotted_dir / "report/Pavelor-1024__hash_32-calls.png").unlink()
    result = validate(plotted_dir)
    assert Difference("report/hash-22.md", "links 'Pavelor-1024__hash_32-calls.png', which "
                      "does not exist") in result.differences
    assert main(["validate", str(plotted_dir)]) == 1
    assert ("ngcc: difference: report/hash-22.md: links 'Pavelor-1024__hash_32-calls.png', "
            "which does not exist") in capsys.readouterr().err


def test_links_outside_the_run_are_broken(plotted_dir: Path) -> None:
    page = plotted_dir / "report/index.html"
    page.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", '<img src="https://example.org/x.png"><a href="../../x.md">x</a>'
                   '<a href="#nowhere">n</a><a href="../records/hash-22/'
                   'Pavelor-512__hash_32.json">r</a></body>'), encoding="utf-8")
    whats = [d.what for d in validate(plotted_dir).differences if d.file == "report/index.html"]
    assert whats[1:] == [
        "links 'https://example.org/x.png', an address outside the run directory (a report "
        "links only its own files)",
        "links '../../x.md', a file outside the run directory",
        "links '#nowhere', an anchor the page lacks"]  # a link to a file of the run is fine
    assert whats[0].startswith("differs from the page regenerated")


def test_tampered_table_and_html_are_found(plotted_dir: Path) -> None:
    table = plotted_dir / "report/statistics.csv"
    table.write_text(table.read_text().replace("Pavelor-512", "Pavelor-513", 1))
    page = plotted_dir / "report/baseline.html"
    page.write_text(page.read_text(encoding="utf-8").replace("pseudoXOF", "pseudoxof", 1),
                    encoding="utf-8")
    assert files(validate(plotted_dir)) == {"report/statistics.csv", "report/baseline.html"}


def test_a_report_without_plots_links_none(run_dir: Path) -> None:
    assert check_links(load_run(run_dir)) == []
    assert not any(link.endswith(".png") for page in (run_dir / "report").glob("*.md")
                   for link in page_links(page))


def test_pages_rewritten_without_plots_beside_old_plots_validate(plotted_dir: Path) -> None:
    """``ngcc report --no-plots`` over a report with plots: the old plots stay, the pages
    link none of them; both are what ngcc writes, so validate accepts them."""
    _write.write_report(load_run(plotted_dir), plots=False, formats=_export.FORMATS)
    assert ".png" not in (plotted_dir / "report/hash-22.md").read_text(encoding="utf-8")
    assert (plotted_dir / "report/hash-22-cpb.png").is_file()
    assert validate(plotted_dir).ok


def test_a_job_refused_by_the_drivers_checks_is_named(run_dir: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """A consistent run holding a job the driver refused (issue 45's caching library)
    is valid, and says which job and why."""
    state = json.loads((run_dir / "campaign.json").read_text())
    job = next(job for job in state["jobs"] if job["record"] == RECORD)
    why = "Pavelor-512 at 1024 B (trial 0): the result channel broke the protocol: honesty batch"
    job.update(status="protocol", error=why)
    _records.write_json(run_dir / "campaign.json", state)
    (run_dir / RECORD).unlink()
    (run_dir / job["raw"]).unlink()
    load_run(run_dir).report(plots=False)
    result = validate(run_dir)
    assert result.ok and result.refused == ["%s at 1024 B: %s" % (job["label"], why)]
    assert main(["validate", str(run_dir)]) == 0
    captured = capsys.readouterr()
    assert "ngcc: refused by the driver's checks: %s at 1024 B: %s" % (job["label"], why) \
        in captured.err
    assert "1 job(s) refused by the driver's checks, above" in captured.out
