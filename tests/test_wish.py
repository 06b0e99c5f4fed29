"""Wish512 and Wish1024 (hash-35): official KATs, extra vectors, edges and the message
bound for every variant (ref, opt), every variant against ref on random messages,
and the constant tables.

The constant tables and the S-box circuit of algorithms/wish/ are checked
against spec/wish/ through a small test-only C harness that includes the
sources, so it sees their static functions and tables.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import json
import os
import random
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

WISH_DIR = Path(__file__).resolve().parents[1] / "algorithms" / "wish"
INSTANCES = {"Wish512": 512, "Wish1024": 1024}  # name -> rate in bits (= digest bits)
# "<instance>:<variant>" for every variant of instances.json; opt skips without AES-NI.
VARIANTS = variant_params("wish", INSTANCES)
OTHER_VARIANTS = variant_params("wish", INSTANCES, include_ref=False)


@functools.cache
def _kat(official_kat: OfficialKat, name: str, kind: str) -> tuple[KatRecord, ...]:
    return tuple(parse_kat_file(official_kat.file(name, kind)))


def _spec(spec_dir: Path) -> Path:
    return spec_dir / "wish"


# ------------------------------------------------------------- official KATs

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


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize(("index", "fill"), [(0, 0x00), (1, 0xFF)])
def test_kat_2_23_constant_messages(official_kat, name, index, fill):
    """The all-zero and all-0xFF 2^23-bit records, without the DRNG."""
    record = _kat(official_kat, instance_of(name), "2_23")[index]
    assert record.msg_len_bits == 1 << 23
    assert record.fields["Msg_Exp"] == "%s .... %s" % (("%02X" % fill) * 8, ("%02X" % fill) * 8)
    assert ngcc.hash(name, bytes([fill]) * (1 << 20)) == record.digest


# ----------------------------------------------------------- every variant = ref

def _random_cases(rate_bits: int, seed: int) -> list[tuple[bytes, int]]:
    """Random messages of random bit lengths 0 .. 3 blocks + 7 bits, and every length
    within 9 bits of each block boundary up to 3 blocks; the unused low bits of a
    partial last byte hold garbage, which every variant must ignore."""
    rng = random.Random(seed)
    lengths = [rng.randrange(3 * rate_bits + 8) for _ in range(200)]
    lengths += [k * rate_bits + d for k in range(4) for d in range(-9, 10)
                if k * rate_bits + d >= 0]
    cases = []
    for bits in lengths:
        message = bytearray(rng.randbytes((bits + 7) // 8))
        if bits % 8:
            message[-1] |= rng.randrange(1 << (8 - bits % 8))
        cases.append((bytes(message), bits))
    return cases


@pytest.mark.parametrize("name", OTHER_VARIANTS)
def test_variant_equals_ref_on_random_messages(name):
    cases = _random_cases(INSTANCES[instance_of(name)], seed=35)
    differ = [bits for message, bits in cases
              if ngcc.hash(name, message, bits) != ngcc.hash(ref_of(name), message, bits)]
    assert differ == [], "%s and ref differ at %d of %d lengths, first %s" % (
        name, len(differ), len(cases), differ[:10])


# ------------------------------------------------------------- extra vectors

def _extra_message(text: str) -> bytes:
    """``msg_bytes`` of extra_vectors.json: hex, or "<hex byte> repeated <n> times"."""
    words = text.split()
    if len(words) == 4 and words[1] == "repeated":
        return bytes.fromhex(words[0]) * int(words[2])
    return bytes.fromhex(text)


@pytest.mark.parametrize("variant", variant_name_params("wish"))
def test_extra_vectors(spec_dir, variant):
    vectors = json.loads((_spec(spec_dir) / "extra_vectors.json").read_text())["vectors"]
    assert {v["instance"] for v in vectors} == set(INSTANCES)
    for v in vectors:
        message = _extra_message(v["msg_bytes"])
        digest = ngcc.hash("%s:%s" % (v["instance"], variant), message, v["msg_len_bits"])
        assert digest.hex() == v["digest"], (v["instance"], v["name"])


@pytest.mark.parametrize("name", VARIANTS)
def test_unused_low_bits_are_ignored(spec_dir, name):
    vectors = json.loads((_spec(spec_dir) / "extra_vectors.json").read_text())["vectors"]
    pair = {v["name"]: v for v in vectors
            if v["instance"] == instance_of(name) and v["name"] in ("bits7_B4", "bits7_B4_clean")}
    assert pair["bits7_B4"]["msg_bytes"] != pair["bits7_B4_clean"]["msg_bytes"]
    assert pair["bits7_B4"]["digest"] == pair["bits7_B4_clean"]["digest"]
    assert ngcc.hash(name, b"\xb5", 7) == ngcc.hash(name, b"\xb4", 7)
    assert ngcc.hash(name, b"\xb4", 7) != ngcc.hash(name, b"\xb4", 8)


# --------------------------------------------------- edges of the rate block

def _rate_edges(rate_bits: int) -> list[int]:
    """Lengths around one and two rate blocks (the extra padding block starts at r)."""
    near = (-9, -8, -7, -1, 0, 1, 7, 8, 9)
    return [k * rate_bits + d for k in (1, 2) for d in near]


@pytest.mark.parametrize("name", VARIANTS)
def test_rate_edges_match_kat_with_garbage_after_the_message(official_kat, name):
    records = _kat(official_kat, instance_of(name), "2_12")
    for bits in _rate_edges(INSTANCES[instance_of(name)]):
        record = records[bits]
        data = bytearray(record.message)
        if bits % 8:  # unused low bits of the partial byte set: must be ignored
            data[-1] |= 0xFF >> (bits % 8)
        data += b"\xa5" * 40  # bytes past the message: must be ignored
        assert ngcc.hash(name, bytes(data), bits) == record.digest, (name, bits)


@pytest.mark.parametrize("name", VARIANTS)
def test_never_reads_past_the_message(official_kat, name):
    records = _kat(official_kat, instance_of(name), "2_12")
    lengths = [0, 1, 7, 8, 9, *_rate_edges(INSTANCES[instance_of(name)]), 4095, 4096]
    cases = [(records[bits].message, bits) for bits in lengths]
    assert hash_before_guard_page(name, cases) == [records[bits].digest for bits in lengths]


@pytest.mark.parametrize("name", VARIANTS)
def test_other_digest_lengths_are_refused(name):
    library = _core.Library(str(ngcc.instance(name).library))
    own = INSTANCES[instance_of(name)]
    for other_bits in (8, 256, own - 8, own + 8, 1536 - own, 2048):
        with pytest.raises(ngcc.HashError):
            library.hash(other_bits, b"abc", 24)
    assert library.hash(own, b"abc", 24) == ngcc.hash(name, b"abc", 24)


@pytest.mark.parametrize("name", VARIANTS)
def test_errors_write_nothing_and_success_writes_exactly_the_digest(name):
    crypt_hash = ctypes.CDLL(str(ngcc.instance(name).library)).CryptHash
    crypt_hash.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_void_p]
    own = INSTANCES[instance_of(name)]
    buffer = ctypes.create_string_buffer(b"\x5a" * 256, 256)
    assert crypt_hash(1536 - own, b"abc", 24, buffer) != 0   # the other instance's length
    assert crypt_hash(own, None, 8, buffer) != 0             # NULL message, 8 bits
    assert crypt_hash(own, b"abc", 24, None) != 0            # NULL digest
    assert buffer.raw == b"\x5a" * 256
    assert crypt_hash(own, None, 0, buffer) == 0             # NULL empty message
    assert buffer.raw[:own // 8] == ngcc.hash(name, b"", 0)
    assert buffer.raw[own // 8:] == b"\x5a" * (256 - own // 8)


# ------------------------------------------------- constant tables, S-box, MIX

_HARNESS = r"""
/* Test-only: expose the internals of the Wish sources to tests/test_wish.py. */
#include <stdio.h>
#include <string.h>
#include "aes_bitsliced.c"
#include "permutation.c"

static void print_bytes(const char *label, const unsigned char *p, unsigned n)
{
    unsigned i;
    printf("%s ", label);
    for (i = 0; i < n; i++)
        printf("%02x", p[i]);
    printf("\n");
}

/* The whole state (every lane of every word) to bitsliced form, and back. */
static void load_state(bitsliced q, const unsigned char bytes[WISH_STATE_BYTES])
{
    unsigned w;
    memset(q, 0, sizeof(bitsliced));
    for (w = 0; w < WORDS; w++)
        bitsliced_add_lanes(q, w, bytes + 64 * w);
}

static void store_state(unsigned char bytes[WISH_STATE_BYTES], bitsliced q)
{
    unsigned w;
    for (w = 0; w < WORDS; w++)
        bitsliced_store_lanes(bytes + 64 * w, (const uint64_t (*)[WORDS])q, w);
}

int main(void)
{
    unsigned char bytes[WISH_STATE_BYTES];
    bitsliced q;
    unsigned i, k;

    for (k = 0; k < 2; k++) {          /* S-box of every byte slot: (i + 128 k) mod 256 */
        for (i = 0; i < WISH_STATE_BYTES; i++)
            bytes[i] = (unsigned char)(i + 128 * k);
        load_state(q, bytes);
        wish_sub_bytes(q);
        store_state(bytes, q);
        print_bytes("sbox", bytes, WISH_STATE_BYTES);
    }
    for (i = 0; i < WISH_STATE_BYTES; i++)  /* one AES round on every lane */
        bytes[i] = (unsigned char)(37 * i + 11);
    load_state(q, bytes);
    bitsliced_aes_round(q);
    store_state(bytes, q);
    print_bytes("aesr", bytes, WISH_STATE_BYTES);
    for (k = 0; k < 24; k++) {         /* the bitsliced round constants, in word 0 */
        memset(q, 0, sizeof q);
        for (i = 0; i < 8; i++)
            q[i][0] = WISH_RCON[k][i];
        store_state(bytes, q);
        print_bytes("rcon", bytes, 64);
    }
    for (i = 0; i < WISH_STATE_BYTES; i++)  /* MIX of the state whose byte i is i */
        bytes[i] = (unsigned char)i;
    load_state(q, bytes);
    mix(q);
    store_state(bytes, q);
    print_bytes("mix", bytes, WISH_STATE_BYTES);
    return 0;
}
"""


def _run_harness(cc: list[str], build_dir: Path, digest_bits: int) -> dict[str, list[bytes]]:
    """Compile and run the harness for one instance; {label: [bytes of each line]}."""
    source = build_dir / "wish_harness.c"
    program = build_dir / ("wish_harness_%d" % digest_bits)
    source.write_text(_HARNESS)
    subprocess.run(cc + ["-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-Werror", "-O1",
                         "-DDIGEST_BIT_LENGTH=%d" % digest_bits, "-I", str(WISH_DIR),
                         "-I", str(WISH_DIR.parent / "include"), "-o", str(program),
                         str(source), str(WISH_DIR / "sbox_circuit.c")], check=True)
    lines = subprocess.run([str(program)], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    out: dict[str, list[bytes]] = {}
    for line in filter(None, lines):
        label, value = line.split()
        out.setdefault(label, []).append(bytes.fromhex(value))
    return out


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> dict[int, dict[str, list[bytes]]]:
    """The harness output of both instances, keyed by digest bits."""
    cc = shlex.split(os.environ.get("CC", "cc"))
    if shutil.which(cc[0]) is None:
        pytest.skip("no C compiler (%s) for the Wish test harness" % cc[0])
    build_dir = tmp_path_factory.mktemp("wish_harness")
    return {bits: _run_harness(cc, build_dir, bits) for bits in (512, 1024)}


def _sbox(spec_dir: Path) -> bytes:
    return bytes.fromhex("".join((_spec(spec_dir) / "sbox.hex").read_text().split()))


@pytest.mark.parametrize("digest_bits", [512, 1024])
def test_sbox_circuit_matches_sbox_hex_for_all_inputs(spec_dir, harness, digest_bits):
    """Every byte slot of every word, and every input value (two passes)."""
    state_bytes = 2 * digest_bits // 8
    expected = [bytes(_sbox(spec_dir)[(i + 128 * k) % 256] for i in range(state_bytes))
                for k in range(2)]
    assert harness[digest_bits]["sbox"] == expected


def _xtime(a: int) -> int:
    return ((a << 1) ^ (0x1B if a & 0x80 else 0)) & 0xFF


def _aes_round(sbox: bytes, lane: bytes) -> bytes:
    """AESR of spec/wish.md §6 on one lane, byte 4*col + row, written from the spec."""
    shifted = [sbox[lane[4 * ((col + row) % 4) + row]] for col in range(4) for row in range(4)]
    out = bytearray(16)
    for col in range(4):
        a = shifted[4 * col:4 * col + 4]
        for row in range(4):
            b1, b2, b3 = a[(row + 1) % 4], a[(row + 2) % 4], a[(row + 3) % 4]
            out[4 * col + row] = _xtime(a[row]) ^ _xtime(b1) ^ b1 ^ b2 ^ b3
    return bytes(out)


@pytest.mark.parametrize("digest_bits", [512, 1024])
def test_bitsliced_round_matches_the_spec_round(spec_dir, harness, digest_bits):
    state_bytes = 2 * digest_bits // 8
    lanes = bytes((37 * i + 11) & 0xFF for i in range(state_bytes))
    expected = b"".join(_aes_round(_sbox(spec_dir), lanes[16 * k:16 * k + 16])
                        for k in range(state_bytes // 16))
    assert harness[digest_bits]["aesr"] == [expected]


def test_round_constants_match_rcon_hex(spec_dir, harness):
    rcon = [bytes.fromhex(line) for line in (_spec(spec_dir) / "rcon.hex").read_text().split()]
    assert len(rcon) == 24
    assert harness[512]["rcon"] == [constant + bytes(48) for constant in rcon]


@pytest.mark.parametrize(("digest_bits", "table"), [(512, "mix_1024.json"),
                                                    (1024, "mix_2048.json")])
def test_mix_matches_the_permutation_table(spec_dir, harness, digest_bits, table):
    mix = json.loads((_spec(spec_dir) / table).read_text())["mix"]
    # The state's byte i held i, and out[i] = in[mix[i]].
    assert list(harness[digest_bits]["mix"][0]) == mix


def test_generated_headers_are_current(spec_dir):
    spec = importlib.util.spec_from_file_location("wish_gen_tables", WISH_DIR / "gen_tables.py")
    assert spec is not None and spec.loader is not None
    gen_tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_tables)
    for file_name, text in gen_tables.render(_spec(spec_dir)).items():
        assert (WISH_DIR / file_name).read_text() == text, "%s is stale" % file_name
