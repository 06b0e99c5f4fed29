/* The Pavelor permutation P (spec 3.2-3.4), bitsliced and constant-time.
 *
 * P runs on a bitsliced copy of the 320-byte state: 5 groups of 8 bit planes
 * (uint64_t). A group holds 4 state words, one per lane (WORD_IN_LANE in
 * round_tables.h); bit 16 r + 4 c + l of plane b is bit b of byte x[4c + r]
 * (row r, column c, spec 3.1) of the word in lane l. The AES round then works
 * on 4 words at once with whole-word logic only, so neither the time taken nor
 * the memory touched depends on the state:
 *   SubBytes    the gate circuit of sbox_circuit.h, no table lookups
 *   ShiftRows   rotations of the 4-bit column fields inside each 16-bit row
 *   MixColumns  rows are 16-bit chunks, so "the row below" is a rotation by 16
 * and the round wiring is a few mask-and-shift moves between lanes
 * (round_tables.h). The state is converted in and out once per call.
 */
#include "pavelor.h"
#include "round_tables.h"
#include "sbox_circuit.h"

typedef uint64_t planes[8];  /* one group: bit plane b of its 4 words */

static uint64_t load64_le(const uint8_t *p)
{
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void store64_le(uint8_t *p, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------------ layout */

/* INDEX_BIT_CLEAR[j]: the bit positions 0..63 whose index bit j is 0. */
static const uint64_t INDEX_BIT_CLEAR[6] = {
    UINT64_C(0x5555555555555555), UINT64_C(0x3333333333333333),
    UINT64_C(0x0f0f0f0f0f0f0f0f), UINT64_C(0x00ff00ff00ff00ff),
    UINT64_C(0x0000ffff0000ffff), UINT64_C(0x00000000ffffffff),
};

/* Exchange bit `word_bit` of the word index with bit `pos_bit` of the bit
 * position in v[0..7]: the bit at (word w, position p) moves to the word and
 * position whose index bits are swapped. Its own inverse. */
static void swap_index_bits(uint64_t v[8], int word_bit, int pos_bit)
{
    const int word_step = 1 << word_bit, shift = 1 << pos_bit;
    const uint64_t low = INDEX_BIT_CLEAR[pos_bit];
    int w;

    for (w = 0; w < 8; w++) {
        if (w & word_step)  /* visit each pair once, from its lower word */
            continue;
        {
            const uint64_t t = ((v[w] >> shift) ^ v[w + word_step]) & low;
            v[w + word_step] ^= t;
            v[w] ^= t << shift;
        }
    }
}

/* Loading v[4 h + l] = bytes 8h .. 8h+7 of the word in lane l puts bit b of
 * byte x[4c + r] at word index (h, l1, l0) and position (c0, r1, r0, b2, b1, b0),
 * where c = 2h + c0. These six exchanges (index bits listed high to low) give
 * word index (b2, b1, b0) and position (r1, r0, h, c0, l1, l0) = 16 r + 4 c + l. */
static const int LAYOUT_SWAPS[6][2] = {{0, 0}, {1, 1}, {2, 3}, {2, 4}, {2, 5}, {2, 2}};

static void to_bitsliced(planes group[GROUPS], const uint8_t state[PAVELOR_STATE_BYTES])
{
    int g, l, h, s;

    for (g = 0; g < GROUPS; g++) {
        for (l = 0; l < 4; l++)
            for (h = 0; h < 2; h++)
                group[g][4 * h + l] = load64_le(state + 16 * WORD_IN_LANE[g][l] + 8 * h);
        for (s = 0; s < 6; s++)
            swap_index_bits(group[g], LAYOUT_SWAPS[s][0], LAYOUT_SWAPS[s][1]);
    }
}

static void from_bitsliced(uint8_t state[PAVELOR_STATE_BYTES], planes group[GROUPS])
{
    int g, l, h, s;

    for (g = 0; g < GROUPS; g++) {
        for (s = 5; s >= 0; s--)
            swap_index_bits(group[g], LAYOUT_SWAPS[s][0], LAYOUT_SWAPS[s][1]);
        for (l = 0; l < 4; l++)
            for (h = 0; h < 2; h++)
                store64_le(state + 16 * WORD_IN_LANE[g][l] + 8 * h, group[g][4 * h + l]);
    }
}

/* --------------------------------------------------------------- AES round */

static uint64_t rotr64(uint64_t x, int n)  /* 0 < n < 64 */
{
    return (x >> n) | (x << (64 - n));
}

/* Row r takes column c from column c + r: the 4-bit column fields of rows 1
 * and 3 rotate by one column, then those of rows 2 and 3 by two columns. */
static void shift_rows(planes q)
{
    int b;

    for (b = 0; b < 8; b++) {
        uint64_t x = q[b], t;

        x = (x & UINT64_C(0x0000ffff0000ffff))
            | ((x >> 4) & UINT64_C(0x0fff00000fff0000))
            | ((x << 12) & UINT64_C(0xf0000000f0000000));
        t = (x ^ (x >> 8)) & UINT64_C(0x00ff00ff00000000);
        q[b] = x ^ t ^ (t << 8);
    }
}

/* Row r of a column becomes 2 a_r + 3 a_r+1 + a_r+2 + a_r+3
 *                          = 2 (a_r + a_r+1) + a_r+1 + (a_r+2 + a_r+3).
 * With d = the row below (rotation by 16) and u = a + d, that is
 * 2u + d + (u two rows below, rotation by 32); 2u shifts the planes up one bit
 * and folds bit 7 back in as 0x1b. Written out plane by plane: compilers
 * vectorise a loop here badly (SSE2 has no 64-bit rotate). */
static void mix_columns(planes q)
{
    const uint64_t d0 = rotr64(q[0], 16), d1 = rotr64(q[1], 16), d2 = rotr64(q[2], 16),
                   d3 = rotr64(q[3], 16), d4 = rotr64(q[4], 16), d5 = rotr64(q[5], 16),
                   d6 = rotr64(q[6], 16), d7 = rotr64(q[7], 16);
    const uint64_t u0 = q[0] ^ d0, u1 = q[1] ^ d1, u2 = q[2] ^ d2, u3 = q[3] ^ d3,
                   u4 = q[4] ^ d4, u5 = q[5] ^ d5, u6 = q[6] ^ d6, u7 = q[7] ^ d7;

    q[0] = u7 ^ d0 ^ rotr64(u0, 32);
    q[1] = u0 ^ u7 ^ d1 ^ rotr64(u1, 32);
    q[2] = u1 ^ d2 ^ rotr64(u2, 32);
    q[3] = u2 ^ u7 ^ d3 ^ rotr64(u3, 32);
    q[4] = u3 ^ u7 ^ d4 ^ rotr64(u4, 32);
    q[5] = u4 ^ d5 ^ rotr64(u5, 32);
    q[6] = u5 ^ d6 ^ rotr64(u6, 32);
    q[7] = u6 ^ d7 ^ rotr64(u7, 32);
}

/* AR(x) of spec 3.2 on the 4 words of a group. */
static void aes_round(planes q)
{
    sub_bytes(q);
    shift_rows(q);
    mix_columns(q);
}

/* ---------------------------------------------------------- Pavelor round */

/* R_t (spec 3.3): out[j] = AR(in[a(j)]) ^ in[k(j)], out[7] = in[8] ^ RC[t]. */
static void pavelor_round(planes out[GROUPS], planes in[GROUPS], const uint64_t rc[8])
{
    int g, b;

    gather_aes_inputs(out, (const planes *)in);
    for (g = 0; g < GROUPS; g++)
        aes_round(out[g]);
    add_round_keys(out, (const planes *)in);
    for (b = 0; b < 8; b++)
        out[RC_GROUP][b] ^= rc[b];
}

static void permutation(uint8_t state[PAVELOR_STATE_BYTES])
{
    planes a[GROUPS], b[GROUPS];
    int t;

    to_bitsliced(a, state);
    for (t = 0; t < PAVELOR_ROUNDS; t += 2) {  /* a -> b -> a: no copies */
        pavelor_round(b, a, RC_PLANES[t]);
        pavelor_round(a, b, RC_PLANES[t + 1]);
    }
    from_bitsliced(state, a);
}

/* ------------------------------------------------------- the state (bytes) */

#include <string.h>

void pavelor_state_load(pavelor_state *state, const uint8_t bytes[PAVELOR_STATE_BYTES])
{
    memcpy(state->opaque, bytes, PAVELOR_STATE_BYTES);
}

void pavelor_state_absorb(pavelor_state *state, const unsigned char *block, size_t n)
{
    uint8_t *bytes = (uint8_t *)state->opaque;
    size_t i;

    for (i = 0; i < n; i++)
        bytes[i] ^= block[i];
}

void pavelor_state_permute(pavelor_state *state)
{
    permutation((uint8_t *)state->opaque);
}

void pavelor_state_squeeze(const pavelor_state *state, unsigned char *out, size_t n)
{
    memcpy(out, state->opaque, n);
}
