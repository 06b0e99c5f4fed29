/* ngcc-driver: every call ngcc makes into a foreign CryptHash runs here, in a
 * process of its own that never imports Python.
 *
 *   ngcc-driver --request-fd FD
 *
 * The request comes over the pipe FD, never on the command line, so that a library
 * reading /proc/self/cmdline learns nothing of it (which mode, which parent): the
 * parent writes its words, each ended by a NUL byte, at most MAX_REQUEST_BYTES in
 * all, and closes its end; the driver reads it all and closes FD before anything
 * else happens. The words are
 *
 *   MODE --result-fd FD --parent-pid PID --library PATH --digest-bits N ...
 *
 *   hash   --bits N                  hash ceil(N/8) bytes read from stdin: DIGEST
 *   cold   --message-bytes N [--cpu C] [--message-stdin]
 *                                    one call of the freshly loaded library: COLD
 *   trial  --message-bytes N --calls N --warmup N --batch-calls N [--cpu C]
 *          [--message-stdin] [--memory-limit BYTES] [--counter auto|perf|tsc|clock]
 *                                    a timed trial: TRIAL, CYCLES, TRIAL_DIGEST
 *                                    (timer.h says what each counter is; default
 *                                    tsc)
 *   kat    --kat 2_12|2_23|2_33|Loop --instance NAME [--blank-digests]
 *                                    one KAT file, streamed: KAT_DATA..., KAT_DONE
 *   probe  --lengths B1,B2,...       each bit length at a page's start and end: PROBE
 *   ct     --lengths B1,B2,...       each bit length under memcheck, the message
 *                                    undefined: CT_LENGTH... (run under valgrind)
 *   leak   --message-bytes N --calls N --batch-calls N --seed S [--warmup N]
 *          [--time-limit-ms MS] [--cpu C] [--message-stdin | --control]
 *                                    fixed-vs-random timing (dudect):
 *                                    LEAK_BATCH..., LEAK_DONE; stops early once
 *                                    stdin ends (the parent has seen enough);
 *                                    --control: class 0 random too (an A/A test)
 *
 * Any mode takes --cpu-features F1,F2,... (the library's needs, by /proc/cpuinfo
 * names): a CPU without them is refused before the library is loaded;
 * --isolate: the run happens in new user, PID, network, IPC, mount and UTS
 * namespaces, in a read-only view of the system with no home, no network and one
 * scratch tmpfs at /tmp, without capabilities (isolate.h says how). Nothing is
 * written on the channel before it is in place; where the kernel refuses it the
 * driver exits with status 122 (ISOLATE_EXIT_UNAVAILABLE) and one stderr line
 * "ngcc-driver: isolation unavailable: CALL: ERROR (errno N)". Frames, exit statuses
 * and deaths by signal are those of a run without it: the process ngcc started
 * forwards them, and HELLO, TRIAL and LEAK_DONE name its pid;
 * --address-space-limit BYTES: the run's RLIMIT_AS (0: none). The address space is
 * capped at the smaller of --memory-limit (trial's option, kept as it was) and this
 * cap, which defaults to 4 GiB under --isolate and to none without it. In an
 * AddressSanitizer build, whose shadow memory alone is terabytes of address space,
 * the default is none and an explicit nonzero cap is refused like --memory-limit;
 * and
 * --emulated (the parent runs the driver behind NGCC_DRIVER_PREFIX, an emulator such
 * as qemu-user): the run goes on without the seccomp filter where the emulator
 * refuses it (EINVAL: qemu-user keeps seccomp to itself); any other failure ends it.
 *
 * Results go to the pipe FD as frames (frames.h); fd 1 is pointed at fd 2 before
 * the library is loaded, so a library that prints cannot reach the channel. Every
 * message lies in a guarded buffer (guard.h), so reading past it faults at once.
 * The process dies with its parent (PR_SET_PDEATHSIG) and reports any child process
 * the library leaves; before the library is loaded it installs a seccomp filter
 * (sandbox.h) so that the library can signal nothing outside its process group (with
 * --isolate, after the namespaces: the filter is the second wall). A mode is one
 * function and its frames.
 *
 * Exit statuses of the driver itself: 0 after END; 120 (EXIT_USAGE) no usable request
 * or result channel; 121 (EXIT_CHANNEL) the channel broke or the parent is gone; 122
 * (ISOLATE_EXIT_UNAVAILABLE) --isolate could not be set up. Any other status or
 * signal is the library's doing.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* fopencookie */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cpu_features.h"
#include "frames.h"
#include "guard.h"
#include "isolate.h"
#include "kat.h"
#include "loader.h"
#include "procinfo.h"
#include "sandbox.h"
#include "timer.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#define HAVE_MEMCHECK 1
#endif
#endif

#define EXIT_USAGE 120    /* no usable result channel: the message is on stderr */
#define EXIT_CHANNEL 121  /* the result channel broke (closed, or the parent is gone) */

#define MAX_MESSAGE_BYTES ((uint64_t)1 << 30)  /* ngcc.driver.timing.MAX_MESSAGE_BYTES */
#define MAX_CALLS ((uint64_t)1 << 26)          /* ngcc._core.MAX_CALLS */
#define MAX_DIGEST_BITS (1 << 20)              /* as Library.hash accepts */
#define MAX_PROBE_LENGTHS 4096
#define MAX_PROBE_BITS ((uint64_t)1 << 23)
#define MAX_FEATURES 64
#define PROGRESS_INTERVAL_NS 200000000u
#define MAX_LEAK_BATCH ((uint64_t)1 << 16)         /* calls of one LEAK_BATCH frame */
#define MAX_LEAK_STORE_BYTES ((uint64_t)64 << 20)  /* a batch's messages, drawn ahead */
#define LEAK_FIRST_BATCH 1024  /* batches double from here to --batch-calls: an early look */
#define ISOLATED_ADDRESS_SPACE ((uint64_t)4 << 30)  /* --isolate's default RLIMIT_AS */
#define MAX_REQUEST_BYTES 32768  /* ngcc.driver.process.MAX_REQUEST_BYTES */
#define MAX_REQUEST_WORDS 256

typedef struct {
    const char *mode;
    int result_fd;
    long parent_pid;
    const char *library;
    int digest_bits;
    uint64_t bits;               /* hash */
    uint64_t message_bytes;      /* cold, trial */
    int message_from_stdin;      /* cold, trial: else the harness's default message */
    uint64_t calls, warmup, batch_calls;
    int cpu;                     /* -1: not pinned */
    uint64_t memory_limit;       /* bytes of address space, 0: no limit */
    const char *kat_tag;         /* kat */
    const char *instance;        /* kat */
    int blank_digests;           /* kat */
    const char *lengths;         /* probe */
    const char *cpu_features;    /* comma-separated, or NULL */
    const char *counter;         /* trial: auto, perf, tsc, clock; NULL: tsc */
    uint64_t seed;               /* leak */
    uint64_t time_limit_ms;      /* leak: 0, no limit */
    int control;                 /* leak: class 0 gets random messages too */
    int emulated;                /* behind an emulator: no seccomp filter if it refuses */
    int isolate;                 /* namespaces and a read-only view (isolate.h) */
    uint64_t address_space;      /* --address-space-limit: bytes, 0: no limit */
    int address_space_given;     /* ... else the default: ISOLATED_ADDRESS_SPACE if isolated */
    long driver_pid;             /* this process as the parent knows it (HELLO, TRIAL, LEAK_DONE) */
} request;

static int channel = -1;
static pid_t self_pid;

/* ------------------------------------------------------------------ channel */

/* Send a frame, or end the process if the channel is gone. A copy of this process
 * made by a library's fork() leaves quietly instead: one writer per channel. */
static void send_frame(uint32_t type, const void *payload, size_t length)
{
    if (getpid() != self_pid)
        _exit(0);
    if (frame_write(channel, type, payload, length) != 0)
        _exit(EXIT_CHANNEL);
}

static void end(void)
{
    send_frame(FRAME_END, NULL, 0);
    _exit(0);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4), noreturn))
#endif
static void fail(int32_t code, int32_t value, const char *format, ...)
{
    char text[FRAME_MAX_TEXT + 1];
    va_list args;

    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    if (getpid() != self_pid)
        _exit(0);
    if (frame_error(channel, code, value, "%s", text) != 0)
        _exit(EXIT_CHANNEL);
    end();
    _exit(0);  /* not reached */
}

/* Child processes the library left behind are an error, since one pinned beside
 * the trial would compete for its CPU. The sandbox keeps them in the process group
 * (no setsid), which the parent kills; the driver itself may not signal them. */
static void check_descendants(void)
{
    unsigned children = reap_descendants();
    if (children > 0)
        fail(DRIVER_ERR_FORKED, (int32_t)children, "the library started %u child "
             "process%s inside CryptHash (killed by ngcc)", children, children == 1 ? "" : "es");
}

/* --------------------------------------------------------------- the request */

static int parse_number(const char *text, uint64_t max, uint64_t *out)
{
    unsigned long long value;
    char *end_of_number;

    if (text == NULL || *text < '0' || *text > '9')  /* no sign, no space */
        return -1;
    errno = 0;
    value = strtoull(text, &end_of_number, 10);
    if (errno != 0 || *end_of_number != '\0' || value > max)
        return -1;
    *out = value;
    return 0;
}

/* Fill req from argv; on a mistake write why into error and return -1 (req still
 * carries the result fd when it was given, so the mistake can be reported). */
static int parse_request(int argc, char **argv, request *req, char *error, size_t size)
{
    int i;
    uint64_t number;

    memset(req, 0, sizeof *req);
    req->result_fd = -1;
    req->cpu = -1;
    for (i = 2; i + 1 < argc; i++)  /* the channel first, to report the rest */
        if (strcmp(argv[i], "--result-fd") == 0 && parse_number(argv[i + 1], 1 << 20, &number) == 0)
            req->result_fd = (int)number;
    if (argc < 2) {
        snprintf(error, size, "no mode given (hash, cold, trial, kat, probe or leak)");
        return -1;
    }
    req->mode = argv[1];
    for (i = 2; i < argc; i++) {
        const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1, flag = 1;

        if (strcmp(name, "--message-stdin") == 0)
            req->message_from_stdin = 1;
        else if (strcmp(name, "--blank-digests") == 0)
            req->blank_digests = 1;
        else if (strcmp(name, "--control") == 0)
            req->control = 1;
        else if (strcmp(name, "--emulated") == 0)
            req->emulated = 1;
        else if (strcmp(name, "--isolate") == 0)
            req->isolate = 1;
        else {
            flag = 0;
            if (value == NULL) {
                snprintf(error, size, "%s needs a value", name);
                return -1;
            }
            if (strcmp(name, "--result-fd") == 0)
                ok = parse_number(value, 1 << 20, &number) == 0;
            else if (strcmp(name, "--parent-pid") == 0)
                ok = parse_number(value, 1u << 30, &number) == 0 && number > 0
                     && (req->parent_pid = (long)number) > 0;
            else if (strcmp(name, "--library") == 0)
                req->library = value;
            else if (strcmp(name, "--digest-bits") == 0)
                ok = parse_number(value, MAX_DIGEST_BITS, &number) == 0 && number > 0
                     && number % 8 == 0 && (req->digest_bits = (int)number) > 0;
            else if (strcmp(name, "--bits") == 0)
                ok = parse_number(value, 8 * MAX_MESSAGE_BYTES, &req->bits) == 0;
            else if (strcmp(name, "--message-bytes") == 0)
                ok = parse_number(value, MAX_MESSAGE_BYTES, &req->message_bytes) == 0;
            else if (strcmp(name, "--calls") == 0)
                ok = parse_number(value, MAX_CALLS, &req->calls) == 0 && req->calls > 0;
            else if (strcmp(name, "--warmup") == 0)
                ok = parse_number(value, MAX_CALLS, &req->warmup) == 0;
            else if (strcmp(name, "--batch-calls") == 0)
                ok = parse_number(value, MAX_CALLS, &req->batch_calls) == 0;
            else if (strcmp(name, "--cpu") == 0)
                ok = parse_number(value, 1 << 16, &number) == 0 && (req->cpu = (int)number) >= 0;
            else if (strcmp(name, "--memory-limit") == 0)
                ok = parse_number(value, UINT64_MAX, &req->memory_limit) == 0
                     && req->memory_limit > 0;
            else if (strcmp(name, "--address-space-limit") == 0)
                ok = parse_number(value, UINT64_MAX, &req->address_space) == 0
                     && (req->address_space_given = 1);
            else if (strcmp(name, "--kat") == 0)
                req->kat_tag = value;
            else if (strcmp(name, "--instance") == 0)
                req->instance = value;
            else if (strcmp(name, "--lengths") == 0)
                req->lengths = value;
            else if (strcmp(name, "--cpu-features") == 0)
                req->cpu_features = value;
            else if (strcmp(name, "--counter") == 0)
                req->counter = value;
            else if (strcmp(name, "--seed") == 0)
                ok = parse_number(value, UINT64_MAX, &req->seed) == 0;
            else if (strcmp(name, "--time-limit-ms") == 0)
                ok = parse_number(value, (uint64_t)1 << 40, &req->time_limit_ms) == 0;
            else {
                snprintf(error, size, "unknown option %s", name);
                return -1;
            }
        }
        if (!ok) {
            snprintf(error, size, "bad value for %s: \"%.100s\"", name, value);
            return -1;
        }
        i += !flag;  /* past the value (a flag has none) */
    }
    if (req->library == NULL || req->digest_bits == 0 || req->parent_pid == 0) {
        snprintf(error, size, "--library, --digest-bits and --parent-pid are required");
        return -1;
    }
    return 0;
}

/* The request's words, read from the pipe that `--request-fd FD` names (the whole
 * command line: nothing else is accepted), into words[1..]; words[0] is argv[0], as
 * parse_request expects. The pipe is closed before this returns, whatever happens.
 * Returns the count of words[] filled, or -1 with the reason in error. */
static int read_request(int argc, char **argv, char **words, char *error, size_t size)
{
    static char text[MAX_REQUEST_BYTES + 1];
    size_t length = 0, at;
    uint64_t fd;
    int count = 1;

    if (argc != 3 || strcmp(argv[1], "--request-fd") != 0
        || parse_number(argv[2], 1 << 20, &fd) != 0 || fd <= 2) {
        snprintf(error, size, "usage: ngcc-driver --request-fd FD (the request comes over "
                 "the pipe FD, not on the command line)");
        return -1;
    }
    for (;;) {
        ssize_t got = read((int)fd, text + length, sizeof text - length);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            close((int)fd);
            if (got < 0) {
                snprintf(error, size, "cannot read the request from fd %d: %s", (int)fd,
                         strerror(errno));
                return -1;
            }
            break;
        }
        length += (size_t)got;
        if (length == sizeof text) {
            close((int)fd);
            snprintf(error, size, "the request is longer than %d bytes", MAX_REQUEST_BYTES);
            return -1;
        }
    }
    if (length == 0 || text[length - 1] != '\0') {
        snprintf(error, size, "the request is empty or its last word lacks its NUL byte");
        return -1;
    }
    words[0] = argv[0];
    for (at = 0; at < length; at += strlen(text + at) + 1) {
        if (count > MAX_REQUEST_WORDS) {
            snprintf(error, size, "the request has more than %d words", MAX_REQUEST_WORDS);
            return -1;
        }
        words[count++] = text + at;
    }
    words[count] = NULL;
    return count;
}

/* Point fd 1 at fd 2, keep the channel out of exec'd programs, ignore SIGPIPE
 * (a closed channel is a write error); -1 if fd is not an open descriptor. */
static int open_channel(int fd)
{
    int flags;

    if (fd <= 2 || (flags = fcntl(fd, F_GETFD)) < 0)
        return -1;
    fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    fflush(stdout);
    dup2(2, 1);
    signal(SIGPIPE, SIG_IGN);
    channel = fd;
    return 0;
}

static void hello(long driver_pid)
{
    unsigned char payload[8];
    frame_put_u32(frame_put_u32(payload, FRAME_PROTOCOL_VERSION), (uint32_t)driver_pid);
    send_frame(FRAME_HELLO, payload, sizeof payload);
}

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

/* Read exactly `bytes` bytes of stdin. */
static void read_stdin_exactly(unsigned char *into, uint64_t bytes)
{
    uint64_t done = 0;

    while (done < bytes) {
        ssize_t got = read(0, into + done, bytes - done > (1u << 20) ? (1u << 20) : bytes - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            fail(DRIVER_ERR_REQUEST, 0, "stdin ended after %llu of the %llu message bytes",
                 (unsigned long long)done, (unsigned long long)bytes);
        done += (uint64_t)got;
    }
}

/* Read exactly `bytes` bytes of stdin, then leave /dev/null in its place. */
static void read_stdin(unsigned char *into, uint64_t bytes)
{
    int null_fd;

    read_stdin_exactly(into, bytes);
    if ((null_fd = open("/dev/null", O_RDONLY)) >= 0) {
        dup2(null_fd, 0);
        close(null_fd);
    }
}

/* ---------------------------------------------------------- shared pieces */

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

static void map_guarded(guarded_buffer *buffer, uint64_t bytes, uint32_t before, uint32_t past,
                        const char *what)
{
    if (guard_alloc(buffer, (size_t)bytes) != 0)
        fail(errno == ENOMEM ? DRIVER_ERR_MEMORY : DRIVER_ERR_SYSTEM, 0,
             "cannot map the %llu-byte %s buffer: %s", (unsigned long long)bytes, what,
             strerror(errno));
    guard_watch(buffer, before, past);
}

/* The message of a cold call or trial, ending at its buffer's guard page. */
static unsigned char *prepare_message(const request *req, guarded_buffer *buffer)
{
    unsigned char *message;
    uint64_t i;

    map_guarded(buffer, req->message_bytes, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE, "message");
    message = guard_end_aligned(buffer, (size_t)req->message_bytes);
    if (req->message_from_stdin) {
        read_stdin(message, req->message_bytes);
    } else {  /* the NGCC harness's message: byte i = (i*131 + n) mod 256 */
        for (i = 0; i < req->message_bytes; i++)
            message[i] = (unsigned char)((i * 131 + req->message_bytes) % 256);
    }
    return message;
}

static unsigned char *prepare_digest(const request *req, guarded_buffer *buffer)
{
    size_t bytes = (size_t)req->digest_bits / 8;
    map_guarded(buffer, bytes, GUARD_BEFORE_DIGEST, GUARD_PAST_DIGEST, "digest");
    return guard_end_aligned(buffer, bytes);
}

static void load(const request *req, instance_library *lib)
{
    char error[FRAME_MAX_TEXT];
    if (library_open(lib, req->library, error, sizeof error) != 0)
        fail(DRIVER_ERR_LOAD, 0, "%s", error);
    send_frame(FRAME_LOADED, NULL, 0);
}

static void pin(const request *req)
{
    char error[256];
    if (req->cpu >= 0 && pin_to_cpu(req->cpu, error, sizeof error) != 0)
        fail(DRIVER_ERR_CPU, req->cpu, "%s", error);
}

static uint32_t counter_id(const counter_source *source)
{
    if (source != NULL && source->kind == COUNTER_SOURCE_CLOCK)
        return COUNTER_ID_CLOCK;
    if (source != NULL && source->kind == COUNTER_SOURCE_PERF_RDPMC)
        return COUNTER_ID_PERF_RDPMC;
    if (source != NULL && source->kind == COUNTER_SOURCE_PERF_READ)
        return COUNTER_ID_PERF_READ;
#if defined(NGCC_COUNTER_X86_64)
    return COUNTER_ID_RDTSC;
#elif defined(NGCC_COUNTER_AARCH64)
    return COUNTER_ID_CNTVCT;
#else
    return COUNTER_ID_CLOCK;
#endif
}

/* ------------------------------------------------------------------- modes */

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
    end();
}


/* ct: each length of --lengths hashed in a fork()ed child of its own, under valgrind's
 * memcheck: the message marked undefined, its length defined, the digest and the
 * status marked defined after the call, so that memcheck reports each branch and
 * address the message decides. A child starts from the parent as it was before any
 * call, so memcheck reports in each child what that length reached; a client message
 * "ngcc-ct length N" before each child marks its reports in the XML output. The
 * child hands its status and digest back through shared memory (a fork()ed copy may
 * not write on the channel); the parent sends one CT_LENGTH frame per length, or a
 * CRASH frame for a child that died of a signal, and stops there.
 * (ngcc/driver/ct_mode.py runs it; ngcc/measure/ct_measurement.py reads it.) */
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
#endif

static void run_ct(const request *req)
{
#if defined(HAVE_MEMCHECK)
    uint64_t lengths[MAX_PROBE_LENGTHS], longest = 0;
    size_t count = 0, i, digest_bytes = (size_t)req->digest_bits / 8;
    const char *text = req->lengths;
    unsigned char *source, *shared, *payload;
    instance_library lib;

    while (text != NULL && *text != '\0' && count < MAX_PROBE_LENGTHS) {
        char number[32];
        size_t n = strcspn(text, ",");
        if (n == 0 || n >= sizeof number)
            break;
        memcpy(number, text, n);
        number[n] = '\0';
        if (parse_number(number, MAX_PROBE_BITS, &lengths[count]) != 0)
            break;
        if (lengths[count] > longest)
            longest = lengths[count];
        count++;
        text += n + (text[n] == ',');
    }
    if (count == 0 || (text != NULL && *text != '\0'))
        fail(DRIVER_ERR_REQUEST, 0, "ct needs --lengths: up to %d comma-separated bit "
             "lengths of at most %llu", MAX_PROBE_LENGTHS, (unsigned long long)MAX_PROBE_BITS);
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
    end();
#else
    fail(DRIVER_ERR_REQUEST, 0, "this ngcc-driver was built without valgrind/memcheck.h, so "
         "its ct mode cannot mark a message undefined: install valgrind (its headers) and "
         "rebuild ngcc");
#endif
}

static void run_cold(const request *req)
{
    guarded_buffer message_buffer, digest_buffer;
    unsigned char payload[16], *message, *digest;
    uint64_t ns0, ticks0, ticks, ns;
    instance_library lib;
    int status;

    pin(req);
    message = prepare_message(req, &message_buffer);
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
    end();
}

/* As many sub-batches (up to BENCH_SUB_BATCHES) as the batch holds milliseconds, by
 * the per-call loop's time per call. */
static size_t sub_batches(const bench_outcome *per_call, uint64_t calls, uint64_t batch_calls)
{
    double batch_ns = (double)per_call->total_ns / (double)calls * (double)batch_calls;
    double subs = batch_ns / BENCH_SUB_BATCH_NS;
    return subs >= BENCH_SUB_BATCHES ? BENCH_SUB_BATCHES : subs < 1 ? 1 : (size_t)subs;
}

static void run_trial(const request *req)
{
    guarded_buffer message_buffer, digest_buffer;
    unsigned char packed[FRAME_TRIAL_BYTES];
    bench_outcome per_call, batch;
    counter_reading mark;
    trial_facts facts;
    instance_library lib;
    bench_call call;
    counter_source counter;
    uint64_t *cycles;
    char text[FRAME_MAX_TEXT];
    size_t digest_bytes = (size_t)req->digest_bits / 8;
    unsigned char *loop_digest;  /* the per-call loop's last digest, then the batch's */

    memset(&facts, 0, sizeof facts);
    memset(&batch, 0, sizeof batch);
    pin(req);
    if (counter_open(req->counter, &counter, text, sizeof text) != 0)  /* after pinning */
        fail(DRIVER_ERR_COUNTER, 0, "--counter %s: %s", req->counter, text);
    call.counter = &counter;
    counter_mark(&counter, &mark);  /* the frequency is measured from here to after the loops */
    cycles = malloc((size_t)req->calls * sizeof *cycles);
    if (cycles == NULL)
        fail(DRIVER_ERR_MEMORY, 0, "cannot allocate the cycles of %llu calls",
             (unsigned long long)req->calls);
    memset(cycles, 0, (size_t)req->calls * sizeof *cycles);  /* no page faults in the loop */
    if ((loop_digest = malloc(2 * digest_bytes)) == NULL)
        fail(DRIVER_ERR_MEMORY, 0, "cannot allocate %zu bytes", 2 * digest_bytes);
    call.message = prepare_message(req, &message_buffer);
    call.digest = prepare_digest(req, &digest_buffer);
    load(req, &lib);
    facts.baseline_rss_kib = resident_kib();
    call.hash = lib.hash;
    call.digest_bits = req->digest_bits;
    call.msg_len_bits = 8 * (unsigned long long)req->message_bytes;

    counter_measure_overhead(&counter, &facts.overhead_min_ticks, &facts.overhead_median_ticks);
    facts.core_cycles_per_tick = counter_cycles_per_tick(&counter, facts.overhead_min_ticks);
    facts.counter_resolution = counter_resolution(&counter);
    facts.setup_cpu_ns = process_cpu_ns();
    if (bench_time_calls(&call, (size_t)req->warmup, (size_t)req->calls, cycles, &per_call) != 0) {
        check_descendants();
        bench_failure_text(text, sizeof text, req->library, &per_call, (size_t)req->calls,
                           (size_t)req->warmup, &call);
        fail(DRIVER_ERR_HASH, per_call.status, "%s", text);
    }
    memcpy(loop_digest, call.digest, digest_bytes);  /* the last timed call's output */
    memset(call.digest, 0, digest_bytes);  /* so the batch's digest is the batch's own */
    if (req->batch_calls > 0
        && bench_time_batch(&call, (size_t)req->batch_calls,
                            sub_batches(&per_call, req->calls, req->batch_calls), &batch) != 0) {
        check_descendants();
        snprintf(text, sizeof text, "CryptHash of %s returned %d at batch call %zu of %llu "
                 "(digest_bits=%d, msg_len_bits=%llu)", req->library, batch.status,
                 batch.failed_call, (unsigned long long)req->batch_calls, call.digest_bits,
                 call.msg_len_bits);
        fail(DRIVER_ERR_HASH, batch.status, "%s", text);
    }
    if (counter_frequency_since(&counter, &mark, COUNTER_FREQUENCY_INTERVAL_NS,
                                &facts.frequency_hz) != 0)
        fail(DRIVER_ERR_COUNTER, 0, "the %s counter did not advance while CLOCK_MONOTONIC_RAW "
             "did: it cannot time anything", source_name(&counter));
    facts.peak_rss_kib = peak_resident_kib();
    facts.cpu = req->cpu;
    facts.cpu_at_end = current_cpu();
    facts.still_pinned = req->cpu >= 0 ? (uint32_t)still_pinned(req->cpu) : 0;
    load_average(facts.load_average);
    check_descendants();

    facts.pid = (uint32_t)req->driver_pid;
    facts.counter_id = counter_id(&counter);
    facts.calls = (uint32_t)req->calls;
    facts.warmup = (uint32_t)req->warmup;
    facts.batch_calls = (uint32_t)req->batch_calls;
    facts.loop_ticks = per_call.total_ticks;
    facts.loop_ns = per_call.total_ns;
    facts.thread_cpu_ns = per_call.thread_cpu_ns;
    facts.voluntary_switches = per_call.voluntary_switches;
    facts.involuntary_switches = per_call.involuntary_switches;
    if (req->batch_calls > 0) {
        facts.batch_ticks = batch.total_ticks;
        facts.batch_ns = batch.total_ns;
        facts.batch_thread_cpu_ns = batch.thread_cpu_ns;
        facts.batch_involuntary_switches = batch.involuntary_switches;
        facts.batch_min_cpu_ns = batch.min_sub_cpu_ns;
        facts.batch_min_calls = batch.min_sub_calls;
    }
    frame_pack_trial(&facts, packed);
    send_frame(FRAME_TRIAL, packed, sizeof packed);
    send_frame(FRAME_CYCLES, cycles, (size_t)req->calls * sizeof *cycles);  /* host order: LE */
    memcpy(loop_digest + digest_bytes, req->batch_calls > 0 ? call.digest : loop_digest,
           digest_bytes);
    send_frame(FRAME_TRIAL_DIGEST, loop_digest, 2 * digest_bytes);
    end();
}

/* KAT: the file text leaves as KAT_DATA frames through a stdio stream. */
typedef struct {
    uint64_t bytes;
    uint64_t last_progress_ns;
} kat_sink;

static ssize_t sink_write(void *cookie, const char *data, size_t size)
{
    kat_sink *sink = cookie;
    size_t done = 0;

    while (done < size) {
        size_t chunk = size - done > FRAME_MAX_DATA ? FRAME_MAX_DATA : size - done;
        send_frame(FRAME_KAT_DATA, data + done, chunk);
        done += chunk;
    }
    sink->bytes += size;
    return (ssize_t)size;
}

static int sink_progress(void *cookie, uint64_t done, uint64_t total)
{
    kat_sink *sink = cookie;
    uint64_t now = clock_raw_ns();
    unsigned char payload[16];

    if (now - sink->last_progress_ns >= PROGRESS_INTERVAL_NS || done == total) {
        sink->last_progress_ns = now;
        frame_put_u64(frame_put_u64(payload, done), total);
        send_frame(FRAME_PROGRESS, payload, sizeof payload);
    }
    return 0;
}

/* kat_message_fn: one guarded buffer, grown when a longer message needs it. */
static unsigned char *kat_message(void *ctx, size_t bytes)
{
    guarded_buffer *buffer = ctx;

    if (buffer->map == NULL || bytes > buffer->data_bytes) {
        guard_free(buffer);
        if (guard_alloc(buffer, bytes) != 0)
            return NULL;
        guard_watch(buffer, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE);
    }
    return guard_end_aligned(buffer, bytes);
}

static int kat_kind(const char *tag, kat_file_kind *kind)
{
    static const kat_file_kind kinds[] = {KAT_FILE_2_12, KAT_FILE_2_23, KAT_FILE_2_33,
                                          KAT_FILE_LOOP};
    size_t i;
    for (i = 0; tag != NULL && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(tag, kat_file_tag(kinds[i])) == 0) {
            *kind = kinds[i];
            return 0;
        }
    return -1;
}

static void run_kat(const request *req)
{
    cookie_io_functions_t io = {NULL, sink_write, NULL, NULL};
    guarded_buffer message_buffer = {NULL, 0, NULL, 0}, digest_buffer;
    kat_sink sink = {0, 0};
    unsigned char payload[16];
    char error[FRAME_MAX_TEXT];
    kat_generator gen;
    kat_file_kind kind;
    instance_library lib;
    uint64_t ns0;
    FILE *file;
    int status;

    if (kat_kind(req->kat_tag, &kind) != 0 || req->instance == NULL)
        fail(DRIVER_ERR_REQUEST, 0, "kat needs --kat 2_12, 2_23, 2_33 or Loop and --instance");
    memset(&gen, 0, sizeof gen);
    gen.instance = req->instance;
    gen.digest_bits = req->digest_bits;
    gen.blank_digests = req->blank_digests;
    gen.progress = sink_progress;
    gen.progress_ctx = &sink;
    gen.message_buffer = kat_message;
    gen.message_ctx = &message_buffer;
    gen.digest_area = prepare_digest(req, &digest_buffer);
    load(req, &lib);
    gen.hash = lib.hash;
    file = fopencookie(&sink, "w", io);
    if (file == NULL)
        fail(DRIVER_ERR_SYSTEM, 0, "cannot open the KAT stream: %s", strerror(errno));
    setvbuf(file, NULL, _IOFBF, FRAME_MAX_DATA);
    ns0 = clock_raw_ns();
    status = kat_write_stream(&gen, kind, file, "the result channel", error, sizeof error);
    fclose(file);
    check_descendants();
    switch (status) {
    case KAT_OK: break;
    case KAT_ERR_HASH: fail(DRIVER_ERR_HASH, 0, "%s", error);
    case KAT_ERR_MEMORY: fail(DRIVER_ERR_MEMORY, 0, "%s", error);
    case KAT_ERR_NAME:
    case KAT_ERR_DIGEST_BITS: fail(DRIVER_ERR_KAT, status, "%s", error);
    default: fail(DRIVER_ERR_SYSTEM, status, "%s", error);
    }
    frame_put_u64(frame_put_u64(payload, sink.bytes), clock_raw_ns() - ns0);
    send_frame(FRAME_KAT_DONE, payload, sizeof payload);
    end();
}

/* Probe: each length hashed twice, at the start of a page after a guard page and
 * at the end of one before a guard page, the bytes around it different each time;
 * a library that reads outside the message faults or gets two digests. */
static void run_probe(const request *req)
{
    guarded_buffer at_start, at_end, digest_buffer;
    uint64_t lengths[MAX_PROBE_LENGTHS], longest = 0, i, byte;
    size_t count = 0, digest_bytes = (size_t)req->digest_bits / 8;
    unsigned char *digest, *first, payload[4];
    const char *text = req->lengths;
    instance_library lib;

    while (text != NULL && *text != '\0' && count < MAX_PROBE_LENGTHS) {
        char number[32];
        size_t n = strcspn(text, ",");
        if (n == 0 || n >= sizeof number)
            break;
        memcpy(number, text, n);
        number[n] = '\0';
        if (parse_number(number, MAX_PROBE_BITS, &lengths[count]) != 0)
            break;
        if (lengths[count] > longest)
            longest = lengths[count];
        count++;
        text += n + (text[n] == ',');
    }
    if (count == 0 || (text != NULL && *text != '\0'))
        fail(DRIVER_ERR_REQUEST, 0, "probe needs --lengths: up to %d comma-separated bit "
             "lengths of at most %llu", MAX_PROBE_LENGTHS, (unsigned long long)MAX_PROBE_BITS);
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
    end();
}

/* Leak: the measurements of the dudect fixed-vs-random test. Each timed call
 * hashes either the fixed message (class 0) or a fresh random one (class 1), the
 * class drawn at random per call. A batch's classes and messages are drawn before
 * its timed loop; before each call its message is copied into the one guarded
 * message buffer, untimed and alike for both classes, so that the cache holds
 * the message the same way whichever class the call is. Only CryptHash lies
 * between the two counter readings. */

/* splitmix64: a fast generator of 64-bit words. It need not be unpredictable,
 * only independent of the timing; the seed comes from the parent, which records it. */
static uint64_t leak_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

typedef struct {
    const request *req;
    bench_call call;
    unsigned char *message;       /* in the guarded buffer: what CryptHash reads */
    const unsigned char *fixed;   /* class 0's message */
    unsigned char *store;         /* the batch's messages, batch_calls x message_bytes */
    unsigned char *classes;       /* the batch's classes */
    uint64_t *cycles;             /* the batch's ticks */
    uint64_t rng;
} leak_run;

/* Draw the classes and messages of the next `calls` calls (under --control, class 0
 * is drawn like class 1: the two classes differ by their label only). */
static void leak_draw(leak_run *run, size_t calls)
{
    size_t bytes = (size_t)run->req->message_bytes, i, at;
    uint64_t bits = 0, word;

    for (i = 0; i < calls; i++) {
        unsigned char *row = run->store + i * bytes;
        if (i % 64 == 0)
            bits = leak_random(&run->rng);
        run->classes[i] = (unsigned char)(bits & 1);
        bits >>= 1;
        if (run->classes[i] == 0 && !run->req->control) {
            memcpy(row, run->fixed, bytes);
            continue;
        }
        for (at = 0; at < bytes; at += sizeof word) {
            word = leak_random(&run->rng);
            memcpy(row + at, &word, bytes - at < sizeof word ? bytes - at : sizeof word);
        }
    }
}

/* Time the `calls` drawn calls, the ticks of call i into cycles[i]; returns how many
 * were made: fewer when the clock passed deadline_ns (read between calls, untimed). */
static size_t leak_time(leak_run *run, size_t calls, uint64_t deadline_ns)
{
    size_t bytes = (size_t)run->req->message_bytes, i;
    const bench_call *call = &run->call;

    for (i = 0; i < calls; i++) {
        uint64_t start, stop;
        int status;

        memcpy(run->message, run->store + i * bytes, bytes);
        start = counter_start();
        status = call->hash(call->digest_bits, call->message, call->msg_len_bits, call->digest);
        stop = counter_stop();
        if (status != 0) {
            check_descendants();
            fail(DRIVER_ERR_HASH, status, "CryptHash of %s returned %d on a %s message "
                 "(digest_bits=%d, msg_len_bits=%llu)", run->req->library, status,
                 run->classes[i] ? "random" : "fixed", call->digest_bits, call->msg_len_bits);
        }
        run->cycles[i] = stop - start;
        if (i % 16 == 15 && clock_raw_ns() >= deadline_ns)
            return i + 1;
    }
    return calls;
}

/* True once stdin has data or has ended: the parent asks the run to stop. */
static int parent_says_stop(void)
{
    struct pollfd input = {0, POLLIN, 0};
    return poll(&input, 1, 0) > 0;
}

static void *leak_alloc(size_t bytes, const char *what)
{
    void *memory = malloc(bytes);
    if (memory == NULL)
        fail(DRIVER_ERR_MEMORY, 0, "cannot allocate the %zu bytes of %s", bytes, what);
    memset(memory, 0, bytes);  /* no page faults in the timed loop */
    return memory;
}

static void usage_of(struct rusage *usage)
{
    if (getrusage(RUSAGE_SELF, usage) != 0)
        memset(usage, 0, sizeof *usage);
}

static void run_leak(const request *req)
{
    guarded_buffer message_buffer, digest_buffer;
    size_t bytes = (size_t)req->message_bytes, batch = (size_t)req->batch_calls;
    size_t next_batch = batch < LEAK_FIRST_BATCH ? batch : LEAK_FIRST_BATCH;
    uint64_t deadline_ns, first_ns = 0, last_ns = 0, warmup_done = 0;
    unsigned char packed[FRAME_LEAK_DONE_BYTES], *frame, *fixed;
    struct rusage usage0, usage1;
    counter_reading mark;
    instance_library lib;
    leak_facts facts;
    leak_run run;

    if (bytes == 0 || batch == 0 || batch > MAX_LEAK_BATCH
        || req->message_bytes * req->batch_calls > MAX_LEAK_STORE_BYTES)
        fail(DRIVER_ERR_REQUEST, 0, "leak needs --message-bytes > 0 and --batch-calls from 1 "
             "to %llu, with message bytes x batch calls <= %llu",
             (unsigned long long)MAX_LEAK_BATCH, (unsigned long long)MAX_LEAK_STORE_BYTES);
    memset(&facts, 0, sizeof facts);
    memset(&run, 0, sizeof run);
    pin(req);
    counter_mark(NULL, &mark);
    fixed = leak_alloc(bytes, "the fixed message");  /* all zero unless given */
    if (req->message_from_stdin)
        read_stdin_exactly(fixed, bytes);  /* stdin stays: its end says stop */
    run.req = req;
    run.fixed = fixed;
    run.rng = ~req->seed;  /* the warm-up's own stream: the seed alone fixes the timed calls */
    run.store = leak_alloc(batch * bytes, "a batch's messages");
    run.classes = leak_alloc(batch, "a batch's classes");
    run.cycles = leak_alloc(batch * sizeof *run.cycles, "a batch's ticks");
    frame = leak_alloc(batch * (sizeof *run.cycles + 1), "a LEAK_BATCH frame");
    map_guarded(&message_buffer, bytes, GUARD_BEFORE_MESSAGE, GUARD_PAST_MESSAGE, "message");
    run.message = guard_end_aligned(&message_buffer, bytes);  /* filled before each call */
    run.call.message = run.message;
    run.call.digest = prepare_digest(req, &digest_buffer);
    run.call.digest_bits = req->digest_bits;
    run.call.msg_len_bits = 8 * (unsigned long long)bytes;
    load(req, &lib);
    run.call.hash = lib.hash;
    counter_measure_overhead(NULL, &facts.overhead_min_ticks, &facts.overhead_median_ticks);

    deadline_ns = req->time_limit_ms > 0 ? clock_raw_ns() + req->time_limit_ms * 1000000u
                                         : UINT64_MAX;
    while (warmup_done < req->warmup && clock_raw_ns() < deadline_ns) {
        size_t calls = req->warmup - warmup_done < batch ? (size_t)(req->warmup - warmup_done)
                                                         : batch;
        leak_draw(&run, calls);
        warmup_done += leak_time(&run, calls, deadline_ns);
    }
    run.rng = req->seed;
    usage_of(&usage0);
    facts.stop_reason = LEAK_STOP_CALLS;
    while (facts.calls < req->calls) {
        size_t calls = req->calls - facts.calls < next_batch
                       ? (size_t)(req->calls - facts.calls) : next_batch, made, i;
        if (clock_raw_ns() >= deadline_ns) {
            facts.stop_reason = LEAK_STOP_TIME;
            break;
        }
        leak_draw(&run, calls);
        if (first_ns == 0)
            first_ns = clock_raw_ns();
        made = leak_time(&run, calls, deadline_ns);
        last_ns = clock_raw_ns();
        for (i = 0; i < made; i++)
            facts.class1_calls += run.classes[i];
        facts.calls += made;
        memcpy(frame, run.cycles, made * sizeof *run.cycles);  /* host order: LE */
        memcpy(frame + made * sizeof *run.cycles, run.classes, made);
        send_frame(FRAME_LEAK_BATCH, frame, made * (sizeof *run.cycles + 1));
        next_batch = 2 * next_batch < batch ? 2 * next_batch : batch;
        if (parent_says_stop()) {
            facts.stop_reason = LEAK_STOP_PARENT;
            break;
        }
    }
    if (facts.stop_reason == LEAK_STOP_CALLS && facts.calls < req->calls)
        facts.stop_reason = LEAK_STOP_TIME;
    usage_of(&usage1);
    check_descendants();
    if (counter_frequency_since(NULL, &mark, COUNTER_FREQUENCY_INTERVAL_NS,
                                &facts.frequency_hz) != 0)
        fail(DRIVER_ERR_COUNTER, 0, "the %s counter did not advance while CLOCK_MONOTONIC_RAW "
             "did: it cannot time anything", counter_name());
    facts.pid = (uint32_t)req->driver_pid;
    facts.cpu = req->cpu;
    facts.cpu_at_end = current_cpu();
    facts.still_pinned = req->cpu >= 0 ? (uint32_t)still_pinned(req->cpu) : 0;
    facts.counter_id = counter_id(NULL);
    facts.class0_calls = facts.calls - facts.class1_calls;
    facts.warmup = warmup_done;
    facts.seed = req->seed;
    facts.message_bytes = req->message_bytes;
    facts.batch_calls = req->batch_calls;
    facts.loop_ns = last_ns - first_ns;
    facts.voluntary_switches = (uint64_t)(usage1.ru_nvcsw - usage0.ru_nvcsw);
    facts.involuntary_switches = (uint64_t)(usage1.ru_nivcsw - usage0.ru_nivcsw);
    facts.peak_rss_kib = peak_resident_kib();
    frame_pack_leak(&facts, packed);
    send_frame(FRAME_LEAK_DONE, packed, sizeof packed);
    end();
}

/* -------------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    static char *words[MAX_REQUEST_WORDS + 2];
    request req;
    char error[512];
    const char *limit_option;
    uint64_t address_space;
    int count = read_request(argc, argv, words, error, sizeof error), parsed;

    if (count < 0) {
        fprintf(stderr, "ngcc-driver: %s\n", error);
        return EXIT_USAGE;
    }
    parsed = parse_request(count, words, &req, error, sizeof error);

    self_pid = getpid();
    req.driver_pid = (long)self_pid;
    if (open_channel(req.result_fd) != 0) {
        fprintf(stderr, "ngcc-driver: %s\n", parsed == 0 ? "--result-fd is not an open "
                "descriptor above 2" : error);
        return EXIT_USAGE;
    }
    if (parsed == 0 && bind_to_parent(req.parent_pid) != 0)
        return EXIT_CHANNEL;  /* the parent is already gone: nobody to report to */
    if (parsed == 0 && req.isolate) {
        isolate_enter(req.library, channel);  /* returns in the worker, or exits */
        self_pid = getpid();  /* the worker's own: a fork()ed copy still tells itself apart */
    }
    hello(req.driver_pid);
    if (parsed != 0)
        fail(DRIVER_ERR_REQUEST, 0, "%s", error);
    if (guard_install_handler(channel) != 0)
        fail(DRIVER_ERR_SYSTEM, 0, "cannot install the fault handler: %s", strerror(errno));
    if ((address_space = address_space_of(&req, &limit_option)) > 0)
        limit_memory(address_space, limit_option);
    check_cpu_features(req.cpu_features);
    if (sandbox_install(self_pid, getpgid(0), error, sizeof error) != 0
        && !(req.emulated && errno == EINVAL))
        fail(DRIVER_ERR_SYSTEM, 0, "%s", error);
    if (strcmp(req.mode, "hash") == 0)
        run_hash(&req);
    else if (strcmp(req.mode, "cold") == 0)
        run_cold(&req);
    else if (strcmp(req.mode, "trial") == 0 && req.calls > 0)
        run_trial(&req);
    else if (strcmp(req.mode, "kat") == 0)
        run_kat(&req);
    else if (strcmp(req.mode, "probe") == 0)
        run_probe(&req);
    else if (strcmp(req.mode, "leak") == 0 && req.calls > 0)
        run_leak(&req);
    else if (strcmp(req.mode, "ct") == 0)
        run_ct(&req);
    fail(DRIVER_ERR_REQUEST, 0, "unknown mode \"%.40s\" (or trial or leak without --calls)",
         req.mode);
}
