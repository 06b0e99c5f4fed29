/* Wish's permutation P_T and absorb step (spec/wish.md §5-§8) with VAES on
 * 512-bit registers and AVX-512 byte permutes: the `avx512` variant.
 *
 * Register z[q] holds state bytes 64q .. 64q+63, i.e. lanes 4q .. 4q+3 in its four
 * 128-bit slots, in state byte order (§3): Wish512 is two registers (the rate z[0],
 * the capacity z[1]), Wish1024 four (rate z[0], z[1]; capacity z[2], z[3]). Lane 0
 * (round constants) is slot 0 of z[0], the tweak lane l/2 slot 0 of z[R/2].
 *
 * One VAESENC does AESR on four lanes; the key [Rcon[k], 0, 0, 0] adds the round
 * constant to lane 0 only (§6). MIX (§8) is a byte permutation of the whole state,
 * out[i] = in[mix[i]]: VPERMT2B picks any byte of two registers (128 bytes), so for
 * Wish512 each output register is one VPERMT2B of (z[0], z[1]); for Wish1024 one
 * VPERMT2B of (z[0], z[1]) and one of (z[2], z[3]) with the same indices, then a
 * byte blend on the index's bit 7. Per step: 2R VAESENC and R (Wish512) or 3R
 * (Wish1024) permutes and blends, against the 4R AESENC and 6R/8R unpacks of `opt`.
 *
 * Every output lane of MIX depends on every input lane, so the steps form one chain
 * of two VAESENC (4 cycles each here) and one cross-slot permute (5 cycles) or two
 * (plus a 1-cycle blend): that latency, not the instruction count, sets the speed.
 * Nothing else sits on it: the tweak of the next step is moved in front of MIX
 * (MIX^-1 of a state holding only T) and added by the step's last VAESENC as its key.
 *
 * Constant time by construction: the index vectors are constants; no table is
 * indexed and no branch taken on state or message bytes.
 */
#include "wish.h"
#include "mix_bytes.h"
#include "rcon_bytes.h"

#include <immintrin.h>

/* The state must stay in registers: force the small helpers inline. */
#define INLINE static inline __attribute__((always_inline))

#define REGS (WISH_LANES / 4)        /* 512-bit registers of the state */
#define TWEAK_REG (REGS / 2)         /* lane l/2 is its slot 0 */

/* valgrind 3.19 decodes neither AVX-512 nor VAES (SIGILL): tests/test_constant_time.py
 * checks this file compiled with WISH_AVX512_AS_AESNI ("valgrind_twin_cflags" in
 * instances.json: AVX-512 and VAES off), where a 512-bit register is four 128-bit
 * ones, each 512-bit AESENC four 128-bit AESENC and each byte permute or blend a
 * loop over its constant indices. The algorithm above these few operations, every
 * branch and every address of it, is the same code. */
#ifdef WISH_AVX512_AS_AESNI
typedef union {
    __m128i x[4];
    unsigned char b[64];
} vec;
typedef uint64_t byte_mask;

INLINE vec vec_load(const void *p)
{
    vec v;
    int i;

    for (i = 0; i < 4; i++)
        v.x[i] = _mm_loadu_si128((const __m128i *)p + i);
    return v;
}

INLINE void vec_store(void *p, vec v)
{
    int i;

    for (i = 0; i < 4; i++)
        _mm_storeu_si128((__m128i *)p + i, v.x[i]);
}

INLINE vec vec_zero(void)
{
    vec v;
    int i;

    for (i = 0; i < 4; i++)
        v.x[i] = _mm_setzero_si128();
    return v;
}

/* [x, 0, 0, 0]: a lane into slot 0. */
INLINE vec vec_slot0(__m128i x)
{
    vec v = vec_zero();

    v.x[0] = x;
    return v;
}

INLINE vec vec_xor(vec a, vec b)
{
    int i;

    for (i = 0; i < 4; i++)
        a.x[i] = _mm_xor_si128(a.x[i], b.x[i]);
    return a;
}

INLINE vec vec_aesenc(vec a, vec key)
{
    int i;

    for (i = 0; i < 4; i++)
        a.x[i] = _mm_aesenc_si128(a.x[i], key.x[i]);
    return a;
}

/* out[i] = (a, b)[index[i] & 127] (VPERMT2B); the indices are constants. */
INLINE vec vec_permute2(vec a, vec index, vec b)
{
    vec out;
    int i;

    for (i = 0; i < 64; i++)
        out.b[i] = (index.b[i] & 64 ? b : a).b[index.b[i] & 63];
    return out;
}

/* Bit i: bit 7 of byte i (VPMOVB2M). */
INLINE byte_mask vec_top_bits(vec v)
{
    byte_mask mask = 0;
    int i;

    for (i = 0; i < 64; i++)
        mask |= (byte_mask)(v.b[i] >> 7) << i;
    return mask;
}

/* Byte i from b where bit i of the (constant) mask is set, else from a. */
INLINE vec vec_blend(byte_mask mask, vec a, vec b)
{
    int i;

    for (i = 0; i < 64; i++)
        if (mask >> i & 1)
            a.b[i] = b.b[i];
    return a;
}
#else
typedef __m512i vec;
typedef __mmask64 byte_mask;
#define vec_load(p) _mm512_loadu_si512(p)
#define vec_store(p, v) _mm512_storeu_si512(p, v)
#define vec_zero _mm512_setzero_si512
#define vec_slot0 _mm512_zextsi128_si512
#define vec_xor _mm512_xor_si512
#define vec_aesenc _mm512_aesenc_epi128
/* VPERMI2B, which overwrites a copy of the (constant) index vector: that copy is
 * made off the chain of dependent steps. _mm512_permutex2var_epi8 lets GCC pick
 * VPERMT2B, which overwrites a table, i.e. copies a state register on the chain. */
INLINE vec vec_permute2(vec a, vec index, vec b)
{
    __asm__("vpermi2b %[b], %[a], %[index]" : [index] "+v"(index) : [a] "v"(a), [b] "v"(b));
    return index;
}
#define vec_top_bits _mm512_movepi8_mask
#define vec_blend _mm512_mask_blend_epi8
#endif

typedef struct {
    vec index[REGS];                 /* Wish1024: the low 7 bits pick a byte of a pair */
#if REGS == 4
    byte_mask high_pair[REGS];       /* bytes taken from (z[2], z[3]): index bit 7 */
#endif
} byte_permutation;

/* The byte permutation out[i] = in[table[i]] of the whole state, as VPERMT2B indices
 * (and, for four registers, blend masks). */
static void load_permutation(byte_permutation *p, const unsigned char table[WISH_STATE_BYTES])
{
    int q;

    for (q = 0; q < REGS; q++) {
        p->index[q] = vec_load(table + 64 * q);
#if REGS == 4
        p->high_pair[q] = vec_top_bits(p->index[q]);
#endif
    }
}

INLINE void apply(const byte_permutation *p, vec z[REGS])
{
#if REGS == 2
    const vec out0 = vec_permute2(z[0], p->index[0], z[1]);

    z[1] = vec_permute2(z[0], p->index[1], z[1]);
    z[0] = out0;
#else
    vec out[REGS];
    int q;

    for (q = 0; q < REGS; q++)
        out[q] = vec_blend(p->high_pair[q], vec_permute2(z[0], p->index[q], z[1]),
                           vec_permute2(z[2], p->index[q], z[3]));
    for (q = 0; q < REGS; q++)
        z[q] = out[q];
#endif
}

INLINE vec rcon(int k)
{
    return vec_slot0(_mm_loadu_si128((const __m128i *)(const void *)WISH_RCON_BYTES[k]));
}

/* AESR on every lane, then Rcon[k] into lane 0 (§6); AESENC adds key[q] too. */
INLINE void aes_rounds(vec z[REGS], int k, const vec key[REGS])
{
    int q;

    z[0] = vec_aesenc(z[0], vec_xor(rcon(k), key[0]));
    for (q = 1; q < REGS; q++)
        z[q] = vec_aesenc(z[q], key[q]);
}

typedef struct {
    byte_permutation mix, unmix;
    vec zero[REGS];
} tables;

static void load_tables(tables *t)
{
    int q;

    load_permutation(&t->mix, WISH_MIX);
    load_permutation(&t->unmix, WISH_MIX_INVERSE);
    for (q = 0; q < REGS; q++)
        t->zero[q] = vec_zero();
}

/* P_T (§6) on a state whose first tweak is already added, followed by the XOR of
 * `after` (the feed-forward, and the next block's message and first tweak). Both
 * are moved in front of MIX and added by the last VAESENC of a step as its key:
 * MIX^-1 of the state holding only T (`tweak`) in steps 0 .. t-2, MIX^-1(after) in
 * the last step. Nothing but VAESENC and the permutes stays on the chain. */
INLINE void permute(const tables *t, vec z[REGS], const vec tweak[REGS], const vec after[REGS])
{
    vec carry[REGS], fold[REGS];
    int step, q;

    for (q = 0; q < REGS; q++) {
        carry[q] = tweak[q];
        fold[q] = after[q];
    }
    apply(&t->unmix, carry);
    apply(&t->unmix, fold);
#pragma GCC unroll 16
    for (step = 0; step < WISH_STEPS - 1; step++) {
        aes_rounds(z, 2 * step, t->zero);
        aes_rounds(z, 2 * step + 1, carry);
        apply(&t->mix, z);
    }
    aes_rounds(z, 2 * step, t->zero);
    aes_rounds(z, 2 * step + 1, fold);
    apply(&t->mix, z);
}

/* The state holding only the tweak of a block (§5): bytes 0..7 of lane l/2 = the
 * block index, little-endian. */
INLINE void tweak_of(const tables *t, vec tweak[REGS], uint64_t block_index)
{
    int q;

    for (q = 0; q < REGS; q++)
        tweak[q] = t->zero[q];
    tweak[TWEAK_REG] = vec_slot0(_mm_cvtsi64_si128((long long)block_index));
}

/* The start of an iteration of the absorb loop (§5): the block into the rate, theta
 * if last, the tweak of the first step; `capacity` is the snapshot F. */
INLINE void absorb_block(vec z[REGS], vec capacity[REGS / 2], const vec tweak[REGS],
                         const unsigned char block[WISH_RATE_BYTES], int last)
{
    static const unsigned char theta[64] = {[63] = 0x01};
    int q;

    for (q = 0; q < REGS / 2; q++)  /* the rate */
        z[q] = vec_xor(z[q], vec_load(block + 64 * q));
    if (last)  /* theta: byte 15 of the last lane (byte 63 of the last register) ^= 0x01 */
        z[REGS - 1] = vec_xor(z[REGS - 1], vec_load(theta));
    for (q = 0; q < REGS / 2; q++)
        capacity[q] = z[REGS / 2 + q];
    for (q = 0; q < REGS; q++)
        z[q] = vec_xor(z[q], tweak[q]);
}

void wish_state_init(wish_state *state)
{
    int q;

    for (q = 0; q < REGS; q++)
        vec_store(state->opaque + 8 * q, vec_zero());
}

void wish_state_absorb(wish_state *state, const unsigned char block[WISH_RATE_BYTES],
                       uint64_t block_index, int last)
{
    tables t;
    vec z[REGS], capacity[REGS / 2], tweak[REGS], after[REGS];
    int q;

    load_tables(&t);
    for (q = 0; q < REGS; q++)
        z[q] = vec_load(state->opaque + 8 * q);
    tweak_of(&t, tweak, block_index);
    absorb_block(z, capacity, tweak, block, last);
    for (q = 0; q < REGS / 2; q++) {  /* the feed-forward of the capacity */
        after[q] = t.zero[q];
        after[REGS / 2 + q] = capacity[q];
    }
    permute(&t, z, tweak, after);
    for (q = 0; q < REGS; q++)
        vec_store(state->opaque + 8 * q, z[q]);
}

/* The state and the permute indices stay in registers from block to block, and
 * each block's feed-forward is added together with the next block's message and
 * first tweak, inside the last step (see permute). */
void wish_state_absorb_full(wish_state *state, const unsigned char *blocks, uint64_t count)
{
    tables t;
    vec z[REGS], capacity[REGS / 2], tweak[REGS], next_tweak[REGS], after[REGS];
    uint64_t i;
    int q;

    if (count == 0)
        return;
    load_tables(&t);
    for (q = 0; q < REGS; q++)
        z[q] = vec_load(state->opaque + 8 * q);
    tweak_of(&t, tweak, 0);
    absorb_block(z, capacity, tweak, blocks, 0);
    for (i = 0; i < count; i++) {
        const int more = i + 1 < count;
        const unsigned char *next = blocks + (i + 1) * WISH_RATE_BYTES;

        tweak_of(&t, next_tweak, i + 1);
        for (q = 0; q < REGS / 2; q++) {
            after[q] = more ? vec_load(next + 64 * q) : t.zero[q];
            after[REGS / 2 + q] = vec_xor(capacity[q], more ? next_tweak[REGS / 2 + q]
                                                             : t.zero[q]);
        }
        permute(&t, z, tweak, after);
        /* The next block's F: its capacity before the first tweak. */
        for (q = 0; q < REGS / 2; q++)
            capacity[q] = vec_xor(z[REGS / 2 + q], more ? next_tweak[REGS / 2 + q] : t.zero[q]);
        for (q = 0; q < REGS; q++)
            tweak[q] = next_tweak[q];
    }
    for (q = 0; q < REGS; q++)
        vec_store(state->opaque + 8 * q, z[q]);
}

void wish_state_digest(const wish_state *state, unsigned char digest[WISH_DIGEST_BYTES])
{
    int q;

    for (q = 0; q < REGS / 2; q++)
        vec_store(digest + 64 * q, vec_load(state->opaque + 8 * (REGS / 2 + q)));
}
