"""``ngcc compare RUN --published x86_1|arm_1`` (``ngcc/report/published.py``) on a fixture
run measured with the fake runner at 32 B, 1 KiB and 64 KiB."""

from __future__ import annotations

import csv
import json
import math

import pytest

import ngcc
from ngcc.cli.main import main
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
        mine = run.record(row.label, 65536).statistics.mean_cycles
        theirs = (sm3 if row.instance == "SM3" else published)
        name = "sm3hash" if row.instance == "SM3" else row.instance
        assert row.run_mean == record.statistics.mean_cycles
        assert row.published_mean == theirs[(name, row.message_bytes)]
        assert row.ratio == pytest.approx(row.run_mean / row.published_mean)
        assert row.run_shape == pytest.approx(row.run_mean / row.message_bytes / (mine / 65536))
        assert row.published_shape == pytest.approx(
            row.published_mean / row.message_bytes / (theirs[(name, 65536)] / 65536))
    ratio, shape = result.geometric_means()
    assert ratio == pytest.approx(math.exp(sum(math.log(r.ratio) for r in result.rows) / 9))
    assert shape == pytest.approx(math.exp(sum(math.log(r.shape_ratio) for r in result.rows)
                                           / 9))


def test_the_command_line_prints_the_table_with_the_geometric_mean(run, capsys):
    assert main(["compare", str(run.path), "--published", "x86_1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run %s (tsc-ticks) beside the harness's published figures on "
                          "x86_1" % run.run_id)
    assert "geometric mean" in out and "shape ratio" in out
    assert main(["compare", str(run.path), "--published", "arm_1", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["system"] == "arm_1" and len(data["rows"]) == 9
    assert main(["compare", str(run.path), str(run.path), "--published", "x86_1"]) == 2
    assert "--published compares one run" in capsys.readouterr().err


def test_sm3_is_the_published_sm3hash_and_no_64_kib_record_means_no_shape(tmp_path,
                                                                          monkeypatch):
    fixed_host(monkeypatch)
    mine = ngcc.Campaign(["SM3"], labels=["mine"], lengths=[32], trials=3, trial_target=0.001,
                         progress=False, run_dir=tmp_path / "run", runner=FakeRunner(),
                         kat_checker=FakeKat()).run()
    result = _published.compare_published(mine, "x86_1")  # SM3 is published as sm3hash-256
    assert [row.published_mean for row in result.rows] == [1469.0]
    assert result.rows[0].run_shape is None and "no 64 KiB record" in result.notes[-1]
