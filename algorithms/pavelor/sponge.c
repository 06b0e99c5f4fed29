/* The Pavelor sponge (spec 4-6): initial value, bit-level pad10*1, absorb, squeeze.
 *
 * Capacity is twice the digest, so the rate is 2560 - 2 d bits: 192, 128 or 64
 * bytes at the front of the state. Full blocks are absorbed in place; the last,
 * padded block is built in a local buffer. Branches, indices and copy lengths
 * depend on the message length only, never on message bits.
 */
#include "pavelor.h"

#include <string.h>

#define MAX_RATE_BYTES 192  /* Pavelor-512 */

/* Spec 4: zero state; words 0..3 end in the big-endian 32-bit values r, c,
 * 2560 and d. No permutation before absorbing. Only those four words are
 * loaded: the others are zero (a bitsliced load costs by the word). */
static void initial_value(pavelor_state *state, unsigned rate_bits, unsigned digest_bits)
{
    const unsigned long value[4] = {rate_bits, PAVELOR_STATE_BITS - rate_bits,
                                    PAVELOR_STATE_BITS, digest_bits};
    uint8_t bytes[4 * 16] = {0};
    int word, i;

    for (word = 0; word < 4; word++)
        for (i = 0; i < 4; i++)
            bytes[16 * word + 12 + i] = (uint8_t)(value[word] >> (24 - 8 * i));
    pavelor_state_load(state, bytes, sizeof bytes);
}

/* The last block: the remaining tail_bits (< rate) message bits, then
 * pad10*1 (spec 5). Reads ceil(tail_bits / 8) bytes of tail. */
static void absorb_last_block(pavelor_state *state, size_t rate_bytes,
                              const unsigned char *tail, size_t tail_bits)
{
    const size_t whole = tail_bits / 8, partial = tail_bits % 8;
    unsigned char block[MAX_RATE_BYTES] = {0};

    if (tail_bits != 0)
        memcpy(block, tail, (tail_bits + 7) / 8);
    /* Keep the high bits of a partial byte (the low ones may be garbage) and
     * put the first pad bit right after them. */
    block[whole] = (unsigned char)((block[whole] & (0xff00u >> partial)) | (0x80u >> partial));
    if (tail_bits == 8 * rate_bytes - 1) {
        /* The first pad bit took the block's last bit: the closing 1 goes
         * alone into one more block. */
        pavelor_state_absorb(state, block, rate_bytes);
        pavelor_state_permute(state);
        memset(block, 0, rate_bytes);
    }
    block[rate_bytes - 1] ^= 0x01;  /* the closing pad bit */
    pavelor_state_absorb(state, block, rate_bytes);
    pavelor_state_permute(state);
}

void pavelor_hash(unsigned digest_bits, const unsigned char *msg,
                  unsigned long long msg_len_bits, unsigned char *digest)
{
    const unsigned rate_bits = PAVELOR_STATE_BITS - 2 * digest_bits;
    const size_t rate_bytes = rate_bits / 8, digest_bytes = digest_bits / 8;
    pavelor_state state;
    size_t done;

    initial_value(&state, rate_bits, digest_bits);
    for (; msg_len_bits >= rate_bits; msg_len_bits -= rate_bits) {
        pavelor_state_absorb(&state, msg, rate_bytes);
        pavelor_state_permute(&state);
        msg += rate_bytes;
    }
    absorb_last_block(&state, rate_bytes, msg, (size_t)msg_len_bits);

    /* Spec 6: leading rate bytes of successive states (Pavelor-1024 needs two). */
    for (done = 0;;) {
        const size_t n = digest_bytes - done < rate_bytes ? digest_bytes - done : rate_bytes;

        pavelor_state_squeeze(&state, digest + done, n);
        done += n;
        if (done == digest_bytes)
            break;
        pavelor_state_permute(&state);
    }
}
