/* ct --lengths B1,B2,...: each bit length hashed under valgrind's memcheck, the message
 * undefined: CT_LENGTH... (the parent runs the driver under valgrind).
 *
 * Each length is hashed in a fork()ed child of its own: the message marked undefined,
 * its length defined, the digest and the status marked defined after the call, so
 * that memcheck reports each branch and address the message decides. The parent never
 * loads the library: each child installs the process limit (sandbox.h), then loads
 * it (its constructors run there, under the limit, as in every other mode) and hashes
 * once, so the library starts no process in any mode, and each child starts from the
 * same state, so memcheck reports in each child what that length reached. Client
 * messages mark the reports in the XML output: "ngcc-ct load" before each child's load
 * (what loading reports belongs to no length), "ngcc-ct length N" after it. The child
 * hands its status and digest, or why the library did not load, back through shared
 * memory (a fork()ed copy may not write on the channel); the parent sends LOADED after
 * the first child loaded, one CT_LENGTH frame per length, or a CRASH frame for a child
 * that died of a signal, and stops there. (ngcc/driver/ct_mode.py runs it;
 * ngcc/measure/ct_measurement.py reads it.) */
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
#include "sandbox.h"
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
/* What a child leaves in the first byte of the shared page: the status (u32) and the
 * digest follow it, or the loader's error text. */
enum { CT_CHILD_HASHED = 1, CT_CHILD_UNLOADED = 2 };
#define CT_SHARED_BYTES(digest_bytes) (5 + (digest_bytes) + FRAME_MAX_TEXT)

static void ct_child(const request *req, const unsigned char *source, uint64_t bits,
                     unsigned char *shared)
{
    guarded_buffer message_buffer, digest_buffer;
    size_t bytes = (size_t)((bits + 7) / 8), digest_bytes = (size_t)req->digest_bits / 8;
    unsigned char *message, *digest;
    char error[FRAME_MAX_TEXT];
    instance_library lib;
    int32_t status;

    /* a fault kills the child at once (the handler's raise() of a fork()ed copy is
     * not its own under the seccomp filter); memcheck's report says where */
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    if (sandbox_forbid_processes(-1, error, sizeof error) != 0
        && !(req->emulated && errno == EINVAL)) {
        shared[0] = CT_CHILD_UNLOADED;
        memcpy(shared + 1, error, strlen(error) + 1);
        _exit(0);
    }
    if (library_open(&lib, req->library, error, sizeof error) != 0) {
        shared[0] = CT_CHILD_UNLOADED;
        memcpy(shared + 1, error, strlen(error) + 1);
        _exit(0);
    }
    VALGRIND_PRINTF("ngcc-ct length %llu\n", (unsigned long long)bits);
    map_guarded(&message_buffer, bytes, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE, "message");
    message = guard_end_aligned(&message_buffer, bytes);
    if (bytes > 0)
        memcpy(message, source, bytes);
    digest = prepare_digest(req, &digest_buffer);
    (void)VALGRIND_MAKE_MEM_UNDEFINED(message, bytes);
    status = (int32_t)lib.hash(req->digest_bits, message, bits, digest);
    (void)VALGRIND_MAKE_MEM_DEFINED(&status, sizeof status);
    (void)VALGRIND_MAKE_MEM_DEFINED(digest, digest_bytes);
    frame_put_u32(shared + 1, (uint32_t)status);
    memcpy(shared + 5, digest, digest_bytes);
    shared[0] = CT_CHILD_HASHED;
    _exit(0);
}

static void run_ct(const request *req)
{
    uint64_t lengths[MAX_BIT_LENGTHS], longest = 0;
    size_t count, i, digest_bytes = (size_t)req->digest_bits / 8;
    unsigned char *source, *shared, *payload;
    int loaded = 0;

    count = parse_bit_lengths(req->lengths, lengths);  /* check_ct found them good */
    for (i = 0; i < count; i++)
        if (lengths[i] > longest)
            longest = lengths[i];
    source = malloc((size_t)(longest + 7) / 8 + 1);
    payload = malloc(12 + digest_bytes);
    shared = mmap(NULL, CT_SHARED_BYTES(digest_bytes), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                  -1, 0);
    if (source == NULL || payload == NULL || shared == MAP_FAILED)
        fail(DRIVER_ERR_MEMORY, 0, "cannot allocate the ct buffers");
    read_stdin(source, (longest + 7) / 8);
    for (i = 0; i < count; i++) {
        int wait_status;
        pid_t child;

        memset(shared, 0, CT_SHARED_BYTES(digest_bytes));
        VALGRIND_PRINTF("ngcc-ct load\n");
        child = fork();
        if (child == 0)
            ct_child(req, source, lengths[i], shared);
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
        if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == SANDBOX_FORKED_STATUS)
            fail(DRIVER_ERR_FORKED, 0, "%s", sandbox_forked_text());
        if (shared[0] == CT_CHILD_UNLOADED) {
            shared[CT_SHARED_BYTES(digest_bytes) - 1] = 0;
            fail(DRIVER_ERR_LOAD, 0, "%s", (const char *)shared + 1);
        }
        if (!loaded++)
            send_frame(FRAME_LOADED, NULL, 0);  /* the first child loaded the library */
        if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0
            || shared[0] != CT_CHILD_HASHED)
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

const driver_mode mode_ct = {"ct", check_ct, run_ct, MODE_FORKS_ITSELF};
