"""The evidence of a timing-leakage test (``ngcc leak``, ``ngcc campaign --leak``):
``OUT/<candidate>/<label>__leak_<bytes>.json`` (``ngcc.leak/1``, a :class:`LeakEvidence`)
and its t trace beside it (``.npz``, ``ngcc.leak-trace/1``), each written atomically,
the JSON last (it names the trace's sha256); a campaign's lie in ``RUN_DIR/leak/``.

Files of ``ngcc.leak/1`` written before three of its fields existed read with the
value those fields would have held: ``control`` (before the A/A control: false),
``asked`` (before ``ngcc campaign --leak``: null, so a campaign runs such a test
again) and ``plot`` (before it was always written: null where no plot is named).
The test itself is :mod:`ngcc.measure.leak_measurement`, its statistics
:mod:`ngcc.stats.leak_statistics`.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ngcc.base import files as _files
from ngcc.base import untrusted as _untrusted
from ngcc.base.clock import utc_now
from ngcc.base.codec import Evidence, FieldError, added
from ngcc.base.errors import CorruptRecordError
from ngcc.base.names import check_name, inside, is_valid_name
from ngcc.base.version import __version__
from ngcc.evidence import records as _records

SCHEMA_LEAK = "ngcc.leak/1"
SCHEMA_LEAK_TRACE = "ngcc.leak-trace/1"

LEAK_DIR = "leak"
"""A campaign's leak evidence: ``RUN_DIR/leak/<candidate>/<label>__leak_<bytes>.json``."""

NO_LEAK, POSSIBLE_LEAK, LEAK, TOO_FEW = ("no leak detected", "possible leak", "LEAK",
                                         "too few calls")
#: A test's verdict, from its largest ``|t|`` (:func:`ngcc.stats.leak_statistics.verdict`).
VERDICTS = (NO_LEAK, POSSIBLE_LEAK, LEAK, TOO_FEW)
#: Why a test stopped: all its calls made, its time limit, or early on a leak.
STOP_REASONS = ("calls", "seconds", "leak")

_SHA256 = re.compile(r"[0-9a-f]{64}")
_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@dataclass(frozen=True)
class LeakLimits(Evidence):
    """The limits a test was given: the most calls, the most seconds (None: no limit)."""

    calls: int
    seconds: float | None


@dataclass(frozen=True)
class LeakThresholds(Evidence):
    """The ``|t|`` of ``possible leak`` (at or above) and of ``LEAK`` (above)."""

    possible_leak: float
    leak: float


@dataclass(frozen=True)
class LeakMethod(Evidence):
    """The method's settings: thresholds, the calls a test needs, the crops."""

    thresholds: LeakThresholds
    min_samples_per_class: int
    calibration_calls: int
    crop_fractions: tuple[float, ...]
    crop_thresholds_ticks: tuple[float, ...]


@dataclass(frozen=True)
class LeakTest(Evidence):
    """One test's final t (None: it did not count) and the calls of each class it held."""

    name: str
    t: float | None
    calls_per_class: tuple[int, int]


@dataclass(frozen=True)
class LeakDriverFacts(Evidence):
    """The driver's facts of the run (its LEAK_DONE frame) and the parent's wall time."""

    pid: int
    warmup_calls: int
    batch_calls: int
    frequency_hz: float
    overhead_min_ticks: int
    overhead_median_ticks: int
    loop_ns: int
    voluntary_switches: int
    involuntary_switches: int
    peak_rss_kib: int
    affinity_changed: bool | None
    wall_ns: int
    #: What the run's process ran in (``namespaces`` or ``filter``); None in older files.
    isolation: str | None = added(None)

    def _check(self, where: str) -> None:
        if self.isolation not in (None, "namespaces", "filter"):
            raise FieldError(where + "isolation", "is %r, not namespaces or filter"
                             % str(self.isolation)[:40])


@dataclass(frozen=True)
class LeakTraceFile(Evidence):
    """The t trace's file beside the evidence, its sha256 and its number of looks."""

    path: str
    sha256: str
    points: int


@dataclass(frozen=True)
class LeakTrace:
    """The t trace itself (the ``.npz``): every test's t after ``calls[i]`` calls, and
    the crops (fractions kept, thresholds in ticks), unrounded."""

    calls: np.ndarray
    t: np.ndarray
    tests: tuple[str, ...]
    crop_fractions: tuple[float, ...]
    crop_thresholds: np.ndarray


@dataclass(frozen=True, kw_only=True)
class LeakEvidence(Evidence):
    """One leak test of one library at one length, as its evidence file holds it
    (``docs/evidence-format.md``). ``control``, ``asked`` and ``plot`` read as their
    defaults where an older file lacks them. ``trace``, ``plot``, ``created`` and
    ``ngcc_version`` are filled in by :func:`write_evidence` (a file without them is
    refused); ``trace_data``, the trace's arrays, is what it writes to the ``.npz``
    (None for evidence read from a file: :func:`trace_of` reads the trace)."""

    schema: str = SCHEMA_LEAK
    instance: str
    label: str
    candidate: str
    variant: str
    library: str
    message_bytes: int
    fixed_message: str
    control: bool = False
    verdict: str
    max_t: float
    max_test: str
    calls: int
    calls_per_class: tuple[int, int]
    seconds: float
    stop_reason: str
    asked: LeakLimits | None = None
    seed: int
    cpu: int | None
    counter: str
    unit: str
    method: LeakMethod
    tests: tuple[LeakTest, ...]
    class_mean_ticks: tuple[float, float]
    driver: LeakDriverFacts
    trace: LeakTraceFile | None = None
    plot: str | None = None
    created: str = ""
    ngcc_version: str = ""
    trace_data: LeakTrace | None = field(default=None, compare=False, repr=False,
                                         metadata={"json": False})

    def _check(self, where: str) -> None:
        checks = [
            ("schema", self.schema == SCHEMA_LEAK, "is %r, not %r" % (self.schema, SCHEMA_LEAK)),
            ("label", is_valid_name(self.label), "is not a valid name"),
            ("candidate", is_valid_name(self.candidate), "is not a valid name"),
            ("message_bytes", self.message_bytes >= 1, "is below 1"),
            ("verdict", self.verdict in VERDICTS, "is %r, not one of %s"
             % (self.verdict, ", ".join(VERDICTS))),
            ("stop_reason", self.stop_reason in STOP_REASONS, "is %r, not one of %s"
             % (self.stop_reason, ", ".join(STOP_REASONS))),
            ("trace", self.trace is not None, "is missing"),
            ("trace.sha256", self.trace is None or bool(_SHA256.fullmatch(self.trace.sha256)),
             "is not a sha256"),
            ("created", bool(_UTC.fullmatch(self.created)), "is %r, not a UTC time"
             % self.created),
        ]
        for name, ok, defect in checks:
            if not ok:
                raise FieldError(where + name, defect)


def evidence_stem(evidence: LeakEvidence) -> str:
    """``<label>__leak_<bytes>`` (``__leak-control_<bytes>`` for a control): the name of
    a test's files, checked."""
    return "%s__leak%s_%d" % (check_name(evidence.label, "label"),
                              "-control" if evidence.control else "", evidence.message_bytes)


def evidence_path(evidence: LeakEvidence, out_dir: str | os.PathLike[str],
                  suffix: str) -> Path:
    """``OUT/<candidate>/<label>__leak_<bytes><suffix>``, kept inside ``out_dir``."""
    folder = inside(out_dir, check_name(evidence.candidate, "candidate id"))
    return inside(folder, evidence_stem(evidence) + suffix)


def write_evidence(evidence: LeakEvidence, out_dir: str | os.PathLike[str],
                   plot: bool = False) -> list[Path]:
    """Write ``OUT/<candidate>/<label>__leak_<bytes>.json`` (``ngcc.leak/1``) and its t
    trace (``evidence.trace_data``) as ``.npz`` beside it, each atomically, the JSON
    last (it names the trace's sha256). ``plot`` says the caller has drawn the ``|t|``
    plot beside them (``.png``, ``.svg`` at :func:`evidence_path` with no suffix), so
    the JSON names it. Returns the paths written, the JSON first."""
    trace = evidence.trace_data
    if trace is None:
        raise ValueError("leak evidence without its trace cannot be written")
    trace_path = evidence_path(evidence, out_dir, ".npz")
    json_path = evidence_path(evidence, out_dir, ".json")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, schema=np.array(SCHEMA_LEAK_TRACE),
                        calls=trace.calls, t=trace.t, tests=np.array(trace.tests),
                        crop_fractions=np.array(trace.crop_fractions),
                        crop_thresholds=trace.crop_thresholds)
    data = buffer.getvalue()
    _files.atomic_write_bytes(trace_path, data)
    written = replace(evidence, trace=LeakTraceFile(trace_path.name,
                                                    hashlib.sha256(data).hexdigest(),
                                                    len(trace.calls)),
                      plot=evidence_stem(evidence) + ".png" if plot else None, created=utc_now(),
                      ngcc_version=__version__)
    _records.write_json(json_path, written.to_json())
    return [json_path, trace_path]


def read_evidence(path: str | os.PathLike[str]) -> LeakEvidence:
    """Read a leak evidence file (``ngcc.leak/1``, older forms included: see above).

    Raises:
        CorruptRecordError: it cannot be read, is not ``ngcc.leak/1``, or a field is
            missing, unknown or out of range.
    """
    remedy = "Run `ngcc leak` again to remake it."
    try:
        data = _untrusted.load_json_file(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CorruptRecordError(path, "cannot be read (%s)" % exc, remedy) from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_LEAK:
        raise CorruptRecordError(path, "not an %s file" % SCHEMA_LEAK, remedy)
    try:
        return LeakEvidence.from_json(data)
    except FieldError as exc:
        raise CorruptRecordError(path, str(exc), remedy) from None


def load_evidence(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A leak evidence file's JSON object, read and checked by :func:`read_evidence`
    (an older file with the fields it lacks filled in); CorruptRecordError unless it
    is sound ``ngcc.leak/1``."""
    return read_evidence(path).to_json()


# ------------------------------------------------------------ in a run directory

def kept(out_dir: str | os.PathLike[str], candidate: str, label: str, message_bytes: int,
         calls: int, seconds: float | None) -> bool:
    """Whether ``out_dir`` already holds a sound result of this library at this length,
    made with these limits (a resumed campaign keeps it; anything else is run again)."""
    base = "%s__leak_%d" % (check_name(label, "label"), message_bytes)
    path = inside(inside(out_dir, check_name(candidate, "candidate id")), base + ".json")
    if not path.is_file():
        return False
    try:
        evidence = read_evidence(path)
        trace_of(path, evidence)
    except CorruptRecordError:
        return False
    return (evidence.label, evidence.asked) == (label, LeakLimits(calls, seconds))


def run_evidence(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every leak evidence file of a run directory (``leak/*/*.json``), loaded and
    checked, in file-name order, each with its ``relpath`` in the run directory.

    Raises:
        CorruptRecordError: a file that is not sound ``ngcc.leak/1`` evidence.
    """
    root = Path(run_dir)
    found = []
    for path in sorted((root / LEAK_DIR).glob("*/*.json")):
        data = load_evidence(path)
        found.append({**data, "relpath": path.relative_to(root).as_posix()})
    return found


def trace_of(path: str | os.PathLike[str], data: LeakEvidence | Mapping[str, Any]
             ) -> tuple[list[int], dict[str, list[float]]]:
    """The t trace an evidence file names (its ``.npz``, checked against its sha256),
    as :func:`counted_looks` gives it: the looks at which a test counted. ``data`` is
    the file's :class:`LeakEvidence` or its JSON object (as ``Run.leak_tests`` has it)."""
    if isinstance(data, LeakEvidence):
        trace: Mapping[str, Any] = data.trace.to_json() if data.trace is not None else {}
    else:
        trace = data.get("trace") or {}
    npz = Path(path).with_name(str(trace.get("path", "")))
    remedy = "Run the leak test again to remake it."
    if not npz.is_file() or npz.parent != Path(path).parent:
        raise CorruptRecordError(path, "its trace %r is missing" % trace.get("path"), remedy)
    if _files.sha256_file(npz) != trace.get("sha256"):
        raise CorruptRecordError(npz, "its sha256 is not the one its evidence file states",
                                 remedy)
    try:
        with np.load(npz, allow_pickle=False) as arrays:
            if str(arrays["schema"]) != SCHEMA_LEAK_TRACE:
                raise CorruptRecordError(npz, "not an %s archive" % SCHEMA_LEAK_TRACE, remedy)
            calls, t, tests = arrays["calls"], arrays["t"], [str(n) for n in arrays["tests"]]
    except (OSError, KeyError, ValueError) as exc:
        raise CorruptRecordError(npz, "not a valid .npz archive (%s)" % exc, remedy) from exc
    if t.ndim != 2 or t.shape != (len(calls), len(tests)):
        raise CorruptRecordError(npz, "t of shape %s for %d looks and %d tests"
                                 % (t.shape, len(calls), len(tests)), remedy)
    return counted_looks(calls, t, tests)


def counted_looks(calls: np.ndarray, t: np.ndarray, tests: Sequence[str]
                  ) -> tuple[list[int], dict[str, list[float]]]:
    """The calls of the looks at which some test counted, and each test's t at them
    (NaN: it did not count then)."""
    counted = np.isfinite(t).any(axis=1) if len(t) else np.zeros(0, dtype=bool)
    return ([int(c) for c in calls[counted]],
            {name: [float(v) for v in t[counted, i]] for i, name in enumerate(tests)})
