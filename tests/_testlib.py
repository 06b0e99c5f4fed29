"""Instance libraries made by the tests themselves, to reach the error paths.

``FAILING_SOURCE`` is a CryptHash that misbehaves on purpose:
  - 13-byte messages: always returns 3;
  - a message whose first byte is 0xEE: returns 7 (so a test can tell which
    message bytes were hashed);
  - 21-byte messages: the 10th such call in the library's lifetime returns 5
    (a fresh library file has a fresh count);
  - anything else: digest bytes 0xAB, returns 0.
``MARKING_SOURCE`` shows another thread that a call is in progress.
``NO_ENTRY_SOURCE`` exports a function, but not CryptHash.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

FAILING_SOURCE = r"""
#include <string.h>
static unsigned long long calls_of_21_bytes;
__attribute__((visibility("default")))
int CryptHash(int digest_len_bits, const unsigned char *msg,
              unsigned long long msg_len_bits, unsigned char *digest)
{
    if (msg_len_bits == 13 * 8)
        return 3;
    if (msg_len_bits >= 8 && msg[0] == 0xEE)
        return 7;
    if (msg_len_bits == 21 * 8 && ++calls_of_21_bytes == 10)
        return 5;
    memset(digest, 0xAB, (size_t)digest_len_bits / 8);
    return 0;
}
"""

# While hashing, the file named by $NGCC_TEST_MARKER exists for 0.5 s: a thread
# that sees it has run while another thread was inside CryptHash.
MARKING_SOURCE = r"""
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
__attribute__((visibility("default")))
int CryptHash(int digest_len_bits, const unsigned char *msg,
              unsigned long long msg_len_bits, unsigned char *digest)
{
    const char *marker = getenv("NGCC_TEST_MARKER");
    struct timespec half_second = {0, 500000000L};
    FILE *file = marker ? fopen(marker, "w") : NULL;
    (void)msg;
    (void)msg_len_bits;
    if (file == NULL)
        return 1;
    fclose(file);
    nanosleep(&half_second, NULL);
    remove(marker);
    memset(digest, 0, (size_t)digest_len_bits / 8);
    return 0;
}
"""

NO_ENTRY_SOURCE = r"""
__attribute__((visibility("default")))
int NotCryptHash(int digest_len_bits) { return digest_len_bits; }
"""


#: C: the includes a hostile library needs and ``channel_fd()``, the descriptor of the
#: driver's pipe to the parent (the highest pipe above stderr), for libraries that forge
#: frames on it (tests/test_untrusted.py, benchmarks/trust_audit.py).
CHANNEL_FD_SOURCE = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
static int channel_fd(void)
{
    DIR *fds = opendir("/proc/self/fd");
    struct dirent *entry;
    int found = -1;
    while (fds && (entry = readdir(fds)) != NULL) {
        char path[64], target[64];
        int fd = atoi(entry->d_name);
        ssize_t n;
        snprintf(path, sizeof path, "/proc/self/fd/%s", entry->d_name);
        n = readlink(path, target, sizeof target - 1);
        if (fd > 2 && n > 0 && (target[n] = 0, strncmp(target, "pipe:", 5) == 0))
            found = fd;
    }
    if (fds)
        closedir(fds);
    return found;
}
"""

#: C statements: write an ERROR frame (DRIVER_ERR_HASH) whose text is the macro ``TEXT``
#: on the driver's channel, then an END frame, and exit as if all went well.
FORGE_ERROR_STATEMENTS = r"""{
    static const char text[] = TEXT;
    unsigned char frame[8 + 8 + sizeof text - 1 + 8];
    unsigned int length = 8 + sizeof text - 1;
    int fd = channel_fd();
    memset(frame, 0, sizeof frame);
    frame[0] = 3;                                   /* ERROR */
    memcpy(frame + 4, &length, 4);
    frame[8] = 3;                                   /* DRIVER_ERR_HASH */
    memcpy(frame + 16, text, sizeof text - 1);
    frame[16 + sizeof text - 1] = 13;               /* END */
    if (fd >= 0 && write(fd, frame, sizeof frame) < 0)
        return 1;
    _exit(0);
}"""


def compiler() -> list[str]:
    """The C compiler ($CC or cc); skips the test when there is none."""
    cc = shlex.split(os.environ.get("CC", "cc"))
    if shutil.which(cc[0]) is None:
        pytest.skip("no C compiler (%s) to build a test library" % cc[0])
    return cc


# A library that may keep its last answer (issue 45's honesty batch: test_honesty.py,
# benchmarks/audit_issue45.py): an FNV-1a over every byte, spread over the digest.
# KEEP 0: none kept; KEEP 1: the same buffer, length and first 8 bytes as the last
# call give the last digest (every digest right); KEEP 2: the same buffer and length
# give it, whatever the bytes (stale digests).
KEEPING_SOURCE = r"""
#include <string.h>
static const unsigned char *last_msg;
static unsigned long long last_bits;
static unsigned char last_head[8], last_digest[128];
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    unsigned long long h = 1469598103934665603ULL, i, n = bits / 8;
    if (KEEP && msg == last_msg && bits == last_bits
            && (KEEP == 2 || memcmp(msg, last_head, 8) == 0)) {
        memcpy(digest, last_digest, (size_t)d / 8);
        return 0;
    }
    for (i = 0; i < n; i++)
        h = (h ^ msg[i]) * 1099511628211ULL;
    for (i = 0; i < (unsigned long long)d / 8; i++)
        digest[i] = (unsigned char)(h >> (8 * (i % 8)));
    if (n >= 8) {
        last_msg = msg; last_bits = bits;
        memcpy(last_head, msg, 8); memcpy(last_digest, digest, (size_t)d / 8);
    }
    return 0;
}
"""


def build_library(folder: Path, name: str, source: str, digest_bits: int = 256,
                  sidecar: bool = True) -> Path:
    """Compile ``source`` into ``folder/<name>.so``; with ``sidecar``, also write the
    ``<name>.so.json`` that makes the path usable as an instance."""
    c_file = folder / ("%s.c" % name)
    c_file.write_text(source)
    library = folder / ("%s.so" % name)
    # A plain library even under NGCC_SANITIZE: the sanitized process may load it.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    subprocess.run(compiler() + ["-std=c99", "-O1", "-fPIC", "-shared", "-fvisibility=hidden",
                                 "-o", str(library), str(c_file)],
                   check=True, capture_output=True, env=env)
    if sidecar:
        Path(str(library) + ".json").write_text(
            json.dumps({"name": name, "digest_bits": digest_bits, "family": name}))
    return library


def driver_request(words: list[str]) -> int:
    """A descriptor holding a driver request (``ngcc-driver --request-fd FD``): the
    words, each ended by a NUL byte, read from the start. The caller passes it to the
    driver (``pass_fds``) and closes its own copy."""
    fd = os.memfd_create("test-request")
    os.write(fd, b"".join(word.encode() + b"\0" for word in words))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


# A stand-in for ngcc-driver that says what a test wants on the result channel:
# ``body`` is Python calling frame(type, payload) (struct is imported, pid is its pid;
# args are the request's words).
_FAKE_DRIVER = '''#!%s -I
import os, struct, sys
request = int(sys.argv[sys.argv.index("--request-fd") + 1])
args = os.read(request, 1 << 16).decode().split("\\0")[:-1]
fd = int(args[args.index("--result-fd") + 1])
pid = os.getpid()
def frame(kind, payload=b""):
    os.write(fd, struct.pack("<II", kind, len(payload)) + payload)
%s
'''


def fake_driver(folder: Path, body: str) -> Path:
    """An executable that answers every request with the frames ``body`` writes."""
    import sys

    path = folder / "fake-driver"
    path.write_text(_FAKE_DRIVER % (sys.executable, body))
    path.chmod(0o755)
    return path


# Runs its arguments under a seccomp filter that refuses unshare(2) with EPERM, as a
# container's profile may: the driver and ngcc-jail must then refuse to run.
NO_UNSHARE_SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    struct sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog filter = {4, program};
    (void)argc;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter, 0, 0) != 0)
        return 99;
    execv(argv[1], argv + 1);
    return 98;
}
"""
