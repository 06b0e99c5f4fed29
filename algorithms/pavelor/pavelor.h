/* Pavelor (NGCC Round 1, hash-22): what the files of this folder share.
 * Section numbers refer to docs/spec/pavelor.md.
 */
#ifndef PAVELOR_H
#define PAVELOR_H

#include <stdint.h>

#define PAVELOR_STATE_BYTES 320  /* 20 words of 16 bytes (spec 1) */
#define PAVELOR_STATE_BITS 2560
#define PAVELOR_ROUNDS 24

/* The permutation P (spec 3.4) on the state in memory order (spec 3.1). */
void pavelor_permutation(uint8_t state[PAVELOR_STATE_BYTES]);

/* The sponge (spec 4-6): hash msg_len_bits bits of msg (MSB first, at most
 * ceil(msg_len_bits / 8) bytes read) into digest_bits / 8 bytes of digest.
 * digest_bits must be 512, 768 or 1024; msg may be NULL when msg_len_bits is 0. */
void pavelor_hash(unsigned digest_bits, const unsigned char *msg,
                  unsigned long long msg_len_bits, unsigned char *digest);

#endif
