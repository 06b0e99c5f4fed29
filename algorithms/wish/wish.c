/* Wish: padding (§4) and the absorb loop (§5) of spec/wish.md, common to every
 * variant. Full message blocks are read in place; only the last, padded block
 * is copied into a local buffer. Branches and copy lengths depend on the
 * message length only.
 */
#include "wish.h"

#include <string.h>

void wish_hash(const unsigned char *msg, unsigned long long msg_len_bits,
               unsigned char digest[WISH_DIGEST_BYTES])
{
    const unsigned long long rate_bits = 8 * WISH_RATE_BYTES;
    /* b = floor(bits / r) + 1 blocks (§4): the full ones, then always a padded one. */
    unsigned long long full_blocks = msg_len_bits / rate_bits;
    unsigned tail_bits = (unsigned)(msg_len_bits % rate_bits);
    unsigned tail_bytes = tail_bits / 8, partial_bits = tail_bits % 8;
    unsigned char last[WISH_RATE_BYTES] = {0};
    wish_state state;

    wish_state_init(&state);
    wish_state_absorb_full(&state, msg, full_blocks);

    /* Copy the ceil(tail_bits / 8) bytes that are left, keep the message bits of a
     * partial byte and put the single 1 bit right after them. */
    if (tail_bits > 0)
        memcpy(last, msg + full_blocks * WISH_RATE_BYTES, (tail_bits + 7) / 8);
    last[tail_bytes] = (unsigned char)((last[tail_bytes] & (0xff00u >> partial_bits))
                                       | (0x80u >> partial_bits));
    wish_state_absorb(&state, last, full_blocks, 1);
    wish_state_digest(&state, digest);
}
