"""The publishability verdict (``ngcc/report/verdict.py``) of a fake clean run and of fake
disturbed ones, on the command line's last line, the index, every candidate page and
the HTML."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest

import ngcc
from ngcc.cli.main import main
from ngcc.measure import host as _host
from ngcc.report import verdict as _verdict
from ngcc.report.write import write_report
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
        assert "Section 4 leads with the per-call mean." in text, page  # no batch timed
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
    text = (busy.path / "report" / "hash-34.md").read_text()
    assert "Section 4 leads with the per-call mean." in text  # no batch


def test_the_sentence_under_the_verdict_names_each_records_leading_figure(tmp_path,
                                                                         quiet_host):
    mean = _run(tmp_path / "run").records  # the fake runner times no batch
    assert [r.statistics.leading for r in mean] == ["per_call_mean"] * 4
    cpu = [replace(r, statistics=replace(r.statistics, leading="cpu_time",
                                         cpu_time_ticks=r.statistics.mean_cycles * 0.9))
           for r in mean]
    left_out = replace(cpu[0], statistics=replace(cpu[0].statistics, left_out_trials=(1,)))
    assert _verdict.leading_sentence(cpu) == "Section 4 leads with the CPU time per call."
    assert _verdict.leading_sentence(mean) == "Section 4 leads with the per-call mean."
    assert _verdict.leading_sentence([left_out, *mean[1:]]) == (
        "Section 4 leads with the per-call mean (CPU time per call where not measured). "
        "1 trial(s) of the host's slow speed state were left out of it and measured again "
        "(flag slow_state).")


def test_the_command_lines_last_line_is_the_verdict(tmp_path, quiet_host, monkeypatch, capsys):
    monkeypatch.setattr("ngcc.driver.child.DriverRunner", lambda: FakeRunner(
        preempt={("SM3", 32, 0): 1}))
    monkeypatch.setattr("ngcc.driver.kat.check", FakeKat())
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
    assert "The ICCS baseline functions have no official KAT" in page
    assert "- Submission: none: the ICCS baseline functions" in page
    row = next(line for line in page.splitlines() if line.startswith("| `pseudoXOF-256` | 32 B")
               and "baseline itself" in line)
    assert "1.00" not in row


class BatchRunner(FakeRunner):
    """A fake runner whose trials also time the uninstrumented batch (10 % cheaper)."""

    def trial(self, instance, message_bytes, calls, warmup, cpu, index, timeout):
        measured = super().trial(instance, message_bytes, calls, warmup, cpu, index, timeout)
        return replace(measured, batch_calls=calls, batch_ticks=int(
            0.9 * measured.cycles.sum()), batch_ns=measured.loop_ns)


def test_the_observer_effect_comes_from_undisturbed_trials_only(tmp_path, quiet_host):
    preempt = {("SM3", 32, 1): 1, **{("WChain-V1-512", 32, i): 1 for i in range(3)}}
    run = _run(tmp_path / "run", BatchRunner(preempt=preempt))
    sm3, wchain = run.record("SM3", 32), run.record("WChain-V1-512", 32)
    _, relative = _verdict.observer_effect(sm3)
    quiet = [t for t in sm3.trials if t.index != 1]
    assert relative == pytest.approx(float(np.median(
        [t.statistics.mean_cycles / (t.batch_ticks / t.batch_calls) - 1 for t in quiet])))
    assert _verdict.observer_text(sm3).endswith("(2 of 3 trials)")
    assert _verdict.observer_effect(wchain) is None
    assert _verdict.observer_text(wchain) == "—, trials disturbed"
    write_report(run, plots=False)
    assert "—, trials disturbed" in (run.path / "report" / "hash-34.md").read_text()


def test_every_kind_of_trial_flag_reads_in_words_in_the_verdict():
    from ngcc.evidence.model import FLAG_CODES
    assert sorted(_verdict.FLAG_WORDS) == sorted(FLAG_CODES)
    assert not [code for code, words in _verdict.FLAG_WORDS.items() if "_" in words]
