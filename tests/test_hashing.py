"""ngcc.hash: buffers without a copy, the bit length, and every way to call it wrongly."""

from __future__ import annotations

import numpy as np
import pytest
from _testlib import FAILING_SOURCE, NO_ENTRY_SOURCE, build_library

import ngcc
from ngcc.base.errors import HashError, LibraryError, UnknownInstanceError

ABC_SM3 = "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"


@pytest.mark.parametrize("data", [b"abc", bytearray(b"abc"), memoryview(b"xabcx")[1:4],
                                  np.frombuffer(b"abc", dtype=np.uint8)])
def test_hash_takes_any_buffer(data):
    assert ngcc.hash("SM3", data).hex() == ABC_SM3


def test_hash_bits_default_to_the_whole_buffer():
    assert ngcc.hash("SM3", b"abcd", 24) == ngcc.hash("SM3", b"abc")
    assert ngcc.hash("SM3", b"abc", 24) == ngcc.hash("SM3", b"abc")


def test_hash_accepts_an_instance_object_and_any_case():
    assert ngcc.hash(ngcc.instance("SM3"), b"abc") == ngcc.hash("sm3", b"abc")


def test_hash_digest_length_is_the_instance_s():
    for inst in ngcc.instances():
        assert len(ngcc.hash(inst, b"")) == inst.digest_bits // 8, inst.name


def test_hash_refuses_negative_bits():
    with pytest.raises(ValueError, match="bits must be >= 0, got -1"):
        ngcc.hash("SM3", b"abc", -1)


def test_hash_refuses_bits_beyond_the_buffer():
    with pytest.raises(ValueError, match="bits=25 is longer than the data: 3 bytes"):
        ngcc.hash("SM3", b"abc", 25)


@pytest.mark.parametrize("data", ["abc", 123, None, [1, 2, 3]])
def test_hash_refuses_data_that_is_not_a_buffer(data):
    with pytest.raises(TypeError, match="data must be a bytes-like object"):
        ngcc.hash("SM3", data)


@pytest.mark.parametrize("bits", ["24", 24.0, True])
def test_hash_refuses_bits_that_are_not_an_int(bits):
    with pytest.raises(TypeError, match="bits must be an int"):
        ngcc.hash("SM3", b"abc", bits)


def test_hash_refuses_an_unknown_instance():
    with pytest.raises(UnknownInstanceError, match="unknown instance 'NoSuchHash'"):
        ngcc.hash("NoSuchHash", b"abc")


def test_hash_error_names_the_instance_that_returned_nonzero(tmp_path):
    path = build_library(tmp_path, "Failing", FAILING_SOURCE)
    with pytest.raises(HashError, match=r"^Failing: CryptHash of .*Failing\.so returned 3"):
        ngcc.hash(str(path), bytes(13))


def test_hash_through_an_external_library_returns_its_digest(tmp_path):
    path = build_library(tmp_path, "Failing", FAILING_SOURCE, digest_bits=128)
    assert ngcc.hash(str(path), b"ok") == b"\xab" * 16


def test_hash_refuses_a_library_without_crypthash_by_name(tmp_path):
    path = build_library(tmp_path, "NoEntry", NO_ENTRY_SOURCE)
    with pytest.raises(LibraryError, match=r"NoEntry\.so is not an ICCS instance library"):
        ngcc.hash(str(path), b"abc")


def test_hash_refuses_a_file_that_is_not_a_library(tmp_path):
    path = tmp_path / "fake.so"
    path.write_text("this is text")
    (tmp_path / "fake.so.json").write_text('{"name": "Fake", "digest_bits": 256}')
    with pytest.raises(LibraryError, match=r"cannot load instance library .*fake\.so"):
        ngcc.hash(str(path), b"abc")
