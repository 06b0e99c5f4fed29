/* Reading and parsing the request (request.h). */
#include "request.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "honesty.h"

int parse_number(const char *text, uint64_t max, uint64_t *out)
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

size_t parse_bit_lengths(const char *text, uint64_t lengths[MAX_BIT_LENGTHS])
{
    size_t count = 0;

    while (text != NULL && *text != '\0' && count < MAX_BIT_LENGTHS) {
        char number[32];
        size_t n = strcspn(text, ",");
        if (n == 0 || n >= sizeof number)
            return 0;
        memcpy(number, text, n);
        number[n] = '\0';
        if (parse_number(number, MAX_LENGTH_BITS, &lengths[count]) != 0)
            return 0;
        count++;
        text += n + (text[n] == ',');
    }
    return text != NULL && *text != '\0' ? 0 : count;
}

int parse_request(int argc, char **argv, request *req, char *error, size_t size)
{
    int i;
    uint64_t number;

    memset(req, 0, sizeof *req);
    req->result_fd = -1;
    req->outside_fd = -1;
    req->cpu = -1;
    for (i = 2; i + 1 < argc; i++)  /* the channel first, to report the rest */
        if (strcmp(argv[i], "--result-fd") == 0 && parse_number(argv[i + 1], 1 << 20, &number) == 0)
            req->result_fd = (int)number;
    if (argc < 2) {
        snprintf(error, size, "no mode given");
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
            else if (strcmp(name, "--outside-fd") == 0)
                ok = parse_number(value, 1 << 20, &number) == 0 && number > 2
                     && (req->outside_fd = (int)number) > 2;
            else if (strcmp(name, "--honesty-calls") == 0)
                ok = parse_number(value, HONESTY_MAX_CALLS, &req->honesty_calls) == 0;
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

/* The request's words and their text, as read; wiped by request_forget_words. */
static char text[MAX_REQUEST_BYTES + 1];
static char *words[MAX_REQUEST_WORDS + 2];

int read_request(int argc, char **argv, char ***words_read, char *error, size_t size)
{
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
    *words_read = words;
    return count;
}

/* Zero `bytes` bytes at `area` in a way the compiler keeps (the bytes are not read
 * again, which would let it drop a plain memset). */
static void wipe(void *area, size_t bytes)
{
    volatile unsigned char *at = area;
    while (bytes-- > 0)
        *at++ = 0;
}

/* A copy of `value` on the heap (NULL stays NULL). */
static const char *kept(const char *value)
{
    char *copy;

    if (value == NULL)
        return NULL;
    if ((copy = strdup(value)) == NULL)
        abort();  /* a few hundred bytes: there is no run without them */
    return copy;
}

void request_forget_words(request *req, const char *mode_name)
{
    req->mode = mode_name;
    req->library = kept(req->library);
    req->kat_tag = kept(req->kat_tag);
    req->instance = kept(req->instance);
    req->lengths = kept(req->lengths);
    req->counter = kept(req->counter);
    req->cpu_features = NULL;  /* checked already */
    req->parent_pid = 0;
    wipe(text, sizeof text);
    wipe(words, sizeof words);
}

void scrub_stack(void)
{
    volatile unsigned char area[SCRUBBED_STACK_BYTES];
    size_t i;

    for (i = 0; i < sizeof area; i++)
        area[i] = 0;
}
