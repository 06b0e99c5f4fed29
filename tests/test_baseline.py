"""Which record × pseudoXOF divides by (``stats.groups.baseline_record``) and the one
sentence of the pages that says so (``report.sections.common.baseline_sentence``).

The built-in baseline is the ICCS helper as ``auxfunc.c`` computes it (variant ``ref``);
its faster variants are never the baseline; a library the user built with ``ngcc build
--candidate baseline`` (the official helper source) is, when the run measures it.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

import ngcc
from ngcc.report.sections.common import baseline_sentence
from ngcc.stats import groups as _groups
from tests._fakes import FakeKat, FakeRunner, fixed_host


def _built(folder: Path, name: str, candidate: str) -> Path:
    """A library like one ``ngcc build --candidate CANDIDATE`` made of an instance
    folder declaring ``name`` (a copy of the built-in one, with its sidecar)."""
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / ("%s.so" % name)
    shutil.copyfile(ngcc.instance(name).library, library)
    (folder / ("%s.so.json" % name)).write_text(json.dumps(
        {"name": name, "family": "ICCS", "digest_bits": ngcc.instance(name).digest_bits,
         "candidate": candidate}))
    return library


def _run(tmp_path: Path, names: list[str]):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ngcc.MeasurementWarning)
        return ngcc.Campaign(names, run_dir=tmp_path / "run", runner=FakeRunner(),
                             kat_checker=FakeKat(), quick=True, lengths=[32], trials=2,
                             progress=False).run()


def test_the_builtin_baseline_is_the_helper_as_shipped(tmp_path, monkeypatch):
    """Listed first or not, the fastsm3 and absorb variants are never the baseline."""
    fixed_host(monkeypatch)
    run = _run(tmp_path, ["pseudoXOF-256:absorb", "pseudoXOF-256:fastsm3", "pseudoXOF-256",
                          "SM3"])
    shipped = run.record("pseudoXOF-256", 32)
    assert shipped.implementation.variant == "ref"
    for label in ("SM3", "pseudoXOF-256@absorb", "pseudoXOF-256@fastsm3", "pseudoXOF-256"):
        assert _groups.baseline_record(run.records, run.record(label, 32)) is shipped, label
    absorb = run.record("pseudoXOF-256@absorb", 32)
    assert _groups.baseline_ratio(run.records, absorb) == pytest.approx(
        absorb.statistics.figure.ticks / shipped.statistics.figure.ticks)
    assert _groups.baseline_labels(run.records) == ["pseudoXOF-256"]


def test_a_faster_variant_alone_is_no_baseline(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    run = _run(tmp_path, ["pseudoXOF-256:absorb", "SM3"])
    assert _groups.baseline_record(run.records, run.record("SM3", 32)) is None
    assert _groups.baseline_labels(run.records) == []
    assert baseline_sentence(run.records).endswith("the baseline here: none measured")


def test_a_build_named_baseline_is_the_runs_baseline(tmp_path, monkeypatch):
    """``ngcc build --candidate baseline`` of a pseudoXOF-256 (the official helper, say):
    measured in the run, it is the baseline of the 256-bit records, before the built-in
    one; the 512-bit ones keep the built-in pseudoXOF-512."""
    fixed_host(monkeypatch)
    official = _built(tmp_path / "official", "pseudoXOF-256", "baseline")
    run = _run(tmp_path, ["pseudoXOF-256", "pseudoXOF-512", "SM3", str(official)])
    assert [lib.label for lib in run.plan.libraries][-1] == "pseudoXOF-256@official"
    theirs = run.record("pseudoXOF-256@official", 32)
    assert theirs.implementation.variant == "external" and theirs.candidate == "baseline"
    assert _groups.baseline_record(run.records, run.record("SM3", 32)) is theirs
    assert _groups.baseline_record(run.records, run.record("pseudoXOF-256", 32)) is theirs
    assert _groups.baseline_record(run.records, run.record("pseudoXOF-512", 32)) \
        is run.record("pseudoXOF-512", 32)
    assert _groups.baseline_labels(run.records) == ["pseudoXOF-256@official",
                                                    "pseudoXOF-512"]
    sentence = baseline_sentence(run.records)
    assert "`pseudoXOF-256@official`: your build" in sentence
    assert "`pseudoXOF-512`: as the ICCS auxfunc.c computes them" in sentence


def test_another_candidates_library_declaring_the_name_is_never_the_baseline(
        tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    impostor = _built(tmp_path / "impostor", "pseudoXOF-256", "external")
    run = _run(tmp_path, [str(impostor), "pseudoXOF-256", "SM3"])
    assert _groups.baseline_record(run.records, run.record("SM3", 32)) \
        is run.record("pseudoXOF-256", 32)


def test_the_pages_carry_the_one_sentence(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    run = _run(tmp_path, ["pseudoXOF-256", "SM3"])
    run.report(tmp_path / "report")
    sentence = baseline_sentence(run.records)
    assert sentence.startswith("× pseudoXOF: the leading figure over that of pseudoXOF of "
                               "the same output width at the same length in this run")
    assert "`pseudoXOF-256`: as the ICCS auxfunc.c computes them: a plain SM3" in sentence
    for page in ("field.md", "baseline.md"):
        assert sentence in (tmp_path / "report" / page).read_text(), page
