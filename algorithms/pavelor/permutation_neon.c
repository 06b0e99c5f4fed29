/* The Pavelor permutation P (spec 3.2-3.4) with the ARMv8 Cryptography
 * Extension: the `neon` variant (AArch64).
 *
 * AR(x) ^ k (spec 3.2) is AESMC(AESE(x, 0)) ^ k, so a round is 19 of those and
 * one XOR, written out in round_neon.h (generated from round_wiring.json in the
 * order of the AES-NI variant). Constant time by construction: AESE and AESMC
 * take the same time for every input, and no table is indexed and no branch
 * taken on state or message bytes.
 *
 * Between calls the state is the 20 words in memory order (spec 3.1) in the
 * room pavelor_state gives; each permutation loads them into registers once.
 */
#include "pavelor.h"
#include "round_neon.h"

static uint8x16_t *state_words(pavelor_state *state)
{
    return (uint8x16_t *)(void *)state->opaque;
}

static void store(uint8x16_t *to, uint8x16_t x)
{
    vst1q_u8((uint8_t *)(void *)to, x);
}

void pavelor_state_load(pavelor_state *state, const uint8_t *bytes, size_t n)
{
    size_t i;

    for (i = 0; i < 20; i++) {
        const uint8x16_t word = i < n / 16 ? LOAD(bytes + 16 * i) : vdupq_n_u8(0);
        store(state_words(state) + i, word);
    }
}

void pavelor_state_absorb(pavelor_state *state, const unsigned char *block, size_t n)
{
    uint8x16_t *w = state_words(state);
    size_t i;

    for (i = 0; i < n / 16; i++)
        store(w + i, veorq_u8(LOAD(w + i), LOAD(block + 16 * i)));
}

void pavelor_state_permute(pavelor_state *state)
{
    neon_permutation(state_words(state));
}

void pavelor_state_squeeze(const pavelor_state *state, unsigned char *out, size_t n)
{
    const unsigned char *bytes = (const unsigned char *)state->opaque;
    size_t i;

    for (i = 0; i < n; i++)
        out[i] = bytes[i];
}
