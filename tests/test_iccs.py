"""The ICCS helper instances (algorithms/iccs/): sm3hash, pseudohash, pseudoXOF.

Vectors come from spec/drng/iccs_helper_vectors.json. Output widths and MAC
inputs that no instance exposes are checked through the helper functions
themselves, compiled by this test into a small library loaded with ctypes.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import shlex
import subprocess

import pytest
from _guard import hash_before_guard_page
from _variants import variant_name_params, variants
from conftest import REPO

import ngcc
from ngcc import _core

ICCS = REPO / "algorithms" / "iccs"
SM3HASH = "sm3hash-256"
PSEUDOHASH = {512: "pseudohash-512", 768: "pseudohash-768", 1024: "pseudohash-1024"}
XOF_WIDTHS = (256, 384, 512, 768, 1024, 1152, 1280, 2048)
INSTANCES = [SM3HASH, *PSEUDOHASH.values(), *("pseudoXOF-%d" % w for w in XOF_WIDTHS)]


@pytest.fixture(scope="module")
def vectors(spec_dir):
    return json.loads((spec_dir / "drng" / "iccs_helper_vectors.json").read_text())


@pytest.fixture(scope="module", params=[pytest.param(v.get("cflags", []),
                                                    id=name)
                                       for name, v in variants("iccs").items()])
def helpers(request, tmp_path_factory):
    """The helper functions of algorithms/iccs/iccs.c, exported, as a ctypes library:
    once per variant of instances.json, with that variant's defines."""
    library = tmp_path_factory.mktemp("iccs") / "iccs_helpers.so"
    cc = shlex.split(os.environ.get("CC", "cc"))
    command = cc + ["-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-O2", "-fPIC", "-shared",
                    *request.param,
                    "-o", str(library), str(ICCS / "iccs.c"), str(ICCS / ".." / "sm3" / "sm3.c")]
    built = subprocess.run(command, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    lib = ctypes.CDLL(str(library))
    u64, buf = ctypes.c_uint64, ctypes.c_char_p
    lib.iccs_sm3_length_field.argtypes, lib.iccs_sm3_length_field.restype = [u64], u64
    lib.iccs_mac.argtypes, lib.iccs_mac.restype = [buf, u64, buf], None
    for name in ("iccs_sm3hash", "iccs_pseudohash"):
        getattr(lib, name).argtypes = [ctypes.c_int, buf, u64, buf]
        getattr(lib, name).restype = ctypes.c_int
    lib.iccs_pseudoXOF.argtypes, lib.iccs_pseudoXOF.restype = [u64, buf, u64, buf], ctypes.c_int
    return lib


def _message(vector) -> bytes:
    """The vector's message bytes (rebuilt from its label when the file omits them)."""
    if "msg" in vector:
        return bytes.fromhex(vector["msg"])
    assert vector["msg_label"] == "abc", vector
    return b"abc"


def _with_trailing_ones(msg: bytes, bits: int) -> bytes:
    """msg with the unused low bits of its last byte set to 1."""
    if bits % 8 == 0:
        return msg
    return msg[:-1] + bytes([msg[-1] | (0xFF >> (bits % 8))])


def _accepted(group):
    return [v for v in group if v["ret"] == 0]


def _rejected(group):
    return [v for v in group if v["ret"] != 0]


def _library(name: str) -> _core.Library:
    return _core.Library(str(ngcc.instance(name).library))


# --- the inner MAC (§2) ----------------------------------------------------------


def test_hmac_key_is_sm3hash_of_the_two_constants(vectors):
    key = ngcc.hash(SM3HASH, b"3.14159265358979") + ngcc.hash(SM3HASH, b"2.71828182845904")
    assert key.hex() == vectors["hmac_key"]["hex"]


def test_hmac_examples_through_sm3hash(vectors):
    """HMAC-SM3 built in Python from the sm3hash-256 instance reproduces the examples."""
    key = bytes.fromhex(vectors["hmac_key"]["hex"])
    ipad, opad = bytes(k ^ 0x36 for k in key), bytes(k ^ 0x5C for k in key)
    assert len(vectors["hmac_sm3_examples"]) == 2
    for v in vectors["hmac_sm3_examples"]:
        inner = ngcc.hash(SM3HASH, ipad + bytes.fromhex(v["msg"]))
        assert ngcc.hash(SM3HASH, opad + inner).hex() == v["mac"], v


def test_hmac_examples_through_iccs_mac(vectors, helpers):
    for v in vectors["hmac_sm3_examples"]:
        msg, mac = bytes.fromhex(v["msg"]), ctypes.create_string_buffer(32)
        helpers.iccs_mac(msg, 8 * len(msg), mac)
        assert mac.raw.hex() == v["mac"], v


# --- sm3hash (§1) and pseudohash (§3) ----------------------------------------------


def test_sm3hash_vectors(vectors):
    accepted = _accepted(vectors["sm3hash"])
    assert len(accepted) == 13
    for v in accepted:
        msg, bits = _message(v), v["msg_len_bits"]
        assert ngcc.hash(SM3HASH, msg, bits).hex() == v["digest"], v
        assert ngcc.hash(SM3HASH, _with_trailing_ones(msg, bits), bits).hex() == v["digest"], v


def test_pseudohash_vectors(vectors):
    accepted = _accepted(vectors["pseudohash"])
    assert sorted({v["digest_len_bits"] for v in accepted}) == [512, 768, 1024]
    assert len(accepted) == 39
    for v in accepted:
        name, msg, bits = PSEUDOHASH[v["digest_len_bits"]], _message(v), v["msg_len_bits"]
        assert ngcc.hash(name, msg, bits).hex() == v["digest"], v
        assert ngcc.hash(name, _with_trailing_ones(msg, bits), bits).hex() == v["digest"], v


def test_rejected_lengths_return_minus_4(vectors, helpers):
    """The helpers themselves return -4 for the rejected d of the vectors file."""
    cases = [(helpers.iccs_sm3hash, v) for v in _rejected(vectors["sm3hash"])]
    cases += [(helpers.iccs_pseudohash, v) for v in _rejected(vectors["pseudohash"])]
    assert len(cases) == 2
    for helper, v in cases:
        out = ctypes.create_string_buffer(b"\xa5" * 256)
        msg = _message(v)
        assert helper(v["digest_len_bits"], msg, v["msg_len_bits"], out) == v["ret"] == -4, v
        assert out.raw[:256] == b"\xa5" * 256, "a rejected call wrote its output"


def test_rejected_vectors_through_the_instances(vectors):
    cases = [(SM3HASH, v) for v in _rejected(vectors["sm3hash"])]
    cases += [(PSEUDOHASH[512], v) for v in _rejected(vectors["pseudohash"])]
    for name, v in cases:
        with pytest.raises(ngcc.HashError):
            _library(name).hash(v["digest_len_bits"], _message(v), v["msg_len_bits"])


@pytest.mark.parametrize("name", INSTANCES)
def test_wrong_digest_len_bits_is_an_error(name):
    own = ngcc.instance(name).digest_bits
    assert own == int(name.rsplit("-", 1)[1])
    for other in (8, own - 8, own + 8, 256 if own != 256 else 512, 2 * own):
        with pytest.raises(ngcc.HashError):
            _library(name).hash(other, b"abc", 24)
    assert len(_library(name).hash(own, b"abc", 24)) == own // 8


def test_instances_are_registered_as_iccs_baseline():
    for name in INSTANCES:
        inst = ngcc.instance(name)
        assert (inst.family, inst.candidate, inst.variant) == ("ICCS", "baseline", "ref"), name


def test_the_bare_names_are_the_helpers_as_shipped():
    """``ref`` (what ``pseudoXOF-512`` means, and the × pseudoXOF baseline) is built as
    the ICCS auxfunc.c computes: the plain SM3, every pseudoXOF block from scratch; the
    fast SM3 and the one-absorb pseudoXOF are variants of their own."""
    for name in INSTANCES:
        flags = {v: ngcc.instance("%s:%s" % (name, v)).cflags for v in variants("iccs")}
        assert "-DSM3_TEXTBOOK" in flags["ref"] and "-DICCS_XOF_ABSORB_ONCE" not in flags["ref"]
        assert not {"-DSM3_TEXTBOOK", "-DICCS_XOF_ABSORB_ONCE"} & set(flags["fastsm3"])
        assert "-DICCS_XOF_ABSORB_ONCE" in flags["absorb"]
        assert "-DSM3_TEXTBOOK" not in flags["absorb"]
        assert ngcc.instance(name) is ngcc.instance(name + ":ref")


def test_variants_have_labels_of_their_own():
    from ngcc.library.registry import run_labels

    chosen = [ngcc.instance("pseudoXOF-512" + suffix) for suffix in ("", ":fastsm3", ":absorb")]
    assert run_labels(chosen) == ["pseudoXOF-512", "pseudoXOF-512@fastsm3",
                                  "pseudoXOF-512@absorb"]


@pytest.mark.parametrize("variant", variant_name_params("iccs"))
def test_every_variant_reproduces_the_vectors(vectors, variant):
    cases = [(SM3HASH, v) for v in _accepted(vectors["sm3hash"])]
    cases += [(PSEUDOHASH[v["digest_len_bits"]], v) for v in _accepted(vectors["pseudohash"])]
    cases += [("pseudoXOF-%d" % v["output_len_bits"], v) for v in vectors["pseudoXOF"]
              if v["output_len_bits"] in XOF_WIDTHS]
    assert len(cases) == 13 + 39 + 8
    for name, v in cases:
        expected = v["digest"] if "digest" in v else v["output"]
        digest = ngcc.hash("%s:%s" % (name, variant), _message(v), v["msg_len_bits"])
        assert digest.hex() == expected, (name, v)


@pytest.mark.parametrize("name", ["sm3hash-256", "pseudohash-512", "pseudoXOF-512",
                                  "pseudoXOF-1024"])
def test_every_variant_writes_the_same_kat_file(name, tmp_path):
    """KAT_2_12 (every length 0..4096 bits) of each variant equals ``ref``'s byte for
    byte: the variants differ in speed only."""
    files = {}
    for variant in variants("iccs"):
        [result] = ngcc.kat.check("%s:%s" % (name, variant), files=("2_12",),
                                  out_dir=tmp_path / variant, keep=True, progress=False)
        assert [f.verdict for f in result.files] == ["NOKAT"], result
        [path] = (tmp_path / variant).glob("baseline/*/KAT_2_12_%s.txt" % name)
        files[variant] = path.read_bytes()
    assert len(files["ref"]) > 100_000
    assert all(content == files["ref"] for content in files.values()), \
        [v for v, content in files.items() if content != files["ref"]]


# --- pseudoXOF (§4) ------------------------------------------------------------------


def test_pseudoxof_vectors_through_the_instances(vectors):
    checked = 0
    for v in vectors["pseudoXOF"]:
        n = v["output_len_bits"]
        if n not in XOF_WIDTHS:
            continue
        msg, bits = _message(v), v["msg_len_bits"]
        assert ngcc.hash("pseudoXOF-%d" % n, msg, bits).hex() == v["output"], v
        assert ngcc.hash("pseudoXOF-%d" % n, _with_trailing_ones(msg, bits), bits).hex() \
            == v["output"], v
        checked += 1
    assert checked == 8  # 4 messages x widths 256 and 1024


def test_pseudoxof_vectors_through_the_helper(vectors, helpers):
    """Every output width of the file, including 0, 1, 7, 8, 255, 257 and 600 bits
    that no instance has; bytes after ceil(n/8) must stay untouched."""
    assert len(vectors["pseudoXOF"]) == 36
    for v in vectors["pseudoXOF"]:
        n, msg, bits = v["output_len_bits"], _message(v), v["msg_len_bits"]
        size = (n + 7) // 8
        for m in (msg, _with_trailing_ones(msg, bits)):
            out = ctypes.create_string_buffer(b"\xa5" * (size + 16))
            assert helpers.iccs_pseudoXOF(n, m, bits, out) == v["ret"] == 0, v
            assert out.raw[:size].hex() == v["output"], v
            assert out.raw[size:size + 16] == b"\xa5" * 16, "wrote past ceil(n/8) bytes"


def test_pseudoxof_widths_are_prefixes_of_each_other():
    messages = [(b"", 0), (b"abc", 24), (b"\x3b\xd8", 13), (os.urandom(200), 1597)]
    for msg, bits in messages:
        longest = ngcc.hash("pseudoXOF-%d" % XOF_WIDTHS[-1], msg, bits)
        for width in XOF_WIDTHS[:-1]:
            assert ngcc.hash("pseudoXOF-%d" % width, msg, bits) == longest[:width // 8]


def test_pseudoxof_256_is_sm3hash_with_counter_1():
    """§4: pseudoXOF(256, msg) = sm3hash(msg || 00000001), bit-level concatenation."""
    # 13 bits 0011 1011 1101 1 followed by the 32-bit counter 1.
    msg, bits = b"\x3b\xd8", 13
    joined = (int.from_bytes(msg, "big") >> 3 << 32 | 1) << 3
    assert ngcc.hash("pseudoXOF-256", msg, bits) == ngcc.hash(
        SM3HASH, joined.to_bytes(6, "big"), bits + 32)


# --- reading no more than the message ---------------------------------------------


@pytest.mark.parametrize("name", INSTANCES)
def test_never_reads_past_the_message(name):
    cases = [(os.urandom((bits + 7) // 8), bits) for bits in (0, 1, 7, 8, 9, 447, 448, 513)]
    assert hash_before_guard_page(name, cases) == [ngcc.hash(name, m, b) for m, b in cases]


# --- the long-message quirk (§0) -------------------------------------------------------


def _spec_length_field(bits: int) -> int:
    """§0 in Python: low word bits mod 2^32, high word ((bits//512 >> 32) << 9) mod 2^32."""
    return ((bits // 512 >> 32 << 9) % 2**32) << 32 | bits % 2**32


def test_quirky_length_field_matches_the_spec(helpers):
    boundaries = [0, 1, 2**32 - 8192, 2**32 - 1, 2**32, 2**32 + 7, 2**33, 2**40 + 3,
                  2**41 - 1, 2**41, 2**41 + 2**32 + 5, 2**50 + 2**35, 2**63, 2**64 - 1]
    for bits in boundaries:
        assert helpers.iccs_sm3_length_field(bits) == _spec_length_field(bits), bits
    assert all(helpers.iccs_sm3_length_field(b) == b for b in (0, 1, 2**32 - 1))
    assert helpers.iccs_sm3_length_field(2**32) == 0 != 2**32
    assert helpers.iccs_sm3_length_field(2**33 + 5) == 5


def _zero_message(bits: int, tail: bytes = b"") -> memoryview:
    """bits zero bits then tail, in an anonymous mapping: untouched pages are the
    kernel's shared zero page, so this allocates (almost) nothing."""
    size = bits // 8 + len(tail)
    area = mmap.mmap(-1, size)
    area[bits // 8:size] = tail
    return memoryview(area)


@pytest.mark.slow
def test_sm3hash_long_message_quirk(vectors):
    """The three all-zero vectors of §0 (2 GiB of SM3 in total)."""
    quirk = vectors["sm3hash_long_message_quirk"]
    assert [v["msg_len_bits"] for v in quirk] == [2**32 - 8192, 2**32, 2**33]
    for v in quirk:
        assert v["msg"] == "all-zero"
        digest = ngcc.hash(SM3HASH, _zero_message(v["msg_len_bits"]), v["msg_len_bits"])
        assert digest.hex() == v["official_sm3hash"], v["msg_len_bits"]


@pytest.mark.slow
def test_pseudohash_and_pseudoxof_carry_the_quirk():
    """Above 2^32 bits pseudoXOF and pseudohash use the same quirky SM3 as sm3hash:
    pseudoXOF-256(m) = sm3hash(m || 00000001) (which is not standard SM3 there) and
    pseudohash-512(m)[:32] = sm3hash(m || 0200), for m = 2^32 zero bits."""
    bits = 2**32
    with_counter = _zero_message(bits, b"\x00\x00\x00\x01")
    expected = ngcc.hash(SM3HASH, with_counter)
    assert ngcc.hash("pseudoXOF-256", with_counter, bits) == expected
    assert ngcc.hash("SM3", with_counter) != expected
    with_tag = _zero_message(bits, b"\x02\x00")
    assert ngcc.hash(PSEUDOHASH[512], with_tag, bits)[:32] == ngcc.hash(SM3HASH, with_tag)
