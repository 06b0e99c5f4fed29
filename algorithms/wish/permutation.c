/* Wish's permutation P_T (§6), the round constants (§7), MIX (§8) and the absorb
 * step (§5) of spec/wish.md on the bitsliced state of aes_bitsliced.h: the `ref`
 * variant, portable C99 and constant-time.
 *
 * The state stays bitsliced from the first block to the digest: lanes 4w..4w+3
 * are word w, so the rate is words 0 .. WORDS/2 - 1 and the capacity the rest.
 */
#include "wish.h"
#include "aes_bitsliced.h"
#include "rcon_bitsliced.h"

#include <string.h>

#define RATE_WORDS (WORDS / 2)  /* the capacity starts at word RATE_WORDS, lane 0 */

static bitsliced *planes_of(wish_state *state)
{
    return (bitsliced *)(void *)state->opaque;
}

/* MIX (§8). Its closed forms only permute the bits of a byte's address. In our
 * layout the address is the word number and the position bits (row = 5-4,
 * column = 3-2, lane within the word = 1-0), and MIX moves them in cycles:
 *   Wish512:  word -> col1 -> lane0 -> row0 -> col0 -> lane1 -> row1 -> word;
 *   Wish1024: word bit 1 -> col1 -> lane0 -> row0 -> word bit 1, and
 *             word bit 0 -> col0 -> lane1 -> row1 -> word bit 0.
 * A cycle (W p1 p2 ... pn) through a word-number bit W is the exchanges of W with
 * p1, p2, ..., pn in turn. (tests/test_wish.py checks MIX against mix_1024.json
 * and mix_2048.json.) */
static void mix(bitsliced q)
{
    unsigned b;

    for (b = 0; b < 8; b++) {
#if WISH_LANES == 8
        uint64_t *lo = &q[b][0], *hi = &q[b][1];

        exchange(lo, hi, 3); exchange(lo, hi, 0); exchange(lo, hi, 4);
        exchange(lo, hi, 2); exchange(lo, hi, 1); exchange(lo, hi, 5);
#else
        unsigned i;

        for (i = 0; i < 2; i++) {  /* word bit 1: words 0-2 and 1-3 */
            uint64_t *lo = &q[b][i], *hi = &q[b][i + 2];

            exchange(lo, hi, 3); exchange(lo, hi, 0); exchange(lo, hi, 4);
        }
        for (i = 0; i < 4; i += 2) {  /* word bit 0: words 0-1 and 2-3 */
            uint64_t *lo = &q[b][i], *hi = &q[b][i + 1];

            exchange(lo, hi, 2); exchange(lo, hi, 1); exchange(lo, hi, 5);
        }
#endif
    }
}

/* P_T (§6): t steps of tweak, AESR on every lane, Rcon into lane 0, twice, then
 * MIX. The tweak lane l/2 is lane 0 of word RATE_WORDS. */
static void permute(bitsliced q, const uint64_t tweak[8])
{
    unsigned step, round, b;

    for (step = 0; step < WISH_STEPS; step++) {
        for (b = 0; b < 8; b++)
            q[b][RATE_WORDS] ^= tweak[b];
        for (round = 0; round < 2; round++) {
            bitsliced_aes_round(q);
            for (b = 0; b < 8; b++)
                q[b][0] ^= WISH_RCON[2 * step + round][b];
        }
        mix(q);
    }
}

/* The tweak T of block i (§5), bitsliced into lane 0: bytes 0..7 = i little-endian
 * (the code's byte order, which the KATs follow; the spec text says big-endian,
 * §9). Byte j of lane 0 sits at LANE_POSITION(j, 0); its bit b goes to plane b. */
static void make_tweak(uint64_t tweak[8], uint64_t block_index)
{
    unsigned j, b;

    for (b = 0; b < 8; b++)
        tweak[b] = 0;
    for (j = 0; j < 8; j++)
        for (b = 0; b < 8; b++)
            tweak[b] |= ((block_index >> (8 * j + b)) & 1) << LANE_POSITION(j, 0);
}

void wish_state_init(wish_state *state)
{
    memset(state, 0, sizeof *state);
}

void wish_state_absorb(wish_state *state, const unsigned char block[WISH_RATE_BYTES],
                       uint64_t block_index, int last)
{
    uint64_t (*q)[WORDS] = *planes_of(state);
    uint64_t capacity[8][WORDS - RATE_WORDS], tweak[8];
    unsigned w, b;

    for (w = 0; w < RATE_WORDS; w++)
        bitsliced_add_lanes(q, w, block + 64 * w);
    if (last)  /* theta: byte 15 of the last lane ^= 0x01 (lane 3 of the last word) */
        q[0][WORDS - 1] ^= (uint64_t)1 << LANE_POSITION(15, 3);
    for (b = 0; b < 8; b++)  /* the capacity after absorbing and theta */
        for (w = RATE_WORDS; w < WORDS; w++)
            capacity[b][w - RATE_WORDS] = q[b][w];
    make_tweak(tweak, block_index);
    permute(q, tweak);
    for (b = 0; b < 8; b++)  /* feed-forward of the capacity */
        for (w = RATE_WORDS; w < WORDS; w++)
            q[b][w] ^= capacity[b][w - RATE_WORDS];
}

void wish_state_absorb_full(wish_state *state, const unsigned char *blocks, uint64_t count)
{
    uint64_t i;

    for (i = 0; i < count; i++)
        wish_state_absorb(state, blocks + i * WISH_RATE_BYTES, i, 0);
}

void wish_state_digest(const wish_state *state, unsigned char digest[WISH_DIGEST_BYTES])
{
    const uint64_t (*q)[WORDS] = *(const bitsliced *)(const void *)state->opaque;
    unsigned w;

    for (w = RATE_WORDS; w < WORDS; w++)
        bitsliced_store_lanes(digest + 64 * (w - RATE_WORDS), q, w);
}
