"""What a library sees of ngcc from inside ngcc-driver, in every mode: none of ngcc's
environment but the fixed minimal one (``base/sandbox.minimal_environment``), no
trace of its request (the words, their text, the parent's pid: ``request.h``), and of
the file system around it its own file alone (``csrc/isolate/isolate.h``). The
compiler in its jail gets the same environment.

Each fixture library here looks for what it must not find and returns a code naming
it from CryptHash (or aborts from its constructor), so the run fails and says which.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from _testlib import build_library

import ngcc
from ngcc.driver import child as _child
from ngcc.driver import leak_mode
from ngcc.driver import process as _process
from ngcc.library.cc import Compiler

SECRET = "SECRET_TOKEN"

TEMPLATE = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 41 when the secret is in the environment, 42 when /proc/self/environ holds it. */
static int secret_in_environment(void)
{
    char text[65536];
    size_t got;
    FILE *environ_file = fopen("/proc/self/environ", "r");

    if (getenv("SECRET_TOKEN") != NULL)
        return 41;
    got = environ_file != NULL ? fread(text, 1, sizeof text, environ_file) : 0;
    if (environ_file != NULL)
        fclose(environ_file);
    return memmem(text, got, "SECRET_TOKEN", 12) != NULL ? 42 : 0;
}

__attribute__((constructor)) static void at_load(void)
{
    if (secret_in_environment() != 0)
        abort();
}

/* 10 + i when the process's writable memory holds needle i: a word of the request,
 * or the parent's pid as a word of its own. */
static int request_in_memory(void)
{
    char pid_word[32], line[512];
    const char *needles[] = {"--parent-pid", "--calls", "--result-fd", "--message-bytes",
                             "--library", "--digest-bits", pid_word};
    size_t count = sizeof needles / sizeof needles[0], lengths[8], i;
    FILE *maps = fopen("/proc/self/maps", "r");
    int found = 0;

    snprintf(pid_word, sizeof pid_word, "%c%s", 0, getenv("NGCC_TEST_PID"));
    for (i = 0; i < count; i++)  /* each with its NUL byte */
        lengths[i] = i == count - 1 ? strlen(pid_word + 1) + 2 : strlen(needles[i]) + 1;
    while (maps != NULL && found == 0 && fgets(line, sizeof line, maps) != NULL) {
        unsigned long start, stop;
        char perms[8];
        const char *at;
        if (sscanf(line, "%lx-%lx %7s", &start, &stop, perms) != 3 || perms[0] != 'r'
            || perms[1] != 'w')
            continue;
        for (at = (const char *)start; found == 0 && at < (const char *)stop; at++)
            for (i = 0; i < count; i++)
                if (*at == needles[i][0] && (size_t)((const char *)stop - at) >= lengths[i]
                    && at != pid_word && memcmp(at, needles[i], lengths[i]) == 0) {
                    found = 10 + (int)i;
                    break;
                }
    }
    if (maps != NULL)
        fclose(maps);
    return found;
}

/* 31 when a file beside the library opens, 32 when its folder lists a file but
 * itself (the view makes folders on the way to the library, but holds no other file). */
static int sees_its_folder(void)
{
    const char *folder = getenv("NGCC_TEST_FOLDER");
    FILE *sibling = fopen(getenv("NGCC_TEST_SIBLING"), "r");
    DIR *listing = opendir(folder);
    struct dirent *entry;

    if (sibling != NULL)
        return 31;
    while (listing != NULL && (entry = readdir(listing)) != NULL)
        if (entry->d_type != DT_DIR && strcmp(entry->d_name, "sees.so") != 0)
            return 32;
    return 0;
}

__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    static int looked;
    int found = looked ? 0 : LOOK();
    looked = 1;
    memset(digest, 0x33, (size_t)d / 8);
    (void)msg; (void)bits; (void)secret_in_environment; (void)request_in_memory;
    (void)sees_its_folder;
    return found;
}
"""

LOOKS = {"environment": "secret_in_environment", "request": "request_in_memory"}


@pytest.fixture(scope="module")
def libs(tmp_path_factory) -> dict[str, ngcc.Instance]:
    folder = tmp_path_factory.mktemp("view-libs")
    return {name: ngcc.instance(build_library(folder, name, TEMPLATE.replace("LOOK", look)))
            for name, look in LOOKS.items()}


def _every_mode(inst: ngcc.Instance, tmp_path: Path) -> dict[str, Callable[[], object]]:
    cpu = max(os.sched_getaffinity(0))
    return {
        "hash": lambda: _child.hash_in_child(inst, b"abc", 24),
        "cold": lambda: _child.cold_call(inst, 32),
        "trial": lambda: _child.trial(inst, 32, 10, 1, cpu=cpu),
        "probe": lambda: _child.probe(inst),
        "kat": lambda: _child.generate_kat(inst, "2_12", tmp_path / "kat.txt"),
        "leak": lambda: leak_mode.leak(inst, 32, 2000, 500, 7, lambda ticks, classes: False),
    }


MODES = ("hash", "cold", "trial", "probe", "kat", "leak")


@pytest.mark.parametrize("mode", MODES)
def test_a_secret_in_ngccs_environment_never_reaches_the_library(libs, mode, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setenv(SECRET, "ghp_not-for-the-library")
    _every_mode(libs["environment"], tmp_path)[mode]()  # no abort, no code 41 or 42


@pytest.mark.parametrize("mode", MODES)
def test_no_trace_of_the_request_is_left_for_the_library(libs, mode, tmp_path, monkeypatch):
    monkeypatch.setenv("NGCC_TEST_PID", str(os.getpid()))  # the driver's parent
    _every_mode(libs["request"], tmp_path)[mode]()  # no code 10 to 16


@pytest.mark.parametrize("where", ["home", "tmp"])
def test_a_library_saved_in_a_home_or_tmp_reads_nothing_beside_it(where, tmp_path, monkeypatch):
    """The view holds the library file alone, never its folder: saved in $HOME beside a
    key, or in /tmp beside another run's files, it finds neither."""
    folder = tmp_path / "home" if where == "home" else tmp_path  # tmp_path lies in /tmp
    folder.mkdir(exist_ok=True)
    (folder / ".ssh").mkdir()
    (folder / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (folder / "campaign.json").write_text("{}\n")
    sibling = folder / ("campaign.json" if where == "tmp" else ".ssh/id_rsa")
    if where == "home":
        monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("NGCC_TEST_FOLDER", str(folder))
    monkeypatch.setenv("NGCC_TEST_SIBLING", str(sibling))
    inst = ngcc.instance(build_library(folder, "sees",
                                       TEMPLATE.replace("LOOK", "sees_its_folder")))
    assert _child.hash_in_child(inst, b"abc", 24) == b"\x33" * 32  # no code 31 or 32
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")  # the control: the file is read there
    with pytest.raises(_process.DriverError, match="returned 31"):
        _child.hash_in_child(inst, b"abc", 24)


def test_the_compiler_gets_the_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(SECRET, "ghp_not-for-the-compiler")
    monkeypatch.setenv("NGCC_TEST_KEPT", "yes")
    monkeypatch.setenv("CC", "sh")  # a "compiler" that prints its environment
    status, text = Compiler(tmp_path, 60).run(["-c", "env"], tmp_path, "printing the environment")
    names = {line.split("=", 1)[0] for line in text.splitlines() if "=" in line}
    assert status == 0, text
    assert SECRET not in names and "NGCC_TEST_KEPT" in names and "PATH" in names
    assert "HOME" not in names
