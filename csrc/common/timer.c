/* Calibrating the cycle counter: its frequency and the overhead of a timed region. */
#include "timer.h"

#include <errno.h>
#include <stdlib.h>

const char *counter_name(void)
{
#if defined(NGCC_COUNTER_X86_64)
    return "rdtsc";
#elif defined(NGCC_COUNTER_AARCH64)
    return "cntvct_el0";
#else
    return "clock_monotonic_raw";
#endif
}

const char *counter_unit(void)
{
#if defined(NGCC_COUNTER_X86_64)
    return "tsc-ticks";
#elif defined(NGCC_COUNTER_AARCH64)
    return "timer-ticks";
#else
    return "ns";
#endif
}

double counter_nominal_hz(void)
{
#if defined(NGCC_COUNTER_AARCH64)
    uint64_t hz;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
    return (double)hz;
#else
    return 0.0;
#endif
}

/* One counter reading and the clock time it was taken at. Of a few tries,
 * keep the one whose two clock reads lie closest together: a try that was
 * interrupted between them would otherwise skew the frequency. */
static void paired_read(uint64_t *ticks, uint64_t *ns)
{
    uint64_t best_gap = UINT64_MAX;
    int attempt;

    for (attempt = 0; attempt < 9; attempt++) {
        uint64_t before = clock_raw_ns();
        uint64_t counted = counter_start();
        uint64_t after = clock_raw_ns();
        if (after - before < best_gap) {
            best_gap = after - before;
            *ticks = counted;
            *ns = before + (after - before) / 2;
        }
    }
}

static void sleep_ns(long ns)
{
    struct timespec wait = {ns / 1000000000L, ns % 1000000000L}, left;
    while (nanosleep(&wait, &left) != 0 && errno == EINTR)
        wait = left;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Minimum and median length of an empty timed region, in ticks. */
void counter_measure_overhead(uint64_t *overhead_min, uint64_t *overhead_median)
{
    uint64_t samples[COUNTER_OVERHEAD_SAMPLES];
    size_t i;

    for (i = 0; i < 100; i++) {  /* warm the reads' code and the branch predictor */
        uint64_t start = counter_start();
        samples[0] = counter_stop() - start;
    }
    for (i = 0; i < COUNTER_OVERHEAD_SAMPLES; i++) {
        uint64_t start = counter_start();
        samples[i] = counter_stop() - start;
    }
    qsort(samples, COUNTER_OVERHEAD_SAMPLES, sizeof samples[0], compare_u64);
    *overhead_min = samples[0];
    *overhead_median = samples[COUNTER_OVERHEAD_SAMPLES / 2];
}

void counter_mark(counter_reading *mark)
{
    paired_read(&mark->ticks, &mark->ns);
}

int counter_frequency_since(const counter_reading *mark, long min_interval_ns,
                            double *frequency_hz)
{
    counter_reading now;
    uint64_t elapsed = clock_raw_ns() - mark->ns;

    if (elapsed < (uint64_t)min_interval_ns)
        sleep_ns(min_interval_ns - (long)elapsed);
    counter_mark(&now);
    if (now.ns <= mark->ns || now.ticks <= mark->ticks)
        return -1;
    *frequency_hz = (double)(now.ticks - mark->ticks) * 1e9 / (double)(now.ns - mark->ns);
    return 0;
}

int counter_calibrate(counter_calibration *out)
{
    counter_reading mark;

    counter_mark(&mark);
    if (counter_frequency_since(&mark, COUNTER_FREQUENCY_INTERVAL_NS, &out->frequency_hz) != 0)
        return -1;
    counter_measure_overhead(&out->overhead_min, &out->overhead_median);
    return 0;
}

/* The dependency chain: CHAIN_LOOPS iterations of 64 adds, each needing the result
 * of the one before (a register source: no CPU folds it like an immediate). The
 * loop's own counter runs beside the chain, so an iteration costs 64 cycles. */
#define CHAIN_LOOPS 4096
#define CHAIN_RUNS 7
#define ADDS_PER_LOOP 64

#if defined(NGCC_COUNTER_X86_64)
#define CHAIN_ADD "add %[one], %[x]\n\t"
#elif defined(NGCC_COUNTER_AARCH64)
#define CHAIN_ADD "add %[x], %[x], %[one]\n\t"
#endif

#if defined(CHAIN_ADD)
#define CHAIN_ADD4 CHAIN_ADD CHAIN_ADD CHAIN_ADD CHAIN_ADD
#define CHAIN_ADD16 CHAIN_ADD4 CHAIN_ADD4 CHAIN_ADD4 CHAIN_ADD4
#define CHAIN_ADD64 CHAIN_ADD16 CHAIN_ADD16 CHAIN_ADD16 CHAIN_ADD16

double counter_cycles_per_tick(uint64_t overhead_min)
{
    uint64_t best = UINT64_MAX, x = 0, one = 1;
    int run;
    long i;

    for (run = 0; run < CHAIN_RUNS; run++) {
        uint64_t start = counter_start();
        for (i = 0; i < CHAIN_LOOPS; i++)
            __asm__ __volatile__(CHAIN_ADD64 : [x] "+r"(x) : [one] "r"(one));
        uint64_t ticks = counter_stop() - start;
        if (ticks < best)
            best = ticks;
    }
    if (best <= overhead_min)
        return 0.0;
    return (double)CHAIN_LOOPS * ADDS_PER_LOOP / (double)(best - overhead_min);
}
#else
double counter_cycles_per_tick(uint64_t overhead_min)
{
    (void)overhead_min;
    return 0.0;
}
#endif
