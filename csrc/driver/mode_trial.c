/* trial --message-bytes N --calls N --warmup N --batch-calls N [--cpu C]
 *       [--message-stdin] [--memory-limit BYTES] [--counter auto|perf|tsc|clock]
 *       [--honesty-calls N] [--outside-fd FD]
 *
 * A timed trial: the per-call loop (each call between two counter readings), the
 * uninstrumented batch (bench.h) and, with --honesty-calls, the honesty batch
 * (honesty.h): TRIAL, CYCLES, TRIAL_DIGEST, then HONESTY_DIGEST. With --outside-fd,
 * BATCH_MARK before and after the batch, each followed by a wait for the parent's
 * byte on FD, so that the parent reads the thread's on-CPU time around the batch
 * from outside the process (ngcc/driver/outside.py). timer.h says what each counter
 * is; the default is tsc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "buffers.h"
#include "channel.h"
#include "frames.h"
#include "honesty.h"
#include "modes.h"
#include "procinfo.h"
#include "steps.h"
#include "timer.h"

static int check_trial(const request *req, char *error, size_t size)
{
    if (req->calls == 0) {
        snprintf(error, size, "trial needs --calls");
        return -1;
    }
    if (req->honesty_calls > 0 && (req->batch_calls == 0 || req->message_bytes == 0)) {
        snprintf(error, size, "--honesty-calls needs --batch-calls and a message of a "
                 "byte or more");
        return -1;
    }
    return 0;
}

/* BATCH_MARK `phase`, then the parent's go-ahead (nothing without --outside-fd). */
static void batch_mark(const request *req, uint32_t phase)
{
    unsigned char payload[4];

    frame_put_u32(payload, phase);
    outside_mark(req, FRAME_BATCH_MARK, payload, sizeof payload);
}

/* As many sub-batches (up to BENCH_SUB_BATCHES) as the batch holds milliseconds, by
 * the per-call loop's time per call. */
static size_t sub_batches(const bench_outcome *per_call, uint64_t calls, uint64_t batch_calls)
{
    double batch_ns = (double)per_call->total_ns / (double)calls * (double)batch_calls;
    double subs = batch_ns / BENCH_SUB_BATCH_NS;
    return subs >= BENCH_SUB_BATCHES ? BENCH_SUB_BATCHES : subs < 1 ? 1 : (size_t)subs;
}

static void run_trial(const request *req)
{
    guarded_buffer digest_buffer, honesty_buffer;
    unsigned char packed[FRAME_TRIAL_BYTES];
    bench_outcome per_call, batch, honesty;
    counter_reading mark;
    trial_facts facts;
    instance_library lib;
    bench_call call;
    counter_source counter;
    uint64_t *cycles;
    char text[FRAME_MAX_TEXT];
    size_t digest_bytes = (size_t)req->digest_bits / 8;
    unsigned char *loop_digest;  /* the per-call loop's last digest, then the batch's */
    unsigned char *message, *honesty_digests_at = NULL;

    memset(&facts, 0, sizeof facts);
    memset(&batch, 0, sizeof batch);
    memset(&honesty, 0, sizeof honesty);
    pin(req);
    if (counter_open(req->counter, &counter, text, sizeof text) != 0)  /* after pinning */
        fail(DRIVER_ERR_COUNTER, 0, "--counter %s: %s", req->counter, text);
    call.counter = &counter;
    counter_mark(&counter, &mark);  /* the frequency is measured from here to after the loops */
    cycles = malloc((size_t)req->calls * sizeof *cycles);
    if (cycles == NULL)
        fail(DRIVER_ERR_MEMORY, 0, "cannot allocate the cycles of %llu calls",
             (unsigned long long)req->calls);
    memset(cycles, 0, (size_t)req->calls * sizeof *cycles);  /* no page faults in the loop */
    if ((loop_digest = malloc(2 * digest_bytes)) == NULL)
        fail(DRIVER_ERR_MEMORY, 0, "cannot allocate %zu bytes", 2 * digest_bytes);
    call.message = message = prepare_timed_message(req);
    call.digest = prepare_digest(req, &digest_buffer);
    if (req->honesty_calls > 0)
        honesty_digests_at = honesty_digests(req, &honesty_buffer);
    load(req, &lib);
    facts.baseline_rss_kib = resident_kib();
    call.hash = lib.hash;
    call.digest_bits = req->digest_bits;
    call.msg_len_bits = 8 * (unsigned long long)req->message_bytes;

    counter_measure_overhead(&counter, &facts.overhead_min_ticks, &facts.overhead_median_ticks);
    facts.core_cycles_per_tick = counter_cycles_per_tick(&counter, facts.overhead_min_ticks);
    facts.counter_resolution = counter_resolution(&counter);
    facts.setup_cpu_ns = process_cpu_ns();
    if (bench_time_calls(&call, (size_t)req->warmup, (size_t)req->calls, cycles, &per_call) != 0) {
        check_descendants();
        bench_failure_text(text, sizeof text, req->library, &per_call, (size_t)req->calls,
                           (size_t)req->warmup, &call);
        fail(DRIVER_ERR_HASH, per_call.status, "%s", text);
    }
    facts.counter_resolution = counter_resolution_of(facts.counter_resolution, cycles,
                                                     (size_t)req->calls);
    memcpy(loop_digest, call.digest, digest_bytes);  /* the last timed call's output */
    memset(call.digest, 0, digest_bytes);  /* so the batch's digest is the batch's own */
    batch_mark(req, 0);
    if (req->batch_calls > 0
        && bench_time_batch(&call, (size_t)req->batch_calls,
                            sub_batches(&per_call, req->calls, req->batch_calls), &batch) != 0) {
        check_descendants();
        snprintf(text, sizeof text, "CryptHash of %s returned %d at batch call %zu of %llu "
                 "(digest_bits=%d, msg_len_bits=%llu)", req->library, batch.status,
                 batch.failed_call, (unsigned long long)req->batch_calls, call.digest_bits,
                 call.msg_len_bits);
        fail(DRIVER_ERR_HASH, batch.status, "%s", text);
    }
    batch_mark(req, 1);
    if (req->honesty_calls > 0
        && bench_time_varied_batch(&call, message, (size_t)req->message_bytes,
                                   honesty_digests_at, (size_t)req->honesty_calls,
                                   honesty_sub_batches(sub_batches(&per_call, req->calls,
                                                                   req->honesty_calls),
                                                       (size_t)req->honesty_calls),
                                   &honesty) != 0) {
        check_descendants();
        fail(DRIVER_ERR_HASH, honesty.status, "CryptHash of %s returned %d at honesty call "
             "%zu of %llu (a varied message; digest_bits=%d, msg_len_bits=%llu)",
             req->library, honesty.status, honesty.failed_call,
             (unsigned long long)req->honesty_calls, call.digest_bits, call.msg_len_bits);
    }
    if (counter_frequency_since(&counter, &mark, COUNTER_FREQUENCY_INTERVAL_NS,
                                &facts.frequency_hz) != 0)
        fail(DRIVER_ERR_COUNTER, 0, "the %s counter did not advance while CLOCK_MONOTONIC_RAW "
             "did: it cannot time anything", source_name(&counter));
    facts.peak_rss_kib = peak_resident_kib();
    facts.cpu = req->cpu;
    facts.cpu_at_end = current_cpu();
    facts.still_pinned = req->cpu >= 0 ? (uint32_t)still_pinned(req->cpu) : 0;
    load_average(facts.load_average);
    check_descendants();

    facts.pid = (uint32_t)req->driver_pid;
    facts.counter_id = counter_id(&counter);
    facts.calls = (uint32_t)req->calls;
    facts.warmup = (uint32_t)req->warmup;
    facts.batch_calls = (uint32_t)req->batch_calls;
    facts.loop_ticks = per_call.total_ticks;
    facts.loop_ns = per_call.total_ns;
    facts.thread_cpu_ns = per_call.thread_cpu_ns;
    facts.voluntary_switches = per_call.voluntary_switches;
    facts.involuntary_switches = per_call.involuntary_switches;
    if (req->batch_calls > 0) {
        facts.batch_ticks = batch.total_ticks;
        facts.batch_ns = batch.total_ns;
        facts.batch_thread_cpu_ns = batch.thread_cpu_ns;
        facts.batch_involuntary_switches = batch.involuntary_switches;
        facts.batch_min_cpu_ns = batch.min_sub_cpu_ns;
        facts.batch_min_calls = batch.min_sub_calls;
    }
    facts.honesty_calls = req->honesty_calls;
    facts.honesty_ticks = honesty.total_ticks;
    facts.honesty_ns = honesty.total_ns;
    facts.honesty_min_cpu_ns = honesty.min_sub_cpu_ns;
    facts.honesty_min_calls = honesty.min_sub_calls;
    frame_pack_trial(&facts, packed);
    send_frame(FRAME_TRIAL, packed, sizeof packed);
    send_frame(FRAME_CYCLES, cycles, (size_t)req->calls * sizeof *cycles);  /* host order: LE */
    memcpy(loop_digest + digest_bytes, req->batch_calls > 0 ? call.digest : loop_digest,
           digest_bytes);
    send_frame(FRAME_TRIAL_DIGEST, loop_digest, 2 * digest_bytes);
    if (req->honesty_calls > 0)
        send_honesty_digest(honesty_digests_at, (size_t)req->honesty_calls, digest_bytes);
}

const driver_mode mode_trial = {"trial", check_trial, run_trial, MODE_NO_PROCESSES};
