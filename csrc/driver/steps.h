/* The steps the modes share around their calls into the library: pinning, loading,
 * the check for child processes left behind, and the counter's id in the frames. A
 * failure ends the run with an ERROR frame (channel.h). */
#ifndef NGCC_STEPS_H
#define NGCC_STEPS_H

#include <stdint.h>

#include "loader.h"
#include "request.h"
#include "timer.h"

/* Pin the process to req->cpu (nothing when it is -1). */
void pin(const request *req);

/* Load the library (its constructors run) and send LOADED. */
void load(const request *req, instance_library *lib);

/* Child processes the library left behind are an error, since one pinned beside
 * the trial would compete for its CPU. The sandbox keeps them in the process group
 * (no setsid), which the parent kills; the driver itself may not signal them. */
void check_descendants(void);

/* Send a mark frame (FRAME_BATCH_MARK, FRAME_LEAK_MARK), then wait for the parent's
 * byte on req->outside_fd, which it writes once it has read the thread's on-CPU time
 * from outside the process (nothing without --outside-fd). */
void outside_mark(const request *req, uint32_t type, const void *payload, size_t bytes);

/* The COUNTER_ID_* (frames.h) of `source`, or of the built-in counter when NULL. */
uint32_t counter_id(const counter_source *source);

#endif
