/* Wish's permutation P_T and absorb step (spec/wish.md §5-§8) with AES-NI:
 * the `opt` variant.
 *
 * A lane is exactly what an XMM register holds after a plain 16-byte load (§3),
 * and AESR(x) ^ k is AESENC(x, k) (§6): every lane takes AESENC with a zero
 * key, lane 0 with the round constant as its key. MIX (§8) is the interleave
 * network of unpack instructions, no table. Constant time by construction: no
 * table is indexed and no branch taken on state or message bytes.
 */
#include "wish.h"
#include "rcon_bytes.h"

#include <emmintrin.h>
#include <wmmintrin.h>

#define CAPACITY_LANE (WISH_LANES / 2)  /* where the tweak goes */

static __m128i load(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

static void store(void *p, __m128i x)
{
    _mm_storeu_si128((__m128i *)p, x);
}

/* interleave_w of §8 on the lanes (a, b): unpack at the unit size of `unit`. */
#define PAIR(x, unit, a, b)                                                 \
    do {                                                                    \
        const __m128i lo_ = _mm_unpacklo_##unit(x[a], x[b]);               \
        x[b] = _mm_unpackhi_##unit(x[a], x[b]);                            \
        x[a] = lo_;                                                         \
    } while (0)

/* The pairs (a, a + d) with bit d of a clear, for lane distance d = 1, 2, 4, 8. */
#define PAIRS_1(x, unit) PAIR(x, unit, 0, 1); PAIR(x, unit, 2, 3); \
                         PAIR(x, unit, 4, 5); PAIR(x, unit, 6, 7)
#define PAIRS_2(x, unit) PAIR(x, unit, 0, 2); PAIR(x, unit, 1, 3); \
                         PAIR(x, unit, 4, 6); PAIR(x, unit, 5, 7)
#define PAIRS_4(x, unit) PAIR(x, unit, 0, 4); PAIR(x, unit, 1, 5); \
                         PAIR(x, unit, 2, 6); PAIR(x, unit, 3, 7)
#define PAIRS_8(x, unit) PAIR(x, unit, 0, 8); PAIR(x, unit, 1, 9); \
                         PAIR(x, unit, 2, 10); PAIR(x, unit, 3, 11); \
                         PAIR(x, unit, 4, 12); PAIR(x, unit, 5, 13); \
                         PAIR(x, unit, 6, 14); PAIR(x, unit, 7, 15)
/* Lanes 8..15 pair among themselves the same way at distances 1, 2 and 4. */
#define HIGH_PAIRS_1(x, unit) PAIR(x, unit, 8, 9); PAIR(x, unit, 10, 11); \
                              PAIR(x, unit, 12, 13); PAIR(x, unit, 14, 15)
#define HIGH_PAIRS_2(x, unit) PAIR(x, unit, 8, 10); PAIR(x, unit, 9, 11); \
                              PAIR(x, unit, 12, 14); PAIR(x, unit, 13, 15)
#define HIGH_PAIRS_4(x, unit) PAIR(x, unit, 8, 12); PAIR(x, unit, 9, 13); \
                              PAIR(x, unit, 10, 14); PAIR(x, unit, 11, 15)

/* MIX (§8): 8 lanes interleave bytes at distance 1, 16-bit units at 2, 64-bit
 * units at 4; 16 lanes bytes at 1, 16-bit units at 2, 32-bit at 4, 64-bit at 8. */
static inline __attribute__((always_inline)) void mix(__m128i x[WISH_LANES])
{
#if WISH_LANES == 8
    PAIRS_1(x, epi8);
    PAIRS_2(x, epi16);
    PAIRS_4(x, epi64);
#else
    PAIRS_1(x, epi8);
    HIGH_PAIRS_1(x, epi8);
    PAIRS_2(x, epi16);
    HIGH_PAIRS_2(x, epi16);
    PAIRS_4(x, epi32);
    HIGH_PAIRS_4(x, epi32);
    PAIRS_8(x, epi64);
#endif
}

/* AESR on every lane, then Rcon[k] into lane 0 (§6). */
static inline __attribute__((always_inline)) void aes_rounds(__m128i x[WISH_LANES], int k)
{
    const __m128i zero = _mm_setzero_si128();

    x[0] = _mm_aesenc_si128(x[0], load(WISH_RCON_BYTES[k]));
    x[1] = _mm_aesenc_si128(x[1], zero);
    x[2] = _mm_aesenc_si128(x[2], zero);
    x[3] = _mm_aesenc_si128(x[3], zero);
    x[4] = _mm_aesenc_si128(x[4], zero);
    x[5] = _mm_aesenc_si128(x[5], zero);
    x[6] = _mm_aesenc_si128(x[6], zero);
    x[7] = _mm_aesenc_si128(x[7], zero);
#if WISH_LANES == 16
    x[8] = _mm_aesenc_si128(x[8], zero);
    x[9] = _mm_aesenc_si128(x[9], zero);
    x[10] = _mm_aesenc_si128(x[10], zero);
    x[11] = _mm_aesenc_si128(x[11], zero);
    x[12] = _mm_aesenc_si128(x[12], zero);
    x[13] = _mm_aesenc_si128(x[13], zero);
    x[14] = _mm_aesenc_si128(x[14], zero);
    x[15] = _mm_aesenc_si128(x[15], zero);
#endif
}

/* P_T (§6). */
static inline __attribute__((always_inline)) void permute(__m128i x[WISH_LANES], __m128i tweak)
{
    int step;

    for (step = 0; step < WISH_STEPS; step++) {
        x[CAPACITY_LANE] = _mm_xor_si128(x[CAPACITY_LANE], tweak);
        aes_rounds(x, 2 * step);
        aes_rounds(x, 2 * step + 1);
        mix(x);
    }
}

void wish_state_init(wish_state *state)
{
    int i;

    for (i = 0; i < WISH_LANES; i++)
        store(state->opaque + 2 * i, _mm_setzero_si128());
}

/* One iteration of the absorb loop (§5) on the registers. */
static inline __attribute__((always_inline))
void absorb(__m128i x[WISH_LANES], const unsigned char block[WISH_RATE_BYTES],
            uint64_t block_index, int last)
{
    /* The tweak (§5): bytes 0..7 = the block index, little-endian. */
    const __m128i tweak = _mm_set_epi32(0, 0, (int)(uint32_t)(block_index >> 32),
                                        (int)(uint32_t)block_index);
    __m128i capacity[WISH_LANES / 2];
    int i;

    for (i = 0; i < WISH_LANES / 2; i++)
        x[i] = _mm_xor_si128(x[i], load(block + 16 * i));
    if (last)  /* theta: byte 15 of the last lane ^= 0x01 */
        x[WISH_LANES - 1] = _mm_xor_si128(x[WISH_LANES - 1], _mm_set_epi32(0x01000000, 0, 0, 0));
    for (i = 0; i < WISH_LANES / 2; i++)
        capacity[i] = x[CAPACITY_LANE + i];
    permute(x, tweak);
    for (i = 0; i < WISH_LANES / 2; i++)  /* feed-forward of the capacity */
        x[CAPACITY_LANE + i] = _mm_xor_si128(x[CAPACITY_LANE + i], capacity[i]);
}

void wish_state_absorb(wish_state *state, const unsigned char block[WISH_RATE_BYTES],
                       uint64_t block_index, int last)
{
    __m128i x[WISH_LANES];
    int i;

    for (i = 0; i < WISH_LANES; i++)
        x[i] = load(state->opaque + 2 * i);
    absorb(x, block, block_index, last);
    for (i = 0; i < WISH_LANES; i++)
        store(state->opaque + 2 * i, x[i]);
}

/* The state stays in registers from block to block. */
void wish_state_absorb_full(wish_state *state, const unsigned char *blocks, uint64_t count)
{
    __m128i x[WISH_LANES];
    uint64_t block;
    int i;

    for (i = 0; i < WISH_LANES; i++)
        x[i] = load(state->opaque + 2 * i);
    for (block = 0; block < count; block++)
        absorb(x, blocks + block * WISH_RATE_BYTES, block, 0);
    for (i = 0; i < WISH_LANES; i++)
        store(state->opaque + 2 * i, x[i]);
}

void wish_state_digest(const wish_state *state, unsigned char digest[WISH_DIGEST_BYTES])
{
    int i;

    for (i = 0; i < WISH_LANES / 2; i++)
        store(digest + 16 * i, load(state->opaque + 2 * (CAPACITY_LANE + i)));
}
