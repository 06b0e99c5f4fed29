/* Calibrating the cycle counter (its frequency, resolution and the overhead of a
 * timed region), and choosing the counter at run time (counter_open). Everything
 * that differs between machines is in the per-architecture sections below. */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* syscall */
#endif
#include "timer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#define NGCC_HAVE_PERF 1
#endif

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
static void paired_read(const counter_source *source, uint64_t *ticks, uint64_t *ns)
{
    uint64_t best_gap = UINT64_MAX;
    int attempt;

    for (attempt = 0; attempt < 9; attempt++) {
        uint64_t before = clock_raw_ns();
        uint64_t counted = source_total(source);
        uint64_t after = clock_raw_ns();
        if (after - before < best_gap) {
            best_gap = after - before;
            *ticks = counted;
            *ns = before + (after - before) / 2;
        }
    }
}

static void sleep_ns(const counter_source *source, long ns)
{
    if (source_is_perf(source)) {  /* it counts only while this thread runs: stay busy */
        uint64_t until = clock_raw_ns() + (uint64_t)ns;
        while (clock_raw_ns() < until)
            ;
        return;
    }
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
void counter_measure_overhead(const counter_source *source, uint64_t *overhead_min,
                              uint64_t *overhead_median)
{
    uint64_t samples[COUNTER_OVERHEAD_SAMPLES];
    size_t i;

    for (i = 0; i < 100; i++) {  /* warm the reads' code and the branch predictor */
        uint64_t start = source_start(source);
        samples[0] = source_stop(source) - start;
    }
    for (i = 0; i < COUNTER_OVERHEAD_SAMPLES; i++) {
        uint64_t start = source_start(source);
        samples[i] = source_stop(source) - start;
    }
    qsort(samples, COUNTER_OVERHEAD_SAMPLES, sizeof samples[0], compare_u64);
    *overhead_min = samples[0];
    *overhead_median = samples[COUNTER_OVERHEAD_SAMPLES / 2];
}

void counter_mark(const counter_source *source, counter_reading *mark)
{
    paired_read(source, &mark->ticks, &mark->ns);
}

int counter_frequency_since(const counter_source *source, const counter_reading *mark,
                            long min_interval_ns, double *frequency_hz)
{
    counter_reading now;
    uint64_t elapsed = clock_raw_ns() - mark->ns;

    if (elapsed < (uint64_t)min_interval_ns)
        sleep_ns(source, min_interval_ns - (long)elapsed);
    counter_mark(source, &now);
    if (now.ns <= mark->ns || now.ticks <= mark->ticks)
        return -1;
    *frequency_hz = (double)(now.ticks - mark->ticks) * 1e9 / (double)(now.ns - mark->ns);
    return 0;
}

int counter_calibrate(counter_calibration *out)
{
    counter_reading mark;

    counter_mark(NULL, &mark);
    if (counter_frequency_since(NULL, &mark, COUNTER_FREQUENCY_INTERVAL_NS,
                                &out->frequency_hz) != 0)
        return -1;
    counter_measure_overhead(NULL, &out->overhead_min, &out->overhead_median);
    out->resolution = counter_resolution(NULL);
    return 0;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t rest = a % b;
        a = b;
        b = rest;
    }
    return a;
}

uint64_t counter_resolution(const counter_source *source)
{
    uint64_t previous = source_start(source), step = 0;
    int i;

    for (i = 1; i < COUNTER_RESOLUTION_READS && step != 1; i++) {
        uint64_t now = source_start(source);
        if (now > previous)
            step = gcd(now - previous, step);
        previous = now;
    }
    return step;
}

uint64_t counter_resolution_of(uint64_t step, const uint64_t *readings, size_t n)
{
    size_t i;

    for (i = 0; i < n && step != 1; i++)
        step = gcd(readings[i], step);
    return step;
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

double counter_cycles_per_tick(const counter_source *source, uint64_t overhead_min)
{
    uint64_t best = UINT64_MAX, x = 0, one = 1;
    int run;
    long i;

    for (run = 0; run < CHAIN_RUNS; run++) {
        uint64_t start = source_start(source);
        for (i = 0; i < CHAIN_LOOPS; i++)
            __asm__ __volatile__(CHAIN_ADD64 : [x] "+r"(x) : [one] "r"(one));
        uint64_t ticks = source_stop(source) - start;
        if (ticks < best)
            best = ticks;
    }
    if (best <= overhead_min)
        return 0.0;
    return (double)CHAIN_LOOPS * ADDS_PER_LOOP / (double)(best - overhead_min);
}
#else
double counter_cycles_per_tick(const counter_source *source, uint64_t overhead_min)
{
    (void)source;
    (void)overhead_min;
    return 0.0;
}
#endif

/* ------------------------------------------------ the counter chosen at run time */

/* The per-architecture part: reading a hardware counter from user mode, given the
 * index the kernel published in the event's page. An architecture without such a
 * read (or without its section yet) reads the event with read(), which works on
 * every Linux with a PMU. */
#if defined(NGCC_COUNTER_X86_64)
#define NGCC_HAVE_USER_PMC 1
static inline uint64_t user_pmc(uint32_t index)
{
    uint32_t lo, hi;
    /* lfence before and after: the read stays inside the bracket, like rdtsc's. */
    __asm__ __volatile__("lfence\n\trdpmc\n\tlfence" : "=a"(lo), "=d"(hi) : "c"(index)
                         : "memory");
    return (uint64_t)hi << 32 | lo;
}
#elif defined(NGCC_COUNTER_AARCH64)
/* AArch64: PMCCNTR_EL0 is readable from EL0 only where the kernel enables
 * perf_user_access; until that is written here, perf is read with read(). */
#endif

#if defined(NGCC_HAVE_PERF)
static uint64_t perf_read(int fd)
{
    uint64_t count = 0;
    if (read(fd, &count, sizeof count) != (ssize_t)sizeof count)
        return 0;
    return count;
}

#if defined(NGCC_HAVE_USER_PMC)
/* The event's count from the PMC itself (perf_event_mmap_page's protocol: retry
 * while the kernel updates the page under its seqlock). */
static uint64_t perf_rdpmc(const counter_source *source)
{
    const volatile struct perf_event_mmap_page *page = source->perf_page;
    uint32_t seq, index;
    uint64_t count;

    do {
        seq = page->lock;
        __asm__ __volatile__("" ::: "memory");
        index = page->index;
        count = (uint64_t)page->offset;
        if (page->cap_user_rdpmc && index != 0 && page->pmc_width >= 1
            && page->pmc_width <= 64) {
            unsigned width = page->pmc_width;
            int64_t pmc = (int64_t)user_pmc(index - 1);
            if (width < 64)  /* sign-extend the counter's width (as perf_event.h says) */
                pmc = (int64_t)((uint64_t)pmc << (64 - width)) >> (64 - width);
            count += (uint64_t)pmc;
        } else {
            count = perf_read(source->perf_fd);  /* not on a PMC now: ask the kernel */
        }
        __asm__ __volatile__("" ::: "memory");
    } while (page->lock != seq);
    return count;
}
#endif

uint64_t counter_perf_cycles(const counter_source *source)
{
#if defined(NGCC_HAVE_USER_PMC)
    if (source->kind == COUNTER_SOURCE_PERF_RDPMC)
        return perf_rdpmc(source);
#endif
    return perf_read(source->perf_fd);
}

/* PERF_COUNT_HW_CPU_CYCLES of this thread in user mode, enabled now; -1 with errno. */
static int perf_cycles_open(void)
{
    struct perf_event_attr attr;

    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/* The event's page, when it says a user-mode read works (NULL otherwise). */
static const volatile void *perf_user_page(int fd)
{
#if defined(NGCC_HAVE_USER_PMC)
    long size = sysconf(_SC_PAGESIZE);
    void *page = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    const volatile struct perf_event_mmap_page *info = page;

    if (page == MAP_FAILED)
        return NULL;
    (void)perf_read(fd);  /* scheduled on a PMC by now: the index is published */
    if (info->cap_user_rdpmc && info->index != 0)
        return page;
    munmap(page, (size_t)size);
#else
    (void)fd;
#endif
    return NULL;
}

static int open_perf(counter_source *out, int need_rdpmc, char *why, size_t size)
{
    int fd = perf_cycles_open();

    if (fd < 0) {
        snprintf(why, size, "perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: %s%s",
                 strerror(errno), errno == ENOENT || errno == EOPNOTSUPP
                 ? " (no hardware PMU here, e.g. a guest without one)"
                 : errno == EACCES || errno == EPERM
                 ? " (see /proc/sys/kernel/perf_event_paranoid)" : "");
        return -1;
    }
    out->perf_fd = fd;
    out->perf_page = perf_user_page(fd);
    out->kind = out->perf_page != NULL ? COUNTER_SOURCE_PERF_RDPMC : COUNTER_SOURCE_PERF_READ;
    if (need_rdpmc && out->perf_page == NULL) {
        close(fd);
        out->perf_fd = -1;
        out->kind = COUNTER_SOURCE_NATIVE;
        snprintf(why, size, "the kernel does not allow a user-mode PMC read of the perf "
                 "event (RDPMC)");
        return -1;
    }
    return 0;
}
#else
uint64_t counter_perf_cycles(const counter_source *source)
{
    (void)source;
    return 0;
}

static int open_perf(counter_source *out, int need_rdpmc, char *why, size_t size)
{
    (void)out;
    (void)need_rdpmc;
    snprintf(why, size, "perf_event_open is Linux only");
    return -1;
}
#endif

int counter_open(const char *asked, counter_source *out, char *why, size_t size)
{
    out->kind = COUNTER_SOURCE_NATIVE;
    out->perf_fd = -1;
    out->perf_page = NULL;
    if (asked == NULL || strcmp(asked, "tsc") == 0)
        return 0;
    if (strcmp(asked, "clock") == 0) {
        out->kind = COUNTER_SOURCE_CLOCK;
        return 0;
    }
    if (strcmp(asked, "perf") == 0)
        return open_perf(out, 0, why, size);
    if (strcmp(asked, "auto") == 0) {
        char ignored[256];
        (void)open_perf(out, 1, ignored, sizeof ignored);  /* else the TSC, as set above */
        return 0;
    }
    snprintf(why, size, "unknown counter \"%.40s\" (auto, perf, tsc or clock)", asked);
    return -1;
}

uint64_t source_total(const counter_source *source)
{
    if (source_is_perf(source))
        return counter_perf_cycles(&(counter_source){COUNTER_SOURCE_PERF_READ,
                                                     source->perf_fd, NULL});
    return source_start(source);
}

const char *source_name(const counter_source *source)
{
    if (source == NULL || source->kind == COUNTER_SOURCE_NATIVE)
        return counter_name();
    if (source->kind == COUNTER_SOURCE_CLOCK)
        return "clock_monotonic_raw";
    return source->kind == COUNTER_SOURCE_PERF_RDPMC ? "perf_cycles_rdpmc" : "perf_cycles_read";
}
