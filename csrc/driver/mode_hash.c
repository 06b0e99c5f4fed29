/* hash --bits N [--honesty-calls N]: hash the ceil(N/8) bytes read from stdin:
 * DIGEST; with --honesty-calls, then the honesty batch's reference (honesty.h):
 * HONESTY_DIGEST. */
#include <stdio.h>

#include "buffers.h"
#include "channel.h"
#include "frames.h"
#include "honesty.h"
#include "modes.h"
#include "steps.h"

static int check_hash(const request *req, char *error, size_t size)
{
    if (req->honesty_calls == 0 || (req->bits > 0 && req->bits % 8 == 0))
        return 0;
    snprintf(error, size, "--honesty-calls needs a message of whole bytes, at least one");
    return -1;
}

static void run_hash(const request *req)
{
    guarded_buffer message_buffer, digest_buffer;
    size_t bytes = (size_t)((req->bits + 7) / 8);
    unsigned char *message, *digest;
    instance_library lib;
    int status;

    map_guarded(&message_buffer, bytes, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE, "message");
    message = guard_end_aligned(&message_buffer, bytes);
    read_stdin(message, bytes);
    digest = prepare_digest(req, &digest_buffer);
    load(req, &lib);
    status = lib.hash(req->digest_bits, message, req->bits, digest);
    check_descendants();
    if (status != 0)
        fail(DRIVER_ERR_HASH, status, "CryptHash of %s returned %d (digest_bits=%d, bits=%llu)",
             req->library, status, req->digest_bits, (unsigned long long)req->bits);
    send_frame(FRAME_DIGEST, digest, (size_t)req->digest_bits / 8);
    if (req->honesty_calls > 0)
        honesty_reference(req, lib.hash, message, bytes);
}

const driver_mode mode_hash = {"hash", check_hash, run_hash, MODE_NO_PROCESSES};
