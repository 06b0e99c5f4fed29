"""WChain (hash-34), every built-in variant (ref, opt): official KATs, the spec's
extra vectors and round trace, the constant tables, bit-length edges, opt against
ref on random messages of random bit lengths, the message bound and the API's
error paths."""

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
import tempfile
from pathlib import Path

import pytest
from _guard import hash_before_guard_page
from conftest import OfficialKat

import ngcc
import ngcc.kat
from ngcc import _core
from ngcc.library.katfile import KatRecord, parse_kat_file

REPO = Path(__file__).resolve().parents[1]
WCHAIN = REPO / "algorithms" / "wchain"
INSTANCES = ("WChain-V1-512", "WChain-V2-1024")
BLOCK_BITS = {"WChain-V1-512": 1152, "WChain-V2-1024": 2304}
KAT_2_12_MAX_BITS = 4096
# Every built-in variant, by the name that looks exactly it up ("WChain-V1-512:opt").
VARIANTS = [i.key for i in ngcc.instances(all_variants=True) if i.family == "WChain"]
OPT_VARIANTS = [key for key in VARIANTS if not key.endswith(":ref")]


@pytest.fixture(params=VARIANTS)
def variant(request) -> str:
    """Each variant's key in turn; skipped on a CPU without the variant's features."""
    inst = next(i for i in ngcc.instances(all_variants=True) if i.key == request.param)
    if inst.missing_cpu_features:
        pytest.skip("%s needs %s, which this CPU lacks"
                    % (inst.key, ", ".join(inst.missing_cpu_features)))
    return inst.key


def _name(key: str) -> str:
    """The instance name of a variant key: "WChain-V1-512:opt" -> "WChain-V1-512"."""
    return key.split(":")[0]


@functools.cache
def _kat(official_kat: OfficialKat, name: str, test: str) -> list[KatRecord]:
    return parse_kat_file(official_kat.file(name, test))


def _edge_lengths(name: str) -> list[int]:
    """0..8 bits, and around every block boundary a byte and a bit below, at, above."""
    block = BLOCK_BITS[name]
    lengths = list(range(9))
    for boundary in range(block, KAT_2_12_MAX_BITS + 1, block):
        lengths += [boundary - 8, boundary - 1, boundary, boundary + 1, boundary + 8]
    return lengths


def _with_garbage_after(message: bytes, bits: int) -> bytes:
    """The message with every bit after the first ``bits`` set, plus three extra bytes."""
    data = bytearray(message[: (bits + 7) // 8])
    if bits % 8:
        data[-1] |= 0xFF >> (bits % 8)
    return bytes(data) + b"\xa5\x5a\xff"


def test_every_instance_has_an_avx2_opt_variant():
    assert sorted(OPT_VARIANTS) == ["WChain-V1-512:opt", "WChain-V2-1024:opt"]
    for key in OPT_VARIANTS:
        inst = next(i for i in ngcc.instances(all_variants=True) if i.key == key)
        assert inst.cpu_features == ("avx2",) and "-mavx2" in inst.cflags
        assert inst.constant_time


def test_kat_2_12_every_record(official_kat, variant):
    records = _kat(official_kat, _name(variant), "2_12")
    assert [r.msg_len_bits for r in records] == list(range(KAT_2_12_MAX_BITS + 1))
    wrong = [r.msg_len_bits for r in records
             if ngcc.hash(variant, r.message, r.msg_len_bits) != r.digest]
    assert wrong == [], "%s: %d of %d records differ, first lengths %s" % (
        variant, len(wrong), len(records), wrong[:10])


def test_kat_2_23_every_record(official_kat, variant):
    """The all-zero and all-0xFF records, and the DRNG record through ngcc.kat."""
    zero, ones = _kat(official_kat, _name(variant), "2_23")[:2]
    for record, byte in ((zero, 0x00), (ones, 0xFF)):
        assert record.fields["Msg_Exp"] == ("%02X" % byte) * 8 + " .... " + ("%02X" % byte) * 8
        assert record.msg_len_bits == 1 << 23
        message = bytes([byte]) * (record.msg_len_bits // 8)
        assert ngcc.hash(variant, message, record.msg_len_bits) == record.digest, record.line
    _assert_official_kat_files(official_kat, variant, "2_23")


def _assert_official_kat_files(official_kat: OfficialKat, variant: str, files: str) -> None:
    """Generate the KAT files with the variant and compare them with the official ones."""
    official = official_kat.folder(_name(variant))
    with tempfile.TemporaryDirectory(prefix="ngcc-wchain-kat-") as out_dir:
        [result] = ngcc.kat.check(variant, files=files, out_dir=out_dir, progress=False,
                                  official_dir=official)
    for file in result.files:
        assert file.verdict == "PASS", (variant, file.name, file.detail)
        assert "byte-identical to the official file" in file.detail, file.detail


@pytest.mark.slow
def test_kat_loop_and_2_33_files(official_kat, variant):
    """KAT_Loop (10^6 chained hashes) and KAT_2_33 (three 1 GiB messages), byte for
    byte as the official files."""
    _assert_official_kat_files(official_kat, variant, "loop,2_33")


def _extra_vectors(spec_dir):
    data = json.loads((spec_dir / "wchain" / "extra_vectors.json").read_text())
    for vector in data["vectors"]:
        if "msg_hex" in vector:
            message = bytes.fromhex(vector["msg_hex"])
        else:
            pattern = vector["msg_pattern"]
            message = bytes.fromhex(pattern["byte"]) * pattern["count"]
        yield vector, message


def test_extra_vectors(spec_dir, variant):
    vectors = list(_extra_vectors(spec_dir))
    assert len(vectors) == 17
    for vector, message in vectors:
        digest = ngcc.hash(variant, message, vector["msg_len_bits"])
        assert digest.hex() == vector[_name(variant)], (vector["name"], variant)


def test_constant_tables_are_generated_from_the_spec(spec_dir):
    spec = importlib.util.spec_from_file_location("wchain_gen_tables", WCHAIN / "gen_tables.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    expected = generator.render(spec_dir / "wchain")
    assert (WCHAIN / "wchain_tables.h").read_text() == expected, (
        "wchain_tables.h differs from the spec data: rerun algorithms/wchain/gen_tables.py")


# A test-only program: the library's CF with its trace hook defined, hashing the
# empty message and printing every round state, Bh[R] and every CF output.
_TRACE_HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
static void trace(const char *label, const uint64_t *lanes, unsigned index);
#define WCHAIN_TRACE(label, lanes, index) trace(label, lanes, index)
#include "wchain_cf.c"

static void trace(const char *label, const uint64_t *lanes, unsigned index)
{
    int i;
    printf("%s %u", label, index);
    for (i = 0; i < WCHAIN_LANES; i++)
        printf(" %016llx", (unsigned long long)lanes[i]);
    printf("\n");
}

int main(void)
{
    static const unsigned char empty[1] = {0};
    unsigned char digest[DIGEST_BIT_LENGTH / 8];
    int i;
    wchain_hash(empty, 0, digest);
    printf("digest 0 ");
    for (i = 0; i < DIGEST_BIT_LENGTH / 8; i++)
        printf("%02x", digest[i]);
    printf("\n");
    return 0;
}
"""


def _compile_trace_harness(tmp_path, digest_bits: int):
    cc = shlex.split(os.environ.get("CC", "cc"))
    if shutil.which(cc[0]) is None:
        pytest.skip("no C compiler (%s) to build the trace harness" % cc[0])
    source = tmp_path / "trace_harness.c"
    source.write_text(_TRACE_HARNESS)
    program = tmp_path / ("trace_%d" % digest_bits)
    command = cc + ["-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-Werror", "-O1",
                    "-I", str(WCHAIN), "-I", str(REPO / "algorithms" / "include"),
                    "-DDIGEST_BIT_LENGTH=%d" % digest_bits, "-o", str(program),
                    str(source), str(WCHAIN / "wchain_mode.c")]
    built = subprocess.run(command, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    return program


@pytest.mark.parametrize("name", INSTANCES)
def test_round_trace_of_the_empty_message(spec_dir, tmp_path, name):
    trace = json.loads((spec_dir / "wchain" / "trace_empty_message.json").read_text())
    expected = trace["traces"][name]
    program = _compile_trace_harness(tmp_path, ngcc.instance(name).digest_bits)
    lines = subprocess.run([str(program)], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    events = [(line.split()[0], line.split()[2:]) for line in lines]

    # Two CF calls: CF(0, M1) and CF(H_1, checksum); each traces R rounds,
    # the feed-forward vector Bh[R] and its output.
    rounds = len(expected["CF(0,M1)"]["round_outputs_X_j"])
    assert [label for label, _ in events] == 2 * (["round"] * rounds + ["feedforward", "output"]) \
        + ["digest"]
    first, second = events[: rounds + 2], events[rounds + 2: 2 * rounds + 4]
    assert [lanes for _, lanes in first[:rounds]] == expected["CF(0,M1)"]["round_outputs_X_j"]
    assert first[rounds][1] == expected["CF(0,M1)"]["Bhat_R"]
    assert first[rounds + 1][1] == expected["CF(0,M1)"]["H_1_full_state"]
    assert [lanes for _, lanes in second[:rounds]] == \
        expected["CF(H_1,checksum)"]["round_outputs_X_j"]
    assert second[rounds + 1][1] == expected["CF(H_1,checksum)"]["final_full_state"]
    digest_lanes = ngcc.instance(name).digest_bits // 64
    assert events[-1][1] == ["".join(expected["CF(H_1,checksum)"]["final_full_state"]
                                     [:digest_lanes])]


def test_bit_length_edges_ignore_everything_after_the_message(official_kat, variant):
    """At 0-8 bits and around each block boundary, the KAT_2_12 digest survives set
    unused low bits in the partial byte and extra bytes after the message."""
    records = _kat(official_kat, _name(variant), "2_12")
    for bits in _edge_lengths(_name(variant)):
        record = records[bits]
        assert record.msg_len_bits == bits
        garbled = _with_garbage_after(record.message, bits)
        assert ngcc.hash(variant, garbled, bits) == record.digest, bits


def _random_bit_lengths(name: str, rng: random.Random) -> list[int]:
    """0 .. 3 blocks + 7 bits at random, and every length within 9 bits of each block
    boundary up to 3 blocks."""
    block = BLOCK_BITS[name]
    edges = {k * block + delta for k in range(4) for delta in range(-9, 10)}
    return sorted({n for n in edges if n >= 0} | {rng.randrange(3 * block + 8) for _ in range(60)})


@pytest.mark.parametrize("key", OPT_VARIANTS)
def test_opt_equals_ref_on_random_messages(key):
    """opt against ref: random bytes at random and boundary bit lengths, the unused
    low bits of a partial byte random too (fixed seed), and one long message."""
    missing = next(i for i in ngcc.instances(all_variants=True) if i.key == key
                   ).missing_cpu_features
    if missing:
        pytest.skip("%s needs %s, which this CPU lacks" % (key, ", ".join(missing)))
    ref = _name(key) + ":ref"
    rng = random.Random(3402)
    wrong = []
    for bits in _random_bit_lengths(_name(key), rng):
        message = rng.randbytes((bits + 7) // 8)
        if ngcc.hash(key, message, bits) != ngcc.hash(ref, message, bits):
            wrong.append(bits)
    assert wrong == [], "%s differs from ref at bit lengths %s" % (key, wrong[:20])
    long_message = rng.randbytes(100_003)
    assert ngcc.hash(key, long_message) == ngcc.hash(ref, long_message)


def test_never_reads_past_the_message(variant):
    block = BLOCK_BITS[_name(variant)]
    lengths = [0, 1, 7, 8, 9, block - 1, block, block + 1, 2 * block - 1, 2 * block,
               2 * block + 7, 3 * block + 3]
    cases = [(os.urandom((bits + 7) // 8), bits) for bits in lengths]
    digests = hash_before_guard_page(variant, cases)
    assert digests == [ngcc.hash(variant, m, bits) for m, bits in cases]


def test_other_digest_lengths_are_refused(variant):
    inst = ngcc.instance(variant)
    library = _core.Library(str(inst.library))
    for other in (8, 256, 504, 520, 1016, 1032, 2048):
        if other == inst.digest_bits:
            continue
        with pytest.raises(ngcc.HashError):
            library.hash(other, b"abc", 24)
    assert ngcc.hash(variant, b"abc", 24) == library.hash(inst.digest_bits, b"abc", 24)


def test_crypthash_error_paths_write_nothing(official_kat, variant):
    """Straight through ctypes: -1 and an untouched buffer for a wrong digest length,
    a NULL digest or a NULL message with a length; a NULL empty message is fine."""
    inst = ngcc.instance(variant)
    crypt_hash = ctypes.CDLL(str(inst.library)).CryptHash
    crypt_hash.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p]
    crypt_hash.restype = ctypes.c_int
    canary = b"\xc3" * 256
    for other in (0, -512, 8, inst.digest_bits - 8, inst.digest_bits + 8, 2 * inst.digest_bits):
        buffer = ctypes.create_string_buffer(canary, len(canary))
        assert crypt_hash(other, b"abc", 24, buffer) == -1, other
        assert buffer.raw == canary, other
    assert crypt_hash(inst.digest_bits, b"abc", 24, None) == -1
    buffer = ctypes.create_string_buffer(canary, len(canary))
    assert crypt_hash(inst.digest_bits, None, 8, buffer) == -1
    assert buffer.raw == canary
    assert crypt_hash(inst.digest_bits, None, 0, buffer) == 0
    digest_bytes = inst.digest_bits // 8
    assert buffer.raw[:digest_bytes] == _kat(official_kat, inst.name, "2_12")[0].digest
    assert buffer.raw[digest_bytes:] == canary[digest_bytes:]
