/* The ICCS DRNG interface, for submission folders that call the DRNG but ship
 * no drng.c of their own (`ngcc build` supplies this one).
 *
 * The two calls of spec/drng.md §1: instantiate from a seed, then generate
 * n bits (ceil(n/8) bytes, unused low bits of a partial last byte zeroed).
 * Both return 0. The argument order follows drng.md; a folder whose sources
 * expect other prototypes must ship its own drng.h and drng.c.
 */
#ifndef NGCC_ICCS_DRNG_H
#define NGCC_ICCS_DRNG_H

int init_random_number(const unsigned char *seed, unsigned long long seed_len_bytes);
int get_random_number(unsigned long long n_bits, unsigned char *out);

#endif
