"""Submitted code under ngcc's own runs (issue 36): the driver runs isolated by default,
the library cannot tell a trial from a hash run, cannot fake its timed work unseen, and
cannot reach ngcc's process, the network or the time after its run.

Every hostile library is written here. Each run goes through ``ngcc.driver.child`` (the
modes ngcc itself uses) with the sandbox on, as every run is by default; where the
kernel refuses user namespaces the runs must raise ``SandboxUnavailableError``, which
is checked, and the rest is skipped. Nothing here asserts a duration.
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from _testlib import build_library

import ngcc
from ngcc.base.errors import SandboxUnavailableError
from ngcc.base.sandbox import REMEDY
from ngcc.driver import child as _child
from ngcc.driver import facts as _facts
from ngcc.driver import leak_mode as _leak_mode
from ngcc.driver import process as _process
from ngcc.driver import protocol as _protocol
from ngcc.library.registry import sanitized_build

# A CryptHash whose digest depends on every message byte (so that skipping work shows):
# an FNV-1a over the message, spread over the digest. BEFORE runs first in every call,
# CONSTRUCTOR in the library's constructor; both may `return`/set `refuse` (nonzero:
# CryptHash returns it).
TEMPLATE = r"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
static int refuse;
static unsigned long long calls_in_a_row;
static long env_long(const char *name)
{
    const char *value = getenv(name);
    return value ? atol(value) : -1;
}
static double cpu_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}
static int act(void)
{
    (void)env_long; (void)cpu_seconds;
    ACTION
    return 0;
}
__attribute__((constructor)) static void on_load(void)
{
    if (IN_CONSTRUCTOR)
        refuse = act();
}
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    uint64_t h = 1469598103934665603ull;
    unsigned long long i, bytes = bits / 8;
    int status;
    if (refuse)
        return refuse;
    if (!IN_CONSTRUCTOR && (status = act()) != 0)
        return status;
    calls_in_a_row++;
    HASHED
    for (i = 0; i < bytes; i++)
        h = (h ^ msg[i]) * 1099511628211ull;
    for (i = 0; i < (unsigned long long)d / 8; i++)
        digest[i] = (unsigned char)(h >> (8 * (i % 8))) ^ (unsigned char)i;
    return 0;
}
"""


def _library(folder: Path, name: str, action: str = "", *, constructor: bool = False,
             hashed: str = "") -> ngcc.Instance:
    source = (TEMPLATE.replace("ACTION", action).replace("HASHED", hashed)
              .replace("IN_CONSTRUCTOR", "1" if constructor else "0"))
    return ngcc.instance(build_library(folder, name, source))


def _sandbox_or_skip(inst: ngcc.Instance) -> None:
    """Skip where the kernel refuses the namespaces, after checking that ngcc then
    says so with the remedy (not a per-run failure)."""
    try:
        _child.hash_in_child(inst, b"abc", 24)
    except SandboxUnavailableError as exc:
        assert str(exc).startswith("ngcc-driver: isolation unavailable: ")
        assert str(exc).endswith(REMEDY)
        pytest.skip("the kernel refuses user namespaces here: %s" % exc)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("escape-libs")


@pytest.fixture(scope="module")
def honest(folder) -> ngcc.Instance:
    inst = _library(folder, "honest")
    _sandbox_or_skip(inst)
    return inst


def _cpu() -> int:
    return max(os.sched_getaffinity(0))


# ------------------------------------------------------------------ item 1: the default

def test_every_mode_runs_isolated_by_default_and_the_trial_says_so(honest, tmp_path):
    measured = _child.trial(honest, 64, 50, 2, cpu=_cpu())
    assert measured.isolation == "namespaces"
    assert _child.cold_call(honest, 64) > 0
    assert _child.probe(honest) == len(_child.PROBE_BITS)
    leak = _leak_mode.leak(honest, 32, 2000, 500, 7, lambda ticks, classes: False)
    assert leak.isolation == "namespaces"
    result = ngcc.leak(honest, 32, calls=2000)
    assert result.evidence().driver.isolation == "namespaces"
    [kat] = ngcc.kat.check("SM3", files="2_12", out_dir=tmp_path, progress=False)
    assert "\nisolation   namespaces\n" in kat.log.read_text()


def test_without_the_sandbox_the_trial_says_filter(honest, monkeypatch):
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")
    assert _child.trial(honest, 64, 50, 2, cpu=_cpu()).isolation == "filter"


def test_a_refused_sandbox_is_one_error_with_the_remedy(honest, monkeypatch, tmp_path):
    """A driver that exits 122 before any frame (as the real one does where the kernel
    refuses a namespace) is SandboxUnavailableError, not a trial's failure."""
    fake = tmp_path / "refusing-driver"
    fake.write_text("#!/bin/sh\necho 'ngcc-driver: isolation unavailable: unshare(CLONE_NEWUSER):"
                    " Operation not permitted (errno 1)' >&2\nexit 122\n")
    fake.chmod(0o755)
    monkeypatch.setattr(_process, "DRIVER", fake)
    with pytest.raises(SandboxUnavailableError) as caught:
        _child.trial(honest, 64, 10, 0)
    assert str(caught.value) == ("ngcc-driver: isolation unavailable: unshare(CLONE_NEWUSER): "
                                 "Operation not permitted (errno 1): " + REMEDY)
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")  # without --isolate, 122 is the library's
    with pytest.raises(_process.DriverError) as crashed:
        _child.trial(honest, 64, 10, 0)
    assert crashed.value.status == "crash"


def test_the_cli_stops_once_with_the_remedy(honest, monkeypatch, tmp_path, capsys):
    fake = tmp_path / "refusing-driver"
    fake.write_text("#!/bin/sh\necho 'ngcc-driver: isolation unavailable: mount(proc, /proc):"
                    " Operation not permitted (errno 1)' >&2\nexit 122\n")
    fake.chmod(0o755)
    monkeypatch.setattr(_process, "DRIVER", fake)
    monkeypatch.delenv("NGCC_NO_SANDBOX", raising=False)
    from ngcc.cli.main import main

    data = tmp_path / "message"
    data.write_bytes(b"abc")
    assert main(["hash", str(honest.library), str(data)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ngcc: error: ngcc-driver: isolation unavailable: mount(proc, /proc)")
    assert "--no-sandbox" in err and err.count("\n") == 1
    monkeypatch.setenv("NGCC_NO_SANDBOX", "")  # restored by monkeypatch after the test
    assert main(["--no-sandbox", "hash", str(honest.library), str(data)]) == 1  # fake: crash
    assert os.environ["NGCC_NO_SANDBOX"] == "1"


# ------------------------------------------------------------------ item 2: memory

def test_every_mode_takes_a_memory_limit_and_names_it(folder, honest):
    greedy = _library(folder, "greedy", r"""{
        unsigned char *p = malloc((size_t)1 << 30);
        if (p == NULL)
            return 12;
        memset(p, 1, (size_t)1 << 30);
        free(p);
    }""")
    for run in (lambda: _child.hash_in_child(greedy, b"abc", 24, memory_limit=256 << 20),
                lambda: _child.trial(greedy, 64, 5, 0, memory_limit=256 << 20)):
        with pytest.raises(_process.DriverError) as caught:
            run()
        assert (caught.value.status, caught.value.reason, caught.value.value) == (
            "error", "hash", 12)  # the allocation failed inside the library
    with pytest.raises(_process.DriverError) as refused:  # the driver's own buffer
        _child.trial(honest, 512 << 20, 1, 0, memory_limit=256 << 20)
    assert refused.value.reason == "memory"
    assert "capped at 256 MiB: memory_limit= / --memory-limit" in refused.value.detail


@pytest.mark.skipif(sanitized_build(), reason="no address-space cap under AddressSanitizer")
def test_the_sandboxs_cap_applies_in_every_mode(folder, honest, tmp_path):
    """8 GiB of address space (not even touched) is refused in every mode: 4 GiB cap."""
    huge = _library(folder, "huge", r"""{
        void *p = malloc((size_t)8 << 30);
        if (p == NULL)
            return 12;
        free(p);
    }""")
    runs = {
        "hash": lambda: _child.hash_in_child(huge, b"abc", 24),
        "cold": lambda: _child.cold_call(huge, 64),
        "trial": lambda: _child.trial(huge, 64, 5, 0),
        "kat": lambda: _child.generate_kat(huge, "2_12", tmp_path / "kat.txt"),
        "probe": lambda: _child.probe(huge),
        "leak": lambda: _leak_mode.leak(huge, 32, 1000, 500, 7, lambda ticks, classes: False),
    }
    for mode, run in runs.items():
        with pytest.raises(_process.DriverError) as caught:
            run()
        assert caught.value.reason == "hash", mode
        assert caught.value.value == 12 or "returned 12" in caught.value.detail, mode


# ------------------------------------------------------------------ item 3: no mode in argv

def test_the_library_cannot_read_its_mode_from_the_command_line(folder):
    # 8: no command line to read; 9: it names a mode or an option; 10: not the one form.
    nosy = _library(folder, "nosy", r"""{
        char line[4096];
        size_t n, i;
        FILE *file = fopen("/proc/self/cmdline", "rb");
        if (file == NULL)
            return 8;
        n = fread(line, 1, sizeof line - 1, file);
        fclose(file);
        for (i = 0; i < n; i++)
            line[i] = line[i] ? line[i] : ' ';
        line[n] = 0;
        if (strstr(line, "trial") || strstr(line, "hash") || strstr(line, "--parent-pid")
            || strstr(line, "--calls") || strstr(line, "--library"))
            return 9;
        if (!strstr(line, "ngcc-driver --request-fd "))
            return 10;
    }""", constructor=True)
    _sandbox_or_skip(nosy)
    assert len(_child.trial(nosy, 64, 20, 1, cpu=_cpu()).cycles) == 20
    assert len(_child.hash_in_child(nosy, b"abc", 24)) == 32


# ------------------------------------------------------------------ item 4: the digest

def test_a_library_that_skips_work_when_called_often_is_caught(folder):
    # Honest for a single call (a hash run, the KAT), but past 50 calls in a row it
    # hashes the first 64 bytes only: it cannot see that it is being timed.
    lazy = _library(folder, "lazy", hashed="if (calls_in_a_row > 50 && bytes > 64) bytes = 64;")
    _sandbox_or_skip(lazy)
    message = bytes(range(256)) * 4
    honest_digest = _child.hash_in_child(lazy, message, 8 * len(message))
    with pytest.raises(_process.DriverError) as caught:
        _child.trial(lazy, len(message), 200, 5, cpu=_cpu(), message=message)
    error = caught.value
    assert error.status == "protocol"
    assert "the last timed call left the digest " in error.detail
    assert "but the same message hashes to %s..." % honest_digest[:8].hex() in error.detail
    with pytest.raises(_process.DriverError) as runner:  # the campaigns' runner too
        _child.DriverRunner().trial(lazy, 1024, 200, 5, _cpu(), 1, 600)
    assert runner.value.status == "protocol" and "(trial 1)" in runner.value.message


def test_the_batch_digest_is_checked_too(folder):
    # Honest through the per-call loop (200 + 5 calls), lazy in the batch after it.
    late = _library(folder, "late", hashed="if (calls_in_a_row > 300 && bytes > 64) bytes = 64;")
    _sandbox_or_skip(late)
    with pytest.raises(_process.DriverError) as caught:
        _child.trial(late, 1024, 200, 5, cpu=_cpu())
    assert "the last batch call left the digest" in caught.value.detail


# ------------------------------------------------------------------ item 5: CPU time

def _forging_source(calls: int, tick: int) -> str:
    """A library that spins for 1 s of CPU time, then writes a plausible TRIAL frame of
    ``calls`` calls of ``tick`` ticks, its CYCLES and TRIAL_DIGEST and END, and exits."""
    _, floor, frequency = _facts.counter_floor()
    fields = {name: 0 for name, _ in _protocol.TRIAL_FIELDS}
    fields.update(cpu=-1, cpu_at_end=0, counter_id=1, calls=calls, frequency_hz=frequency,
                  overhead_min_ticks=4 * floor, overhead_median_ticks=4 * floor + 4,
                  loop_ticks=calls * tick, loop_ns=max(1, int(calls * tick / frequency * 1e9)),
                  baseline_rss_kib=1, peak_rss_kib=1)
    facts = _protocol.TRIAL_LAYOUT.pack(*[fields[name] for name, _ in _protocol.TRIAL_FIELDS])
    frames = b"".join((
        struct.pack("<II", _protocol.TRIAL, len(facts)) + facts,
        struct.pack("<II", _protocol.CYCLES, 8 * calls) + struct.pack("<Q", tick) * calls,
        struct.pack("<II", _protocol.TRIAL_DIGEST, 64) + bytes(64),
        struct.pack("<II", _protocol.END, 0)))
    array = ",".join(str(byte) for byte in frames)
    from _testlib import CHANNEL_FD_SOURCE

    return CHANNEL_FD_SOURCE + r"""
#include <time.h>
static unsigned char frames[] = {%s};
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    struct timespec now;
    unsigned int pid = (unsigned int)getpid();
    (void)d; (void)msg; (void)bits; (void)digest;
    do
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    while (now.tv_sec < 1);
    memcpy(frames + 8, &pid, 4);  /* the facts' pid: the driver's (no sandbox here) */
    if (write(channel_fd(), frames, sizeof frames) != (ssize_t)sizeof frames)
        return 1;
    _exit(0);
}
""" % array


@pytest.fixture()
def both_cpus_busy() -> Iterator[None]:
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(max(2, os.cpu_count() or 2))]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_forged_ticks_far_below_the_kernels_cpu_time_are_caught(folder, monkeypatch,
                                                                both_cpus_busy):
    if _facts.counter_floor()[0] != "rdtsc":
        pytest.skip("the forged frame names the x86-64 counter")
    # Without the sandbox the forger knows the driver's pid: only the CPU time is left.
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")
    forger = ngcc.instance(build_library(folder, "forger", _forging_source(100, 1000)))
    with pytest.raises(_process.DriverError) as caught:
        _child.trial(forger, 32, 100, 0, batch_calls=0, expected_digest=bytes(32))
    assert caught.value.status == "protocol"
    assert "in a process the kernel accounted" in caught.value.detail
    assert "more than 8 x the claim plus 250 ms of start-up" in caught.value.detail


def test_an_honest_slow_library_is_no_false_positive_under_load(folder, both_cpus_busy):
    slow = _library(folder, "slow", r"""{
        double until = cpu_seconds() + 0.002;  /* 2 ms of CPU time a call */
        while (cpu_seconds() < until)
            ;
    }""")
    _sandbox_or_skip(slow)
    measured = _child.trial(slow, 64, 40, 2, cpu=_cpu())
    assert len(measured.cycles) == 40


# ------------------------------------------------------------------ item 6: the audit's item 3

# Each returns 0 (so the run delivers) and records what it managed in nothing the
# parent does not check itself: the test's own state is the witness.
REACHES = {
    "setown": r"""{
        int p[2];
        pid_t pid = (pid_t)env_long("NGCC_TEST_PID");
        if (pipe(p) == 0 && fcntl(p[0], F_SETOWN, pid) == 0) {
            fcntl(p[0], F_SETSIG, SIGTERM);
            fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK);
            (void)!write(p[1], "x", 1);
        }
    }""",
    "prlimit": r"""{
        struct rlimit zero = {0, 0};
        (void)prlimit((pid_t)env_long("NGCC_TEST_PID"), RLIMIT_FSIZE, &zero, NULL);
        (void)prlimit(getppid(), RLIMIT_FSIZE, &zero, NULL);
    }""",
    "priority": r"""{
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        (void)setpriority(PRIO_PROCESS, (id_t)env_long("NGCC_TEST_PID"), 19);
        (void)sched_setaffinity((pid_t)env_long("NGCC_TEST_PID"), sizeof one, &one);
    }""",
    "ptrace": r"""{
        char byte;
        struct iovec local = {&byte, 1}, remote = {(void *)env_long("NGCC_TEST_ADDRESS"), 1};
        pid_t pid = (pid_t)env_long("NGCC_TEST_PID");
        if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) == 0)
            return 51;
        if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == 1)
            return 61;
    }""",
    "connects": r"""{
        struct sockaddr_in to;
        int s = socket(AF_INET, SOCK_STREAM, 0);
        memset(&to, 0, sizeof to);
        to.sin_family = AF_INET;
        to.sin_port = htons((unsigned short)env_long("NGCC_TEST_PORT"));
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (s >= 0 && connect(s, (struct sockaddr *)&to, sizeof to) == 0)
            return 71;
    }""",
    # A child that clears its parent-death signal, tries to leave the group and sleeps
    # (that it does not outlive the run: test_isolation.py, whose pipe it would hold;
    # the view holds no file of the test's for it to say so on).
    "outlives": r"""{
        static int done;
        if (!done && fork() == 0) {
            prctl(PR_SET_PDEATHSIG, 0);
            (void)setsid();
            for (;;)
                pause();
        }
        done = 1;
    }""",
}


def _witness() -> tuple[object, ...]:
    pid = os.getpid()
    return (resource.prlimit(pid, resource.RLIMIT_FSIZE), os.getpriority(os.PRIO_PROCESS, pid),
            os.sched_getaffinity(pid))


@pytest.mark.parametrize("where", ["call", "constructor"])
@pytest.mark.parametrize("mode", ["trial", "kat"])
@pytest.mark.parametrize("reach", sorted(REACHES))
def test_the_library_cannot_reach_ngcc_the_network_or_outlive_the_run(folder, honest, reach,
                                                                       mode, where, monkeypatch,
                                                                       tmp_path):
    secret = b"the parent's memory"
    received: list[int] = []
    name = "%s_%s_%s" % (reach, where, mode)
    previous = signal.signal(signal.SIGTERM, lambda number, frame: received.append(number))
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    monkeypatch.setenv("NGCC_TEST_PID", str(os.getpid()))  # the kernel must block it anyway
    monkeypatch.setenv("NGCC_TEST_ADDRESS", str(id(secret)))
    monkeypatch.setenv("NGCC_TEST_PORT", str(server.getsockname()[1]))
    inst = _library(folder, name, REACHES[reach], constructor=where == "constructor")
    before = _witness()
    outcome: object
    try:
        try:
            outcome = (_child.trial(inst, 64, 20, 1, cpu=_cpu()) if mode == "trial"
                       else _child.generate_kat(inst, "2_12", tmp_path / "kat.txt"))
        except _process.DriverError as exc:
            outcome = exc
        assert _witness() == before and received == []
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.close()
    if reach == "outlives":
        assert isinstance(outcome, _process.DriverError)  # the driver saw its child
        assert (outcome.status, outcome.reason) == ("error", "forked"), outcome
    else:  # every call was refused by the kernel: the run delivered
        assert not isinstance(outcome, Exception), outcome


def test_without_the_sandbox_the_same_libraries_do_reach_out(folder, honest, monkeypatch):
    """The control: with the seccomp filter alone the connection and the read of the
    parent's memory succeed (so the tests above can tell)."""
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")
    secret = b"the parent's memory"
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        monkeypatch.setenv("NGCC_TEST_PORT", str(server.getsockname()[1]))
        with pytest.raises(_process.DriverError) as connected:
            _child.trial(_library(folder, "connects_control", REACHES["connects"]), 64, 5, 0)
        assert connected.value.value == 71
    monkeypatch.setenv("NGCC_TEST_PID", str(os.getpid()))
    monkeypatch.setenv("NGCC_TEST_ADDRESS", str(id(secret)))
    reads = r"""{
        char byte;
        struct iovec local = {&byte, 1}, remote = {(void *)env_long("NGCC_TEST_ADDRESS"), 1};
        if (process_vm_readv((pid_t)env_long("NGCC_TEST_PID"), &local, 1, &remote, 1, 0) == 1)
            return 61;
    }"""  # not PTRACE_ATTACH: that would stop the test process itself
    try:
        _child.hash_in_child(_library(folder, "reads_control", reads), b"abc", 24)
    except _process.DriverError as read:
        assert read.value == 61
    else:  # the kernel's own ptrace rules (Yama, not root) refuse it here too
        pytest.skip("reading the parent's memory is refused even without the sandbox")


def test_a_campaign_records_each_trials_isolation_and_validates(tmp_path):
    from ngcc.cli.main import main

    run_dir = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ngcc.MeasurementWarning)
        run = ngcc.Campaign(["SM3"], run_dir=run_dir, quick=True, trials=2,
                            trial_target=0.002, lengths=[64], progress=False).run()
    trials = [trial for record in run.records for trial in record.trials]
    assert trials and {trial.isolation for trial in trials} == {"namespaces"}
    run.report(plots=False)
    assert main(["validate", str(run_dir)]) == 0  # the schema takes the field


def test_a_refused_sandbox_stops_a_campaign_once(monkeypatch, tmp_path):
    """Not a failed job per library: the first run raises, and the campaign with it."""
    fake = tmp_path / "refusing-driver"
    fake.write_text("#!/bin/sh\necho 'ngcc-driver: isolation unavailable: unshare(CLONE_NEWUSER):"
                    " Operation not permitted (errno 1)' >&2\nexit 122\n")
    fake.chmod(0o755)
    monkeypatch.setattr(_process, "DRIVER", fake)
    monkeypatch.delenv("NGCC_NO_SANDBOX", raising=False)
    with pytest.raises(SandboxUnavailableError, match="--no-sandbox"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", ngcc.MeasurementWarning)
        ngcc.Campaign(["SM3", "WChain-V1-512"], run_dir=tmp_path / "run", quick=True, trials=2,
                      trial_target=0.002, lengths=[64], progress=False).run()


# ------------------------------------------------------------- ngcc check says it

def test_ngcc_check_says_what_submitted_code_runs_in(monkeypatch, tmp_path, capsys):
    from ngcc.cli.main import main

    monkeypatch.delenv("NGCC_NO_SANDBOX", raising=False)
    main(["check"])
    out = capsys.readouterr().out
    assert ("submitted code runs isolated: its own user, PID, network" in out
            or "warning: ngcc-driver: isolation unavailable" in out), out

    fake = tmp_path / "refusing-driver"  # as the kernel of some containers answers
    fake.write_text("#!/bin/sh\necho 'ngcc-driver: isolation unavailable: unshare(CLONE_NEWUSER):"
                    " Operation not permitted (errno 1)' >&2\nexit 122\n")
    fake.chmod(0o755)
    monkeypatch.setattr(_process, "DRIVER", fake)
    assert main(["check", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "warning: ngcc-driver: isolation unavailable: unshare(CLONE_NEWUSER)" in out
    assert "--no-sandbox" in out and "runs isolated" not in out

    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")  # the fake is never run: nothing to check
    main(["check"])
    assert "warning: submitted code runs with the driver's seccomp filter alone" in \
        capsys.readouterr().out
