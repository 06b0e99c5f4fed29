/* ngcc-jail: run one command (the C compiler on a submission's sources) in the
 * isolation of csrc/isolate/isolate.h, with a view of the caller's choosing.
 *
 * Usage:
 *   ngcc-jail [--read DIR]... [--write DIR] [--chdir DIR] [--address-space-limit BYTES]
 *             -- COMMAND [ARG]...
 *
 *   --read DIR     a folder bound read-only (the submission, the compiler's prefix
 *                  when it is not under /usr, ngcc's own headers); repeatable
 *   --write DIR    the one folder bound read-write (the build's work folder)
 *   --chdir DIR    the command's working directory inside (default: the caller's,
 *                  which exists in the view, empty unless it is one of the folders)
 *   --address-space-limit BYTES   RLIMIT_AS of the command (default: the inherited one)
 *
 * The view has /usr, /bin, /lib... read-only, a minimal /etc, /dev, a new /proc, a
 * scratch /tmp, empty read-only homes, no network (not even loopback) and no process
 * of the caller's (isolate.h). Every folder must be absolute and not "/". COMMAND is
 * looked up in the view's PATH unless it holds a slash (ngcc passes an absolute path).
 * The jail, and with it everything in the namespace, dies with its parent.
 *
 * Exit status: the command's own, or death by the same signal; otherwise
 *   122  the kernel refused the isolation (one line on stderr:
 *        "ngcc-jail: isolation unavailable: CALL: STRERROR (errno N)"); nothing ran
 *   125  a bad command line (one line on stderr naming it); nothing ran
 *   126  the command could not be executed inside the view (one line on stderr)
 *   127  the command does not exist inside the view (one line on stderr)
 * so a caller tells the jail's own refusals from the compiler's failures only by
 * 122 and the line; a compiler does not exit 122 (GCC: 0, 1, 4). */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* as setup.py builds it */
#endif
#include "isolate.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#define EXIT_USAGE 125
#define EXIT_CANNOT_EXECUTE 126
#define EXIT_NOT_FOUND 127

typedef struct {
    const char *read_only[ISOLATE_MAX_FOLDERS + 1];  /* NULL-ended */
    size_t read_count;
    const char *writable;
    const char *workdir;
    int limit_address_space;
    rlim_t address_space;
    char **command;
} jail_request;

static void usage_error(const char *what, const char *value)
{
    fprintf(stderr, "ngcc-jail: %s%s%s (usage: ngcc-jail [--read DIR]... [--write DIR] "
            "[--chdir DIR] [--address-space-limit BYTES] -- COMMAND [ARG]...)\n", what,
            value != NULL ? ": " : "", value != NULL ? value : "");
    exit(EXIT_USAGE);
}

static rlim_t parse_bytes(const char *text)
{
    char *end = NULL;
    unsigned long long value;

    errno = 0;
    value = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || value == 0)
        usage_error("--address-space-limit takes a positive number of bytes", text);
    return (rlim_t)value;
}

/* The options up to "--", then the command. */
static void parse(int argc, char **argv, jail_request *request)
{
    int i;

    memset(request, 0, sizeof *request);
    for (i = 1; i < argc; i++) {
        const char *option = argv[i];
        if (strcmp(option, "--") == 0)
            break;
        if (strcmp(option, "--read") != 0 && strcmp(option, "--write") != 0
            && strcmp(option, "--chdir") != 0 && strcmp(option, "--address-space-limit") != 0)
            usage_error("unknown option", option);
        if (i + 1 >= argc)
            usage_error("an option without its value", option);
        if (strcmp(option, "--read") == 0) {
            if (request->read_count >= ISOLATE_MAX_FOLDERS)
                usage_error("too many --read folders", argv[i + 1]);
            request->read_only[request->read_count++] = argv[++i];
        } else if (strcmp(option, "--write") == 0) {
            if (request->writable != NULL)
                usage_error("only one --write folder", argv[i + 1]);
            request->writable = argv[++i];
        } else if (strcmp(option, "--chdir") == 0) {
            request->workdir = argv[++i];
        } else {  /* --address-space-limit */
            request->limit_address_space = 1;
            request->address_space = parse_bytes(argv[++i]);
        }
    }
    if (i + 1 >= argc)
        usage_error("no command after --", NULL);
    request->command = argv + i + 1;
}

/* The worker: the limit, the working directory, then the command itself. */
static void run_command(const jail_request *request)
{
    if (request->limit_address_space) {
        struct rlimit limit = {request->address_space, request->address_space};
        struct rlimit current;
        if (getrlimit(RLIMIT_AS, &current) == 0 && current.rlim_max != RLIM_INFINITY
            && current.rlim_max < limit.rlim_max)
            limit.rlim_cur = limit.rlim_max = current.rlim_max;  /* never raise it */
        if (setrlimit(RLIMIT_AS, &limit) != 0) {
            fprintf(stderr, "ngcc-jail: cannot set the address-space limit: %s\n",
                    strerror(errno));
            _exit(EXIT_CANNOT_EXECUTE);
        }
    }
    if (request->workdir != NULL && chdir(request->workdir) != 0) {
        fprintf(stderr, "ngcc-jail: cannot enter %s inside the view: %s (give it with "
                "--read or --write)\n", request->workdir, strerror(errno));
        _exit(EXIT_CANNOT_EXECUTE);
    }
    execvp(request->command[0], request->command);
    fprintf(stderr, "ngcc-jail: cannot run %s inside the view: %s\n", request->command[0],
            strerror(errno));
    _exit(errno == ENOENT || errno == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE);
}

int main(int argc, char **argv)
{
    jail_request request;
    isolate_view view = {"ngcc-jail", NULL, NULL, NULL, NULL, -1};

    parse(argc, argv, &request);
    /* Die with the caller (ngcc killed, even by SIGKILL): init dies with this process
     * and the kernel then ends the whole namespace, the compiler and what it started. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
        fprintf(stderr, "ngcc-jail: isolation unavailable: prctl(PR_SET_PDEATHSIG): %s "
                "(errno %d)\n", strerror(errno), errno);
        return ISOLATE_EXIT_UNAVAILABLE;
    }
    view.read_only = request.read_only;
    view.writable = request.writable;
    isolate_enter_view(&view);  /* returns in the worker only */
    run_command(&request);
    return EXIT_CANNOT_EXECUTE;  /* not reached */
}
