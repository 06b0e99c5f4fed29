/* cold --message-bytes N [--cpu C] [--message-stdin]: one call of the freshly loaded
 * library, timed: COLD. */
#include "buffers.h"
#include "channel.h"
#include "frames.h"
#include "modes.h"
#include "steps.h"
#include "timer.h"

static void run_cold(const request *req)
{
    guarded_buffer digest_buffer;
    unsigned char payload[16], *message, *digest;
    uint64_t ns0, ticks0, ticks, ns;
    instance_library lib;
    int status;

    pin(req);
    message = prepare_timed_message(req);
    digest = prepare_digest(req, &digest_buffer);
    load(req, &lib);
    ns0 = clock_raw_ns();
    ticks0 = counter_start();
    status = lib.hash(req->digest_bits, message, 8 * req->message_bytes, digest);
    ticks = counter_stop() - ticks0;
    ns = clock_raw_ns() - ns0;
    check_descendants();
    if (status != 0)
        fail(DRIVER_ERR_HASH, status, "CryptHash of %s returned %d at its first call "
             "(digest_bits=%d, msg_len_bits=%llu)", req->library, status, req->digest_bits,
             8 * (unsigned long long)req->message_bytes);
    frame_put_u64(frame_put_u64(payload, ticks), ns);
    send_frame(FRAME_COLD, payload, sizeof payload);
}

const driver_mode mode_cold = {"cold", NULL, run_cold, MODE_NO_PROCESSES};
