/* Wish's permutation P_T and absorb step (spec/wish.md §5-§8) with VAES on
 * 256-bit registers: the `vaes` variant (same structure as permutation_aesni.c).
 *
 * Lane arrangement: with H = l/2, register y[r] holds lane r in its low 128 bits and lane r + H in its high 128 bits
 * (r = 0 .. H-1; H = 4 for Wish512, 8 for Wish1024). So the rate (lanes 0 .. H-1)
 * is the low halves, the capacity (lanes H .. 2H-1) the high halves, lane 0
 * (round constants) is the low half of y[0] and the tweak lane H the high half
 * of y[0].
 *
 * One VAESENC does AESR on two lanes; the key [Rcon[k], 0] adds the round
 * constant into lane 0 only (§6). MIX (§8): the interleave stages at lane
 * distance d < H pair lanes in the same half of two registers, and 256-bit
 * unpacks work within 128-bit halves, so one unpack instruction does the
 * stage's PAIR on both halves at once. The last stage (64-bit units at
 * distance H) pairs the two halves of one register: new lane r = (lane r low
 * 64 bits, lane r+H low 64 bits) and new lane r+H = the high 64 bits of both,
 * i.e. one cross-half VPERMQ (quarters 0,2,1,3) per register. Per step that is
 * 2H VAESENC and 3H (Wish512) or 4H (Wish1024) shuffles instead of 4H AESENC and
 * 6H / 8H unpacks with 128-bit registers.
 *
 * Constant time by construction: no table is indexed and no branch taken on
 * state or message bytes.
 */
#include "wish.h"
#include "rcon_bytes.h"

#include <immintrin.h>

#define HALF (WISH_LANES / 2)  /* registers; also the tweak lane (high half of y[0]) */

static __m128i load128(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

/* [x, 0]: a lane into the low half, zero in the high half. */
static __m256i low_only(__m128i x)
{
    return _mm256_inserti128_si256(_mm256_setzero_si256(), x, 0);
}

/* [0, x]: a lane into the high half. */
static __m256i high_only(__m128i x)
{
    return _mm256_inserti128_si256(_mm256_setzero_si256(), x, 1);
}

/* interleave_w of §8 on registers (a, b): both halves at once. */
#define PAIR(y, unit, a, b)                                                 \
    do {                                                                    \
        const __m256i lo_ = _mm256_unpacklo_##unit(y[a], y[b]);            \
        y[b] = _mm256_unpackhi_##unit(y[a], y[b]);                         \
        y[a] = lo_;                                                         \
    } while (0)

#define PAIRS_1(y, unit) PAIR(y, unit, 0, 1); PAIR(y, unit, 2, 3)
#define PAIRS_2(y, unit) PAIR(y, unit, 0, 2); PAIR(y, unit, 1, 3)
#define HIGH_PAIRS_1(y, unit) PAIR(y, unit, 4, 5); PAIR(y, unit, 6, 7)
#define HIGH_PAIRS_2(y, unit) PAIR(y, unit, 4, 6); PAIR(y, unit, 5, 7)
#define PAIRS_4(y, unit) PAIR(y, unit, 0, 4); PAIR(y, unit, 1, 5); \
                         PAIR(y, unit, 2, 6); PAIR(y, unit, 3, 7)

/* The last stage, 64-bit units at lane distance H: within each register,
 * (lane r, lane r+H) -> (lo64 r, lo64 r+H | hi64 r, hi64 r+H). */
#define QUARTERS_0213 0xD8

#define QUARTERS(y, r) y[r] = _mm256_permute4x64_epi64(y[r], QUARTERS_0213)

/* MIX (§8). Written out register by register (no loop) so that the state stays
 * in registers. */
static void mix(__m256i y[HALF])
{
#if WISH_LANES == 8
    PAIRS_1(y, epi8);
    PAIRS_2(y, epi16);
    QUARTERS(y, 0); QUARTERS(y, 1); QUARTERS(y, 2); QUARTERS(y, 3);
#else
    PAIRS_1(y, epi8);
    HIGH_PAIRS_1(y, epi8);
    PAIRS_2(y, epi16);
    HIGH_PAIRS_2(y, epi16);
    PAIRS_4(y, epi32);
    QUARTERS(y, 0); QUARTERS(y, 1); QUARTERS(y, 2); QUARTERS(y, 3);
    QUARTERS(y, 4); QUARTERS(y, 5); QUARTERS(y, 6); QUARTERS(y, 7);
#endif
}

/* AESR on every lane, then Rcon[k] into lane 0 (§6). */
static void aes_rounds(__m256i y[HALF], int k)
{
    const __m256i zero = _mm256_setzero_si256();

    y[0] = _mm256_aesenc_epi128(y[0], low_only(load128(WISH_RCON_BYTES[k])));
    y[1] = _mm256_aesenc_epi128(y[1], zero);
    y[2] = _mm256_aesenc_epi128(y[2], zero);
    y[3] = _mm256_aesenc_epi128(y[3], zero);
#if WISH_LANES == 16
    y[4] = _mm256_aesenc_epi128(y[4], zero);
    y[5] = _mm256_aesenc_epi128(y[5], zero);
    y[6] = _mm256_aesenc_epi128(y[6], zero);
    y[7] = _mm256_aesenc_epi128(y[7], zero);
#endif
}

/* P_T (§6); `tweak` is [0, T]. */
static void permute(__m256i y[HALF], __m256i tweak)
{
    int step;

    for (step = 0; step < WISH_STEPS; step++) {
        y[0] = _mm256_xor_si256(y[0], tweak);
        aes_rounds(y, 2 * step);
        aes_rounds(y, 2 * step + 1);
        mix(y);
    }
}

/* The state is stored as the registers y[0 .. HALF-1], 32 bytes each. */
static __m256i load_register(const wish_state *state, int r)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)(state->opaque + 4 * r));
}

static void store_register(wish_state *state, int r, __m256i y)
{
    _mm256_storeu_si256((__m256i *)(void *)(state->opaque + 4 * r), y);
}

void wish_state_init(wish_state *state)
{
    int r;

    for (r = 0; r < HALF; r++)
        store_register(state, r, _mm256_setzero_si256());
}

void wish_state_absorb(wish_state *state, const unsigned char block[WISH_RATE_BYTES],
                       uint64_t block_index, int last)
{
    /* The tweak (§5): bytes 0..7 = the block index, little-endian, into lane H. */
    const __m256i tweak = high_only(_mm_set_epi32(0, 0, (int)(uint32_t)(block_index >> 32),
                                                  (int)(uint32_t)block_index));
    __m256i y[HALF], capacity[HALF];
    int r;

    for (r = 0; r < HALF; r++)  /* the rate is the low halves */
        y[r] = _mm256_xor_si256(load_register(state, r), low_only(load128(block + 16 * r)));
    if (last)  /* theta: byte 15 of the last lane (high half of y[HALF-1]) ^= 0x01 */
        y[HALF - 1] = _mm256_xor_si256(y[HALF - 1],
                                       _mm256_set_epi32(0x01000000, 0, 0, 0, 0, 0, 0, 0));
    for (r = 0; r < HALF; r++)  /* the capacity is the high halves */
        capacity[r] = _mm256_blend_epi32(_mm256_setzero_si256(), y[r], 0xF0);
    permute(y, tweak);
    for (r = 0; r < HALF; r++)  /* feed-forward of the capacity */
        store_register(state, r, _mm256_xor_si256(y[r], capacity[r]));
}

void wish_state_digest(const wish_state *state, unsigned char digest[WISH_DIGEST_BYTES])
{
    int r;

    for (r = 0; r < HALF; r++)
        _mm_storeu_si128((__m128i *)(void *)(digest + 16 * r),
                         _mm256_extracti128_si256(load_register(state, r), 1));
}
