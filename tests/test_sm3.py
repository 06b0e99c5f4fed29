"""The SM3 baseline instance: standard vectors, bit-level messages, guard page."""

from __future__ import annotations

import hashlib
import json
import os
import random

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


def _sm3_model(message: bytes, bits: int) -> bytes:
    """SM3 in plain Python, straight from GB/T 32905-2016 §§4-5, for bit-length messages."""
    def rotl(x: int, n: int) -> int:
        n %= 32
        return ((x << n) | (x >> (32 - n))) & 0xFFFFFFFF

    def p0(x: int) -> int:
        return x ^ rotl(x, 9) ^ rotl(x, 17)

    def p1(x: int) -> int:
        return x ^ rotl(x, 15) ^ rotl(x, 23)

    value = int.from_bytes(message[: (bits + 7) // 8], "big") >> ((8 - bits % 8) % 8)
    padded_bits = bits + 1 + (447 - bits) % 512 + 64
    padded = ((((value << 1) | 1) << ((447 - bits) % 512 + 64)) | bits).to_bytes(
        padded_bits // 8, "big")
    v = [0x7380166F, 0x4914B2B9, 0x172442D7, 0xDA8A0600,
         0xA96F30BC, 0x163138AA, 0xE38DEE4D, 0xB0FB0E4E]
    for start in range(0, len(padded), 64):
        w = [int.from_bytes(padded[start + 4 * j: start + 4 * j + 4], "big") for j in range(16)]
        for j in range(16, 68):
            w.append(p1(w[j - 16] ^ w[j - 9] ^ rotl(w[j - 3], 15)) ^ rotl(w[j - 13], 7) ^ w[j - 6])
        a, b, c, d, e, f, g, h = v
        for j in range(64):
            t = 0x79CC4519 if j < 16 else 0x7A879D8A
            ss1 = rotl((rotl(a, 12) + e + rotl(t, j)) & 0xFFFFFFFF, 7)
            ss2 = ss1 ^ rotl(a, 12)
            ff = a ^ b ^ c if j < 16 else (a & b) | (a & c) | (b & c)
            gg = e ^ f ^ g if j < 16 else (e & f) | (~e & g)
            tt1 = (ff + d + ss2 + (w[j] ^ w[j + 4])) & 0xFFFFFFFF
            tt2 = (gg + h + ss1 + w[j]) & 0xFFFFFFFF
            a, b, c, d = tt1, a, rotl(b, 9), c
            e, f, g, h = p0(tt2), e, rotl(f, 19), g
        v = [x ^ y for x, y in zip(v, [a, b, c, d, e, f, g, h], strict=True)]
    return b"".join(x.to_bytes(4, "big") for x in v)


def test_the_python_model_reproduces_the_standard_example():
    assert _sm3_model(b"abc", 24).hex() == (
        "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0")


def _random_bit_lengths(rng: random.Random) -> list[int]:
    """0 .. 3 blocks + 7 bits at random, and every length within 9 bits of a block
    boundary and of the padding's 448-bit limit."""
    edges = [k * 512 + delta for k in range(4) for delta in range(-9, 10)]
    edges += [k * 512 + 448 + delta for k in range(3) for delta in range(-9, 10)]
    return sorted({n for n in edges if n >= 0} | {rng.randrange(3 * 512 + 8) for _ in range(40)})


def test_sm3_matches_the_model_on_random_bit_lengths():
    rng = random.Random(20250318)
    wrong = []
    for bits in _random_bit_lengths(rng):
        message = rng.randbytes((bits + 7) // 8)
        if ngcc.hash("SM3", message, bits) != _sm3_model(message, bits):
            wrong.append(bits)
    assert wrong == []


@pytest.mark.skipif("sm3" not in hashlib.algorithms_available, reason="OpenSSL without SM3")
def test_sm3_matches_openssl_on_long_messages():
    rng = random.Random(7)
    for size in (64 * 1024 - 1, 64 * 1024, 100_003, 1 << 20):
        message = rng.randbytes(size)
        assert ngcc.hash("SM3", message) == hashlib.new("sm3", message).digest(), size
