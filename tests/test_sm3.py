"""The SM3 baseline instance: standard vectors, bit-level messages, guard page."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from _guard import hash_before_guard_page

import ngcc


def _vectors(spec_dir):
    data = json.loads((spec_dir / "drng" / "sm3_vectors.json").read_text())
    for group in data.values():
        if isinstance(group, list):
            yield from (v for v in group if isinstance(v, dict) and "digest" in v)


def test_sm3_standard_abc():
    assert ngcc.hash("SM3", b"abc").hex() == (
        "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0")


def test_sm3_vectors_file(spec_dir):
    vectors = list(_vectors(spec_dir))
    assert len(vectors) >= 3
    for v in vectors:
        msg = bytes.fromhex(v["msg"])
        assert ngcc.hash("SM3", msg, v["msg_len_bits"]).hex() == v["digest"], v


def test_sm3_ignores_unused_low_bits():
    assert ngcc.hash("SM3", b"\xa0", 3) == ngcc.hash("SM3", b"\xbf", 3)
    assert ngcc.hash("SM3", b"\xa0", 3) != ngcc.hash("SM3", b"\xa0", 4)


@pytest.mark.skipif("sm3" not in hashlib.algorithms_available, reason="OpenSSL without SM3")
def test_sm3_matches_openssl_on_random_messages():
    for size in (0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 4096):
        msg = os.urandom(size)
        assert ngcc.hash("SM3", msg) == hashlib.new("sm3", msg).digest(), size


def test_sm3_never_reads_past_the_message():
    cases = [(os.urandom((bits + 7) // 8), bits) for bits in (0, 1, 7, 8, 9, 447, 448, 512, 513)]
    digests = hash_before_guard_page("SM3", cases)
    assert digests == [ngcc.hash("SM3", m, bits) for m, bits in cases]
