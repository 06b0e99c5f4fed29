/* The WChain compression function CF (spec/wchain.md section 5): message
 * expansion (5.1), rounds and feed-forward (5.2), the V1 round (5.3) and the
 * V2 round (5.4).
 *
 * Constant time: only XOR/OR/NOT and rotations by fixed amounts; the tables are
 * indexed by lane and round numbers, never by data. Every per-lane step is
 * spelled out for the nine lanes of a half (FOR_EACH_LANE), so the table reads
 * have constant indices, fold into immediates and the state stays in registers.
 */
#include "wchain.h"
#include "wchain_tables.h"

/* A test build defines WCHAIN_TRACE(label, lanes, index) to see the state
 * after every round (tests/test_wchain.py); the library never does. */
#ifndef WCHAIN_TRACE
#define WCHAIN_TRACE(label, lanes, index) ((void)0)
#endif

#define FOR_EACH_LANE(STEP) STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8)

/* Rotate left by n = 0..63; the masked right shift keeps n = 0 defined. */
static uint64_t rotl64(uint64_t x, unsigned n)
{
    return (x << n) | (x >> ((64 - n) & 63));
}

/* S-box layer S (5.3 step 2): nine-bit chi-like S-boxes, bitsliced over the
 * lanes of one half; all outputs come from the old x. */
static void sbox_half(uint64_t u[9], const uint64_t x[9])
{
#define SBOX(i) u[i] = x[i] ^ (x[((i) + 1) % 9] | ~x[((i) + 2) % 9]);
    FOR_EACH_LANE(SBOX)
#undef SBOX
}

/* Wiring pi (5.3 step 3): c[pi[i]] = u[i]. */
static void wire_half(uint64_t c[9], const uint64_t u[9])
{
#define WIRE(j) c[j] = u[WCHAIN_PI_INV[j]];
    FOR_EACH_LANE(WIRE)
#undef WIRE
}

/* Mixer L5w (5.3 step 4): each output lane is the XOR of five rotated lanes. */
static void mix_half(uint64_t y[9], const uint64_t c[9], const unsigned char rot[9][5])
{
#define TERM(i, k) rotl64(c[WCHAIN_SUPPORT[i][k]], rot[i][k])
#define MIX(i) y[i] = TERM(i, 0) ^ TERM(i, 1) ^ TERM(i, 2) ^ TERM(i, 3) ^ TERM(i, 4);
    FOR_EACH_LANE(MIX)
#undef MIX
#undef TERM
}

/* Constant addition (5.3/5.4 step 1) of row r, and the XOR of the round's
 * expanded message vector Bh[r] (5.2), in one pass. */
static void add_row(uint64_t x[WCHAIN_LANES], const uint64_t bh[WCHAIN_LANES], unsigned r)
{
    int i;
    for (i = 0; i < WCHAIN_LANES; i++)
        x[i] ^= bh[i] ^ WCHAIN_RC[r][i];
}

#if WCHAIN_LANES == 9
/* Round_r of V1 (5.3). */
static void wchain_round(uint64_t x[9], const uint64_t bh[9], unsigned r)
{
    uint64_t u[9], c[9];
    add_row(x, bh, r);
    sbox_half(u, x);
    wire_half(c, u);
    mix_half(x, c, WCHAIN_ROT_LEFT);
}
#else
/* The V2 cross-swap (5.4 step 4): five lane pairs change halves. */
static void cross_swap(uint64_t c[18])
{
#define SWAP(p) { uint64_t *l = &c[WCHAIN_CROSS_SWAP[p][0]], *r = &c[9 + WCHAIN_CROSS_SWAP[p][1]]; \
                  uint64_t t = *l; *l = *r; *r = t; }
    SWAP(0) SWAP(1) SWAP(2) SWAP(3) SWAP(4)
#undef SWAP
}

/* Round_r of V2 (5.4): two V1-shaped halves joined by the cross-swap. */
static void wchain_round(uint64_t x[18], const uint64_t bh[18], unsigned r)
{
    uint64_t u[18], c[18];
    add_row(x, bh, r);
    sbox_half(u, x);
    sbox_half(u + 9, x + 9);
    wire_half(c, u);
    wire_half(c + 9, u + 9);
    cross_swap(c);
    mix_half(x, c, WCHAIN_ROT_LEFT);
    mix_half(x + 9, c + 9, WCHAIN_ROT_RIGHT);
}
#endif

/* One expansion step (5.1) on each 9-lane group: older holds Bh[j-2] and
 * becomes Bh[j] = MEF(Bh[j-1]) ^ Bh[j-2], with newer = Bh[j-1] and
 * MEF(a) = S(a[i] rotated left by d[i]). */
static void expand(uint64_t older[WCHAIN_LANES], const uint64_t newer[WCHAIN_LANES])
{
    int g;
    for (g = 0; g < WCHAIN_LANES; g += 9) {
        uint64_t t[9], s[9];
#define ROTATE(i) t[i] = rotl64(newer[g + (i)], WCHAIN_EXPAND_ROT[i]);
#define ABSORB(i) older[g + (i)] ^= s[i];
        FOR_EACH_LANE(ROTATE)
        sbox_half(s, t);
        FOR_EACH_LANE(ABSORB)
#undef ROTATE
#undef ABSORB
    }
}

/* CF (5.2): X := V; X := Round_r(X ^ Bh[r]) for r = 0..R-1; V ^ X ^ Bh[R].
 * Bh[j] is expanded on the fly into two buffers, one for even and one for odd
 * j, two rounds per pass (R is even). */
void wchain_compress(uint64_t state[WCHAIN_LANES], const uint64_t block[WCHAIN_BLOCK_LANES])
{
    uint64_t x[WCHAIN_LANES], even[WCHAIN_LANES], odd[WCHAIN_LANES];
    unsigned r;
    int i;

    for (i = 0; i < WCHAIN_LANES; i++) {
        x[i] = state[i];
        even[i] = block[i];               /* Bh[0]: the first half of the block */
        odd[i] = block[WCHAIN_LANES + i]; /* Bh[1]: the second half */
    }
    for (r = 0; r < WCHAIN_ROUNDS; r += 2) {
        wchain_round(x, even, r);
        WCHAIN_TRACE("round", x, r + 1);
        expand(even, odd);                /* Bh[r+2]; at the last pass this is Bh[R] */
        wchain_round(x, odd, r + 1);
        WCHAIN_TRACE("round", x, r + 2);
        if (r + 2 < WCHAIN_ROUNDS)        /* Bh[r+3], unless past Bh[R] */
            expand(odd, even);
    }
    WCHAIN_TRACE("feedforward", even, WCHAIN_ROUNDS);
    for (i = 0; i < WCHAIN_LANES; i++)
        state[i] ^= x[i] ^ even[i];
    WCHAIN_TRACE("output", state, 0);
}
