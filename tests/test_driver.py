"""ngcc-driver and ngcc.driver.child: the one child runner for foreign code.

Fixture libraries written here misbehave on purpose (crash, hang, exit, fork, forge
frames, read past the message, change their affinity, allocate 20 GiB); each must
come back as the right status with a precise message, and the caller lives on.
Nothing here asserts a speed: the comparisons with the extension are loose bounds.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from _testlib import CHANNEL_FD_SOURCE, build_library, fake_driver

import ngcc
import ngcc.kat
from ngcc import _core
from ngcc.base.errors import HashError, InstanceCrashError, InstanceProtocolError
from ngcc.driver import child as _child
from ngcc.driver import ending as _ending
from ngcc.driver import process as _process
from ngcc.driver import protocol as _protocol
from ngcc.driver.process import DriverError
from ngcc.driver.protocol import Conversation, ProtocolError
from ngcc.library.registry import sanitized_build

REPO = Path(__file__).resolve().parents[1]
SANITIZED = sanitized_build()

# One template, one behaviour each: BODY runs at the start of every CryptHash call.
TEMPLATE = CHANNEL_FD_SOURCE + r"""
#include <pthread.h>
static void *idle_thread(void *arg) { return arg; }
/* Append "<pid> <forked child>" to $NGCC_TEST_PIDS, for the test to check on them. */
static void note_pids(pid_t child)
{
    const char *path = getenv("NGCC_TEST_PIDS");
    FILE *file = path ? fopen(path, "a") : NULL;
    if (file) {
        fprintf(file, "%d %d\n", (int)getpid(), (int)child);
        fclose(file);
    }
}

__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    volatile unsigned char sink = 0;
    size_t bytes = (size_t)((bits + 7) / 8);
    (void)note_pids; (void)channel_fd; (void)bytes; (void)idle_thread;
    BODY
    memset(digest, msg && bits ? msg[0] : 0x5A, (size_t)d / 8);
    (void)sink;
    return 0;
}
"""

BEHAVIOURS = {
    "trivial": "",
    "crash": "raise(SIGSEGV);",
    "null": "sink = *(volatile unsigned char *)(size_t)bits;  /* bits 0: NULL */",
    "hang": "for (;;) pause();",
    "fails": "if (bits == 8 * 21) return 5;",
    "exits": "exit(0);",
    "over1": "sink = msg[bytes];",
    "over64": "sink = msg[bytes + 63];",
    "aligned": "if ((size_t)msg % 64 != 0) return 7;",
    "under1": "sink = *(msg - 1);",
    "digest_over": "digest[d / 8] = 1;",
    "fork_keeps_pipe": "{ pid_t c = fork(); if (c == 0) { setsid(); sleep(60); _exit(0); }"
                       " note_pids(c); }",
    "fork_then_hang": "{ pid_t c = fork(); if (c == 0) { sleep(60); _exit(0); } note_pids(c);"
                      " for (;;) pause(); }",
    "fork_copy_crashes": "{ if (fork() == 0) sink = *(volatile unsigned char *)0; }",
    "fork_storm": "{ int i; for (i = 0; i < 200; i++) { pid_t c = fork(); if (c == 0) "
                  "{ sleep(1); _exit(0); } if (c < 0) return 9; } }",
    "spawns": "if (system(\"true\") != 0) return 9;",
    "threads": "{ pthread_t t; void *back = NULL; if (pthread_create(&t, NULL, idle_thread, "
               "digest) != 0 || pthread_join(t, &back) != 0 || back != digest) return 9; }",
    "garbage": r"{ int fd = channel_fd(); if (fd >= 0 && write(fd, "
               r"""" \xff\xff\xff\x7f\xf0\xff\xff\xff", 8) < 0) return 1; }""",
    "forged_digest": r"""{ static const unsigned char frame[40] = {5, 0, 0, 0, 32, 0, 0, 0,
                        0xde, 0xad, 0xbe, 0xef}; int fd = channel_fd();
                        if (fd >= 0 && write(fd, frame, sizeof frame) < 0) return 1; }""",
    "forged_pickle": r"""{ int fd = channel_fd(); if (fd >= 0 && write(fd, PICKLE,
                        sizeof PICKLE - 1) < 0) return 1; }""",
    "affinity": "{ cpu_set_t all; int i; CPU_ZERO(&all); for (i = 0; i < 64; i++) "
                "CPU_SET(i, &all); sched_setaffinity(0, sizeof all, &all); }",
    "allocates": "{ unsigned char *p = malloc((size_t)20 << 30); p[0] = 1; sink = p[0]; }",
    "busy": "{ volatile int i; for (i = 0; i < 20000; i++) {} }",
}


@pytest.fixture(scope="module")
def libs(tmp_path_factory) -> dict[str, ngcc.Instance]:
    """Every behaviour, built once, as an external instance (so it runs in the driver)."""
    folder = tmp_path_factory.mktemp("driver-libs")
    marker = folder / "unpickled"
    pickle_bytes = (b"\\x80\\x04cposix\\nsystem\\n(V touch %s\\ntR." % str(marker).encode())
    built = {}
    for name, body in BEHAVIOURS.items():
        source = TEMPLATE.replace("BODY", body)
        if name == "forged_pickle":
            source = '#define PICKLE "%s"\n' % pickle_bytes.decode() + source
        built[name] = ngcc.instance(build_library(folder, name, source))
    built["marker"] = marker  # type: ignore[assignment]
    return built


def _cpu() -> int:
    return max(os.sched_getaffinity(0))


def _alive(pid: int) -> bool:
    """True while pid exists and is not a zombie."""
    try:
        state = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


# ------------------------------------------------------------------ the protocol

def _c_constants() -> dict[str, int]:
    text = (REPO / "csrc" / "driver" / "frames.h").read_text() + (
        REPO / "csrc" / "driver" / "guard.h").read_text()
    found = {name: int(value) for name, value in
             re.findall(r"\b([A-Z][A-Z0-9_]+) = (\d+)\b", text)}
    found.update({name: int(value) for name, value in
                  re.findall(r"#define (FRAME_[A-Z_]+) (\d+)\b", text)})
    return found


def test_the_python_reader_and_frames_h_agree_on_every_number():
    c = _c_constants()
    for kind, name in _protocol.NAMES.items():
        assert c["FRAME_%s" % name] == kind, name
    codes = {"DRIVER_ERR_%s" % reason.upper(): code
             for code, reason in _protocol.ERROR_REASONS.items()}
    assert codes == {k: v for k, v in c.items() if k.startswith("DRIVER_ERR_")}
    assert {v: k for k, v in c.items() if k.startswith("COUNTER_ID_")}.keys() == \
        _protocol.COUNTERS.keys()
    guards = {k: v for k, v in c.items() if k.startswith("GUARD_") and v}
    assert sorted(guards.values()) == sorted(_protocol.GUARDS)
    for name, number in guards.items():  # GUARD_PAST_MESSAGE -> "past the message"
        assert _protocol.GUARDS[number] == name[6:].lower().replace("_", " the "), name
    assert (c["ACCESS_READ"], c["ACCESS_WRITE"]) == (1, 2)
    assert c["FRAME_PROTOCOL_VERSION"] == _protocol.PROTOCOL_VERSION
    assert c["FRAME_MAX_TEXT"] == _protocol.MAX_TEXT  # the fields: tests/test_frames_h.py
    request_h = (REPO / "csrc" / "driver" / "request.h").read_text()
    assert "#define MAX_REQUEST_BYTES %d " % _process.MAX_REQUEST_BYTES in request_h


@pytest.mark.parametrize(("argv", "words", "said"), [
    ([], None, "usage: ngcc-driver --request-fd FD"),
    (["hash", "--result-fd", "5"], None, "usage: ngcc-driver --request-fd FD"),
    (None, b"", "the request is empty or its last word lacks its NUL byte"),
    (None, b"hash\0--result-fd", "the request is empty or its last word lacks its NUL byte"),
    (None, b"x\0" * 20000, "the request is longer than 32768 bytes"),
    (None, b"x\0" * 300, "the request has more than 256 words"),
])
def test_the_driver_takes_its_request_over_a_descriptor_only(argv, words, said):
    """The mode and options never on the command line: anything but ``--request-fd FD``
    with a complete, bounded request is refused (exit 120, no channel to report on)."""
    fd = os.memfd_create("request")
    os.write(fd, words or b"")
    os.lseek(fd, 0, os.SEEK_SET)
    command = [str(_process.driver_path()), *(["--request-fd", str(fd)] if argv is None
                                               else argv)]
    done = subprocess.run(command, pass_fds=(fd,), capture_output=True, text=True, timeout=60)
    os.close(fd)
    assert done.returncode == 120 and done.stderr.startswith("ngcc-driver: " + said)


def test_a_request_too_long_or_with_a_nul_is_refused_before_any_run():
    inst = ngcc.instance("SM3")
    with pytest.raises(ValueError, match="more than its 32768"):
        _child.probe(inst, bits=tuple(range(8, 8 * 6000, 8)))
    with pytest.raises(ValueError, match="holds a NUL byte"):
        _process.run_driver(Conversation("hash", digest_bytes=32), ["--library", "a\0b"], 10)


def _frame(kind: int, payload: bytes = b"") -> bytes:
    return _protocol.HEADER.pack(kind, len(payload)) + payload


HELLO = _frame(_protocol.HELLO, _protocol.HELLO_LAYOUT.pack(1, 77))
LOADED = _frame(_protocol.LOADED)
END = _frame(_protocol.END)


def test_a_conversation_split_into_single_bytes_reads_the_same():
    data = HELLO + LOADED + _frame(_protocol.DIGEST, bytes(range(32))) + END
    whole, bytewise = Conversation("hash", digest_bytes=32), Conversation("hash", digest_bytes=32)
    whole.feed(data)
    for byte in data:
        bytewise.feed(bytes([byte]))
    assert whole.complete and bytewise.complete
    assert bytes(bytewise.frames[_protocol.DIGEST]) == bytes(range(32))
    assert bytewise.frames[_protocol.HELLO] == 77


@pytest.mark.parametrize(("data", "defect"), [
    (LOADED, "the first frame is LOADED, not HELLO"),
    (HELLO + _protocol.HEADER.pack(99, 4), "unknown frame type 99"),
    (HELLO + LOADED + _protocol.HEADER.pack(_protocol.DIGEST, 0xFFFFFFF0),
     "a DIGEST frame of 4294967280 bytes (expected 32)"),
    (HELLO + LOADED + _frame(_protocol.DIGEST, bytes(32)) * 2, "a second DIGEST frame"),
    (HELLO + _frame(_protocol.DIGEST, bytes(32)), "before the library was loaded"),
    (HELLO + LOADED + _frame(_protocol.COLD, bytes(16)), "a COLD frame in a hash run"),
    (HELLO + END + END, "a END frame after the END frame"),
    (HELLO + _frame(_protocol.ERROR, bytes(8) + b"x" * 1025), "an ERROR frame"),
    (HELLO + _frame(_protocol.ERROR, b"\x63" + bytes(7)), "unknown error code 99"),
    (_frame(_protocol.HELLO, _protocol.HELLO_LAYOUT.pack(2, 77)), "protocol version 2"),
])
def test_the_reader_refuses_what_the_request_cannot_produce(data, defect):
    conversation = Conversation("hash", digest_bytes=32)
    with pytest.raises(ProtocolError) as caught:
        conversation.feed(data)
    assert defect.replace("an ERROR frame", "a ERROR frame of 1033 bytes") in str(caught.value)


def test_cycles_must_be_exactly_calls_times_eight_bytes():
    conversation = Conversation("trial", digest_bytes=32, calls=10)
    conversation.feed(HELLO + LOADED + _frame(_protocol.TRIAL, bytes(_protocol.TRIAL_LAYOUT.size)))
    with pytest.raises(ProtocolError, match="a CYCLES frame of 72 bytes \\(expected 80\\)"):
        conversation.feed(_frame(_protocol.CYCLES, bytes(72)))


def test_kat_data_beyond_its_cap_is_refused():
    conversation = Conversation("kat", max_data_bytes=100)
    conversation.feed(HELLO + LOADED + _frame(_protocol.KAT_DATA, bytes(60)))
    with pytest.raises(ProtocolError, match="more than 100 bytes of KAT file"):
        conversation.feed(_frame(_protocol.KAT_DATA, bytes(60)))


def test_a_frame_cut_short_is_refused():
    conversation = Conversation("hash", digest_bytes=32)
    conversation.feed(HELLO + LOADED + _frame(_protocol.DIGEST, bytes(32))[:20])
    with pytest.raises(ProtocolError, match="closed inside a frame"):
        conversation.finish()


# -------------------------------------------------------------- what it measures

def test_the_driver_hashes_like_the_extension():
    for name in ("SM3", "WChain-V1-512", "Wish512"):
        inst = ngcc.instance(name)
        library = _core.Library(str(inst.library))
        for bits in (0, 1, 7, 8, 255, 256, 1000, 8 * 4097):
            data = os.urandom((bits + 7) // 8)
            assert _child.hash_in_child(inst, data, bits) == \
                library.hash(inst.digest_bits, data, bits), (name, bits)


def test_a_trial_reports_every_fact_in_true_units():
    cpu = _cpu()
    measured = _child.trial(ngcc.instance("SM3"), 64, 500, 3, cpu=cpu)
    calibration = _core.counter_calibrate()
    assert measured.counter == calibration["name"]
    assert measured.unit == {"rdtsc": "tsc-ticks", "cntvct_el0": "timer-ticks",
                             "clock_monotonic_raw": "ns"}[measured.counter]
    assert 0.5 < measured.frequency_hz / calibration["frequency_hz"] < 2
    assert measured.cycles.dtype == np.uint64 and measured.cycles.shape == (500,)
    assert measured.loop_ticks >= int(measured.cycles.sum())
    assert measured.cpu == cpu and measured.affinity_changed is False
    assert measured.batch_calls == 500 and measured.batch_ticks and measured.batch_ns
    # The thread's CPU time covers the loop only (not the whole process): on a virtual
    # machine its accounting may run a little ahead of the raw clock over a short loop.
    assert measured.thread_cpu_ns is not None
    assert measured.thread_cpu_ns <= measured.loop_ns * 1.1 + 1_000_000
    assert measured.voluntary_switches is not None and measured.involuntary_switches is not None
    assert measured.loop_ns + measured.batch_ns <= measured.parent_wall_ns
    assert 0 < measured.baseline_rss_kib <= measured.peak_rss_kib
    if measured.counter == "rdtsc":  # a dependency chain of known latency ran
        assert measured.core_cycles_per_tick is not None
        assert 0.2 < measured.core_cycles_per_tick < 10


def test_driver_and_extension_time_the_same_builtin_alike():
    # The same C loop, the same counter bracket: the fastest calls agree (a loose bound, no
    # speed). The minimum, not the median: the two runs come one after the other, and on a
    # loaded host a whole run's calls can be slowed, never its fastest below the truth.
    inst = ngcc.instance("SM3")
    in_driver = _child.trial(inst, 256, 2000, 3, cpu=_cpu(), batch_calls=0)
    cycles, _, _ = _core.Library(str(inst.library)).time_calls(256, ngcc.default_message(256),
                                                               2000, 3)
    ratio = float(np.min(in_driver.cycles)) / float(np.min(cycles))
    assert 0.5 < ratio < 2.0, ratio


@pytest.mark.skipif(SANITIZED, reason="the AddressSanitizer runtime alone takes more")
def test_a_trivial_library_runs_in_under_4_mib(libs):
    measured = _child.trial(libs["trivial"], 32, 100, 1, cpu=_cpu())
    assert measured.peak_rss_kib < 4096, measured.peak_rss_kib


def test_a_forced_preemption_shows_in_the_switches_and_the_cpu_share(libs):
    cpu = _cpu()
    rival = subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity(0, {%d})\n"
                              "while True: pass" % cpu])
    try:
        time.sleep(0.3)  # the rival is spinning on the trial's CPU
        measured = _child.trial(libs["busy"], 32, 20000, 0, cpu=cpu, batch_calls=0)
    finally:
        rival.kill()
        rival.wait()
    assert measured.involuntary_switches is not None and measured.involuntary_switches > 0
    assert measured.thread_cpu_ns is not None
    assert measured.thread_cpu_ns / measured.loop_ns < 0.9, measured


def test_a_cold_call_gives_seconds():
    t1 = _child.cold_call(ngcc.instance("SM3"), 32, cpu=_cpu())
    assert 0 < t1 < 1


# ------------------------------------------------------- what libraries may do

def _fails(function, *args, **kwargs) -> DriverError:
    with pytest.raises(DriverError) as caught:
        function(*args, **kwargs)
    return caught.value


def test_a_crash_is_a_crash_with_its_signal(libs):
    error = _fails(_child.trial, libs["crash"], 32, 10, 0, cpu=_cpu(), what="Crash at 32 B")
    assert error.status == "crash"
    assert error.message == ("Crash at 32 B crashed: the process died of SIGSEGV (raised by the "
                             "library)")


def test_a_hang_is_a_timeout_and_no_process_of_its_group_survives(libs):
    started = time.monotonic()
    error = _fails(_child.trial, libs["hang"], 32, 10, 0, cpu=_cpu(), timeout=2)
    assert error.status == "timeout" and "did not finish within 2 s" in error.message
    assert time.monotonic() - started < 20


STARTS_A_PROCESS = ("the library tried to start a process (fork, vfork or clone): no mode "
                    "allows one (ngcc-driver's seccomp filter refused it)")


@pytest.mark.parametrize("behaviour", ["fork_storm", "fork_then_hang", "spawns"])
def test_a_library_starting_processes_ends_at_the_first_with_one_line(libs, behaviour, sandbox):
    """The process limit (issue 45): root is exempt from RLIMIT_NPROC, so the driver's
    filter refuses every process a library starts (fork, or posix_spawn's clone)
    before it exists: a fork storm ends at its first fork, named."""
    started = time.monotonic()
    error = _fails(_child.trial, libs[behaviour], 32, 10, 0, cpu=_cpu(), timeout=60)
    assert time.monotonic() - started < 30  # not the deadline
    if behaviour == "spawns":  # posix_spawn blocks every signal: the kernel ends it
        assert (error.status, error.reason) == ("crash", "signal")
        assert "or to start one with its signals blocked" in error.detail
    else:
        assert (error.status, error.reason, error.detail) == ("error", "forked",
                                                              STARTS_A_PROCESS)
    assert "\n" not in error.message


def test_threads_are_no_processes(libs):
    assert _child.hash_in_child(libs["threads"], b"abc", 24) == b"a" * 32
    assert len(_child.trial(libs["threads"], 32, 10, 1, honesty=0,
                            expected_digest=_child.default_message(32)[:1] * 32).cycles) == 10


def test_a_nonzero_return_names_the_call(libs):
    error = _fails(_child.trial, libs["fails"], 21, 5, 1, cpu=_cpu())
    assert (error.status, error.reason, error.value) == ("error", "hash", 5)
    assert re.search(r"CryptHash of .*fails\.so returned 5 at warm-up call 0 of 1", error.detail)


def test_exit_inside_crypthash_is_named(libs):
    error = _fails(_child.hash_in_child, libs["exits"], b"abc", 24)
    assert error.status == "crash"
    assert error.detail == "the library ended the process (exit status 0) inside CryptHash"


def test_a_fork_that_keeps_the_pipe_open_is_reported_at_once(libs, tmp_path, monkeypatch):
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")  # (the pids file: outside the sandbox's view)
    pids = tmp_path / "pids"
    monkeypatch.setenv("NGCC_TEST_PIDS", str(pids))
    started = time.monotonic()
    error = _fails(_child.hash_in_child, libs["fork_keeps_pipe"], b"abc", 24, timeout=60)
    assert time.monotonic() - started < 10  # not the deadline
    assert (error.status, error.reason, error.detail) == ("error", "forked", STARTS_A_PROCESS)
    assert not pids.exists()  # no child: the fork was refused before one existed


@pytest.mark.parametrize("behaviour", ["garbage", "forged_digest", "forged_pickle"])
def test_writing_to_the_result_channel_is_a_protocol_error(libs, behaviour):
    error = _fails(_child.hash_in_child, libs[behaviour], b"abc", 24, what="Forger hashing")
    assert error.status == "protocol"
    assert error.message.startswith("Forger hashing: the result channel broke the protocol: ")
    assert not libs["marker"].exists()  # type: ignore[attr-defined]
    with pytest.raises(InstanceProtocolError):
        ngcc.hash(libs[behaviour], b"abc")


def test_a_forged_digest_is_refused_by_name(libs):
    error = _fails(_child.hash_in_child, libs["forged_digest"], b"abc", 24)
    assert "a second DIGEST frame" in error.message


def test_a_trial_names_the_guard_page_of_the_digest_a_library_wrote_past(libs):
    error = _fails(_child.trial, libs["digest_over"], 32, 10, 0, cpu=_cpu())
    assert (error.status, error.reason) == ("crash", "wrote past the digest")
    assert "the library wrote past the digest (SIGSEGV in the guard page" in error.message


@pytest.mark.parametrize("behaviour", ["over1", "over64", "aligned"])
def test_a_timed_message_lies_where_the_harness_puts_it(libs, behaviour):
    """A trial's and a cold call's message lie on the heap, 64-byte aligned with 64
    bytes after it, as the harness's calloc'd buffer (issue 40): reading up to 64 bytes
    past it is no fault there, and the record says where it lay. The KAT check and the
    probe keep the guard page, which catches the same library (the next tests)."""
    first_byte = _child.default_message(32)[0]  # the fixtures' digest: the first byte, repeated
    measured = _child.trial(libs[behaviour], 32, 10, 0, cpu=_cpu(), honesty=0,
                            expected_digest=bytes([first_byte]) * 32)  # (no hash run)
    assert len(measured.cycles) == 10 and measured.placement == "heap"
    assert _child.cold_call(libs[behaviour], 32) > 0
    if behaviour == "aligned":  # ... where a hash run's message ends at a guard page
        assert _fails(_child.hash_in_child, libs[behaviour], b"abc", 24).status == "error"
    else:
        assert _fails(_child.hash_in_child, libs[behaviour], b"abc", 24).reason == \
            "read past the message"


@pytest.mark.parametrize("behaviour", ["over1", "over64"])
def test_the_kat_gate_gives_crash_read_past_the_message(libs, tmp_path, behaviour):
    [result] = ngcc.kat.check(libs[behaviour], files="2_12", out_dir=tmp_path, progress=False)
    assert result.verdict == "CRASH"
    assert "read past the message" in result.files[0].detail
    assert "read past the message" in result.log.read_text()
    assert not list(tmp_path.rglob("*.txt*"))


def test_the_guard_probe_catches_a_read_before_the_message(libs, tmp_path):
    [result] = ngcc.kat.check(libs["under1"], files="2_12", out_dir=tmp_path, progress=False)
    assert result.probe is not None and result.probe.verdict == "CRASH"
    assert "read before the message" in result.probe.detail
    assert result.verdict == "CRASH"
    assert "PROBE guard pages CRASH" in result.log.read_text()


def test_a_library_that_changes_its_affinity_is_flagged(libs):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: there is no other affinity to change to")
    measured = _child.trial(libs["affinity"], 32, 10, 0, cpu=_cpu())
    assert measured.affinity_changed is True


@pytest.mark.skipif(SANITIZED, reason="RLIMIT_AS cannot be enforced under AddressSanitizer")
def test_20_gib_under_a_memory_limit_is_a_clean_error(libs):
    error = _fails(_child.trial, libs["allocates"], 32, 10, 0, cpu=_cpu(),
                   memory_limit=1 << 30)
    assert error.status == "crash"
    assert ("SIGSEGV (invalid memory access at 0x0); it ran under a memory limit of 1024 MiB"
            in error.message)
    error = _fails(_child.trial, libs["trivial"], 32, 1 << 26, 0, cpu=_cpu(),
                   memory_limit=64 << 20)  # the driver's own 512 MiB of cycles
    assert (error.status, error.reason) == ("error", "memory")
    assert "cannot allocate the cycles of 67108864 calls" in error.detail


def test_the_api_maps_driver_failures_to_documented_errors(libs):
    with pytest.raises(HashError, match=r"^fails: CryptHash of .* returned 5 at timed call"):
        ngcc.time_calls(libs["fails"], 21, 3, warmup=0)
    with pytest.raises(InstanceCrashError, match="read past the message"):
        ngcc.hash(libs["over1"], b"abc")
    with pytest.raises(InstanceCrashError, match="wrote past the digest"):
        ngcc.hash(libs["digest_over"], b"abc")


@pytest.mark.parametrize("bits", [2**63, 2**64 + 5])
def test_huge_bit_counts_are_value_errors(libs, bits):
    for inst in ("SM3", libs["trivial"]):
        with pytest.raises(ValueError, match="is longer than the data"):
            ngcc.hash(inst, b"abc", bits)


def test_the_driver_refuses_a_bad_request_by_name(libs):
    conversation = Conversation("hash", digest_bytes=32)
    run = _process.run_driver(conversation, ["--library", str(libs["trivial"].library),
                                             "--digest-bits", "256", "--bits", str(2**64)], 30)
    with pytest.raises(DriverError) as caught:
        _ending.judge(run, "a request")
    assert (caught.value.status, caught.value.reason) == ("error", "request")
    assert 'bad value for --bits: "18446744073709551616"' in caught.value.detail


def test_timeouts_must_be_positive_numbers(libs):
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="positive number of seconds"):
            _child.hash_in_child(libs["trivial"], b"abc", 24, timeout=bad)
        with pytest.raises(ValueError, match="positive number of seconds"):
            ngcc.kat.check("SM3", timeout=bad, progress=False)


def _forged_trial_error(tmp_path, monkeypatch, **facts: float) -> DriverError:
    """The error of a one-call trial at 32 B whose driver (a fake) sends a TRIAL frame of
    ``facts`` (every other field 0) and one call of 1000 ticks."""
    fields = {name: 0 for name, _ in _protocol.TRIAL_FIELDS}
    fields.update(cpu=0, calls=1, batch_calls=0, baseline_rss_kib=1, peak_rss_kib=1, **facts)
    values = [fields[name] for name, _ in _protocol.TRIAL_FIELDS]
    body = textwrap.dedent("""
        frame(1, struct.pack('<II', 1, pid)); frame(2)
        facts = %r
        facts[0] = pid
        frame(7, struct.pack(%r, *facts)); frame(8, struct.pack('<Q', 1000))
        frame(16, bytes(64)); frame(13)
    """) % (values, _protocol.TRIAL_LAYOUT.format)
    monkeypatch.setattr(_process, "DRIVER", fake_driver(tmp_path, body))
    return _fails(_child.trial, ngcc.instance("SM3"), 32, 1, 0, cpu=0, batch_calls=0)


def test_a_fake_driver_that_claims_more_time_than_it_took_is_caught(tmp_path, monkeypatch):
    # A TRIAL frame whose loops took an hour, from a child that ran a fraction of a second.
    error = _forged_trial_error(tmp_path, monkeypatch, counter_id=1, frequency_hz=2e9,
                                loop_ticks=10**13, loop_ns=3_600 * 10**9)
    assert error.status == "protocol"
    assert "3600000000000 ns of timed loops in a child that ran" in error.message


@pytest.mark.parametrize(("counter_id", "frequency_hz", "loop_ticks", "defect"), [
    (3, 1e9, 3_600 * 10**9, "3600000000000 ticks of timed loops (3428571428571 ns at least, "
                             "on clock_monotonic_raw) in a child that ran"),
    (4, 2e9, 10**14, "100000000000000 ticks of timed loops (10000000000000 ns at least, on "
                     "perf_cycles_rdpmc) in a child that ran"),
    (4, 3e10, 1000, "a perf_cycles_rdpmc counter of 3e+10 Hz"),
    (3, 2e8, 1000, "a clock_monotonic_raw counter of 2e+08 Hz"),
    (2 if platform.machine() == "x86_64" else 1, 2e9, 1000, "counter, which this host has "
                                                             "not"),  # forged, not emulated
    (5, 2e9, 1000, "a perf_cycles_read counter, where tsc was asked for"),
])
def test_a_trial_on_another_counter_is_held_to_that_counters_rates(
        tmp_path, monkeypatch, counter_id, frequency_hz, loop_ticks, defect):
    # --counter clock|perf: not the parent's own counter, so not its floor and rate, but
    # nanoseconds, or core cycles of a core slower than 10 GHz, within the child's time.
    error = _forged_trial_error(tmp_path, monkeypatch, counter_id=counter_id,
                                frequency_hz=frequency_hz, loop_ticks=loop_ticks, loop_ns=1000,
                                overhead_min_ticks=1, overhead_median_ticks=1)
    assert error.status == "protocol"
    assert defect in error.message, error.message


def test_a_kat_write_error_is_the_parents_clean_error_with_the_errno(tmp_path):
    script = textwrap.dedent("""
        import resource, signal, sys
        import ngcc.kat
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))  # KAT_2_12: 1.8 MB
        [result] = ngcc.kat.check("SM3", files="2_12", out_dir=sys.argv[1], progress=False)
        print(result.verdict, result.files[0].detail)
    """)
    child = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                           text=True, timeout=300, check=False, cwd=tmp_path)
    assert child.returncode == 0, child.stderr
    verdict, detail = child.stdout.strip().split(" ", 1)
    assert verdict == "ERROR"
    assert detail.startswith("OSError: writing ") and detail.endswith("failed: File too large")
    assert not list(tmp_path.rglob("*.part"))


def test_exit_in_a_constructor_is_named_as_such(tmp_path):
    source = TEMPLATE.replace("BODY", "") + (
        "__attribute__((constructor)) static void leave(void) { _exit(3); }\n")
    inst = ngcc.instance(build_library(tmp_path, "leaves", source))
    error = _fails(_child.cold_call, inst, 32)
    assert error.detail == ("the library ended the process (exit status 3) while it was being "
                            "loaded")


def test_a_cpu_without_the_librarys_features_is_refused_before_loading(libs):
    import dataclasses

    needy = dataclasses.replace(libs["crash"], cpu_features=("sse2", "no_such_feature"))
    error = _fails(_child.hash_in_child, needy, b"abc", 24)
    assert (error.status, error.reason) == ("error", "feature")
    assert error.detail == ("the library needs CPU features this CPU lacks: no_such_feature "
                            "(it would die of SIGILL)")


def test_the_driver_runner_names_instance_length_and_trial(libs):
    from ngcc.base.errors import ChildError
    from ngcc.evidence.model import TrialMeasurement

    runner = _child.DriverRunner(memory_limit=None if SANITIZED else 1 << 30)
    assert 0 < runner.cold_call(libs["trivial"], 32, _cpu(), 60) < 1
    measured = runner.trial(ngcc.instance("SM3"), 32, 10, 1, _cpu(), 3, 60)
    assert isinstance(measured, TrialMeasurement) and measured.cycles.shape == (10,)
    with pytest.raises(ChildError, match=r"^crash at 64 B \(trial 3\) crashed: "):
        runner.trial(libs["crash"], 64, 10, 0, _cpu(), 3, 60)


def test_without_pidfd_the_runner_polls_for_the_exit(libs, monkeypatch):
    monkeypatch.setattr(_process, "_pidfd", lambda pid: None)
    assert _child.hash_in_child(libs["trivial"], b"abc", 24) == b"a" * 32
    error = _fails(_child.hash_in_child, libs["hang"], b"abc", 24, timeout=1)
    assert error.status == "timeout"
    error = _fails(_child.hash_in_child, libs["fork_keeps_pipe"], b"abc", 24, timeout=30)
    assert error.reason == "forked"


def test_a_forked_copy_that_crashes_sends_no_crash_frame(libs):
    # The copy inherits the fault handler and the channel; only the driver reports.
    error = _fails(_child.hash_in_child, libs["fork_copy_crashes"], b"abc", 24)
    assert (error.status, error.reason) == ("error", "forked")


# ------------------------------------------------- the counter: resolution, choice

def test_the_counter_resolution_is_recorded_and_divides_every_reading():
    """The smallest step the counter moves in, measured in the trial's own process, is
    the gcd of its per-call readings (26 ticks on a KVM guest whose TSC is scaled)."""
    measured = _child.trial(ngcc.instance("SM3"), 256, 3000, 3, cpu=_cpu())
    resolution = measured.counter_resolution_ticks
    assert resolution is not None and resolution >= 1
    assert int(np.gcd.reduce(measured.cycles.astype(np.int64))) == resolution
    # and the orchestrator's own calibration measures it the same way
    assert ngcc.counter_info().resolution >= 1
    # the batch ran as sub-batches (up to 16, of 1 ms or more): the least CPU time per
    # call is one of theirs, at most the whole batch's
    calls, cpu_ns = measured.batch_min_calls, measured.batch_min_cpu_ns
    assert calls is not None and 3000 // 16 <= calls <= 3000 and cpu_ns is not None
    assert measured.batch_thread_cpu_ns is not None
    assert cpu_ns / calls <= measured.batch_thread_cpu_ns / 3000 * 1.001


def test_counter_auto_falls_back_to_the_tsc_where_perf_cannot_be_read_per_call():
    native = _child.trial(ngcc.instance("SM3"), 64, 200, 1, cpu=_cpu())
    try:
        perf = _child.trial(ngcc.instance("SM3"), 64, 200, 1, cpu=_cpu(), counter="perf")
    except DriverError as error:  # no PMU here: perf fails with its reason, auto falls back
        assert error.reason == "counter" and "perf_event_open" in error.message, error
        perf = None
    auto = _child.trial(ngcc.instance("SM3"), 64, 200, 1, cpu=_cpu(), counter="auto")
    if perf is None or perf.counter == "perf_cycles_read":
        assert (auto.counter, auto.unit) == (native.counter, native.unit)
    else:
        assert (auto.counter, auto.unit) == ("perf_cycles_rdpmc", "core-cycles")


def test_counter_clock_and_tsc_and_an_unknown_name():
    clock = _child.trial(ngcc.instance("SM3"), 64, 200, 1, cpu=_cpu(), counter="clock")
    assert (clock.counter, clock.unit) == ("clock_monotonic_raw", "ns")
    assert 0.5e9 < clock.frequency_hz < 2e9  # a clock of nanoseconds ticks 10⁹ times a second
    tsc = _child.trial(ngcc.instance("SM3"), 64, 200, 1, cpu=_cpu(), counter="tsc")
    assert tsc.counter == _child.trial(ngcc.instance("SM3"), 64, 50, 1, cpu=_cpu()).counter
    error = _fails(_child.trial, ngcc.instance("SM3"), 64, 10, 0, cpu=_cpu(), counter="cycles")
    assert error.reason == "counter" and "unknown counter" in error.message


def test_the_perf_counter_counts_core_cycles_where_the_kernel_has_a_pmu():
    try:
        perf = _child.trial(ngcc.instance("SM3"), 1024, 2000, 3, cpu=_cpu(), counter="perf")
    except DriverError as error:
        if "no hardware PMU" in error.message or "No such file" in error.message:
            pytest.skip("this kernel has no PMU for perf_event_open (%s): the perf counter "
                        "cannot run here" % error.detail)
        raise
    assert perf.counter in ("perf_cycles_rdpmc", "perf_cycles_read")
    assert perf.unit == "core-cycles"
    # SM3 at 1 KiB takes thousands of core cycles a call on any core, and no core
    # counts more than 10 GHz × the loop's wall time
    assert float(np.median(perf.cycles)) > 1000
    assert int(perf.cycles.sum(dtype=np.uint64)) <= 10e9 * perf.loop_ns / 1e9
    assert perf.core_cycles_per_tick is not None and 0.5 < perf.core_cycles_per_tick < 2
