/* The Pavelor permutation P (spec 3.2-3.4) with AES-NI: the `opt` variant.
 *
 * AESENC computes AR(x) ^ k (spec 3.2), so a round is 19 AESENC and one XOR,
 * written out in round_aesni.h (generated from round_wiring.json). The 19
 * AESENC of a round are independent, so P runs at the AES unit's throughput.
 * Constant time by construction: AESENC takes the same time for every input,
 * and no table is indexed and no branch taken on state or message bytes.
 *
 * Between calls the state is the 20 words in memory order (spec 3.1) in the
 * room pavelor_state gives; each permutation loads them into registers once.
 */
#include "pavelor.h"
#include "round_aesni.h"

static __m128i *state_words(pavelor_state *state)
{
    return (__m128i *)(void *)state->opaque;
}

void pavelor_state_load(pavelor_state *state, const uint8_t *bytes, size_t n)
{
    size_t i;

    for (i = 0; i < 20; i++) {
        const __m128i word = i < n / 16 ? LOAD(bytes + 16 * i) : _mm_setzero_si128();
        _mm_storeu_si128(state_words(state) + i, word);
    }
}

void pavelor_state_absorb(pavelor_state *state, const unsigned char *block, size_t n)
{
    __m128i *w = state_words(state);
    size_t i;

    for (i = 0; i < n / 16; i++)
        _mm_storeu_si128(w + i, _mm_xor_si128(LOAD(w + i), LOAD(block + 16 * i)));
}

void pavelor_state_permute(pavelor_state *state)
{
    aesni_permutation(state_words(state));
}

void pavelor_state_squeeze(const pavelor_state *state, unsigned char *out, size_t n)
{
    const unsigned char *bytes = (const unsigned char *)state->opaque;
    size_t i;

    for (i = 0; i < n; i++)
        out[i] = bytes[i];
}
