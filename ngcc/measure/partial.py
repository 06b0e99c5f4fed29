"""The trials of a job not yet whole: each trial its own commit point.

An interleaved campaign measures trial k of every job before trial k + 1 of any, so a
stop (Ctrl-C, a kill) mid-run would otherwise lose every trial of every unfinished job.
Each trial is therefore written, as soon as it is measured, to
``partial/<candidate>/<label>__hash_<bytes>/trial_<k>.npz`` (its per-call counts and
the trial's facts, ``ngcc.partial/1``); a resumed campaign starts each pending job with
its kept trials (those measured with the job's plan: its library, calls per trial and
warm-up calls) and measures only the rest. The record, written once the job is whole,
supersedes them: the job's folder is then removed. The files are written atomically
(``evidence.records``) and read strictly; a file that is not sound is left out with the trials
after it (they are measured again).
"""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ngcc.base.files import atomic_write_bytes
from ngcc.evidence.model import TrialMeasurement
from ngcc.evidence.records import path_in
from ngcc.measure.job import Taken, take

SCHEMA_PARTIAL = "ngcc.partial/1"
PARTIAL_DIR = "partial"
MAX_PARTIAL_TRIALS = 100_000


def job_dir(run_dir: Path, raw_relpath: str) -> Path:
    """The folder of a job's kept trials, beside where its raw samples will go."""
    stem = raw_relpath[len("raw/"):] if raw_relpath.startswith("raw/") else raw_relpath
    return path_in(run_dir, "%s/%s" % (PARTIAL_DIR, stem.removesuffix(".npz")))


def save(run_dir: Path, raw_relpath: str, index: int, trial: Taken, warmup: int,
         library_sha256: str) -> None:
    """Write trial ``index`` of a job (atomically)."""
    facts = {name: value for name, value in dataclasses.asdict(trial.measured).items()
             if name != "cycles"}
    facts.update(started=trial.started, position=trial.position, warmup=warmup,
                 library_sha256=library_sha256, index=index)
    buffer = io.BytesIO()
    np.savez(buffer, schema=np.array(SCHEMA_PARTIAL),
             facts=np.array(json.dumps(facts, default=_plain)),
             cycles=np.ascontiguousarray(trial.measured.cycles, dtype=np.uint64))
    atomic_write_bytes(job_dir(run_dir, raw_relpath) / ("trial_%d.npz" % index),
                       buffer.getvalue())


def _plain(value: object) -> object:
    """A numpy scalar as the Python number it holds (for the JSON of the facts)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError("%r is not JSON" % (value,))


def load(run_dir: Path, raw_relpath: str, calls: int, warmup: int,
         library_sha256: str, cpu: int | None = None) -> list[Taken]:
    """The kept trials of a job, in order, as far as each is sound and was measured
    with this plan (``calls`` per trial, ``warmup`` calls, this library, on ``cpu`` if
    given)."""
    folder = job_dir(run_dir, raw_relpath)
    kept: list[Taken] = []
    for index in range(MAX_PARTIAL_TRIALS):
        trial = _read(folder / ("trial_%d.npz" % index), index, calls, warmup,
                      library_sha256)
        if trial is None or cpu not in (None, trial.measured.cpu):
            break
        kept.append(trial)
    return kept


def _read(path: Path, index: int, calls: int, warmup: int,
          library_sha256: str) -> Taken | None:
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["schema"]) != SCHEMA_PARTIAL:
                return None
            facts: dict[str, Any] = json.loads(str(data["facts"]))
            cycles = np.asarray(data["cycles"], dtype=np.uint64)
        if (facts.pop("index"), facts.pop("warmup"), facts.pop("library_sha256")) != (
                index, warmup, library_sha256) or cycles.shape != (calls,):
            return None
        started, position = str(facts.pop("started")), int(facts.pop("position"))
        facts["load_average"] = tuple(facts["load_average"])
        return take(started, TrialMeasurement(cycles=cycles, **facts), position, index, warmup)
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
        return None  # not sound: this trial and those after it are measured again


def discard(run_dir: Path, raw_relpath: str) -> None:
    """Remove a job's kept trials (its record supersedes them, or it failed)."""
    shutil.rmtree(job_dir(run_dir, raw_relpath), ignore_errors=True)


def count(run_dir: Path) -> int:
    """How many trial files of unfinished jobs the run directory keeps."""
    folder = Path(run_dir) / PARTIAL_DIR
    return sum(1 for _ in folder.glob("*/*/trial_*.npz")) if folder.is_dir() else 0
