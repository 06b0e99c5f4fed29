/* The key-less AES round AESR of spec/wish.md §6 on the bitsliced state of
 * aes_bitsliced.h, and the conversion of lanes into and out of it.
 *
 * SubBytes is computed, not looked up: the gate circuit of sbox_circuit.c
 * (generated; inversion in a tower field), checked by tests/test_wish.py against
 * spec/wish/sbox.hex for all 256 inputs.
 */
#include "aes_bitsliced.h"

/* ---------------------------------------------------------------- layout */

static uint64_t load64_le(const unsigned char *p)
{
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void store64_le(unsigned char *p, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Exchange bit j of the index of v[0..7] with bit p of the bit position (see
 * exchange): the bit at (index i, position x) moves to the index and position
 * whose bits j and p are swapped. Its own inverse. Written out (a macro) for the
 * 4 pairs (i, i + 2^j) with bit j of i clear, so that compilers see constants. */
#define LOW_INDEX(i, j) ((((i) >> (j)) << ((j) + 1)) | ((i) & ((1u << (j)) - 1)))
#define SWAP_INDEX_BITS(v, j, p)                                           \
    do {                                                                   \
        exchange(&(v)[LOW_INDEX(0u, j)], &(v)[LOW_INDEX(0u, j) + (1u << (j))], p); \
        exchange(&(v)[LOW_INDEX(1u, j)], &(v)[LOW_INDEX(1u, j) + (1u << (j))], p); \
        exchange(&(v)[LOW_INDEX(2u, j)], &(v)[LOW_INDEX(2u, j) + (1u << (j))], p); \
        exchange(&(v)[LOW_INDEX(3u, j)], &(v)[LOW_INDEX(3u, j) + (1u << (j))], p); \
    } while (0)

/* Loading v[4 h + k] = bytes 8h .. 8h+7 of lane k puts bit b of byte 4 col + row
 * at index (h, k1, k0) and position (col0, row1, row0, b2, b1, b0), with
 * col = 2h + col0. These six exchanges (index bits listed high to low) give index
 * (b2, b1, b0) and position (row1, row0, h, col0, k1, k0) = LANE_POSITION. */
static void to_planes(uint64_t v[8])
{
    SWAP_INDEX_BITS(v, 0, 0);
    SWAP_INDEX_BITS(v, 1, 1);
    SWAP_INDEX_BITS(v, 2, 3);
    SWAP_INDEX_BITS(v, 2, 4);
    SWAP_INDEX_BITS(v, 2, 5);
    SWAP_INDEX_BITS(v, 2, 2);
}

/* The inverse of to_planes: the same exchanges in the opposite order. */
static void from_planes(uint64_t v[8])
{
    SWAP_INDEX_BITS(v, 2, 2);
    SWAP_INDEX_BITS(v, 2, 5);
    SWAP_INDEX_BITS(v, 2, 4);
    SWAP_INDEX_BITS(v, 2, 3);
    SWAP_INDEX_BITS(v, 1, 1);
    SWAP_INDEX_BITS(v, 0, 0);
}

void bitsliced_add_lanes(bitsliced q, unsigned w, const unsigned char bytes[64])
{
    uint64_t v[8];
    unsigned k, h, b;

    for (k = 0; k < 4; k++)
        for (h = 0; h < 2; h++)
            v[4 * h + k] = load64_le(bytes + 16 * k + 8 * h);
    to_planes(v);
    for (b = 0; b < 8; b++)
        q[b][w] ^= v[b];
}

void bitsliced_store_lanes(unsigned char bytes[64], const bitsliced q, unsigned w)
{
    uint64_t v[8];
    unsigned k, h, b;

    for (b = 0; b < 8; b++)
        v[b] = q[b][w];
    from_planes(v);
    for (k = 0; k < 4; k++)
        for (h = 0; h < 2; h++)
            store64_le(bytes + 16 * k + 8 * h, v[4 * h + k]);
}

/* --------------------------------------------------------------- the round */

static uint64_t rotr64(uint64_t x, unsigned n)  /* 0 < n < 64 */
{
    return (x >> n) | (x << (64 - n));
}

/* ShiftRows: row r of every column moves left by r columns, new (r, c) =
 * old (r, c + r mod 4): the 4-bit column fields of rows 1 and 3 rotate by one
 * column, then those of rows 2 and 3 by two columns. */
static uint64_t shift_rows(uint64_t x)
{
    uint64_t t;

    x = (x & 0x0000ffff0000ffffu) | ((x >> 4) & 0x0fff00000fff0000u)
        | ((x << 12) & 0xf0000000f0000000u);
    t = (x ^ (x >> 8)) & 0x00ff00ff00000000u;
    return x ^ t ^ (t << 8);
}

/* ShiftRows, then MixColumns: out(r) = 2 a(r) + 3 a(r+1) + a(r+2) + a(r+3)
 * = 2 u(r) + a(r+1) + u(r+2) with u(r) = a(r) + a(r+1); row r + k of the same
 * column and lane is a rotation by 16 k. Doubling shifts the bit planes up and
 * folds bit 7 back as 0x1b. One loop over the words, which compilers vectorise. */
static void shift_rows_mix_columns(bitsliced q)
{
    unsigned w;

    for (w = 0; w < WORDS; w++) {
        const uint64_t a0 = shift_rows(q[0][w]), a1 = shift_rows(q[1][w]),
                       a2 = shift_rows(q[2][w]), a3 = shift_rows(q[3][w]),
                       a4 = shift_rows(q[4][w]), a5 = shift_rows(q[5][w]),
                       a6 = shift_rows(q[6][w]), a7 = shift_rows(q[7][w]);
        const uint64_t d0 = rotr64(a0, 16), d1 = rotr64(a1, 16), d2 = rotr64(a2, 16),
                       d3 = rotr64(a3, 16), d4 = rotr64(a4, 16), d5 = rotr64(a5, 16),
                       d6 = rotr64(a6, 16), d7 = rotr64(a7, 16);
        const uint64_t u0 = a0 ^ d0, u1 = a1 ^ d1, u2 = a2 ^ d2, u3 = a3 ^ d3,
                       u4 = a4 ^ d4, u5 = a5 ^ d5, u6 = a6 ^ d6, u7 = a7 ^ d7;

        q[0][w] = u7 ^ d0 ^ rotr64(u0, 32);
        q[1][w] = u0 ^ u7 ^ d1 ^ rotr64(u1, 32);
        q[2][w] = u1 ^ d2 ^ rotr64(u2, 32);
        q[3][w] = u2 ^ u7 ^ d3 ^ rotr64(u3, 32);
        q[4][w] = u3 ^ u7 ^ d4 ^ rotr64(u4, 32);
        q[5][w] = u4 ^ d5 ^ rotr64(u5, 32);
        q[6][w] = u5 ^ d6 ^ rotr64(u6, 32);
        q[7][w] = u6 ^ d7 ^ rotr64(u7, 32);
    }
}

void bitsliced_aes_round(bitsliced q)
{
    wish_sub_bytes(q);
    shift_rows_mix_columns(q);
}
