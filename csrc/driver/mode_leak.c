/* leak --message-bytes N --calls N --batch-calls N --seed S [--warmup N]
 *      [--time-limit-ms MS] [--cpu C] [--message-stdin | --control] [--outside-fd FD]
 *
 * The fixed-vs-random timing of the dudect test: LEAK_BATCH..., (with --outside-fd)
 * LEAK_MARK x 4 x LEAK_OUTSIDE_ROUNDS, LEAK_DONE. It stops early once stdin ends (the
 * parent has seen enough); --control draws class 0 at random too (an A/A test). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "buffers.h"
#include "channel.h"
#include "frames.h"
#include "modes.h"
#include "procinfo.h"
#include "steps.h"
#include "timer.h"

#define MAX_LEAK_BATCH ((uint64_t)1 << 16)         /* calls of one LEAK_BATCH frame */
#define MAX_LEAK_STORE_BYTES ((uint64_t)64 << 20)  /* a batch's messages, drawn ahead */
#define LEAK_FIRST_BATCH 1024  /* batches double from here to --batch-calls: an early look */
/* The sub-batches timed from outside (frames.h, FRAME_LEAK_MARK): rounds of one per
 * class, each at least LEAK_OUTSIDE_NS on the driver's clock and LEAK_OUTSIDE_MIN_CALLS
 * calls, over at most LEAK_OUTSIDE_DRAWN messages drawn for it (again from the first
 * once all are hashed). */
#define LEAK_OUTSIDE_ROUNDS 4
#define LEAK_OUTSIDE_NS 8000000u
#define LEAK_OUTSIDE_MIN_CALLS 8
#define LEAK_OUTSIDE_DRAWN 1024

/* Leak: the measurements of the dudect fixed-vs-random test. Each timed call
 * hashes either the fixed message (class 0) or a fresh random one (class 1), the
 * class drawn at random per call. A batch's classes and messages are drawn before
 * its timed loop; before each call its message is copied into the one guarded
 * message buffer, untimed and alike for both classes, so that the cache holds
 * the message the same way whichever class the call is. Only CryptHash lies
 * between the two counter readings. */

/* splitmix64: a fast generator of 64-bit words. It need not be unpredictable,
 * only independent of the timing; the seed comes from the parent, which records it. */
static uint64_t leak_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

typedef struct {
    const request *req;
    bench_call call;
    unsigned char *message;       /* in the guarded buffer: what CryptHash reads */
    const unsigned char *fixed;   /* class 0's message */
    unsigned char *store;         /* the batch's messages, batch_calls x message_bytes */
    unsigned char *classes;       /* the batch's classes */
    uint64_t *cycles;             /* the batch's ticks */
    uint64_t rng;
} leak_run;

/* Draw the classes and messages of the next `calls` calls, each of class `only` where
 * it is 0 or 1 (under --control, class 0 is drawn like class 1: the two classes differ
 * by their label only). */
static void leak_draw(leak_run *run, size_t calls, int only)
{
    size_t bytes = (size_t)run->req->message_bytes, i, at;
    uint64_t bits = 0, word;

    for (i = 0; i < calls; i++) {
        unsigned char *row = run->store + i * bytes;
        if (i % 64 == 0)
            bits = leak_random(&run->rng);
        run->classes[i] = (unsigned char)(only >= 0 ? only : (int)(bits & 1));
        bits >>= 1;
        if (run->classes[i] == 0 && !run->req->control) {
            memcpy(row, run->fixed, bytes);
            continue;
        }
        for (at = 0; at < bytes; at += sizeof word) {
            word = leak_random(&run->rng);
            memcpy(row + at, &word, bytes - at < sizeof word ? bytes - at : sizeof word);
        }
    }
}

/* Time the `calls` drawn calls, the ticks of call i into cycles[i]; returns how many
 * were made: fewer when the clock passed deadline_ns (read between calls, untimed). */
static size_t leak_time(leak_run *run, size_t calls, uint64_t deadline_ns)
{
    size_t bytes = (size_t)run->req->message_bytes, i;
    const bench_call *call = &run->call;

    for (i = 0; i < calls; i++) {
        uint64_t start, stop;
        int status;

        memcpy(run->message, run->store + i * bytes, bytes);
        start = counter_start();
        status = call->hash(call->digest_bits, call->message, call->msg_len_bits, call->digest);
        stop = counter_stop();
        if (status != 0) {
            check_descendants();
            fail(DRIVER_ERR_HASH, status, "CryptHash of %s returned %d on a %s message "
                 "(digest_bits=%d, msg_len_bits=%llu)", run->req->library, status,
                 run->classes[i] ? "random" : "fixed", call->digest_bits, call->msg_len_bits);
        }
        run->cycles[i] = stop - start;
        if (i % 16 == 15 && clock_raw_ns() >= deadline_ns)
            return i + 1;
    }
    return calls;
}

/* Hash the `drawn` messages of the store, all of one class, with no counter reading,
 * until LEAK_OUTSIDE_NS and LEAK_OUTSIDE_MIN_CALLS have passed; returns the calls. */
static uint32_t leak_untimed(leak_run *run, size_t drawn)
{
    size_t bytes = (size_t)run->req->message_bytes, row = 0;
    uint64_t until = clock_raw_ns() + LEAK_OUTSIDE_NS;
    const bench_call *call = &run->call;
    uint32_t calls = 0;

    for (;;) {
        int status;

        memcpy(run->message, run->store + row * bytes, bytes);
        status = call->hash(call->digest_bits, call->message, call->msg_len_bits, call->digest);
        if (status != 0) {
            check_descendants();
            fail(DRIVER_ERR_HASH, status, "CryptHash of %s returned %d on a %s message "
                 "timed from outside (digest_bits=%d, msg_len_bits=%llu)", run->req->library,
                 status, run->classes[row] ? "random" : "fixed", call->digest_bits,
                 call->msg_len_bits);
        }
        row = row + 1 < drawn ? row + 1 : 0;
        if (++calls >= LEAK_OUTSIDE_MIN_CALLS && clock_raw_ns() >= until)
            return calls;
    }
}

/* The sub-batches timed from outside: per round one of each class, each between two
 * LEAK_MARK frames, so that the parent reads the thread's on-CPU time around it. */
static void leak_outside(leak_run *run, size_t batch)
{
    size_t drawn = batch < LEAK_OUTSIDE_DRAWN ? batch : LEAK_OUTSIDE_DRAWN;
    unsigned char payload[8];
    uint32_t phase = 0;
    int round, only;

    for (round = 0; round < LEAK_OUTSIDE_ROUNDS; round++)
        for (only = 0; only < 2; only++) {
            uint32_t calls;

            leak_draw(run, drawn, only);
            frame_put_u32(frame_put_u32(payload, phase++), 0);
            outside_mark(run->req, FRAME_LEAK_MARK, payload, sizeof payload);
            calls = leak_untimed(run, drawn);
            frame_put_u32(frame_put_u32(payload, phase++), calls);
            outside_mark(run->req, FRAME_LEAK_MARK, payload, sizeof payload);
        }
}

/* True once stdin has data or has ended: the parent asks the run to stop. */
static int parent_says_stop(void)
{
    struct pollfd input = {0, POLLIN, 0};
    return poll(&input, 1, 0) > 0;
}

static void *leak_alloc(size_t bytes, const char *what)
{
    void *memory = malloc(bytes);
    if (memory == NULL)
        fail(DRIVER_ERR_MEMORY, 0, "cannot allocate the %zu bytes of %s", bytes, what);
    memset(memory, 0, bytes);  /* no page faults in the timed loop */
    return memory;
}

static void usage_of(struct rusage *usage)
{
    if (getrusage(RUSAGE_SELF, usage) != 0)
        memset(usage, 0, sizeof *usage);
}

static int check_leak(const request *req, char *error, size_t size)
{
    if (req->calls > 0 && req->message_bytes > 0 && req->batch_calls > 0
        && req->batch_calls <= MAX_LEAK_BATCH
        && req->message_bytes * req->batch_calls <= MAX_LEAK_STORE_BYTES)
        return 0;
    snprintf(error, size, "leak needs --calls, --message-bytes > 0 and --batch-calls from 1 "
             "to %llu, with message bytes x batch calls <= %llu",
             (unsigned long long)MAX_LEAK_BATCH, (unsigned long long)MAX_LEAK_STORE_BYTES);
    return -1;
}

static void run_leak(const request *req)
{
    guarded_buffer message_buffer, digest_buffer;
    size_t bytes = (size_t)req->message_bytes, batch = (size_t)req->batch_calls;
    size_t next_batch = batch < LEAK_FIRST_BATCH ? batch : LEAK_FIRST_BATCH;
    uint64_t deadline_ns, first_ns = 0, last_ns = 0, warmup_done = 0;
    unsigned char packed[FRAME_LEAK_DONE_BYTES], *frame, *fixed;
    struct rusage usage0, usage1;
    counter_reading mark;
    instance_library lib;
    leak_facts facts;
    leak_run run;

    memset(&facts, 0, sizeof facts);
    memset(&run, 0, sizeof run);
    pin(req);
    counter_mark(NULL, &mark);
    fixed = leak_alloc(bytes, "the fixed message");  /* all zero unless given */
    if (req->message_from_stdin)
        read_stdin_exactly(fixed, bytes);  /* stdin stays: its end says stop */
    run.req = req;
    run.fixed = fixed;
    run.rng = ~req->seed;  /* the warm-up's own stream: the seed alone fixes the timed calls */
    run.store = leak_alloc(batch * bytes, "a batch's messages");
    run.classes = leak_alloc(batch, "a batch's classes");
    run.cycles = leak_alloc(batch * sizeof *run.cycles, "a batch's ticks");
    frame = leak_alloc(batch * (sizeof *run.cycles + 1), "a LEAK_BATCH frame");
    map_guarded(&message_buffer, bytes, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE, "message");
    run.message = guard_end_aligned(&message_buffer, bytes);  /* filled before each call */
    run.call.message = run.message;
    run.call.digest = prepare_digest(req, &digest_buffer);
    run.call.digest_bits = req->digest_bits;
    run.call.msg_len_bits = 8 * (unsigned long long)bytes;
    load(req, &lib);
    run.call.hash = lib.hash;
    counter_measure_overhead(NULL, &facts.overhead_min_ticks, &facts.overhead_median_ticks);

    deadline_ns = req->time_limit_ms > 0 ? clock_raw_ns() + req->time_limit_ms * 1000000u
                                         : UINT64_MAX;
    while (warmup_done < req->warmup && clock_raw_ns() < deadline_ns) {
        size_t calls = req->warmup - warmup_done < batch ? (size_t)(req->warmup - warmup_done)
                                                         : batch;
        leak_draw(&run, calls, -1);
        warmup_done += leak_time(&run, calls, deadline_ns);
    }
    run.rng = req->seed;
    usage_of(&usage0);
    facts.stop_reason = LEAK_STOP_CALLS;
    while (facts.calls < req->calls) {
        size_t calls = req->calls - facts.calls < next_batch
                       ? (size_t)(req->calls - facts.calls) : next_batch, made, i;
        if (clock_raw_ns() >= deadline_ns) {
            facts.stop_reason = LEAK_STOP_TIME;
            break;
        }
        leak_draw(&run, calls, -1);
        if (first_ns == 0)
            first_ns = clock_raw_ns();
        made = leak_time(&run, calls, deadline_ns);
        last_ns = clock_raw_ns();
        for (i = 0; i < made; i++)
            facts.class1_calls += run.classes[i];
        facts.calls += made;
        memcpy(frame, run.cycles, made * sizeof *run.cycles);  /* host order: LE */
        memcpy(frame + made * sizeof *run.cycles, run.classes, made);
        send_frame(FRAME_LEAK_BATCH, frame, made * (sizeof *run.cycles + 1));
        next_batch = 2 * next_batch < batch ? 2 * next_batch : batch;
        if (parent_says_stop()) {
            facts.stop_reason = LEAK_STOP_PARENT;
            break;
        }
    }
    if (facts.stop_reason == LEAK_STOP_CALLS && facts.calls < req->calls)
        facts.stop_reason = LEAK_STOP_TIME;
    usage_of(&usage1);
    check_descendants();
    if (req->outside_fd >= 0 && facts.calls > 0)
        leak_outside(&run, batch);
    if (counter_frequency_since(NULL, &mark, COUNTER_FREQUENCY_INTERVAL_NS,
                                &facts.frequency_hz) != 0)
        fail(DRIVER_ERR_COUNTER, 0, "the %s counter did not advance while CLOCK_MONOTONIC_RAW "
             "did: it cannot time anything", counter_name());
    facts.pid = (uint32_t)req->driver_pid;
    facts.cpu = req->cpu;
    facts.cpu_at_end = current_cpu();
    facts.still_pinned = req->cpu >= 0 ? (uint32_t)still_pinned(req->cpu) : 0;
    facts.counter_id = counter_id(NULL);
    facts.class0_calls = facts.calls - facts.class1_calls;
    facts.warmup = warmup_done;
    facts.seed = req->seed;
    facts.message_bytes = req->message_bytes;
    facts.batch_calls = req->batch_calls;
    facts.loop_ns = last_ns - first_ns;
    facts.voluntary_switches = (uint64_t)(usage1.ru_nvcsw - usage0.ru_nvcsw);
    facts.involuntary_switches = (uint64_t)(usage1.ru_nivcsw - usage0.ru_nivcsw);
    facts.peak_rss_kib = peak_resident_kib();
    frame_pack_leak(&facts, packed);
    send_frame(FRAME_LEAK_DONE, packed, sizeof packed);
}

const driver_mode mode_leak = {"leak", check_leak, run_leak, MODE_NO_PROCESSES};
