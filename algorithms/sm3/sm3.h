/* SM3 (GB/T 32905-2016) over bit strings, with an incremental interface.
 *
 * Bits are taken most significant first; a message of L bits occupies
 * ceil(L/8) bytes and the unused low bits of its last byte are ignored.
 * Updates may have any bit length: a later update continues right after the
 * last bit of the previous one (bit-level concatenation, as the ICCS helpers
 * need). Used by the SM3 instance, the ICCS helpers and the KAT DRNG.
 */
#ifndef NGCC_SM3_H
#define NGCC_SM3_H

#include <stdint.h>

#define SM3_DIGEST_BYTES 32
#define SM3_BLOCK_BYTES 64

typedef struct {
    uint32_t state[8];
    unsigned char block[SM3_BLOCK_BYTES];
    unsigned block_bits;   /* bits waiting in block, 0..511 */
    uint64_t total_bits;   /* message bits absorbed so far */
} sm3_context;

void sm3_init(sm3_context *ctx);
void sm3_update_bits(sm3_context *ctx, const unsigned char *data, uint64_t bits);
/* Pad with the given 64-bit length field and write the digest. Standard SM3
 * passes ctx->total_bits; the ICCS helpers pass their own (see iccs-helpers.md §0). */
void sm3_finish(sm3_context *ctx, uint64_t length_field, unsigned char digest[SM3_DIGEST_BYTES]);
void sm3_final(sm3_context *ctx, unsigned char digest[SM3_DIGEST_BYTES]);
/* One-shot SM3 of the first bits of msg. */
void sm3_digest(const unsigned char *msg, uint64_t bits, unsigned char digest[SM3_DIGEST_BYTES]);

#endif
