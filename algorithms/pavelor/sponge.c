/* The Pavelor sponge (spec 4-6): initial value, bit-level pad10*1, absorb, squeeze.
 *
 * Capacity is twice the digest, so the rate is 2560 - 2 d bits: 192, 128 or 64
 * bytes at the front of the state. Branches and indices depend on the message
 * length only, never on message bits.
 */
#include "pavelor.h"

#include <stddef.h>
#include <string.h>

/* Spec 4: zero state; words 0..3 end in the big-endian 32-bit values r, c,
 * 2560 and d. No permutation before absorbing. */
static void initial_value(uint8_t state[PAVELOR_STATE_BYTES], unsigned rate_bits,
                          unsigned digest_bits)
{
    const unsigned long value[4] = {rate_bits, PAVELOR_STATE_BITS - rate_bits,
                                    PAVELOR_STATE_BITS, digest_bits};
    int word, i;

    memset(state, 0, PAVELOR_STATE_BYTES);
    for (word = 0; word < 4; word++)
        for (i = 0; i < 4; i++)
            state[16 * word + 12 + i] = (uint8_t)(value[word] >> (24 - 8 * i));
}

static void xor_bytes(uint8_t *state, const unsigned char *msg, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        state[i] ^= msg[i];
}

/* The last block: the remaining tail_bits (< rate) message bits, then
 * pad10*1 (spec 5). Reads ceil(tail_bits / 8) bytes. */
static void absorb_last_block(uint8_t state[PAVELOR_STATE_BYTES], size_t rate_bytes,
                              const unsigned char *tail, size_t tail_bits)
{
    const size_t whole = tail_bits / 8, partial = tail_bits % 8;

    xor_bytes(state, tail, whole);
    if (partial != 0)  /* keep the high bits; the low ones may be garbage */
        state[whole] ^= tail[whole] & (uint8_t)(0xff << (8 - partial));
    state[whole] ^= (uint8_t)(0x80 >> partial);  /* the first pad bit */
    if (tail_bits == 8 * rate_bytes - 1)
        /* The first pad bit took the block's last bit: the closing 1 goes
         * alone into one more block. */
        pavelor_permutation(state);
    state[rate_bytes - 1] ^= 0x01;                /* the closing pad bit */
    pavelor_permutation(state);
}

void pavelor_hash(unsigned digest_bits, const unsigned char *msg,
                  unsigned long long msg_len_bits, unsigned char *digest)
{
    const unsigned rate_bits = PAVELOR_STATE_BITS - 2 * digest_bits;
    const size_t rate_bytes = rate_bits / 8, digest_bytes = digest_bits / 8;
    uint8_t state[PAVELOR_STATE_BYTES];
    size_t done;

    initial_value(state, rate_bits, digest_bits);
    for (; msg_len_bits >= rate_bits; msg_len_bits -= rate_bits) {
        xor_bytes(state, msg, rate_bytes);
        pavelor_permutation(state);
        msg += rate_bytes;
    }
    absorb_last_block(state, rate_bytes, msg, (size_t)msg_len_bits);

    /* Spec 6: leading rate bytes of successive states (Pavelor-1024 needs two). */
    for (done = 0;;) {
        const size_t n = digest_bytes - done < rate_bytes ? digest_bytes - done : rate_bytes;

        memcpy(digest + done, state, n);
        done += n;
        if (done == digest_bytes)
            break;
        pavelor_permutation(state);
    }
}
