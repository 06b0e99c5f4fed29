/* The honesty batch's digests and their fold (honesty.h). */
#include "honesty.h"

#include <string.h>

#include "bench.h"
#include "buffers.h"
#include "channel.h"
#include "frames.h"
#include "sm3.h"
#include "steps.h"

unsigned char *honesty_digests(const request *req, guarded_buffer *buffer)
{
    size_t bytes = (size_t)req->honesty_calls * ((size_t)req->digest_bits / 8);
    map_guarded(buffer, bytes, GUARD_BEFORE_DIGEST, GUARD_PAST_DIGEST, "honesty digests");
    return memset(guard_end_aligned(buffer, bytes), 0, bytes);
}

size_t honesty_sub_batches(size_t rule, size_t calls)
{
    size_t least = calls < HONESTY_MIN_SUB_BATCHES ? calls : HONESTY_MIN_SUB_BATCHES;
    return rule > least ? rule : least;
}

void send_honesty_digest(const unsigned char *digests, size_t calls, size_t digest_bytes)
{
    unsigned char fold[SM3_DIGEST_BYTES];
    sm3_context context;

    sm3_init(&context);
    sm3_update_bits(&context, digests, 8 * (uint64_t)calls * digest_bytes);
    sm3_final(&context, fold);
    send_frame(FRAME_HONESTY_DIGEST, fold, sizeof fold);
}

/* Call i of the reference hashes its message in a buffer other than call i - 1's (a
 * copy in a second guarded buffer for odd i, the original XORed in place and back for
 * even i), so that a library keeping its last answer by the message's address, or by
 * address and length, computes every one here: its kept answers in the trial then
 * fold to another SM3. */
void honesty_reference(const request *req, crypt_hash_fn hash, unsigned char *message,
                       size_t bytes)
{
    guarded_buffer buffer, copy_buffer;
    size_t digest_bytes = (size_t)req->digest_bits / 8, i;
    unsigned char *digests = honesty_digests(req, &buffer), *copy, *at;
    int status;

    map_guarded(&copy_buffer, bytes, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE, "message");
    copy = guard_end_aligned(&copy_buffer, bytes);
    for (i = 1; i <= (size_t)req->honesty_calls; i++) {
        at = i % 2 ? memcpy(copy, message, bytes) : message;
        bench_vary(at, bytes, (uint64_t)i);
        status = hash(req->digest_bits, at, 8 * (unsigned long long)bytes,
                      digests + (i - 1) * digest_bytes);
        if (at == message)
            bench_vary(at, bytes, (uint64_t)i);  /* the original again */
        if (status != 0)
            fail(DRIVER_ERR_HASH, status, "CryptHash of %s returned %d on varied message "
                 "%zu of %llu (digest_bits=%d, bits=%llu)", req->library, status, i,
                 (unsigned long long)req->honesty_calls, req->digest_bits,
                 8 * (unsigned long long)bytes);
    }
    check_descendants();
    send_honesty_digest(digests, (size_t)req->honesty_calls, digest_bytes);
}
