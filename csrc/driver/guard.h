/* Guard pages: buffers between two inaccessible pages, and a fault handler that
 * says which guard a library touched.
 *
 * A guarded buffer is one mapping [PROT_NONE guard][data pages][PROT_NONE guard],
 * each guard GUARD_REGION_BYTES wide (rounded up to pages). A message placed to end
 * at the data's end makes a read past it fault at once, up to 2 MiB past it (a
 * 1 MiB over-read included); placed at the data's start, a read before it. A read
 * farther off may land in another mapping: no guard is wide enough for any offset.
 * The guards are address space only (no memory), counted by RLIMIT_AS. The SIGSEGV/SIGBUS handler runs on
 * its own stack, looks the fault address up among the watched guards and sends a
 * prepared FRAME_CRASH (frames.h) with the signal, the guard and the access,
 * using only async-signal-safe calls; then the process dies of the signal.
 */
#ifndef NGCC_GUARD_H
#define NGCC_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* What a fault address was (FRAME_CRASH's guard field). */
enum {
    GUARD_NONE = 0,             /* not a guard page: a plain invalid access */
    GUARD_PAST_MESSAGE = 1,
    GUARD_BEFORE_MESSAGE = 2,
    GUARD_PAST_DIGEST = 3,
    GUARD_BEFORE_DIGEST = 4,
};

/* How the faulting access was made (FRAME_CRASH's access field). */
enum { ACCESS_UNKNOWN = 0, ACCESS_READ = 1, ACCESS_WRITE = 2 };

#define GUARD_REGION_BYTES ((size_t)2 << 20)

typedef struct {
    unsigned char *map;    /* the whole mapping, NULL when not allocated */
    size_t map_bytes;
    unsigned char *data;   /* the accessible pages between the guards */
    size_t data_bytes;     /* a whole number of pages, >= the bytes asked for */
} guarded_buffer;

/* Map a buffer of at least `bytes` accessible bytes (at least one page) between
 * two guard pages. Returns 0, or -1 with errno set (ENOMEM under a memory limit). */
int guard_alloc(guarded_buffer *buffer, size_t bytes);
void guard_free(guarded_buffer *buffer);

/* Where `bytes` bytes start when they end at the data's end. */
unsigned char *guard_end_aligned(const guarded_buffer *buffer, size_t bytes);

/* Report faults in the buffer's guards as `before` and `past` (GUARD_*). At most
 * GUARD_MAX_WATCHED buffers; watching a buffer again replaces its entry. */
#define GUARD_MAX_WATCHED 8
void guard_watch(const guarded_buffer *buffer, uint32_t before, uint32_t past);
void guard_unwatch(const guarded_buffer *buffer);

/* Install the SIGSEGV/SIGBUS handler on an alternate stack; it writes its frame to
 * result_fd. Returns 0, or -1 with errno set. */
int guard_install_handler(int result_fd);

#endif
