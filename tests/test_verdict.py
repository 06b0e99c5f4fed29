"""The publishability verdict (``ngcc/_verdict.py``) of a fake clean run and of fake
disturbed ones, on the command line's last line, the index, every candidate page and
the HTML."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

import ngcc
from ngcc import _host, _verdict
from ngcc._cli import main
from ngcc._report import write_report
from tests._fakes import ENVIRONMENT, FakeKat, FakeRunner

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")

LIBRARIES = ["SM3", "WChain-V1-512"]


@pytest.fixture
def quiet_host(monkeypatch):
    """A host that meets every condition: its own CPU alone on its core, idle."""
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: replace(
        ENVIRONMENT, cpu=cpu, smt_siblings=(cpu,)))
    monkeypatch.setattr(os, "getloadavg", lambda: (0.01, 0.02, 0.03))


def _run(run_dir, runner=None, **settings):
    return ngcc.Campaign(LIBRARIES, lengths=[32, 64], trials=3, trial_target=0.001,
                         run_dir=run_dir, progress=False, runner=runner or FakeRunner(),
                         kat_checker=FakeKat(), **settings).run()


def test_a_clean_run_on_a_fixed_host_is_fit_to_publish(tmp_path, quiet_host):
    run = _run(tmp_path / "run")
    found = _verdict.verdict(run)
    assert (found.fit, found.reasons, str(found)) == (True, (), "fit to publish")
    write_report(run, plots=False, formats=("markdown", "html"))
    for page in ("index.md", "hash-34.md", "baseline.md"):
        text = (run.path / "report" / page).read_text()
        assert "**Verdict: fit to publish.**" in text, page
    assert "Verdict: fit to publish." in (run.path / "report" / "index.html").read_text()


def test_disturbed_trials_and_an_unfixed_host_are_counted(tmp_path, quiet_host, monkeypatch):
    preempt = {("SM3", 32, 1): 1, ("WChain-V1-512", 64, 0): 1}
    run = _run(tmp_path / "run", FakeRunner(preempt=preempt))
    assert str(_verdict.verdict(run)) == "not fit to publish: 2/12 trials preempted"
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: replace(
        ENVIRONMENT, cpu=cpu, smt_siblings=(cpu,), virtualization="kvm", turbo=True,
        load_average_start=(4.2, 4.0, 3.0)))
    monkeypatch.setattr(os, "getloadavg", lambda: (8.2, 6.0, 4.0))
    busy = _run(tmp_path / "busy", FakeRunner(preempt=preempt))
    assert _verdict.verdict(busy).reasons == ("2/12 trials preempted", "turbo on", "KVM guest",
                                              "load 0.01–8.20")
    write_report(busy, plots=False)
    for page in ("index.md", "hash-34.md", "baseline.md"):
        assert ("**Verdict: not fit to publish** — 2/12 trials preempted; turbo on; KVM "
                "guest; load 0.01–8.20.") in (busy.path / "report" / page).read_text()


def test_the_command_lines_last_line_is_the_verdict(tmp_path, quiet_host, monkeypatch, capsys):
    monkeypatch.setattr("ngcc._child.DriverRunner", lambda: FakeRunner(
        preempt={("SM3", 32, 0): 1}))
    monkeypatch.setattr("ngcc.kat.check", FakeKat())
    assert main(["campaign", *LIBRARIES, "--lengths", "32", "--trials", "3",
                 "--trial-target", "0.001", "--run-dir", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out.rstrip().splitlines()
    assert out[-1] == "Verdict: not fit to publish: 1/6 trials preempted."


def test_the_baseline_page_says_what_is_true_of_the_baseline(tmp_path, quiet_host):
    run = ngcc.Campaign(["SM3", "pseudoXOF-256"], lengths=[32], trials=3, trial_target=0.001,
                        run_dir=tmp_path / "run", progress=False, runner=FakeRunner(),
                        kat_checker=FakeKat()).run()
    write_report(run, plots=False)
    page = (run.path / "report" / "baseline.md").read_text()
    assert "kat/baseline.sha256" not in page and "candidate baseline" not in page
    assert "The baseline functions have no official KAT vectors" in page
    assert "- Submission: none: the ICCS baseline functions ngcc ships" in page
    row = next(line for line in page.splitlines() if line.startswith("| `pseudoXOF-256` | 32 B")
               and "baseline itself" in line)
    assert "1.00" not in row
