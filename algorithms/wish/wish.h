/* Wish (NGCC Round 1 candidate hash-35), spec/wish.md: what the files of this
 * folder share.
 *
 * The instance is chosen at compile time by DIGEST_BIT_LENGTH (§1):
 * 512 -> Wish512 (8 lanes, 9 steps), 1024 -> Wish1024 (16 lanes, 12 steps).
 *
 * wish.c (padding and the block loop) and crypthash.c are common to every
 * variant; a variant supplies the state and the four functions below (ref:
 * permutation.c, bitsliced; opt: permutation_aesni.c, AES-NI; vaes:
 * permutation_vaes.c, VAES + AVX2). Each keeps the state in its own form from the
 * first block to the digest.
 */
#ifndef WISH_H
#define WISH_H

#include <stdint.h>

#if DIGEST_BIT_LENGTH == 512
#define WISH_LANES 8
#define WISH_STEPS 9
#elif DIGEST_BIT_LENGTH == 1024
#define WISH_LANES 16
#define WISH_STEPS 12
#else
#error "Wish: DIGEST_BIT_LENGTH must be 512 (Wish512) or 1024 (Wish1024)"
#endif

#define WISH_STATE_BYTES (16 * WISH_LANES)
#define WISH_RATE_BYTES (WISH_STATE_BYTES / 2)        /* lanes 0 .. l/2-1 */
#define WISH_DIGEST_BYTES (DIGEST_BIT_LENGTH / 8)     /* the capacity */

/* Room for any variant's form of the state (16 bytes per lane). */
typedef struct {
    uint64_t opaque[2 * WISH_LANES];
} wish_state;

/* The all-zero initial state (§5). */
void wish_state_init(wish_state *state);

/* One iteration of the absorb loop (§5): XOR the block into the rate, theta if
 * last, then P_T with the tweak of block_index, then the feed-forward. */
void wish_state_absorb(wish_state *state, const unsigned char block[WISH_RATE_BYTES],
                       uint64_t block_index, int last);

/* wish_state_absorb of `count` full blocks (indices 0 .. count-1, not last) read in
 * place from `blocks`: a variant may keep its state in registers across them. */
void wish_state_absorb_full(wish_state *state, const unsigned char *blocks, uint64_t count);

/* The capacity, in state byte order (§3). */
void wish_state_digest(const wish_state *state, unsigned char digest[WISH_DIGEST_BYTES]);

/* Hash the first msg_len_bits bits of msg (MSB first; at most ceil(bits/8) bytes read). */
void wish_hash(const unsigned char *msg, unsigned long long msg_len_bits,
               unsigned char digest[WISH_DIGEST_BYTES]);

#endif
