/* The result channel of ngcc-driver: frames on a pipe of the parent's.
 *
 * A frame is [u32 type][u32 length][payload], little-endian, written with one
 * write() call when it fits in PIPE_BUF (so a fixed frame is never interleaved
 * with another writer's). Fixed facts travel as fixed-size payloads of u32, i32,
 * u64 and f64 fields in the order listed here; ngcc/driver/protocol.py mirrors this file
 * (tests/test_driver.py checks that the numbers agree, tests/test_frames_h.py the
 * fields and frames.c's order) and refuses anything else.
 *
 * Every conversation is HELLO, LOADED (once the library is loaded), then the
 * mode's frames (a trial's: TRIAL, CYCLES, TRIAL_DIGEST), then END; a failure
 * replaces the mode's result by ERROR (or CRASH, from the fault handler, after which
 * the process dies of its signal).
 */
#ifndef NGCC_FRAMES_H
#define NGCC_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_PROTOCOL_VERSION 1
#define FRAME_HEADER_BYTES 8
#define FRAME_MAX_TEXT 1024        /* ERROR text, at most */
#define FRAME_MAX_DATA (1u << 16)  /* KAT_DATA payload, at most */

enum {
    FRAME_HELLO = 1,     /* u32 version, u32 pid */
    FRAME_LOADED = 2,    /* empty: the library is loaded (its constructors ran) */
    FRAME_ERROR = 3,     /* i32 code, i32 value, text (<= FRAME_MAX_TEXT bytes) */
    FRAME_CRASH = 4,     /* u32 signal, u32 guard, u32 access, i32 si_code, u64 address */
    FRAME_DIGEST = 5,    /* digest_bits / 8 bytes */
    FRAME_COLD = 6,      /* u64 ticks, u64 ns: the first call of the library */
    FRAME_TRIAL = 7,     /* the trial facts: FRAME_TRIAL_FIELDS below */
    FRAME_CYCLES = 8,    /* u64 ticks of each timed call: exactly calls x 8 bytes */
    FRAME_KAT_DATA = 9,  /* the next bytes of the KAT file (<= FRAME_MAX_DATA) */
    FRAME_PROGRESS = 10, /* u64 done, u64 total */
    FRAME_KAT_DONE = 11, /* u64 file bytes, u64 ns of generation */
    FRAME_PROBE = 12,    /* u32 lengths probed */
    FRAME_END = 13,      /* empty: nothing follows */
    FRAME_LEAK_BATCH = 14,  /* leak: n x u64 ticks, then n x u8 class (0 or 1) of each
                             * timed call, 1 <= n <= batch_calls: 9n bytes */
    FRAME_LEAK_DONE = 15,   /* leak: the run's facts: FRAME_LEAK_FIELDS below */
    FRAME_TRIAL_DIGEST = 16,/* trial: 2 x digest_bits / 8 bytes: the digest the last
                             * call of the per-call loop left, then the one the last
                             * call of the batch left (the buffer zeroed before the
                             * batch; with no batch, the first again). Every call
                             * hashes the same message: the parent compares both
                             * with that message's digest from another run */
    FRAME_CT_LENGTH = 17,   /* ct: u64 bits, i32 CryptHash's return, digest_bits / 8
                             * bytes of digest (one per length, in order) */
    FRAME_HONESTY_DIGEST = 18,  /* trial, hash with --honesty-calls: the 32-byte SM3
                                 * of the honesty batch's digests (honesty.h), after
                                 * TRIAL_DIGEST or DIGEST */
    FRAME_BATCH_MARK = 19,  /* trial with --outside-fd: u32 0 before the batch, 1 after
                             * it; after each the driver waits for a byte on that
                             * descriptor, while the parent reads the thread's on-CPU
                             * time from /proc (the outside figure) */
    FRAME_LEAK_MARK = 20,   /* leak with --outside-fd: u32 phase, u32 calls. After the
                             * timed batches, LEAK_OUTSIDE_ROUNDS rounds of one
                             * sub-batch per class (class 0 first), each between two
                             * marks (phases 2j and 2j + 1, sub-batch j of class
                             * j % 2); `calls` is the sub-batch's at its odd phase, 0
                             * at its even one. The driver waits after each as after
                             * BATCH_MARK (ngcc/driver/outside.py) */
};

/* ERROR codes; value carries a number where one helps (CryptHash's return). */
enum {
    DRIVER_ERR_REQUEST = 1,   /* bad arguments or stdin: the parent's mistake */
    DRIVER_ERR_LOAD = 2,      /* the library cannot be loaded or lacks CryptHash */
    DRIVER_ERR_HASH = 3,      /* CryptHash returned nonzero (value: its return) */
    DRIVER_ERR_MEMORY = 4,    /* a buffer could not be allocated (memory limit?) */
    DRIVER_ERR_SYSTEM = 5,    /* a system call failed (mmap, /proc, ...) */
    DRIVER_ERR_COUNTER = 6,   /* the cycle counter did not advance */
    DRIVER_ERR_CPU = 7,       /* pinning to the CPU failed (value: the CPU) */
    DRIVER_ERR_FORKED = 8,    /* the library left child processes (value: how many) */
    DRIVER_ERR_KAT = 9,       /* the KAT generator refused (name, digest length) */
    DRIVER_ERR_PLACEMENT = 10,/* probe: the digest depends on where the message lies */
    DRIVER_ERR_FEATURE = 11,  /* the CPU lacks a feature the library needs */
};

/* Counters, as FRAME_TRIAL names them (timer.h says which one is built). */
enum {
    COUNTER_ID_RDTSC = 1,       /* unit: TSC ticks */
    COUNTER_ID_CNTVCT = 2,      /* unit: generic-timer ticks */
    COUNTER_ID_CLOCK = 3,       /* CLOCK_MONOTONIC_RAW, unit: ns */
    COUNTER_ID_PERF_RDPMC = 4,  /* perf PERF_COUNT_HW_CPU_CYCLES by RDPMC, unit: core cycles */
    COUNTER_ID_PERF_READ = 5,   /* ... by read() on the event, unit: core cycles */
};

/* FRAME_TRIAL, field by field (u32 x 8, then u64/f64 x 27: 248 bytes). */
typedef struct {
    uint32_t pid;
    int32_t cpu;                  /* the CPU asked for, -1 if not pinned */
    int32_t cpu_at_end;           /* sched_getcpu() after the loops */
    uint32_t still_pinned;        /* 1 if the affinity was still {cpu} after the loops */
    uint32_t counter_id;          /* COUNTER_ID_* */
    uint32_t calls;
    uint32_t warmup;
    uint32_t batch_calls;         /* calls of the uninstrumented batch (0: none) */
    double frequency_hz;          /* measured across the trial, >= 50 ms */
    uint64_t overhead_min_ticks;
    uint64_t overhead_median_ticks;
    double core_cycles_per_tick;  /* 0: unknown */
    uint64_t loop_ticks;          /* per-call loop: one counter reading around it */
    uint64_t loop_ns;             /* ... and one CLOCK_MONOTONIC_RAW reading */
    uint64_t thread_cpu_ns;       /* ... CLOCK_THREAD_CPUTIME_ID over it */
    uint64_t voluntary_switches;  /* ... getrusage(RUSAGE_THREAD) over it */
    uint64_t involuntary_switches;
    uint64_t batch_ticks;         /* uninstrumented batch */
    uint64_t batch_ns;
    uint64_t batch_thread_cpu_ns;
    uint64_t batch_involuntary_switches;
    uint64_t baseline_rss_kib;    /* /proc/self/statm after loading, before any call */
    uint64_t peak_rss_kib;        /* VmHWM after the loops */
    uint64_t setup_cpu_ns;        /* process CPU time before the first call */
    uint64_t counter_resolution;  /* counter_resolution(): the counter's smallest step */
    uint64_t batch_min_cpu_ns;    /* the batch's sub-batch of least CPU time per call: */
    uint64_t batch_min_calls;     /* ... its thread CPU time and its calls (bench.h) */
    uint64_t honesty_calls;       /* the honesty batch (honesty.h; 0: none), timed as */
    uint64_t honesty_ticks;       /* ... the batch is: its ticks, its ns, and its */
    uint64_t honesty_ns;          /* ... sub-batch of least CPU time per call */
    uint64_t honesty_min_cpu_ns;
    uint64_t honesty_min_calls;
    double load_average[3];
} trial_facts;

#define FRAME_TRIAL_BYTES (8 * 4 + 27 * 8)

/* Why a leak run stopped (leak_facts.stop_reason). */
enum {
    LEAK_STOP_CALLS = 1,   /* the calls asked for were made */
    LEAK_STOP_TIME = 2,    /* the time limit was reached */
    LEAK_STOP_PARENT = 3,  /* the parent closed stdin (it has seen enough) */
};

/* FRAME_LEAK_DONE, field by field (u32 x 6, then u64/f64 x 14: 136 bytes). */
typedef struct {
    uint32_t pid;
    int32_t cpu;                  /* the CPU asked for, -1 if not pinned */
    int32_t cpu_at_end;
    uint32_t still_pinned;
    uint32_t counter_id;          /* COUNTER_ID_* */
    uint32_t stop_reason;         /* LEAK_STOP_* */
    uint64_t calls;               /* timed calls sent in LEAK_BATCH frames */
    uint64_t class0_calls;        /* ... of them with the fixed message */
    uint64_t class1_calls;        /* ... and with a fresh random one */
    uint64_t warmup;              /* untimed calls before the first batch */
    uint64_t seed;                /* of the PRNG that chose classes and messages */
    uint64_t message_bytes;
    uint64_t batch_calls;         /* the most calls of one LEAK_BATCH frame */
    double frequency_hz;          /* the counter's, measured across the run */
    uint64_t overhead_min_ticks;
    uint64_t overhead_median_ticks;
    uint64_t loop_ns;             /* CLOCK_MONOTONIC_RAW from the first timed call to the last */
    uint64_t voluntary_switches;  /* getrusage(RUSAGE_SELF) over the timed batches */
    uint64_t involuntary_switches;
    uint64_t peak_rss_kib;
} leak_facts;

#define FRAME_LEAK_DONE_BYTES (6 * 4 + 14 * 8)

/* Write one frame to fd: 0, or -1 (errno set) if the channel is gone. Uses only
 * async-signal-safe calls, so the fault handler may send a prepared frame. */
int frame_write(int fd, uint32_t type, const void *payload, size_t length);

/* Write an ERROR frame with printf-style text cut to FRAME_MAX_TEXT bytes. */
int frame_error(int fd, int32_t code, int32_t value, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Serialise trial facts into FRAME_TRIAL_BYTES bytes, little-endian. */
void frame_pack_trial(const trial_facts *facts, unsigned char *out);

/* Serialise leak facts into FRAME_LEAK_DONE_BYTES bytes, little-endian. */
void frame_pack_leak(const leak_facts *facts, unsigned char *out);

/* Little-endian field writers for fixed payloads. */
unsigned char *frame_put_u32(unsigned char *at, uint32_t value);
unsigned char *frame_put_u64(unsigned char *at, uint64_t value);
unsigned char *frame_put_f64(unsigned char *at, double value);

#endif
