/* The ICCS auxiliary helpers: sm3hash, pseudohash, pseudoXOF (spec/iccs-helpers.md).
 *
 * Messages are bit strings (msg, bits): the first `bits` bits of msg, most
 * significant bit first; at most ceil(bits/8) bytes are read and the unused low
 * bits of a partial last byte are ignored. Every SM3 inside the helpers writes
 * the helpers' quirky length field (iccs_sm3_length_field, spec §0).
 */
#ifndef NGCC_ICCS_H
#define NGCC_ICCS_H

#include <stdint.h>

#include "../sm3/sm3.h"

#define ICCS_OK 0
#define ICCS_ERR_LENGTH (-4) /* unsupported output length */

/* The 64-bit length field the helpers' SM3 pads with for a message of `bits`
 * bits (spec §0): standard (= bits) below 2^32 bits; above, bits 32..40 are lost. */
uint64_t iccs_sm3_length_field(uint64_t bits);

/* sm3_finish with the helpers' length field for everything absorbed into ctx. */
void iccs_sm3_finish(sm3_context *ctx, unsigned char digest[SM3_DIGEST_BYTES]);

/* §1: d must be 256; writes 32 bytes. */
int iccs_sm3hash(int d, const unsigned char *msg, uint64_t bits, unsigned char *digest);

/* §2: HMAC-SM3 under the fixed ICCS key; writes 32 bytes. */
void iccs_mac(const unsigned char *x, uint64_t x_bits, unsigned char mac[SM3_DIGEST_BYTES]);

/* §3: d in {512, 768, 1024}; writes d/8 bytes. */
int iccs_pseudohash(int d, const unsigned char *msg, uint64_t bits, unsigned char *digest);

/* §4: writes exactly ceil(n/8) bytes, the last one masked to its n mod 8 leading
 * bits. The helpers document n < 2^40 - 2^8 (the block counter is 32 bits). */
int iccs_pseudoXOF(uint64_t n, const unsigned char *msg, uint64_t bits, unsigned char *out);

#endif
