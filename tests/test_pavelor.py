"""Pavelor (hash-22): official KATs, the spec's extra vectors, the generated
tables and the constant-time S-box, bit-length edges, the message bound and
the API's error paths -- for every variant (ref, opt) -- and every variant
against ref on random messages."""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import json
import os
import random
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from _guard import hash_before_guard_page
from _variants import (
    assert_kat_files_pass,
    instance_of,
    ref_of,
    variant_name_params,
    variant_params,
)
from conftest import OfficialKat

import ngcc
from ngcc import _core
from ngcc.library.katfile import KatRecord, parse_kat_file

REPO = Path(__file__).resolve().parents[1]
PAVELOR = REPO / "algorithms" / "pavelor"
INSTANCES = ("Pavelor-512", "Pavelor-768", "Pavelor-1024")
# "<instance>:<variant>" for every variant of instances.json; opt skips without AES-NI.
VARIANTS = variant_params("pavelor", INSTANCES)
OTHER_VARIANTS = variant_params("pavelor", INSTANCES, include_ref=False)
DIGEST_BITS = {"Pavelor-512": 512, "Pavelor-768": 768, "Pavelor-1024": 1024}
RATE_BITS = {name: 2560 - 2 * bits for name, bits in DIGEST_BITS.items()}
KAT_2_12_MAX_BITS = 4096
# Messages of extra_vectors.json that the file describes instead of listing.
DESCRIBED_MESSAGES = {"a_x1000": b"a" * 1000, "zeros_1MiB": bytes(1 << 20)}


@functools.cache
def _kat(official_kat: OfficialKat, name: str, test: str) -> list[KatRecord]:
    return parse_kat_file(official_kat.file(name, test))


def _edge_lengths(name: str) -> list[int]:
    """0..8 bits, and one bit below, at and above every rate boundary up to 4096 bits."""
    rate = RATE_BITS[instance_of(name)]
    lengths = list(range(9))
    for boundary in range(rate, KAT_2_12_MAX_BITS + 1, rate):
        lengths += [boundary - 1, boundary, boundary + 1]
    return [n for n in lengths if n <= KAT_2_12_MAX_BITS]


def _spec_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------- official KATs

@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("fill", [0x00, 0xFF])
def test_kat_2_23_constant_messages(official_kat, name, fill):
    """The all-zero and all-0xFF 2^23-bit records (the DRNG one: the file test below)."""
    pattern = ("%02X" % fill) * 8
    records = [r for r in _kat(official_kat, instance_of(name), "2_23")
               if r.fields["Msg_Exp"] == "%s .... %s" % (pattern, pattern)]
    assert len(records) == 1 and records[0].msg_len_bits == 1 << 23
    message = bytes([fill]) * (1 << 20)
    assert ngcc.hash(name, message, 1 << 23) == records[0].digest


@pytest.mark.parametrize("name", VARIANTS)
def test_quick_kat_files_pass(official_kat, name, tmp_path):
    """KAT_2_12 (every length 0..4096 bits) and KAT_2_23, regenerated whole, match the
    manifest; a mismatch names the first differing record of the official file."""
    assert_kat_files_pass(official_kat, name, ("2_12", "2_23"), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", VARIANTS)
def test_long_kat_files_pass(official_kat, name, tmp_path):
    """KAT_Loop (10^6 hash calls) and KAT_2_33 (three 1 GiB messages) match the manifest."""
    assert_kat_files_pass(official_kat, name, ("loop", "2_33"), tmp_path)


# ------------------------------------------------------- every variant = ref

def _random_cases(name: str, seed: int) -> list[tuple[bytes, int]]:
    """Random messages of random bit lengths 0 .. 3 blocks + 7 bits, and every length
    within 9 bits of each block boundary up to 3 blocks; the unused low bits of a
    partial last byte hold garbage, which every variant must ignore."""
    rate = RATE_BITS[instance_of(name)]
    rng = random.Random(seed)
    lengths = [rng.randrange(3 * rate + 8) for _ in range(200)]
    lengths += [k * rate + d for k in range(4) for d in range(-9, 10) if k * rate + d >= 0]
    cases = []
    for bits in lengths:
        message = bytearray(rng.randbytes((bits + 7) // 8))
        if bits % 8:
            message[-1] |= rng.randrange(1 << (8 - bits % 8))
        cases.append((bytes(message), bits))
    return cases


@pytest.mark.parametrize("name", OTHER_VARIANTS)
def test_variant_equals_ref_on_random_messages(name):
    cases = _random_cases(name, seed=22)
    differ = [bits for message, bits in cases
              if ngcc.hash(name, message, bits) != ngcc.hash(ref_of(name), message, bits)]
    assert differ == [], "%s and ref differ at %d of %d lengths, first %s" % (
        name, len(differ), len(cases), differ[:10])


# -------------------------------------------------------- spec's extra vectors

def _extra_vectors(spec_dir: Path) -> list[dict]:
    data = json.loads((spec_dir / "pavelor" / "extra_vectors.json").read_text())
    return data["vectors"]


def _vector_message(vector: dict) -> bytes:
    if vector["name"] in DESCRIBED_MESSAGES:
        return DESCRIBED_MESSAGES[vector["name"]]
    return bytes.fromhex(vector["msg_hex"])


@pytest.mark.parametrize("variant", variant_name_params("pavelor"))
def test_extra_vectors_all(spec_dir, variant):
    """Every vector of extra_vectors.json, for every instance, full digest length:
    includes the rate-boundary (ff_*bits) cases and, for Pavelor-1024, the
    second squeeze (digest bytes 64..127)."""
    vectors = _extra_vectors(spec_dir)
    assert {"ff_511bits", "ff_512bits", "ff_1023bits", "ff_1024bits", "ff_1535bits",
            "ff_1536bits"} <= {v["name"] for v in vectors}
    checked = 0
    for vector in vectors:
        message = _vector_message(vector)
        assert len(message) == (vector["msg_len_bits"] + 7) // 8, vector["name"]
        assert set(vector["digests"]) == set(INSTANCES), vector["name"]
        for name, digest in vector["digests"].items():
            got = ngcc.hash("%s:%s" % (name, variant), message, vector["msg_len_bits"])
            assert got.hex() == digest, (vector["name"], name)
            checked += 1
    assert checked == 3 * len(vectors)


def test_pavelor_1024_digest_spans_two_squeezes(spec_dir):
    """The rate of Pavelor-1024 is 64 bytes, so its 128-byte digest needs one more
    permutation: its halves are different 64-byte outputs, both as in the spec."""
    for vector in _extra_vectors(spec_dir):
        digest = ngcc.hash("Pavelor-1024", _vector_message(vector), vector["msg_len_bits"])
        assert len(digest) == 128
        assert digest[:64] != digest[64:]
        assert digest.hex() == vector["digests"]["Pavelor-1024"]


# ------------------------------------------------- generated tables and S-box

def test_generated_headers_match_the_data_files(spec_dir):
    gen = _spec_module("pavelor_gen_tables", PAVELOR / "gen_tables.py")
    for file_name, text in gen.generate(spec_dir / "pavelor").items():
        assert (PAVELOR / file_name).read_text() == text, (
            "%s is stale: run python algorithms/pavelor/gen_tables.py SPEC_DIR" % file_name)


def _c_array(source: str, name: str) -> list[int]:
    """The integers of the C array ``name`` in ``source``, in order."""
    match = re.search(r"\b%s\[[^=]*=\s*\{(.*?)\};" % re.escape(name), source, re.S)
    assert match, name
    return [int(n, 0) for n in re.findall(r"0x[0-9a-fA-F]+|\d+", match.group(1).replace(
        "UINT64_C", ""))]


def test_round_constant_planes_decode_to_round_constants_hex(spec_dir):
    """Read RC_PLANES back out of the C header (bit 16 row + 4 column + lane of
    plane b is bit b of byte 4 column + row) and compare with the data file."""
    header = (PAVELOR / "round_tables.h").read_text()
    lanes = _c_array(header, "WORD_IN_LANE")
    planes = _c_array(header, "RC_PLANES")
    group = int(re.search(r"#define RC_GROUP (\d+)", header).group(1))
    lane = lanes.index(7) - 4 * group  # N[7] = W[8] ^ RC[t] is the RC's word
    assert 0 <= lane < 4 and sorted(lanes) == list(range(20))
    rows = [line.strip() for line in
            (spec_dir / "pavelor" / "round_constants.hex").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert len(rows) == 24 and len(planes) == 24 * 8
    for t, row in enumerate(rows):
        decoded = bytearray(16)
        for b in range(8):
            word = planes[8 * t + b]
            for index in range(16):
                column, r = divmod(index, 4)
                decoded[index] |= (word >> (16 * r + 4 * column + lane) & 1) << b
            outside = word & ~(0x1111111111111111 << lane)
            assert outside == 0, "RC_PLANES[%d][%d] has bits outside its lane" % (t, b)
        # The table holds RC[t] ^ 0x63 (see round_tables.h for why).
        assert bytes(x ^ 0x63 for x in decoded) == bytes.fromhex(row), t


SBOX_HARNESS = r"""
#include <stdio.h>
#include "bitsliced.h"
int main(void)
{
    uint64_t s[8][GROUPS] = {{0}};
    int slot, b;

    for (slot = 0; slot < 64 * GROUPS; slot++)  /* byte value slot % 256 in each slot */
        for (b = 0; b < 8; b++)
            s[b][slot / 64] |= (uint64_t)((slot % 256) >> b & 1) << (slot % 64);
    pavelor_sub_bytes(s);
    for (slot = 0; slot < 64 * GROUPS; slot++) {
        int y = 0;
        for (b = 0; b < 8; b++)
            y |= (int)(s[b][slot / 64] >> (slot % 64) & 1) << b;
        printf("%02x", y);
    }
    printf("\n");
    return 0;
}
"""


def test_bitsliced_sbox_equals_aes_sbox_hex(spec_dir, tmp_path):
    """The gate circuit, compiled as the library is, against the table: every byte
    slot of every group (so each of the words the circuit is written out for)."""
    cc = shlex.split(os.environ.get("CC", "cc"))
    if shutil.which(cc[0]) is None:
        pytest.skip("no C compiler (%s)" % cc[0])
    (tmp_path / "harness.c").write_text(SBOX_HARNESS)
    program = tmp_path / "harness"
    subprocess.run(cc + ["-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-Werror", "-O2",
                         "-I", str(PAVELOR), str(tmp_path / "harness.c"),
                         str(PAVELOR / "sbox_circuit.c"), "-o", str(program)],
                   check=True, capture_output=True, text=True)
    output = bytes.fromhex(
        subprocess.run([str(program)], check=True, capture_output=True, text=True).stdout)
    table = bytes.fromhex("".join(
        line.strip() for line in (spec_dir / "pavelor" / "aes_sbox.hex").read_text().splitlines()
        if line.strip() and not line.startswith("#")))
    assert len(table) == 256
    assert output == bytes(table[slot % 256] for slot in range(len(output)))
    assert len(output) == 5 * 64


# -------------------------------------------------------- bit-level messages

@pytest.mark.parametrize("name", VARIANTS)
def test_bit_length_edges_against_kat_2_12(official_kat, name):
    """0..8 bits and one bit below/at/above each rate boundary, against the KAT."""
    records = _kat(official_kat, instance_of(name), "2_12")
    lengths = _edge_lengths(name)
    rate = RATE_BITS[instance_of(name)]
    assert rate in lengths and rate - 1 in lengths
    for bits in lengths:
        record = records[bits]
        assert record.msg_len_bits == bits
        assert ngcc.hash(name, record.message, bits) == record.digest, bits


@pytest.mark.parametrize("name", VARIANTS)
def test_unused_low_bits_are_ignored(official_kat, name):
    """Garbage in the unused low bits of a partial last byte changes nothing."""
    rng = random.Random(22)
    for record in _kat(official_kat, instance_of(name), "2_12"):
        unused = (8 - record.msg_len_bits % 8) % 8
        if unused == 0:
            continue
        dirty = bytearray(record.message)
        dirty[-1] |= rng.randrange(1, 1 << unused)  # the KAT prints them as zero
        assert ngcc.hash(name, bytes(dirty), record.msg_len_bits) == record.digest, (
            record.msg_len_bits)


@pytest.mark.parametrize("name", VARIANTS)
def test_never_reads_past_the_message(official_kat, name):
    """Each message ends at an unreadable page: a read of byte ceil(bits/8) faults."""
    records = _kat(official_kat, instance_of(name), "2_12")
    lengths = _edge_lengths(name) + [KAT_2_12_MAX_BITS - 1, KAT_2_12_MAX_BITS]
    cases = [(records[bits].message, bits) for bits in lengths]
    assert hash_before_guard_page(name, cases) == [records[bits].digest for bits in lengths]


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("name", VARIANTS)
def test_other_digest_lengths_are_refused(name):
    library = _core.Library(str(ngcc.instance(name).library))
    own = DIGEST_BITS[instance_of(name)]
    others = [bits for bits in DIGEST_BITS.values() if bits != own]
    for bits in [8, 256, 384, own - 8, own + 8, 2048, *others]:
        with pytest.raises(ngcc.HashError):
            library.hash(bits, b"abc", 24)
    assert library.hash(own, b"abc", 24) == ngcc.hash(name, b"abc", 24)


def _crypt_hash(name: str):
    function = ctypes.CDLL(str(ngcc.instance(name).library)).CryptHash
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_void_p]
    function.restype = ctypes.c_int
    return function


@pytest.mark.parametrize("name", VARIANTS)
def test_errors_write_nothing_and_success_writes_exactly_the_digest(name):
    crypt_hash = _crypt_hash(name)
    own = DIGEST_BITS[instance_of(name)]
    size = own // 8
    for bits in (-1, 0, 1, 511, 513, 767, 1023, 1025, 4096, *DIGEST_BITS.values()):
        if bits == own:
            continue
        buffer = ctypes.create_string_buffer(b"\x5a" * 256, 256)
        assert crypt_hash(bits, b"abc", 24, buffer) != 0, bits
        assert buffer.raw == b"\x5a" * 256, bits
    buffer = ctypes.create_string_buffer(b"\x5a" * 256, 256)
    assert crypt_hash(own, None, 8, buffer) != 0  # NULL message, 8 bits
    assert crypt_hash(own, b"abc", 24, None) != 0  # NULL digest
    assert buffer.raw == b"\x5a" * 256
    assert crypt_hash(own, None, 0, buffer) == 0   # NULL empty message
    assert buffer.raw[:size] == ngcc.hash(name, b"", 0)
    assert buffer.raw[size:] == b"\x5a" * (256 - size)
