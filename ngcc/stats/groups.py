"""What a run's records say beyond each record: grouping, the ratio to the baseline,
failure causes and flag kinds. (Which figure a record leads with, and its value, is
:mod:`ngcc.evidence.figures`.)

Pure functions of the records (the evidence model's objects), used by the report
pages and by the data frames alike, so a figure reads the same in both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from ngcc.evidence.model import BuildEntry, Flag, Job, Record, page_key
from ngcc.library import archive as _archive
from ngcc.library import candidates as _candidates

#: The family whose same-width instance is the speed baseline of every record.
BASELINE_FAMILY = "pseudoXOF"
#: The candidate id of the built-in baselines (an external library is never one unless
#: built with ``--candidate baseline``).
BASELINE_CANDIDATE = _candidates.BASELINE
#: The built-in variant of a reference implementation (``opt`` and others are optimized).
REFERENCE_VARIANT = "ref"
#: The built-in variant that is the baseline: the helper as the ICCS ``auxfunc.c`` computes
#: it (a plain SM3, every pseudoXOF block from scratch; ``algorithms/iccs/README.md``).
BASELINE_VARIANT = REFERENCE_VARIANT
#: The variant of a library ``ngcc build`` made (``Instance.variant``).
EXTERNAL_VARIANT = "external"

R = TypeVar("R", bound=Record)


def candidates(plan_pages: Sequence[str], records: Sequence[Record]) -> list[str]:
    """The pages of a run (:func:`~ngcc.evidence.model.page_key`: a candidate's, or an
    unclaimed library's own), in plan order (then any others the records have)."""
    found: list[str] = []
    for key in [*plan_pages, *(page_key(r.candidate, r.label) for r in records)]:
        if key not in found:
            found.append(key)
    return found


def of_candidate(items: Sequence[R], candidate: str) -> list[R]:
    """The records (or jobs) on one page (a candidate's, or an unclaimed library's own:
    :func:`~ngcc.evidence.model.page_key`), in their order."""
    return [item for item in items if page_key(item.candidate, item.label) == candidate]


def entries_of_candidate(entries: Sequence[BuildEntry], candidate: str) -> list[BuildEntry]:
    """The ``build.json`` entries on one page, in their order."""
    return [entry for entry in entries if page_key(entry.candidate, entry.label) == candidate]


def labels(records: Sequence[Record], entries: Sequence[BuildEntry] = ()) -> list[str]:
    """The library labels of build entries and records, each once, in order."""
    found = [entry.label for entry in entries]
    for record in records:
        if record.label not in found:
            found.append(record.label)
    return found


def baseline_record(records: Sequence[R], record: Record) -> R | None:
    """The record ``record``'s × pseudoXOF divides by: the pseudoXOF record of the same
    output width and length, of candidate ``baseline``. A library the user built with
    ``ngcc build --candidate baseline`` (e.g. from the official ICCS helper source,
    declaring ``pseudoXOF-<width>``) is preferred, the first in the run's order:
    measuring it names it the run's baseline. Else the built-in one as the ICCS
    ``auxfunc.c`` computes it (variant ``ref``). Never the built-in ``fastsm3`` or
    ``absorb`` variants, nor a library of any other candidate that declares the name
    (``external`` by default, or a submission's in ``ngcc evaluate``)."""
    name = "%s-%d" % (BASELINE_FAMILY, record.digest_bits)
    found = [other for other in records
             if other.instance == name and other.candidate == BASELINE_CANDIDATE
             and other.message_bytes == record.message_bytes
             and other.implementation.variant in (BASELINE_VARIANT, EXTERNAL_VARIANT)]
    own = [other for other in found if other.implementation.variant == EXTERNAL_VARIANT]
    return (own or found)[0] if found else None


def baseline_ratio(records: Sequence[Record], record: Record) -> float | None:
    """The leading figure of ``record`` over its pseudoXOF baseline's (``None`` if absent,
    measured on another host — a ratio is never taken across hosts — or led by another
    figure: a ratio is of one figure)."""
    baseline = baseline_record(records, record)
    if baseline is None or host(baseline) != host(record):
        return None
    mine, theirs = record.statistics.figure, baseline.statistics.figure
    if mine.code != theirs.code or not mine.ticks or not theirs.ticks:
        return None
    return mine.ticks / theirs.ticks


def optimized_build(record: Record) -> str | None:
    """Why ``record``'s library is an optimized build, not a reference build (the
    reference implementation with the guide's reference flags, as the harness's
    published figures and rankings are), or None for a reference build: ``variant
    opt``, ``flag set performance``, ``an Optimized_Implementation folder``."""
    implementation = record.implementation
    if implementation.variant != EXTERNAL_VARIANT:
        return (None if implementation.variant == REFERENCE_VARIANT
                else "variant %s" % implementation.variant)
    build = implementation.build or {}
    if "flag_set" not in build:
        return "its build is not recorded"
    if build["flag_set"] != "reference":
        return "flag set %s" % (build["flag_set"] or "given literally")
    source = build.get("source_dir")
    kind = _archive.path_kind(Path(source)) if isinstance(source, str) else None
    if kind in ("optimized", "additional"):
        return "an %s_Implementation folder" % str(kind).capitalize()
    return None


def baseline_labels(records: Sequence[Record]) -> list[str]:
    """The labels of the records some record of ``records`` is divided by, in order."""
    found: list[str] = []
    for record in records:
        baseline = baseline_record(records, record)
        if baseline is not None and baseline.label not in found:
            found.append(baseline.label)
    return found


def host(record: Record) -> str | None:
    """The host a record was measured on (None in records older than the field)."""
    return record.environment.host


def hosts(records: Sequence[Record]) -> list[str | None]:
    """The hosts of ``records``, each once, in order: a run measured by workers on
    several machines has more than one, and its figures are grouped by host."""
    return list(dict.fromkeys(host(record) for record in records))


def by_host(records: Sequence[R]) -> list[tuple[str | None, list[R]]]:
    """``records`` grouped by host, hosts in order of appearance."""
    return [(name, [r for r in records if host(r) == name]) for name in hosts(records)]


def distribution_records(records: Sequence[R]) -> list[R]:
    """The records whose distributions a report draws: each library's shortest length
    (where per-call noise matters most relative to the work)."""
    chosen: dict[str, R] = {}
    for record in records:
        if record.label not in chosen or record.message_bytes < chosen[record.label].message_bytes:
            chosen[record.label] = record
    return list(chosen.values())


def calls_per_trial(record: Record) -> list[int]:
    """How many calls each trial timed."""
    return [trial.calls for trial in record.trials]


def failure_cause(job: Job) -> str:
    """A failed job's error with what is particular to the job (its label and instance,
    length, trial, calls) taken out, so the jobs that failed for one cause share it."""
    text = job.error or job.status
    for name in sorted({job.label, job.instance}, key=len, reverse=True):
        text = re.sub(rf"(?<![\w.+@-]){re.escape(name)}(?![\w+@-])", "<library>", text)
    text = re.sub(rf"\b{job.message_bytes} B\b", "<n> B", text)
    text = re.sub(rf"\b{job.message_bytes * 8} bits\b", "<n> bits", text)
    text = re.sub(r"\btrial \d+", "trial <k>", text)
    text = re.sub(r"\b0x[0-9a-fA-F]+\b", "0x<address>", text)
    text = re.sub(r"\bwithin [\d.e+]+ s\b", "within <t> s", text)
    text = re.sub(r"\bpid \d+", "pid <p>", text)
    return re.sub(r"\b\d+ calls\b", "<k> calls", text)


def failure_groups(jobs: Sequence[Job]) -> list[tuple[str, list[Job]]]:
    """The failed ones of ``jobs`` by status and :func:`failure_cause`, in the order they
    first fail: (status, the jobs)."""
    groups: dict[tuple[str, str], list[Job]] = {}
    for job in jobs:
        if job.status not in ("done", "pending"):
            groups.setdefault((job.status, failure_cause(job)), []).append(job)
    return [(status, group) for (status, _), group in groups.items()]


def status_counts(jobs: Sequence[Job]) -> str:
    """``6 done, 1 crash``: the jobs by status, ``done`` first."""
    counts: dict[str, int] = {"done": 0}
    for job in jobs:
        counts[job.status] = counts.get(job.status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in counts.items())


def flag_severity(record: Record, flag: Flag) -> float:
    """How bad a flag is, to pick the worst of its kind: :attr:`Flag.severity
    <ngcc.evidence.model.Flag.severity>`, else (a flag of statistics version 1, without a
    value) the counter rate's distance from 1 for ``counter_rate``, or how far its
    trial's mean lies from the median of trial means (relative)."""
    if flag.severity is not None:
        return flag.severity
    trial = next((t for t in record.trials if t.index == flag.trial), None)
    if trial is None:
        return 0.0
    ratio = trial.statistics.counter_rate_ratio
    if flag.code == "counter_rate" and ratio is not None:
        return abs(1.0 - ratio)
    centre = record.statistics.median_of_trial_means_cycles
    return abs(trial.statistics.mean_cycles / centre - 1.0) if centre else 0.0


def flag_kinds(records: Sequence[Record]
               ) -> list[tuple[str, list[tuple[Record, Flag]], tuple[Record, Flag]]]:
    """The trial flags of ``records`` by kind, in order of first appearance: ``(code,
    every (record, flag) of that kind, the worst by flag_severity)``: for one line per
    kind on a page or at the end of a campaign."""
    kinds: dict[str, list[tuple[Record, Flag]]] = {}
    for record in records:
        for flag in record.statistics.flags:
            kinds.setdefault(flag.code, []).append((record, flag))
    return [(code, flagged, max(flagged, key=lambda pair: flag_severity(*pair)))
            for code, flagged in kinds.items()]
