"""The driver's ``ct`` mode under valgrind: one message hashed by a debug twin with the
message marked undefined for memcheck (``csrc/driver/`` ``ct``), the digest and the
status marked defined after the call, in the driver's isolation and seccomp filter.

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
class MemcheckRun:
    """One message hashed under memcheck: its bit length, memcheck's XML, the digest
    (None when the run failed: ``error``), valgrind's own stderr lines (where it says
    which instruction it could not decode) and what the run ran in."""

    bits: int
    xml: str
    digest: bytes | None
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


def memcheck_run(inst: Instance, message: bytes, bits: int, valgrind: Sequence[str], *,
                 timeout: float = CT_TIMEOUT) -> MemcheckRun:
    """Hash the first ``bits`` bits of ``message`` with ``inst`` (a debug twin) in the
    driver's ``ct`` mode under memcheck."""
    conversation = Conversation("ct", digest_bytes=inst.digest_bits // 8)
    options = ["--library", str(inst.library), "--digest-bits", str(inst.digest_bits),
               "--bits", str(bits)]
    with tempfile.TemporaryFile() as xml:
        descriptor = xml.fileno()
        run = _process.run_driver(
            conversation, options, timeout, message[: (bits + 7) // 8],
            tool=[*valgrind, *MEMCHECK_OPTIONS, "--xml-fd=%d" % descriptor],
            pass_fds=(descriptor,))
        xml.seek(0)
        text = xml.read().decode("utf-8", errors="replace")
    try:
        _process.judge(run, "%s hashing %d bits under memcheck" % (inst.name, bits))
    except DriverError as exc:
        return MemcheckRun(bits, text, None, exc, run.stderr_tail, run.isolation)
    return MemcheckRun(bits, text, bytes(conversation.frames[wire.DIGEST]), None,
                       run.stderr_tail, run.isolation)
