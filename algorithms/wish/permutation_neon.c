/* Wish's permutation P_T and absorb step (spec/wish.md §5-§8) with the ARMv8
 * Cryptography Extension: the `neon` variant (AArch64).
 *
 * A lane is what a NEON register holds after a plain 16-byte load (§3). AESR(x) ^ k
 * (§6) is AESMC(AESE(x, 0)) ^ k: AESE's own key XOR comes before SubBytes and
 * ShiftRows, so it takes a zero key and the round key is XORed after MixColumns,
 * as x86's AESENC does it. MIX (§8) is the interleave network of ZIP1/ZIP2 (x86's
 * unpacklo/unpackhi), no table. Constant time by construction: no table is indexed
 * and no branch taken on state or message bytes.
 */
#include "wish.h"
#include "rcon_bytes.h"

#include <arm_neon.h>
#include <string.h>

#define CAPACITY_LANE (WISH_LANES / 2)  /* where the tweak goes */

static uint8x16_t load(const void *p)
{
    return vld1q_u8((const uint8_t *)p);
}

static void store(void *p, uint8x16_t x)
{
    vst1q_u8((uint8_t *)p, x);
}

/* interleave_w of §8 on the lanes (a, b) in units of `bits` bits: ZIP1 takes the
 * low halves' units alternately (a0 b0 a1 b1 ...), ZIP2 the high halves'. */
#define ZIP_PAIR(x, type, u, a, b)                                                 \
    do {                                                                           \
        const type xa_ = vreinterpretq_##u##_u8(x[a]), xb_ = vreinterpretq_##u##_u8(x[b]); \
        x[a] = vreinterpretq_u8_##u(vzip1q_##u(xa_, xb_));                         \
        x[b] = vreinterpretq_u8_##u(vzip2q_##u(xa_, xb_));                         \
    } while (0)
#define PAIR_8(x, a, b)                                                            \
    do {                                                                           \
        const uint8x16_t lo_ = vzip1q_u8(x[a], x[b]);                              \
        x[b] = vzip2q_u8(x[a], x[b]);                                              \
        x[a] = lo_;                                                                \
    } while (0)
#define PAIR_16(x, a, b) ZIP_PAIR(x, uint16x8_t, u16, a, b)
#define PAIR_32(x, a, b) ZIP_PAIR(x, uint32x4_t, u32, a, b)
#define PAIR_64(x, a, b) ZIP_PAIR(x, uint64x2_t, u64, a, b)
#define PAIR(x, bits, a, b) PAIR_##bits(x, a, b)

/* The pairs (a, a + d) with bit d of a clear, for lane distance d = 1, 2, 4, 8. */
#define PAIRS_1(x, bits) PAIR(x, bits, 0, 1); PAIR(x, bits, 2, 3); \
                         PAIR(x, bits, 4, 5); PAIR(x, bits, 6, 7)
#define PAIRS_2(x, bits) PAIR(x, bits, 0, 2); PAIR(x, bits, 1, 3); \
                         PAIR(x, bits, 4, 6); PAIR(x, bits, 5, 7)
#define PAIRS_4(x, bits) PAIR(x, bits, 0, 4); PAIR(x, bits, 1, 5); \
                         PAIR(x, bits, 2, 6); PAIR(x, bits, 3, 7)
#define PAIRS_8(x, bits) PAIR(x, bits, 0, 8); PAIR(x, bits, 1, 9); \
                         PAIR(x, bits, 2, 10); PAIR(x, bits, 3, 11); \
                         PAIR(x, bits, 4, 12); PAIR(x, bits, 5, 13); \
                         PAIR(x, bits, 6, 14); PAIR(x, bits, 7, 15)
/* Lanes 8..15 pair among themselves the same way at distances 1, 2 and 4. */
#define HIGH_PAIRS_1(x, bits) PAIR(x, bits, 8, 9); PAIR(x, bits, 10, 11); \
                              PAIR(x, bits, 12, 13); PAIR(x, bits, 14, 15)
#define HIGH_PAIRS_2(x, bits) PAIR(x, bits, 8, 10); PAIR(x, bits, 9, 11); \
                              PAIR(x, bits, 12, 14); PAIR(x, bits, 13, 15)
#define HIGH_PAIRS_4(x, bits) PAIR(x, bits, 8, 12); PAIR(x, bits, 9, 13); \
                              PAIR(x, bits, 10, 14); PAIR(x, bits, 11, 15)

/* MIX (§8): 8 lanes interleave bytes at distance 1, 16-bit units at 2, 64-bit
 * units at 4; 16 lanes bytes at 1, 16-bit units at 2, 32-bit at 4, 64-bit at 8. */
static void mix(uint8x16_t x[WISH_LANES])
{
#if WISH_LANES == 8
    PAIRS_1(x, 8);
    PAIRS_2(x, 16);
    PAIRS_4(x, 64);
#else
    PAIRS_1(x, 8);
    HIGH_PAIRS_1(x, 8);
    PAIRS_2(x, 16);
    HIGH_PAIRS_2(x, 16);
    PAIRS_4(x, 32);
    HIGH_PAIRS_4(x, 32);
    PAIRS_8(x, 64);
#endif
}

/* AESR (§6): SubBytes, ShiftRows, MixColumns. */
static uint8x16_t aesr(uint8x16_t x)
{
    return vaesmcq_u8(vaeseq_u8(x, vdupq_n_u8(0)));
}

/* AESR on every lane, then Rcon[k] into lane 0 (§6). */
static void aes_rounds(uint8x16_t x[WISH_LANES], int k)
{
    int i;

    x[0] = veorq_u8(aesr(x[0]), load(WISH_RCON_BYTES[k]));
    for (i = 1; i < WISH_LANES; i++)
        x[i] = aesr(x[i]);
}

/* P_T (§6). */
static void permute(uint8x16_t x[WISH_LANES], uint8x16_t tweak)
{
    int step;

    for (step = 0; step < WISH_STEPS; step++) {
        x[CAPACITY_LANE] = veorq_u8(x[CAPACITY_LANE], tweak);
        aes_rounds(x, 2 * step);
        aes_rounds(x, 2 * step + 1);
        mix(x);
    }
}

void wish_state_init(wish_state *state)
{
    memset(state->opaque, 0, sizeof state->opaque);
}

void wish_state_absorb(wish_state *state, const unsigned char block[WISH_RATE_BYTES],
                       uint64_t block_index, int last)
{
    unsigned char tweak_bytes[16] = {0}, theta_bytes[16] = {0};
    uint8x16_t x[WISH_LANES], capacity[WISH_LANES / 2], tweak;
    int i;

    for (i = 0; i < 8; i++)  /* the tweak (§5): bytes 0..7 = the block index, LE */
        tweak_bytes[i] = (unsigned char)(block_index >> (8 * i));
    tweak = load(tweak_bytes);
    theta_bytes[15] = 0x01;
    for (i = 0; i < WISH_LANES; i++)
        x[i] = load(state->opaque + 2 * i);
    for (i = 0; i < WISH_LANES / 2; i++)
        x[i] = veorq_u8(x[i], load(block + 16 * i));
    if (last)  /* theta: byte 15 of the last lane ^= 0x01 */
        x[WISH_LANES - 1] = veorq_u8(x[WISH_LANES - 1], load(theta_bytes));
    for (i = 0; i < WISH_LANES / 2; i++)
        capacity[i] = x[CAPACITY_LANE + i];
    permute(x, tweak);
    for (i = 0; i < WISH_LANES / 2; i++)  /* feed-forward of the capacity */
        x[CAPACITY_LANE + i] = veorq_u8(x[CAPACITY_LANE + i], capacity[i]);
    for (i = 0; i < WISH_LANES; i++)
        store(state->opaque + 2 * i, x[i]);
}

void wish_state_absorb_full(wish_state *state, const unsigned char *blocks, uint64_t count)
{
    uint64_t i;

    for (i = 0; i < count; i++)
        wish_state_absorb(state, blocks + i * WISH_RATE_BYTES, i, 0);
}

void wish_state_digest(const wish_state *state, unsigned char digest[WISH_DIGEST_BYTES])
{
    memcpy(digest, state->opaque + 2 * CAPACITY_LANE, WISH_DIGEST_BYTES);
}
