/* A key-less AES round on four 128-bit lanes at once, bitsliced (spec/wish.md §6).
 *
 * A *batch* is four lanes (64 bytes) held as eight 64-bit words: word b holds
 * bit b (b = 0 is the least significant bit) of every byte of the four lanes.
 * Byte 4*col + row of lane k (0..3) sits at bit position 16*row + 4*col + k,
 * so a row of the AES state is one 16-bit slice of a word: MixColumns becomes
 * word rotations and ShiftRows rotations inside those slices. Every operation
 * is a fixed sequence of AND/XOR/shift on whole words: no table lookups, no
 * branches, so the running time does not depend on the data.
 */
#ifndef WISH_AES_BITSLICED_H
#define WISH_AES_BITSLICED_H

#include <stdint.h>

#define BATCH_LANES 4
#define BATCH_BYTES 64

typedef struct {
    uint64_t bit[8];
} batch;

/* Bit position, inside each word of a batch, of byte `byte` (0..15) of lane k (0..3). */
#define BATCH_POSITION(byte, k) (16 * ((byte) & 3) + 4 * ((byte) >> 2) + (k))

/* Exchange two bits of a bit's address: the one that selects *lo or *hi, and bit
 * j (0..5) of the position inside the word. The bits of *lo at positions with bit
 * j set trade places with the bits of *hi at positions with bit j clear. Within a
 * batch this transposes bits (batch_pack); between the same word of two batches
 * it moves bytes from lane to lane (MIX). */
static inline void exchange(uint64_t *lo, uint64_t *hi, unsigned j)
{
    static const uint64_t bit_clear[6] = {
        0x5555555555555555u, 0x3333333333333333u, 0x0f0f0f0f0f0f0f0fu,
        0x00ff00ff00ff00ffu, 0x0000ffff0000ffffu, 0x00000000ffffffffu,
    };
    unsigned distance = 1u << j;
    uint64_t t = ((*lo >> distance) ^ *hi) & bit_clear[j];
    *hi ^= t;
    *lo ^= t << distance;
}

/* Bytes (four lanes, lane k = bytes 16k..16k+15) to a batch, and back. */
void batch_pack(batch *out, const unsigned char bytes[BATCH_BYTES]);
void batch_unpack(unsigned char bytes[BATCH_BYTES], const batch *in);

/* AESR = MixColumns o ShiftRows o SubBytes on every lane of the batch (no AddRoundKey). */
void batch_aes_round(batch *x);

#endif
