/* probe --lengths B1,B2,...: each bit length hashed at a page's start and at its
 * end, between guard pages: PROBE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "channel.h"
#include "frames.h"
#include "modes.h"
#include "steps.h"

static int check_probe(const request *req, char *error, size_t size)
{
    uint64_t lengths[MAX_BIT_LENGTHS];

    if (parse_bit_lengths(req->lengths, lengths) > 0)
        return 0;
    snprintf(error, size, "probe needs --lengths: up to %d comma-separated bit lengths of "
             "at most %llu", MAX_BIT_LENGTHS, (unsigned long long)MAX_LENGTH_BITS);
    return -1;
}

/* Probe: each length hashed twice, at the start of a page after a guard page and
 * at the end of one before a guard page, the bytes around it different each time;
 * a library that reads outside the message faults or gets two digests. */
static void run_probe(const request *req)
{
    guarded_buffer at_start, at_end, digest_buffer;
    uint64_t lengths[MAX_BIT_LENGTHS], longest = 0, i, byte;
    size_t count, digest_bytes = (size_t)req->digest_bits / 8;
    unsigned char *digest, *first, payload[4];
    instance_library lib;

    count = parse_bit_lengths(req->lengths, lengths);  /* check_probe found them good */
    for (i = 0; i < count; i++)
        if (lengths[i] > longest)
            longest = lengths[i];
    map_guarded(&at_start, (longest + 7) / 8, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE, "message");
    map_guarded(&at_end, (longest + 7) / 8, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE, "message");
    digest = prepare_digest(req, &digest_buffer);
    first = malloc(digest_bytes);
    if (first == NULL)
        fail(DRIVER_ERR_MEMORY, 0, "cannot allocate %zu bytes", digest_bytes);
    load(req, &lib);
    for (i = 0; i < count; i++) {
        uint64_t bits = lengths[i], bytes = (bits + 7) / 8;
        unsigned char *late = guard_end_aligned(&at_end, (size_t)bytes);
        int status;

        memset(at_start.data, 0xA5, at_start.data_bytes);
        memset(at_end.data, 0x5A, at_end.data_bytes);
        for (byte = 0; byte < bytes; byte++)
            at_start.data[byte] = late[byte] = (unsigned char)((byte * 131 + bytes) % 256);
        if (bits % 8 != 0)  /* the unused low bits of a partial last byte: zero in both */
            at_start.data[bytes - 1] = late[bytes - 1] &= (unsigned char)(0xFF00 >> (bits % 8));
        status = lib.hash(req->digest_bits, at_start.data, bits, digest);
        if (status == 0) {
            memcpy(first, digest, digest_bytes);
            status = lib.hash(req->digest_bits, late, bits, digest);
        }
        if (status != 0) {
            check_descendants();
            fail(DRIVER_ERR_HASH, status, "CryptHash of %s returned %d (digest_bits=%d, "
                 "bits=%llu)", req->library, status, req->digest_bits, (unsigned long long)bits);
        }
        if (memcmp(first, digest, digest_bytes) != 0) {
            check_descendants();
            fail(DRIVER_ERR_PLACEMENT, (int32_t)bits, "the digest of a %llu-bit message "
                 "depends on where it lies in memory: the library reads bytes outside the "
                 "message", (unsigned long long)bits);
        }
    }
    check_descendants();
    frame_put_u32(payload, (uint32_t)count);
    send_frame(FRAME_PROBE, payload, sizeof payload);
}

const driver_mode mode_probe = {"probe", check_probe, run_probe, MODE_NO_PROCESSES};
