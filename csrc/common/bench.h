/* The timing loops: warm-up calls, one counter reading per timed call, and an
 * uninstrumented batch of the same calls. */
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
    /* The thread's CPU time (CLOCK_THREAD_CPUTIME_ID) and context switches
     * (getrusage(RUSAGE_THREAD)) over the same span, read outside the counter
     * bracket; all zero where the system has no per-thread figures. */
    uint64_t thread_cpu_ns;
    uint64_t voluntary_switches;
    uint64_t involuntary_switches;
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

/* Make `calls` calls with no reading between them: one counter reading and one
 * clock reading around the whole loop (out->total_ticks, out->total_ns). Its
 * mean against the per-call loop's is the observer effect of the per-call
 * readings. Same failure reporting as bench_time_calls (no warm-up here). */
int bench_time_batch(const bench_call *call, size_t calls, bench_outcome *out);

/* The message of a failed loop, naming the library, the call and the lengths. */
void bench_failure_text(char *text, size_t size, const char *library_path,
                        const bench_outcome *out, size_t calls, size_t warmup,
                        const bench_call *call);

#endif
