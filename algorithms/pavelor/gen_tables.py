"""Generate Pavelor's two constant headers from the spec's data files.

    python gen_tables.py [SPEC_DIR]           write the generated headers here
    python gen_tables.py [SPEC_DIR] --check   exit 1 if the committed headers differ

SPEC_DIR (default: ``docs/spec/pavelor`` of this repository) holds aes_sbox.hex,
round_constants.hex and round_wiring.json. The headers are committed;
tests/test_pavelor.py regenerates them and compares, so they cannot drift from the
data files.

sbox_circuit.h -- a bitsliced AES S-box: AND/XOR/NOT gates only, no table, no
branch. It is derived here (not copied) by the classic route: GF(2^8) inversion
in the tower field GF(((2^2)^2)^2) with normal bases at every level, where an
inverse costs three GF(2^4) multiplications and one GF(2^4) inversion, each in
turn made of GF(2^2) products (3 ANDs each, Karatsuba). Every signal is held as
its truth table over the 256 input bytes, so each linear layer is found by
Gaussian elimination and shortened by Paar's greedy common-pair elimination, and
the finished circuit is checked against aes_sbox.hex on all 256 inputs.

round_tables.h -- where the 20 state words sit in the bitsliced state, the
gathers that implement the round wiring of round_wiring.json, and the round
constants of round_constants.hex in bitsliced form.

round_aesni.h, round_neon.h -- the permutation unrolled round by round for the
AES-NI variant (``opt``) and the AArch64 one (``neon``: AESE + AESMC), one
schedule written for two instruction sets (``UNROLLED``).
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SPEC = HERE.parents[1] / "docs" / "spec" / "pavelor"
ALL = (1 << 256) - 1  # truth table of the constant 1
GROUPS, LANES, PLANES = 5, 4, 8

# Tower-field parameters: mu (GF(4)) and lam (GF(16)) in normal-basis bits,
# beta = the tower-field root of the AES polynomial that defines the basis change,
# and the seed of Paar's random tie-breaking. All choices give a correct S-box;
# these gave the fewest gates in a one-off search (36 AND + 97 XOR/NOT).
TOWER_MU, TOWER_LAM, TOWER_BETA, PAAR_SEED, PAAR_RUNS = 2, 2, 232, 0, 200

# Physical lane (4 * group + lane) of each state word W[0..19]. Any assignment is
# correct; this one, from a one-off search, minimises the masks, shifts and XORs
# the round wiring costs (48 operations per bit plane per round).
LANE_OF_WORD = (16, 8, 13, 9, 19, 11, 1, 5, 3, 7, 15, 2, 6, 14, 18, 10, 12, 17, 0, 4)


# ------------------------------------------------------------------ data files

def read_hex_rows(path: Path) -> list[bytes]:
    """The non-comment lines of a .hex data file, as bytes."""
    lines = path.read_text().splitlines()
    return [bytes.fromhex(s.strip()) for s in lines if s.strip() and not s.startswith("#")]


def read_sbox(spec: Path) -> bytes:
    sbox = b"".join(read_hex_rows(spec / "aes_sbox.hex"))
    if len(sbox) != 256:
        raise ValueError("aes_sbox.hex: expected 256 entries, found %d" % len(sbox))
    return sbox


def read_round_constants(spec: Path) -> list[bytes]:
    rows = read_hex_rows(spec / "round_constants.hex")
    if len(rows) != 24 or any(len(r) != 16 for r in rows):
        raise ValueError("round_constants.hex: expected 24 rows of 16 bytes")
    return rows


def read_wiring(spec: Path) -> tuple[dict[int, int], dict[int, int], tuple[int, int]]:
    """(aes input of each output word, key of each output word, (rc output, rc source))."""
    data = json.loads((spec / "round_wiring.json").read_text())
    aes_input, key, rc = {}, {}, None
    for entry in data["wiring"]:
        if entry["op"] == "aes_round":
            aes_input[entry["out"]], key[entry["out"]] = entry["data"], entry["key"]
        elif entry["op"] == "xor_rc":
            rc = (entry["out"], entry["src"])
        else:
            raise ValueError("round_wiring.json: unknown op %r" % entry["op"])
    if rc is None or len(aes_input) != 19:
        raise ValueError("round_wiring.json: expected 19 aes_round entries and one xor_rc")
    return aes_input, key, rc


# ------------------------------------------------------- tower-field arithmetic

def gf4_mul(e: int, f: int) -> int:
    """GF(4) in the normal basis {w^2, w} (bit 1 = w^2, bit 0 = w); 1 = 0b11."""
    e1, e0, f1, f0 = e >> 1, e & 1, f >> 1, f & 1
    shared = (e1 ^ e0) & (f1 ^ f0)
    return ((shared ^ (e1 & f1)) << 1) | (shared ^ (e0 & f0))


def gf4_square(e: int) -> int:
    """Squaring in a normal basis swaps the coordinates (and is also the inverse)."""
    return ((e & 1) << 1) | (e >> 1)


def gf16_mul(a: int, b: int, mu: int = TOWER_MU) -> int:
    """GF(16) = GF(4)(Z), Z^2 + Z + mu = 0, normal basis {Z^4, Z}."""
    a1, a0, b1, b0 = a >> 2, a & 3, b >> 2, b & 3
    shared = gf4_mul(mu, gf4_mul(a1 ^ a0, b1 ^ b0))
    return ((gf4_mul(a1, b1) ^ shared) << 2) | (gf4_mul(a0, b0) ^ shared)


def gf256_mul(a: int, b: int, lam: int = TOWER_LAM) -> int:
    """GF(256) = GF(16)(Y), Y^2 + Y + lam = 0, normal basis {Y^16, Y}."""
    a1, a0, b1, b0 = a >> 4, a & 15, b >> 4, b & 15
    shared = gf16_mul(lam, gf16_mul(a1 ^ a0, b1 ^ b0))
    return ((gf16_mul(a1, b1) ^ shared) << 4) | (gf16_mul(a0, b0) ^ shared)


def aes_to_tower() -> list[int]:
    """phi: AES field byte -> tower element, the linear map sending x to TOWER_BETA.

    TOWER_BETA must be a root of x^8 + x^4 + x^3 + x + 1 in the tower field, so
    phi is a field isomorphism and inverses can be taken on the tower side.
    """
    one = 0xFF  # 1 in normal-basis coordinates
    powers = [one]
    for _ in range(8):
        powers.append(gf256_mul(powers[-1], TOWER_BETA))
    if powers[8] ^ powers[4] ^ powers[3] ^ powers[1] ^ powers[0]:
        raise ValueError("TOWER_BETA is not a root of the AES polynomial")

    def phi(x: int) -> int:
        value = 0
        for i in range(8):
            if x >> i & 1:
                value ^= powers[i]
        return value

    return [phi(x) for x in range(256)]


# ------------------------------------------------------------ circuit synthesis

def truth_table(values: list[int], bit: int) -> int:
    """Truth table (bit x set iff bit ``bit`` of values[x]) as a 256-bit integer."""
    return sum(1 << x for x, v in enumerate(values) if v >> bit & 1)


def express(basis: list[int], target: int) -> frozenset[int]:
    """Indices of basis signals whose XOR is ``target`` (Gaussian elimination)."""
    pivots: dict[int, tuple[int, set[int]]] = {}
    for index, signal in enumerate(basis):
        used = {index}
        while signal:
            top = signal.bit_length() - 1
            if top not in pivots:
                pivots[top] = (signal, used)
                break
            signal ^= pivots[top][0]
            used ^= pivots[top][1]
    used = set()
    while target:
        top = target.bit_length() - 1
        if top not in pivots:
            raise ValueError("target outside the span of the layer's basis")
        target ^= pivots[top][0]
        used ^= pivots[top][1]
    return frozenset(used)


def paar(sums: list[frozenset[int]], first_new: int, rng: random.Random):
    """Paar's greedy XOR minimisation: repeatedly compute the pair of signals that
    occurs in most sums. Returns (new XOR pairs in order, each sum's final signal)."""
    work = [set(s) for s in sums]
    pairs: list[tuple[int, int]] = []
    while True:
        count: dict[tuple[int, int], int] = {}
        for s in work:
            ordered = sorted(s)
            for i, x in enumerate(ordered):
                for y in ordered[i + 1:]:
                    count[(x, y)] = count.get((x, y), 0) + 1
        if not count:
            return pairs, [min(s) for s in work]
        best = max(count.values())
        pair = rng.choice(sorted(p for p, c in count.items() if c == best))
        new = first_new + len(pairs)
        pairs.append(pair)
        for s in work:
            if pair[0] in s and pair[1] in s:
                s -= set(pair)
                s.add(new)


class CircuitBuilder:
    """Gates over named 64-bit signals; each name also carries its truth table."""

    def __init__(self) -> None:
        self.table = {"u%d" % b: truth_table(list(range(256)), b) for b in range(8)}
        self.table["ONE"] = ALL
        self.gates: list[tuple[str, str, str, str]] = []  # (dest, op, a, b)
        self.outputs: list[str] = []

    def _emit(self, op: str, a: str, b: str = "") -> str:
        dest = "%s%d" % ("p" if op == "and" else "t", len(self.gates))
        self.table[dest] = {"and": lambda: self.table[a] & self.table[b],
                            "xor": lambda: self.table[a] ^ self.table[b],
                            "not": lambda: ALL ^ self.table[a]}[op]()
        self.gates.append((dest, op, a, b))
        return dest

    def linear(self, basis: list[str], targets: list[int]) -> list[str]:
        """Compute each target as an XOR of basis signals, sharing common pairs."""
        tables = [self.table[name] for name in basis]
        sums = sorted({express(tables, t) for t in targets}, key=sorted)
        rng = random.Random(PAAR_SEED)
        runs = [paar(sums, len(basis), rng) for _ in range(PAAR_RUNS)]
        pairs, finals = min(runs, key=lambda run: len(run[0]))
        signal = list(basis)
        for x, y in pairs:
            a, b = signal[x], signal[y]
            if "ONE" in (a, b):  # XOR with the constant 1: a NOT
                signal.append(self._emit("not", b if a == "ONE" else a))
            else:
                signal.append(self._emit("xor", a, b))
        name_of = {s: signal[f] for s, f in zip(sums, finals, strict=True)}
        return [name_of[express(tables, t)] for t in targets]

    def ands(self, lhs: list[str], rhs: list[str]) -> list[str]:
        return [self._emit("and", a, b) for a, b in zip(lhs, rhs, strict=True)]


def gf4_forms(values: list[int]) -> list[int]:
    """The three linear forms a GF(4) product consumes: hi, lo, hi ^ lo."""
    hi, lo = truth_table(values, 1), truth_table(values, 0)
    return [hi, lo, hi ^ lo]


def gf16_forms(values: list[int]) -> list[int]:
    """The nine forms a Karatsuba GF(16) product consumes: those of v1, v0, v1 + v0."""
    return (gf4_forms([v >> 2 for v in values]) + gf4_forms([v & 3 for v in values])
            + gf4_forms([(v >> 2) ^ (v & 3) for v in values]))


def bits(values: list[int], count: int) -> list[int]:
    return [truth_table(values, b) for b in range(count)]


def synthesise_sbox(sbox: bytes) -> CircuitBuilder:
    """Build the S-box circuit; raises AssertionError if it is not exactly ``sbox``.

    x -> a = phi(x) = a1 Y^16 + a0 Y. Its inverse is (a0 t) Y^16 + (a1 t) Y with
    t = 1 / (a1 a0 + lam (a1 + a0)^2); the inverse of n = n1 Z^4 + n0 Z in GF(16)
    is (n0 s) Z^4 + (n1 s) Z with s = (n1 n0 + mu (n1 + n0)^2)^2 in GF(4).
    The output layer applies phi^-1 and the S-box's affine map in one go.
    """
    tower = aes_to_tower()
    a1, a0 = [v >> 4 for v in tower], [v & 15 for v in tower]
    lin = [gf16_mul(TOWER_LAM, gf16_mul(h ^ lo, h ^ lo)) for h, lo in zip(a1, a0, strict=True)]
    norm = [x ^ gf16_mul(h, lo) for x, h, lo in zip(lin, a1, a0, strict=True)]
    n1, n0 = [v >> 2 for v in norm], [v & 3 for v in norm]
    lin4 = [gf4_mul(TOWER_MU, gf4_square(h ^ lo)) for h, lo in zip(n1, n0, strict=True)]
    inv4 = [gf4_square(x ^ gf4_mul(h, lo)) for x, h, lo in zip(lin4, n1, n0, strict=True)]
    theta = [(gf4_mul(lo, i) << 2) | gf4_mul(h, i) for h, lo, i in zip(n1, n0, inv4, strict=True)]

    c = CircuitBuilder()
    inputs = ["u%d" % b for b in range(8)] + ["ONE"]
    top = c.linear(inputs, gf16_forms(a1) + gf16_forms(a0) + bits(lin, 4))
    f_a1, f_a0, f_lin = top[0:9], top[9:18], top[18:22]
    mid = c.linear(f_lin + c.ands(f_a1, f_a0), gf4_forms(n1) + gf4_forms(n0) + bits(lin4, 2))
    f_n1, f_n0, f_lin4 = mid[0:3], mid[3:6], mid[6:8]
    f_inv4 = c.linear(f_lin4 + c.ands(f_n1, f_n0), gf4_forms(inv4))
    f_theta = c.linear(c.ands(f_n0 + f_n1, f_inv4 + f_inv4), gf16_forms(theta))
    products = c.ands(f_a0 + f_a1, f_theta + f_theta)
    outputs = c.linear(products + ["ONE"], bits(list(sbox), 8))
    for b, name in enumerate(outputs):
        if c.table[name] != truth_table(list(sbox), b):
            raise AssertionError("S-box circuit output bit %d is wrong" % b)
    c.outputs = outputs
    return c


# ------------------------------------------------------------------ emitting C

HEADER_NOTE = "/* Generated by gen_tables.py from docs/spec/pavelor/%s: do not edit. */\n"


def sbox_source(sbox: bytes, data_file: str, include: str, function: str, words: str,
                straight: int = 0) -> str:
    """C source of the S-box circuit: ``void function(uint64_t s[8][words])``.

    ``words`` 64-bit words per bit plane (a macro of ``include``, or a number). With
    ``straight`` = 0 the gates run in a loop over the words, which a compiler turns
    into vector code when the count is even; with ``straight`` = n (the number of
    words) they are written out for every word in turn, so that a compiler can pair
    words in vector registers and still run an odd one on the integer units, in
    one stream (used for Pavelor's 5 groups). ``data_file`` names the S-box table
    in the header note."""
    c = synthesise_sbox(sbox)
    count = {op: sum(1 for g in c.gates if g[1] == op) for op in ("and", "xor", "not")}
    ops = {"and": "%s & %s", "xor": "%s ^ %s", "not": "~%s"}
    gates = ["const uint64_t u%d = s[%d][W];" % (b, b) for b in range(8)]
    for dest, op, a, b in c.gates:
        args = (a, b) if op != "not" else (a,)
        gates.append("const uint64_t %s = %s;" % (dest, ops[op] % args))
    gates += ["s[%d][W] = %s;" % (b, name) for b, name in enumerate(c.outputs)]
    if straight:
        body = ["    " + re.sub(r"\b([upt]\d+)\b", r"\1_%d" % w, line).replace("[W]", "[%d]" % w)
                for line in gates for w in range(straight)]
    else:
        body = ["    int w;", "", "    for (w = 0; w < %s; w++) {" % words]
        body += ["        " + line.replace("[W]", "[w]") for line in gates] + ["    }"]
    return ("/* Generated by gen_tables.py from %s: do not edit. */\n" % data_file + """
/* The AES S-box (SubBytes) on bitsliced words: s[b][w] holds bit b of the bytes
 * in word w. Only AND, XOR and NOT on whole words, so the time taken and the
 * memory touched never depend on the data. %s
 *
 * Derived in algorithms/pavelor/gen_tables.py: inversion in the tower field
 * GF(((2^2)^2)^2) with normal bases (mu = %d, lam = %d, AES root beta = %d), linear
 * layers found by Gaussian elimination on truth tables and shortened by Paar's
 * greedy pairing; the affine map and the basis changes are folded into the first
 * and last layers. %d AND, %d XOR, %d NOT per word. Checked against the S-box table
 * on all 256 inputs when generated, and by the family's tests.
 *
 * A file of its own: inlined into its caller, gcc -O2 no longer pairs the words
 * in vector registers and the circuit runs about twice as slow.
 */
#include "%s"

void %s(uint64_t s[8][%s])
{
%s
}
""" % ("The gates are written out word by word (%d words): compilers pair words in "
       "vector registers and run the odd one on the integer units alongside." % straight
       if straight else "A loop over the words, which compilers turn into vector code.",
       TOWER_MU, TOWER_LAM, TOWER_BETA, count["and"], count["xor"], count["not"],
       include, function, words, "\n".join(body)))


def lane_terms(sources: dict[int, int]) -> dict[int, list[tuple[int, int, list[int]]]]:
    """Moves that put word sources[j] into the lane of word j, grouped per
    destination group as (source group, lane shift, source lanes)."""
    grouped: dict[tuple[int, int, int], list[int]] = {}
    for dest, src in sorted(sources.items()):
        d, s = LANE_OF_WORD[dest], LANE_OF_WORD[src]
        grouped.setdefault((d // LANES, s // LANES, d % LANES - s % LANES), []).append(s % LANES)
    terms: dict[int, list[tuple[int, int, list[int]]]] = {g: [] for g in range(GROUPS)}
    for (dest_group, src_group, shift), lanes in sorted(grouped.items()):
        terms[dest_group].append((src_group, shift, sorted(lanes)))
    return terms


def term_code(src_group: int, shift: int, lanes: list[int]) -> str:
    word = "w[b][%d]" % src_group
    if shift == 0 and len(lanes) == LANES:
        return word
    mask = " | ".join("LANE(%d)" % lane for lane in lanes)
    masked = "(%s & %s)" % (word, mask if len(lanes) == 1 else "(%s)" % mask)
    if shift == 0:
        return masked
    return "(%s %s %d)" % (masked, "<<" if shift > 0 else ">>", abs(shift))


def word_in_lane() -> list[list[int]]:
    table = [[0] * LANES for _ in range(GROUPS)]
    for word, lane in enumerate(LANE_OF_WORD):
        table[lane // LANES][lane % LANES] = word
    return table


def gather_function(name: str, doc: str, sources: dict[int, int], assign: str) -> str:
    lines = ["/* %s */" % doc,
             "static void %s(bitsliced x, bitsliced w)" % name,
             "{", "    int b;", "", "    for (b = 0; b < 8; b++) {"]
    words = word_in_lane()
    for group, terms in lane_terms(sources).items():
        moves = ", ".join("N[%d] <- %s" % (j, "W[%d]" % sources[j] if j in sources else "0")
                          for j in words[group])
        lines.append("        /* %s */" % moves)
        code = [term_code(*t) for t in terms]
        lines.append("        x[b][%d] %s %s;" % (group, assign, "\n            ^ ".join(code)))
    lines += ["    }", "}"]
    return "\n".join(lines)


def round_constant_planes(constants: list[bytes], rc_word: int) -> list[list[int]]:
    """RC[t] ^ 0x63 (every byte) bitsliced into the lane of word rc_word."""
    group, lane = divmod(LANE_OF_WORD[rc_word], LANES)
    planes = []
    for rc in constants:
        words = [0] * PLANES
        for index, byte in enumerate(rc):
            column, row = divmod(index, 4)
            for b in range(PLANES):
                if (byte ^ 0x63) >> b & 1:
                    words[b] |= 1 << (16 * row + 4 * column + lane)
        planes.append(words)
    return planes, group


def round_header(spec: Path) -> str:
    aes_input, key, (rc_out, rc_src) = read_wiring(spec)
    planes, rc_group = round_constant_planes(read_round_constants(spec), rc_out)
    words = word_in_lane()
    lane_rows = ",\n".join("    {%s}" % ", ".join("%2d" % w for w in row) for row in words)
    rc_rows = ",\n".join("    {%s}" % ",\n     ".join(
        ", ".join("UINT64_C(0x%016x)" % v for v in row[i:i + 2]) for i in range(0, 8, 2))
        for row in planes)
    keys = dict(key)
    keys[rc_out] = rc_src
    return (HEADER_NOTE % "round_wiring.json and round_constants.hex" + """
/* The round wiring (spec 3.3) and round constants (spec 3.4) for the bitsliced
 * state of bitsliced.h: GROUPS groups of 4 lanes, one state word per lane.
 * LANE(l) selects lane l in a bit plane (bit 16 row + 4 column + lane).
 */
#ifndef PAVELOR_ROUND_TABLES_H
#define PAVELOR_ROUND_TABLES_H

#include "bitsliced.h"

#define LANE(l) (UINT64_C(0x1111111111111111) << (l))

/* WORD_IN_LANE[g][l]: the state word W[i] kept in lane l of group g. The
 * placement is free; this one keeps the gathers below short. */
static const unsigned char WORD_IN_LANE[GROUPS][4] = {
%s
};

%s

%s

/* The group whose lane holds N[%d] = W[%d] ^ RC[t]. */
#define RC_GROUP %d

/* RC_PLANES[t]: RC[t] (round_constants.hex) XOR 0x63 in every byte, bitsliced
 * into the lane of N[%d]. That lane of the gathered AES inputs is zero, and the
 * AES round of zero is 0x63 in every byte, which the extra 0x63 cancels. */
static const uint64_t RC_PLANES[24][8] = {
%s
};

#endif
""" % (lane_rows,
       gather_function("gather_aes_inputs", "x: each lane gets the AES input of its word "
                       "(the lane of N[%d] gets 0)." % rc_out, aes_input, "="),
       gather_function("add_round_keys", "x ^= each lane's key word (N[%d]: W[%d])."
                       % (rc_out, rc_src), keys, "^="),
       rc_out, rc_src, rc_group, rc_out, rc_rows))


def aesni_schedule(aes_input: dict[int, int], key: dict[int, int], rc_src: int) -> list[int]:
    """The order in which one round can overwrite its AES inputs in place.

    N[j] = AESENC(W[a(j)], W[k(j)]) may take the register of W[a(j)] once W[a(j)]
    has served as the key of its own output. "The AES output of word x meets the
    key k(j)" links the words into one chain that starts at the RC source (8) and
    ends at the word that is never an AES input (11); computing the outputs in
    chain order overwrites every word after its last use. Returns the AES inputs
    in that order."""
    meets = {aes_input[j]: key[j] for j in aes_input}
    order, word = [], rc_src
    while word in meets:
        order.append(word)
        word = meets[word]
    if len(order) != len(aes_input):
        raise ValueError("round_wiring.json: the AES inputs do not form one chain")
    return order


# How the unrolled permutation is written for each instruction set: the header's
# name, what its prose says of the round, its includes, the vector type, one AES
# round "AR(x) ^ k", the XOR, the load and the store.
_AESNI_NOTE = """ * The outputs are computed in place: N[j] overwrites the variable of its AES
 * input W[a(j)], in an order in which every word has already served as a key
 * (gen_tables.py, aesni_schedule); N[%d] goes into a spare variable, and the
 * word that is never an AES input leaves its variable to be the next spare. So
 * which variable holds which word changes from round to round, and the rounds
 * are unrolled. In place, a compiler needs no register copies (the two-operand
 * AESENC destroys its first operand), which makes the permutation about 1.6
 * times faster than a round written from one array into another."""
UNROLLED = {
    "aesni": {
        "file": "round_aesni.h", "variant": "permutation_aesni.c",
        "round": " AESENC(x, k) is exactly AR(x) ^ k (spec 3.2), so a round is\n"
                 " * N[j] = AESENC(W[a(j)], W[k(j)]) for 19 words and N[%d] = W[%d] ^ RC[t].",
        "note": _AESNI_NOTE,
        "includes": "#include <emmintrin.h>\n#include <wmmintrin.h>",
        "type": "__m128i", "function": "aesni_permutation",
        "aes": "_mm_aesenc_si128(v%d, v%d)", "xor": "_mm_xor_si128(v%d, RC(%d))",
        "load": "_mm_loadu_si128((const __m128i *)(const void *)(p))",
        "store": "_mm_storeu_si128(w + %d, v%d);",
    },
    "neon": {
        "file": "round_neon.h", "variant": "permutation_neon.c",
        "round": " AESE(x, 0) is ShiftRows(SubBytes(x)) and AESMC is MixColumns, so\n"
                 " * AR(x) ^ k (spec 3.2) is AESMC(AESE(x, 0)) ^ k and a round is\n"
                 " * N[j] = AESMC(AESE(W[a(j)], 0)) ^ W[k(j)] for 19 words and "
                 "N[%d] = W[%d] ^ RC[t].",
        "note": """ * The outputs are computed in place, in the order of round_aesni.h
 * (gen_tables.py, aesni_schedule: every word serves as a key before its
 * variable is overwritten; N[%d] goes into a spare variable), so the rounds are
 * unrolled the same way.""",
        "includes": "#include <arm_neon.h>",
        "type": "uint8x16_t", "function": "neon_permutation",
        "aes": "veorq_u8(vaesmcq_u8(vaeseq_u8(v%d, vdupq_n_u8(0))), v%d)",
        "xor": "veorq_u8(v%d, RC(%d))",
        "load": "vld1q_u8((const uint8_t *)(const void *)(p))",
        "store": "vst1q_u8((uint8_t *)(void *)(w + %d), v%d);",
    },
}


def unrolled_header(spec: Path, isa: str) -> str:
    """P for an AES-instruction variant (``UNROLLED[isa]``), unrolled, updating 21
    variables in place, and RC[t]."""
    style = UNROLLED[isa]
    aes_input, key, (rc_out, rc_src) = read_wiring(spec)
    order = aesni_schedule(aes_input, key, rc_src)
    output_of = {aes_input[j]: j for j in aes_input}
    (never_input,) = set(range(20)) - set(aes_input.values())
    holder = list(range(20))  # holder[word] = the variable that holds W[word]
    spare = 20
    lines = ["    %s %s, v20;" % (style["type"], ", ".join("v%d = LOAD(w + %d)" % (i, i)
                                                          for i in range(20)))]
    for t in range(24):
        new = [0] * 20
        lines.append("    /* round %d */" % t)
        lines.append("    v%d = %s;  /* N[%d] = W[%d] ^ RC[%d] */"
                     % (spare, style["xor"] % (holder[rc_src], t), rc_out, rc_src, t))
        new[rc_out] = spare
        for word in order:
            j = output_of[word]
            lines.append("    v%d = %s;  /* N[%d] = E(W[%d], W[%d]) */"
                         % (holder[word], style["aes"] % (holder[word], holder[key[j]]), j,
                            word, key[j]))
            new[j] = holder[word]
        spare = holder[never_input]
        holder = new
    lines += ["    " + style["store"] % (i, holder[i]) for i in range(20)]
    rc_rows = ",\n".join("    {%s}" % ", ".join("0x%02x" % b for b in rc)
                         for rc in read_round_constants(spec))
    guard = "PAVELOR_%s" % style["file"].upper().replace(".", "_")
    return (HEADER_NOTE % "round_wiring.json and round_constants.hex" + """
/* The permutation P (spec 3.3, 3.4) for %s, written out round
 * by round.%s
 *
%s
 */
#ifndef %s
#define %s

%s

/* RC[t] (spec 3.4, round_constants.hex) in memory order. */
static const unsigned char ROUND_CONSTANTS[24][16] = {
%s
};

#define LOAD(p) %s
#define RC(t) LOAD(ROUND_CONSTANTS[t])

/* w[i] = W[i] in, P(W)[i] out (unaligned). */
static void %s(%s w[20])
{
%s
}

#endif
""" % (style["variant"], style["round"] % (rc_out, rc_src),
       style["note"] % rc_out,
       guard, guard, style["includes"], rc_rows, style["load"], style["function"],
       style["type"], "\n".join(lines)))


def generate(spec: Path) -> dict[str, str]:
    """The generated headers: file name -> text."""
    return {"sbox_circuit.c": sbox_source(read_sbox(spec), "docs/spec/pavelor/aes_sbox.hex",
                                          "bitsliced.h", "pavelor_sub_bytes", "GROUPS",
                                          straight=GROUPS),
            "round_tables.h": round_header(spec),
            **{style["file"]: unrolled_header(spec, isa) for isa, style in UNROLLED.items()}}


def main(argv: list[str]) -> int:
    check = argv[-1:] == ["--check"]
    args = argv[1:-1] if check else argv[1:]
    if len(args) > 1:
        sys.stderr.write(__doc__)
        return 2
    stale = []
    for name, text in generate(Path(args[0]) if args else DEFAULT_SPEC).items():
        path = HERE / name
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        sys.stderr.write("out of date: %s (run gen_tables.py without --check)\n"
                         % ", ".join(stale))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
