/* The seccomp filter of sandbox.h, as a classic BPF program (no libseccomp). */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include "sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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

#endif
