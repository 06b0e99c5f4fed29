/* The timing loop: warm-up calls, then one counter reading per timed call. */
#ifndef NGCC_BENCH_H
#define NGCC_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "loader.h"

/* One CryptHash call, repeated: what is hashed and where the digest goes. */
typedef struct {
    crypt_hash_fn hash;
    int digest_bits;
    const unsigned char *message;
    unsigned long long msg_len_bits;
    unsigned char *digest;        /* digest_bits / 8 bytes */
} bench_call;

typedef struct {
    uint64_t total_ticks;   /* one counter read before and after the timed calls */
    uint64_t total_ns;      /* the same span on CLOCK_MONOTONIC_RAW */
    int status;             /* 0, or the nonzero CryptHash return that stopped the loop */
    int failed_in_warmup;   /* 1 if that call was a warm-up call */
    size_t failed_call;     /* its 0-based index among the warm-up or the timed calls */
} bench_outcome;

/* Make `warmup` untimed calls, then `calls` timed calls, storing the counter
 * ticks of timed call i in cycles[i]. Stops at the first nonzero CryptHash
 * return and reports it in out (cycles[] is then incomplete). Returns 0 when
 * every call succeeded, -1 otherwise. Touches no Python object: callers
 * release the GIL around it. */
int bench_time_calls(const bench_call *call, size_t warmup, size_t calls,
                     uint64_t *cycles, bench_outcome *out);

#endif
