/* The timing loops: warm-up calls, one counter reading per timed call, and an
 * uninstrumented batch of the same calls. */
#ifndef NGCC_BENCH_H
#define NGCC_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "loader.h"
#include "timer.h"

/* One CryptHash call, repeated: what is hashed and where the digest goes. */
typedef struct {
    crypt_hash_fn hash;
    int digest_bits;
    const unsigned char *message;
    unsigned long long msg_len_bits;
    unsigned char *digest;        /* digest_bits / 8 bytes */
    const counter_source *counter;  /* what times the calls; NULL: the machine's own */
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
    /* bench_time_batch only: the sub-batch whose thread CPU time per call was the
     * least, its CPU time and its calls. */
    uint64_t min_sub_cpu_ns;
    uint64_t min_sub_calls;
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
 * readings. The loop runs as `sub_batches` sub-batches (1 to BENCH_SUB_BATCHES)
 * with the thread's CPU time read between them (a system call each, timed by the
 * counter and left out of out->total_ticks, not out->total_ns), so that the
 * least CPU time per call of a sub-batch is known (out->min_sub_cpu_ns over
 * out->min_sub_calls): a figure that neither another task on the CPU nor a burst
 * of interrupts in part of the batch can raise. A read costs a few hundred ns of
 * the thread's CPU time, so callers keep sub-batches of a millisecond or more
 * (BENCH_SUB_BATCH_NS). Same failure reporting as bench_time_calls (no warm-up). */
#define BENCH_SUB_BATCHES 16
#define BENCH_SUB_BATCH_NS 1000000u
int bench_time_batch(const bench_call *call, size_t calls, size_t sub_batches,
                     bench_outcome *out);

/* The honesty batch: bench_time_batch's loop, timed the same way, but call i (from 1)
 * hashes a message of its own and leaves its digest in a slot of its own: before it,
 * the first min(8, message_bytes) bytes of `message` (call->message's own buffer)
 * are XORed with the little-endian bytes of i ^ (i - 1), so call i hashes the
 * original message XORed with i (bench_vary); its digest goes to
 * digests + (i - 1) * digest_bits / 8. The message is restored before it returns.
 * A library that keeps its last answer cannot give it here: each message is new, so
 * the batch costs a computed call each (issue 45). */
int bench_time_varied_batch(const bench_call *call, unsigned char *message,
                            size_t message_bytes, unsigned char *digests, size_t calls,
                            size_t sub_batches, bench_outcome *out);

/* XOR the first min(8, bytes) bytes of message with the little-endian bytes of change. */
void bench_vary(unsigned char *message, size_t bytes, uint64_t change);

/* The message of a failed loop, naming the library, the call and the lengths. */
void bench_failure_text(char *text, size_t size, const char *library_path,
                        const bench_outcome *out, size_t calls, size_t warmup,
                        const bench_call *call);

#endif
