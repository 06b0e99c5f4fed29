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
OTHER = 0 if CPU else 1
IRQ = "proc/irq/%d/smp_affinity_list"
DEFAULT_IRQ = "proc/irq/default_smp_affinity"


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """A host with every flaw: a powersave governor, boost on, interrupts on the CPU (one
    of them bound to it), an SMT sibling, no isolated CPU, a load, a KVM guest."""
    root = tmp_path / "root"
    both = "%d,%d\n" % (min(CPU, OTHER), max(CPU, OTHER))
    for relative, text in {
            GOVERNOR: "powersave\n", BOOST: "1\n",
            "sys/devices/system/cpu/online": both, IRQ % 24: both, IRQ % 25: "%d\n" % CPU,
            IRQ % 26: "%d\n" % OTHER, DEFAULT_IRQ: "%x\n" % (1 << CPU | 1 << OTHER),
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
        "governor of CPU %d" % CPU, "turbo/boost", "interrupts on CPU %d" % CPU,
        "SMT siblings of CPU %d" % CPU,
        "isolation of CPU %d" % CPU, "1-minute load average", "virtual machine"]
    assert found["governor of CPU %d" % CPU].fix == \
        "echo performance | sudo tee /%s" % GOVERNOR
    assert found["turbo/boost"].fix == "echo 0 | sudo tee /%s" % BOOST
    assert "isolcpus=%d" % CPU in found["isolation of CPU %d" % CPU].fix
    assert found["SMT siblings of CPU %d" % CPU].now == "CPU %d" % (CPU + 64)
    assert found["interrupts on CPU %d" % CPU].now == "2 of 3 may run there"
    assert [s.name for s in found.values() if s.tunable] == [
        "governor of CPU %d" % CPU, "turbo/boost", "interrupts on CPU %d" % CPU]


def test_tune_applies_what_it_can_and_reset_puts_it_back(tree):
    done = _tuning.tune(_tuning.settings(CPU))
    assert done == ["governor of CPU %d: was powersave; wrote performance to /%s"
                    % (CPU, GOVERNOR), "turbo/boost: was on; wrote 0 to /%s" % BOOST,
                    "interrupts on CPU %d: was 2 of 3 may run there; wrote 3 of 3 files"
                    % CPU]
    assert (tree / GOVERNOR).read_text() == "performance\n"
    assert (tree / BOOST).read_text() == "0\n"
    assert [(tree / (IRQ % n)).read_text() for n in (24, 25, 26)] == ["%d\n" % OTHER] * 3
    assert (tree / DEFAULT_IRQ).read_text() == "%x\n" % (1 << OTHER)
    assert not [s for s in _tuning.settings(CPU) if s.tunable]
    assert _tuning.tune(_tuning.settings(CPU)) == []  # nothing left; the saved values stay
    assert len(_tuning.reset()) == 5
    assert (tree / GOVERNOR).read_text() == "powersave\n"
    assert (tree / BOOST).read_text() == "1\n"
    assert (tree / (IRQ % 25)).read_text() == "%d\n" % CPU
    assert (tree / DEFAULT_IRQ).read_text() == "%x\n" % (1 << CPU | 1 << OTHER)
    assert _tuning.reset() == []


def test_an_interrupt_the_kernel_keeps_on_its_cpu_is_reported_and_the_rest_move(
        tree, monkeypatch):
    write = _tuning._write

    def refuse_irq_25(relative: str, value: str) -> None:
        if relative == IRQ % 25:
            raise OSError(5, "cannot write %s to /%s: Input/output error" % (value, relative))
        write(relative, value)

    monkeypatch.setattr(_tuning, "_write", refuse_irq_25)
    [interrupts] = [s for s in _tuning.settings(CPU) if s.name.startswith("interrupts")]
    assert _tuning.tune([interrupts]) == [
        "interrupts on CPU %d: was 2 of 3 may run there; wrote 2 of 3 files; the kernel "
        "refused 1 (cannot write %d to /%s: Input/output error)" % (CPU, OTHER, IRQ % 25)]
    assert (tree / (IRQ % 24)).read_text() == "%d\n" % OTHER
    assert (tree / (IRQ % 25)).read_text() == "%d\n" % CPU
    # what the kernel refused was not changed, so --reset has nothing to put back there
    assert sorted(_tuning.reset()) == sorted(["/%s: %s" % (IRQ % 24, both) for both in [
        "%d,%d" % (min(CPU, OTHER), max(CPU, OTHER))]] + ["/%s: %x" % (
            DEFAULT_IRQ, 1 << CPU | 1 << OTHER)])


def test_irqbalance_is_named_where_it_runs(tree):
    (tree / "proc/4242").mkdir(parents=True)
    (tree / "proc/4242/comm").write_text("irqbalance\n")
    [interrupts] = [s for s in _tuning.settings(CPU) if s.name.startswith("interrupts")]
    assert interrupts.now == "2 of 3 may run there (irqbalance runs: it moves them back)"
    assert interrupts.fix.endswith("stop irqbalance first (`sudo systemctl stop irqbalance`)")


def test_tune_and_reset_need_root(tree, monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["host", "--cpu", str(CPU), "--tune"]) == 1
    assert capsys.readouterr().err.startswith(
        "ngcc: error: --tune writes kernel settings under /sys and /proc, which only root "
        "may change: run `sudo ngcc host --tune`")
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
        "interrupts on CPU %d, SMT siblings of CPU %d, isolation of CPU %d, 1-minute load "
        "average, virtual machine; `sudo ngcc host --tune` fixes the 3 marked *"
        % (CPU, CPU, CPU, CPU))


def test_a_fit_host_says_so(tree, monkeypatch, capsys):
    (tree / GOVERNOR).write_text("performance\n")
    (tree / BOOST).write_text("0\n")
    (tree / ("sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % CPU)).write_text(
        "%d\n" % CPU)
    (tree / "sys/devices/system/cpu/isolated").write_text("%d\n" % CPU)
    for n in (24, 25):
        (tree / (IRQ % n)).write_text("%d\n" % OTHER)
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
