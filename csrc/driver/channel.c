/* The result channel (channel.h). */
#include "channel.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "frames.h"

static int channel = -1;
static pid_t writer;

int channel_open(int fd)
{
    int flags;

    if (fd <= 2 || (flags = fcntl(fd, F_GETFD)) < 0)
        return -1;
    fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    fflush(stdout);
    dup2(2, 1);
    signal(SIGPIPE, SIG_IGN);
    channel = fd;
    return 0;
}

int channel_fd(void)
{
    return channel;
}

void channel_set_writer(pid_t pid)
{
    writer = pid;
}

void channel_hello(long driver_pid)
{
    unsigned char payload[8];
    frame_put_u32(frame_put_u32(payload, FRAME_PROTOCOL_VERSION), (uint32_t)driver_pid);
    send_frame(FRAME_HELLO, payload, sizeof payload);
}

void send_frame(uint32_t type, const void *payload, size_t length)
{
    if (getpid() != writer)
        _exit(0);
    if (frame_write(channel, type, payload, length) != 0)
        _exit(EXIT_CHANNEL);
}

void end(void)
{
    send_frame(FRAME_END, NULL, 0);
    _exit(0);
}

void fail(int32_t code, int32_t value, const char *format, ...)
{
    char text[FRAME_MAX_TEXT + 1];
    va_list args;

    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    if (getpid() != writer)
        _exit(0);
    if (frame_error(channel, code, value, "%s", text) != 0)
        _exit(EXIT_CHANNEL);
    end();
}
