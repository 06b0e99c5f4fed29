"""What a library cannot do from inside ngcc-driver (csrc/driver/sandbox.c and the checks of
ngcc/driver/child.py): signal a process outside its group, leave the group, widen its CPU
affinity unseen, read far past its message, or forge impossible timings.

A hostile call that escaped would end the caller, so each signalling library runs
under a separate ``python -m ngcc`` whose exit status the test reads.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _fakes import FakeKat, fixed_host
from _testlib import build_library

import ngcc
from ngcc.campaign.campaign import Campaign
from ngcc.driver import child as _child
from ngcc.driver import facts as _facts
from ngcc.driver import process as _process
from ngcc.evidence.model import page_key
from ngcc.evidence.run import load_run
from ngcc.report import pages as _report

TEMPLATE = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    volatile unsigned char sink = 0;
    (void)msg; (void)bits; (void)sink;
    BODY
    memset(digest, 0x5A, (size_t)d / 8);
    return 0;
}
"""

BEHAVIOURS = {
    "kills_parent": "kill(getppid(), SIGTERM);",
    "kills_parent_hard": "kill(getppid(), SIGKILL);",
    "tgkills_parent": "syscall(SYS_tgkill, getppid(), getppid(), SIGTERM);",
    "queues_to_parent": "{ siginfo_t info; memset(&info, 0, sizeof info); info.si_code = -1;"
                        " syscall(SYS_rt_sigqueueinfo, getppid(), SIGTERM, &info); }",
    "kills_own_group": "kill(0, SIGTERM);",
    "kills_itself": "kill(getpid(), SIGTERM);",
    "leaves_group": "if (setsid() != -1 || setpgid(0, 0) != -1) return 9;",
    "raises": "raise(SIGSEGV);",
    "over_1mib": "sink = msg[(size_t)(bits + 7) / 8 + (1u << 20) - 1];",
}


@pytest.fixture(scope="module")
def libs(tmp_path_factory) -> dict[str, ngcc.Instance]:
    folder = tmp_path_factory.mktemp("sandbox-libs")
    return {name: ngcc.instance(build_library(folder, name, TEMPLATE.replace("BODY", body)))
            for name, body in BEHAVIOURS.items()}


def _ngcc_hash(inst: ngcc.Instance, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "message"
    data.write_bytes(b"abc")
    return subprocess.run([sys.executable, "-m", "ngcc", "hash", str(inst.library), str(data)],
                          capture_output=True, text=True, timeout=120,
                          start_new_session=True)


@pytest.mark.parametrize("behaviour", ["kills_parent", "kills_parent_hard", "tgkills_parent",
                                       "queues_to_parent"])
def test_a_library_signalling_its_parent_fails_its_job_and_the_parent_lives(
        libs, tmp_path, behaviour):
    done = _ngcc_hash(libs[behaviour], tmp_path)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert done.stderr.startswith("ngcc: error: ") and done.stderr.count("\n") == 1
    assert "the library tried to signal another process" in done.stderr


def test_the_error_says_so_in_the_api(libs):
    with pytest.raises(_process.DriverError) as caught:
        _child.hash_in_child(libs["kills_parent"], b"abc", 24)
    assert (caught.value.status, caught.value.reason) == ("crash", "signal")


@pytest.mark.parametrize("behaviour, name", [("kills_own_group", "SIGTERM"),
                                             ("kills_itself", "SIGTERM"),
                                             ("raises", "SIGSEGV")])
def test_signals_inside_its_own_group_still_work(libs, behaviour, name):
    with pytest.raises(_process.DriverError) as caught:
        _child.hash_in_child(libs[behaviour], b"abc", 24)
    assert caught.value.status == "crash" and name in caught.value.detail
    assert caught.value.reason != "signal"


def test_a_library_cannot_leave_the_process_group(libs):
    assert _child.hash_in_child(libs["leaves_group"], b"abc", 24) == b"\x5a" * 32


def test_the_parent_is_untouched_by_the_attempt(libs):
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(_process.DriverError):
        _child.hash_in_child(libs["tgkills_parent"], b"abc", 24)
    assert signal.getsignal(signal.SIGTERM) is before and os.getpid() > 0


# ------------------------------------------------------------------ guard regions

@pytest.mark.parametrize("run", ["hash", "probe"])
def test_a_1_mib_over_read_faults_in_the_guard(libs, run):
    """(A trial's message lies on the heap, as the harness's: the probe before it is
    what catches a library that reads past its message.)"""
    inst = libs["over_1mib"]
    with pytest.raises(_process.DriverError) as caught:
        if run == "hash":
            _child.hash_in_child(inst, b"abc", 24)
        else:
            _child.probe(inst, bits=(0, 8, 256))
    assert caught.value.status == "crash"
    assert caught.value.reason == "read past the message", caught.value.detail


# ------------------------------------------------------------------ affinity

AFFINITY = ("{ cpu_set_t all; int i; CPU_ZERO(&all); for (i = 0; i < 64; i++) CPU_SET(i, &all);"
            " sched_setaffinity(0, sizeof all, &all); }")


def test_a_widened_affinity_is_flagged_repeated_by_strict_and_on_the_page(tmp_path, monkeypatch):
    fixed_host(monkeypatch)  # --strict refuses a host that is not fixed for measurement
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs to widen the affinity to")
    source = TEMPLATE.replace("BODY", AFFINITY).replace("#include <signal.h>",
                                                        "#include <sched.h>\n#include <signal.h>")
    inst = ngcc.instance(build_library(tmp_path, "Widens", source))
    cpu = max(os.sched_getaffinity(0))
    with pytest.warns(ngcc.MeasurementWarning) as caught:
        run = Campaign([str(inst.library)], lengths=[32], trials=2, quick=True, cpu=cpu,
                       strict=True, run_dir=tmp_path / "run", kat_checker=FakeKat(),
                       progress=False).run()
    assert any("--strict rejected and repeated" in str(w.message) for w in caught)
    record = run.records[0]
    assert all(trial.affinity_changed for trial in record.trials)
    flagged = [flag.trial for flag in record.statistics.flags if flag.code == "affinity_changed"]
    # every trial: the 2 planned, and any a slow speed state of a busy host added
    assert flagged == [trial.index for trial in record.trials] and len(flagged) >= 2
    assert record.rejected_trials and {r.code for r in record.rejected_trials} == {
        "affinity_changed"}  # --strict repeated them (and kept the last attempts)
    page = _report.candidate_page(load_run(run.path),
                                  page_key(record.candidate, record.label))
    assert "`affinity_changed`: %d trials in 1 of 1 record" % len(flagged) in page


# ------------------------------------------------------------------ forged timings

def _forged_trial(tmp_path, monkeypatch, calls: int, tick: int, **changes):
    """A driver whose TRIAL frame is plausible but whose calls each read ``tick`` ticks."""
    import textwrap

    from _testlib import fake_driver

    from ngcc.driver import protocol as _protocol
    _, floor, frequency = _facts.counter_floor()
    fields = {name: 0 for name, _ in _protocol.TRIAL_FIELDS}
    fields.update(cpu=-1, cpu_at_end=0, counter_id=1, calls=calls, frequency_hz=frequency,
                  overhead_min_ticks=4 * floor, overhead_median_ticks=4 * floor + 4,
                  loop_ticks=calls * tick, loop_ns=max(1, int(calls * tick / frequency * 1e9)),
                  baseline_rss_kib=1, peak_rss_kib=1)
    fields.update(changes)
    values = [fields[name] for name, _ in _protocol.TRIAL_FIELDS]
    body = textwrap.dedent("""
        frame(1, struct.pack('<II', 1, pid)); frame(2)
        if args[0] == "hash":  # the trial message's digest, for the trial's check
            frame(5, bytes(32)); frame(13); sys.exit(0)
        facts = %r
        facts[0] = pid
        frame(7, struct.pack(%r, *facts)); frame(8, struct.pack('<Q', %d) * %d)
        frame(16, bytes(64)); frame(13)
    """) % (values, _protocol.TRIAL_LAYOUT.format, tick, calls)
    monkeypatch.setattr(_process, "DRIVER", fake_driver(tmp_path, body))
    return _child.trial(ngcc.instance("SM3"), 32, calls, 0, batch_calls=0)


def test_a_one_tick_forged_trial_is_a_protocol_failure(tmp_path, monkeypatch):
    if _facts.counter_floor()[0] != "rdtsc":
        pytest.skip("the forged frame names the x86-64 counter")
    with pytest.raises(_process.DriverError) as caught:
        _forged_trial(tmp_path, monkeypatch, 100, 1)
    assert caught.value.status == "protocol"
    assert "a per-call reading of 1 ticks, below the" in caught.value.message


@pytest.mark.parametrize("changes, words", [
    ({"overhead_min_ticks": 0, "overhead_median_ticks": 0}, "a counter overhead of 0 ticks"),
    ({"frequency_hz": 1e11}, "a counter of 1e+11 Hz"),
    ({"loop_ticks": 10**14}, "ticks of timed loops"),
])
def test_other_impossible_figures_are_protocol_failures(tmp_path, monkeypatch, changes, words):
    if _facts.counter_floor()[0] != "rdtsc":
        pytest.skip("the forged frame names the x86-64 counter")
    with pytest.raises(_process.DriverError) as caught:
        _forged_trial(tmp_path, monkeypatch, 100, 10**4, **changes)
    assert caught.value.status == "protocol" and words in caught.value.message


def test_the_same_frame_with_possible_figures_is_a_measurement(tmp_path, monkeypatch):
    if _facts.counter_floor()[0] != "rdtsc":
        pytest.skip("the forged frame names the x86-64 counter")
    measured = _forged_trial(tmp_path, monkeypatch, 100, 10**4)
    assert len(measured.cycles) == 100  # the checks refuse only what cannot be
