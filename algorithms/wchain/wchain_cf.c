/* The WChain compression function CF (spec/wchain.md section 5): message
 * expansion (5.1), rounds and feed-forward (5.2), the V1 round (5.3) and the
 * V2 round (5.4).
 *
 * Constant time: only XOR/OR/NOT and rotations by fixed amounts; the tables are
 * indexed by lane and round numbers, never by data.
 *
 * Speed: every per-lane step is spelled out for the nine lanes of a half
 * (FOR_EACH_LANE), so the table reads have constant indices and fold into
 * immediate rotation counts, and each helper has a single call site, so that
 * -O2 inlines a whole round into straight-line code.
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
static inline uint64_t rotl64(uint64_t x, unsigned n)
{
    return (x << n) | (x >> ((64 - n) & 63));
}

/* S-box layer S (5.3 step 2): nine-bit chi-like S-boxes, bitsliced over the
 * lanes of one half; all outputs come from the old x. */
static inline void sbox_half(uint64_t u[9], const uint64_t x[9])
{
#define SBOX(i) u[i] = x[i] ^ (x[((i) + 1) % 9] | ~x[((i) + 2) % 9]);
    FOR_EACH_LANE(SBOX)
#undef SBOX
}

/* Wiring pi (5.3 step 3): c[pi[i]] = u[i]. */
static inline void wire_half(uint64_t c[9], const uint64_t u[9])
{
#define WIRE(j) c[j] = u[WCHAIN_PI_INV[j]];
    FOR_EACH_LANE(WIRE)
#undef WIRE
}

/* Mixer L5w (5.3 step 4): y[i] is the XOR of five rotated lanes of c (the y
 * and c of the function it expands in). Horner's rule for rotations,
 *   y = ((((c0 <<< r0-r1) ^ c1) <<< r1-r2 ^ c2) <<< r2-r3 ^ c3) <<< r3-r4 ^ c4) <<< r4,
 * rotates only the accumulator: no lane of c has to be copied before a
 * (destructive, on x86) rotation, which saves a fifth of the mixer's
 * instructions. The rotation table is a macro argument, not a parameter, so
 * that its entries, and so every rotation count, are constants. */
#define MIX_STEP(rot, i, k) ((rot[i][k] - rot[i][(k) + 1]) & 63)
#define MIX_TERM(i, k) c[WCHAIN_SUPPORT[i][k]]
#define MIX_LANE(rot, i) { \
        uint64_t acc = rotl64(MIX_TERM(i, 0), MIX_STEP(rot, i, 0)) ^ MIX_TERM(i, 1); \
        acc = rotl64(acc, MIX_STEP(rot, i, 1)) ^ MIX_TERM(i, 2); \
        acc = rotl64(acc, MIX_STEP(rot, i, 2)) ^ MIX_TERM(i, 3); \
        acc = rotl64(acc, MIX_STEP(rot, i, 3)) ^ MIX_TERM(i, 4); \
        y[i] = rotl64(acc, rot[i][4]); }

/* The mixer of V1 and of the V2 left half. */
static inline void mix_left(uint64_t y[9], const uint64_t c[9])
{
#define MIX(i) MIX_LANE(WCHAIN_ROT_LEFT, i)
    FOR_EACH_LANE(MIX)
#undef MIX
}

/* Constant addition (5.3/5.4 step 1) of row r, and the XOR of the round's
 * expanded message vector Bh[r] (5.2), in one pass, spelled out lane by lane:
 * as a loop, -O2 kept x in memory and this step cost a fifth of the time. */
static inline void add_row(uint64_t x[WCHAIN_LANES], const uint64_t bh[WCHAIN_LANES], unsigned r)
{
    const uint64_t *rc = WCHAIN_RC[r];
#define ADD(i) x[i] ^= bh[i] ^ rc[i];
    FOR_EACH_LANE(ADD)
#if WCHAIN_LANES == 18
#define ADD_RIGHT(i) ADD(9 + (i))
    FOR_EACH_LANE(ADD_RIGHT)
#undef ADD_RIGHT
#endif
#undef ADD
}

#if WCHAIN_LANES == 9
/* Round_r of V1 (5.3). */
static inline void wchain_round(uint64_t x[9], const uint64_t bh[9], unsigned r)
{
    uint64_t u[9], c[9];
    add_row(x, bh, r);
    sbox_half(u, x);
    wire_half(c, u);
    mix_left(x, c);
}
#else
/* The mixer of the V2 right half (5.4 step 5). */
static inline void mix_right(uint64_t y[9], const uint64_t c[9])
{
#define MIX(i) MIX_LANE(WCHAIN_ROT_RIGHT, i)
    FOR_EACH_LANE(MIX)
#undef MIX
}

/* The V2 cross-swap (5.4 step 4): five lane pairs change halves. */
static inline void cross_swap(uint64_t c[18])
{
#define SWAP(p) { const int left = WCHAIN_CROSS_SWAP[p][0], right = 9 + WCHAIN_CROSS_SWAP[p][1]; \
                  uint64_t t = c[left]; c[left] = c[right]; c[right] = t; }
    SWAP(0) SWAP(1) SWAP(2) SWAP(3) SWAP(4)
#undef SWAP
}

/* Round_r of V2 (5.4): two V1-shaped halves joined by the cross-swap. */
static inline void wchain_round(uint64_t x[18], const uint64_t bh[18], unsigned r)
{
    uint64_t u[18], c[18];
    add_row(x, bh, r);
    sbox_half(u, x);
    sbox_half(u + 9, x + 9);
    wire_half(c, u);
    wire_half(c + 9, u + 9);
    cross_swap(c);
    mix_left(x, c);
    mix_right(x + 9, c + 9);
}
#endif

/* One expansion step (5.1) on each 9-lane group: older holds Bh[j-2] and
 * becomes Bh[j] = MEF(Bh[j-1]) ^ Bh[j-2], with newer = Bh[j-1] and
 * MEF(a) = S(a[i] rotated left by d[i]). */
static inline void expand(uint64_t older[WCHAIN_LANES], const uint64_t newer[WCHAIN_LANES])
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
 * Bh[j] is expanded on the fly into bh[j % 2], overwriting Bh[j-2] once its
 * round is done, so R - 1 expansion steps make Bh[2..R]. */
void wchain_compress(uint64_t state[WCHAIN_LANES], const uint64_t block[WCHAIN_BLOCK_LANES])
{
    uint64_t x[WCHAIN_LANES], bh[2][WCHAIN_LANES];
    unsigned r;
    int i;

    for (i = 0; i < WCHAIN_LANES; i++) {
        x[i] = state[i];
        bh[0][i] = block[i];                /* Bh[0]: the first half of the block */
        bh[1][i] = block[WCHAIN_LANES + i]; /* Bh[1]: the second half */
    }
    for (r = 0; r < WCHAIN_ROUNDS; r++) {
        wchain_round(x, bh[r % 2], r);
        WCHAIN_TRACE("round", x, r + 1);
        if (r + 2 <= WCHAIN_ROUNDS)         /* Bh[r+2], up to Bh[R] */
            expand(bh[r % 2], bh[(r + 1) % 2]);
    }
    WCHAIN_TRACE("feedforward", bh[WCHAIN_ROUNDS % 2], WCHAIN_ROUNDS);
    for (i = 0; i < WCHAIN_LANES; i++)
        state[i] ^= x[i] ^ bh[WCHAIN_ROUNDS % 2][i];
    WCHAIN_TRACE("output", state, 0);
}
