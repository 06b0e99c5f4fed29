/* Kernel isolation of the processes that run submitted code: ngcc-driver --isolate
 * (a library) and ngcc-jail (the compiler on a submission's sources, csrc/jail/). The
 * process enters new user, PID, network, IPC, mount and UTS namespaces, made with
 * unshare(2) by itself (no external tool; an unprivileged user where the kernel lets
 * one create user namespaces, or root).
 *
 * isolate_enter_view() takes the view's folders: any number of read-only ones (up to
 * ISOLATE_MAX_FOLDERS) and at most one writable one, and one read-only file;
 * isolate_enter(library, channel) is the driver's: the library file alone, read-only
 * at the path the parent gave (never its folder: a library saved in $HOME or /tmp
 * sees nothing else of either).
 *
 * Three processes, each with one job:
 *
 *   outer   the process ngcc started (its pid is the one ngcc knows: HELLO, TRIAL and
 *           LEAK_DONE name it). It enters the namespaces, forks `init`, waits, and
 *           ends as the worker ended: the same exit status, or death by the same
 *           signal (re-raised with the default action, core dumps off). It stays
 *           outside the new PID namespace, so nothing inside can name ngcc or it.
 *   init    pid 1 of the new PID namespace. It builds the read-only view of the
 *           system, drops every capability, forks `worker` and reaps until the
 *           worker ends; it then sends the worker's wait status to `outer` on a pipe
 *           and exits, which makes the kernel kill whatever else is left in the
 *           namespace (a library's forked child cannot outlive the run). It does not
 *           run the mode itself because the kernel shields a namespace's pid 1 from
 *           signals it has no handler for: raise(SIGABRT) or kill(0, SIGTERM) by a
 *           library would be ignored there, where ngcc expects a death by signal.
 *   worker  pid 2: returns from isolate_enter and runs the mode as the driver always
 *           has (channel, fault handler, memory limit, seccomp filter, library);
 *           in ngcc-jail it execve's the command (the compiler).
 *
 * The view (a tmpfs root, pivot_root into it, then read-only):
 *   /usr /bin /sbin /lib /lib32 /lib64 /libx32  read-only binds (symlinks copied)
 *   /etc        only ld.so.cache, ld.so.conf(.d), localtime, passwd, group, nsswitch.conf
 *   /dev        null zero full random urandom (binds), fd stdin stdout stderr (symlinks)
 *   /proc       a new procfs of the new PID namespace
 *   /tmp        the scratch: a fresh tmpfs of ISOLATE_SCRATCH_SIZE, writable
 *   /home /root $HOME   empty and read-only
 *   the view's folders (ngcc-jail: the submission, ...)  read-only binds; the
 *               writable folder (ngcc-jail: the build's work folder) a read-write
 *               bind; the view's file (the driver: the library, its real path bound
 *               at the path as given, made absolute)  a read-only bind
 *   the working directory   exists (empty unless it is one of the above)
 * Nothing else (no /var, /run, /sys, /opt, /srv, /mnt): no socket file of the host
 * can be reached, and the network namespace has only its loopback, left down.
 *
 * Afterwards the bounding, ambient, effective, permitted and inheritable capability
 * sets are empty and no_new_privs is set, so the library cannot remount the view
 * writable or unmount it; the seccomp filter (sandbox.h) still follows in the worker.
 *
 * A failure of any step (a kernel or container that refuses the namespaces:
 * kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0, a seccomp profile
 * that refuses unshare or mount, no visible /proc to mount a new one from) ends the
 * process with ISOLATE_EXIT_UNAVAILABLE and one line on stderr (PROGRAM: the view's):
 *   PROGRAM: isolation unavailable: CALL: STRERROR (errno N)
 * before any frame is written: nothing is run without the isolation asked for. So
 * the isolation is all or nothing, and a run under --isolate that sent HELLO had all
 * of it (there is no frame that says so: ngcc/driver/protocol.py refuses unknown frames).
 *
 * What changes for the parent: nothing on the channel; the worker's exit status or
 * signal comes back as the outer process's (a forwarded signal death dumps no core
 * of the outer process; the worker's own core, if the system makes one, is the
 * library's). Host paths outside the view are absent: /opt, any file beside the
 * library, and (binds are not recursive) any file system mounted below a bound
 * folder, such as a separate /usr/local, which shows as the folder beneath it. Perf counters see a process without capabilities in the initial user
 * namespace (even when the evaluator is root). */
#ifndef NGCC_ISOLATE_H
#define NGCC_ISOLATE_H

#define ISOLATE_EXIT_UNAVAILABLE 122  /* the isolation could not be set up */
#define ISOLATE_SCRATCH_SIZE "64m"    /* the size= of the /tmp tmpfs */

#define ISOLATE_MAX_FOLDERS 64       /* read-only + writable folders of one view */

/* What one isolation shows and keeps. */
typedef struct {
    const char *program;           /* names the process in a refusal's line; the hostname */
    const char *const *read_only;  /* absolute folders bound read-only, NULL-ended (or NULL) */
    const char *writable;          /* the one absolute folder bound read-write, or NULL */
    const char *file;              /* an absolute path where one file is bound read-only, or NULL */
    const char *file_source;       /* ... the host's file bound there (its real path) */
    int keep_fd;                   /* open in the worker only (outer and init close it), or -1 */
} isolate_view;

/* Enter the isolation with `view`'s folders. Returns only in the worker, which may
 * return to its caller's work or execve a command (the view has its programs: /usr,
 * /bin, ...); the outer process and init never return. A folder nested in another is
 * bound after it, so a read-only folder inside the writable one stays read-only. */
void isolate_enter_view(const isolate_view *view);

/* The driver's view for a run of `library` (the path as the parent gave it, which
 * stays valid inside): that one file, read-only. Returns only in the worker, with
 * `channel` (the result fd) still open there. */
void isolate_enter(const char *library, int channel);

#endif
