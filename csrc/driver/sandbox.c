/* The seccomp filter of sandbox.h, as a classic BPF program (no libseccomp). */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include "sandbox.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#else
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U  /* Linux >= 4.14; older: the thread */
#endif

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
/* The low 32 bits of argument 0 (both architectures are little-endian): a pid_t. */
#define LOAD_ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))
#define RETURN(action) BPF_STMT(BPF_RET | BPF_K, (action))
/* If the accumulator equals k, skip `skip` instructions. */
#define IF_EQUAL(k, skip) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (skip), 0)

#define ALLOW SECCOMP_RET_ALLOW
#define END_IT SECCOMP_RET_KILL_PROCESS
#define REFUSE (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

int sandbox_install(pid_t self, pid_t group, char *error, size_t error_size)
{
    uint32_t me = (uint32_t)self, my_group = (uint32_t)-group;
    struct sock_filter program[] = {
        LOAD(arch),
        IF_EQUAL(SANDBOX_ARCH, 1),
        RETURN(END_IT),                       /* another ABI (i386, int 0x80) */
        LOAD(nr),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1),
        RETURN(END_IT),                       /* the x32 ABI */
#endif
        IF_EQUAL(__NR_kill, 8),
        IF_EQUAL(__NR_tkill, 12),
        IF_EQUAL(__NR_tgkill, 11),
        IF_EQUAL(__NR_rt_sigqueueinfo, 10),
        IF_EQUAL(__NR_rt_tgsigqueueinfo, 9),
#if defined(__NR_pidfd_send_signal)
        IF_EQUAL(__NR_pidfd_send_signal, 12),
#else
        IF_EQUAL(0xFFFFFFFFU, 12),            /* keeps the offsets */
#endif
        IF_EQUAL(__NR_setsid, 12),
        IF_EQUAL(__NR_setpgid, 11),
        RETURN(ALLOW),
        /* kill(pid, sig): its own group (0 or -group) or itself */
        LOAD_ARG0,
        IF_EQUAL(0, 6),
        IF_EQUAL(me, 5),
        IF_EQUAL(my_group, 4),
        RETURN(END_IT),
        /* tkill, tgkill, rt_(tg)sigqueueinfo: the first argument is its own pid */
        LOAD_ARG0,
        IF_EQUAL(me, 1),
        RETURN(END_IT),
        RETURN(ALLOW),
        RETURN(END_IT),                       /* pidfd_send_signal */
        RETURN(REFUSE),                       /* setsid, setpgid */
    };
    struct sock_fprog filter = {(unsigned short)(sizeof program / sizeof program[0]), program};

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter, 0, 0) != 0) {
        int cause = errno;
        snprintf(error, error_size, "cannot install the seccomp filter that keeps the "
                 "library from signalling other processes: %s", strerror(cause));
        errno = cause;  /* the caller tells an emulator's refusal (EINVAL) apart */
        return -1;
    }
    return 0;
}

#ifndef __NR_clone3
#define __NR_clone3 435  /* the same on x86-64 and AArch64 */
#endif
#if defined(__NR_fork)
#define FORK_NR __NR_fork
#define VFORK_NR __NR_vfork
#else                    /* AArch64 has clone alone */
#define FORK_NR 0xFFFFFFFFU
#define VFORK_NR 0xFFFFFFFFU
#endif
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif
#define CLONE_THREAD_FLAG 0x00010000U  /* CLONE_THREAD of <sched.h> */

static int trap_channel = -1;
static unsigned char refusal[8 + 160];
static size_t refusal_bytes;
static const char forked_text[] = "the library tried to start a process (fork, vfork or "
                                  "clone): no mode allows one (ngcc-driver's seccomp filter "
                                  "refused it)";

const char *sandbox_forked_text(void)
{
    return forked_text;
}

/* SIGSYS from the filter below: the refusal and END, then the end of the process (only
 * write and _exit, which are async-signal-safe); with no channel, the end alone, of
 * status SANDBOX_FORKED_STATUS. */
static void refuse_process(int signal_number, siginfo_t *info, void *context)
{
    (void)context;
    if (trap_channel < 0)  /* under valgrind, which runs the call, si_code is its own */
        _exit(SANDBOX_FORKED_STATUS);
    if (info->si_code == SYS_SECCOMP) {
        frame_write(trap_channel, FRAME_ERROR, refusal, refusal_bytes);
        frame_write(trap_channel, FRAME_END, NULL, 0);
        _exit(0);
    }
    signal(signal_number, SIG_DFL);  /* a SIGSYS of another cause: its own effect */
    raise(signal_number);
}

int sandbox_forbid_processes(int channel, char *error, size_t error_size)
{
    struct sock_filter program[] = {
        LOAD(arch),
        IF_EQUAL(SANDBOX_ARCH, 1),
        RETURN(END_IT),
        LOAD(nr),
        IF_EQUAL(__NR_clone3, 5),
        IF_EQUAL(__NR_clone, 5),
        IF_EQUAL(FORK_NR, 2),
        IF_EQUAL(VFORK_NR, 1),
        RETURN(ALLOW),
        RETURN(SECCOMP_RET_TRAP),             /* fork, vfork */
        RETURN(SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),  /* clone3 */
        LOAD_ARG0,                            /* clone's flags */
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD_FLAG, 0, 1),
        RETURN(ALLOW),                        /* a thread */
        RETURN(SECCOMP_RET_TRAP),             /* a process */
    };
    struct sock_fprog filter = {(unsigned short)(sizeof program / sizeof program[0]), program};
    struct sigaction action;

    trap_channel = channel;
    memcpy(frame_put_u32(frame_put_u32(refusal, DRIVER_ERR_FORKED), 0), forked_text,
           sizeof forked_text - 1);
    refusal_bytes = 8 + sizeof forked_text - 1;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = refuse_process;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;  /* the fault handler's stack (guard.h) */
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, NULL) != 0
        || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter, 0, 0) != 0) {
        int cause = errno;
        snprintf(error, error_size, "cannot install the seccomp filter that keeps the "
                 "library from starting processes: %s", strerror(cause));
        errno = cause;
        return -1;
    }
    return 0;
}

#else

int sandbox_install(pid_t self, pid_t group, char *error, size_t error_size)
{
    (void)self;
    (void)group;
    snprintf(error, error_size, "no seccomp filter on this system: the library could "
             "signal other processes");
    errno = ENOSYS;
    return -1;
}

int sandbox_forbid_processes(int channel, char *error, size_t error_size)
{
    (void)channel;
    snprintf(error, error_size, "no seccomp filter on this system: the library could "
             "start processes");
    errno = ENOSYS;
    return -1;
}

#endif
