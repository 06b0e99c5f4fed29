/* Wish (NGCC Round 1 candidate hash-35), spec/wish.md.
 *
 * The instance is chosen at compile time by DIGEST_BIT_LENGTH (§1):
 * 512 -> Wish512 (8 lanes, 9 steps), 1024 -> Wish1024 (16 lanes, 12 steps).
 */
#ifndef WISH_H
#define WISH_H

#include "aes_bitsliced.h"

#if DIGEST_BIT_LENGTH == 512
#define WISH_LANES 8
#define WISH_STEPS 9
#elif DIGEST_BIT_LENGTH == 1024
#define WISH_LANES 16
#define WISH_STEPS 12
#else
#error "Wish: DIGEST_BIT_LENGTH must be 512 (Wish512) or 1024 (Wish1024)"
#endif

#define WISH_BATCHES (WISH_LANES / BATCH_LANES)
#define WISH_RATE_BATCHES (WISH_BATCHES / 2)          /* lanes 0 .. l/2-1 */
#define WISH_RATE_BYTES (WISH_RATE_BATCHES * BATCH_BYTES)
#define WISH_DIGEST_BYTES (DIGEST_BIT_LENGTH / 8)     /* the capacity */

/* Hash the first msg_len_bits bits of msg (MSB first; at most ceil(bits/8) bytes read). */
void wish_hash(const unsigned char *msg, unsigned long long msg_len_bits,
               unsigned char digest[WISH_DIGEST_BYTES]);

#endif
