"""Generate rcon_bitsliced.h, rcon_bytes.h and sbox_basis.h: Wish's constant tables.

Two things come from the spec's data files (docs/spec/wish/):

* the round constants of ``rcon.hex`` (spec/wish.md §7), bitsliced as lane 0 of a
  batch (the layout of ``aes_bitsliced.h``), so a constant is added with 8 XORs;
* the two 8x8 bit matrices of the S-box circuit: AES field -> tower field
  GF(((2^2)^2)^2), and tower field -> S-box output (inverse basis change fused
  with the affine map), derived from ``sbox.hex``.

The tower is fixed by the C code (``aes_bitsliced.c``): GF(4) = GF(2)[W]/(W^2+W+1),
GF(16) = GF(4)[Z]/(Z^2+Z+N) with N = W+1, GF(256) = GF(16)[Y]/(Y^2+Y+L) with
L = W*Z. A tower element is 8 bits: bit 4*y + 2*z + w is the coefficient of
Y^y Z^z W^w. The AES field maps into the tower through any root of the AES
polynomial x^8+x^4+x^3+x+1; of the eight roots the one whose two matrices need
the fewest XORs is taken.

Usage: python3 gen_tables.py [--spec DIR] [--check]
(--check compares with the committed headers instead of writing them; exit 1 if stale.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SPEC = HERE.parents[1] / "docs" / "spec" / "wish"
AES_POLYNOMIAL_POWERS = (8, 4, 3, 1, 0)  # x^8 + x^4 + x^3 + x + 1
GF4_N = 0b11  # W + 1
GF16_L = 0b1000  # W*Z


def batch_position(byte: int, lane: int) -> int:
    """BATCH_POSITION of aes_bitsliced.h: 16*row + 4*col + lane, byte = 4*col + row."""
    return 16 * (byte & 3) + 4 * (byte >> 2) + lane


def bitslice_lane0(lane: bytes) -> list[int]:
    """The eight words of a batch whose lane 0 holds ``lane`` and lanes 1..3 zero."""
    words = [0] * 8
    for byte, value in enumerate(lane):
        for bit in range(8):
            words[bit] |= ((value >> bit) & 1) << batch_position(byte, 0)
    return words


def _gf4_mul(a: int, b: int) -> int:
    a1, a0, b1, b0 = a >> 1, a & 1, b >> 1, b & 1
    return ((a1 & b1) ^ (a1 & b0) ^ (a0 & b1)) << 1 | (a1 & b1) ^ (a0 & b0)


def _gf16_mul(a: int, b: int) -> int:
    a1, a0, b1, b0 = a >> 2, a & 3, b >> 2, b & 3
    high = _gf4_mul(a1, b1)
    return (high ^ _gf4_mul(a1, b0) ^ _gf4_mul(a0, b1)) << 2 | _gf4_mul(high, GF4_N) ^ _gf4_mul(
        a0, b0)


def tower_mul(a: int, b: int) -> int:
    """Multiply two elements of the tower field GF(((2^2)^2)^2)."""
    a1, a0, b1, b0 = a >> 4, a & 15, b >> 4, b & 15
    high = _gf16_mul(a1, b1)
    return (high ^ _gf16_mul(a1, b0) ^ _gf16_mul(a0, b1)) << 4 | _gf16_mul(
        high, GF16_L) ^ _gf16_mul(a0, b0)


def tower_inverse(a: int) -> int:
    """a^254: the multiplicative inverse, 0 for 0."""
    result, square, exponent = 1, a, 254
    while exponent:
        if exponent & 1:
            result = tower_mul(result, square)
        square = tower_mul(square, square)
        exponent >>= 1
    return result


def _rows(columns: list[int]) -> list[int]:
    """Matrix rows (bit j of row i: input bit j feeds output bit i) from its columns."""
    return [sum(((columns[j] >> i) & 1) << j for j in range(8)) for i in range(8)]


def _apply(rows: list[int], x: int) -> int:
    return sum((bin(rows[i] & x).count("1") & 1) << i for i in range(8))


def _xor_count(rows: list[int]) -> int:
    return sum(max(bin(row).count("1") - 1, 0) for row in rows)


def tower_basis(sbox: bytes) -> tuple[list[int], list[int]]:
    """Return (TO_TOWER, FROM_TOWER) rows such that, for every byte x,
    sbox[x] == FROM_TOWER * inverse(TO_TOWER * x) ^ 0x63."""
    best: tuple[int, list[int], list[int]] | None = None
    for beta in range(256):
        powers = [1]
        for _ in range(8):
            powers.append(tower_mul(powers[-1], beta))
        root_value = 0
        for exponent in AES_POLYNOMIAL_POWERS:
            root_value ^= powers[exponent]
        if root_value:
            continue
        to_tower = _rows(powers[:8])
        back = {_apply(to_tower, x): x for x in range(256)}
        if len(back) != 256:
            continue
        # Output bit i of column j: the S-box of the AES element whose tower inverse is bit j.
        from_tower = _rows([sbox[back[tower_inverse(1 << j)]] ^ 0x63 for j in range(8)])
        if any(_apply(from_tower, tower_inverse(_apply(to_tower, x))) ^ 0x63 != sbox[x]
               for x in range(256)):
            raise AssertionError("tower S-box differs from sbox.hex (root %#04x)" % beta)
        cost = _xor_count(to_tower) + _xor_count(from_tower)
        if best is None or cost < best[0]:
            best = (cost, to_tower, from_tower)
    if best is None:
        raise AssertionError("the AES polynomial has no root in the tower field")
    return best[1], best[2]


def read_spec(spec: Path) -> tuple[list[bytes], bytes]:
    """(round constants, S-box) from rcon.hex and sbox.hex."""
    rcon = [bytes.fromhex(line) for line in (spec / "rcon.hex").read_text().split()]
    sbox = bytes.fromhex("".join((spec / "sbox.hex").read_text().split()))
    if len(rcon) != 24 or any(len(r) != 16 for r in rcon) or len(sbox) != 256:
        raise ValueError("%s: expected 24 round constants of 16 bytes and 256 S-box bytes" % spec)
    return rcon, sbox


def render(spec: Path) -> dict[str, str]:
    """The generated headers: {file name: text}."""
    rcon, sbox = read_spec(spec)
    to_tower, from_tower = tower_basis(sbox)
    basis = [
        "/* Generated by gen_tables.py from spec/wish/sbox.hex: do not edit.",
        " * The S-box basis changes of aes_bitsliced.c: bit j of row i set means",
        " * input bit j is XORed into output bit i. */",
        "#ifndef WISH_SBOX_BASIS_H",
        "#define WISH_SBOX_BASIS_H",
        "",
    ]
    basis += ["#define TO_TOWER_%d 0x%02xu" % (i, row) for i, row in enumerate(to_tower)]
    basis += ["#define FROM_TOWER_%d 0x%02xu" % (i, row) for i, row in enumerate(from_tower)]
    basis += ["", "#endif", ""]
    table = [
        "/* Generated by gen_tables.py from spec/wish/rcon.hex: do not edit. */",
        "#ifndef WISH_RCON_H",
        "#define WISH_RCON_H",
        "",
        "#include <stdint.h>",
        "",
        "/* Rcon[k] (spec/wish.md §7) as lane 0 of a batch: word b holds bit b of its bytes. */",
        "static const uint64_t WISH_RCON[24][8] = {",
    ]
    for k, constant in enumerate(rcon):
        words = ["0x%016xu" % w for w in bitslice_lane0(constant)]
        table.append("    /* Rcon[%d] = %s */" % (k, constant.hex()))
        table.append("    {%s," % ", ".join(words[:4]))
        table.append("     %s}," % ", ".join(words[4:]))
    table += ["};", "", "#endif", ""]
    plain = [
        "/* Generated by gen_tables.py from spec/wish/rcon.hex: do not edit. */",
        "#ifndef WISH_RCON_BYTES_H",
        "#define WISH_RCON_BYTES_H",
        "",
        "/* Rcon[k] (spec/wish.md §7) in lane byte order, for permutation_aesni.c. */",
        "static const unsigned char WISH_RCON_BYTES[24][16] = {",
    ]
    plain += ["    {%s}," % ", ".join("0x%02x" % b for b in constant) for constant in rcon]
    plain += ["};", "", "#endif", ""]
    return {"sbox_basis.h": "\n".join(basis), "rcon_bitsliced.h": "\n".join(table),
            "rcon_bytes.h": "\n".join(plain)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC,
                        help="folder with rcon.hex and sbox.hex (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed header; exit 1 if it differs")
    args = parser.parse_args(argv)
    stale = 0
    for name, text in render(args.spec).items():
        path = HERE / name
        if not args.check:
            path.write_text(text)
        elif not path.exists() or path.read_text() != text:
            sys.stderr.write("%s is stale: run gen_tables.py\n" % path)
            stale = 1
    return stale


if __name__ == "__main__":
    sys.exit(main())
