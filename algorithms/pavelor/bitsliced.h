/* The bitsliced state of Pavelor's `ref` variant (permutation.c, sbox_circuit.c,
 * round_tables.h).
 *
 * The 20 words form GROUPS groups of 4 (WORD_IN_LANE in round_tables.h says which
 * word sits in which lane); q[b][g] is bit plane b of group g: its bit
 * 16 r + 4 c + l is bit b of byte x[4c + r] (row r, column c, spec 3.1) of the
 * word in lane l. Plane-major, so that the same plane of neighbouring groups is
 * adjacent in memory and compilers pair groups in vector registers.
 */
#ifndef PAVELOR_BITSLICED_H
#define PAVELOR_BITSLICED_H

#include <stdint.h>

#define GROUPS 5

typedef uint64_t bitsliced[8][GROUPS];

/* SubBytes on every byte of the state (sbox_circuit.c, generated). */
void pavelor_sub_bytes(uint64_t s[8][GROUPS]);

#endif
