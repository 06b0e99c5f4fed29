/* hash --bits N: hash the ceil(N/8) bytes read from stdin: DIGEST. */
#include "buffers.h"
#include "channel.h"
#include "frames.h"
#include "modes.h"
#include "steps.h"

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
}

const driver_mode mode_hash = {"hash", NULL, run_hash};
