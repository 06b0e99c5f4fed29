/* The message and digest buffers (buffers.h). */
#include "buffers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "frames.h"

void map_guarded(guarded_buffer *buffer, uint64_t bytes, uint32_t before, uint32_t past,
                 const char *what)
{
    if (guard_alloc(buffer, (size_t)bytes) != 0)
        fail(errno == ENOMEM ? DRIVER_ERR_MEMORY : DRIVER_ERR_SYSTEM, 0,
             "cannot map the %llu-byte %s buffer: %s", (unsigned long long)bytes, what,
             strerror(errno));
    guard_watch(buffer, before, past);
}

unsigned char *prepare_timed_message(const request *req)
{
    size_t bytes = (size_t)req->message_bytes + TIMED_SLACK_BYTES;
    void *memory;
    unsigned char *message;
    uint64_t i;

    errno = posix_memalign(&memory, TIMED_ALIGNMENT, bytes);
    if (errno != 0)
        fail(errno == ENOMEM ? DRIVER_ERR_MEMORY : DRIVER_ERR_SYSTEM, 0,
             "cannot allocate the %llu-byte message buffer: %s",
             (unsigned long long)req->message_bytes, strerror(errno));
    message = memset(memory, 0, bytes);  /* as calloc, and no page faults in the loop */
    if (req->message_from_stdin) {
        read_stdin(message, req->message_bytes);
    } else {  /* the NGCC harness's message: byte i = (i*131 + n) mod 256 */
        for (i = 0; i < req->message_bytes; i++)
            message[i] = (unsigned char)((i * 131 + req->message_bytes) % 256);
    }
    return message;
}

unsigned char *prepare_digest(const request *req, guarded_buffer *buffer)
{
    size_t bytes = (size_t)req->digest_bits / 8;
    map_guarded(buffer, bytes, GUARD_BEFORE_DIGEST, GUARD_PAST_DIGEST, "digest");
    return guard_end_aligned(buffer, bytes);
}

void read_stdin_exactly(unsigned char *into, uint64_t bytes)
{
    uint64_t done = 0;

    while (done < bytes) {
        ssize_t got = read(0, into + done, bytes - done > (1u << 20) ? (1u << 20) : bytes - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            fail(DRIVER_ERR_REQUEST, 0, "stdin ended after %llu of the %llu message bytes",
                 (unsigned long long)done, (unsigned long long)bytes);
        done += (uint64_t)got;
    }
}

void read_stdin(unsigned char *into, uint64_t bytes)
{
    int null_fd;

    read_stdin_exactly(into, bytes);
    if ((null_fd = open("/dev/null", O_RDONLY)) >= 0) {
        dup2(null_fd, 0);
        close(null_fd);
    }
}
