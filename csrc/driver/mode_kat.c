/* kat --kat 2_12|2_23|2_33|Loop --instance NAME [--blank-digests]: one KAT file,
 * generated (kat.h) and streamed as it is written: KAT_DATA..., then KAT_DONE, with
 * PROGRESS frames between. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "buffers.h"
#include "channel.h"
#include "frames.h"
#include "kat.h"
#include "modes.h"
#include "steps.h"
#include "timer.h"

#define PROGRESS_INTERVAL_NS 200000000u

/* KAT: the file text leaves as KAT_DATA frames through a stdio stream. */
typedef struct {
    uint64_t bytes;
    uint64_t last_progress_ns;
} kat_sink;

static ssize_t sink_write(void *cookie, const char *data, size_t size)
{
    kat_sink *sink = cookie;
    size_t done = 0;

    while (done < size) {
        size_t chunk = size - done > FRAME_MAX_DATA ? FRAME_MAX_DATA : size - done;
        send_frame(FRAME_KAT_DATA, data + done, chunk);
        done += chunk;
    }
    sink->bytes += size;
    return (ssize_t)size;
}

static int sink_progress(void *cookie, uint64_t done, uint64_t total)
{
    kat_sink *sink = cookie;
    uint64_t now = clock_raw_ns();
    unsigned char payload[16];

    if (now - sink->last_progress_ns >= PROGRESS_INTERVAL_NS || done == total) {
        sink->last_progress_ns = now;
        frame_put_u64(frame_put_u64(payload, done), total);
        send_frame(FRAME_PROGRESS, payload, sizeof payload);
    }
    return 0;
}

/* kat_message_fn: one guarded buffer, grown when a longer message needs it. */
static unsigned char *kat_message(void *ctx, size_t bytes)
{
    guarded_buffer *buffer = ctx;

    if (buffer->map == NULL || bytes > buffer->data_bytes) {
        guard_free(buffer);
        if (guard_alloc(buffer, bytes) != 0)
            return NULL;
        guard_watch(buffer, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE);
    }
    return guard_end_aligned(buffer, bytes);
}

static int kat_kind(const char *tag, kat_file_kind *kind)
{
    static const kat_file_kind kinds[] = {KAT_FILE_2_12, KAT_FILE_2_23, KAT_FILE_2_33,
                                          KAT_FILE_LOOP};
    size_t i;
    for (i = 0; tag != NULL && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(tag, kat_file_tag(kinds[i])) == 0) {
            *kind = kinds[i];
            return 0;
        }
    return -1;
}

static int check_kat(const request *req, char *error, size_t size)
{
    kat_file_kind kind;

    if (kat_kind(req->kat_tag, &kind) == 0 && req->instance != NULL)
        return 0;
    snprintf(error, size, "kat needs --kat 2_12, 2_23, 2_33 or Loop and --instance");
    return -1;
}

static void run_kat(const request *req)
{
    cookie_io_functions_t io = {NULL, sink_write, NULL, NULL};
    guarded_buffer message_buffer = {NULL, 0, NULL, 0}, digest_buffer;
    kat_sink sink = {0, 0};
    unsigned char payload[16];
    char error[FRAME_MAX_TEXT];
    kat_generator gen;
    kat_file_kind kind;
    instance_library lib;
    uint64_t ns0;
    FILE *file;
    int status;

    if (kat_kind(req->kat_tag, &kind) != 0)  /* check_kat found it */
        fail(DRIVER_ERR_REQUEST, 0, "unknown KAT file %.40s", req->kat_tag);
    memset(&gen, 0, sizeof gen);
    gen.instance = req->instance;
    gen.digest_bits = req->digest_bits;
    gen.blank_digests = req->blank_digests;
    gen.progress = sink_progress;
    gen.progress_ctx = &sink;
    gen.message_buffer = kat_message;
    gen.message_ctx = &message_buffer;
    gen.digest_area = prepare_digest(req, &digest_buffer);
    load(req, &lib);
    gen.hash = lib.hash;
    file = fopencookie(&sink, "w", io);
    if (file == NULL)
        fail(DRIVER_ERR_SYSTEM, 0, "cannot open the KAT stream: %s", strerror(errno));
    setvbuf(file, NULL, _IOFBF, FRAME_MAX_DATA);
    ns0 = clock_raw_ns();
    status = kat_write_stream(&gen, kind, file, "the result channel", error, sizeof error);
    fclose(file);
    check_descendants();
    switch (status) {
    case KAT_OK: break;
    case KAT_ERR_HASH: fail(DRIVER_ERR_HASH, 0, "%s", error);
    case KAT_ERR_MEMORY: fail(DRIVER_ERR_MEMORY, 0, "%s", error);
    case KAT_ERR_NAME:
    case KAT_ERR_DIGEST_BITS: fail(DRIVER_ERR_KAT, status, "%s", error);
    default: fail(DRIVER_ERR_SYSTEM, status, "%s", error);
    }
    frame_put_u64(frame_put_u64(payload, sink.bytes), clock_raw_ns() - ns0);
    send_frame(FRAME_KAT_DONE, payload, sizeof payload);
}

const driver_mode mode_kat = {"kat", check_kat, run_kat, MODE_NO_PROCESSES};
