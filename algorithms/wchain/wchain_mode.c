/* The WChain mode, "FChain" (spec/wchain.md sections 3-4): the message is cut
 * into blocks, its tail gets 10* padding in exactly one final block (no length
 * field), every block feeds H_i = CF(H_{i-1}, M_i) ^ H_{i-2} from
 * H_{-1} = H_0 = 0 and an XOR checksum of the padded blocks, and the digest is
 * the first lanes of CF(H_l, checksum).
 */
#include "wchain.h"

#include <string.h>

typedef struct {
    uint64_t older[WCHAIN_LANES];              /* H_{i-2} */
    uint64_t newer[WCHAIN_LANES];              /* H_{i-1} */
    uint64_t checksum[WCHAIN_BLOCK_LANES];     /* XOR of the padded blocks so far */
} fchain;

static uint64_t load_be64(const unsigned char *p)
{
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40
           | (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16
           | (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

static void store_be64(unsigned char *p, uint64_t x)
{
    int i;
    for (i = 0; i < 8; i++)
        p[i] = (unsigned char)(x >> (56 - 8 * i));
}

/* Absorb one padded block M_i (section 4). */
static void absorb_block(fchain *chain, const unsigned char bytes[WCHAIN_BLOCK_BYTES])
{
    uint64_t block[WCHAIN_BLOCK_LANES], h[WCHAIN_LANES];
    int i;

    for (i = 0; i < WCHAIN_BLOCK_LANES; i++) {
        block[i] = load_be64(bytes + 8 * i);
        chain->checksum[i] ^= block[i];
    }
    memcpy(h, chain->newer, sizeof h);
    wchain_compress(h, block);
    for (i = 0; i < WCHAIN_LANES; i++) {
        h[i] ^= chain->older[i];
        chain->older[i] = chain->newer[i];
        chain->newer[i] = h[i];
    }
}

void wchain_hash(const unsigned char *msg, unsigned long long msg_len_bits,
                 unsigned char digest[DIGEST_BIT_LENGTH / 8])
{
    fchain chain;
    unsigned char last[WCHAIN_BLOCK_BYTES];
    unsigned long long whole_bytes = msg_len_bits / 8;
    unsigned partial_bits = (unsigned)(msg_len_bits % 8);
    int i;

    memset(&chain, 0, sizeof chain);
    for (; whole_bytes >= WCHAIN_BLOCK_BYTES; whole_bytes -= WCHAIN_BLOCK_BYTES) {
        absorb_block(&chain, msg);
        msg += WCHAIN_BLOCK_BYTES;
    }

    /* Section 3: the remaining whole bytes, then the partial byte's message bits
     * with the padding 1 right after them (its low bits are not message bits and
     * are masked off), then zeros. The partial byte is read only if it exists. */
    memset(last, 0, sizeof last);
    if (whole_bytes > 0)
        memcpy(last, msg, (size_t)whole_bytes);
    last[whole_bytes] = (unsigned char)(0x80u >> partial_bits);
    if (partial_bits > 0)
        last[whole_bytes] |= msg[whole_bytes] & (unsigned char)(0xFF00u >> partial_bits);
    absorb_block(&chain, last);

    /* Finalization: CF(H_l, checksum), without the H_{l-1} feedback. */
    wchain_compress(chain.newer, chain.checksum);
    for (i = 0; i < WCHAIN_DIGEST_LANES; i++)
        store_be64(digest + 8 * i, chain.newer[i]);
}
