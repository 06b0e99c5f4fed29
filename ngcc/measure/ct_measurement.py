"""The constant-time analysis of a library (``ngcc ct``, :func:`constant_time`): its
debug twin (:mod:`ngcc.library.ct_twin`) hashes messages of every length in
:data:`LENGTHS` in the driver's ``ct`` mode under valgrind memcheck
(:mod:`ngcc.driver.ct_mode`), each length in a child process of one driver run, the
message marked undefined and its length defined, so that memcheck reports each branch
and address the message decides and a length-dependent block count is no finding.
Each report becomes a site
(:mod:`ngcc.stats.ct_statistics`); the result is a :class:`CtEvidence`
(:mod:`ngcc.evidence.ct_evidence`).

The verdict is earned or withheld: ``constant-time`` (no site at any length),
``leaks`` (its sites), or ``not analysed`` with the reason: valgrind missing, no
twin (no sources), an instruction valgrind cannot decode (named), a crash or a
failure under valgrind. What memcheck cannot see (instructions whose time depends on
their operands, the microarchitecture) is the timing test's, ``ngcc leak``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ngcc.base.errors import BuildError, LibraryError, NgccError
from ngcc.driver import ct_mode as _mode
from ngcc.driver import hashing as _hashing
from ngcc.driver.child import default_message
from ngcc.evidence.ct_evidence import (
    NOT_ANALYSED,
    CtEvidence,
    CtTwin,
    CtValgrind,
)
from ngcc.library import ct_twin as _twin
from ngcc.library.registry import Instance
from ngcc.stats import ct_statistics as _stats

#: Message lengths in whole bytes: empty, one byte, a partial 64-byte block, one block,
#: several 64-byte blocks (one and a part of a 144-byte one), several blocks of the
#: widest family (WChain-V2-1024: 288 bytes).
BYTE_LENGTHS = (0, 1, 33, 64, 200, 600)
#: Bit lengths that are not a multiple of 8, where the library takes them (one that
#: CryptHash refuses is recorded in ``refused_lengths``): a partial first byte, and a
#: partial byte after several blocks.
PARTIAL_BIT_LENGTHS = (1, 7, 8 * 200 + 3)
#: Every length hashed, in bits, in order.
LENGTHS = tuple(sorted({8 * n for n in BYTE_LENGTHS} | set(PARTIAL_BIT_LENGTHS)))

_UNHANDLED = re.compile(r"unhandled instruction bytes:((?: 0x[0-9A-Fa-f]+)+)")


def constant_time(target: Instance | Path, *, label: str, candidate: str | None = None,
                  valgrind: Sequence[str] | None = None) -> CtEvidence:
    """The constant-time analysis of ``target``: a library (``Instance``, built-in or
    made by ``ngcc build``) or a submission folder (``Path``), under ``label``. Never
    raises for the library's sake: what stops the analysis is a ``not analysed``
    verdict with its reason."""
    started = time.monotonic()
    inst = target if isinstance(target, Instance) else None
    base = dict(instance=inst.name if inst else label, label=label,
                candidate=candidate or (inst.candidate if inst else "external"),
                variant=inst.variant if inst else "external",
                library=str(inst.library) if inst else str(target))
    try:
        command = list(valgrind) if valgrind is not None else _mode.valgrind_command()
    except _mode.ValgrindMissingError as exc:
        return _record(base, verdict=NOT_ANALYSED, reason=str(exc))
    memcheck = CtValgrind(_mode.valgrind_version(command), _mode.MEMCHECK_OPTIONS)
    with tempfile.TemporaryDirectory(prefix="ngcc-ct-") as scratch:
        try:
            twin = _twin.twin(inst, Path(scratch)) if inst else \
                _twin.folder_twin(Path(str(target)), Path(scratch), candidate)
        except (_twin.TwinError, BuildError, LibraryError) as exc:
            return _record(base, verdict=NOT_ANALYSED, valgrind=memcheck,
                              reason="no debug twin: %s" % exc)
        if inst is None:
            base.update(instance=twin.instance.name,
                        candidate=candidate or twin.instance.candidate)
        return _analyse(base, twin, inst, command, memcheck, started)


def _analyse(base: dict[str, str], twin: _twin.DebugTwin, inst: Instance | None,
             command: list[str], memcheck: CtValgrind, started: float) -> CtEvidence:
    """Every length under memcheck, then the sites and the verdict."""
    message = default_message((max(LENGTHS) + 7) // 8)
    run = _mode.memcheck_run(twin.instance, message, LENGTHS, command)
    output = _parsed(run)
    if isinstance(output, str) or run.error is not None:
        reason = output if isinstance(output, str) else _failure(run, output, twin)
        return _withheld(base, twin, memcheck, reason, run.isolation, started)
    refused = tuple(r.bits for r in run.results if r.status != 0 and r.bits % 8)
    for result in run.results:
        if result.status != 0 and not result.bits % 8:
            return _withheld(base, twin, memcheck, "CryptHash returned %d at %d bits"
                             % (result.status, result.bits), run.isolation, started)
    analysed = tuple(r.bits for r in run.results if r.bits not in refused)
    found = _stats.sites([r for r in output.reports if r.bits in analysed],
                         twin.instance.library, twin.source_dir)
    same = None if inst is None or inst.missing_cpu_features else all(
        r.digest == _native_digest(inst, message, r.bits) for r in run.results
        if r.bits in analysed)
    return _record(base, verdict=_stats.verdict(found), sites=found, lengths=analysed,
                      refused_lengths=refused, twin=_twin_record(twin, same),
                      valgrind=memcheck, isolation=run.isolation,
                      seconds=round(time.monotonic() - started, 3))


def _parsed(run: _mode.MemcheckRun) -> _stats.MemcheckOutput | str:
    try:
        return _stats.parse_xml(run.xml)
    except _stats.MemcheckOutputError as exc:
        return "%s (%s)" % (exc, run.error or "the run itself succeeded")


def _failure(run: _mode.MemcheckRun, output: _stats.MemcheckOutput,
             twin: _twin.DebugTwin) -> str:
    """Why a length stopped the analysis: the instruction valgrind cannot decode, a
    crash (where), or the driver's own words."""
    # where: memcheck's report of the bad access, else the stack of the fatal signal
    # (under the driver's fault handler that one may name a later line)
    stacks = [r.stack for r in output.reports if r.kind.startswith("Invalid")] \
        + [signal.stack for signal in output.fatal]
    where = ""
    for stack in stacks:
        located = _stats.site_frame(stack, twin.instance.library, twin.source_dir)
        if located is not None:
            frame, relative = located
            where = " in %s (%s:%d)" % (frame.function or "?", relative, frame.line)
            break
    unhandled = _UNHANDLED.search(run.stderr)
    if unhandled is not None:
        return "an instruction valgrind cannot decode: %s%s" % (
            name_instruction(unhandled.group(1).split()), where)
    error = run.error
    bits = LENGTHS[min(len(run.results), len(LENGTHS) - 1)]  # the first length not done
    if error is not None and error.status == "crash":
        signals = [signal.name for signal in output.fatal if signal.name]
        return "it crashed under valgrind at %d bits%s: %s" % (
            bits, where, signals[0] if signals else error.detail)
    return "it failed under valgrind at %d bits: %s" % (bits, error)


def name_instruction(codes: Sequence[str]) -> str:
    """The instruction whose first bytes valgrind printed (``0xC4 0xE2 ...``), named by
    ``objdump`` where there is one, else its bytes."""
    data = bytes(int(code, 16) for code in codes)
    shown = " ".join("%02x" % b for b in data)
    objdump = shutil.which("objdump")
    if objdump is None:
        return "bytes %s" % shown
    with tempfile.NamedTemporaryFile(suffix=".bin") as raw:
        raw.write(data)
        raw.flush()
        try:
            done = subprocess.run([objdump, "-D", "-b", "binary", "-m", "i386:x86-64",
                                   raw.name], capture_output=True, text=True, timeout=30,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired):
            return "bytes %s" % shown
    for line in done.stdout.splitlines():
        match = re.match(r"\s*0:\s+((?:[0-9a-f]{2} )+)\s*(\S.*)$", line)  # offset 0
        if match:
            return "%s (bytes %s)" % (" ".join(match.group(2).split("#")[0].split()), shown)
    return "bytes %s" % shown


def _record(base: dict[str, str], **fields: Any) -> CtEvidence:
    """The evidence of ``base``'s library with ``fields``."""
    return CtEvidence(**{**base, **fields})


def _withheld(base: dict[str, str], twin: _twin.DebugTwin, memcheck: CtValgrind,
              reason: str, isolation: str, started: float) -> CtEvidence:
    return _record(base, verdict=NOT_ANALYSED, reason=reason,
                      twin=_twin_record(twin, None), valgrind=memcheck, isolation=isolation,
                      seconds=round(time.monotonic() - started, 3))


def _twin_record(twin: _twin.DebugTwin, same: bool | None) -> CtTwin:
    return CtTwin(str(twin.source_dir), twin.cflags, twin.sha256, same)


def _native_digest(inst: Instance, message: bytes, bits: int) -> bytes | None:
    """The library's own digest (None where it fails): the twin must compute the same
    function, or memcheck checked something else."""
    try:
        return _hashing.hash(inst, message, bits)
    except NgccError:
        return None
