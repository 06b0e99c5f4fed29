"""ngcc.counter_info, ngcc.time_calls, ngcc.default_message and TimingResult.

Nothing here asserts a speed: only shapes, invariants and error paths.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from _testlib import FAILING_SOURCE, NO_ENTRY_SOURCE, build_library

import ngcc
import ngcc.driver.timing
from ngcc import _core
from ngcc.base.errors import HashError, LibraryError, UnknownInstanceError


@pytest.fixture()
def failing(tmp_path) -> str:
    """Path of a fresh failing library (its call count starts at zero)."""
    return str(build_library(tmp_path, "Failing", FAILING_SOURCE))


# ------------------------------------------------------------------------- counter_info

def test_counter_info_is_calibrated_once_per_process():
    first = ngcc.counter_info()
    assert ngcc.counter_info() is first
    assert first.frequency_hz > 1e6
    assert first.overhead_min <= first.overhead_median


def test_counter_info_fresh_measures_again():
    cached = ngcc.counter_info()
    fresh = ngcc.counter_info(fresh=True)
    assert fresh is not cached
    assert fresh.name == cached.name
    assert ngcc.counter_info() is fresh


def test_counter_info_is_frozen_and_converts_ticks_to_seconds():
    info = ngcc.CounterInfo("rdtsc", 2e9, 20, 40)
    assert info.seconds(4e9) == 2.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.name = "other"  # type: ignore[misc]


# ----------------------------------------------------------------------- default_message

def test_default_message_follows_the_harness_convention():
    for size in (0, 1, 32, 255, 256, 257, 1000):
        expected = bytes((i * 131 + size) % 256 for i in range(size))
        assert ngcc.default_message(size) == expected


def test_default_message_first_bytes_of_32_bytes():
    assert ngcc.default_message(32)[:4] == bytes([32, 163, 38, 169])


@pytest.mark.parametrize("size", [-1, 2**40, 10**18])
def test_default_message_refuses_sizes_out_of_range(size):
    with pytest.raises(ValueError, match="message_bytes must be between 0 and"):
        ngcc.default_message(size)


# --------------------------------------------------------------------------- time_calls

def test_time_calls_result_holds_what_was_asked_and_measured():
    result = ngcc.time_calls("SM3", 64, 50, warmup=2)
    assert result.instance == ngcc.instance("SM3")
    assert (result.message_bytes, result.calls, result.warmup) == (64, 50, 2)
    assert result.cycles.dtype == np.uint64 and result.cycles.shape == (50,)
    assert result.total_cycles >= int(result.cycles.sum())
    assert result.total_seconds > 0
    assert result.counter is ngcc.counter_info()
    assert result.overhead == result.counter.overhead_min


def test_time_calls_result_properties_agree_with_the_cycles():
    result = ngcc.time_calls("SM3", 128, 40)
    assert result.mean_cycles == pytest.approx(float(result.cycles.mean()))
    assert result.loop_mean_cycles == pytest.approx(result.total_cycles / 40)
    assert result.batch_mean_cycles == result.loop_mean_cycles  # the old name
    assert result.median_cycles == pytest.approx(float(np.median(result.cycles)))
    assert result.min_cycles == int(result.cycles.min())
    assert result.cycles_per_byte == pytest.approx(result.mean_cycles / 128)
    assert result.seconds_per_call == pytest.approx(result.total_seconds / 40)
    assert result.loop_frequency_hz == pytest.approx(result.total_cycles / result.total_seconds)


def test_time_calls_result_cannot_be_changed():
    result = ngcc.time_calls("SM3", 32, 5)
    with pytest.raises(ValueError, match="read-only"):
        result.cycles[0] = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.calls = 6  # type: ignore[misc]


def test_time_calls_on_an_empty_message_has_no_cycles_per_byte():
    result = ngcc.time_calls("SM3", 0, 3)
    assert math.isnan(result.cycles_per_byte)
    assert len(result.cycles) == 3


def test_time_calls_accepts_numpy_integers():
    assert ngcc.time_calls("SM3", np.int64(16), np.int32(4)).calls == 4


def test_time_calls_hashes_the_default_message(failing):
    # The failing library refuses messages whose first byte is 0xEE; the default
    # message of 238 (0xEE) bytes starts with that byte, and of 239 bytes does not.
    with pytest.raises(HashError, match="returned 7 at warm-up call 0"):
        ngcc.time_calls(failing, 238, 1)
    assert ngcc.time_calls(failing, 239, 1).calls == 1


def test_time_calls_hashes_the_given_message(failing):
    assert ngcc.time_calls(failing, 238, 1, message=bytes(238)).calls == 1
    with pytest.raises(HashError, match="returned 7"):
        ngcc.time_calls(failing, 5, 1, message=b"\xee\x00\x00\x00\x00")


@pytest.mark.parametrize("message", [b"\x00" * 16, bytearray(16), memoryview(bytes(16)),
                                     np.zeros(16, dtype=np.uint8), np.zeros(4, dtype=np.uint32)])
def test_time_calls_accepts_any_buffer_of_the_right_length(message):
    assert ngcc.time_calls("SM3", 16, 2, message=message).message_bytes == 16


def test_time_calls_refuses_a_message_of_another_length():
    with pytest.raises(ValueError, match="message holds 15 bytes but message_bytes is 16"):
        ngcc.time_calls("SM3", 16, 1, message=bytes(15))


def test_time_calls_refuses_a_message_that_is_not_a_buffer():
    with pytest.raises(TypeError, match="message must be a bytes-like object"):
        ngcc.time_calls("SM3", 3, 1, message="abc")


def test_time_calls_refuses_a_non_contiguous_message():
    with pytest.raises(ValueError, match="contiguous"):
        ngcc.time_calls("SM3", 8, 1, message=np.zeros(16, dtype=np.uint8)[::2])


@pytest.mark.parametrize("message_bytes", [-1, ngcc.driver.timing.MAX_MESSAGE_BYTES + 1, 10**15])
def test_time_calls_refuses_message_bytes_out_of_range_before_allocating(message_bytes):
    with pytest.raises(ValueError, match="message_bytes must be between 0 and 1073741824"):
        ngcc.time_calls("SM3", message_bytes, 1)


@pytest.mark.parametrize("calls", [0, -5, _core.MAX_CALLS + 1])
def test_time_calls_refuses_calls_out_of_range(calls):
    with pytest.raises(ValueError, match="calls must be between 1 and"):
        ngcc.time_calls("SM3", 32, calls)


def test_time_calls_refuses_a_negative_warmup():
    with pytest.raises(ValueError, match="warmup must be between 0 and"):
        ngcc.time_calls("SM3", 32, 1, warmup=-1)


@pytest.mark.parametrize(("field", "value"), [("message_bytes", "32"), ("message_bytes", 32.0),
                                              ("calls", True), ("warmup", None)])
def test_time_calls_refuses_counts_that_are_not_ints(field, value):
    args = {"message_bytes": 32, "calls": 1, "warmup": 0, field: value}
    with pytest.raises(TypeError, match="%s must be an int" % field):
        ngcc.time_calls("SM3", args["message_bytes"], args["calls"], warmup=args["warmup"])


def test_time_calls_refuses_an_unknown_instance():
    with pytest.raises(UnknownInstanceError, match="SM3"):  # the close match is offered
        ngcc.time_calls("SM4", 32, 1)


def test_time_calls_error_names_the_instance_and_the_call(failing):
    with pytest.raises(HashError, match=r"^Failing: CryptHash of .* returned 5 at timed call 6 "
                                        r"of 20 "):
        ngcc.time_calls(failing, 21, 20, warmup=3)


def test_time_calls_refuses_a_library_without_crypthash_by_name(tmp_path):
    path = build_library(tmp_path, "NoEntry", NO_ENTRY_SOURCE)
    with pytest.raises(LibraryError, match=r"NoEntry\.so is not an ICCS instance library"):
        ngcc.time_calls(str(path), 32, 1)
