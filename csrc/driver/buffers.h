/* The buffers a mode hands CryptHash: the message and the digest, each in a guarded
 * buffer (guard.h) so that reading or writing past it faults at once, and the
 * message's bytes from stdin or the harness's own message. A failure ends the run
 * with an ERROR frame (channel.h). */
#ifndef NGCC_BUFFERS_H
#define NGCC_BUFFERS_H

#include <stdint.h>

#include "guard.h"
#include "request.h"

/* Map a guarded buffer of at least `bytes` bytes whose guards report as `before` and
 * `past` (GUARD_*); `what` names it in the error. */
void map_guarded(guarded_buffer *buffer, uint64_t bytes, uint32_t before, uint32_t past,
                 const char *what);

/* The message of a cold call or trial (req->message_bytes), ending at its buffer's
 * guard page: stdin's bytes under --message-stdin, else the NGCC harness's message. */
unsigned char *prepare_message(const request *req, guarded_buffer *buffer);

/* The digest area (req->digest_bits / 8 bytes), ending at its buffer's guard page. */
unsigned char *prepare_digest(const request *req, guarded_buffer *buffer);

/* Read exactly `bytes` bytes of stdin. */
void read_stdin_exactly(unsigned char *into, uint64_t bytes);

/* Read exactly `bytes` bytes of stdin, then leave /dev/null in its place. */
void read_stdin(unsigned char *into, uint64_t bytes);

#endif
