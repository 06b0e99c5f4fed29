"""The official known-answer tests (KAT): regenerate an instance's KAT files and
check them against the official manifests.

:func:`check` drives an instance library through the official KAT generator
(``spec/kat-format.md``, reimplemented in ``csrc/common/kat.c``) in the trial driver
(``ngcc-driver``, a process of its own: ``ngcc/_child.py``), every message ending
right before an unreadable guard page, compares each file's canonical SHA-256 with
the manifest line of that file name (whatever folder the line names), runs the guard probe
(every length again at the start of a page after a guard page), and writes a KAT log
per instance::

    >>> import ngcc.kat
    >>> [result] = ngcc.kat.check("Wish512", files=("2_12", "2_23"))
    >>> result.verdict
    'PASS'

Each file is checked against the first reference there is (its *basis*, one of
:data:`BASES`, named in the result, the KAT log and the report): the manifest line of
its name in the manifest given (``manifest=``, or ``ngcc build --manifest``), else in
the candidate's shipped manifest (``kat/<candidate>.sha256``); else the official file
in ``official_dir``; else the KAT file the submission ships; else none (``NOKAT``).

Verdicts (per file, and per instance as the worst of its files):

=========  ==============================================================
PASS       the canonical digest equals the manifest line
MISMATCH   it does not (or CryptHash returned nonzero); when the official
           file is at hand the first differing record is named
NOKAT      no reference to check the file against: no manifest line, no
           official file given, no KAT file shipped with the submission
           (e.g. the SM3 baseline)
CRASH      the instance library killed the generating process (reading past
           or before the message faults at once: the detail names the guard)
TIMEOUT    generation took longer than ``timeout``
ERROR      the generator could not run: out of memory for the 1 GiB
           message of KAT_2_33, library not loadable, disk full
=========  ==============================================================
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from ngcc import _child
from ngcc.base.clock import utc_now
from ngcc.base.errors import KatError
from ngcc.base.files import atomic_write_bytes, sha256_file
from ngcc.base.names import check_name, is_valid_name
from ngcc.base.progress import Progress, Task, progress_of
from ngcc.base.untrusted import load_json_file
from ngcc.base.version import __version__
from ngcc.library import candidates as _candidates
from ngcc.library.katfile import (
    DEFAULT_FILES,
    FILES,
    TAGS,
    ManifestEntry,
    canonical_sha256,
    file_name,
    first_difference,
    manifest_entry,
    normalise_files,
    read_manifest,
    submission_kat_folders,
)
from ngcc.library.registry import Instance, instance, manifest_path, run_labels, sidecar_path

__all__ = ["BASES", "DEFAULT_FILES", "FILES", "VERDICTS", "KatFileResult", "KatProbeResult",
           "KatResult", "check", "file_name"]

VERDICTS = ("PASS", "MISMATCH", "NOKAT", "CRASH", "TIMEOUT", "ERROR")
"""Every verdict. An instance's verdict is its files' worst, in the order CRASH, TIMEOUT,
MISMATCH, ERROR, NOKAT, PASS."""

BASES = ("shipped manifest", "manifest", "official files", "submission files", "none")
"""What a file's verdict rests on: a line of the manifest ngcc ships for the candidate,
of a manifest the user gave, the official file the user gave, the KAT file the
submission ships, or nothing (``NOKAT``)."""

_PathArg = str | os.PathLike[str]  # a path given as str or Path

_SEVERITY = ("CRASH", "TIMEOUT", "MISMATCH", "ERROR", "NOKAT", "PASS")


@dataclass(frozen=True)
class KatFileResult:
    """The check of one KAT file.

    Attributes:
        kind: ``"2_12"``, ``"2_23"``, ``"2_33"`` or ``"loop"``.
        name: the official file name, e.g. ``"KAT_2_12_Wish512.txt"``.
        verdict: one of :data:`VERDICTS`.
        seconds: generation time measured in the child (None if it did not finish).
        size: file size in bytes (None if not generated).
        canonical_sha256: SHA-256 of the file's canonical text (kat-format.md §10).
        expected_sha256: the manifest's digest (None without a manifest line).
        detail: why the verdict is not PASS, or how the file compares with the
            official copy.
        path: the generated file when kept (``keep=True``), else None.
        basis: what the verdict rests on, one of :data:`BASES`.
        reference: the manifest, official file or submission file it was checked
            against (empty for ``none``).
    """

    kind: str
    name: str
    verdict: str
    seconds: float | None = None
    size: int | None = None
    canonical_sha256: str | None = None
    expected_sha256: str | None = None
    detail: str = ""
    path: Path | None = None
    basis: str = "none"
    reference: str = ""


@dataclass(frozen=True)
class KatProbeResult:
    """The guard probe of one instance: every length of ``ngcc._child.PROBE_BITS``
    hashed with the message at the start of a page that follows an unreadable page
    and at the end of one before an unreadable page (the KAT files cover the end).

    Attributes:
        verdict: ``PASS``; ``CRASH`` when the library read outside the message (the
            detail says where) or gave two digests for one message; ``MISMATCH``
            when CryptHash returned nonzero; ``TIMEOUT``; ``ERROR``.
        detail: what was checked, or why the verdict is not PASS.
        lengths: how many message lengths passed.
    """

    verdict: str
    detail: str
    lengths: int = 0


@dataclass(frozen=True)
class KatResult:
    """The KAT check of one instance.

    Attributes:
        instance: the instance name, e.g. ``"Wish512"``.
        candidate: its candidate id, e.g. ``"hash-35"``.
        verdict: the worst verdict of its files (``"PASS"`` only if every file passed).
        log: the KAT log, ``<out_dir>/<candidate>/<label>.log``.
        files: one :class:`KatFileResult` per file checked, in generator order.
        variant: the implementation checked (``"ref"``, ``"opt"``, ``"external"``).
        probe: the guard probe (its verdict counts in ``verdict``).
        label: the library's label: the instance name, ``Wish512@opt`` for another
            built-in variant, ``Pavelor-512@perf`` for one of two builds of one
            instance, or the label given (see :func:`ngcc.library.registry.run_labels`).
        basis: what the files' verdicts rest on: their :data:`BASES`, each once,
            comma-separated (``"shipped manifest"``); empty when unknown.
        reference: the manifest or folder checked against (empty for ``none``).
    """

    instance: str
    candidate: str
    verdict: str
    log: Path
    files: tuple[KatFileResult, ...]
    variant: str = ""
    probe: KatProbeResult | None = None
    label: str = ""
    basis: str = ""
    reference: str = ""

    @property
    def passed(self) -> bool:
        """True when every file checked is PASS."""
        return self.verdict == "PASS"


def check(instances: _PathArg | Instance | Iterable[_PathArg | Instance], *,
          files: str | Iterable[str] = DEFAULT_FILES,
          out_dir: _PathArg | None = None,
          keep: bool = False, progress: bool | Progress = True,
          timeout: float | None = None,
          official_dir: _PathArg | None = None,
          candidate: str | None = None,
          labels: Iterable[str | None] = (),
          manifest: _PathArg | None = None) -> list[KatResult]:
    """Generate the KAT files of each instance and check them against the manifest.

    Instances are checked one after another (KAT_2_33 needs 1 GiB of memory per
    run), each file in a process of its own (the trial driver) with its messages
    against guard pages, so a crashing, over-reading or hanging library gives a
    CRASH or TIMEOUT verdict instead of taking the caller down.

    Args:
        instances: one instance or several: names (``"Wish512"``, ``"Wish512:opt"``),
            :class:`~ngcc.Instance` objects or library paths — anything
            :func:`ngcc.instance` accepts.
        files: which files, from ``"2_12"``, ``"2_23"``, ``"2_33"``, ``"loop"``
            (case-insensitive; a comma-separated string is fine). The default is
            the two quick ones; ``2_33`` takes minutes and 1 GiB, ``loop`` makes
            10^6 hash calls.
        out_dir: where the logs go (``<out_dir>/<candidate>/<label>.log``) and the
            files are generated (``<out_dir>/<candidate>/<label>/``). Default: a
            new temporary folder, kept so the logs can be read.
        keep: keep the generated files (otherwise they are deleted after the check).
        progress: show a progress bar per file on stderr when it is a terminal,
            else a line per finished file (True); nothing (False); or report to a
            :class:`ngcc.base.progress.Progress`.
        timeout: seconds allowed per file and for the guard probe (None: the defaults
            of ``ngcc._child.KAT_TIMEOUTS``, 10 min for the quick files, 2 h for the
            long ones; ``math.inf``: no limit).
        official_dir: a folder with the official KAT files, laid out as
            ``<candidate>/<folder>/KAT_*.txt``, ``<folder>/KAT_*.txt`` (the folder the
            instance name or the registry's manifest folder) or flat: the reference of
            a file no manifest line covers, and where a MISMATCH against a manifest
            line finds the first differing record. Default: none.
        candidate: the candidate id of the library paths among ``instances``, whose
            manifest is then used (default: from the ``ngcc build`` sidecar, else the
            manifest that lists the instance name).
        labels: a label per instance, in order (None or missing: derived, so two
            builds of one instance get two logs); the instance name still selects the
            manifest line.
        manifest: a ``kat.sha256`` manifest ngcc does not ship, checked instead of the
            candidate's (default: the one ``ngcc build --manifest`` recorded, else the
            shipped one); a line matches a file by its name, whatever its folder.
        One :class:`KatResult` per instance, in the order given.

    Raises:
        UnknownInstanceError, LibraryError: an instance that cannot be found.
        ValueError: an unknown file kind, a timeout that is not a positive number, or
            an ``official_dir`` that is not a folder.
        InvalidNameError: a label that breaks the name rule or is given twice.
        KatError: a corrupt or missing manifest, or one that changed since the build
            recorded it.
    """
    chosen = _resolve_instances(instances, candidate)
    named = run_labels(chosen, list(labels))
    kinds = normalise_files(files)
    if timeout is not None and not timeout > 0:  # NaN too
        raise ValueError("timeout must be a positive number of seconds, got %r" % timeout)
    if official_dir is not None and not Path(official_dir).is_dir():
        raise ValueError("official_dir %s is not a folder (of the official KAT files)"
                         % official_dir)
    root = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="ngcc-kat-"))
    reporter = progress_of(progress)
    given = Path(manifest) if manifest is not None else None
    if given is not None and not given.is_file():
        raise KatError("the manifest %s is not a file" % given)
    return [_check_instance(inst, label, kinds, root, keep, reporter, timeout, official_dir,
                            given) for inst, label in zip(chosen, named, strict=True)]


def _resolve_instances(instances: object, candidate: str | None) -> list[Instance]:
    if isinstance(instances, (str, os.PathLike, Instance)):
        instances = [instances]
    return [instance(item, candidate) for item in instances]  # type: ignore[attr-defined]


def _check_instance(inst: Instance, label: str, kinds: list[str], root: Path, keep: bool,
                    progress: Progress, timeout: float | None,
                    official_dir: _PathArg | None, given: Path | None) -> KatResult:
    # names are data, never paths: the log's and the files' names obey the name rule
    folder = root / check_name(inst.candidate, "candidate id") / check_name(label, "label")
    folder.mkdir(parents=True, exist_ok=True)
    jobs = [(kind, folder / file_name(kind, inst.name)) for kind in kinds]
    manifest_file, manifest_basis = reference_manifest(inst, given)
    manifest = _manifest(manifest_file)
    outcomes = []
    for kind, path in jobs:
        with progress.task("KAT_%s_%s" % (TAGS[kind], label)) as task:
            outcome = _generate(inst, TAGS[kind], path, timeout, task)
            task.finished("generated in %.2f s" % outcome.seconds
                          if outcome.status == "done" and outcome.seconds is not None
                          else outcome.status)
        outcomes.append(outcome)
    reference = _Reference(manifest_file, manifest_basis, manifest,
                           Path(official_dir) if official_dir is not None else None)
    results = tuple(_judge(inst, kind, path, outcome, reference, keep)
                    for (kind, path), outcome in zip(jobs, outcomes, strict=True))
    probe = _probe(inst, timeout)
    if not keep:
        _remove_if_empty(folder)
    verdicts = [r.verdict for r in results] + [probe.verdict]
    verdict = next(v for v in _SEVERITY if v in verdicts)
    log = root / inst.candidate / (label + ".log")
    basis = ", ".join(dict.fromkeys(r.basis for r in results))
    where = ", ".join(dict.fromkeys(_reference_of(r, manifest_file) for r in results
                                    if r.basis != "none"))
    _write_log(log, inst, label, results, probe, verdict, manifest_file, basis)
    return KatResult(inst.name, inst.candidate, verdict, log, results, inst.variant, probe,
                     label, basis, where)


def _reference_of(result: KatFileResult, manifest: Path) -> str:
    """What an instance's record names as its reference: the manifest, or the folder of
    the official or submission files."""
    if result.basis in ("shipped manifest", "manifest"):
        return str(manifest)
    return str(Path(result.reference).parent)


@dataclass(frozen=True)
class _Outcome:
    """What became of one file: ``status`` is ``done``, ``error``, ``crash`` or
    ``timeout``; ``error_type`` and ``message`` say why when it is not ``done``."""

    status: str
    seconds: float | None = None
    error_type: str = ""
    message: str = ""


#: The exception type a KAT log names for each reason the driver gives.
_ERROR_TYPES = {"hash": "HashError", "memory": "KatMemoryError", "load": "LibraryError",
                "output": "OSError", "kat": "ValueError"}


def _generate(inst: Instance, tag: str, path: Path, timeout: float | None,
              task: Task) -> _Outcome:
    """Generate one file in the driver (its progress frames move ``task``); every
    failure becomes an outcome."""

    def progress(done: int, total: int) -> None:
        if total:  # 0 until the child knows it
            task.set_total(total)
            task.update_to(done)

    try:
        done = _child.generate_kat(inst, tag, path, timeout=timeout, progress=progress)
    except _child.DriverError as exc:
        if exc.status == "timeout":
            return _Outcome("timeout", timeout, message=exc.message)
        if exc.status in ("crash", "protocol") or exc.reason == "forked":
            return _Outcome("crash", message=exc.detail)
        return _Outcome("error", error_type=_ERROR_TYPES.get(exc.reason, "NgccError"),
                        message=exc.detail)
    return _Outcome("done", done.seconds)


def _probe(inst: Instance, timeout: float | None) -> KatProbeResult:
    """The guard probe: messages at the start of a page after an unreadable one."""
    try:
        lengths = _child.probe(inst, timeout=_child.PROBE_TIMEOUT if timeout is None
                               else timeout)
    except _child.DriverError as exc:
        if exc.status == "timeout":
            verdict = "TIMEOUT"
        elif exc.status in ("crash", "protocol") or exc.reason in ("forked", "placement"):
            verdict = "CRASH"
        else:
            verdict = "MISMATCH" if exc.reason == "hash" else "ERROR"
        return KatProbeResult(verdict, exc.detail if exc.status != "timeout" else exc.message)
    return KatProbeResult("PASS", "%d message lengths, each at the start of a page after an "
                          "unreadable page and at the end of one before it" % lengths, lengths)


def reference_manifest(inst: Instance, given: Path | None = None) -> tuple[Path, str]:
    """The manifest an instance is checked against and its basis: ``given``, else the one
    ``ngcc build --manifest`` recorded (``manifest``), else the candidate's shipped one.

    Raises:
        KatError: the recorded manifest is gone or changed since the build.
    """
    if given is not None:
        return given, "manifest"
    recorded = (inst.sidecar or {}).get("kat_manifest")
    if isinstance(recorded, str):
        path = Path(recorded)
        try:
            same = sha256_file(path) == (inst.sidecar or {}).get("kat_manifest_sha256")
        except OSError as exc:
            raise KatError("%s was built with --manifest %s, which cannot be read now (%s): "
                           "give --manifest FILE or rebuild" % (inst.library, path, exc)) from exc
        if not same:
            raise KatError("%s was built with --manifest %s, which has changed since: give "
                           "--manifest FILE or rebuild" % (inst.library, path))
        return path, "manifest"
    return manifest_path(inst.candidate), "shipped manifest"


def _manifest(path: Path) -> dict[str, ManifestEntry]:
    try:
        return read_manifest(path)
    except (ValueError, UnicodeDecodeError) as exc:
        raise KatError("the KAT manifest %s is corrupt: %s" % (path, exc)) from exc


@dataclass(frozen=True)
class _Reference:
    """What one instance's files are checked against."""

    manifest_file: Path
    manifest_basis: str
    manifest: dict[str, ManifestEntry]
    official_dir: Path | None


def _judge(inst: Instance, kind: str, path: Path, outcome: _Outcome, reference: _Reference,
           keep: bool) -> KatFileResult:
    """Turn a generation outcome into a verdict against the first reference there is;
    delete the file unless kept."""
    name = path.name
    expected = manifest_entry(reference.manifest, inst.name, name)
    base = KatFileResult(kind, name, "ERROR", outcome.seconds,
                         expected_sha256=expected.sha256 if expected else None,
                         basis=reference.manifest_basis if expected else "none",
                         reference=str(reference.manifest_file) if expected else "")
    if outcome.status != "done":
        return _failed(base, outcome)
    data = path.read_bytes()
    if not keep:
        path.unlink()
    digest = canonical_sha256(data, expected.mode if expected else "strict")
    official, official_tried = _official_file(inst, name, reference.official_dir)
    basis, against = "none", ""
    if expected is not None:
        basis, against = reference.manifest_basis, str(reference.manifest_file)
        verdict, detail = (("PASS", "") if digest == expected.sha256
                           else ("MISMATCH", _mismatch_detail(data, official)))
    elif official is not None:  # no manifest line: the official file is the reference
        basis, against = "official files", str(official)
        verdict, detail = _against_file(data, official, "the official file")
        official = None  # said already
    else:
        own, searched = _submission_file(inst, name)
        if own is not None:  # the submission's own KAT file is the reference
            basis, against = "submission files", str(own)
            verdict, detail = _against_file(data, own, "the submission's own KAT file")
        else:
            verdict, detail = "NOKAT", _nokat_detail(inst, name, reference, official_tried,
                                                     searched)
    if official is not None and verdict != "MISMATCH":
        same = official.read_bytes() == data
        detail = "; ".join(filter(None, [detail, "%s the official file %s" % (
            "byte-identical to" if same else "differs in its raw bytes from", official)]))
    return KatFileResult(kind, name, verdict, outcome.seconds, len(data), digest,
                         base.expected_sha256, detail, path if keep else None, basis, against)


def _nokat_detail(inst: Instance, name: str, reference: _Reference, official_tried: list[Path],
                  searched: list[Path]) -> str:
    """Every place a reference for ``name`` was looked for, and the names tried."""
    parts = ["no line for %s in the manifest %s" % (name, reference.manifest_file)]
    parts.append("no file %s in --official %s" % (name, ", ".join(map(str, official_tried)))
                 if official_tried else "no --official DIR given")
    if searched:
        parts.append("no submission KAT file %s in %s (subfolders named %s tried)" % (
            name, ", ".join(map(str, searched)), " or ".join(_folder_names(inst))))
    elif not inst.builtin:
        parts.append("no source folder recorded, so no submission KAT file was looked for")
    return "; ".join(parts)


def _failed(base: KatFileResult, outcome: _Outcome) -> KatFileResult:
    """The result of a file the generator did not finish."""
    if outcome.status == "crash":
        verdict = "CRASH"
    elif outcome.status == "timeout":
        verdict = "TIMEOUT"
    elif outcome.error_type == "HashError":  # the official generator stops: no valid file
        verdict = "MISMATCH"
    else:
        verdict = "ERROR"
    return KatFileResult(base.kind, base.name, verdict, outcome.seconds,
                         expected_sha256=base.expected_sha256, basis=base.basis,
                         reference=base.reference,
                         detail=("%s: %s" % (outcome.error_type, outcome.message)
                                 if outcome.error_type else outcome.message))


def _mismatch_detail(data: bytes, official: Path | None) -> str:
    if official is None:
        return ("the canonical digest differs from the manifest (official file not at hand: "
                "pass official_dir to name the first differing record)")
    where = first_difference(data, official.read_bytes())
    if where is None:
        return "equal to the official file %s, which does not match the manifest" % official
    return "first difference from %s: %s" % (official, where)


def _folder_names(inst: Instance) -> list[str]:
    """The folder names that may hold an instance's KAT files: its instance name, its
    source folder's name and the registry's manifest folder (``Laurus-512`` for
    ``laurus_512``), each once."""
    names = [inst.name]
    source_dir = _source_dir(inst)
    if source_dir is not None:
        names.append(source_dir.name)
    with suppress(_candidates.UnknownCandidateError):
        found = _candidates.candidate(inst.candidate).instance(inst.name)
        if found is not None:
            names.append(found.manifest_folder)
    return [name for name in dict.fromkeys(names) if is_valid_name(name)]  # never a path


def _official_file(inst: Instance, name: str, official_dir: Path | None
                   ) -> tuple[Path | None, list[Path]]:
    """The official copy of a KAT file, when the user gave a folder that holds it, and
    the folders looked in."""
    if official_dir is None:
        return None, []
    tried = [official_dir / inst.candidate / folder for folder in _folder_names(inst)]
    tried += [official_dir / folder for folder in _folder_names(inst)] + [official_dir]
    for folder in tried:
        if (folder / name).is_file():
            return folder / name, tried
    return None, tried


def _source_dir(inst: Instance) -> Path | None:
    """The source folder an ``ngcc build`` sidecar records, else None."""
    if inst.builtin:
        return None
    try:
        return Path(load_json_file(sidecar_path(inst.library))["source_dir"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _submission_file(inst: Instance, name: str) -> tuple[Path | None, list[Path]]:
    """The KAT file ``name`` shipped with an ``ngcc build`` submission (first found in
    :func:`submission_kat_folders`), and the folders looked in."""
    source_dir = _source_dir(inst)
    if source_dir is None:
        return None, []
    folders = submission_kat_folders(source_dir, _folder_names(inst))
    for folder in folders:
        if (folder / name).is_file():  # a regular file: never a FIFO or a device
            return folder / name, folders
    return None, folders


def _against_file(data: bytes, reference: Path, what: str) -> tuple[str, str]:
    """PASS when the canonical texts are equal, else MISMATCH naming the first
    differing record; ``what`` names the reference (``the official file``)."""
    theirs = reference.read_bytes()
    if canonical_sha256(data) == canonical_sha256(theirs):
        return "PASS", "equal to %s %s (no manifest line)" % (what, reference)
    return "MISMATCH", "first difference from %s %s: %s" % (
        what, reference, first_difference(data, theirs) or "canonical text differs")


def _remove_if_empty(folder: Path) -> None:
    with suppress(OSError):  # not empty: kept files, or someone else's
        folder.rmdir()


# ------------------------------------------------------------------------------ log

def _write_log(log: Path, inst: Instance, label: str, results: tuple[KatFileResult, ...],
               probe: KatProbeResult, verdict: str, manifest: Path, basis: str) -> None:
    """Write the KAT log atomically (temp file, fsync, rename: ``_files``)."""
    lines = [
        "ngcc KAT log (generator: ngcc %s, spec/kat-format.md)" % __version__,
        "date        %s" % utc_now(),
        "instance    %s" % inst.name,
        "label       %s" % label,
        "candidate   %s" % inst.candidate,
        "variant     %s" % inst.variant,
        "digest      %d bits" % inst.digest_bits,
        "library     %s" % inst.library,
        "sha256      %s" % _file_sha256(inst.library),
        "compiler    %s" % (inst.compiler or "unknown"),
        "flags       %s" % (" ".join(inst.cflags) or "unknown"),
        "manifest    %s" % manifest,
        "  sha256    %s" % (_file_sha256(manifest) if manifest.is_file() else "- (no such file)"),
        "basis       %s" % basis,
        *("adjusted    %s" % text for text in _adjustments(inst)),
        "",
    ]
    for r in results:
        lines += [
            "FILE %s %s" % (r.name, r.verdict),
            "  time              %s" % ("%.3f s" % r.seconds if r.seconds is not None else "-"),
            "  size              %s" % ("%d bytes" % r.size if r.size is not None else "-"),
            "  canonical sha256  %s" % (r.canonical_sha256 or "-"),
            "  manifest sha256   %s" % (r.expected_sha256 or "-"),
            "  basis             %s%s" % (r.basis, " " + r.reference if r.reference else ""),
        ]
        if r.detail:
            lines.append("  detail            %s" % r.detail)
        lines.append("")
    lines += ["PROBE guard pages %s" % probe.verdict,
              "  detail            %s" % probe.detail, ""]
    lines.append("RESULT %s %s %s" % (inst.candidate, inst.name, verdict))
    atomic_write_bytes(log, ("\n".join(lines) + "\n").encode("utf-8"))


def _adjustments(inst: Instance) -> list[str]:
    """The build options ``ngcc evaluate`` added on the build's diagnosis (sidecar)."""
    found = (inst.sidecar or {}).get("adjustments")
    return [str(a) for a in found] if isinstance(found, list) else []


def _file_sha256(path: Path) -> str:
    try:
        return sha256_file(path)
    except OSError as exc:
        return "unreadable (%s)" % exc
