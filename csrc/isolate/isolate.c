/* isolate.h: the namespaces, the read-only view, and the three processes. Linux. */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* unshare, CLONE_NEW*, pipe2, statvfs's ST_* flags */
#endif
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47            /* Linux >= 4.3 */
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

#define OLD_ROOT "/.old-root"  /* where the host's root hangs while the view is built */
#define ROOT_BASE "/tmp"       /* any existing directory: the new root is mounted on it */

/* The paths the view is built around, worked out before the old root goes away. */
typedef struct {
    char cwd[PATH_MAX];          /* "" if unknown */
    char home[PATH_MAX];         /* $HOME if absolute, else "" */
} view_paths;

/* The name of the program in the one line of a refusal (isolate_view.program). */
static const char *program_name = "ngcc-driver";

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static void unavailable(const char *call_format, ...)
{
    int cause = errno;
    char call[PATH_MAX + 64];
    va_list args;

    va_start(args, call_format);
    vsnprintf(call, sizeof call, call_format, args);
    va_end(args);
    fprintf(stderr, "%s: isolation unavailable: %s: %s (errno %d)\n", program_name, call,
            strerror(cause), cause);
    _exit(ISOLATE_EXIT_UNAVAILABLE);
}

/* ------------------------------------------------------------ namespaces */

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC), ok;
    if (fd < 0)
        return -1;
    ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok ? 0 : -1;
}

/* A user namespace in which the caller's uid and gid map to themselves (and
 * setgroups is refused, as an unprivileged gid_map requires). It comes first, so
 * that it owns the other namespaces and the caller holds the rights to make them. */
static void enter_user_namespace(void)
{
    char map[64];
    unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();

    if (unshare(CLONE_NEWUSER) != 0)
        unavailable("unshare(CLONE_NEWUSER)");
    if (write_text("/proc/self/setgroups", "deny") != 0 && errno != ENOENT)  /* < 3.19 */
        unavailable("write /proc/self/setgroups");
    snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
    if (write_text("/proc/self/uid_map", map) != 0)
        unavailable("write /proc/self/uid_map");
    snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
    if (write_text("/proc/self/gid_map", map) != 0)
        unavailable("write /proc/self/gid_map");
}

/* One call each, so that the message names the namespace the kernel refused. The
 * PID namespace applies to the children of this process, not to itself. */
static void enter_other_namespaces(void)
{
    static const struct { int flag; const char *name; } kinds[] = {
        {CLONE_NEWNS, "CLONE_NEWNS"}, {CLONE_NEWPID, "CLONE_NEWPID"},
        {CLONE_NEWNET, "CLONE_NEWNET"}, {CLONE_NEWIPC, "CLONE_NEWIPC"},
        {CLONE_NEWUTS, "CLONE_NEWUTS"},
    };
    size_t i;

    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (unshare(kinds[i].flag) != 0)
            unavailable("unshare(%s)", kinds[i].name);
}

/* ------------------------------------------------------------ the view */

/* mkdir -p inside the view being built; existing entries (or symlinks to them) are fine. */
static int make_directories(const char *path)
{
    char partial[PATH_MAX];
    size_t length = strlen(path), i;

    if (length >= sizeof partial) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(partial, path, length + 1);
    for (i = 1; i <= length; i++) {
        if (partial[i] != '/' && partial[i] != '\0')
            continue;
        partial[i] = '\0';
        if (mkdir(partial, 0755) != 0 && errno != EEXIST)
            return -1;
        partial[i] = path[i];
    }
    return 0;
}

/* The flags a remount must keep: in a user namespace the kernel refuses to clear
 * nosuid, nodev, noexec or the atime mode that the host set on a mount. */
static unsigned long kept_flags(const char *path)
{
    struct statvfs facts;
    unsigned long flags = 0;

    if (statvfs(path, &facts) != 0)
        return 0;
    flags |= (facts.f_flag & ST_NOSUID) ? MS_NOSUID : 0;
    flags |= (facts.f_flag & ST_NODEV) ? MS_NODEV : 0;
    flags |= (facts.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0;
    flags |= (facts.f_flag & ST_NOATIME) ? MS_NOATIME : 0;
    flags |= (facts.f_flag & ST_NODIRATIME) ? MS_NODIRATIME : 0;
    flags |= (facts.f_flag & ST_RELATIME) ? MS_RELATIME : 0;
    return flags;
}

/* An empty file at `path` to bind a file onto, its folders made as needed (nothing
 * where the view already has an entry there, such as a file under /usr). */
static void make_mount_point_file(const char *path)
{
    char parent[PATH_MAX];
    struct stat facts;
    int fd = -1;

    if (lstat(path, &facts) == 0)
        return;
    snprintf(parent, sizeof parent, "%s", path);
    *strrchr(parent, '/') = '\0';
    if ((parent[0] != '\0' && make_directories(parent) != 0)
        || (fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
        unavailable("create the mount point %s", path);
    close(fd);
}

/* Bind the host's `source` (seen under OLD_ROOT) at `path` in the view; read-only
 * unless `writable` (device nodes, which hold no data). Not recursive: a mount below
 * it stays out of the view. A source that does not exist is left out. */
static void bind_host_path_at(const char *source_path, const char *path, int writable)
{
    char source[PATH_MAX];
    struct stat facts;

    if ((size_t)snprintf(source, sizeof source, OLD_ROOT "%s", source_path) >= sizeof source
        || stat(source, &facts) != 0)
        return;  /* too long or missing: whatever needs it reports it (e.g. dlopen) */
    if (S_ISDIR(facts.st_mode)) {
        if (make_directories(path) != 0)
            unavailable("mkdir %s", path);
    } else {
        make_mount_point_file(path);
    }
    if (mount(source, path, NULL, MS_BIND, NULL) != 0)
        unavailable("mount(%s, MS_BIND)", path);
    if (!writable && mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID
                           | MS_NODEV | kept_flags(path), NULL) != 0)
        unavailable("mount(%s, MS_REMOUNT|MS_BIND|MS_RDONLY)", path);
}

static void bind_host_path(const char *path, int writable)
{
    bind_host_path_at(path, path, writable);
}

/* A top-level entry of the host: a symlink is copied (/lib -> usr/lib on merged-/usr
 * systems), anything else bound read-only. */
static void copy_system_entry(const char *path)
{
    char source[PATH_MAX], target[PATH_MAX];
    struct stat facts;
    ssize_t length;

    snprintf(source, sizeof source, OLD_ROOT "%s", path);
    if (lstat(source, &facts) != 0)
        return;
    if (!S_ISLNK(facts.st_mode)) {
        bind_host_path(path, 0);
        return;
    }
    length = readlink(source, target, sizeof target - 1);
    if (length < 0)
        unavailable("readlink %s", source);
    target[length] = '\0';
    if (symlink(target, path) != 0)
        unavailable("symlink %s", path);
}

static void build_system(void)
{
    static const char *const entries[] = {
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
        "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
    };
    size_t i;

    if (mkdir("/etc", 0755) != 0)
        unavailable("mkdir /etc");
    for (i = 0; i < sizeof entries / sizeof entries[0]; i++)
        copy_system_entry(entries[i]);
}

static void build_dev(void)
{
    static const char *const devices[] = {"/dev/null", "/dev/zero", "/dev/full",
                                          "/dev/random", "/dev/urandom"};
    static const char *const links[][2] = {{"/proc/self/fd", "/dev/fd"},
        {"/proc/self/fd/0", "/dev/stdin"}, {"/proc/self/fd/1", "/dev/stdout"},
        {"/proc/self/fd/2", "/dev/stderr"}};
    size_t i;

    if (mkdir("/dev", 0755) != 0)
        unavailable("mkdir /dev");
    for (i = 0; i < sizeof devices / sizeof devices[0]; i++)
        bind_host_path(devices[i], 1);
    for (i = 0; i < sizeof links / sizeof links[0]; i++)
        if (symlink(links[i][0], links[i][1]) != 0)
            unavailable("symlink %s", links[i][1]);
}

/* A procfs of the new PID namespace (the kernel allows it only while the host's
 * /proc is fully visible in this mount namespace: before OLD_ROOT is detached). */
static void build_proc_and_scratch(void)
{
    if (mkdir("/proc", 0555) != 0 || mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV
                                           | MS_NOEXEC, NULL) != 0)
        unavailable("mount(proc, /proc)");
    if (mkdir("/tmp", 01777) != 0 || mount("ngcc-scratch", "/tmp", "tmpfs", MS_NOSUID
                                           | MS_NODEV, "mode=1777,size=" ISOLATE_SCRATCH_SIZE) != 0)
        unavailable("mount(tmpfs, /tmp)");
}

/* An empty, read-only folder at `path` (a home): made where it can be (not under a
 * read-only bind), then bound onto itself read-only, unless it holds the scratch
 * ("/", "/tmp"), which must stay writable. */
static void hide_folder(const char *path)
{
    size_t length = strlen(path);

    if (path[0] != '/' || make_directories(path) != 0
        || strncmp(path, "/tmp", length) == 0 || strcmp(path, "/tmp/") == 0)
        return;
    if (mount(path, path, NULL, MS_BIND, NULL) != 0
        || mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
                 | kept_flags(path), NULL) != 0)
        unavailable("mount(%s, MS_BIND|MS_RDONLY)", path);
}

/* Fewer components first: a folder bound inside another is bound after it, so it
 * covers its part of the outer bind (read-only inside writable, or the reverse). */
static int by_depth(const void *left, const void *right)
{
    const char *a = *(const char *const *)left, *b = *(const char *const *)right;
    size_t depth_a = 0, depth_b = 0;

    for (; *a != '\0'; a++)
        depth_a += *a == '/';
    for (; *b != '\0'; b++)
        depth_b += *b == '/';
    return depth_a < depth_b ? -1 : depth_a > depth_b;
}

/* The homes and the working directory as empty folders (a home read-only even in the
 * scratch), the view's folders at their paths, the writable one read-write, and its
 * file. The folders and the file's mount point are made first: under a home that is
 * already read-only they could not be. */
static void build_user_paths(const view_paths *paths, const isolate_view *view)
{
    const char *homes[] = {"/home", "/root", paths->home};
    const char *folders[ISOLATE_MAX_FOLDERS + 1];
    size_t i, count = 0;

    for (i = 0; view->read_only != NULL && view->read_only[i] != NULL; i++)
        folders[count++] = view->read_only[i];
    if (view->writable != NULL)
        folders[count++] = view->writable;
    for (i = 0; i < count; i++)
        (void)make_directories(folders[i]);
    if (paths->cwd[0] == '/')
        (void)make_directories(paths->cwd);
    if (view->file != NULL)
        make_mount_point_file(view->file);
    for (i = 0; i < sizeof homes / sizeof homes[0]; i++)
        hide_folder(homes[i]);
    qsort(folders, count, sizeof folders[0], by_depth);
    for (i = 0; i < count; i++)
        bind_host_path(folders[i], folders[i] == view->writable);
    if (view->file != NULL) {  /* last: over any folder that holds its path */
        char folder[PATH_MAX];
        snprintf(folder, sizeof folder, "%s", view->file);
        *strrchr(folder, '/') = '\0';
        hide_folder(folder);  /* read-only, but for a scratch (/tmp) it lies in */
        bind_host_path_at(view->file_source, view->file, 0);
    }
}

/* Each folder of the view absolute and not "/" (binding the whole host would undo the
 * view), at most ISOLATE_MAX_FOLDERS of them. */
static void check_folders(const isolate_view *view)
{
    size_t i, count = view->writable != NULL;

    for (i = 0; view->read_only != NULL && view->read_only[i] != NULL; i++, count++)
        if (view->read_only[i][0] != '/' || strcmp(view->read_only[i], "/") == 0) {
            errno = EINVAL;
            unavailable("bind the folder %s (only an absolute path below /)",
                        view->read_only[i]);
        }
    if (view->writable != NULL && (view->writable[0] != '/'
                                   || strcmp(view->writable, "/") == 0)) {
        errno = EINVAL;
        unavailable("bind the writable folder %s (only an absolute path below /)",
                    view->writable);
    }
    if (count > ISOLATE_MAX_FOLDERS) {
        errno = E2BIG;
        unavailable("bind %zu folders (at most %d)", count, ISOLATE_MAX_FOLDERS);
    }
}

static void find_paths(view_paths *paths)
{
    const char *home = getenv("HOME");

    memset(paths, 0, sizeof *paths);
    if (getcwd(paths->cwd, sizeof paths->cwd) == NULL)
        paths->cwd[0] = '\0';
    if (home != NULL && home[0] == '/' && strlen(home) < sizeof paths->home)
        strcpy(paths->home, home);
}

/* The whole view. The new root is a tmpfs mounted on ROOT_BASE; pivot_root moves the
 * host's root under it at OLD_ROOT, whence every bind takes its source (so nothing
 * the view mounts can hide a source), and which is detached at the end. */
static void build_view(const isolate_view *view)
{
    view_paths paths;

    find_paths(&paths);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        unavailable("mount(/, MS_REC|MS_PRIVATE)");
    if (mount("ngcc-root", ROOT_BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0)
        unavailable("mount(tmpfs, " ROOT_BASE ")");
    if (chdir(ROOT_BASE) != 0 || mkdir("." OLD_ROOT, 0700) != 0)
        unavailable("mkdir " ROOT_BASE OLD_ROOT);
    if (syscall(SYS_pivot_root, ".", "." OLD_ROOT) != 0)
        unavailable("pivot_root(" ROOT_BASE ", " ROOT_BASE OLD_ROOT ")");
    if (chdir("/") != 0)
        unavailable("chdir /");
    build_system();
    build_dev();
    build_proc_and_scratch();
    build_user_paths(&paths, view);
    if (umount2(OLD_ROOT, MNT_DETACH) != 0 || rmdir(OLD_ROOT) != 0)
        unavailable("umount2(" OLD_ROOT ", MNT_DETACH)");
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
              NULL) != 0)
        unavailable("mount(/, MS_REMOUNT|MS_BIND|MS_RDONLY)");
    if (paths.cwd[0] != '/' || chdir(paths.cwd) != 0)
        (void)chdir("/");
}

/* ------------------------------------------------------------ capabilities */

/* Empty every capability set (bounding first: dropping it needs CAP_SETPCAP, which
 * the capset below removes), and no_new_privs: no exec can give any back. */
static void drop_capabilities(void)
{
    struct __user_cap_header_struct header;
    struct __user_cap_data_struct data[2];
    int cap;

    for (cap = 0; prctl(PR_CAPBSET_READ, (unsigned long)cap, 0, 0, 0) >= 0; cap++)
        if (prctl(PR_CAPBSET_DROP, (unsigned long)cap, 0, 0, 0) != 0)
            unavailable("prctl(PR_CAPBSET_DROP, %d)", cap);
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        unavailable("prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
    memset(&header, 0, sizeof header);
    memset(data, 0, sizeof data);
    header.version = _LINUX_CAPABILITY_VERSION_3;
    if (syscall(SYS_capset, &header, data) != 0)
        unavailable("capset");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        unavailable("prctl(PR_SET_NO_NEW_PRIVS)");
}

/* ------------------------------------------------------------ the processes */

/* End this process as a child that ended with wait status `status` did. */
static void end_like(int status)
{
    if (WIFSIGNALED(status)) {
        int number = WTERMSIG(status);
        struct rlimit no_core = {0, 0};
        sigset_t only;

        setrlimit(RLIMIT_CORE, &no_core);  /* a core of this process would say nothing */
        signal(number, SIG_DFL);
        sigemptyset(&only);
        sigaddset(&only, number);
        sigprocmask(SIG_UNBLOCK, &only, NULL);
        raise(number);
        _exit(128 + number);  /* a signal whose default is not to end the process */
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128);
}

/* outer: the worker's wait status comes from init on `report`; if init ended without
 * one (a setup failure, or killed), its own status is the answer. */
static void outer_wait(pid_t init, int report)
{
    int status = 0, worker_status = 0;
    size_t got = 0;

    while (got < sizeof worker_status) {
        ssize_t n = read(report, (char *)&worker_status + got, sizeof worker_status - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    while (waitpid(init, &status, 0) < 0)
        if (errno != EINTR)
            _exit(ISOLATE_EXIT_UNAVAILABLE);  /* cannot happen: init is our child */
    end_like(got == sizeof worker_status ? worker_status : status);
}

/* init: reap every process of the namespace until the worker ends, pass its status
 * on, and exit (the kernel then kills the rest of the namespace). */
static void init_wait(pid_t worker, int report)
{
    int status = 0;
    pid_t ended;

    do
        ended = waitpid(-1, &status, 0);
    while (ended != worker && (ended > 0 || errno == EINTR));
    if (ended != worker || write(report, &status, sizeof status) != (ssize_t)sizeof status)
        _exit(ISOLATE_EXIT_UNAVAILABLE);  /* cannot happen: the worker is our child */
    _exit(0);
}

/* init: die with the outer process (SIGKILL), and leave at once if it already died
 * (its end of the report pipe is then closed: POLLERR on ours). */
static void init_bind_to_outer(int report)
{
    struct pollfd pipe_end = {report, POLLOUT, 0};

    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        unavailable("prctl(PR_SET_PDEATHSIG)");
    if (poll(&pipe_end, 1, 0) == 1 && (pipe_end.revents & POLLERR))
        _exit(ISOLATE_EXIT_UNAVAILABLE);
}

void isolate_enter_view(const isolate_view *view)
{
    int report[2];
    pid_t init, worker;

    program_name = view->program;
    check_folders(view);
    enter_user_namespace();
    enter_other_namespaces();
    if (pipe2(report, O_CLOEXEC) != 0)
        unavailable("pipe2");
    if ((init = fork()) < 0)
        unavailable("fork");
    if (init > 0) {
        close(report[1]);
        if (view->keep_fd >= 0)
            close(view->keep_fd);  /* e.g. the channel: it closes when the namespace is gone */
        outer_wait(init, report[0]);
    }
    close(report[0]);
    init_bind_to_outer(report[1]);
    build_view(view);
    if (sethostname(view->program, strlen(view->program)) != 0)
        unavailable("sethostname");
    drop_capabilities();
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  /* no ptrace of init from the worker */
    if ((worker = fork()) < 0)
        unavailable("fork");
    if (worker > 0) {
        if (view->keep_fd >= 0)
            close(view->keep_fd);
        init_wait(worker, report[1]);
    }
    close(report[1]);  /* only init reports: the worker cannot forge the status */
    (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  /* check_descendants sees grandchildren */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
}

void isolate_enter(const char *library, int channel)
{
    char cwd[PATH_MAX], at[PATH_MAX], real[PATH_MAX];
    isolate_view view = {"ngcc-driver", NULL, NULL, at, real, -1};

    view.keep_fd = channel;  /* the worker writes the frames on it */
    if (getcwd(cwd, sizeof cwd) == NULL)
        cwd[0] = '\0';
    if (library[0] != '/' && cwd[0] != '/') {
        errno = ENOENT;
        unavailable("getcwd (for the relative library path %s)", library);
    }
    if ((size_t)snprintf(at, sizeof at, "%s%s%s", library[0] == '/' ? "" : cwd,
                         library[0] == '/' || strcmp(cwd, "/") == 0 ? "" : "/", library)
        >= sizeof at) {
        errno = ENAMETOOLONG;
        unavailable("bind the library %s", library);
    }
    if (realpath(library, real) == NULL)
        view.file = NULL;  /* missing: dlopen says so inside */
    isolate_enter_view(&view);
}
