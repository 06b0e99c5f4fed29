/* The request of one ngcc-driver run: what the parent asks for, read from a pipe
 * and checked before anything else happens.
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
 * then the mode's own options (modes.h lists the modes, each mode_NAME.c its
 * options) and these, which any mode takes:
 *
 *   --cpu-features F1,F2,...   the library's needs, by /proc/cpuinfo names: a CPU
 *                              without them is refused before the library is loaded
 *   --isolate                  the run happens in new namespaces (isolate.h)
 *   --address-space-limit B    the run's RLIMIT_AS (0: none; driver.c says the default)
 *   --emulated                 the parent runs the driver behind NGCC_DRIVER_PREFIX
 *                              (qemu-user): no seccomp filter where it refuses one
 */
#ifndef NGCC_REQUEST_H
#define NGCC_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#define MAX_REQUEST_BYTES 32768  /* ngcc.driver.process.MAX_REQUEST_BYTES */
#define MAX_REQUEST_WORDS 256

#define MAX_MESSAGE_BYTES ((uint64_t)1 << 30)  /* ngcc.driver.timing.MAX_MESSAGE_BYTES */
#define MAX_CALLS ((uint64_t)1 << 26)          /* ngcc._core.MAX_CALLS */
#define MAX_DIGEST_BITS (1 << 20)              /* as Library.hash accepts */

typedef struct {
    const char *mode;
    int result_fd;
    long parent_pid;
    const char *library;
    int digest_bits;
    uint64_t bits;               /* hash */
    uint64_t message_bytes;      /* cold, trial, leak */
    int message_from_stdin;      /* cold, trial, leak: else the harness's default message */
    uint64_t calls, warmup, batch_calls;
    uint64_t honesty_calls;      /* trial, hash: the honesty batch's calls (honesty.h) */
    int outside_fd;              /* trial, leak: the parent's go-ahead at each mark, or -1 */
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

/* A decimal number without sign or space, at most max, into out: 0, or -1. */
int parse_number(const char *text, uint64_t max, uint64_t *out);

/* --lengths (probe, ct): the comma-separated bit lengths of `text` into lengths[]:
 * how many, or 0 when the list is empty, too long or holds anything but lengths up
 * to MAX_LENGTH_BITS. */
#define MAX_BIT_LENGTHS 4096
#define MAX_LENGTH_BITS ((uint64_t)1 << 23)
size_t parse_bit_lengths(const char *text, uint64_t lengths[MAX_BIT_LENGTHS]);

/* The request's words, read from the pipe that `--request-fd FD` names (the whole
 * command line: nothing else is accepted), into a static array (*words) from
 * (*words)[1]; (*words)[0] is argv[0], as parse_request expects. The pipe is closed
 * before this returns, whatever happens. Returns the count of words filled, or -1
 * with the reason in error. */
int read_request(int argc, char **argv, char ***words, char *error, size_t size);

/* Fill req from the words; on a mistake write why into error and return -1 (req
 * still carries the result fd when it was given, so the mistake can be reported). */
int parse_request(int argc, char **argv, request *req, char *error, size_t size);

/* Once the mode is known (`mode_name`: the mode table's own string) and before the
 * library is loaded: keep heap copies of the string values the run still needs, and
 * wipe the request's words, their text and the parent's pid, so that a library
 * finds no trace of its request in the process's writable memory: not its mode, its
 * calls, its warm-up, nor who asked (issue 45). The numbers stay, parsed, in req. */
void request_forget_words(request *req, const char *mode_name);

/* Zero SCRUBBED_STACK_BYTES of the stack below the caller's frame, where the
 * request's reading, parsing and the isolation's setup left their locals. */
#define SCRUBBED_STACK_BYTES 65536
void scrub_stack(void);

#endif
