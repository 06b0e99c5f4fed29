/* The cycle counter: serialised reads, and its calibration.
 *
 * counter_start() and counter_stop() bracket a timed region; their difference
 * is the region's length in counter ticks. The reads are serialised so that
 * the region's own instructions cannot drift outside the bracket:
 *
 *   x86-64   start: lfence; rdtsc      stop: rdtscp; lfence   (TSC ticks)
 *   AArch64  start: isb; mrs cntvct    stop: isb; mrs cntvct; isb
 *            (the generic timer's virtual count, not core cycles: it ticks at
 *            the fixed rate cntfrq_el0 holds, e.g. 19.2 MHz, 52 ns a tick)
 *   other    clock_gettime(CLOCK_MONOTONIC_RAW)                (nanoseconds)
 *
 * Defining NGCC_COUNTER_CLOCK_GETTIME selects the portable clock anywhere
 * (to try that branch on x86-64). The reads are inline so that the timing
 * loop in bench.c pays no call overhead between the two reads.
 */
#ifndef NGCC_TIMER_H
#define NGCC_TIMER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#if defined(NGCC_COUNTER_CLOCK_GETTIME)
#define NGCC_COUNTER_PORTABLE 1
#elif defined(__x86_64__) && defined(__GNUC__)
#define NGCC_COUNTER_X86_64 1
#elif defined(__aarch64__) && defined(__GNUC__)
#define NGCC_COUNTER_AARCH64 1
#else
#define NGCC_COUNTER_PORTABLE 1
#endif

/* The raw monotonic clock in nanoseconds: the reference the counter's
 * frequency is measured against, and the wall time of a whole timing loop. */
static inline uint64_t clock_raw_ns(void)
{
    struct timespec now;
#if defined(CLOCK_MONOTONIC_RAW)
    clock_gettime(CLOCK_MONOTONIC_RAW, &now);
#else
    clock_gettime(CLOCK_MONOTONIC, &now);
#endif
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

#if defined(NGCC_COUNTER_X86_64)

static inline uint64_t counter_start(void)
{
    uint32_t lo, hi;
    /* lfence: earlier instructions complete before the TSC is read. */
    __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return (uint64_t)hi << 32 | lo;
}

static inline uint64_t counter_stop(void)
{
    uint32_t lo, hi;
    /* rdtscp waits for the timed code; lfence keeps later code out of the region. */
    __asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi) : : "rcx", "memory");
    return (uint64_t)hi << 32 | lo;
}

#elif defined(NGCC_COUNTER_AARCH64)

static inline uint64_t counter_start(void)
{
    uint64_t ticks;
    /* isb: earlier instructions complete before the virtual counter is read. */
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(ticks) : : "memory");
    return ticks;
}

static inline uint64_t counter_stop(void)
{
    uint64_t ticks;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(ticks) : : "memory");
    return ticks;
}

#else

static inline uint64_t counter_start(void) { return clock_raw_ns(); }
static inline uint64_t counter_stop(void) { return clock_raw_ns(); }

#endif

/* The counter's name as recorded in evidence: "rdtsc", "cntvct_el0" or
 * "clock_monotonic_raw". */
const char *counter_name(void);

/* ------------------------------------------------ the counter chosen at run time
 *
 * ngcc-driver's trial mode takes --counter auto|perf|tsc|clock (counter_open):
 *
 *   perf   PERF_COUNT_HW_CPU_CYCLES of this thread in user mode (perf_event_open):
 *          core cycles, the NGCC harness's unit. Read per call with a user-mode
 *          PMC read (RDPMC on x86-64) where the kernel allows it, else with read()
 *          on the event (a system call inside every bracket); around the loops
 *          always with read(), as the harness does.
 *   tsc    the machine's own counter above (rdtsc; cntvct_el0 on AArch64; the
 *          portable clock elsewhere): not core cycles.
 *   clock  clock_gettime(CLOCK_MONOTONIC_RAW): nanoseconds.
 *   auto   perf where it can be read with RDPMC, else tsc.
 *
 * A NULL source is the machine's own counter (what _core.c and the other driver
 * modes use). The reads of a source are inline, so the bracket of the machine's
 * own counter costs what it did, plus one predicted branch. */
typedef enum {
    COUNTER_SOURCE_NATIVE = 0,
    COUNTER_SOURCE_CLOCK = 1,
    COUNTER_SOURCE_PERF_RDPMC = 2,
    COUNTER_SOURCE_PERF_READ = 3,
} counter_kind;

typedef struct {
    counter_kind kind;
    int perf_fd;              /* the perf event (PERF_*), else -1 */
    const volatile void *perf_page;  /* its mmap'ed perf_event_mmap_page (PERF_RDPMC) */
} counter_source;

/* Open the counter `asked` for (auto, perf, tsc or clock) into out. Returns 0, or
 * -1 with why (perf_event_open's error, a name it does not know) in why. */
int counter_open(const char *asked, counter_source *out, char *why, size_t size);

/* The core cycles of a perf source (the calling thread's, user mode). */
uint64_t counter_perf_cycles(const counter_source *source);

static inline int source_is_perf(const counter_source *source)
{
    return source != NULL && (source->kind == COUNTER_SOURCE_PERF_RDPMC
                              || source->kind == COUNTER_SOURCE_PERF_READ);
}

static inline uint64_t source_start(const counter_source *source)
{
    if (source == NULL || source->kind == COUNTER_SOURCE_NATIVE)
        return counter_start();
    if (source->kind == COUNTER_SOURCE_CLOCK)
        return clock_raw_ns();
    return counter_perf_cycles(source);
}

static inline uint64_t source_stop(const counter_source *source)
{
    if (source == NULL || source->kind == COUNTER_SOURCE_NATIVE)
        return counter_stop();
    if (source->kind == COUNTER_SOURCE_CLOCK)
        return clock_raw_ns();
    return counter_perf_cycles(source);
}

/* The reading around a whole loop: read() for perf (as the harness reads it). */
uint64_t source_total(const counter_source *source);

/* The evidence name of a source: counter_name(), "clock_monotonic_raw",
 * "perf_cycles_rdpmc" or "perf_cycles_read". */
const char *source_name(const counter_source *source);

/* The smallest step the counter moves in: the gcd of the positive differences
 * between COUNTER_RESOLUTION_READS successive reads (26 ticks for a TSC scaled
 * by a hypervisor, 1 for one that ticks every cycle). */
#define COUNTER_RESOLUTION_READS 4001
uint64_t counter_resolution(const counter_source *source);
/* step refined by n readings (differences of the counter): the gcd of all of them.
 * Successive reads can all step by a multiple of the counter's true step (2 ticks
 * on a guest whose TSC moves by 1) where a call's reading does not. */
uint64_t counter_resolution_of(uint64_t step, const uint64_t *readings, size_t n);
/* The unit of its ticks as recorded in evidence: "tsc-ticks", "timer-ticks" (the
 * AArch64 generic timer) or "ns" (ngcc/driver/protocol.py COUNTERS says the same). */
const char *counter_unit(void);

/* The rate the counter ticks at by the architecture's own register, in Hz:
 * cntfrq_el0 on AArch64 (set by the firmware for the generic timer); 0 where the
 * architecture states none (the TSC's rate is measured; the clock ticks in ns). */
double counter_nominal_hz(void);

typedef struct {
    double frequency_hz;       /* ticks per second, measured against CLOCK_MONOTONIC_RAW */
    uint64_t overhead_min;     /* ticks of an empty timed region: minimum ... */
    uint64_t overhead_median;  /* ... and median over COUNTER_OVERHEAD_SAMPLES regions */
    uint64_t resolution;       /* counter_resolution() */
} counter_calibration;

/* Regions timed to find the overhead (odd, so the median is one sample). */
#define COUNTER_OVERHEAD_SAMPLES 2001
/* How long the frequency measurement waits between its two paired reads. */
#define COUNTER_FREQUENCY_INTERVAL_NS 50000000L

/* Measure the counter's frequency and overhead afresh. Takes about
 * COUNTER_FREQUENCY_INTERVAL_NS (the thread sleeps); keeps no state, so
 * callers decide whether to cache. Returns 0, or -1 if the clock stood still. */
int counter_calibrate(counter_calibration *out);

/* The same two halves, for a caller with work to do in between (a trial measures
 * the frequency across its own timed loops, so it sleeps only when they were
 * shorter than the interval): counter_mark() takes the first paired reading,
 * counter_frequency_since() the second, after sleeping until at least
 * min_interval_ns have passed (spinning, for a perf counter: it counts only while
 * the thread runs, so its rate is the core clock's over busy time). Returns 0, or
 * -1 if the counter stood still. */
typedef struct {
    uint64_t ticks;  /* a counter reading ... */
    uint64_t ns;     /* ... and the CLOCK_MONOTONIC_RAW time it was taken at */
} counter_reading;

void counter_mark(const counter_source *source, counter_reading *mark);
int counter_frequency_since(const counter_source *source, const counter_reading *mark,
                            long min_interval_ns, double *frequency_hz);
/* The minimum and median ticks of COUNTER_OVERHEAD_SAMPLES empty timed regions. */
void counter_measure_overhead(const counter_source *source, uint64_t *overhead_min,
                              uint64_t *overhead_median);

/* Core clock cycles per counter tick, estimated from a chain of dependent
 * register adds (one cycle of latency each on every x86-64 and AArch64 core):
 * adds / (ticks - overhead_min) of the fastest of a few runs, about 1 ms in all.
 * Returns 0 where no chain is written for the machine (the portable clock). */
double counter_cycles_per_tick(const counter_source *source, uint64_t overhead_min);

#endif
