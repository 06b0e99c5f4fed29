/* The timing loops. Everything is prepared before they run, so the loops
 * themselves only call CryptHash, read the counter and store. */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* RUSAGE_THREAD */
#endif
#include "bench.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "timer.h"

/* What the thread has used so far: CPU time and context switches. */
typedef struct {
    uint64_t cpu_ns, voluntary, involuntary;
} thread_usage;

static void thread_usage_now(thread_usage *usage)
{
    usage->cpu_ns = usage->voluntary = usage->involuntary = 0;
#if defined(CLOCK_THREAD_CPUTIME_ID)
    struct timespec cpu;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        usage->cpu_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
#endif
#if defined(RUSAGE_THREAD)
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        usage->voluntary = (uint64_t)ru.ru_nvcsw;
        usage->involuntary = (uint64_t)ru.ru_nivcsw;
    }
#endif
}

static void thread_usage_since(const thread_usage *before, bench_outcome *out)
{
    thread_usage after;
    thread_usage_now(&after);
    out->thread_cpu_ns = after.cpu_ns - before->cpu_ns;
    out->voluntary_switches = after.voluntary - before->voluntary;
    out->involuntary_switches = after.involuntary - before->involuntary;
}

static void clear(bench_outcome *out)
{
    out->total_ticks = out->total_ns = 0;
    out->thread_cpu_ns = out->voluntary_switches = out->involuntary_switches = 0;
    out->status = 0;
    out->failed_in_warmup = 0;
    out->failed_call = 0;
}

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
    thread_usage usage;
    size_t i;
    int status;

    clear(out);
    /* Warm-up: caches, branch predictors and lazy symbol binding. */
    for (i = 0; i < warmup; i++) {
        status = call->hash(call->digest_bits, call->message, call->msg_len_bits, call->digest);
        if (status != 0)
            return fail(out, status, 1, i);
    }

    thread_usage_now(&usage);
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
    thread_usage_since(&usage, out);
    return 0;
}

int bench_time_batch(const bench_call *call, size_t calls, bench_outcome *out)
{
    uint64_t batch_ns0, batch_ticks0;
    thread_usage usage;
    size_t i;
    int status;

    clear(out);
    thread_usage_now(&usage);
    batch_ns0 = clock_raw_ns();
    batch_ticks0 = counter_start();
    for (i = 0; i < calls; i++) {
        status = call->hash(call->digest_bits, call->message, call->msg_len_bits, call->digest);
        if (status != 0)
            return fail(out, status, 0, i);
    }
    out->total_ticks = counter_stop() - batch_ticks0;
    out->total_ns = clock_raw_ns() - batch_ns0;
    thread_usage_since(&usage, out);
    return 0;
}

void bench_failure_text(char *text, size_t size, const char *library_path,
                        const bench_outcome *out, size_t calls, size_t warmup,
                        const bench_call *call)
{
    snprintf(text, size,
             "CryptHash of %s returned %d at %s call %zu of %zu (digest_bits=%d, "
             "msg_len_bits=%llu)",
             library_path, out->status, out->failed_in_warmup ? "warm-up" : "timed",
             out->failed_call, out->failed_in_warmup ? warmup : calls, call->digest_bits,
             call->msg_len_bits);
}
