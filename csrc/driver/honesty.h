/* The honesty batch (issue 45): calls on varied messages of the trial's length, so
 * that an answer a library kept from an earlier call cannot stand in for work.
 *
 * A trial with --honesty-calls N (1 to HONESTY_MAX_CALLS) times N calls after its
 * batch, the same way (bench_time_varied_batch: call i hashes the message XORed
 * with i in its first min(8, bytes) bytes), reports their figures in TRIAL
 * (honesty_*) and sends HONESTY_DIGEST: the SM3 of the N digests, in order. A hash
 * run with --honesty-calls N hashes the same N messages of its own message, untimed,
 * and sends the same frame after DIGEST: the parent holds the two against each
 * other (every call was computed) and the batch's cost per call against the trial's
 * batch (ngcc/driver/facts.py). */
#ifndef NGCC_HONESTY_H
#define NGCC_HONESTY_H

#include <stddef.h>

#include "guard.h"
#include "loader.h"
#include "request.h"

#define HONESTY_MAX_CALLS 8192  /* ngcc.driver.child.HONESTY_MAX_CALLS */
/* The fewest sub-batches of an honesty batch (as many as it has calls, if fewer): the
 * parent compares the least CPU time per call of one, which a burst of interrupts or
 * of time taken by the hypervisor in one of them does not raise. */
#define HONESTY_MIN_SUB_BATCHES 4

/* The sub-batches of an honesty batch of `calls` calls whose batch rule gives `rule`. */
size_t honesty_sub_batches(size_t rule, size_t calls);

/* The digests of N calls (req->honesty_calls), in a guarded buffer, zeroed (no page
 * faults inside the timed calls). */
unsigned char *honesty_digests(const request *req, guarded_buffer *buffer);

/* Send HONESTY_DIGEST: the SM3 of `calls` digests of digest_bytes each, in order. */
void send_honesty_digest(const unsigned char *digests, size_t calls, size_t digest_bytes);

/* A hash run's N calls (untimed) on the varied messages of `message` (bytes long),
 * each in a buffer other than the call before it, then HONESTY_DIGEST. */
void honesty_reference(const request *req, crypt_hash_fn hash, unsigned char *message,
                       size_t bytes);

#endif
