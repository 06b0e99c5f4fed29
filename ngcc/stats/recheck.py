"""A record checked against itself and its run: every statistic and resource
recomputed from its raw per-call samples with the very functions the campaign used
(:mod:`ngcc.stats.trials`, never a second implementation), and what it repeats from its run
(run id, implementation, KAT facts) compared with ``campaign.json`` and
``build.json``. ``ngcc validate`` runs it on every record, a resumed campaign on each
record it would keep (and measures the job again when anything differs).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ngcc.base.errors import CorruptRecordError
from ngcc.evidence.model import BuildState, Record, Resources
from ngcc.evidence.run import RunRecord
from ngcc.stats import intervals as _intervals
from ngcc.stats import trials as _stats

RELATIVE_TOLERANCE = 1e-9
"""Floats may differ by this much (another numpy/scipy build rounds differently);
anything a person would notice is far larger."""


@dataclass(frozen=True)
class Difference:
    """One disagreement: the file (relative to the run directory) and what differs."""

    file: str
    what: str

    def __str__(self) -> str:
        return f"{self.file}: {self.what}"


def record_problems(record: RunRecord, run_id: str, build: BuildState | None
                    ) -> list[Difference]:
    """Everything ``validate`` finds wrong with one record: :func:`check_record` and
    :func:`check_against_run`. A resumed campaign keeps a record only when this is
    empty, and measures the job again otherwise."""
    return check_record(record) + check_against_run(record, run_id, build)


def check_record(record: RunRecord) -> list[Difference]:
    """Recompute one record's per-trial and aggregate statistics and its resources from
    its raw samples."""
    name = record.relpath
    try:
        cycles = record.cycles()
    except CorruptRecordError as exc:
        return [Difference(record.raw.path, f"{exc.defect} (record {name})")]
    if len(cycles) != len(record.trials):
        return [Difference(name, f"{len(record.trials)} trials, but the raw file holds "
                                 f"{len(cycles)}")]
    found = list(_trial_differences(record, cycles))
    found += _compare("statistics", record.statistics.to_json(),
                      _recompute(record, cycles).to_json())
    found += _compare("resources", record.resources.to_json(),
                      Resources.of(record.resources.elf_image_bytes, record.trials).to_json())
    found += _compare("raw.calls_per_trial", list(record.raw.calls_per_trial),
                      [len(c) for c in cycles])
    if record.plan.target_ci_percent is not None and record.statistics.version >= 3:
        found += _compare("target_ci_reached_percent", record.target_ci_reached_percent,
                          _intervals.target_reached_percent(cycles, record.plan.statistic))
    return [Difference(name, what) for what in found]


def check_against_run(record: Record, run_id: str, build: BuildState | None
                      ) -> list[Difference]:
    """What a record repeats from its run must agree with it: the run id, and the
    library's implementation and KAT facts in ``build.json``."""
    found = _compare("run_id", record.run_id, run_id, "in campaign.json")
    entry = build.entry(record.label) if build is not None else None
    if entry is not None:
        kat = entry.kat.to_json()
        if not record.kat.files:  # a schema-1 record did not keep the files checked
            kat["files"] = []
        found += _compare("kat", record.kat.to_json(), kat, "in build.json")
        found += _compare("implementation", record.implementation.to_json(),
                          entry.implementation.to_json(), "in build.json")
    return [Difference(record.relpath, what) for what in found]


def _recompute(record: Record, cycles: Sequence[np.ndarray]) -> Any:
    """The statistics by the rules of the version that wrote them (``version``)."""
    return _stats.aggregate_trials(record.trials, cycles, record.message_bytes,
                                   record.plan.cpu, record.statistics.version)


def _trial_differences(record: Record, cycles: Sequence[np.ndarray]) -> Iterator[str]:
    for trial, samples in zip(record.trials, cycles, strict=True):
        where = f"trials[{trial.index}]"
        yield from _compare(f"{where}.calls", trial.calls, len(samples))
        expected = _stats.trial_statistics(samples, trial.loop_ticks, trial.loop_seconds,
                                           trial.frequency_hz, trial,
                                           record.statistics.version)
        yield from _compare(f"{where}.statistics", trial.statistics.to_json(),
                            expected.to_json())


def _compare(where: str, stored: Any, recomputed: Any,
             source: str = "recomputed from the raw samples") -> list[str]:
    """Where ``stored`` and ``recomputed`` differ, as ``where.key is … <source> …``."""
    if isinstance(stored, Mapping) and isinstance(recomputed, Mapping):
        found = []
        for key in sorted(set(stored) | set(recomputed)):
            if key not in stored:
                found.append(f"{where}.{key} is missing (recomputed {recomputed[key]!r})")
            elif key not in recomputed:
                found.append(f"{where}.{key} is not a statistic ngcc computes")
            else:
                found += _compare(f"{where}.{key}", stored[key], recomputed[key], source)
        return found
    if isinstance(stored, list) and isinstance(recomputed, list) and len(stored) == len(
            recomputed):
        return [what for index, (a, b) in enumerate(zip(stored, recomputed, strict=True))
                for what in _compare(f"{where}[{index}]", a, b, source)]
    if _same(stored, recomputed):
        return []
    return [f"{where} is {stored!r}, {source} {recomputed!r}"]


def _same(stored: Any, recomputed: Any) -> bool:
    numbers = (int, float)
    if (isinstance(stored, numbers) and isinstance(recomputed, numbers)
            and not isinstance(stored, bool) and not isinstance(recomputed, bool)):
        return math.isclose(stored, recomputed, rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0)
    return bool(stored == recomputed)
