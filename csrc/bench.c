/* The timing loop. Everything Python needs is prepared before it runs, so
 * the loop itself only calls CryptHash, reads the counter and stores. */
#include "bench.h"

#include "timer.h"

static int fail(bench_outcome *out, int status, int in_warmup, size_t index)
{
    out->status = status;
    out->failed_in_warmup = in_warmup;
    out->failed_call = index;
    return -1;
}

int bench_time_calls(const bench_call *call, size_t warmup, size_t calls,
                     uint64_t *cycles, bench_outcome *out)
{
    uint64_t batch_ns0, batch_ticks0;
    size_t i;
    int status;

    out->total_ticks = out->total_ns = 0;
    out->status = 0;
    out->failed_in_warmup = 0;
    out->failed_call = 0;

    /* Warm-up: caches, branch predictors and lazy symbol binding. */
    for (i = 0; i < warmup; i++) {
        status = call->hash(call->digest_bits, call->message, call->msg_len_bits, call->digest);
        if (status != 0)
            return fail(out, status, 1, i);
    }

    batch_ns0 = clock_raw_ns();
    batch_ticks0 = counter_start();
    for (i = 0; i < calls; i++) {
        uint64_t start = counter_start();
        status = call->hash(call->digest_bits, call->message, call->msg_len_bits, call->digest);
        uint64_t stop = counter_stop();
        if (status != 0)
            return fail(out, status, 0, i);
        cycles[i] = stop - start;
    }
    out->total_ticks = counter_stop() - batch_ticks0;
    out->total_ns = clock_raw_ns() - batch_ns0;
    return 0;
}
