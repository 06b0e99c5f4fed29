/* WChain (NGCC Round 1, hash-34): what the sources of one instance library share.
 *
 * One library is one instance, chosen at compile time by DIGEST_BIT_LENGTH
 * (spec/wchain.md section 1): 512 builds WChain-V1-512, 1024 builds
 * WChain-V2-1024. A state is an array of 64-bit lanes; lanes are big-endian
 * in the message bytes and in the digest (section 2).
 */
#ifndef WCHAIN_H
#define WCHAIN_H

#include <stdint.h>

#if DIGEST_BIT_LENGTH == 512
#define WCHAIN_LANES 9       /* chaining state: one 9-lane half */
#define WCHAIN_ROUNDS 18
#elif DIGEST_BIT_LENGTH == 1024
#define WCHAIN_LANES 18      /* chaining state: halves L = lanes 0..8, R = 9..17 */
#define WCHAIN_ROUNDS 24
#else
#error "WChain: DIGEST_BIT_LENGTH must be 512 (WChain-V1-512) or 1024 (WChain-V2-1024)"
#endif

#define WCHAIN_HALF_LANES 9
#define WCHAIN_BLOCK_LANES (2 * WCHAIN_LANES)         /* a block is two states' worth */
#define WCHAIN_BLOCK_BYTES (8 * WCHAIN_BLOCK_LANES)   /* 144 (V1), 288 (V2) */
#define WCHAIN_DIGEST_LANES (DIGEST_BIT_LENGTH / 64)  /* the first lanes; the rest stay hidden */

/* state := CF(state, block) (section 5), block given as big-endian-loaded lanes. */
void wchain_compress(uint64_t state[WCHAIN_LANES], const uint64_t block[WCHAIN_BLOCK_LANES]);

/* The whole hash (sections 3-4) of the first msg_len_bits bits of msg; reads at
 * most ceil(msg_len_bits / 8) bytes and writes DIGEST_BIT_LENGTH / 8 bytes. */
void wchain_hash(const unsigned char *msg, unsigned long long msg_len_bits,
                 unsigned char digest[DIGEST_BIT_LENGTH / 8]);

#endif
