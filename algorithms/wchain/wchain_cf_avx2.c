/* The WChain compression function CF (spec/wchain.md section 5) with AVX2:
 * the `opt` variant's replacement for wchain_cf.c (same wchain_compress).
 *
 * Lanes in parallel. A 9-lane half is kept as three 4-lane vectors in
 * "stride-3" order: group m = 0, 1, 2 holds lanes (m, m+3, m+6) and a spare
 * lane that is never read. The design suits this order:
 *   - the S-box (5.3 step 2) needs x[i+1] and x[i+2], a shift of the 9-cycle by
 *     1 or 2: whole groups, or a group with its three lanes rotated (vpermq);
 *   - the wiring pi (step 3) is c[j] = u[4j mod 9] (pi_inv = 4j mod 9), and as
 *     4 = 1 mod 3 it maps group m of u onto group m of c, lanes rotated by m;
 *   - the mixer (step 4) reads c[i + off] with off = 0, 1, 2, 3, 7: again
 *     groups of c, some with their lanes rotated;
 *   - the per-lane rotation counts become per-lane variable shifts (vpsllvq,
 *     vpsrlvq), and the V2 cross-swap is two unpacks and a blend per group pair.
 * The message expansion (5.1) is done the same way, a step per round.
 *
 * Complemented values. AVX2 has and-not (~a & b) but no or-not, so the S-box
 * u = x ^ (x1 | ~x2) is computed as ~u = x ^ (~x1 & x2) from plain x, and as
 * u = a ^ (~a2 & a1) from a = ~x: two instructions a lane either way, but it
 * flips the polarity. The mixer XORs five terms, so its output has the
 * polarity of its input. The polarities of the state and of the expanded
 * message words repeat with period 3 (both round counts are multiples of 3):
 *   round r:        X_r is plain for r % 3 == 0, complemented otherwise;
 *   Bh[j]:          kept complemented for j % 3 == 2, plain otherwise;
 *   after round R-1 and Bh[R] (R = 18, 24): plain,
 * so the loop body is three rounds with fixed formulas and no NOT anywhere.
 *
 * Constant time: XOR, and-not, shifts by constant counts and fixed lane
 * permutations; no table is indexed by data and no branch depends on it.
 */
#include "wchain.h"
#include "wchain_tables.h"

#include <immintrin.h>

#if WCHAIN_ROUNDS % 3 != 0
#error "wchain_cf_avx2.c: the polarity pattern needs a round count divisible by 3"
#endif

#define GROUPS (WCHAIN_LANES / 3)   /* 3 (V1) or 6 (V2): group 3h + m of half h */
#define INLINE static inline __attribute__((always_inline))
/* -O2 leaves short loops rolled and their arrays in memory: unroll them. */
#define UNROLLED _Pragma("GCC unroll 8")

typedef __m256i vec;

/* The three lanes of a group rotated by one or two places: (v1, v2, v0), (v2, v0, v1). */
#define LROT1(v) _mm256_permute4x64_epi64((v), _MM_SHUFFLE(3, 0, 2, 1))
#define LROT2(v) _mm256_permute4x64_epi64((v), _MM_SHUFFLE(3, 1, 0, 2))

/* Per-lane constants of group m from a [9][...] table column: (t[m], t[m+3], t[m+6], 0). */
#define COLUMN(t, m, k) _mm256_set_epi64x(0, (t)[(m) + 6][k], (t)[(m) + 3][k], (t)[m][k])
#define SPARE_64 _mm256_set_epi64x(64, 0, 0, 0)

/* x rotated left lane by lane by the counts n (0..63; 64 - n is 64 for n = 0, which
 * vpsrlvq turns into 0, so a count of 0 is the identity). */
INLINE vec rotate(vec x, vec n)
{
    const vec n_right = _mm256_sub_epi64(_mm256_set1_epi64x(64), n);
    return _mm256_xor_si256(_mm256_sllv_epi64(x, n), _mm256_srlv_epi64(x, n_right));
}

/* The S-box layer on one half (three groups). plain_in: the input is x itself, and
 * the output is ~S(x); otherwise the input is ~x and the output S(x). */
INLINE void sbox(vec out[3], const vec in[3], const int plain_in)
{
    const vec r0 = LROT1(in[0]), r1 = LROT1(in[1]);
    const vec next1[3] = {in[1], in[2], r0};   /* lanes i + 1 */
    const vec next2[3] = {in[2], r0, r1};      /* lanes i + 2 */
    int m;
    UNROLLED
    for (m = 0; m < 3; m++)
        out[m] = _mm256_xor_si256(in[m], plain_in ? _mm256_andnot_si256(next1[m], next2[m])
                                                  : _mm256_andnot_si256(next2[m], next1[m]));
}

/* c after the wiring of one half, and its groups with lanes rotated, as the mixer
 * reads them: group m of c is group m of u with lanes rotated by m. */
typedef struct {
    vec c0, c1, c2;          /* groups of c */
    vec c0r1, c1r1, c2r1;    /* ... lanes rotated by one */
    vec c1r2, c2r2;          /* ... by two */
} wired;

INLINE void wire(wired *w, const vec u[3])
{
    w->c0 = u[0];
    w->c1 = LROT1(u[1]);
    w->c2 = LROT2(u[2]);
    w->c0r1 = LROT1(u[0]);
    w->c1r1 = LROT2(u[1]);
    w->c2r1 = u[2];
    w->c1r2 = u[1];
    w->c2r2 = LROT1(u[2]);
}

/* Mixer L5w of one half with rotation table rot (5.3 step 4). Output lanes i of
 * group m read c[i], c[i+1], c[i+2], c[i+3], c[i+7] (mod 9). */
#define MIX_TERM(src, rot, m, k) rotate((src), COLUMN(rot, m, k))
#define MIX_GROUP(y, rot, m, s0, s1, s2, s3, s4) \
    y = _mm256_xor_si256(MIX_TERM(s0, rot, m, 0), MIX_TERM(s1, rot, m, 1)); \
    y = _mm256_xor_si256(y, MIX_TERM(s2, rot, m, 2)); \
    y = _mm256_xor_si256(y, MIX_TERM(s3, rot, m, 3)); \
    y = _mm256_xor_si256(y, MIX_TERM(s4, rot, m, 4));
#define MIX_HALF(y, w, rot) { \
        MIX_GROUP(y[0], rot, 0, (w).c0, (w).c1, (w).c2, (w).c0r1, (w).c1r2) \
        MIX_GROUP(y[1], rot, 1, (w).c1, (w).c2, (w).c0r1, (w).c1r1, (w).c2r2) \
        MIX_GROUP(y[2], rot, 2, (w).c2, (w).c0r1, (w).c1r1, (w).c2r1, (w).c0) }

#if WCHAIN_LANES == 18
/* The V2 cross-swap (5.4 step 4) on groups 0 and 1 of both halves (group 2 keeps
 * its lanes): pairs (cL0, cR0), (cL1, cR3), (cL3, cR1), (cL4, cR4), (cL6, cR6) of
 * WCHAIN_CROSS_SWAP. With A, B = left groups 0, 1 and P, Q = right groups 0, 1:
 * A = (P0, Q0, P2), B = (P1, Q1, B2), P = (A0, B0, A2), Q = (A1, B1, Q2). */
INLINE void cross_swap(wired *left, wired *right)
{
    const vec a = left->c0, b = left->c1, p = right->c0, q = right->c1;
    left->c0 = _mm256_unpacklo_epi64(p, q);
    right->c0 = _mm256_unpacklo_epi64(a, b);
    left->c1 = _mm256_blend_epi32(_mm256_unpackhi_epi64(p, q), b, 0x30);
    right->c1 = _mm256_blend_epi32(_mm256_unpackhi_epi64(a, b), q, 0x30);
    left->c0r1 = LROT1(left->c0);
    left->c1r1 = LROT1(left->c1);
    left->c1r2 = LROT2(left->c1);
    right->c0r1 = LROT1(right->c0);
    right->c1r1 = LROT1(right->c1);
    right->c1r2 = LROT2(right->c1);
}
#endif

/* Round r (5.3, 5.4): x := Round_r(x ^ Bh[r]), x and Bh[r] as stored. plain_x: the
 * round's input x ^ Bh[r] ^ RC is plain (else complemented; the output is then
 * plain, and the other way round). */
INLINE void round_r(vec x[GROUPS], const vec bh[GROUPS], unsigned r, const int plain_x)
{
    vec u[GROUPS];
    wired left;
    int g;

    UNROLLED
    for (g = 0; g < GROUPS; g++)
        x[g] = _mm256_xor_si256(_mm256_xor_si256(x[g], bh[g]),
                                _mm256_loadu_si256((const vec *)&WCHAIN_RC_STRIDE3[r][4 * g]));
    sbox(u, x, plain_x);
    wire(&left, u);
#if WCHAIN_LANES == 9
    MIX_HALF(x, left, WCHAIN_ROT_LEFT)
#else
    {
        wired right;
        sbox(u + 3, x + 3, plain_x);
        wire(&right, u + 3);
        cross_swap(&left, &right);
        MIX_HALF(x, left, WCHAIN_ROT_LEFT)
        MIX_HALF((x + 3), right, WCHAIN_ROT_RIGHT)
    }
#endif
}

/* One expansion step (5.1) on each half: older := MEF(newer) ^ older, as stored.
 * plain_newer: newer is stored plain (MEF's S-box output is then complemented). */
INLINE void expand(vec older[GROUPS], const vec newer[GROUPS], const int plain_newer)
{
    int h, m;
    UNROLLED
    for (h = 0; h < GROUPS; h += 3) {
        vec t[3], s[3];
        UNROLLED
        for (m = 0; m < 3; m++)
            t[m] = rotate(newer[h + m], _mm256_set_epi64x(0, WCHAIN_EXPAND_ROT[m + 6],
                                                          WCHAIN_EXPAND_ROT[m + 3],
                                                          WCHAIN_EXPAND_ROT[m]));
        sbox(s, t, plain_newer);
        UNROLLED
        for (m = 0; m < 3; m++)
            older[h + m] = _mm256_xor_si256(older[h + m], s[m]);
    }
}

/* Lanes to and from the stride-3 order. */
static void load_groups(vec out[GROUPS], const uint64_t *lanes)
{
    int h, m;
    UNROLLED
    for (h = 0; h < GROUPS / 3; h++)
        UNROLLED
        for (m = 0; m < 3; m++) {
            const uint64_t *p = lanes + 9 * h + m;
            out[3 * h + m] = _mm256_set_epi64x(0, (long long)p[6], (long long)p[3],
                                               (long long)p[0]);
        }
}

static void xor_into_lanes(uint64_t *lanes, const vec in[GROUPS])
{
    int h, m, l;
    UNROLLED
    for (h = 0; h < GROUPS / 3; h++)
        UNROLLED
        for (m = 0; m < 3; m++) {
            uint64_t group[4];
            _mm256_storeu_si256((vec *)group, in[3 * h + m]);
            UNROLLED
            for (l = 0; l < 3; l++)
                lanes[9 * h + m + 3 * l] ^= group[l];
        }
}

/* Two vector groups as one, for copying whole states. */
#define COPY(to, from) { int g_; UNROLLED for (g_ = 0; g_ < GROUPS; g_++) (to)[g_] = (from)[g_]; }

/* CF (5.2): X := V; X := Round_r(X ^ Bh[r]) for r = 0..R-1; V ^ X ^ Bh[R].
 * e0, e1 hold Bh[r], Bh[r+1]; each round expands Bh[r+2] (the last one expands
 * an unused Bh[R+1], which costs less than a branch). */
void wchain_compress(uint64_t state[WCHAIN_LANES], const uint64_t block[WCHAIN_BLOCK_LANES])
{
    vec x[GROUPS], e0[GROUPS], e1[GROUPS];
    unsigned r;

    load_groups(x, state);
    load_groups(e0, block);                 /* Bh[0]: the first half of the block */
    load_groups(e1, block + WCHAIN_LANES);  /* Bh[1]: the second half */
    for (r = 0; r < WCHAIN_ROUNDS; r += 3) {
        /* r % 3 == 0: x plain, Bh[r] and Bh[r+1] plain; Bh[r+2] comes out complemented. */
        round_r(x, e0, r, 1);
        expand(e0, e1, 1);
        /* r + 1: x complemented; Bh[r+1] plain, Bh[r+2] complemented; Bh[r+3] plain. */
        round_r(x, e1, r + 1, 0);
        expand(e1, e0, 0);
        /* r + 2: x complemented (from the plain output of r + 1, and Bh[r+2]). */
        round_r(x, e0, r + 2, 0);
        expand(e0, e1, 1);
        {
            vec t[GROUPS];
            COPY(t, e0) COPY(e0, e1) COPY(e1, t)
        }
    }
    /* After round R - 1 (R - 1 = 2 mod 3) x is plain, and so is Bh[R] (R = 0 mod 3). */
    xor_into_lanes(state, x);
    xor_into_lanes(state, e0);
}
