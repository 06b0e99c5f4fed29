"""ngcc-driver --isolate (csrc/isolate/isolate.h): a library loaded in new user, PID,
network, IPC, mount and UTS namespaces, with a read-only view of the system, no
capabilities and an address-space cap, cannot reach the caller or the machine.

Each hostile library below tries one thing from the audit and returns a nonzero code
(with a line "DID <code>: <what>" on stderr) if it managed; the run must then come
back with its DIGEST, and the test checks the outside too (the test process, a
sentinel process, the files). A few control runs without --isolate show that the same
library does succeed there, so that a test cannot pass by never trying. The driver is
run directly (the Python side passes --isolate unless the sandbox is off); where the kernel refuses
user namespaces, the driver must say so with exit status 122, which is checked, not
skipped. Nothing here asserts a duration.
"""

from __future__ import annotations

import os
import resource
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pytest
from _testlib import NO_UNSHARE_SOURCE, build_library, compiler, driver_request

import ngcc
from ngcc.driver import child as _child
from ngcc.driver import leak_mode as _leak_mode
from ngcc.driver import process as _process
from ngcc.driver import protocol as _protocol
from ngcc.library.registry import sanitized_build

SANITIZED = sanitized_build()
EXIT_UNAVAILABLE = 122  # isolate.h: ISOLATE_EXIT_UNAVAILABLE

TEMPLATE = r"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
static long env_long(const char *name)
{
    const char *value = getenv(name);
    return value ? atol(value) : -1;
}
#define DID(code, what) do { fprintf(stderr, "DID %d: %s (errno %d)\n", (code), (what), \
                                     errno); return (code); } while (0)
/* The first entry of `folder` but its folders (the view makes the way to every path
 * it holds) and `own`, or NULL. */
static const char *other_entry(const char *folder, const char *own)
{
    DIR *listing = opendir(folder);
    struct dirent *entry;
    while (listing != NULL && (entry = readdir(listing)) != NULL)
        if (entry->d_type != DT_DIR && strcmp(entry->d_name, own) != 0)
            return entry->d_name;
    return NULL;
}
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    volatile unsigned char sink = 0;
    (void)msg; (void)bits; (void)sink; (void)env_long; (void)other_entry;
    BODY
    memset(digest, 0x5A, (size_t)d / 8);
    return 0;
}
"""

BEHAVIOURS = {
    "trivial": "",
    "connects": r"""{
        struct sockaddr_in to;
        int s = socket(AF_INET, SOCK_STREAM, 0);
        memset(&to, 0, sizeof to);
        to.sin_family = AF_INET;
        to.sin_port = htons((unsigned short)env_long("NGCC_TEST_PORT"));
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (s >= 0 && connect(s, (struct sockaddr *)&to, sizeof to) == 0)
            DID(1, "connected to 127.0.0.1");
    }""",
    # Everything but a signal (the seccomp filter would end the run at the first):
    # see, limit, reprioritise, pin, trace, read, and F_SETOWN-signal the test process
    # and the sentinel.
    "reaches": r"""{
        long outside[2] = {env_long("NGCC_TEST_PID"), env_long("NGCC_TEST_SENTINEL")};
        int i, p[2];
        for (i = 0; i < 2; i++) {
            pid_t pid = (pid_t)outside[i];
            char path[64], byte;
            struct rlimit zero = {0, 0};
            struct iovec local = {&byte, 1}, remote = {(void *)0x10000, 1};
            cpu_set_t one;
            snprintf(path, sizeof path, "/proc/%d", (int)pid);
            if (access(path, F_OK) == 0)
                DID(10 + i, "saw the pid in /proc");
            if (prlimit(pid, RLIMIT_FSIZE, &zero, NULL) == 0)
                DID(20 + i, "prlimit");
            if (setpriority(PRIO_PROCESS, (id_t)pid, 19) == 0)
                DID(30 + i, "setpriority");
            CPU_ZERO(&one);
            CPU_SET(0, &one);
            if (sched_setaffinity(pid, sizeof one, &one) == 0)
                DID(40 + i, "sched_setaffinity");
            if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) == 0)
                DID(50 + i, "ptrace");
            if (process_vm_readv(pid, &local, 1, &remote, 1, 0) >= 0 || errno == EFAULT)
                DID(60 + i, "process_vm_readv");
            if (pipe(p) == 0 && fcntl(p[0], F_SETOWN, pid) == 0) {
                fcntl(p[0], F_SETSIG, SIGTERM);
                fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK);
                if (write(p[1], "x", 1) == 1)
                    DID(70 + i, "F_SETOWN + O_ASYNC: SIGTERM sent");
            }
        }
    }""",
    "kills_parent": "kill(getppid(), SIGTERM);",
    "kills_test": "kill((pid_t)env_long(\"NGCC_TEST_PID\"), SIGTERM);",
    "kills_sentinel": "kill((pid_t)env_long(\"NGCC_TEST_SENTINEL\"), SIGKILL);",
    "files": r"""{
        const char *home = getenv("HOME"), *libdir = getenv("NGCC_TEST_LIBDIR");
        const char *places[] = {"/", "/usr", "/etc", "/dev", "/home", "/root", "/proc",
                                home, libdir};
        char path[4096];
        size_t i;
        int fd;
        snprintf(path, sizeof path, "%s/.ssh/id_rsa", home);
        if (open(path, O_RDONLY) >= 0)
            DID(1, "read $HOME/.ssh/id_rsa");
        if (open(getenv("NGCC_TEST_OUTSIDE"), O_RDONLY) >= 0)
            DID(2, "read a file beside the library's folder");
        snprintf(path, sizeof path, "%s/victim.txt", libdir);
        if (open(path, O_WRONLY | O_APPEND) >= 0)
            DID(3, "opened a file of the library's folder for writing");
        if (open(path, O_RDONLY) >= 0)
            DID(7, "read a file beside the library");
        if (other_entry(libdir, "files.so") != NULL)
            DID(8, other_entry(libdir, "files.so"));  /* listed the library's folder */
        snprintf(path, sizeof path, "%s", libdir);
        *strrchr(path, '/') = '\0';
        if (other_entry(path, strrchr(libdir, '/') + 1) != NULL)
            DID(9, other_entry(path, strrchr(libdir, '/') + 1));  /* ... and the one above */
        for (i = 0; i < sizeof places / sizeof places[0]; i++) {
            snprintf(path, sizeof path, "%s/ngcc-escape", places[i]);
            if (open(path, O_WRONLY | O_CREAT, 0600) >= 0 || mkdir(path, 0700) == 0)
                DID(10 + (int)i, path);
        }
        if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL) == 0)
            DID(4, "remounted / writable");
        if (umount2(libdir, MNT_DETACH) == 0)
            DID(5, "unmounted the library's folder");
        fd = open("/tmp/ngcc-isolation-scratch", O_WRONLY | O_CREAT, 0600);
        if (fd < 0 || write(fd, "ok", 2) != 2)
            DID(6, "found no writable scratch in /tmp");
    }""",
    # A child that clears its parent-death signal, tries to leave the group and sleeps
    # with the test's pipe end ($NGCC_TEST_HOLD_FD, inherited) open.
    "forks": "{ if (fork() == 0) { prctl(PR_SET_PDEATHSIG, 0); (void)setsid(); "
             "for (;;) pause(); } }",
    # Clears its own parent-death signal, says so on the test's pipe, and sleeps.
    "outlives": "{ int fd = (int)env_long(\"NGCC_TEST_HOLD_FD\"); prctl(PR_SET_PDEATHSIG, 0);"
                " if (write(fd, \"R\", 1) != 1) return 1; for (;;) pause(); }",
    "maps": r"""{
        size_t bytes = (size_t)env_long("NGCC_TEST_BYTES");
        unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE
                                | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED)
            DID(1, "mapped it");
    }""",
    "touches": r"""{
        size_t bytes = (size_t)env_long("NGCC_TEST_BYTES");
        unsigned char *p = malloc(bytes);
        if (p != NULL) {
            memset(p, 1, bytes);
            DID(1, "allocated and touched it");
        }
    }""",
    "null": "sink = *(volatile unsigned char *)(size_t)bits;  /* bits 0: NULL */",
    "raises": "raise(SIGSEGV);",
    "aborts": "abort();",
    "exits": "exit(3);",
}



# ------------------------------------------------------------------ running it

@dataclass
class Ran:
    returncode: int
    frames: list[tuple[int, bytes]]
    stderr: str

    @property
    def kinds(self) -> list[str]:
        return [_protocol.NAMES.get(kind, str(kind)) for kind, _ in self.frames]

    def payload(self, kind: int) -> bytes:
        return next(payload for k, payload in self.frames if k == kind)

    def hashed(self) -> bool:
        """True if the library returned 0 (so it did nothing it reports)."""
        return self.returncode == 0 and "DIGEST" in self.kinds


def _frames(data: bytes) -> list[tuple[int, bytes]]:
    frames, at = [], 0
    while at + 8 <= len(data):
        kind, length = struct.unpack_from("<II", data, at)
        frames.append((kind, data[at + 8:at + 8 + length]))
        at += 8 + length
    return frames


def _read_all(fd: int, into: list[bytes]) -> None:
    while chunk := os.read(fd, 1 << 16):
        into.append(chunk)


def _drive(mode: str, options: list[str], *, isolate: bool = True, stdin: bytes = b"",
           env: dict[str, str] | None = None, hold_fd: int | None = None,
           prefix: tuple[str, ...] = (), after_exit: Callable[[], None] | None = None,
           cwd: Path | None = None, timeout: float = 120) -> Ran:
    """Run the driver in ``mode``; ``after_exit`` runs once it has exited, before its
    process group is killed (what a test finds then was left alive by the driver)."""
    read_end, write_end = os.pipe()
    request = driver_request([mode, "--result-fd", str(write_end), "--parent-pid",
                              str(os.getpid()), *options, *(["--isolate"] if isolate else [])])
    argv = [*prefix, str(_process.driver_path()), "--request-fd", str(request)]
    chunks: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(read_end, chunks))
    with tempfile.TemporaryFile() as err:
        try:
            child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=err, pass_fds=(write_end, request) + (
                                         () if hold_fd is None else (hold_fd,)),
                                     start_new_session=True, env=env, cwd=cwd)
        finally:
            os.close(write_end)
            os.close(request)
        reader.start()
        try:
            child.communicate(stdin, timeout=timeout)
            if after_exit is not None:
                after_exit()
        finally:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            reader.join()
            os.close(read_end)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    return Ran(child.returncode, _frames(b"".join(chunks)), stderr)


def _hash(library: Path | str, *, isolate: bool = True, env: dict[str, str] | None = None,
          options: tuple[str, ...] = (), **kw) -> Ran:
    return _drive("hash", ["--library", str(library), "--digest-bits", "256", "--bits", "24",
                           *options], isolate=isolate, stdin=b"abc", env=env, **kw)


def _env(**values: object) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"NGCC_TEST_%s" % k.upper(): str(v) for k, v in values.items()})
    return env


@pytest.fixture(scope="module")
def libs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("isolation-libs")
    (folder / "victim.txt").write_text("not yours\n")
    return {name: build_library(folder, name, TEMPLATE.replace("BODY", body))
            for name, body in BEHAVIOURS.items()}


def _kernel_allows_user_namespaces() -> bool | None:
    """What `unshare -Ur true` says (None where there is no unshare(1))."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    return subprocess.run([unshare, "-Ur", "true"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def isolated(libs) -> None:
    """The hostile tests need the isolation: where the kernel refuses it (checked by
    test_the_driver_isolates_where_the_kernel_allows_it) they say so and stop."""
    probe = _hash(libs["trivial"])
    if probe.returncode == EXIT_UNAVAILABLE:
        pytest.skip("isolation unavailable on this machine (the driver refused as "
                    "documented): %s" % probe.stderr.strip())


def test_the_driver_isolates_where_the_kernel_allows_it(libs):
    ran = _hash(libs["trivial"])
    allowed = _kernel_allows_user_namespaces()
    if ran.returncode == EXIT_UNAVAILABLE:
        assert allowed is not True, "unshare -Ur works, the driver did not: " + ran.stderr
        assert ran.frames == [] and ran.stderr.startswith("ngcc-driver: isolation unavailable: ")
    else:
        assert allowed is not False, "the driver isolated where unshare -Ur fails?"
        assert ran.hashed() and ran.kinds == ["HELLO", "LOADED", "DIGEST", "END"], ran
        assert ran.payload(_protocol.DIGEST) == b"\x5a" * 32


def test_a_refused_namespace_is_exit_122_with_one_line_naming_the_call(libs, tmp_path):
    launcher = tmp_path / "no-unshare"
    (tmp_path / "no-unshare.c").write_text(NO_UNSHARE_SOURCE)
    subprocess.run(compiler() + ["-o", str(launcher), str(tmp_path / "no-unshare.c")],
                   check=True, capture_output=True)
    ran = _hash(libs["trivial"], prefix=(str(launcher),))
    assert ran.returncode == EXIT_UNAVAILABLE and ran.frames == []
    assert ran.stderr == ("ngcc-driver: isolation unavailable: unshare(CLONE_NEWUSER): "
                          "%s (errno 1)\n" % os.strerror(1))
    assert _hash(libs["trivial"], prefix=(str(launcher),), isolate=False).hashed()


# ------------------------------------------------------------------ what still works

@pytest.fixture()
def isolating(monkeypatch, isolated):
    """ngcc.driver.child's own runs (its parser and checks), isolated as by default."""
    monkeypatch.delenv("NGCC_NO_SANDBOX", raising=False)


def _both(call: Callable[[], object], monkeypatch, isolated) -> tuple[object, object]:
    """``call()`` with the seccomp filter alone, then in ngcc's default isolation."""
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")
    without = call()
    monkeypatch.delenv("NGCC_NO_SANDBOX")
    return without, call()


def test_hash_kat_and_probe_give_the_same_results_isolated(monkeypatch, isolated, tmp_path):
    inst = ngcc.instance("SM3")
    message = bytes(range(256)) * 9

    def results() -> tuple[object, ...]:
        kat = tmp_path / ("kat-%d.txt" % len(list(tmp_path.iterdir())))
        _child.generate_kat(inst, "2_12", kat)
        return (_child.hash_in_child(inst, message, 8 * len(message) - 3),
                _child.hash_in_child(inst, b"", 0), kat.read_bytes(), _child.probe(inst))

    without, with_isolation = _both(results, monkeypatch, isolated)
    assert without == with_isolation


def test_cold_and_trial_run_isolated(isolating):
    inst = ngcc.instance("SM3")
    assert _child.cold_call(inst, 64) > 0
    assert _child.cold_call(inst, 64, message=b"m" * 64) > 0
    measured = _child.trial(inst, 64, 200, 5, cpu=max(os.sched_getaffinity(0)),
                            message=b"x" * 64)  # its checks include the pid of the facts
    assert len(measured.cycles) == 200


def test_a_leak_run_works_isolated(isolating):
    outcome = _leak_mode.leak(ngcc.instance("SM3"), 32, 2000, 500, 7, lambda ticks, classes: False)
    assert outcome.calls == 2000  # its checks include the pid of the facts


def test_the_library_loads_from_wherever_it_lies(libs, isolated, tmp_path):
    """A relative path, a symlink into another folder, a folder under $HOME (hidden
    but for that one file): each stays readable at the path the parent gives."""
    home = tmp_path / "home"
    (home / "build").mkdir(parents=True)
    (home / "private.txt").write_text("hidden\n")
    shutil.copy(libs["files"], home / "build" / "files.so")
    (tmp_path / "linked.so").symlink_to(libs["trivial"])
    assert _hash("./" + libs["trivial"].name, cwd=libs["trivial"].parent).hashed()
    assert _hash(Path(libs["trivial"].parent.name) / libs["trivial"].name,
                 cwd=libs["trivial"].parent.parent).hashed()
    assert _hash(tmp_path / "linked.so", cwd=tmp_path).hashed()
    env = _env(libdir=home / "build", outside=home / "private.txt")
    env["HOME"] = str(home)
    (home / "build" / "victim.txt").write_text("not yours\n")
    ran = _hash(home / "build" / "files.so", env=env, cwd=home)
    assert ran.hashed(), ran.stderr  # it ran, and found $HOME empty but for its file


@pytest.mark.parametrize("behaviour", ["null", "raises", "aborts", "exits"])
def test_a_crash_or_exit_ends_the_run_as_without_isolation(libs, isolated, behaviour):
    plain, isolated_run = _hash(libs[behaviour], isolate=False), _hash(libs[behaviour])
    assert isolated_run.returncode == plain.returncode != 0
    assert isolated_run.kinds == plain.kinds
    expected = {"null": -signal.SIGSEGV, "raises": -signal.SIGSEGV, "aborts": -signal.SIGABRT,
                "exits": 3}[behaviour]
    assert plain.returncode == expected


# ------------------------------------------------------------------ what it cannot do

def test_no_network_not_even_loopback(libs, isolated):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        env = _env(port=server.getsockname()[1])
        ran = _hash(libs["connects"], env=env)
        assert ran.hashed(), ran
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()
        control = _hash(libs["connects"], env=env, isolate=False)
        assert "DID 1: connected" in control.stderr  # the test can tell


@pytest.fixture()
def sentinel():
    process = subprocess.Popen(["sleep", "300"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


@pytest.fixture()
def no_sigterm():
    """SIGTERM to the test process is recorded, not fatal; the list says if one came."""
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda number, frame: received.append(number))
    yield received
    signal.signal(signal.SIGTERM, previous)


def _facts(pid: int) -> tuple[object, ...]:
    return (resource.prlimit(pid, resource.RLIMIT_FSIZE),
            os.getpriority(os.PRIO_PROCESS, pid), os.sched_getaffinity(pid))


def test_no_outside_process_can_be_seen_limited_traced_or_signalled(libs, isolated, sentinel,
                                                                     no_sigterm):
    env = _env(pid=os.getpid(), sentinel=sentinel.pid)
    before = _facts(os.getpid()), _facts(sentinel.pid)
    ran = _hash(libs["reaches"], env=env)
    assert ran.hashed(), (ran.stderr, ran.kinds)
    assert (_facts(os.getpid()), _facts(sentinel.pid)) == before
    assert sentinel.poll() is None and no_sigterm == []
    control = _hash(libs["reaches"], env=env, isolate=False)
    assert "DID 10: saw the pid in /proc" in control.stderr  # the test can tell


@pytest.mark.parametrize("behaviour", ["kills_parent", "kills_test", "kills_sentinel"])
def test_a_kill_reaches_nobody_and_ends_the_run(libs, isolated, sentinel, no_sigterm,
                                                behaviour):
    ran = _hash(libs[behaviour], env=_env(pid=os.getpid(), sentinel=sentinel.pid))
    assert ran.returncode == -signal.SIGSYS  # the seccomp filter, the second wall
    assert sentinel.poll() is None and no_sigterm == []


def test_no_home_no_neighbour_and_nothing_writable_but_the_scratch(libs, isolated,
                                                                   tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    outside = tmp_path / "outside" / "secret.txt"
    outside.parent.mkdir()
    outside.write_text("secret\n")
    folder = libs["files"].parent
    before = sorted(p.name for p in folder.iterdir())
    env = _env(libdir=folder, outside=outside)
    env["HOME"] = str(home)
    ran = _hash(libs["files"], env=env)
    assert ran.hashed(), (ran.stderr, ran.kinds)
    assert sorted(p.name for p in folder.iterdir()) == before
    assert (folder / "victim.txt").read_text() == "not yours\n"
    assert not list(tmp_path.rglob("ngcc-escape"))
    assert not Path("/tmp/ngcc-isolation-scratch").exists()
    control = _hash(libs["files"], env=env, isolate=False)
    assert "DID 1: read $HOME/.ssh/id_rsa" in control.stderr  # the test can tell


def _closed_within(fd: int, seconds: float) -> bool:
    """True once every writer of the pipe has closed it (EOF), else False."""
    ready, _, _ = select.select([fd], [], [], seconds)
    return bool(ready) and os.read(fd, 1) == b""


def test_a_forked_child_does_not_outlive_the_driver(libs, isolated):
    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, True)
    found: list[bool] = []
    try:
        ran = _hash(libs["forks"], hold_fd=write_end, after_exit=lambda: (
            os.close(write_end), found.append(_closed_within(read_end, 30))))
    finally:
        os.close(read_end)
    assert "ERROR" in ran.kinds  # the driver saw the child (DRIVER_ERR_FORKED)...
    assert found == [True]       # ... and when the driver ended, nothing held the pipe


def test_clearing_the_death_signal_does_not_outlive_ngcc(libs, isolated, tmp_path):
    """ngcc (here a middle process) dies: the library, which cleared its own
    PR_SET_PDEATHSIG, dies with the driver all the same."""
    read_end, write_end = os.pipe()
    middle_source = ("import os, subprocess, sys, time\n"
                     "r, w = os.pipe()\n"
                     "q = os.memfd_create('request')\n"
                     "words = sys.argv[2:] + ['--result-fd', str(w), '--parent-pid', "
                     "str(os.getpid())]\n"
                     "os.write(q, b''.join(word.encode() + bytes(1) for word in words))\n"
                     "os.lseek(q, 0, 0)\n"
                     "child = subprocess.Popen([sys.argv[1], '--request-fd', str(q)], "
                     "stdin=subprocess.DEVNULL, pass_fds=(w, q, %d), "
                     "start_new_session=True)\n"
                     "print(child.pid, flush=True)\n"
                     "time.sleep(300)\n" % write_end)
    argv = [sys.executable, "-c", middle_source, str(_process.driver_path()), "hash",
            "--library", str(libs["outlives"]), "--digest-bits", "256", "--bits", "0",
            "--isolate"]
    middle = subprocess.Popen(argv, stdout=subprocess.PIPE, pass_fds=(write_end,),
                              env=_env(hold_fd=write_end), start_new_session=True)
    os.close(write_end)
    driver = int(middle.stdout.readline())
    try:
        ready, _, _ = select.select([read_end], [], [], 60)
        assert ready and os.read(read_end, 1) == b"R", "the library never ran"
        middle.kill()
        middle.wait()
        assert _closed_within(read_end, 30), "the library outlived ngcc"
    finally:
        with suppress(ProcessLookupError):
            os.killpg(driver, signal.SIGKILL)
        middle.kill()
        middle.wait()
        middle.stdout.close()
        os.close(read_end)


@pytest.mark.skipif(SANITIZED, reason="no address-space cap under AddressSanitizer")
@pytest.mark.parametrize(("behaviour", "bytes_", "options"), [
    ("maps", 1 << 40, ()),                                   # 1 TiB, the default cap
    ("maps", 8 << 30, ()),                                   # 8 GiB > 4 GiB
    ("maps", 512 << 20, ("--address-space-limit", str(256 << 20))),
    ("touches", 512 << 20, ("--address-space-limit", str(256 << 20))),
    ("touches", 2 << 30, ("--address-space-limit", str(1 << 30))),
])
def test_no_mapping_beyond_the_address_space_cap(libs, isolated, behaviour, bytes_, options):
    ran = _hash(libs[behaviour], env=_env(bytes=bytes_), options=options)
    assert ran.hashed(), (ran.stderr, ran.kinds)


@pytest.mark.skipif(SANITIZED, reason="no address-space cap under AddressSanitizer")
def test_the_cap_is_an_option_and_0_lifts_it(libs, isolated):
    env = _env(bytes=8 << 30)
    ran = _hash(libs["maps"], env=env, options=("--address-space-limit", "0"))
    assert "DID 1: mapped it" in ran.stderr  # 8 GiB of address space, not touched
    smaller = _hash(libs["maps"], env=env, isolate=False, options=("--memory-limit",
                                                                     str(1 << 30)))
    assert smaller.hashed()  # --memory-limit caps without --isolate, as before
