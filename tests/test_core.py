"""ngcc._core directly: the counter, Library.time_calls, and the C side's own checks."""

from __future__ import annotations

import re
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from _testlib import FAILING_SOURCE, MARKING_SOURCE, NO_ENTRY_SOURCE, build_library

import ngcc
from ngcc import _core
from ngcc.base.errors import HashError, LibraryError


@pytest.fixture(scope="module")
def sm3() -> _core.Library:
    return _core.Library(str(ngcc.instance("SM3").library))


@pytest.fixture()
def failing(tmp_path) -> _core.Library:
    """A fresh copy of the failing library (its call count starts at zero)."""
    return _core.Library(str(build_library(tmp_path, "Failing", FAILING_SOURCE)))


# ------------------------------------------------------------------------------ counter

def test_counter_calibrate_reports_a_named_counter_with_sane_figures():
    calibration = _core.counter_calibrate()
    assert set(calibration) == {"name", "unit", "nominal_hz", "frequency_hz", "overhead_min",
                                "overhead_median", "resolution"}
    assert 1 <= calibration["resolution"] <= max(calibration["overhead_median"], 1)
    assert (calibration["name"], calibration["unit"]) in (
        ("rdtsc", "tsc-ticks"), ("cntvct_el0", "timer-ticks"), ("clock_monotonic_raw", "ns"))
    assert calibration["frequency_hz"] > 1e6  # every supported counter ticks at >= 1 MHz
    if calibration["name"] == "cntvct_el0":  # the generic timer ticks at cntfrq_el0's rate
        assert calibration["nominal_hz"] == pytest.approx(calibration["frequency_hz"], rel=0.05)
    else:
        assert calibration["nominal_hz"] == 0.0
    assert 0 <= calibration["overhead_min"] <= calibration["overhead_median"]


def test_counter_read_never_goes_back():
    readings = [_core.counter_read() for _ in range(1000)]
    assert readings == sorted(readings)


def test_counter_frequency_agrees_with_the_raw_clock():
    # Unit check, not a speed check: a ticks-vs-ns mix-up would be off by >= 1000x.
    frequency = _core.counter_calibrate()["frequency_hz"]
    ns0, ticks0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW), _core.counter_read()
    time.sleep(0.1)
    ns1, ticks1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW), _core.counter_read()
    observed = (ticks1 - ticks0) / ((ns1 - ns0) / 1e9)
    assert 0.5 < observed / frequency < 2.0


# --------------------------------------------------------------------------- time_calls

def test_time_calls_returns_one_uint64_per_call_and_the_batch_totals(sm3):
    cycles, total_ticks, total_ns = sm3.time_calls(256, bytes(64), 200, 3)
    assert isinstance(cycles, np.ndarray)
    assert cycles.dtype == np.uint64 and cycles.shape == (200,)
    assert (cycles > 0).all()
    # The batch span holds every timed region, one after the other.
    assert total_ticks >= int(cycles.sum())
    assert total_ns > 0


def test_time_calls_accepts_any_contiguous_buffer(sm3):
    for message in (b"\x01" * 40, bytearray(40), memoryview(bytes(40)),
                    np.zeros(40, dtype=np.uint8)):
        cycles, _, _ = sm3.time_calls(256, message, 5)
        assert len(cycles) == 5


def test_time_calls_hashes_an_empty_message(sm3):
    cycles, _, _ = sm3.time_calls(256, b"", 3)
    assert len(cycles) == 3


@pytest.mark.parametrize("calls", [0, -1, _core.MAX_CALLS + 1])
def test_time_calls_refuses_a_call_count_out_of_range(sm3, calls):
    with pytest.raises(ValueError, match="calls must be between 1 and"):
        sm3.time_calls(256, b"abc", calls)


def test_time_calls_refuses_a_negative_warmup(sm3):
    with pytest.raises(ValueError, match="warmup must be between 0 and"):
        sm3.time_calls(256, b"abc", 1, -1)


def test_time_calls_refuses_a_bad_digest_length(sm3):
    with pytest.raises(ValueError, match="digest_bits must be a positive multiple of 8"):
        sm3.time_calls(255, b"abc", 1)


def test_time_calls_refuses_data_that_is_not_a_buffer(sm3):
    with pytest.raises(TypeError):
        sm3.time_calls(256, "abc", 1)


def test_time_calls_names_the_timed_call_that_failed(failing):
    # Three warm-up calls, so the library's 10th call is timed call 6.
    with pytest.raises(HashError, match=r"returned 5 at timed call 6 of 20 "):
        failing.time_calls(256, bytes(21), 20, 3)


def test_time_calls_names_the_warmup_call_that_failed(failing):
    with pytest.raises(HashError, match=r"Failing\.so returned 3 at warm-up call 0 of 2 "):
        failing.time_calls(256, bytes(13), 5, 2)


def test_time_calls_without_warmup_fails_on_timed_call_zero(failing):
    with pytest.raises(HashError, match="returned 3 at timed call 0 of 5"):
        failing.time_calls(256, bytes(13), 5, 0)


def test_time_calls_lets_other_threads_run_during_the_loop(tmp_path, monkeypatch):
    # The library keeps a marker file for 0.5 s inside each call. This thread can
    # only see it if the timing thread let go of the GIL while calling.
    marker = tmp_path / "inside-crypthash"
    monkeypatch.setenv("NGCC_TEST_MARKER", str(marker))
    library = _core.Library(str(build_library(tmp_path, "Marking", MARKING_SOURCE)))
    timing = threading.Thread(target=library.time_calls, args=(256, b"abc", 1, 0))
    timing.start()
    seen = False
    while timing.is_alive() and not seen:
        seen = marker.exists()
        time.sleep(0.001)
    timing.join()
    assert seen


def test_a_library_in_use_cannot_be_reopened(tmp_path, monkeypatch):
    # Reopening dlcloses the library: under a running CryptHash that would crash.
    marker = tmp_path / "inside-crypthash"
    monkeypatch.setenv("NGCC_TEST_MARKER", str(marker))
    path = str(build_library(tmp_path, "Marking", MARKING_SOURCE))
    library = _core.Library(path)
    timing = threading.Thread(target=library.time_calls, args=(256, b"abc", 1, 0))
    timing.start()
    while timing.is_alive() and not marker.exists():
        time.sleep(0.001)
    with pytest.raises(RuntimeError, match="in use by a running call"):
        library.__init__(path)
    timing.join()
    library.__init__(path)  # idle again: reopening is fine


def test_the_kat_progress_callback_cannot_reopen_its_library(sm3, tmp_path):
    refused = []

    def progress(done, total):
        if not refused:
            with pytest.raises(RuntimeError, match="in use by a running call"):
                sm3.__init__(sm3.path)
            refused.append(done)

    _core.kat_generate(sm3, "SM3", 256, "2_12", str(tmp_path / "kat.txt"), progress=progress)
    assert refused
    assert sm3.hash(256, b"abc", 24).hex().startswith("66c7f0f4")


# ----------------------------------------------------------------------------- Library

def test_library_without_crypthash_is_refused_by_name(tmp_path):
    path = build_library(tmp_path, "NoEntry", NO_ENTRY_SOURCE, sidecar=False)
    with pytest.raises(LibraryError, match=r"NoEntry\.so is not an ICCS instance library"):
        _core.Library(str(path))


def test_a_file_that_is_not_a_library_is_refused_by_name(tmp_path):
    path = tmp_path / "notes.so"
    path.write_text("not an ELF file")
    with pytest.raises(LibraryError, match=r"cannot load instance library .*notes\.so"):
        _core.Library(str(path))


def test_library_hash_names_the_file_on_a_nonzero_return(failing):
    with pytest.raises(HashError, match=r"Failing\.so returned 3"):
        failing.hash(256, bytes(13), 104)


def test_library_reports_its_path(sm3):
    assert sm3.path == str(ngcc.instance("SM3").library)


# ------------------------------------------------------------- buffers released on every path

def _assert_buffer_released(message: bytearray) -> None:
    """A bytearray cannot be resized while C still holds its buffer (BufferError)."""
    message.append(0)
    message.pop()


def test_time_calls_releases_the_message_on_every_path(sm3, failing):
    message = bytearray(13)
    sm3.time_calls(256, message, 2)
    _assert_buffer_released(message)
    for bad in (lambda: sm3.time_calls(255, message, 1),        # bad digest_bits
                lambda: sm3.time_calls(256, message, 0),        # bad calls
                lambda: failing.time_calls(256, message, 1)):   # CryptHash fails
        with pytest.raises((ValueError, HashError)):
            bad()
        _assert_buffer_released(message)


def test_library_hash_releases_the_data_on_every_path(sm3, failing):
    data = bytearray(13)
    sm3.hash(256, data, 104)
    _assert_buffer_released(data)
    for bad in (lambda: sm3.hash(256, data, 105), lambda: failing.hash(256, data, 104)):
        with pytest.raises((ValueError, HashError)):
            bad()
        _assert_buffer_released(data)


def test_a_failing_time_calls_frees_its_cycles_array(failing):
    def failing_runs(count: int) -> None:
        for _ in range(count):
            with pytest.raises(HashError):
                failing.time_calls(256, bytes(13), 100_000, 0)

    tracemalloc.start()
    try:
        failing_runs(3)
        before = tracemalloc.get_traced_memory()[0]
        failing_runs(50)  # a leak would keep 50 x 800 kB
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 4_000_000


def test_the_stubs_name_every_binding():
    stub = (Path(_core.__file__).parent / "_core.pyi").read_text()
    public = [name for name in dir(_core) if not name.startswith("__")]
    assert [name for name in public if not re.search(r"\b%s\b" % name, stub)] == []
    for method in ("hash", "time_calls", "path"):
        assert "def %s(" % method in stub
