"""The KAT gate: which libraries a campaign may time, decided from their KAT verdicts.

Every library is checked against its official KAT files by a :class:`KatChecker`
(:func:`ngcc.kat.check`, or a fake in tests) before anything is timed. Only ``PASS``
is timed, and ``NOKAT`` for a baseline function (which has no official KAT); any
other verdict is refused unless the campaign overrides it, and then every record is
marked. A library already checked in the run directory keeps its verdict when its
instance, library sha256 and KAT files are the same, unless the verdict was
environmental (``ERROR``: a full disk, no memory), which is checked again.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from ngcc.base import files as _files
from ngcc.base.errors import KatGateError, MeasurementWarning
from ngcc.base.progress import Progress
from ngcc.driver import kat
from ngcc.evidence import records as _records
from ngcc.evidence.model import (
    BuildEntry,
    BuildState,
    Implementation,
    Job,
    KatFacts,
    kat_log_relpath,
)
from ngcc.library.elf import elf_image_bytes
from ngcc.library.registry import Instance


class KatChecker(Protocol):
    """What the KAT gate calls to check libraries: :func:`ngcc.kat.check` by default.

    It returns one :class:`~ngcc.kat.KatResult` per library, in order, having written
    each KAT log to ``<out_dir>/<candidate>/<label>.log``.
    """

    def __call__(self, instances: Sequence[Instance], *, labels: Sequence[str | None],
                 files: Sequence[str], out_dir: Path, progress: bool | Progress,
                 timeout: float | None) -> list[kat.KatResult]:
        ...


def gate(candidate: str, verdict: str, override: bool) -> str:
    """How the gate treats a verdict: ``pass``, ``baseline``, ``override`` or ``refused``.

    A baseline instance (SM3, pseudohash, pseudoXOF) is no submission and has no
    official KAT: its ``NOKAT`` is admitted (its vectors are checked by the test
    suite). Any other verdict but ``PASS`` needs the explicit override.
    """
    if verdict == "PASS":
        return "pass"
    if candidate == "baseline" and verdict == "NOKAT":
        return "baseline"
    return "override" if override else "refused"


def reusable(entry: BuildEntry, inst: Instance, library_sha256: str,
             files: Sequence[str], run_dir: Path) -> bool:
    """Whether a stored entry still holds for the library: same instance, same library
    bytes, same KAT files, a verdict that is not environmental, nor a submission's
    ``NOKAT`` (a reference may have been given since: ``--manifest``, ``--official``), and
    its KAT log the one it names (by sha256: a deleted or rewritten log is checked again)."""
    unreferenced = entry.kat.verdict == "NOKAT" and entry.kat.gate != "baseline"
    return (not entry.kat.retried and not unreferenced and entry.instance == inst.name
            and entry.implementation.library_sha256 == library_sha256
            and entry.kat.files == tuple(files)
            and _records.evidence_file_defect(run_dir, entry.kat.log, entry.kat.log_sha256)
            is None)


def build_entry(inst: Instance, label: str, library_sha256: str, verdict: str,
                files: Sequence[str], run_dir: Path, override: bool,
                basis: str | None = None, reference: str | None = None,
                by_content: str | None = None) -> BuildEntry:
    """The ``build.json`` entry of a library checked with ``verdict`` (against
    ``basis``, ``reference``, ``by_content``: :class:`~ngcc.kat.KatResult`'s)."""
    decision = gate(inst.candidate, verdict, override)
    log = kat_log_relpath(inst.candidate, label)
    log_path = _records.path_in(run_dir, log)
    return BuildEntry(
        candidate=inst.candidate, instance=inst.name, label=label, family=inst.family,
        digest_bits=inst.digest_bits, implementation=Implementation.of(inst, library_sha256),
        elf_image_bytes=elf_image_bytes(inst.library),
        kat=KatFacts(verdict=verdict, files=tuple(files), log=log,
                     log_sha256=_files.sha256_file(log_path) if log_path.is_file() else None,
                     gate=decision, timed_without_pass=decision == "override",
                     basis=basis or None, reference=reference or None,
                     by_content=by_content or None))


def check(checker: KatChecker, libraries: Mapping[str, Instance],
          library_sha256: Mapping[str, str], files: Sequence[str], run_dir: Path,
          stored: BuildState | None, override: bool, progress: bool | Progress,
          timeout: float | None) -> dict[str, BuildEntry]:
    """The entry of every library (label → entry, in order): kept from ``stored`` where
    :func:`reusable`, else checked now (logs under ``run_dir/kat``)."""
    entries: dict[str, BuildEntry] = {}
    for label, inst in libraries.items():
        entry = stored.entry(label) if stored is not None else None
        if entry is not None and reusable(entry, inst, library_sha256[label], files, run_dir):
            entries[label] = entry
    to_check = [label for label in libraries if label not in entries]
    if to_check:
        results = checker([libraries[label] for label in to_check], labels=to_check,
                          files=tuple(files), out_dir=run_dir / "kat", progress=progress,
                          timeout=timeout)
        for label, result in zip(to_check, results, strict=True):
            entries[label] = build_entry(libraries[label], label, library_sha256[label],
                                         result.verdict, files, run_dir, override,
                                         result.basis, result.reference,
                                         result.by_content)
    return {label: entries[label] for label in libraries}


NOKAT_ADVICE = ("no reference to check against: give --manifest FILE or --official DIR, or "
                "--allow-kat-fail to time it unchecked")
"""What to do about a NOKAT verdict: nothing is wrong with the library, a reference is
missing."""


def refusal(label: str, entry: BuildEntry, run_dir: Path) -> str:
    """Why a refused library is not timed, and what to do."""
    log = run_dir / entry.kat.log
    if entry.kat.verdict == "NOKAT":
        return "%s: KAT verdict NOKAT (log %s), so it is not timed: %s" % (
            label, log, NOKAT_ADVICE)
    return ("%s: KAT verdict %s (log %s), so it is not timed; fix the implementation, or "
            "rerun with --allow-kat-fail to time it anyway (every record is then marked ⚠)"
            % (label, entry.kat.verdict, log))


def refuse(jobs: Sequence[Job], build: Mapping[str, BuildEntry], run_dir: Path) -> list[Job]:
    """``jobs`` with every unfinished job of a library the gate refused ``refused`` (the
    refusal as its error, and as a warning once per library)."""
    jobs = list(jobs)
    for label, entry in build.items():
        if entry.kat.gate != "refused":
            continue
        message = refusal(label, entry, run_dir)
        jobs = [replace(job, status="refused", error=message)
                if job.label == label and job.status != "done" else job for job in jobs]
        warnings.warn(message, MeasurementWarning, stacklevel=5)
    return jobs


def refuse_all(build: Mapping[str, BuildEntry], run_dir: Path) -> None:
    """Stop a campaign whose every library the gate refused.

    Raises:
        KatGateError: naming each library and its verdict, and what to do.
    """
    refused = ["%s %s" % (label, entry.kat.verdict) for label, entry in build.items()
               if entry.kat.gate == "refused"]
    if not refused or len(refused) < len(build):
        return
    unchecked = all(entry.kat.verdict == "NOKAT" for entry in build.values())
    raise KatGateError(
        "the KAT gate refused every instance (%s); see the logs under %s%s"
        % (", ".join(refused), run_dir / "kat", ": " + NOKAT_ADVICE if unchecked
           else ", or rerun with --allow-kat-fail to time them anyway (marked ⚠)"))
