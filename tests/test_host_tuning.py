"""``ngcc host``: what makes this host unfit to publish, with the command that fixes
each setting, and ``--tune``/``--reset`` (measure/tuning.py). Every file is read and
written in a tree of the test's own, never the real /sys."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from ngcc.cli.main import main
from ngcc.measure import host as _host
from ngcc.measure import tuning as _tuning
from tests._fakes import ENVIRONMENT, FakeKat, FakeRunner

CPU = max(os.sched_getaffinity(0))
GOVERNOR = "sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor" % CPU
BOOST = "sys/devices/system/cpu/cpufreq/boost"


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """A host with every flaw: a powersave governor, boost on, an SMT sibling, no
    isolated CPU, a load, a KVM guest."""
    root = tmp_path / "root"
    for relative, text in {
            GOVERNOR: "powersave\n", BOOST: "1\n",
            "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % CPU:
                "%d,%d\n" % (CPU, CPU + 64),
            "sys/devices/system/cpu/isolated": "\n"}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    monkeypatch.setattr(_tuning, "ROOT", root)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 3.0, 2.0))
    monkeypatch.setattr(_host, "hypervisor", lambda: "kvm")
    return root


def test_each_flaw_is_named_with_its_fix(tree):
    found = {s.name: s for s in _tuning.settings(CPU)}
    assert [s.name for s in _tuning.unfit(list(found.values()))] == [
        "governor of CPU %d" % CPU, "turbo/boost", "SMT siblings of CPU %d" % CPU,
        "isolation of CPU %d" % CPU, "1-minute load average", "virtual machine"]
    assert found["governor of CPU %d" % CPU].fix == \
        "echo performance | sudo tee /%s" % GOVERNOR
    assert found["turbo/boost"].fix == "echo 0 | sudo tee /%s" % BOOST
    assert "isolcpus=%d" % CPU in found["isolation of CPU %d" % CPU].fix
    assert found["SMT siblings of CPU %d" % CPU].now == "CPU %d" % (CPU + 64)
    assert [s.name for s in found.values() if s.tunable] == [
        "governor of CPU %d" % CPU, "turbo/boost"]


def test_tune_applies_what_it_can_and_reset_puts_it_back(tree):
    done = _tuning.tune(_tuning.settings(CPU))
    assert done == ["governor of CPU %d: was powersave; wrote performance to /%s"
                    % (CPU, GOVERNOR), "turbo/boost: was on; wrote 0 to /%s" % BOOST]
    assert (tree / GOVERNOR).read_text() == "performance\n"
    assert (tree / BOOST).read_text() == "0\n"
    assert not [s for s in _tuning.settings(CPU) if s.tunable]
    assert _tuning.tune(_tuning.settings(CPU)) == []  # nothing left; the saved values stay
    assert len(_tuning.reset()) == 2
    assert (tree / GOVERNOR).read_text() == "powersave\n"
    assert (tree / BOOST).read_text() == "1\n"
    assert _tuning.reset() == []


def test_tune_and_reset_need_root(tree, monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["host", "--cpu", str(CPU), "--tune"]) == 1
    assert capsys.readouterr().err.startswith(
        "ngcc: error: --tune writes kernel settings under /sys, which only root may change: "
        "run `sudo ngcc host --tune`")
    assert (tree / GOVERNOR).read_text() == "powersave\n"


def test_the_command_lists_each_flaw_and_how_many_tune_fixes(tree, capsys):
    assert main(["host", "--cpu", str(CPU)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["setting", "now", "fit"]
    assert any(line.startswith("governor of CPU %d" % CPU) and line.endswith(" no *")
               for line in out)
    # each fix under the table, a line of its own, within 100 columns
    unwrapped = "\n".join(out).replace("\n  ", " ").splitlines()
    assert "fix governor of CPU %d: echo performance | sudo tee /%s" % (CPU, GOVERNOR) \
        in unwrapped
    assert max(len(line) for line in out) <= 100
    assert unwrapped[-1] == (
        "this host is not fit to publish: governor of CPU %d, turbo/boost, "
        "SMT siblings of CPU %d, isolation of CPU %d, 1-minute load average, "
        "virtual machine; `sudo ngcc host --tune` fixes the 2 marked *" % (CPU, CPU, CPU))


def test_a_fit_host_says_so(tree, monkeypatch, capsys):
    (tree / GOVERNOR).write_text("performance\n")
    (tree / BOOST).write_text("0\n")
    (tree / ("sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % CPU)).write_text(
        "%d\n" % CPU)
    (tree / "sys/devices/system/cpu/isolated").write_text("%d\n" % CPU)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.1, 0.1))
    monkeypatch.setattr(_host, "hypervisor", lambda: None)
    assert main(["host", "--cpu", str(CPU)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "this host is fit to publish"


@pytest.mark.parametrize(("virtualization", "named"), [("kvm", True), (None, False)])
def test_the_verdict_names_ngcc_host_where_the_host_missed_a_condition(
        tmp_path, monkeypatch, capsys, virtualization, named):
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: replace(
        ENVIRONMENT, cpu=cpu, smt_siblings=(cpu,), virtualization=virtualization))
    monkeypatch.setattr(os, "getloadavg", lambda: (0.01, 0.02, 0.03))
    monkeypatch.setattr("ngcc.driver.child.DriverRunner", FakeRunner)
    monkeypatch.setattr("ngcc.driver.kat.check", FakeKat())
    assert main(["campaign", "SM3", "--quick", "--lengths", "64", "--run-dir",
                 str(tmp_path / "run")]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith("Verdict: ")
    assert ("`ngcc host` shows what makes this host unfit" in last) == named
