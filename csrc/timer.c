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
static void measure_overhead(counter_calibration *out)
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
    out->overhead_min = samples[0];
    out->overhead_median = samples[COUNTER_OVERHEAD_SAMPLES / 2];
}

int counter_calibrate(counter_calibration *out)
{
    uint64_t ticks0, ns0, ticks1, ns1;

    paired_read(&ticks0, &ns0);
    sleep_ns(COUNTER_FREQUENCY_INTERVAL_NS);
    paired_read(&ticks1, &ns1);
    if (ns1 <= ns0 || ticks1 <= ticks0)
        return -1;
    out->frequency_hz = (double)(ticks1 - ticks0) * 1e9 / (double)(ns1 - ns0);
    measure_overhead(out);
    return 0;
}
