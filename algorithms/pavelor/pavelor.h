/* Pavelor (NGCC Round 1, hash-22): what the files of this folder share.
 * Section numbers refer to docs/spec/pavelor.md.
 *
 * sponge.c and crypthash.c are common to every variant; a variant supplies the
 * permutation state and the five functions below (ref: permutation.c, bitsliced;
 * opt: permutation_aesni.c, AES-NI). Each keeps the state in its own form between
 * calls, so a bitsliced state is not converted back to bytes after every block.
 */
#ifndef PAVELOR_H
#define PAVELOR_H

#include <stddef.h>
#include <stdint.h>

#define PAVELOR_STATE_BYTES 320  /* 20 words of 16 bytes (spec 1) */
#define PAVELOR_STATE_BITS 2560
#define PAVELOR_ROUNDS 24

/* Room for any variant's form of the state (the bitsliced one needs the most). */
typedef struct {
    uint64_t opaque[64];
} pavelor_state;

/* The state whose first n bytes, in memory order (spec 3.1), are bytes[0 .. n-1]
 * and whose others are zero; n is a multiple of 16, at most PAVELOR_STATE_BYTES. */
void pavelor_state_load(pavelor_state *state, const uint8_t *bytes, size_t n);

/* XOR block[0 .. n-1] into state bytes 0 .. n-1; n is a rate (64, 128 or 192). */
void pavelor_state_absorb(pavelor_state *state, const unsigned char *block, size_t n);

/* The permutation P (spec 3.4). */
void pavelor_state_permute(pavelor_state *state);

/* State bytes 0 .. n-1 into out (n <= the rate). */
void pavelor_state_squeeze(const pavelor_state *state, unsigned char *out, size_t n);

/* The sponge (spec 4-6): hash msg_len_bits bits of msg (MSB first, at most
 * ceil(msg_len_bits / 8) bytes read) into digest_bits / 8 bytes of digest.
 * digest_bits must be 512, 768 or 1024; msg may be NULL when msg_len_bits is 0. */
void pavelor_hash(unsigned digest_bits, const unsigned char *msg,
                  unsigned long long msg_len_bits, unsigned char *digest);

#endif
