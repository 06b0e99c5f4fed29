/* The key-less AES round AESR of spec/wish.md §6, bitsliced over a batch of four lanes.
 *
 * SubBytes is computed, not looked up: the AES S-box is inversion in GF(2^8)
 * followed by an affine map, and the inversion is done in the tower of fields
 * GF(((2^2)^2)^2), where it takes about 140 AND/XOR on whole words. The two
 * basis changes into and out of the tower are derived by gen_tables.py
 * (sbox_basis.h); tests/test_wish.py checks the circuit against
 * spec/wish/sbox.hex for all 256 inputs.
 */
#include "aes_bitsliced.h"

#include "sbox_basis.h"

/* ---------------------------------------------------------------- layout */

/* Transpose the 8x8 bit blocks of eight words: swap the three bits that index
 * the word with the three bits that index a bit inside each byte. */
static void transpose(uint64_t w[8])
{
    unsigned i;
    for (i = 0; i < 8; i += 2)
        exchange(&w[i], &w[i + 1], 0);
    for (i = 0; i < 8; i++)
        if ((i & 2) == 0)
            exchange(&w[i], &w[i + 2], 1);
    for (i = 0; i < 4; i++)
        exchange(&w[i], &w[i + 4], 2);
}

/* Before the transpose, the byte whose bits belong at position pos sits in word
 * pos % 8 as its byte pos / 8; after it, bit b of that byte is in word b at pos. */
void batch_pack(batch *out, const unsigned char bytes[BATCH_BYTES])
{
    unsigned i, pos;
    for (i = 0; i < 8; i++)
        out->bit[i] = 0;
    for (i = 0; i < BATCH_BYTES; i++) {
        pos = BATCH_POSITION(i % 16, i / 16);
        out->bit[pos % 8] |= (uint64_t)bytes[i] << (8 * (pos / 8));
    }
    transpose(out->bit);
}

void batch_unpack(unsigned char bytes[BATCH_BYTES], const batch *in)
{
    uint64_t w[8];
    unsigned i, pos;
    for (i = 0; i < 8; i++)
        w[i] = in->bit[i];
    transpose(w);  /* its own inverse */
    for (i = 0; i < BATCH_BYTES; i++) {
        pos = BATCH_POSITION(i % 16, i / 16);
        bytes[i] = (unsigned char)(w[pos % 8] >> (8 * (pos / 8)));
    }
}

/* -------------------------------------------------- tower-field arithmetic */

/* The field operations are `inline` so that gcc -O2 flattens the whole inversion
 * into sub_bytes (about 40% faster than calls passing structs).
 *
 * GF(4) = GF(2)[W]/(W^2 + W + 1); an element hi*W + lo, one bit per position. */
typedef struct {
    uint64_t hi, lo;
} gf4;

/* GF(16) = GF(4)[Z]/(Z^2 + Z + N) with N = W + 1. */
typedef struct {
    gf4 hi, lo;
} gf16;

/* GF(256) = GF(16)[Y]/(Y^2 + Y + L) with L = W*Z. */
typedef struct {
    gf16 hi, lo;
} gf256;

static inline gf4 gf4_add(gf4 a, gf4 b)
{
    gf4 r = {a.hi ^ b.hi, a.lo ^ b.lo};
    return r;
}

/* (a1 W + a0)(b1 W + b0) = (a1 b1 + a1 b0 + a0 b1) W + (a1 b1 + a0 b0), by Karatsuba. */
static inline gf4 gf4_mul(gf4 a, gf4 b)
{
    uint64_t low = a.lo & b.lo;
    gf4 r = {((a.hi ^ a.lo) & (b.hi ^ b.lo)) ^ low, (a.hi & b.hi) ^ low};
    return r;
}

/* (a1 W + a0)^2 = a1 W + (a1 + a0); in GF(4) this is also the inverse (a^3 = 1). */
static inline gf4 gf4_square(gf4 a)
{
    gf4 r = {a.hi, a.hi ^ a.lo};
    return r;
}

/* (a1 W + a0)(W + 1) = a0 W + (a1 + a0). */
static inline gf4 gf4_mul_n(gf4 a)
{
    gf4 r = {a.lo, a.hi ^ a.lo};
    return r;
}

/* (a1 W + a0) W = (a1 + a0) W + a1. */
static inline gf4 gf4_mul_w(gf4 a)
{
    gf4 r = {a.hi ^ a.lo, a.hi};
    return r;
}

static inline gf16 gf16_add(gf16 a, gf16 b)
{
    gf16 r = {gf4_add(a.hi, b.hi), gf4_add(a.lo, b.lo)};
    return r;
}

/* (a1 Z + a0)(b1 Z + b0) = (a1 b1 + a1 b0 + a0 b1) Z + (N a1 b1 + a0 b0). */
static inline gf16 gf16_mul(gf16 a, gf16 b)
{
    gf4 high = gf4_mul(a.hi, b.hi), low = gf4_mul(a.lo, b.lo);
    gf4 cross = gf4_mul(gf4_add(a.hi, a.lo), gf4_add(b.hi, b.lo));
    gf16 r = {gf4_add(cross, low), gf4_add(gf4_mul_n(high), low)};
    return r;
}

/* L a^2 for a = a1 Z + a0: a^2 = a1^2 Z + (N a1^2 + a0^2), and
 * (u Z + v) W Z = W (u + v) Z + W N u with W N = 1. */
static inline gf16 gf16_square_mul_l(gf16 a)
{
    gf4 u = gf4_square(a.hi);
    gf4 v = gf4_add(gf4_mul_n(u), gf4_square(a.lo));
    gf16 r = {gf4_mul_w(gf4_add(u, v)), u};
    return r;
}

/* For Y^2 = Y + c over any field, (a1 Y + a0)^-1 = (a1 Y + a1 + a0) / d with
 * d = c a1^2 + a0 (a1 + a0) (the norm); zero maps to zero. Here c = N. */
static inline gf16 gf16_inv(gf16 a)
{
    gf4 sum = gf4_add(a.hi, a.lo);
    gf4 d = gf4_add(gf4_mul_n(gf4_square(a.hi)), gf4_mul(a.lo, sum));
    gf4 d_inv = gf4_square(d);
    gf16 r = {gf4_mul(a.hi, d_inv), gf4_mul(sum, d_inv)};
    return r;
}

/* The same formula one level up, with c = L. */
static inline gf256 gf256_inv(gf256 a)
{
    gf16 sum = gf16_add(a.hi, a.lo);
    gf16 d = gf16_add(gf16_square_mul_l(a.hi), gf16_mul(a.lo, sum));
    gf16 d_inv = gf16_inv(d);
    gf256 r = {gf16_mul(a.hi, d_inv), gf16_mul(sum, d_inv)};
    return r;
}

/* --------------------------------------------------------------- the round */

/* Bit j of row mask m selects input word j; with m a constant this folds to XORs. */
#define PICK(m, j, x) (((uint64_t)0 - (((m) >> (j)) & 1u)) & (x)[j])
#define ROW(m, x) (PICK(m, 0, x) ^ PICK(m, 1, x) ^ PICK(m, 2, x) ^ PICK(m, 3, x) \
                   ^ PICK(m, 4, x) ^ PICK(m, 5, x) ^ PICK(m, 6, x) ^ PICK(m, 7, x))

/* SubBytes: tower basis in, invert, tower basis out fused with the affine map. */
static void sub_bytes(uint64_t x[8])
{
    uint64_t t[8];
    gf256 a, inv;

    t[0] = ROW(TO_TOWER_0, x); t[1] = ROW(TO_TOWER_1, x);
    t[2] = ROW(TO_TOWER_2, x); t[3] = ROW(TO_TOWER_3, x);
    t[4] = ROW(TO_TOWER_4, x); t[5] = ROW(TO_TOWER_5, x);
    t[6] = ROW(TO_TOWER_6, x); t[7] = ROW(TO_TOWER_7, x);
    a.lo.lo.lo = t[0]; a.lo.lo.hi = t[1]; a.lo.hi.lo = t[2]; a.lo.hi.hi = t[3];
    a.hi.lo.lo = t[4]; a.hi.lo.hi = t[5]; a.hi.hi.lo = t[6]; a.hi.hi.hi = t[7];
    inv = gf256_inv(a);
    t[0] = inv.lo.lo.lo; t[1] = inv.lo.lo.hi; t[2] = inv.lo.hi.lo; t[3] = inv.lo.hi.hi;
    t[4] = inv.hi.lo.lo; t[5] = inv.hi.lo.hi; t[6] = inv.hi.hi.lo; t[7] = inv.hi.hi.hi;
    /* The affine constant 0x63 complements output bits 0, 1, 5 and 6. */
    x[0] = ~ROW(FROM_TOWER_0, t); x[1] = ~ROW(FROM_TOWER_1, t);
    x[2] = ROW(FROM_TOWER_2, t);  x[3] = ROW(FROM_TOWER_3, t);
    x[4] = ROW(FROM_TOWER_4, t);  x[5] = ~ROW(FROM_TOWER_5, t);
    x[6] = ~ROW(FROM_TOWER_6, t); x[7] = ROW(FROM_TOWER_7, t);
}

/* Row r of every column moves left by r columns: new (r, c) = old (r, c + r mod 4),
 * i.e. the 16-bit slice of row r rotates right by 4r bits. */
static uint64_t shift_rows(uint64_t x)
{
    return (x & 0x000000000000ffffu)
           | ((x & 0x00000000fff00000u) >> 4) | ((x & 0x00000000000f0000u) << 12)
           | ((x & 0x0000ff0000000000u) >> 8) | ((x & 0x000000ff00000000u) << 8)
           | ((x & 0xf000000000000000u) >> 12) | ((x & 0x0fff000000000000u) << 4);
}

/* Row r + k of the same column and lane: rotate by 16k bits. */
static uint64_t rows_down(uint64_t x, unsigned k)
{
    return (x >> (16 * k)) | (x << (64 - 16 * k));
}

/* out(r) = 2 a(r) + 3 a(r+1) + a(r+2) + a(r+3)
 *        = 2 s(r) + a(r+1) + s(r+2)   with s(r) = a(r) + a(r+1).
 * Doubling shifts the bit planes up and folds bit 7 back as 0x1b (x^8 = x^4+x^3+x+1). */
static void mix_columns(uint64_t x[8])
{
    uint64_t next[8], s[8];
    unsigned b;
    for (b = 0; b < 8; b++) {
        next[b] = rows_down(x[b], 1);
        s[b] = x[b] ^ next[b];
    }
    for (b = 0; b < 8; b++)
        x[b] = next[b] ^ rows_down(s[b], 2) ^ (b == 0 ? 0 : s[b - 1]);
    x[0] ^= s[7];
    x[1] ^= s[7];
    x[3] ^= s[7];
    x[4] ^= s[7];
}

void batch_aes_round(batch *x)
{
    unsigned b;
    sub_bytes(x->bit);
    for (b = 0; b < 8; b++)
        x->bit[b] = shift_rows(x->bit[b]);
    mix_columns(x->bit);
}
