/* Key-less AES rounds on every lane of the Wish state at once, bitsliced
 * (spec/wish.md §6): the `ref` variant.
 *
 * Four lanes make one 64-bit word per bit plane: q[b][w] holds bit b (b = 0 is
 * the least significant bit) of every byte of lanes 4w .. 4w+3, byte 4 col + row
 * of lane 4w + k at bit position 16 row + 4 col + k (LANE_POSITION). A row of the
 * AES state is then a 16-bit slice of a word: MixColumns becomes word rotations,
 * ShiftRows rotations inside those slices. Plane-major, so that the same plane of
 * neighbouring words is adjacent in memory and compilers process two words per
 * vector register (SSE2) from plain C. Every operation is a fixed sequence of
 * AND/XOR/NOT/shift on whole words: no table lookups, no branches.
 */
#ifndef WISH_AES_BITSLICED_H
#define WISH_AES_BITSLICED_H

#include "wish.h"

#include <stdint.h>

#define WORDS (WISH_LANES / 4)  /* 64-bit words per bit plane: 2 or 4 */

typedef uint64_t bitsliced[8][WORDS];

/* Bit position, inside its word, of byte `byte` (0..15) of lane k (0..3) of that word. */
#define LANE_POSITION(byte, k) (16 * ((byte) & 3) + 4 * ((byte) >> 2) + (k))

/* Exchange the bits of *a at positions with bit j (0..5) set with those of *b at
 * positions with bit j clear. Between the planes of one word it transposes bits
 * (bitsliced_load); between the same plane of two words it moves bytes from lane
 * to lane (MIX). */
static inline void exchange(uint64_t *a, uint64_t *b, unsigned j)
{
    static const uint64_t bit_clear[6] = {
        0x5555555555555555u, 0x3333333333333333u, 0x0f0f0f0f0f0f0f0fu,
        0x00ff00ff00ff00ffu, 0x0000ffff0000ffffu, 0x00000000ffffffffu,
    };
    const unsigned distance = 1u << j;
    const uint64_t t = ((*a >> distance) ^ *b) & bit_clear[j];

    *b ^= t;
    *a ^= t << distance;
}

/* XOR the 64 bytes of lanes 4w .. 4w+3 (lane k = bytes 16k .. 16k+15) into word w. */
void bitsliced_add_lanes(bitsliced q, unsigned w, const unsigned char bytes[64]);

/* The 64 bytes of lanes 4w .. 4w+3. */
void bitsliced_store_lanes(unsigned char bytes[64], const bitsliced q, unsigned w);

/* AESR = MixColumns o ShiftRows o SubBytes on every lane (no AddRoundKey). */
void bitsliced_aes_round(bitsliced q);

/* SubBytes on every byte (sbox_circuit.c, generated). */
void wish_sub_bytes(uint64_t s[8][WORDS]);

#endif
