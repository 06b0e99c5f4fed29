/* The result channel as the modes use it: frames (frames.h) to the pipe the request
 * names, and the two ways a run ends, END or an ERROR then END.
 *
 * Only the driver's own process writes: a copy made by a library's fork() that
 * reaches any of these functions leaves quietly (exit 0), so a channel has one writer.
 * When the channel is gone the process ends with EXIT_CHANNEL. */
#ifndef NGCC_CHANNEL_H
#define NGCC_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EXIT_USAGE 120    /* no usable result channel: the message is on stderr */
#define EXIT_CHANNEL 121  /* the result channel broke (closed, or the parent is gone) */

#if defined(__GNUC__)
#define DRIVER_NORETURN __attribute__((noreturn))
#define DRIVER_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DRIVER_NORETURN
#define DRIVER_PRINTF(f, a)
#endif

/* Take fd as the channel: point fd 1 at fd 2, keep the channel out of exec'd
 * programs, ignore SIGPIPE (a closed channel is a write error); -1 if fd is not an
 * open descriptor above 2. */
int channel_open(int fd);

/* The channel's descriptor (-1 before channel_open). */
int channel_fd(void);

/* The one process that may write: this process (called again by the isolation's
 * worker, whose pid is its own). */
void channel_set_writer(pid_t pid);

/* HELLO: the protocol's version and the driver's pid as the parent knows it. */
void channel_hello(long driver_pid);

void send_frame(uint32_t type, const void *payload, size_t length);

/* END, then exit 0. */
void end(void) DRIVER_NORETURN;

/* ERROR (code, value, text), END, exit 0. */
void fail(int32_t code, int32_t value, const char *format, ...) DRIVER_PRINTF(3, 4)
    DRIVER_NORETURN;

#endif
