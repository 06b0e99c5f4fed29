"""The store of a run directory: the one module that writes and reads its files.

What the files hold is the evidence model (``ngcc/evidence/model.py``, format in
``docs/evidence-format.md``); this module puts it on disk. Every write is atomic
(temporary file in the same directory, fsync, ``os.replace``, fsync of the
directory), so a campaign killed at any instant leaves either the old file, the new
one, or none; every object is checked by the model before it is written. Every
load checks the ``schema`` string (schema 1 is converted on read, ``evidence.schema1``) and
every field, and every path built from the evidence stays inside the run
directory; a defect raises :class:`~ngcc.base.errors.CorruptRecordError` naming the
file, the defect and the remedy.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ngcc.base.codec import Evidence, FieldError
from ngcc.base.errors import CorruptRecordError, InvalidNameError
from ngcc.base.files import atomic_write_bytes, sha256_file
from ngcc.base.names import inside
from ngcc.base.untrusted import load_json_file, read_regular
from ngcc.evidence import schema1 as _schema1
from ngcc.evidence.model import (
    SCHEMA_BUILD,
    SCHEMA_CAMPAIGN,
    SCHEMA_RAW,
    SCHEMA_RECORD,
    BuildState,
    CampaignState,
    Job,
    Record,
)

CAMPAIGN_FILE = "campaign.json"
BUILD_FILE = "build.json"
#: What ``ngcc evaluate`` keeps in a run directory besides a campaign's files: its
#: rows per submission folder (``library.archive``) and the libraries it built.
EVALUATION_FILE = "evaluation.json"
BUILDS_DIR = "builds"
EVALUATION_NAMES = frozenset({EVALUATION_FILE, BUILDS_DIR})

CAMPAIGN_REMEDY = ("Without it the run can be neither resumed nor read: start a new "
                   "--run-dir (the records stay readable one by one).")
BUILD_REMEDY = "Delete it to check the KAT verdicts again on the next run."
RECORD_REMEDY = CorruptRecordError.RECORD_REMEDY
RAW_REMEDY = "Delete its record to measure that job again (or start a new --run-dir)."

E = TypeVar("E", bound=Evidence)


def dumps_json(data: Mapping[str, Any]) -> bytes:
    """The canonical JSON text of an evidence file (sorted keys, no NaN, final newline)."""
    return (json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n").encode()


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Dump one JSON file atomically."""
    atomic_write_bytes(path, dumps_json(data))


def evidence_file_defect(run_dir: Path, relpath: str, sha256: str | None) -> str | None:
    """What is wrong with a file the evidence names with its digest (a KAT log): None
    when it is a regular file of the run directory with that sha256 (or, for a digest of
    None, when there is no such file), else the defect."""
    try:
        path = inside(run_dir, relpath)
    except InvalidNameError as exc:
        return str(exc)
    if sha256 is None:
        return None if not os.path.lexists(path) else "present, but its evidence holds no sha256"
    if not os.path.lexists(path):
        return "missing"
    try:
        found = sha256_file(path)
    except OSError as exc:
        return "cannot be read (%s)" % (exc.strerror or exc)
    return None if found == sha256 else "its sha256 %s… is not the %s… its evidence holds" % (
        found[:16], sha256[:16])


def path_in(run_dir: Path, relpath: str, remedy: str = RECORD_REMEDY) -> Path:
    """``run_dir / relpath``, refused (naming the run directory) if it leaves it."""
    try:
        return inside(run_dir, relpath)
    except InvalidNameError as exc:
        raise CorruptRecordError(Path(run_dir) / relpath, str(exc), remedy) from None


# ---------------------------------------------------------------- the JSON files

def _read_object(path: Path, remedy: str) -> dict[str, Any]:
    def corrupt(defect: str) -> CorruptRecordError:
        return CorruptRecordError(path, defect, remedy)

    if Path(path).is_dir():
        raise corrupt("is a directory, not a file")
    try:
        data = load_json_file(path)
    except OSError as exc:
        raise corrupt("cannot be read (%s)" % exc) from exc
    except UnicodeDecodeError as exc:
        raise corrupt("not UTF-8 text (%s)" % exc) from exc
    except ValueError as exc:
        raise corrupt("not valid JSON (%s)" % exc) from exc
    if not isinstance(data, dict):
        raise corrupt("not a JSON object")
    return data


def schema_of(path: Path, remedy: str = CAMPAIGN_REMEDY) -> object:
    """The ``schema`` string of a JSON evidence file (anything, if it is tampered)."""
    return _read_object(path, remedy).get("schema")


def load_file(path: Path, cls: type[E], schema: str, remedy: str) -> E:
    """Load one JSON evidence file of ``schema`` (or its schema-1 form) as ``cls``.

    Raises:
        CorruptRecordError: unreadable, not JSON, another schema, or a field that is
            missing, unknown, of the wrong type or out of range (named).
    """
    data = _read_object(path, remedy)
    found = data.pop("schema", None)
    if _schema1.UPGRADES.get(str(found)) == schema:
        data = _schema1.upgrade(str(found), data)
    elif found != schema:
        raise CorruptRecordError(path, "schema %r, expected %r (or its schema-1 form)"
                                 % (found, schema), remedy)
    try:
        return cls.from_json(data)
    except FieldError as exc:
        raise CorruptRecordError(path, str(exc), remedy) from None


def _dump(path: Path, value: Evidence, schema: str) -> None:
    data = value.to_json()
    type(value).from_json(data)  # what is written must read back (the reader's checks)
    write_json(path, {"schema": schema, **data})


def load_campaign(run_dir: Path) -> CampaignState:
    """Load ``campaign.json`` of a run directory."""
    return load_file(Path(run_dir) / CAMPAIGN_FILE, CampaignState, SCHEMA_CAMPAIGN,
                     CAMPAIGN_REMEDY)


def dump_campaign(run_dir: Path, state: CampaignState) -> None:
    """Write ``campaign.json`` atomically."""
    _dump(Path(run_dir) / CAMPAIGN_FILE, state, SCHEMA_CAMPAIGN)


def load_build(run_dir: Path) -> BuildState:
    """Load ``build.json`` of a run directory."""
    return load_file(Path(run_dir) / BUILD_FILE, BuildState, SCHEMA_BUILD, BUILD_REMEDY)


def dump_build(run_dir: Path, state: BuildState) -> None:
    """Write ``build.json`` atomically."""
    _dump(Path(run_dir) / BUILD_FILE, state, SCHEMA_BUILD)


def load_record(path: Path) -> Record:
    """Load and check one record file."""
    return load_file(path, Record, SCHEMA_RECORD, RECORD_REMEDY)


def dump_record(run_dir: Path, record: Record) -> None:
    """Write a record to its place in the run directory atomically."""
    _dump(path_in(run_dir, record.relpath), record, SCHEMA_RECORD)


def load_job_record(run_dir: Path, job: Job) -> Record:
    """The record of ``job``, checked to be that job's (library, length).

    Raises:
        CorruptRecordError: the record is defective or belongs to another job.
    """
    path = path_in(run_dir, job.record)
    record = load_record(path)
    expected = (job.candidate, job.instance, job.label, job.message_bytes)
    found = (record.candidate, record.instance, record.label, record.message_bytes)
    if found != expected:
        raise CorruptRecordError(path, "it is the record of %s %s (label %s) at %d B, not of "
                                 "its job %s %s (label %s) at %d B" % (*found, *expected))
    return record


# ---------------------------------------------------------------- raw samples

def dump_raw(path: Path, message_bytes: int, trials: Iterable[np.ndarray]) -> str:
    """Write the per-call cycles of every trial to an ``.npz`` atomically; return its sha256."""
    arrays: dict[str, np.ndarray] = {"schema": np.array(SCHEMA_RAW),
                                     "message_bytes": np.array(message_bytes, dtype=np.int64)}
    for index, cycles in enumerate(trials):
        arrays["trial_%d" % index] = np.ascontiguousarray(cycles, dtype=np.uint64)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    data = buffer.getvalue()
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


def load_raw(path: Path, sha256: str | None = None) -> list[np.ndarray]:
    """Load the per-call cycles of every trial from an ``.npz``, in trial order.

    Args:
        path: the ``.npz`` file.
        sha256: when given, the file must have this digest (the record's ``raw.sha256``).

    Raises:
        CorruptRecordError: missing, unreadable, another schema, arrays that are not
            uint64 per-call counts, or a digest mismatch.
    """
    path = Path(path)
    try:
        data = read_regular(path)
    except OSError as exc:
        raise CorruptRecordError(path, "cannot be read (%s)" % exc, RAW_REMEDY) from exc
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise CorruptRecordError(path, "its sha256 differs from the one in its record",
                                 RAW_REMEDY)
    try:
        archive = np.load(io.BytesIO(data), allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):  # a bare .npy array
            raise CorruptRecordError(path, "not an .npz archive", RAW_REMEDY)
        with archive:
            schema = str(archive["schema"]) if "schema" in archive.files else None
            if schema != SCHEMA_RAW:
                raise CorruptRecordError(path, "schema %r, expected %r" % (schema, SCHEMA_RAW),
                                         RAW_REMEDY)
            count = sum(1 for name in archive.files if name.startswith("trial_"))
            trials = [archive["trial_%d" % i] for i in range(count)]
    except CorruptRecordError:
        raise
    except Exception as exc:  # in-memory bytes only: numpy, zipfile, zlib and tokenize
        # (the .npy header) each raise their own exception on damaged bytes
        raise CorruptRecordError(path, "not a valid .npz archive (%s)" % exc,
                                 RAW_REMEDY) from exc
    for index, cycles in enumerate(trials):
        if cycles.dtype != np.uint64 or cycles.ndim != 1 or cycles.size == 0:
            raise CorruptRecordError(path, "trial_%d is a %s array of shape %s, not the "
                                     "per-call uint64 counts" % (index, cycles.dtype,
                                                                 cycles.shape), RAW_REMEDY)
    return trials
