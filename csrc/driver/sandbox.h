/* The driver's containment: a seccomp filter, installed before the library is
 * loaded, that lets the process signal only itself and its own process group.
 *
 * A denylist of the signalling system calls, so libc and the libraries run as
 * before: kill(pid) only for pid 0, the driver's pid or minus its process group;
 * tkill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo only to the driver's own
 * process; pidfd_send_signal never. Any other use ends the whole process with
 * SIGSYS (SECCOMP_RET_KILL_PROCESS), which the parent reports as "the library
 * tried to signal another process". setsid and setpgid fail with EPERM, so every
 * descendant stays in the group that the parent kills after each run. Linux only;
 * elsewhere sandbox_install says so.
 *
 * What it does not cover: the library still runs as the evaluator's user, so it can
 * read (and write) what the evaluator can, ptrace another of the user's processes
 * where the kernel allows it (kernel.yama.ptrace_scope 0), and use the network.
 * ngcc-driver --isolate (isolate.h) takes all of that away first, with namespaces. */
#ifndef NGCC_SANDBOX_H
#define NGCC_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

/* Install the filter for a process `self` leading the group `group` (irrevocable,
 * inherited by every child). Returns 0, or -1 with a message in error and errno
 * set (EINVAL where an emulator such as qemu-user refuses seccomp filters). */
int sandbox_install(pid_t self, pid_t group, char *error, size_t error_size);

/* The process limit (issue 45): a second filter, installed after the first for the
 * modes that may not fork (modes.h), under which the process starts no process: fork,
 * vfork and a clone without CLONE_THREAD trap (SIGSYS) before a process exists, and
 * the handler sends the one ERROR (DRIVER_ERR_FORKED, "the library tried to start a
 * process ...") and END on `channel`, then exits; clone3, whose flags a filter cannot
 * read, fails with ENOSYS, so that libc makes its threads with clone (glibc does).
 * Threads stay allowed. RLIMIT_NPROC would do nothing here: its count is per user,
 * and root (CI's user, the namespace's root) is exempt from it. With `channel` -1 (a
 * fork()ed child of the ct mode, which may not write on the channel) the handler only
 * exits, of status SANDBOX_FORKED_STATUS, for its parent to send the ERROR. Returns 0,
 * or -1 as sandbox_install. */
int sandbox_forbid_processes(int channel, char *error, size_t error_size);

/* The exit status of a process the limit ended that had no channel, and the text of
 * the refusal (the ERROR frame's). */
#define SANDBOX_FORKED_STATUS 86
const char *sandbox_forked_text(void);

#endif
