/* The ICCS SM3 DRNG: the deterministic generator of the NGCC KAT messages.
 *
 * A Hash_DRBG (NIST SP 800-90A §10.1.1) with SM3, seedlen 440 bits, and no
 * entropy, reseed or request limits (spec/drng.md). The same seed always
 * yields the same bits. V, C and reseed_counter are 55-byte big-endian numbers.
 */
#ifndef NGCC_SM3_DRNG_H
#define NGCC_SM3_DRNG_H

#include <stddef.h>
#include <stdint.h>

#define DRNG_SEED_BYTES 55   /* seedlen = 440 bits */

typedef struct {
    unsigned char v[DRNG_SEED_BYTES];
    unsigned char c[DRNG_SEED_BYTES];
    unsigned char reseed_counter[DRNG_SEED_BYTES];
} sm3_drng;

/* Called now and then during a long generate with the output bytes written so
 * far; a nonzero return stops the generation (the state is then not updated). */
typedef int (*drng_progress_fn)(void *ctx, uint64_t bytes_done);

/* Instantiate from seed_bytes bytes of seed (any length, 0 included). */
void drng_init(sm3_drng *drng, const unsigned char *seed, size_t seed_bytes);

/* Write ceil(bits/8) bytes of output to out (unused low bits of a partial last
 * byte are zeroed, bytes after it are not touched), then update the state; a
 * 0-bit call only updates the state. progress may be NULL. Returns 0, or -1 if
 * progress asked to stop. */
int drng_generate(sm3_drng *drng, uint64_t bits, unsigned char *out,
                  drng_progress_fn progress, void *progress_ctx);

#endif
