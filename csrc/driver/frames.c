/* Writing frames to the result channel (frames.h). */
#include "frames.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "the CYCLES frame is sent in host order, which frames.h defines as little-endian"
#endif

unsigned char *frame_put_u32(unsigned char *at, uint32_t value)
{
    int i;
    for (i = 0; i < 4; i++)
        *at++ = (unsigned char)(value >> (8 * i));
    return at;
}

unsigned char *frame_put_u64(unsigned char *at, uint64_t value)
{
    int i;
    for (i = 0; i < 8; i++)
        *at++ = (unsigned char)(value >> (8 * i));
    return at;
}

unsigned char *frame_put_f64(unsigned char *at, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);  /* IEEE 754 binary64 on every supported machine */
    return frame_put_u64(at, bits);
}

static int write_all(int fd, const unsigned char *bytes, size_t length)
{
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return -1;
        bytes += written;
        length -= (size_t)written;
    }
    return 0;
}

/* Small frames go out in one write (atomic on a pipe up to PIPE_BUF bytes). */
#define ONE_WRITE_BYTES 4096

int frame_write(int fd, uint32_t type, const void *payload, size_t length)
{
    unsigned char frame[ONE_WRITE_BYTES];
    unsigned char *at;

    if (length > UINT32_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    at = frame_put_u32(frame, type);
    at = frame_put_u32(at, (uint32_t)length);
    if (length <= sizeof frame - FRAME_HEADER_BYTES) {
        if (length > 0)
            memcpy(at, payload, length);
        return write_all(fd, frame, FRAME_HEADER_BYTES + length);
    }
    if (write_all(fd, frame, FRAME_HEADER_BYTES) != 0)
        return -1;
    return write_all(fd, payload, length);
}

int frame_error(int fd, int32_t code, int32_t value, const char *format, ...)
{
    unsigned char payload[8 + FRAME_MAX_TEXT + 1];
    va_list args;
    int length;

    frame_put_u32(frame_put_u32(payload, (uint32_t)code), (uint32_t)value);
    va_start(args, format);
    length = vsnprintf((char *)payload + 8, FRAME_MAX_TEXT + 1, format, args);
    va_end(args);
    if (length < 0)
        length = 0;
    if (length > FRAME_MAX_TEXT)
        length = FRAME_MAX_TEXT;
    return frame_write(fd, FRAME_ERROR, payload, 8 + (size_t)length);
}

void frame_pack_trial(const trial_facts *f, unsigned char *out)
{
    unsigned char *at = out;
    int i;

    at = frame_put_u32(at, f->pid);
    at = frame_put_u32(at, (uint32_t)f->cpu);
    at = frame_put_u32(at, (uint32_t)f->cpu_at_end);
    at = frame_put_u32(at, f->still_pinned);
    at = frame_put_u32(at, f->counter_id);
    at = frame_put_u32(at, f->calls);
    at = frame_put_u32(at, f->warmup);
    at = frame_put_u32(at, f->batch_calls);
    at = frame_put_f64(at, f->frequency_hz);
    at = frame_put_u64(at, f->overhead_min_ticks);
    at = frame_put_u64(at, f->overhead_median_ticks);
    at = frame_put_f64(at, f->core_cycles_per_tick);
    at = frame_put_u64(at, f->loop_ticks);
    at = frame_put_u64(at, f->loop_ns);
    at = frame_put_u64(at, f->thread_cpu_ns);
    at = frame_put_u64(at, f->voluntary_switches);
    at = frame_put_u64(at, f->involuntary_switches);
    at = frame_put_u64(at, f->batch_ticks);
    at = frame_put_u64(at, f->batch_ns);
    at = frame_put_u64(at, f->batch_thread_cpu_ns);
    at = frame_put_u64(at, f->batch_involuntary_switches);
    at = frame_put_u64(at, f->baseline_rss_kib);
    at = frame_put_u64(at, f->peak_rss_kib);
    at = frame_put_u64(at, f->setup_cpu_ns);
    at = frame_put_u64(at, f->counter_resolution);
    at = frame_put_u64(at, f->batch_min_cpu_ns);
    at = frame_put_u64(at, f->batch_min_calls);
    at = frame_put_u64(at, f->honesty_calls);
    at = frame_put_u64(at, f->honesty_ticks);
    at = frame_put_u64(at, f->honesty_ns);
    at = frame_put_u64(at, f->honesty_min_cpu_ns);
    at = frame_put_u64(at, f->honesty_min_calls);
    for (i = 0; i < 3; i++)
        at = frame_put_f64(at, f->load_average[i]);
}

void frame_pack_leak(const leak_facts *f, unsigned char *out)
{
    unsigned char *at = out;

    at = frame_put_u32(at, f->pid);
    at = frame_put_u32(at, (uint32_t)f->cpu);
    at = frame_put_u32(at, (uint32_t)f->cpu_at_end);
    at = frame_put_u32(at, f->still_pinned);
    at = frame_put_u32(at, f->counter_id);
    at = frame_put_u32(at, f->stop_reason);
    at = frame_put_u64(at, f->calls);
    at = frame_put_u64(at, f->class0_calls);
    at = frame_put_u64(at, f->class1_calls);
    at = frame_put_u64(at, f->warmup);
    at = frame_put_u64(at, f->seed);
    at = frame_put_u64(at, f->message_bytes);
    at = frame_put_u64(at, f->batch_calls);
    at = frame_put_f64(at, f->frequency_hz);
    at = frame_put_u64(at, f->overhead_min_ticks);
    at = frame_put_u64(at, f->overhead_median_ticks);
    at = frame_put_u64(at, f->loop_ns);
    at = frame_put_u64(at, f->voluntary_switches);
    at = frame_put_u64(at, f->involuntary_switches);
    frame_put_u64(at, f->peak_rss_kib);
}
