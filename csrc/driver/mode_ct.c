/* ct --lengths B1,B2,...: each bit length hashed under valgrind's memcheck, the message
 * undefined: CT_LENGTH... (the parent runs the driver under valgrind).
 *
 * Each length is hashed in a fork()ed child of its own: the message marked undefined,
 * its length defined, the digest and the status marked defined after the call, so
 * that memcheck reports each branch and address the message decides. A child starts
 * from the parent as it was before any call, so memcheck reports in each child what
 * that length reached; a client message "ngcc-ct length N" before each child marks
 * its reports in the XML output. The child hands its status and digest back through
 * shared memory (a fork()ed copy may not write on the channel); the parent sends one
 * CT_LENGTH frame per length, or a CRASH frame for a child that died of a signal, and
 * stops there. (ngcc/driver/ct_mode.py runs it; ngcc/measure/ct_measurement.py reads
 * it.) */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buffers.h"
#include "channel.h"
#include "frames.h"
#include "modes.h"
#include "steps.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#define HAVE_MEMCHECK 1
#endif
#endif

static int check_ct(const request *req, char *error, size_t size)
{
#if !defined(HAVE_MEMCHECK)
    (void)req;
    snprintf(error, size, "this ngcc-driver was built without valgrind/memcheck.h, so its "
             "ct mode cannot mark a message undefined: install valgrind (its headers) and "
             "rebuild ngcc");
    return -1;
#else
    uint64_t lengths[MAX_BIT_LENGTHS];

    if (parse_bit_lengths(req->lengths, lengths) > 0)
        return 0;
    snprintf(error, size, "ct needs --lengths: up to %d comma-separated bit lengths of at "
             "most %llu", MAX_BIT_LENGTHS, (unsigned long long)MAX_LENGTH_BITS);
    return -1;
#endif
}

#if defined(HAVE_MEMCHECK)
static void ct_child(const request *req, const instance_library *lib,
                     const unsigned char *source, uint64_t bits, unsigned char *shared)
{
    guarded_buffer message_buffer, digest_buffer;
    size_t bytes = (size_t)((bits + 7) / 8), digest_bytes = (size_t)req->digest_bits / 8;
    unsigned char *message, *digest;
    int32_t status;

    /* a fault kills the child at once (the handler's raise() of a fork()ed copy is
     * not its own under the seccomp filter); memcheck's report says where */
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    map_guarded(&message_buffer, bytes, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE, "message");
    message = guard_end_aligned(&message_buffer, bytes);
    if (bytes > 0)
        memcpy(message, source, bytes);
    digest = prepare_digest(req, &digest_buffer);
    (void)VALGRIND_MAKE_MEM_UNDEFINED(message, bytes);
    status = (int32_t)lib->hash(req->digest_bits, message, bits, digest);
    (void)VALGRIND_MAKE_MEM_DEFINED(&status, sizeof status);
    (void)VALGRIND_MAKE_MEM_DEFINED(digest, digest_bytes);
    frame_put_u32(shared + 1, (uint32_t)status);
    memcpy(shared + 5, digest, digest_bytes);
    shared[0] = 1;  /* the status and digest are there */
    _exit(0);
}

static void run_ct(const request *req)
{
    uint64_t lengths[MAX_BIT_LENGTHS], longest = 0;
    size_t count, i, digest_bytes = (size_t)req->digest_bits / 8;
    unsigned char *source, *shared, *payload;
    instance_library lib;

    count = parse_bit_lengths(req->lengths, lengths);  /* check_ct found them good */
    for (i = 0; i < count; i++)
        if (lengths[i] > longest)
            longest = lengths[i];
    source = malloc((size_t)(longest + 7) / 8 + 1);
    payload = malloc(12 + digest_bytes);
    shared = mmap(NULL, 5 + digest_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                  -1, 0);
    if (source == NULL || payload == NULL || shared == MAP_FAILED)
        fail(DRIVER_ERR_MEMORY, 0, "cannot allocate the ct buffers");
    read_stdin(source, (longest + 7) / 8);
    load(req, &lib);
    for (i = 0; i < count; i++) {
        int wait_status;
        pid_t child;

        memset(shared, 0, 5 + digest_bytes);
        VALGRIND_PRINTF("ngcc-ct length %llu\n", (unsigned long long)lengths[i]);
        child = fork();
        if (child == 0)
            ct_child(req, &lib, source, lengths[i], shared);
        if (child < 0 || waitpid(child, &wait_status, 0) != child)
            fail(DRIVER_ERR_SYSTEM, 0, "cannot run the child of %llu bits: %s",
                 (unsigned long long)lengths[i], strerror(errno));
        if (WIFSIGNALED(wait_status)) {  /* the library's crash, reported for the child */
            unsigned char crash[24], *at = crash;
            at = frame_put_u32(at, (uint32_t)WTERMSIG(wait_status));
            at = frame_put_u32(at, GUARD_NONE);
            at = frame_put_u32(at, ACCESS_UNKNOWN);
            frame_put_u64(frame_put_u32(at, 0), 0);  /* si_code 0: seen, not taken */
            send_frame(FRAME_CRASH, crash, sizeof crash);
            _exit(0);
        }
        if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0 || shared[0] != 1)
            fail(DRIVER_ERR_SYSTEM, 0, "the child of %llu bits ended before its hash (exit "
                 "status %d)", (unsigned long long)lengths[i],
                 WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
        memcpy(frame_put_u64(payload, lengths[i]), shared + 1, 4 + digest_bytes);
        send_frame(FRAME_CT_LENGTH, payload, 12 + digest_bytes);
    }
    check_descendants();
}
#else
static void run_ct(const request *req)
{
    (void)req;  /* check_ct refused the request */
}
#endif

const driver_mode mode_ct = {"ct", check_ct, run_ct, MODE_FORKS};
