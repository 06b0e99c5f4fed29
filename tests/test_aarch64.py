"""The second system, AArch64, on any machine: the counter's labels with the C side's
answers faked, the report's system line, the CPU's name from faked /proc/cpuinfo text,
and the hook that runs another build of the driver (``NGCC_DRIVER``,
``NGCC_DRIVER_PREFIX``) with the CPU-feature check it leaves to the driver.

The AArch64 build itself is proven by ``.ci/aarch64`` (a CI step: cross compiler and
qemu-user), not here.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from _fakerun import make_run
from _fakes import ENVIRONMENT

import ngcc
from ngcc.base.errors import LibraryError, NgccError
from ngcc.driver import child as _child
from ngcc.driver import process as _process
from ngcc.driver import protocol as _protocol
from ngcc.driver import timing as _timing
from ngcc.evidence.model import Counter, Environment
from ngcc.evidence.run import load_run
from ngcc.library import registry as _registry
from ngcc.measure import host as _host
from ngcc.report import host as _host_words
from ngcc.report import pages as _report

#: What csrc/timer.c answers on an AArch64 Linux host whose firmware set cntfrq_el0
#: to 19.2 MHz (arm_1's rate).
AARCH64_CALIBRATION = {"name": "cntvct_el0", "unit": "timer-ticks", "nominal_hz": 19.2e6,
                       "frequency_hz": 19_200_310.5, "overhead_min": 1, "overhead_median": 2}
GENERIC_TIMER = Counter(name="cntvct_el0", frequency_hz=19_200_310.5, overhead_min=1,
                        overhead_median=2, unit="timer-ticks", nominal_hz=19.2e6)
ARM_HOST = replace(ENVIRONMENT, machine="aarch64", cpu_model="Neoverse-N1",
                   counter=GENERIC_TIMER)


def cycles_word(text: str) -> bool:
    """True when ``text`` calls a number of something cycles (``1–2 cycles``)."""
    return re.search(r"\d cycles", text) is not None


@pytest.fixture
def aarch64_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extension answers as on AArch64; the process's calibration is made afresh."""
    monkeypatch.setattr(_timing._core, "counter_calibrate", lambda: dict(AARCH64_CALIBRATION))
    monkeypatch.setattr(_timing, "_calibration", None)


# ----------------------------------------------------------------- the counter's labels

def test_the_calibration_keeps_the_c_sides_name_unit_and_rate(aarch64_core: None) -> None:
    info = ngcc.counter_info()
    assert (info.name, info.unit, info.nominal_hz) == ("cntvct_el0", "timer-ticks", 19.2e6)
    assert _host._counter() == GENERIC_TIMER


def test_the_fingerprint_names_the_generic_timer_and_its_tick(aarch64_core: None) -> None:
    env = replace(ARM_HOST, counter=_host._counter())
    text = dict(_host_words.describe(env))["cycle counter"]
    assert text.startswith("cntvct_el0 (ARM generic timer, not core cycles), 19.2 MHz by "
                           "cntfrq_el0, 52.1 ns a tick")
    assert "read its batch mean" in text
    assert text.endswith("overhead 1–2 ticks (min–median; recorded, not subtracted)")
    assert not cycles_word(text)


def test_info_prints_the_generic_timer(capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from ngcc.cli.main import main
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: ARM_HOST)
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "ARM generic timer" in out and "19.2 MHz by cntfrq_el0" in out
    assert not cycles_word(out)


def test_a_record_without_the_unit_is_read_by_the_counters_name() -> None:
    old = Counter(name="cntvct_el0", frequency_hz=24e6, overhead_min=0, overhead_median=1)
    assert _host_words.counter_unit(old) == "timer-ticks"
    text = _host_words.counter_text(replace(ARM_HOST, counter=old))
    assert "24 MHz measured, 41.7 ns a tick" in text and not cycles_word(text)


def test_each_unit_has_its_own_word() -> None:
    clock = Counter(name="clock_monotonic_raw", frequency_hz=1e9, overhead_min=20,
                    overhead_median=25, unit="ns")
    assert _host_words.counter_text(replace(ENVIRONMENT, counter=clock)).endswith(
        "overhead 20–25 ns (min–median; recorded, not subtracted)")
    tsc = _host_words.counter_text(ENVIRONMENT)  # the TSC keeps the seeds' wording
    assert tsc == "rdtsc, 2.100 GHz, overhead 24–26 ticks (min–median; recorded, not subtracted)"


def test_the_units_are_the_drivers() -> None:
    """The unit the extension records is one the driver's protocol names for it."""
    units = dict(_protocol.COUNTERS.values())
    assert units[AARCH64_CALIBRATION["name"]] == AARCH64_CALIBRATION["unit"]
    calibration = _timing._core.counter_calibrate()
    assert units[calibration["name"]] == calibration["unit"]


def test_the_counter_fields_round_trip_and_old_records_read_as_before() -> None:
    data = json.loads(json.dumps(ARM_HOST.to_json()))
    assert data["counter"]["unit"] == "timer-ticks" and data["counter"]["nominal_hz"] == 19.2e6
    assert Environment.from_json(data) == ARM_HOST
    old = ENVIRONMENT.to_json()
    assert set(old["counter"]) == {"name", "frequency_hz", "overhead_min", "overhead_median"}
    assert Environment.from_json(old).counter.unit is None  # type: ignore[union-attr]


# ------------------------------------------------------------------ every page's system

def test_the_system_line_names_architecture_cpu_and_counter() -> None:
    line = _report.system_line(SimpleNamespace(environment=ARM_HOST))  # type: ignore[arg-type]
    assert line == ("System: AArch64 · Neoverse-N1 · counter cntvct_el0 (ARM generic timer), "
                    "19.2 MHz by cntfrq_el0, 52.1 ns a tick: the “cycles” of the tables below "
                    "are its ticks, not core cycles")
    x86 = _report.system_line(SimpleNamespace(environment=ENVIRONMENT))  # type: ignore[arg-type]
    assert x86 == "System: x86-64 · Fake CPU · counter rdtsc, 2.100 GHz"


def test_every_page_carries_the_system_line(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path / "run", calls=20))
    line = _report.system_line(run)
    pages = _report.pages(run, plots=False)
    assert len(pages) >= 3
    for name, text in pages.items():
        assert text.splitlines()[2] == line, name


# ---------------------------------------------------------- another build of the driver

def test_the_driver_runs_behind_the_prefix_it_is_given(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "other-driver"
    shutil.copy2(_process.driver_path(), copy)
    seen = tmp_path / "seen"
    monkeypatch.setenv(_process.DRIVER_ENV, str(copy))
    # The prefix notes its command line and the request (read through /proc: a file
    # description of its own, so the driver still reads the request from its start).
    monkeypatch.setenv(_process.PREFIX_ENV, "sh -c 'echo \"$0 $*\" > %s; "
                       "tr \"\\\\000\" \" \" < /proc/self/fd/$2 >> %s; exec \"$0\" \"$@\"'"
                       % (seen, seen))
    assert _process.driver_command()[-1] == str(copy)
    digest = _child.hash_in_child(ngcc.instance("SM3"), b"abc", 24)
    assert digest.hex().startswith("66c7f0f4")  # GB/T 32905-2016's "abc"
    command, request = seen.read_text().splitlines()
    driver, option, _ = command.split()
    assert (driver, option) == (str(copy), "--request-fd")  # the prefix ran this driver,
    mode, *options = request.split()
    assert mode == "hash"
    assert "--emulated" in options  # told it may be behind an emulator that has no seccomp
    assert "--isolate" not in options  # and, emulated, without the namespaces


def test_a_bad_driver_setting_is_an_error_naming_it(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_process.DRIVER_ENV, str(tmp_path / "absent"))
    with pytest.raises(NgccError, match="absent is not built"):
        _process.driver_command()
    monkeypatch.delenv(_process.DRIVER_ENV)
    monkeypatch.setenv(_process.PREFIX_ENV, "qemu-aarch64 -L 'unclosed")
    with pytest.raises(NgccError, match="NGCC_DRIVER_PREFIX is not a command line"):
        _process.driver_command()


def test_without_the_settings_the_installed_driver_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_process.DRIVER_ENV, raising=False)
    monkeypatch.delenv(_process.PREFIX_ENV, raising=False)
    assert _process.driver_command() == [str(_process.DRIVER)]


# ---------------------------------------------------------------------- the CPU's name

NEOVERSE_N1 = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c
CPU revision\t: 1

processor\t: 1
CPU implementer\t: 0x41
CPU part\t: 0xd0c
"""


def test_an_aarch64_cpu_is_named_by_its_ids() -> None:
    assert _host.cpu_model_of(NEOVERSE_N1) == "ARM Neoverse-N1 (implementer 0x41, part 0xd0c)"
    other = NEOVERSE_N1.replace("0xd0c", "0xfff")
    assert _host.cpu_model_of(other) == "AArch64 core (implementer 0x41, part 0xfff)"


def test_a_model_name_wins_and_a_board_is_the_last_resort() -> None:
    assert _host.cpu_model_of("processor : 0\nmodel name : AMD EPYC 7B13\n") == "AMD EPYC 7B13"
    assert _host.cpu_model_of("Hardware : BCM2835\nModel : Raspberry Pi 4\n") == "Raspberry Pi 4"
    assert _host.cpu_model_of("CPU implementer : junk\nCPU part : 0xd0c\n") is None


# ------------------------------------------------------ CPU features behind an emulator

def test_behind_an_emulator_the_driver_judges_a_librarys_cpu_features(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library built for AArch64's AES (``asimd``, ``aes``) is refused on this CPU,
    unless the driver runs behind a prefix (an emulator): its CPU is then the one that
    counts, and the driver checks ``--cpu-features`` there."""
    library = tmp_path / "Wish512.neon.so"
    library.write_bytes(b"\x7fELF")  # never loaded here
    (tmp_path / "Wish512.neon.so.json").write_text(json.dumps(
        {"name": "Wish512", "digest_bits": 512, "cpu_features": ["asimd", "aes"]}))
    monkeypatch.delenv(_process.PREFIX_ENV, raising=False)
    if "asimd" in _registry.cpu_features():
        pytest.skip("this CPU has asimd: nothing to refuse")
    with pytest.raises(LibraryError, match="asimd"):
        ngcc.instance(library)
    monkeypatch.setenv(_process.PREFIX_ENV, "qemu-aarch64")
    assert ngcc.instance(library).cpu_features == ("asimd", "aes")
    with pytest.raises(LibraryError, match="asimd"):  # a built-in variant still runs here
        _registry.require_cpu_features(replace(ngcc.instance("Wish512"),
                                               cpu_features=("asimd",)))


def test_the_driver_refuses_a_library_whose_features_its_cpu_lacks() -> None:
    """What it judges with: the driver's own check, before the library is loaded."""
    if "asimd" in _registry.cpu_features():
        pytest.skip("this CPU has asimd")
    inst = replace(ngcc.instance("SM3"), cpu_features=("asimd",))
    with pytest.raises(_process.DriverError) as caught:
        _child.hash_in_child(inst, b"abc", 24)
    assert caught.value.reason == "feature" and "asimd" in caught.value.detail
