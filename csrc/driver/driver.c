/* ngcc-driver: every call ngcc makes into a foreign CryptHash runs here, in a
 * process of its own that never imports Python.
 *
 *   ngcc-driver --request-fd FD
 *
 * The request (request.h) names a mode (modes.h: hash, cold, trial, kat, probe,
 * leak, ct; each one file, mode_NAME.c) and its options. This file sets up the process
 * every mode runs in, in this order, then runs the mode:
 *
 * - the request read from FD, which is closed; the result channel opened (channel.h)
 *   and the process bound to its parent (it dies with it, PR_SET_PDEATHSIG, and
 *   reaps what the library leaves);
 * - --isolate: new user, PID, network, IPC, mount and UTS namespaces, a read-only
 *   view of the system with no home, no network and one scratch tmpfs at /tmp,
 *   without capabilities (isolate.h says how). Nothing is written on the channel
 *   before it is in place; where the kernel refuses it the driver exits with status
 *   122 (ISOLATE_EXIT_UNAVAILABLE) and one stderr line "ngcc-driver: isolation
 *   unavailable: CALL: ERROR (errno N)". Frames, exit statuses and deaths by signal
 *   are those of a run without it: the process ngcc started forwards them, and
 *   HELLO, TRIAL and LEAK_DONE name its pid;
 * - HELLO, then the request's mistakes as an ERROR;
 * - the fault handler of the guard pages (guard.h): every message lies in a guarded
 *   buffer (buffers.h), so reading past it faults at once and is named;
 * - the address space (RLIMIT_AS): the smaller of --memory-limit (trial's option,
 *   kept as it was) and --address-space-limit BYTES (0: none), which defaults to
 *   4 GiB under --isolate and to none without it. In an AddressSanitizer build,
 *   whose shadow memory alone is terabytes of address space, the default is none and
 *   an explicit nonzero cap is refused like --memory-limit;
 * - --cpu-features: a CPU without them is refused;
 * - the mode's check of the request;
 * - the seccomp filter (sandbox.h), so that the library can signal nothing outside
 *   its process group (with --isolate, after the namespaces: the second wall), and,
 *   the second filter that lets it start no process (the process limit: a fork storm
 *   ends at its first fork, with one ERROR, reason forked), in every mode but ct,
 *   which forks children of its own and installs it in each (modes.h: may_fork). With
 *   --emulated (the parent runs the driver behind NGCC_DRIVER_PREFIX, an emulator
 *   such as qemu-user) the run goes on without it where the emulator refuses it
 *   (EINVAL: qemu-user keeps seccomp to itself); any other failure ends it;
 * - the request's words and the parent's pid wiped (request.h), so the library
 *   cannot read them; the mode's run, and END.
 *
 * Results go to the pipe FD as frames (frames.h); fd 1 is pointed at fd 2 before
 * the library is loaded, so a library that prints cannot reach the channel.
 *
 * Exit statuses of the driver itself: 0 after END; 120 (EXIT_USAGE) no usable request
 * or result channel; 121 (EXIT_CHANNEL) the channel broke or the parent is gone; 122
 * (ISOLATE_EXIT_UNAVAILABLE) --isolate could not be set up. Any other status or
 * signal is the library's doing.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "channel.h"
#include "cpu_features.h"
#include "frames.h"
#include "guard.h"
#include "isolate.h"
#include "modes.h"
#include "procinfo.h"
#include "request.h"
#include "sandbox.h"

#define MAX_FEATURES 64
#define ISOLATED_ADDRESS_SPACE ((uint64_t)4 << 30)  /* --isolate's default RLIMIT_AS */

/* The modes by name (modes.h says how to add one). */
#define DRIVER_MODE_ROW(name) &mode_##name,
static const driver_mode *const modes[] = {DRIVER_MODES(DRIVER_MODE_ROW)};
#undef DRIVER_MODE_ROW

/* The address space of the run (RLIMIT_AS), 0 for none, and the option that set it:
 * the smaller of --memory-limit and the cap. The cap is --address-space-limit if
 * given (0: none); else ISOLATED_ADDRESS_SPACE under --isolate, none without, and
 * none in an AddressSanitizer build (its shadow memory alone is terabytes of it). */
static uint64_t address_space_of(const request *req, const char **option)
{
    uint64_t cap = req->address_space;

#if !defined(__SANITIZE_ADDRESS__)
    if (!req->address_space_given && req->isolate)
        cap = ISOLATED_ADDRESS_SPACE;
#endif
    *option = "--memory-limit";
    if (cap > 0 && (req->memory_limit == 0 || cap < req->memory_limit)) {
        *option = req->address_space_given ? "--address-space-limit" : "--isolate";
        return cap;
    }
    return req->memory_limit;
}

static void limit_memory(uint64_t bytes, const char *option)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)bytes;
    fail(DRIVER_ERR_REQUEST, 0, "%s cannot be enforced in an AddressSanitizer "
         "build (its shadow memory alone exceeds any limit)", option);
#else
    struct rlimit limit;
    (void)option;
    /* Only ever lower it: a smaller limit inherited from the parent stays (raising
     * the hard limit would fail, and the parent's cap is the evaluator's choice). */
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_max != RLIM_INFINITY
        && (uint64_t)limit.rlim_max < bytes)
        bytes = (uint64_t)limit.rlim_max;
    limit.rlim_cur = limit.rlim_max = (rlim_t)bytes;
    if (setrlimit(RLIMIT_AS, &limit) != 0)
        fail(DRIVER_ERR_SYSTEM, 0, "cannot set the memory limit of %llu bytes: %s",
             (unsigned long long)bytes, strerror(errno));
#endif
}

/* Refuse a library built for instruction-set extensions this CPU lacks: it would
 * die of SIGILL somewhere inside CryptHash. */
static void check_cpu_features(const char *list)
{
    char names[1024], missing[1024], *name, *rest;
    const char *wanted[MAX_FEATURES];
    size_t count = 0;

    if (list == NULL || *list == '\0')
        return;
    if (strlen(list) >= sizeof names)
        fail(DRIVER_ERR_REQUEST, 0, "--cpu-features is longer than %zu bytes", sizeof names - 1);
    strcpy(names, list);
    for (name = strtok_r(names, ",", &rest); name != NULL && count < MAX_FEATURES;
         name = strtok_r(NULL, ",", &rest))
        wanted[count++] = name;
    if (ngcc_cpu_missing(wanted, count, missing, sizeof missing) > 0)
        fail(DRIVER_ERR_FEATURE, 0, "the library needs CPU features this CPU lacks: %s "
             "(it would die of SIGILL)", missing);
}

static const driver_mode *mode_named(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i]->name, name) == 0)
            return modes[i];
    return NULL;
}

/* The mode the request names, its request checked; else an ERROR. */
static const driver_mode *checked_mode(const request *req)
{
    const driver_mode *mode = mode_named(req->mode);
    char error[FRAME_MAX_TEXT];

    if (mode == NULL)
        fail(DRIVER_ERR_REQUEST, 0, "unknown mode \"%.40s\"", req->mode);
    if (mode->check != NULL && mode->check(req, error, sizeof error) != 0)
        fail(DRIVER_ERR_REQUEST, 0, "%s", error);
    return mode;
}

int main(int argc, char **argv)
{
    const driver_mode *mode;
    char **words;
    request req;
    char error[512];
    const char *limit_option;
    uint64_t address_space;
    int count = read_request(argc, argv, &words, error, sizeof error), parsed;

    if (count < 0) {
        fprintf(stderr, "ngcc-driver: %s\n", error);
        return EXIT_USAGE;
    }
    parsed = parse_request(count, words, &req, error, sizeof error);

    channel_set_writer(getpid());
    req.driver_pid = (long)getpid();
    if (channel_open(req.result_fd) != 0) {
        fprintf(stderr, "ngcc-driver: %s\n", parsed == 0 ? "--result-fd is not an open "
                "descriptor above 2" : error);
        return EXIT_USAGE;
    }
    if (parsed == 0 && bind_to_parent(req.parent_pid) != 0)
        return EXIT_CHANNEL;  /* the parent is already gone: nobody to report to */
    if (parsed == 0 && req.isolate) {
        isolate_enter(req.library, channel_fd());  /* returns in the worker, or exits */
        channel_set_writer(getpid());  /* the worker's own: a fork()ed copy still tells itself apart */
    }
    channel_hello(req.driver_pid);
    if (parsed != 0)
        fail(DRIVER_ERR_REQUEST, 0, "%s", error);
    if (guard_install_handler(channel_fd()) != 0)
        fail(DRIVER_ERR_SYSTEM, 0, "cannot install the fault handler: %s", strerror(errno));
    if ((address_space = address_space_of(&req, &limit_option)) > 0)
        limit_memory(address_space, limit_option);
    check_cpu_features(req.cpu_features);
    mode = checked_mode(&req);
    if (sandbox_install(getpid(), getpgid(0), error, sizeof error) != 0
        && !(req.emulated && errno == EINVAL))
        fail(DRIVER_ERR_SYSTEM, 0, "%s", error);
    if (!mode->may_fork && sandbox_forbid_processes(channel_fd(), error, sizeof error) != 0
        && !(req.emulated && errno == EINVAL))
        fail(DRIVER_ERR_SYSTEM, 0, "%s", error);
    request_forget_words(&req, mode->name);
    scrub_stack();
    mode->run(&req);
    end();
}
