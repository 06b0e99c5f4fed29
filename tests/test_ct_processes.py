"""The process limit in the ct mode (issue 45): the driver forks a child per length
there, so the limit cannot be installed before the mode runs, as in every other mode;
each child installs it before it loads the library, and the parent never loads it. A
library that starts a process, from its constructor or from CryptHash, ends the run at
the first with the same one line as in every other mode (reason ``forked``); one that
starts none is hashed at every length, each in a child of its own.

The first tests run the mode without valgrind (its client requests are no-ops there),
so they need no valgrind; the last runs it under memcheck, as ``ngcc ct`` does: valgrind
blocks every signal around a fork it runs for the library, so the limit's trap cannot
be handled there and the kernel ends the child with SIGSYS, which the parent reports
(as for posix_spawn in every mode)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _testlib import build_library

import ngcc
from ngcc.driver import ct_mode as _mode
from ngcc.driver import ending as _ending
from ngcc.driver import process as _process
from ngcc.driver import protocol as _protocol
from ngcc.driver.process import DriverError
from ngcc.driver.protocol import Conversation

STARTS_A_PROCESS = ("the library tried to start a process (fork, vfork or clone): no mode "
                    "allows one (ngcc-driver's seccomp filter refused it)")
UNDER_VALGRIND = ("the library tried to signal another process or to start one with its "
                  "signals blocked (ngcc-driver's seccomp filter ended it with SIGSYS)")
LENGTHS = (0, 8, 64, 61)

FORKING_SOURCE = r"""
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static void start(void)
{
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    if (child > 0)
        waitpid(child, NULL, 0);
}
__attribute__((constructor)) static void at_load(void)
{
    if (WHERE == 1)
        start();
}
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    (void)msg;
    if (WHERE == 2)
        start();
    memset(digest, (int)(bits & 0xFF), (size_t)d / 8);
    return 0;
}
"""


def _library(folder: Path, where: str) -> ngcc.Instance:
    code = {"nowhere": 0, "constructor": 1, "call": 2}[where]
    return ngcc.instance(build_library(folder, "Forks-%s-256" % where,
                                       "#define WHERE %d\n" % code + FORKING_SOURCE))


def _ct(inst: ngcc.Instance, tool: list[str] | None = None) -> tuple[Conversation,
                                                                      DriverError | None]:
    conversation = Conversation("ct", digest_bytes=inst.digest_bits // 8)
    options = ["--library", str(inst.library), "--digest-bits", str(inst.digest_bits),
               "--lengths", ",".join(str(bits) for bits in LENGTHS)]
    run = _process.run_driver(conversation, options, 120.0, bytes(8), tool=tool or ())
    try:
        _ending.judge(run, "%s in the ct mode" % inst.name)
    except DriverError as error:
        return conversation, error
    return conversation, None


@pytest.mark.parametrize("where", ["constructor", "call"])
def test_a_library_starting_a_process_in_ct_ends_the_run_with_one_line(tmp_path, sandbox, where):
    conversation, error = _ct(_library(tmp_path, where))
    assert error is not None
    assert (error.status, error.reason, error.detail) == ("error", "forked", STARTS_A_PROCESS)
    assert "\n" not in error.message
    assert _protocol.CT_LENGTH not in conversation.frames  # it ended at the first length


def test_a_library_starting_no_process_is_hashed_at_every_length_in_a_child_each(tmp_path):
    conversation, error = _ct(_library(tmp_path, "nowhere"))
    assert error is None
    assert _protocol.LOADED in conversation.frames
    assert [(bits, status, digest) for bits, status, digest in
            conversation.frames[_protocol.CT_LENGTH]] == [
        (bits, 0, bytes([bits & 0xFF]) * 32) for bits in LENGTHS]


def test_a_library_that_cannot_be_loaded_is_the_load_error(tmp_path):
    broken = tmp_path / "Broken-256.so"
    broken.write_bytes(b"not an ELF file")
    (tmp_path / "Broken-256.so.json").write_text(
        '{"name": "Broken-256", "digest_bits": 256, "family": "Broken"}')
    conversation, error = _ct(ngcc.instance(broken))
    assert error is not None and (error.status, error.reason) == ("error", "load")
    assert _protocol.LOADED not in conversation.frames


@pytest.mark.e2e
@pytest.mark.parametrize("where", ["constructor", "call"])
def test_under_memcheck_too(tmp_path, where):
    try:
        command = _mode.valgrind_command()
    except _mode.ValgrindMissingError as exc:
        pytest.skip(str(exc))
    run = _mode.memcheck_run(_library(tmp_path, where), bytes(8), LENGTHS, command)
    assert run.error is not None  # valgrind blocks every signal around a fork it runs:
    assert (run.error.status, run.error.reason) == ("crash", "signal")  # the kernel ends
    assert run.error.detail == UNDER_VALGRIND and run.results == ()  # the child
    clean = _mode.memcheck_run(_library(tmp_path, "nowhere"), bytes(8), LENGTHS, command)
    assert clean.error is None and [r.bits for r in clean.results] == list(LENGTHS)


def test_what_loading_reports_under_memcheck_belongs_to_no_length():
    from ngcc.stats import ct_statistics as _stats

    def message(text: str) -> str:
        return "<clientmsg><tid>1</tid><text>%s\n</text></clientmsg>" % text

    def error(what: str) -> str:
        return ("<error><unique>0x0</unique><tid>1</tid><kind>UninitCondition</kind>"
                "<what>%s</what><stack></stack></error>" % what)
    stream = ('<?xml version="1.0"?>\n<valgrindoutput><protocoltool>memcheck</protocoltool>'
              + message("ngcc-ct load") + error("at load") + message("ngcc-ct length 8")
              + error("in the call") + message("ngcc-ct load") + error("at load again")
              + message("ngcc-ct length 16") + "</valgrindoutput>\n")
    assert [(r.what, r.bits) for r in _stats.parse_xml(stream).reports] == [
        ("at load", None), ("in the call", 8), ("at load again", None)]
