/* The ICCS DRNG interface over the SM3 DRNG of the KAT generator.
 *
 * The ICCS interface keeps one generator per process, so this file does too;
 * it is linked only into libraries built from foreign submission folders.
 */
#include "drng.h"

#include <stddef.h>

#include "../sm3_drng.h"

static sm3_drng process_drng;

int init_random_number(const unsigned char *seed, unsigned long long seed_len_bytes)
{
    drng_init(&process_drng, seed, (size_t)seed_len_bytes);
    return 0;
}

int get_random_number(unsigned long long n_bits, unsigned char *out)
{
    return drng_generate(&process_drng, n_bits, out, NULL, NULL);
}
