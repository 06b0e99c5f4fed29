/* Wish: padding (§4), the absorb loop (§5), the permutation P_T (§6), the round
 * constants (§7) and the byte permutation MIX (§8) of spec/wish.md.
 *
 * The state stays bitsliced from the first block to the digest: lanes 4i..4i+3
 * form batch i (aes_bitsliced.h), so the rate is the first half of the batches
 * and the capacity the second half. Full message blocks are read in place; only
 * the last, padded block is copied into a local buffer.
 */
#include "wish.h"
#include "aes_bitsliced.h"
#include "rcon_bitsliced.h"

#define WISH_BATCHES (WISH_LANES / BATCH_LANES)
#define WISH_RATE_BATCHES (WISH_BATCHES / 2)

#include <string.h>

typedef struct {
    batch batches[WISH_BATCHES];  /* lanes 4i..4i+3 are batch i */
} bitsliced_state;

static void add_batch(batch *x, const batch *y)
{
    unsigned b;
    for (b = 0; b < 8; b++)
        x->bit[b] ^= y->bit[b];
}

/* MIX (§8). Its closed forms only permute the bits of a byte's address. In our
 * layout the address is the batch number and the position bits (row = 5-4,
 * column = 3-2, lane within the batch = 1-0), and MIX moves them in cycles:
 *   Wish512:  batch -> col1 -> lane0 -> row0 -> col0 -> lane1 -> row1 -> batch;
 *   Wish1024: batch bit 1 -> col1 -> lane0 -> row0 -> batch bit 1, and
 *             batch bit 0 -> col0 -> lane1 -> row1 -> batch bit 0.
 * A cycle (B p1 p2 ... pn) through a batch bit B is the exchanges of B with p1,
 * p2, ..., pn in turn, 6 operations per pair of words each.
 * (tests/test_wish.py checks MIX against mix_1024.json and mix_2048.json.) */
static void mix(bitsliced_state *s)
{
    unsigned b;
    for (b = 0; b < 8; b++) {
#if WISH_LANES == 8
        uint64_t *lo = &s->batches[0].bit[b], *hi = &s->batches[1].bit[b];
        exchange(lo, hi, 3); exchange(lo, hi, 0); exchange(lo, hi, 4);
        exchange(lo, hi, 2); exchange(lo, hi, 1); exchange(lo, hi, 5);
#else
        unsigned i;
        for (i = 0; i < 2; i++) {  /* batch bit 1: batches 0-2 and 1-3 */
            uint64_t *lo = &s->batches[i].bit[b], *hi = &s->batches[i + 2].bit[b];
            exchange(lo, hi, 3); exchange(lo, hi, 0); exchange(lo, hi, 4);
        }
        for (i = 0; i < 4; i += 2) {  /* batch bit 0: batches 0-1 and 2-3 */
            uint64_t *lo = &s->batches[i].bit[b], *hi = &s->batches[i + 1].bit[b];
            exchange(lo, hi, 2); exchange(lo, hi, 1); exchange(lo, hi, 5);
        }
#endif
    }
}

/* P_T (§6): t steps of tweak, AESR on every lane, Rcon into lane 0, twice, then MIX.
 * The tweak lane l/2 is lane 0 of the first capacity batch. */
static void permute(bitsliced_state *s, const batch *tweak)
{
    unsigned step, round, i, b;
    for (step = 0; step < WISH_STEPS; step++) {
        add_batch(&s->batches[WISH_RATE_BATCHES], tweak);
        for (round = 0; round < 2; round++) {
            for (i = 0; i < WISH_BATCHES; i++)
                batch_aes_round(&s->batches[i]);
            for (b = 0; b < 8; b++)
                s->batches[0].bit[b] ^= WISH_RCON[2 * step + round][b];
        }
        mix(s);
    }
}

/* The tweak T of block i (§5): bytes 0..7 = i little-endian (the code's byte
 * order, which the KATs follow; the spec text says big-endian, §9). */
static void make_tweak(batch *tweak, uint64_t block_index)
{
    unsigned char lanes[BATCH_BYTES] = {0};
    unsigned j;
    for (j = 0; j < 8; j++)
        lanes[j] = (unsigned char)(block_index >> (8 * j));
    batch_pack(tweak, lanes);
}

/* One iteration of the absorb loop (§5). */
static void absorb(bitsliced_state *s, const unsigned char block[WISH_RATE_BYTES],
                   uint64_t block_index, int last)
{
    batch message, tweak, capacity[WISH_RATE_BATCHES];
    unsigned i;

    for (i = 0; i < WISH_RATE_BATCHES; i++) {
        batch_pack(&message, block + i * BATCH_BYTES);
        add_batch(&s->batches[i], &message);
    }
    /* theta, last block only: byte 15 of the last lane ^= 0x01 (lane 3 of the last batch) */
    if (last)
        s->batches[WISH_BATCHES - 1].bit[0] ^= (uint64_t)1 << BATCH_POSITION(15, 3);
    memcpy(capacity, &s->batches[WISH_RATE_BATCHES], sizeof capacity);
    make_tweak(&tweak, block_index);
    permute(s, &tweak);
    for (i = 0; i < WISH_RATE_BATCHES; i++)  /* feed-forward of the capacity */
        add_batch(&s->batches[WISH_RATE_BATCHES + i], &capacity[i]);
}

/* ---------------------------------------------------------- the state API */

void wish_state_init(wish_state *state)
{
    memset(state, 0, sizeof *state);
}

void wish_state_absorb(wish_state *state, const unsigned char block[WISH_RATE_BYTES],
                       uint64_t block_index, int last)
{
    absorb((bitsliced_state *)(void *)state->opaque, block, block_index, last);
}

void wish_state_digest(const wish_state *state, unsigned char digest[WISH_DIGEST_BYTES])
{
    const bitsliced_state *s = (const bitsliced_state *)(const void *)state->opaque;
    unsigned i;

    for (i = 0; i < WISH_RATE_BATCHES; i++)
        batch_unpack(digest + i * BATCH_BYTES, &s->batches[WISH_RATE_BATCHES + i]);
}
