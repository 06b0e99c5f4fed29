/* The buffers a mode hands CryptHash, and the message's bytes (from stdin or the
 * harness's own message). A failure ends the run with an ERROR frame (channel.h).
 *
 * Two placements of a message:
 * - guarded (hash, kat, probe, leak): in a guarded buffer (guard.h), ending at the
 *   last byte before a guard page (or, for the probe, also starting right after
 *   one), so that reading past it faults at once and is named;
 * - timed (cold, trial: the figures set beside the harness's): where the NGCC
 *   harness puts its own, on the heap (it times a calloc'd buffer): the message
 *   starts TIMED_ALIGNMENT-aligned, zeroed, with TIMED_SLACK_BYTES of zeros after
 *   it, never against a guard page. A message that ends in the last bytes of a page
 *   cost one family +18 to +26 % at 32 B on an Intel guest (issue 40). A read past
 *   it goes unseen there; the KAT check and the probe, which run before any trial,
 *   keep the guard pages that catch it.
 * The digest is always guarded: a write past it faults in every mode. */
#ifndef NGCC_BUFFERS_H
#define NGCC_BUFFERS_H

#include <stdint.h>

#include "guard.h"
#include "request.h"

/* Map a guarded buffer of at least `bytes` bytes whose guards report as `before` and
 * `past` (GUARD_*); `what` names it in the error. */
void map_guarded(guarded_buffer *buffer, uint64_t bytes, uint32_t before, uint32_t past,
                 const char *what);

#define TIMED_ALIGNMENT 64
#define TIMED_SLACK_BYTES 64

/* The timed message of a cold call or trial (req->message_bytes), placed as the
 * harness places it: stdin's bytes under --message-stdin, else the NGCC harness's
 * message. */
unsigned char *prepare_timed_message(const request *req);

/* The digest area (req->digest_bits / 8 bytes), ending at its buffer's guard page. */
unsigned char *prepare_digest(const request *req, guarded_buffer *buffer);

/* Read exactly `bytes` bytes of stdin. */
void read_stdin_exactly(unsigned char *into, uint64_t bytes);

/* Read exactly `bytes` bytes of stdin, then leave /dev/null in its place. */
void read_stdin(unsigned char *into, uint64_t bytes);

#endif
