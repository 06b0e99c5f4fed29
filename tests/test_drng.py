"""The SM3 DRNG of the KAT generator (algorithms/drng/sm3_drng.c): the spec's vectors, and
its blocks checked against the separate SM3 instance library."""

from __future__ import annotations

import json

import pytest

import ngcc
from ngcc import _core

KAT_SEEDS = {tag: (tag * 8).encode() for tag in ("KAT_2_12", "KAT_2_23", "KAT_2_33", "KAT_Loop")}


def _cases(spec_dir):
    data = json.loads((spec_dir / "drng" / "drng_vectors.json").read_text())
    return data["cases"]


def _state(state: dict) -> tuple[str, str, str]:
    return state["V"], state["C"], state["reseed_counter"]


def test_every_vector_of_drng_vectors_json(spec_dir):
    cases = _cases(spec_dir)
    assert len(cases) == 6
    checked = 0
    for case in cases:
        drng = _core.Drng(bytes.fromhex(case["seed"]))
        assert tuple(x.hex() for x in drng.state) == _state(case["after_instantiate"]), case["name"]
        for number, call in enumerate(case["calls"]):
            where = "%s call %d (%d bits)" % (case["name"], number, call["bits"])
            assert drng.generate(call["bits"]).hex() == call["output"], where
            assert tuple(x.hex() for x in drng.state) == _state(call["state_after"]), where
            checked += 1
    assert checked == 42


def test_vectors_leave_the_byte_after_the_output_untouched(spec_dir):
    for case in _cases(spec_dir):
        drng = _core.Drng(bytes.fromhex(case["seed"]))
        for call in case["calls"]:
            size = (call["bits"] + 7) // 8
            buffer = bytearray(b"\xa5" * (size + 1))
            drng.generate_into(buffer, call["bits"])
            assert buffer[:size].hex() == call["output"]
            assert call["untouched_after"] and buffer[size] == 0xA5


def test_kat_seeds_are_the_tag_eight_times(spec_dir):
    seeds = {case["name"]: bytes.fromhex(case["seed"]) for case in _cases(spec_dir)}
    for tag, seed in KAT_SEEDS.items():
        assert seeds[tag] == seed


@pytest.mark.parametrize("blocks", [1, 7, 8, 9, 16, 1003])
def test_output_blocks_are_sm3_of_v_plus_i(blocks):
    """Block i of one call is SM3(V + i mod 2^440), checked with the SM3 instance library
    (sm3.c, not the DRNG's own eight-at-a-time SM3)."""
    drng = _core.Drng(b"any seed, any length")
    v = int.from_bytes(drng.state[0], "big")
    out = drng.generate(256 * blocks)
    for i in range(blocks):
        message = ((v + i) % (1 << 440)).to_bytes(55, "big")
        assert out[32 * i:32 * i + 32] == ngcc.hash("SM3", message), "block %d" % i


def test_partial_last_byte_keeps_its_top_bits_only():
    whole = _core.Drng(b"seed").generate(16)
    for bits in range(9, 16):
        part = _core.Drng(b"seed").generate(bits)
        mask = (0xFF << (16 - bits)) & 0xFF
        assert part == bytes([whole[0], whole[1] & mask]), bits


def test_one_call_is_a_prefix_of_a_longer_one_but_two_calls_are_not_one():
    long = _core.Drng(b"seed").generate(4096)
    assert _core.Drng(b"seed").generate(1000) == long[:125]
    two = _core.Drng(b"seed")
    assert two.generate(8) + two.generate(8) != long[:2]


def test_zero_bit_call_only_advances_the_state():
    drng = _core.Drng(b"seed")
    before = drng.state
    assert drng.generate(0) == b""
    after = drng.state
    assert after[0] != before[0] and after[1] == before[1]
    assert int.from_bytes(after[2], "big") == int.from_bytes(before[2], "big") + 1


def test_bad_arguments_are_clear_errors():
    drng = _core.Drng(b"")
    with pytest.raises(ValueError, match="bits must be >= 0"):
        drng.generate(-1)
    with pytest.raises(ValueError, match="buffer"):
        drng.generate_into(bytearray(2), 17)
    with pytest.raises(TypeError):
        drng.generate_into(b"read-only", 8)
    with pytest.raises(TypeError):
        _core.Drng("not bytes")
