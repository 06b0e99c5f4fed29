"""The driver's ``ct`` mode under valgrind: messages of several lengths hashed by a
debug twin, each in a child process of its own, the message marked undefined for
memcheck (``csrc/driver/`` ``ct``) and the digest and the status marked defined after
the call, in the driver's isolation and seccomp filter.

Memcheck writes its XML to a descriptor the driver inherits (``--xml-fd``), not to a
file: under the isolation the driver's processes see no writable folder of this
host. Reading the XML is :mod:`ngcc.stats.ct_statistics`'s; the analysis that runs a
library over its lengths is :mod:`ngcc.measure.ct_measurement`.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from ngcc.base.errors import NgccError
from ngcc.driver import ending as _ending
from ngcc.driver import process as _process
from ngcc.driver import protocol as wire
from ngcc.driver.process import DriverError
from ngcc.driver.protocol import Conversation
from ngcc.library.registry import Instance

#: memcheck's options: XML reports, every report kept (``--error-limit=no``), deep
#: enough stacks to reach the submission's code from a libc routine, no leak check
#: (memory the library keeps is not the question) and no gdb server.
MEMCHECK_OPTIONS = ("--tool=memcheck", "--xml=yes", "--error-limit=no", "--num-callers=16",
                    "--leak-check=no", "--vgdb=no")
#: Seconds one length may take under memcheck (start-up and a slowed-down library).
CT_TIMEOUT = 300.0


class ValgrindMissingError(NgccError):
    """No valgrind on PATH: the constant-time analysis cannot run."""


@dataclass(frozen=True)
class LengthResult:
    """What one length gave: its bits, CryptHash's return and the digest."""

    bits: int
    status: int
    digest: bytes


@dataclass(frozen=True)
class MemcheckRun:
    """The lengths hashed under memcheck in one driver run: each one's result (in
    order; those before a failure only), memcheck's XML, how the run failed (None: it
    did not), valgrind's own stderr lines (where it says which instruction it could not
    decode) and what the run ran in."""

    results: tuple[LengthResult, ...]
    xml: str
    error: DriverError | None
    stderr: str
    isolation: str


def valgrind_command() -> list[str]:
    """``valgrind`` on PATH.

    Raises:
        ValgrindMissingError: there is none.
    """
    found = shutil.which("valgrind")
    if found is None:
        raise ValgrindMissingError("valgrind is not installed (apt-get install valgrind)")
    return [found]


def valgrind_version(command: Sequence[str]) -> str:
    """``valgrind --version``'s line (``valgrind-3.19.0``)."""
    done = subprocess.run([*command, "--version"], capture_output=True, text=True,
                          check=False, timeout=60)
    return done.stdout.strip() or done.stderr.strip()


def memcheck_run(inst: Instance, message: bytes, lengths: Sequence[int],
                 valgrind: Sequence[str], *, timeout: float = CT_TIMEOUT) -> MemcheckRun:
    """Hash the first ``bits`` bits of ``message`` for each of ``lengths`` with ``inst``
    (a debug twin) in the driver's ``ct`` mode under memcheck, each length in a child
    process of its own (memcheck's XML marks each one's reports)."""
    conversation = Conversation("ct", digest_bytes=inst.digest_bits // 8)
    options = ["--library", str(inst.library), "--digest-bits", str(inst.digest_bits),
               "--lengths", ",".join(str(bits) for bits in lengths)]
    with tempfile.TemporaryFile() as xml:
        descriptor = xml.fileno()
        run = _process.run_driver(
            conversation, options, timeout, message[: (max(lengths) + 7) // 8],
            tool=[*valgrind, *MEMCHECK_OPTIONS, "--xml-fd=%d" % descriptor],
            pass_fds=(descriptor,))
        xml.seek(0)
        text = xml.read().decode("utf-8", errors="replace")
    results = tuple(LengthResult(*frame) for frame in conversation.frames.get(wire.CT_LENGTH, ()))
    try:
        _ending.judge(run, "%s under memcheck" % inst.name)
    except DriverError as exc:
        return MemcheckRun(results, text, exc, run.stderr_tail, run.isolation)
    return MemcheckRun(results, text, None, run.stderr_tail, run.isolation)
