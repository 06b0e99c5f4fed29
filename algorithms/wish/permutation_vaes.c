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

/* The state must stay in registers: force the small helpers inline (GCC leaves
 * the Wish1024 MIX and rounds out of line otherwise, the state then in memory). */
#define INLINE static inline __attribute__((always_inline))

#define HALF (WISH_LANES / 2)

/* valgrind 3.19 cannot decode VAES (SIGILL): tests/test_constant_time.py checks
 * this file compiled with WISH_VAES_AS_AESNI ("valgrind_twin_cflags" in
 * instances.json), where each 256-bit AESENC is two 128-bit AESENC. Everything
 * else, every branch and every address, is the same code. */
#ifdef WISH_VAES_AS_AESNI
INLINE __m256i aesenc256(__m256i x, __m256i key)
{
    const __m128i lo = _mm_aesenc_si128(_mm256_castsi256_si128(x), _mm256_castsi256_si128(key));
    const __m128i hi = _mm_aesenc_si128(_mm256_extracti128_si256(x, 1),
                                        _mm256_extracti128_si256(key, 1));

    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}
#else
#define aesenc256 _mm256_aesenc_epi128
#endif  /* registers; also the tweak lane (high half of y[0]) */

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
INLINE void mix(__m256i y[HALF])
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

/* AESR on every lane, then Rcon[k] into lane 0 (§6); AESENC adds key[r] too. */
INLINE void aes_rounds(__m256i y[HALF], int k, const __m256i key[HALF])
{
    y[0] = aesenc256(y[0], _mm256_xor_si256(low_only(load128(WISH_RCON_BYTES[k])),
                                                       key[0]));
    y[1] = aesenc256(y[1], key[1]);
    y[2] = aesenc256(y[2], key[2]);
    y[3] = aesenc256(y[3], key[3]);
#if WISH_LANES == 16
    y[4] = aesenc256(y[4], key[4]);
    y[5] = aesenc256(y[5], key[5]);
    y[6] = aesenc256(y[6], key[6]);
    y[7] = aesenc256(y[7], key[7]);
#endif
}

/* The tweak of the next step, moved in front of MIX: MIX^-1 of the state that is
 * T in lane H and zero elsewhere, so that the last AESENC of a step adds it for
 * free (one XOR less on the critical path). By the closed forms of §8, byte b of
 * output lane H comes from input lane b % 4, byte 2 + b / 4 (Wish512: rev3(4) = 1)
 * or from input lane b, byte 1 (Wish1024: rev4(8) = 1); those input lanes are the
 * low halves of y[0 .. 3] or y[0 .. 7]. */
static void tweak_before_mix(__m256i carry[HALF], uint64_t block_index)
{
    int r;

    for (r = 0; r < HALF; r++) {
#if WISH_LANES == 8
        uint32_t bytes = (uint32_t)((block_index >> (8 * r)) & 0xff)
                         | (uint32_t)((block_index >> (8 * r + 32)) & 0xff) << 8;
        carry[r] = low_only(_mm_cvtsi32_si128((int)(bytes << 16)));
#else
        uint32_t byte = (uint32_t)((block_index >> (8 * r)) & 0xff);
        carry[r] = low_only(_mm_cvtsi32_si128((int)(byte << 8)));
#endif
    }
}

/* P_T (§6); `tweak` is [0, T] and `carry` its MIX^-1 (tweak_before_mix). */
static void permute(__m256i y[HALF], __m256i tweak, const __m256i carry[HALF])
{
    const __m256i zero[HALF] = {0};
    int step;

    y[0] = _mm256_xor_si256(y[0], tweak);
    for (step = 0; step < WISH_STEPS - 1; step++) {
        aes_rounds(y, 2 * step, zero);
        aes_rounds(y, 2 * step + 1, carry);  /* + the tweak of step + 1 */
        mix(y);
    }
    aes_rounds(y, 2 * step, zero);
    aes_rounds(y, 2 * step + 1, zero);
    mix(y);
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

/* One iteration of the absorb loop (§5) on the registers. */
INLINE void absorb(__m256i y[HALF], const unsigned char block[WISH_RATE_BYTES],
                   uint64_t block_index, int last)
{
    /* The tweak (§5): bytes 0..7 = the block index, little-endian, into lane H. */
    const __m256i tweak = high_only(_mm_set_epi32(0, 0, (int)(uint32_t)(block_index >> 32),
                                                  (int)(uint32_t)block_index));
    __m256i capacity[HALF], carry[HALF];
    int r;

    tweak_before_mix(carry, block_index);
    for (r = 0; r < HALF; r++)  /* the rate is the low halves */
        y[r] = _mm256_xor_si256(y[r], low_only(load128(block + 16 * r)));
    if (last)  /* theta: byte 15 of the last lane (high half of y[HALF-1]) ^= 0x01 */
        y[HALF - 1] = _mm256_xor_si256(y[HALF - 1],
                                       _mm256_set_epi32(0x01000000, 0, 0, 0, 0, 0, 0, 0));
    for (r = 0; r < HALF; r++)  /* the capacity is the high halves */
        capacity[r] = _mm256_blend_epi32(_mm256_setzero_si256(), y[r], 0xF0);
    permute(y, tweak, carry);
    for (r = 0; r < HALF; r++)  /* feed-forward of the capacity */
        y[r] = _mm256_xor_si256(y[r], capacity[r]);
}

void wish_state_absorb(wish_state *state, const unsigned char block[WISH_RATE_BYTES],
                       uint64_t block_index, int last)
{
    __m256i y[HALF];
    int r;

    for (r = 0; r < HALF; r++)
        y[r] = load_register(state, r);
    absorb(y, block, block_index, last);
    for (r = 0; r < HALF; r++)
        store_register(state, r, y[r]);
}

/* The state stays in registers from block to block (no store and reload on the
 * chain of dependent steps). */
void wish_state_absorb_full(wish_state *state, const unsigned char *blocks, uint64_t count)
{
    __m256i y[HALF];
    uint64_t i;
    int r;

    for (r = 0; r < HALF; r++)
        y[r] = load_register(state, r);
    for (i = 0; i < count; i++)
        absorb(y, blocks + i * WISH_RATE_BYTES, i, 0);
    for (r = 0; r < HALF; r++)
        store_register(state, r, y[r]);
}

void wish_state_digest(const wish_state *state, unsigned char digest[WISH_DIGEST_BYTES])
{
    int r;

    for (r = 0; r < HALF; r++)
        _mm_storeu_si128((__m128i *)(void *)(digest + 16 * r),
                         _mm256_extracti128_si256(load_register(state, r), 1));
}
