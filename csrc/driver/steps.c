/* The steps the modes share (steps.h). */
#include "steps.h"

#include <errno.h>
#include <unistd.h>

#include "channel.h"
#include "frames.h"
#include "procinfo.h"

void outside_mark(const request *req, uint32_t type, const void *payload, size_t bytes)
{
    unsigned char go;

    if (req->outside_fd < 0)
        return;
    send_frame(type, payload, bytes);
    while (read(req->outside_fd, &go, 1) < 0 && errno == EINTR)
        continue;
}

void load(const request *req, instance_library *lib)
{
    char error[FRAME_MAX_TEXT];
    if (library_open(lib, req->library, error, sizeof error) != 0)
        fail(DRIVER_ERR_LOAD, 0, "%s", error);
    send_frame(FRAME_LOADED, NULL, 0);
}

void pin(const request *req)
{
    char error[256];
    if (req->cpu >= 0 && pin_to_cpu(req->cpu, error, sizeof error) != 0)
        fail(DRIVER_ERR_CPU, req->cpu, "%s", error);
}

uint32_t counter_id(const counter_source *source)
{
    if (source != NULL && source->kind == COUNTER_SOURCE_CLOCK)
        return COUNTER_ID_CLOCK;
    if (source != NULL && source->kind == COUNTER_SOURCE_PERF_RDPMC)
        return COUNTER_ID_PERF_RDPMC;
    if (source != NULL && source->kind == COUNTER_SOURCE_PERF_READ)
        return COUNTER_ID_PERF_READ;
#if defined(NGCC_COUNTER_X86_64)
    return COUNTER_ID_RDTSC;
#elif defined(NGCC_COUNTER_AARCH64)
    return COUNTER_ID_CNTVCT;
#else
    return COUNTER_ID_CLOCK;
#endif
}

void check_descendants(void)
{
    unsigned children = reap_descendants();
    if (children > 0)
        fail(DRIVER_ERR_FORKED, (int32_t)children, "the library started %u child "
             "process%s inside CryptHash (killed by ngcc)", children, children == 1 ? "" : "es");
}
