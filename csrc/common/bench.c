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

/* The reading after a whole loop: read() for a perf counter, as at its start. */
static uint64_t loop_end(const counter_source *counter)
{
    return source_is_perf(counter) ? source_total(counter) : source_stop(counter);
}

static void clear(bench_outcome *out)
{
    out->total_ticks = out->total_ns = 0;
    out->thread_cpu_ns = out->voluntary_switches = out->involuntary_switches = 0;
    out->min_sub_cpu_ns = out->min_sub_calls = 0;
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
    batch_ticks0 = source_total(call->counter);
    for (i = 0; i < calls; i++) {
        uint64_t start = source_start(call->counter);
        status = call->hash(call->digest_bits, call->message, call->msg_len_bits, call->digest);
        uint64_t stop = source_stop(call->counter);
        if (status != 0)
            return fail(out, status, 0, i);
        cycles[i] = stop - start;
    }
    out->total_ticks = loop_end(call->counter) - batch_ticks0;
    out->total_ns = clock_raw_ns() - batch_ns0;
    thread_usage_since(&usage, out);
    return 0;
}

/* The thread's CPU time in ns (0 where the system has no per-thread clock). */
static uint64_t thread_cpu_now(void)
{
#if defined(CLOCK_THREAD_CPUTIME_ID)
    struct timespec cpu;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        return (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
#endif
    return 0;
}

void bench_vary(unsigned char *message, size_t bytes, uint64_t change)
{
    size_t i;

    for (i = 0; i < bytes && i < 8; i++)
        message[i] ^= (unsigned char)(change >> (8 * i));
}

/* Where a varied batch puts its messages' changes and its digests (NULL: none). */
typedef struct {
    unsigned char *message;
    size_t message_bytes;
    unsigned char *digests;
} variation;

/* The batch loop of both batches; inlined into each with `vary` a constant, so that
 * the plain batch's loop holds nothing but its calls. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int batch_loop(const bench_call *call, size_t calls, size_t sub_batches,
                             const variation *vary, bench_outcome *out)
{
    uint64_t batch_ns0, batch_ticks0, cpu0, cpu1, read_ticks = 0;
    size_t subs = sub_batches > BENCH_SUB_BATCHES ? BENCH_SUB_BATCHES
                  : sub_batches < 1 ? 1 : sub_batches;
    size_t i = 0, sub, digest_bytes = (size_t)call->digest_bits / 8;
    thread_usage usage;
    int status;

    clear(out);
    thread_usage_now(&usage);
    batch_ns0 = clock_raw_ns();
    batch_ticks0 = source_total(call->counter);
    if (subs > calls)
        subs = calls > 0 ? calls : 1;
    cpu0 = thread_cpu_now();
    for (sub = 0; sub < subs; sub++) {
        size_t end = calls * (sub + 1) / subs, n = end - i;
        for (; i < end; i++) {
            unsigned char *digest = call->digest;
            if (vary != NULL) {
                bench_vary(vary->message, vary->message_bytes, (uint64_t)(i + 1) ^ i);
                digest = vary->digests + i * digest_bytes;
            }
            status = call->hash(call->digest_bits, call->message, call->msg_len_bits, digest);
            if (status != 0) {
                if (vary != NULL)
                    bench_vary(vary->message, vary->message_bytes, (uint64_t)(i + 1));
                return fail(out, status, 0, i);
            }
        }
        {   /* the CPU-time read is timed and left out of the batch's ticks */
            uint64_t before = source_start(call->counter);
            cpu1 = thread_cpu_now();
            read_ticks += source_stop(call->counter) - before;
        }
        /* (cpu1 - cpu0) / n < min_cpu / min_calls, without division */
        if (out->min_sub_calls == 0
            || (cpu1 - cpu0) * out->min_sub_calls < out->min_sub_cpu_ns * n) {
            out->min_sub_cpu_ns = cpu1 - cpu0;
            out->min_sub_calls = n;
        }
        cpu0 = cpu1;
    }
    out->total_ticks = loop_end(call->counter) - batch_ticks0;
    out->total_ticks -= read_ticks < out->total_ticks ? read_ticks : 0;
    out->total_ns = clock_raw_ns() - batch_ns0;
    thread_usage_since(&usage, out);
    if (vary != NULL)
        bench_vary(vary->message, vary->message_bytes, (uint64_t)calls);  /* restored */
    return 0;
}

int bench_time_batch(const bench_call *call, size_t calls, size_t sub_batches,
                     bench_outcome *out)
{
    return batch_loop(call, calls, sub_batches, NULL, out);
}

int bench_time_varied_batch(const bench_call *call, unsigned char *message,
                            size_t message_bytes, unsigned char *digests, size_t calls,
                            size_t sub_batches, bench_outcome *out)
{
    variation vary;

    vary.message = message;
    vary.message_bytes = message_bytes;
    vary.digests = digests;
    return batch_loop(call, calls, sub_batches, &vary, out);
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
