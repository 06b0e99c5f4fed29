"""``ngcc compare RUN --published x86_1|arm_1`` (``ngcc/report/published.py``) on a fixture
run measured with the fake runner at 32 B, 1 KiB and 64 KiB."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

import ngcc
from ngcc.base.errors import InvalidNameError, UnknownLabelError, UnknownPublishedError
from ngcc.cli.main import main
from ngcc.evidence.figures import lead as leading
from ngcc.report import published as _published
from tests._fakes import FakeKat, FakeRunner, fixed_host

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")
LENGTHS = [32, 1024, 65536]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        fixed_host(monkeypatch)
        return ngcc.Campaign(["WChain-V1-512", "SM3", "Wish512:opt"], lengths=LENGTHS,
                             trials=3, trial_target=0.001, progress=False,
                             run_dir=tmp_path_factory.mktemp("published") / "run",
                             runner=FakeRunner(), kat_checker=FakeKat()).run()


def _tsv(name):
    with (_published.PUBLISHED_DIR / name).open(newline="") as stream:
        return list(csv.DictReader(stream, delimiter="\t"))


def test_the_published_figures_ship_for_every_round_1_instance():
    x86 = _published.load("x86_1")
    assert len({row["id"] for row in _tsv("hash_x86_1.tsv")}) == 35
    assert x86[("WChain-V1-512", 32)].mean_cycles == 2099
    assert ("sm3hash-256", 1024) in x86 and ("pseudoXOF-256", 65536) in _published.load("arm_1")
    with pytest.raises(_published.PublishedError, match="choose x86_1 or arm_1"):
        _published.load("x86_2")


def test_each_record_beside_its_published_figure_and_shape(run):
    result = _published.compare_published(run, "x86_1")
    published = {(r["instance"], int(r["message_bytes"])): float(r["mean_cycles"])
                 for r in _tsv("hash_x86_1.tsv") if r["mean_cycles"]}
    sm3 = {(r["helper"], int(r["message_bytes"])): float(r["mean_cycles"])
           for r in _tsv("iccs_baselines_x86_1.tsv") if r["output_bits"] == "256"}
    assert len(result.rows) == 9
    for row in result.rows:
        record = run.record(row.label, row.message_bytes)
        mine = leading(run.record(row.label, 65536).statistics).ticks
        theirs = (sm3 if row.instance == "SM3" else published)
        name = "sm3hash" if row.instance == "SM3" else row.instance
        assert row.run_figure == leading(record.statistics).ticks
        assert row.lead == leading(record.statistics).name
        assert row.published_mean == theirs[(name, row.message_bytes)]
        assert row.ratio == pytest.approx(row.run_figure / row.published_mean)
        assert row.run_shape == pytest.approx(row.run_figure / row.message_bytes
                                              / (mine / 65536))
        assert row.published_shape == pytest.approx(
            row.published_mean / row.message_bytes / (theirs[(name, 65536)] / 65536))
    # Wish512:opt is an optimized build: shown, marked, and out of the geometric means
    reference = [r for r in result.rows if r.label != "Wish512@opt"]
    assert len(reference) == 6
    assert {r.optimized for r in result.rows if r.label == "Wish512@opt"} == {"variant opt"}
    assert {r.optimized for r in reference} == {None}
    ratio, shape = result.geometric_means()
    assert ratio == pytest.approx(math.exp(sum(math.log(r.ratio) for r in reference) / 6))
    assert shape == pytest.approx(math.exp(sum(math.log(r.shape_ratio) for r in reference)
                                           / 6))
    [note] = [n for n in result.notes if n.startswith("optimized builds")]
    assert "Wish512@opt (variant opt)" in note and "left out of the geometric means" in note


def test_the_command_line_prints_the_table_with_the_geometric_mean(run, capsys):
    assert main(["compare", str(run.path), "--published", "x86_1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run %s (tsc-ticks) beside the harness's published figures on "
                          "x86_1" % run.run_id)
    assert "geometric mean" in out and "shape ratio" in out
    assert main(["compare", str(run.path), "--published", "arm_1", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["system"] == "arm_1" and len(data["rows"]) == 9
    assert {row["optimized"] for row in data["rows"]} == {None, "variant opt"}
    assert main(["compare", str(run.path), str(run.path), "--published", "x86_1"]) == 2
    assert "--published compares one run" in capsys.readouterr().err
    assert main(["compare", str(run.path), "--published", "x86_1"]) == 0
    table = capsys.readouterr().out
    assert "optimized: variant opt" in table and "geometric mean (reference builds)" in table


def test_sm3_is_the_published_sm3hash_and_no_64_kib_record_means_no_shape(tmp_path,
                                                                          monkeypatch):
    fixed_host(monkeypatch)
    mine = ngcc.Campaign(["SM3"], labels=["mine"], lengths=[32], trials=3, trial_target=0.001,
                         progress=False, run_dir=tmp_path / "run", runner=FakeRunner(),
                         kat_checker=FakeKat()).run()
    result = _published.compare_published(mine, "x86_1")  # SM3 is published as sm3hash-256
    assert [row.published_mean for row in result.rows] == [1469.0]
    assert result.rows[0].run_shape is None and "no 64 KiB record" in result.notes[-1]


# ------------------------------------------------------------------ matching a library


def _built(folder: Path, name: str, like: str, **facts) -> Path:
    """A copy of a built-in library whose ``ngcc build`` sidecar declares ``name`` (and
    ``facts``: candidate, flag_set, source_dir …)."""
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / ("%s.so" % name)
    shutil.copyfile(ngcc.instance(like).library, library)
    (folder / ("%s.so.json" % name)).write_text(json.dumps(
        {"name": name, "family": name, "digest_bits": ngcc.instance(like).digest_bits,
         "flag_set": "reference", **facts}))
    return library


def _campaign(tmp_path, libraries, **options):
    return ngcc.Campaign([str(lib) for lib in libraries], lengths=options.pop("lengths", LENGTHS),
                         trials=3, trial_target=0.001, progress=False,
                         run_dir=tmp_path / "run", runner=options.pop("runner", FakeRunner()),
                         kat_checker=FakeKat(), **options).run()


def test_a_library_matches_the_harness_label_through_the_manifest_folder(tmp_path,
                                                                         monkeypatch):
    """``laurus_512`` (hash-14's KAT name) is the harness's ``Laurus-512``; a library of no
    known candidate is matched through the one candidate that has its name, case, ``-``
    and ``_`` aside (``mofang_256_xof`` is ``MoFang-256-XOF``); a name no candidate has
    stays unmatched, and only it is listed as such."""
    fixed_host(monkeypatch)
    laurus = _built(tmp_path / "laurus", "laurus_512", "Wish512")
    mofang = _built(tmp_path / "mofang", "mofang_256_xof", "SM3", candidate="external")
    foo = _built(tmp_path / "foo", "foo_512", "Wish512", candidate="external")
    run = _campaign(tmp_path, [laurus, mofang, foo], lengths=[32, 128, 65536])
    assert run.record("laurus_512", 32).candidate == "hash-14"
    result = _published.compare_published(run, "x86_1")
    names = {(r.label, r.message_bytes): r.published_name for r in result.rows}
    assert names[("laurus_512", 32)] == "Laurus-512"
    assert names[("mofang_256_xof", 65536)] == "MoFang-256-XOF"
    assert names[("foo_512", 32)] is None
    x86 = _published.load("x86_1")
    for row in result.rows:
        expected = x86.get((row.published_name, row.message_bytes)) if row.published_name \
            else None
        assert row.published_mean == (expected.mean_cycles if expected else None), row
    # Laurus-512 is published at 32 B and 64 KiB, not 128 B: matched all the same
    assert [n for n in result.notes if n.startswith("no published figure for")] == [
        "no published figure for: foo_512 (name the harness's instance with --instance "
        "MINE=THEIRS)"]


def test_instance_mine_equals_theirs_names_the_harness_instance(tmp_path, monkeypatch,
                                                                capsys):
    fixed_host(monkeypatch)
    foo = _built(tmp_path / "foo", "foo_512", "Wish512", candidate="external")
    run = _campaign(tmp_path, [foo, "SM3"])
    result = _published.compare_published(run, "x86_1", ["foo_512=AXIS-512"])
    axis = _published.load("x86_1")
    for row in (r for r in result.rows if r.label == "foo_512"):
        assert row.published_name == "AXIS-512"
        assert row.published_mean == axis[("AXIS-512", row.message_bytes)].mean_cycles
    assert not [n for n in result.notes if n.startswith("no published figure")]
    # the given name wins over the library's own match
    again = _published.compare_published(run, "x86_1", ["SM3=pseudoXOF-256"])
    assert {r.published_name for r in again.rows if r.label == "SM3"} == {"pseudoXOF-256"}
    with pytest.raises(UnknownLabelError, match="no library labelled 'bar_512'"):
        _published.compare_published(run, "x86_1", ["bar_512=AXIS-512"])
    with pytest.raises(UnknownPublishedError, match="did you mean AXIS-512"):
        _published.compare_published(run, "x86_1", ["foo_512=AXIS-51"])
    with pytest.raises(InvalidNameError):
        _published.compare_published(run, "x86_1", ["foo_512="])
    assert main(["compare", str(run.path), "--published", "x86_1",
                 "--instance", "foo_512=AXIS-512"]) == 0
    assert "AXIS-512" in capsys.readouterr().out
    for wrong in ("bar_512=AXIS-512", "foo_512=AXIS-51"):
        assert main(["compare", str(run.path), "--published", "x86_1",
                     "--instance", wrong]) == 2
        assert "ngcc: error: --instance %s" % wrong in capsys.readouterr().err


def test_optimized_builds_are_said_and_left_out_of_the_summary(tmp_path, monkeypatch):
    """A build with the performance flags, or from an Optimized_Implementation folder, is
    set against the published reference figures only with the mark, never summed up."""
    fixed_host(monkeypatch)
    perf = _built(tmp_path / "perf", "laurus_512", "Wish512", flag_set="performance")
    optimized_dir = tmp_path / "Laurus" / "Optimized_Implementation" / "laurus_768"
    folder = _built(tmp_path / "opt", "laurus_768", "Wish512", source_dir=str(optimized_dir))
    reference = _built(tmp_path / "ref", "laurus_1024", "Wish1024",
                       source_dir=str(tmp_path / "Laurus" / "Reference_Implementation"))
    run = _campaign(tmp_path, [perf, folder, reference], lengths=[32, 65536])
    result = _published.compare_published(run, "x86_1")
    why = {r.label: r.optimized for r in result.rows}
    assert why == {"laurus_512": "flag set performance",
                   "laurus_768": "an Optimized_Implementation folder", "laurus_1024": None}
    assert all(r.ratio is not None for r in result.rows)  # shown, with their ratio
    kept = [r for r in result.rows if r.label == "laurus_1024"]
    ratio, shape = result.geometric_means()
    assert ratio == pytest.approx(math.sqrt(kept[0].ratio * kept[1].ratio))
    assert shape == pytest.approx(math.sqrt(kept[0].shape_ratio * kept[1].shape_ratio))


def test_the_leading_figure_is_compared_not_the_per_call_mean(run):
    """Records that lead with their CPU-time figure (a preempted job's) are set against
    the published figure with that figure, shape included, never the per-call mean."""
    def cpu_led(record):
        statistics = dataclasses.replace(record.statistics, leading="cpu_time",
                                         cpu_time_ticks=record.statistics.mean_cycles / 3,
                                         cpu_time_seconds=1e-6)
        return dataclasses.replace(record, statistics=statistics)

    led = SimpleNamespace(run_id=run.run_id, records=[cpu_led(r) for r in run.records])
    result = _published.compare_published(led, "x86_1")  # type: ignore[arg-type]
    plain = _published.compare_published(run, "x86_1")
    for row, before in zip(result.rows, plain.rows, strict=True):
        record = run.record(row.label, row.message_bytes)
        assert row.lead == leading(cpu_led(record).statistics).name != before.lead
        assert row.run_figure == pytest.approx(record.statistics.mean_cycles / 3)
        assert row.ratio == pytest.approx(before.ratio / 3)
        assert row.run_shape == pytest.approx(before.run_shape)
