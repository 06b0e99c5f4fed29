/* The Pavelor permutation P (spec 3.2-3.4), bitsliced and constant-time: the
 * `ref` variant.
 *
 * The state stays bitsliced (bitsliced.h) from the initial value to the digest;
 * only message blocks are converted in, and the digest bytes out. One AES round
 * on all 20 words at once is whole-word logic only, so neither the time taken
 * nor the memory touched depends on the state:
 *   SubBytes    the gate circuit of sbox_circuit.c, no table lookups
 *   ShiftRows   rotations of the 4-bit column fields inside each 16-bit row
 *   MixColumns  rows are 16-bit chunks, so "the row below" is a rotation by 16
 * and the round wiring is a few mask-and-shift moves between lanes
 * (round_tables.h). The loops over planes and groups are written so that
 * compilers turn them into vector code (SSE2 on x86-64) from plain C99.
 */
#include "pavelor.h"
#include "bitsliced.h"
#include "round_tables.h"

#include <string.h>

static bitsliced *planes_of(pavelor_state *state)
{
    return (bitsliced *)(void *)state->opaque;
}

/* ------------------------------------------------------------------ layout */

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

/* Exchange the bits of *a at positions with bit `shift` set with those of *b at
 * positions with it clear (`keep` = the positions with it clear). */
static void exchange(uint64_t *a, uint64_t *b, int shift, uint64_t keep)
{
    const uint64_t t = ((*a >> shift) ^ *b) & keep;

    *b ^= t;
    *a ^= t << shift;
}

/* Exchange bit j of the index of v[0..7] with bit p of the bit position: the
 * bit at (word w, position x) moves to the word and position whose index bits j
 * and p are swapped. Its own inverse. Written out (a macro) for the 4 pairs of
 * words (w, w + 2^j) with bit j of w clear, so that compilers see constants. */
#define LOW_WORD(i, j) ((((i) >> (j)) << ((j) + 1)) | ((i) & ((1 << (j)) - 1)))
#define SWAP_INDEX_BITS(v, j, p)                                                   \
    do {                                                                           \
        exchange(&(v)[LOW_WORD(0, j)], &(v)[LOW_WORD(0, j) + (1 << (j))], 1 << (p), \
                 INDEX_BIT_CLEAR[p]);                                              \
        exchange(&(v)[LOW_WORD(1, j)], &(v)[LOW_WORD(1, j) + (1 << (j))], 1 << (p), \
                 INDEX_BIT_CLEAR[p]);                                              \
        exchange(&(v)[LOW_WORD(2, j)], &(v)[LOW_WORD(2, j) + (1 << (j))], 1 << (p), \
                 INDEX_BIT_CLEAR[p]);                                              \
        exchange(&(v)[LOW_WORD(3, j)], &(v)[LOW_WORD(3, j) + (1 << (j))], 1 << (p), \
                 INDEX_BIT_CLEAR[p]);                                              \
    } while (0)

/* INDEX_BIT_CLEAR[p]: the bit positions 0..63 whose index bit p is 0. */
static const uint64_t INDEX_BIT_CLEAR[6] = {
    UINT64_C(0x5555555555555555), UINT64_C(0x3333333333333333),
    UINT64_C(0x0f0f0f0f0f0f0f0f), UINT64_C(0x00ff00ff00ff00ff),
    UINT64_C(0x0000ffff0000ffff), UINT64_C(0x00000000ffffffff),
};

/* Loading v[4 h + l] = bytes 8h .. 8h+7 of the word in lane l puts bit b of
 * byte x[4c + r] at word index (h, l1, l0) and position (c0, r1, r0, b2, b1, b0),
 * where c = 2h + c0. These six exchanges (index bits listed high to low) give
 * word index (b2, b1, b0) and position (r1, r0, h, c0, l1, l0) = 16 r + 4 c + l. */
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

/* Does group g hold one of the words 0 .. words-1? (A property of WORD_IN_LANE.) */
static int group_has_word_below(int g, int words)
{
    int l;

    for (l = 0; l < 4; l++)
        if (WORD_IN_LANE[g][l] < words)
            return 1;
    return 0;
}

/* XOR bytes[0 .. 16 words - 1] into words 0 .. words-1 of the state. */
static void add_words(bitsliced q, const uint8_t *bytes, int words)
{
    int g, l, h, b;

    for (g = 0; g < GROUPS; g++) {
        uint64_t v[8] = {0};

        if (!group_has_word_below(g, words))
            continue;
        for (l = 0; l < 4; l++)
            if (WORD_IN_LANE[g][l] < words)
                for (h = 0; h < 2; h++)
                    v[4 * h + l] = load64_le(bytes + 16 * WORD_IN_LANE[g][l] + 8 * h);
        to_planes(v);
        for (b = 0; b < 8; b++)
            q[b][g] ^= v[b];
    }
}

/* ------------------------------------------------------------- AES round */

static uint64_t rotr64(uint64_t x, int n)  /* 0 < n < 64 */
{
    return (x >> n) | (x << (64 - n));
}

/* ShiftRows: row r takes column c from column c + r. The 4-bit column fields
 * of rows 1 and 3 rotate by one column, then those of rows 2 and 3 by two. */
static uint64_t shift_rows(uint64_t x)
{
    uint64_t t;

    x = (x & UINT64_C(0x0000ffff0000ffff))
        | ((x >> 4) & UINT64_C(0x0fff00000fff0000))
        | ((x << 12) & UINT64_C(0xf0000000f0000000));
    t = (x ^ (x >> 8)) & UINT64_C(0x00ff00ff00000000);
    return x ^ t ^ (t << 8);
}

/* ShiftRows, then MixColumns. Row r of a column becomes
 * 2 a_r + 3 a_r+1 + a_r+2 + a_r+3 = 2 (a_r + a_r+1) + a_r+1 + (a_r+2 + a_r+3).
 * With d = the row below (rotation by 16) and u = a + d, that is
 * 2u + d + (u two rows below, rotation by 32); 2u shifts the planes up one bit
 * and folds bit 7 back in as 0x1b. A macro, so that the loop over groups 0..3
 * below (which compilers vectorise two groups at a time) and group 4 share it. */
#define LINEAR_LAYER_OF_GROUP(q, g)                                             \
    do {                                                                        \
        const uint64_t a0 = shift_rows(q[0][g]), a1 = shift_rows(q[1][g]),      \
                       a2 = shift_rows(q[2][g]), a3 = shift_rows(q[3][g]),      \
                       a4 = shift_rows(q[4][g]), a5 = shift_rows(q[5][g]),      \
                       a6 = shift_rows(q[6][g]), a7 = shift_rows(q[7][g]);      \
        const uint64_t d0 = rotr64(a0, 16), d1 = rotr64(a1, 16), d2 = rotr64(a2, 16), \
                       d3 = rotr64(a3, 16), d4 = rotr64(a4, 16), d5 = rotr64(a5, 16), \
                       d6 = rotr64(a6, 16), d7 = rotr64(a7, 16);                \
        const uint64_t u0 = a0 ^ d0, u1 = a1 ^ d1, u2 = a2 ^ d2, u3 = a3 ^ d3,  \
                       u4 = a4 ^ d4, u5 = a5 ^ d5, u6 = a6 ^ d6, u7 = a7 ^ d7;  \
        q[0][g] = u7 ^ d0 ^ rotr64(u0, 32);                                     \
        q[1][g] = u0 ^ u7 ^ d1 ^ rotr64(u1, 32);                                \
        q[2][g] = u1 ^ d2 ^ rotr64(u2, 32);                                     \
        q[3][g] = u2 ^ u7 ^ d3 ^ rotr64(u3, 32);                                \
        q[4][g] = u3 ^ u7 ^ d4 ^ rotr64(u4, 32);                                \
        q[5][g] = u4 ^ d5 ^ rotr64(u5, 32);                                     \
        q[6][g] = u5 ^ d6 ^ rotr64(u6, 32);                                     \
        q[7][g] = u6 ^ d7 ^ rotr64(u7, 32);                                     \
    } while (0)

static void shift_rows_mix_columns(bitsliced q)
{
    int g;

    for (g = 0; g < GROUPS - 1; g++)
        LINEAR_LAYER_OF_GROUP(q, g);
    LINEAR_LAYER_OF_GROUP(q, GROUPS - 1);
}

/* ---------------------------------------------------------- Pavelor round */

/* R_t (spec 3.3): out[j] = AR(in[a(j)]) ^ in[k(j)], out[7] = in[8] ^ RC[t]. */
static void pavelor_round(bitsliced out, bitsliced in, const uint64_t rc[8])
{
    int b;

    gather_aes_inputs(out, in);
    pavelor_sub_bytes(out);
    shift_rows_mix_columns(out);
    add_round_keys(out, in);
    for (b = 0; b < 8; b++)
        out[b][RC_GROUP] ^= rc[b];
}

/* ------------------------------------------------------- the state (API) */

void pavelor_state_load(pavelor_state *state, const uint8_t *bytes, size_t n)
{
    memset(state, 0, sizeof *state);
    add_words(*planes_of(state), bytes, (int)(n / 16));
}

void pavelor_state_absorb(pavelor_state *state, const unsigned char *block, size_t n)
{
    add_words(*planes_of(state), block, (int)(n / 16));
}

void pavelor_state_permute(pavelor_state *state)
{
    uint64_t (*a)[GROUPS] = *planes_of(state);
    bitsliced b;
    int t;

    for (t = 0; t < PAVELOR_ROUNDS; t += 2) {  /* a -> b -> a: no copies */
        pavelor_round(b, a, RC_PLANES[t]);
        pavelor_round(a, b, RC_PLANES[t + 1]);
    }
}

void pavelor_state_squeeze(const pavelor_state *state, unsigned char *out, size_t n)
{
    const uint64_t (*q)[GROUPS] = *(const bitsliced *)(const void *)state->opaque;
    uint8_t bytes[PAVELOR_STATE_BYTES];
    const int words = (int)((n + 15) / 16);
    int g, l, h, b;

    for (g = 0; g < GROUPS; g++) {
        uint64_t v[8];

        if (!group_has_word_below(g, words))
            continue;
        for (b = 0; b < 8; b++)
            v[b] = q[b][g];
        from_planes(v);
        for (l = 0; l < 4; l++)
            for (h = 0; h < 2; h++)
                store64_le(bytes + 16 * WORD_IN_LANE[g][l] + 8 * h, v[4 * h + l]);
    }
    memcpy(out, bytes, n);
}
