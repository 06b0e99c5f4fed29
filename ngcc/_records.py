"""The evidence files of a run directory: the one module that loads and dumps them.

The format is ``docs/evidence-format.md`` (schema version 1). Every write is atomic
(temporary file in the same directory, fsync, ``os.replace``, fsync of the
directory), so a campaign killed at any instant leaves either the old file, the new
one, or none. Every load checks the ``schema`` string and the fields a reader relies
on, and raises :class:`~ngcc._errors.CorruptRecordError` naming the file otherwise.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ngcc._errors import CorruptRecordError

SCHEMA_CAMPAIGN = "ngcc.campaign/1"
SCHEMA_BUILD = "ngcc.build/1"
SCHEMA_RECORD = "ngcc.record/1"
SCHEMA_RAW = "ngcc.raw/1"

CAMPAIGN_FILE = "campaign.json"
BUILD_FILE = "build.json"

_REQUIRED = {
    SCHEMA_CAMPAIGN: ("run_id", "created", "plan", "environment", "jobs"),
    SCHEMA_BUILD: ("run_id", "instances"),
    SCHEMA_RECORD: ("run_id", "candidate", "instance", "message_bytes", "kat", "plan",
                    "environment", "trials", "statistics", "resources", "raw",
                    "provenance"),
}
_REMEDY = {
    SCHEMA_CAMPAIGN: "Without it the run can be neither resumed nor read: start a new "
                     "--run-dir (the records stay readable one by one).",
    SCHEMA_BUILD: "Delete it to check the KAT verdicts again on the next run.",
    SCHEMA_RECORD: CorruptRecordError.RECORD_REMEDY,
}
_REQUIRED_STATISTICS = ("trials", "calls", "mean_cycles", "median_cycles", "min_cycles",
                        "cycles_per_byte", "ci95_relative", "mean_seconds", "mb_per_s")


# ---------------------------------------------------------------- atomic writes

def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically and durably (temp file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(".%s.tmp-%d" % (path.name, os.getpid()))
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    finally:
        if temp.exists():
            temp.unlink()
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def dumps_json(data: Mapping[str, Any]) -> bytes:
    """The canonical JSON text of an evidence file (sorted keys, no NaN, final newline)."""
    return (json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n").encode()


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Dump one JSON evidence file atomically."""
    atomic_write_bytes(path, dumps_json(data))


def remove_temp_files(run_dir: Path) -> list[Path]:
    """Delete leftover ``.*.tmp-*`` files of killed writers; return what was removed."""
    removed = []
    for temp in run_dir.rglob(".*.tmp-*"):
        if temp.is_file():
            temp.unlink()
            removed.append(temp)
    return removed


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------- JSON loading

def load_json(path: Path, schema: str) -> dict[str, Any]:
    """Load an evidence JSON file and check its schema and required fields.

    Raises:
        CorruptRecordError: unreadable, not JSON, another schema or a missing field;
            the message names the file and says what to do about it.
    """
    def corrupt(defect: str) -> CorruptRecordError:
        return CorruptRecordError(path, defect, _REMEDY[schema])

    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise corrupt("cannot be read (%s)" % exc) from exc
    except ValueError as exc:
        raise corrupt("not valid JSON (%s)" % exc) from exc
    if not isinstance(data, dict):
        raise corrupt("not a JSON object")
    found = data.get("schema")
    if found != schema:
        raise corrupt("schema %r, expected %r" % (found, schema))
    missing = [key for key in _REQUIRED[schema] if key not in data]
    if missing:
        raise corrupt("missing field(s) %s" % ", ".join(missing))
    return data


def load_campaign(run_dir: Path) -> dict[str, Any]:
    """Load ``campaign.json`` of a run directory."""
    return load_json(Path(run_dir) / CAMPAIGN_FILE, SCHEMA_CAMPAIGN)


def load_build(run_dir: Path) -> dict[str, Any]:
    """Load ``build.json`` of a run directory."""
    return load_json(Path(run_dir) / BUILD_FILE, SCHEMA_BUILD)


# ---------------------------------------------------------------- paths

def file_stem(instance: str, variant: str) -> str:
    """The instance part of evidence file names when the evidence does not say it.

    Campaigns store the exact name as ``stem`` in every job, build entry and record
    (the instance name, plus ``.<variant>`` unless the bare name means that very
    instance); prefer that. This fallback is the name for ``ref`` and ``external``,
    else ``<name>.<variant>``.
    """
    return instance if variant in ("ref", "external") else "%s.%s" % (instance, variant)


def operation(message_bytes: int) -> str:
    """The operation name of a timing job: ``hash_<bytes>``."""
    return "hash_%d" % message_bytes


def record_relpath(candidate: str, stem: str, message_bytes: int) -> str:
    """``records/<candidate>/<instance>__hash_<bytes>.json``, relative to the run directory."""
    return "records/%s/%s__%s.json" % (candidate, stem, operation(message_bytes))


def raw_relpath(candidate: str, stem: str, message_bytes: int) -> str:
    """``raw/<candidate>/<instance>__hash_<bytes>.npz``, relative to the run directory."""
    return "raw/%s/%s__%s.npz" % (candidate, stem, operation(message_bytes))


def kat_log_relpath(candidate: str, stem: str) -> str:
    """``kat/<candidate>/<instance>.log``, relative to the run directory."""
    return "kat/%s/%s.log" % (candidate, stem)


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
        CorruptRecordError: missing, unreadable, another schema, or a digest mismatch.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorruptRecordError(path, "cannot be read (%s)" % exc) from exc
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise CorruptRecordError(path, "its sha256 differs from the one in its record")
    try:
        archive = np.load(io.BytesIO(data), allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):  # a bare .npy array
            raise CorruptRecordError(path, "not an .npz archive")
        with archive:
            schema = str(archive["schema"]) if "schema" in archive.files else None
            if schema != SCHEMA_RAW:
                raise CorruptRecordError(path, "schema %r, expected %r" % (schema, SCHEMA_RAW))
            count = sum(1 for name in archive.files if name.startswith("trial_"))
            return [archive["trial_%d" % i] for i in range(count)]
    except CorruptRecordError:
        raise
    except Exception as exc:  # in-memory bytes only: numpy, zipfile, zlib and tokenize
        # (the .npy header) each raise their own exception on damaged bytes
        raise CorruptRecordError(path, "not a valid .npz archive (%s)" % exc) from exc


# ---------------------------------------------------------------- records

@dataclass(frozen=True)
class Record:
    """One timed job (instance × message length) of a run, as stored in its record file.

    ``data`` is the whole record (see ``docs/evidence-format.md``); the attributes are
    the fields readers use most. ``run_dir`` locates the raw samples.
    """

    path: Path
    run_dir: Path
    data: dict[str, Any]

    @property
    def candidate(self) -> str:
        """The candidate id, e.g. ``"hash-34"``."""
        return str(self.data["candidate"])

    @property
    def instance(self) -> str:
        """The instance name, e.g. ``"WChain-V1-512"``."""
        return str(self.data["instance"])

    @property
    def stem(self) -> str:
        """The instance's name in file names (``Wish512``, ``Wish512.opt``)."""
        return str(self.data.get("stem") or file_stem(self.instance,
                                                      str(self.data.get("variant", "ref"))))

    @property
    def message_bytes(self) -> int:
        """The message length of every timed call, in bytes."""
        return int(self.data["message_bytes"])

    @property
    def statistics(self) -> dict[str, Any]:
        """The aggregate statistics over all trials (``_stats.aggregate``)."""
        return dict(self.data["statistics"])

    @property
    def trials(self) -> list[dict[str, Any]]:
        """The per-trial entries, in trial order."""
        return list(self.data["trials"])

    @property
    def kat_verdict(self) -> str:
        """The KAT gate's verdict for the instance (``PASS``, ``MISMATCH``, …)."""
        return str(self.data["kat"]["verdict"])

    @property
    def timed_without_pass(self) -> bool:
        """True when the instance was timed without a KAT pass (reports show ⚠)."""
        return bool(self.data["kat"].get("timed_without_pass", False))

    def cycles(self) -> list[np.ndarray]:
        """The per-call cycles of every trial (uint64 arrays), checked against the sha256."""
        raw = self.data["raw"]
        return load_raw(self.run_dir / raw["path"], raw.get("sha256"))

    def __repr__(self) -> str:
        stats = self.data["statistics"]
        return "<Record %s %s %d B: %.1f cycles/byte, ±%.2f %% over %d trials>" % (
            self.candidate, self.instance, self.message_bytes, stats["cycles_per_byte"],
            100 * (stats.get("ci95_relative") or 0.0), stats["trials"])

    def _repr_html_(self) -> str:  # issue 8: Jupyter shows a record as a table
        from ngcc._report import record_html

        return record_html(self)


def load_record(path: Path, run_dir: Path) -> Record:
    """Load and check one record file.

    Raises:
        CorruptRecordError: naming the file, when it is not a complete record.
    """
    data = load_json(path, SCHEMA_RECORD)
    if not isinstance(data["statistics"], dict):
        raise CorruptRecordError(path, "statistics is not a JSON object")
    missing = [key for key in _REQUIRED_STATISTICS if key not in data["statistics"]]
    if missing:
        raise CorruptRecordError(path, "statistics lack %s" % ", ".join(missing))
    raw = data["raw"]
    if not isinstance(raw, dict) or "path" not in raw or "sha256" not in raw:
        raise CorruptRecordError(path, "no raw-sample reference (raw.path, raw.sha256)")
    return Record(path=Path(path), run_dir=Path(run_dir), data=data)


def dump_record(path: Path, data: Mapping[str, Any]) -> None:
    """Write a record (``data`` without its schema) to ``path`` atomically."""
    write_json(path, {"schema": SCHEMA_RECORD, **data})


def load_records(run_dir: Path) -> list[Record]:
    """Load every record under ``records/`` (sorted by path)."""
    run_dir = Path(run_dir)
    return [load_record(path, run_dir)
            for path in sorted((run_dir / "records").glob("*/*.json"))]
