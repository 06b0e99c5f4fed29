/* Guard pages and the fault handler (guard.h). Linux / POSIX. */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* REG_ERR in <ucontext.h>, MAP_ANONYMOUS */
#endif
#include "guard.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "frames.h"

#define ALT_STACK_BYTES (64 * 1024)

/* The handler's view of the watched guards: written before the library runs
 * (never while a fault can be handled), read by the handler. */
typedef struct {
    uintptr_t low_start, low_end;    /* the guard before the data */
    uintptr_t high_start, high_end;  /* the guard after it */
    uint32_t before, past;
    const guarded_buffer *owner;
} watched_guard;

static watched_guard watched[GUARD_MAX_WATCHED];
static volatile sig_atomic_t result_channel = -1;
static pid_t channel_owner;  /* a fork()ed copy of the driver does not report */

static size_t page_bytes(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)page : 4096;
}

/* The width of each guard: GUARD_REGION_BYTES in whole pages. */
static size_t guard_bytes(void)
{
    size_t page = page_bytes();
    return (GUARD_REGION_BYTES + page - 1) / page * page;
}

int guard_alloc(guarded_buffer *buffer, size_t bytes)
{
    size_t page = page_bytes(), guard = guard_bytes();
    size_t pages = bytes / page + (bytes % page != 0) + (bytes == 0);
    void *map;

    buffer->map = NULL;
    if (pages > (SIZE_MAX - 2 * guard) / page) {
        errno = ENOMEM;
        return -1;
    }
    buffer->data_bytes = pages * page;
    buffer->map_bytes = buffer->data_bytes + 2 * guard;
    map = mmap(NULL, buffer->map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
               -1, 0);
    if (map == MAP_FAILED)
        return -1;
    buffer->map = map;
    buffer->data = buffer->map + guard;
    if (mprotect(buffer->data, buffer->data_bytes, PROT_READ | PROT_WRITE) != 0) {
        int saved = errno;
        guard_free(buffer);
        errno = saved;
        return -1;
    }
    return 0;
}

void guard_free(guarded_buffer *buffer)
{
    if (buffer->map != NULL) {
        guard_unwatch(buffer);
        munmap(buffer->map, buffer->map_bytes);
    }
    buffer->map = NULL;
    buffer->data = NULL;
    buffer->data_bytes = buffer->map_bytes = 0;
}

unsigned char *guard_end_aligned(const guarded_buffer *buffer, size_t bytes)
{
    return buffer->data + buffer->data_bytes - bytes;
}

void guard_watch(const guarded_buffer *buffer, uint32_t before, uint32_t past)
{
    size_t i, slot = GUARD_MAX_WATCHED;

    for (i = 0; i < GUARD_MAX_WATCHED; i++) {
        if (watched[i].owner == buffer) {
            slot = i;
            break;
        }
        if (watched[i].owner == NULL && slot == GUARD_MAX_WATCHED)
            slot = i;
    }
    if (slot == GUARD_MAX_WATCHED)
        return;  /* full: its faults read as plain invalid accesses */
    watched[slot].low_start = (uintptr_t)buffer->map;
    watched[slot].low_end = (uintptr_t)buffer->data;
    watched[slot].high_start = (uintptr_t)(buffer->data + buffer->data_bytes);
    watched[slot].high_end = watched[slot].high_start + guard_bytes();
    watched[slot].before = before;
    watched[slot].past = past;
    watched[slot].owner = buffer;
}

void guard_unwatch(const guarded_buffer *buffer)
{
    size_t i;
    for (i = 0; i < GUARD_MAX_WATCHED; i++)
        if (watched[i].owner == buffer)
            memset(&watched[i], 0, sizeof watched[i]);
}

static uint32_t guard_of(uintptr_t address)
{
    size_t i;
    for (i = 0; i < GUARD_MAX_WATCHED; i++) {
        if (watched[i].owner == NULL)
            continue;
        if (address >= watched[i].low_start && address < watched[i].low_end)
            return watched[i].before;
        if (address >= watched[i].high_start && address < watched[i].high_end)
            return watched[i].past;
    }
    return GUARD_NONE;
}

/* Read or write, where the machine tells: the page-fault error code on x86-64. */
static uint32_t access_of(int signal_number, const siginfo_t *info, const void *context)
{
#if defined(__x86_64__) && defined(REG_ERR)
    if (signal_number == SIGSEGV && info->si_code > 0 && context != NULL) {
        const ucontext_t *uc = context;
        return (uc->uc_mcontext.gregs[REG_ERR] & 2) ? ACCESS_WRITE : ACCESS_READ;
    }
#else
    (void)signal_number;
    (void)info;
    (void)context;
#endif
    return ACCESS_UNKNOWN;
}

static void on_fault(int signal_number, siginfo_t *info, void *context)
{
    unsigned char payload[24], *at = payload;
    uintptr_t address = (uintptr_t)info->si_addr;
    int saved = errno;

    at = frame_put_u32(at, (uint32_t)signal_number);
    at = frame_put_u32(at, info->si_code > 0 ? guard_of(address) : GUARD_NONE);
    at = frame_put_u32(at, access_of(signal_number, info, context));
    at = frame_put_u32(at, (uint32_t)info->si_code);  /* <= 0: sent, not a fault */
    frame_put_u64(at, info->si_code > 0 ? (uint64_t)address : 0);
    if (result_channel >= 0 && getpid() == channel_owner)
        (void)frame_write(result_channel, FRAME_CRASH, payload, sizeof payload);
    result_channel = -1;  /* one report: a second fault only ends the process */
    /* Die of the signal itself: the default action, raised again (a real fault would
     * also repeat when the handler returns; raise() covers raise(SIGSEGV) too). */
    signal(signal_number, SIG_DFL);
    raise(signal_number);
    errno = saved;
}

int guard_install_handler(int result_fd)
{
    static unsigned char *alt_stack;
    struct sigaction action;
    stack_t stack;

    if (alt_stack == NULL) {
        void *map = mmap(NULL, ALT_STACK_BYTES, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map == MAP_FAILED)
            return -1;
        alt_stack = map;
    }
    stack.ss_sp = alt_stack;
    stack.ss_size = ALT_STACK_BYTES;
    stack.ss_flags = 0;
    if (sigaltstack(&stack, NULL) != 0)
        return -1;
    result_channel = result_fd;
    channel_owner = getpid();
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSEGV, &action, NULL) != 0 || sigaction(SIGBUS, &action, NULL) != 0)
        return -1;
    return 0;
}
