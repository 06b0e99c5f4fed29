"""The evidence of a run, written once: typed, frozen dataclasses for every file and part.

A campaign fills these objects, the store (``evidence.records``) writes and reads them as
JSON (``base.codec``: one ``to_json``, one ``from_json``, one check), readers use their
attributes and ``ngcc validate`` compares them. The files (``docs/evidence-format.md``):

* ``campaign.json``: :class:`CampaignState` (plan, environment, starts, jobs);
* ``build.json``: :class:`BuildState`, one :class:`BuildEntry` per library (its
  :class:`Implementation` and KAT gate facts, :class:`KatFacts`);
* ``records/<candidate>/<label>__hash_<bytes>.json``: :class:`Record` (trials,
  statistics, resources, raw-sample reference, provenance);

each versioned by its schema string (:data:`SCHEMAS`). The file names of a run
directory are built here, by string concatenation, from names checked against the
one name rule (``ngcc.base.names``); every stored path must equal the one derived from
its names, so no evidence file can point outside its run directory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ngcc.base.codec import Evidence, FieldError, JsonObject, added
from ngcc.base.names import check_name, is_valid_name
from ngcc.evidence import figures as _figures
from ngcc.evidence.choices import CALLS_RULES, COUNTER_CHOICES, ORDERS, STATISTICS

if TYPE_CHECKING:
    from ngcc.library.registry import Instance

SCHEMA_CAMPAIGN = "ngcc.campaign/2"
SCHEMA_BUILD = "ngcc.build/2"
SCHEMA_RECORD = "ngcc.record/2"
SCHEMA_RAW = "ngcc.raw/1"
#: The schema strings this version writes, by file kind.
SCHEMAS = {"campaign": SCHEMA_CAMPAIGN, "build": SCHEMA_BUILD, "record": SCHEMA_RECORD}

#: The versions of :class:`Statistics` this version reads (it writes the last):
#: 1 = ngcc 0.1 (mean, t interval, outlier and counter-rate flags), 2 = + median and
#: bootstrap intervals, batch mean, observer effect, core cycles, preemption flags;
#: 3 = + the CPU-time figure and the leading figure, slow_process and coarse_counter;
#: 4 = the CPU-time figure leads wherever measured, from the trials of the fast speed
#: state (the others left out and flagged ``slow_state``); core cycles from it.
STATISTICS_VERSIONS = (1, 2, 3, 4, 5)

#: A job's status: see ``docs/evidence-format.md``.
JOB_STATUSES = ("pending", "done", "refused", "crash", "timeout", "error", "protocol")
#: The KAT verdicts of ``ngcc.kat`` (tests check they are the same).
KAT_VERDICTS = ("PASS", "MISMATCH", "NOKAT", "CRASH", "TIMEOUT", "ERROR")
#: Verdicts that say the generator could not run here (disk full, no memory …), not
#: what the library computes: never reused from build.json, checked again next run.
RETRIED_VERDICTS = ("ERROR",)
#: What the gate made of a verdict.
GATES = ("pass", "baseline", "override", "refused")
#: What a KAT verdict rests on (``ngcc.kat.BASES``; tests check they are the same).
KAT_BASES = ("shipped manifest", "manifest", "official files", "submission files", "none")

_SHA256 = re.compile(r"[0-9a-f]{64}")
_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


# ------------------------------------------------------------------ file names

def operation(message_bytes: int) -> str:
    """The operation name of a timing job: ``hash_<bytes>``."""
    return "hash_%d" % message_bytes


def record_relpath(candidate: str, label: str, message_bytes: int) -> str:
    """``records/<candidate>/<label>__hash_<bytes>.json``, relative to the run directory."""
    return "records/%s/%s__%s.json" % (check_name(candidate, "candidate id"),
                                      check_name(label, "label"), operation(message_bytes))


def raw_relpath(candidate: str, label: str, message_bytes: int) -> str:
    """``raw/<candidate>/<label>__hash_<bytes>.npz``, relative to the run directory."""
    return "raw/%s/%s__%s.npz" % (check_name(candidate, "candidate id"),
                                 check_name(label, "label"), operation(message_bytes))


def kat_log_relpath(candidate: str, label: str) -> str:
    """``kat/<candidate>/<label>.log``, relative to the run directory."""
    return "kat/%s/%s.log" % (check_name(candidate, "candidate id"), check_name(label, "label"))


#: How the page of a library no candidate claims (candidate ``external``) is named:
#: one page each, ``external-<label>``.
EXTERNAL_PAGE = "external-"


def page_key(candidate: str, label: str) -> str:
    """The report page a library is on: its candidate's (``hash-14``), or, for a library
    no candidate claims, a page of its own (``external-<label>``)."""
    return EXTERNAL_PAGE + label if candidate == "external" else candidate


def page_label(key: str) -> str | None:
    """The library whose own page ``key`` is (:func:`page_key`), or None for a
    candidate's page."""
    return key[len(EXTERNAL_PAGE):] if key.startswith(EXTERNAL_PAGE) else None


def _page_stem(key: str) -> str:
    label = page_label(key)
    return (EXTERNAL_PAGE + check_name(label, "label") if label is not None
            else check_name(key, "candidate id"))


def page_name(candidate: str) -> str:
    """File name of a page in ``report/`` (a :func:`page_key`): ``<candidate>.md``,
    ``external-<label>.md``."""
    return _page_stem(candidate) + ".md"


def plot_stem_cpb(candidate: str) -> str:
    """File stem of a page's cycles/byte plot in ``report/`` (a :func:`page_key`):
    ``<candidate>-cpb``."""
    return _page_stem(candidate) + "-cpb"


def plot_stem_distribution(label: str, message_bytes: int) -> str:
    """File stem of a per-call distribution plot: ``<label>__hash_<bytes>-calls``."""
    return "%s__%s-calls" % (check_name(label, "label"), operation(message_bytes))


# ------------------------------------------------------------------ checks

def _name(value: str, where: str) -> None:
    if not is_valid_name(value):
        raise FieldError(where, "is %r, not a valid name (letters, digits and - _ . + @, "
                                "starting with a letter or digit)" % value[:60])


MAX_TRIAL_CALLS = 1 << 26
"""The most timed calls one trial can make (ngcc-driver's ``MAX_CALLS``)."""


def _trial_calls(value: int | None, where: str) -> None:
    """A count of calls per trial: 1 to :data:`MAX_TRIAL_CALLS` (or None)."""
    _at_least(value, 1, where)
    if value is not None and value > MAX_TRIAL_CALLS:
        raise FieldError(where, "%d is more than a trial can make (%d)" % (value, MAX_TRIAL_CALLS))


def _at_least(value: float | None, low: float, where: str) -> None:
    if value is not None and value < low:
        raise FieldError(where, "is %r, below %r" % (value, low))


def _positive(value: float | None, where: str) -> None:
    if value is not None and not value > 0:
        raise FieldError(where, "is %r, not positive" % value)


def _one_of(value: str, options: tuple[str, ...], where: str) -> None:
    if value not in options:
        raise FieldError(where, "is %r, not one of %s" % (value[:60], ", ".join(options)))


def _sha256(value: str | None, where: str) -> None:
    if value is not None and not _SHA256.fullmatch(value):
        raise FieldError(where, "is %r, not a hex sha256" % value[:70])


def _utc(value: str | None, where: str) -> None:
    if value is not None and not _UTC.fullmatch(value):
        raise FieldError(where, "is %r, not a UTC time like 2026-09-25T10:02:21Z" % value[:40])


def _derived(value: str | None, expected: str, where: str) -> None:
    """A stored path must be the one its names give (so it stays in the run directory)."""
    if value != expected:
        raise FieldError(where, "is %r, but its names give %r" % (str(value)[:80], expected))


# ------------------------------------------------------------------ the library

@dataclass(frozen=True)
class Implementation(Evidence):
    """Which implementation of an instance was timed, from the registry or the sidecar.

    Attributes:
        variant: ``ref``, ``opt``, … or ``external`` (a library made by ``ngcc build``).
        library: the library's absolute path when it was measured.
        library_sha256: the sha256 of its bytes.
        compiler, cflags: how it was built.
        description: the implementation string (``portable C99, 64-bit lanes, …``).
        cpu_features: CPU features it needs; constant_time: whether it claims so.
        build: for an external library, the facts its ``ngcc build`` sidecar records
            (source folder, sources, flags …) except the compiler's warnings.
    """

    variant: str
    library: str
    library_sha256: str
    compiler: str = ""
    cflags: tuple[str, ...] = ()
    description: str = ""
    cpu_features: tuple[str, ...] = ()
    constant_time: bool | None = None
    build: JsonObject | None = None

    def _check(self, where: str) -> None:
        _name(self.variant, where + "variant")
        _sha256(self.library_sha256, where + "library_sha256")

    @classmethod
    def of(cls, instance: Instance, library_sha256: str) -> Implementation:
        """The implementation facts of a registry instance."""
        build = ({key: value for key, value in instance.sidecar.items() if key != "warnings"}
                 if instance.sidecar is not None else None)
        return cls(variant=instance.variant, library=str(instance.library),
                   library_sha256=library_sha256, compiler=instance.compiler,
                   cflags=tuple(instance.cflags), description=instance.description,
                   cpu_features=tuple(instance.cpu_features),
                   constant_time=instance.constant_time, build=build)


@dataclass(frozen=True)
class KatFacts(Evidence):
    """The KAT gate's facts about one library (``build.json`` and every record).

    ``verdict`` is ``ngcc.kat.check``'s; ``gate`` what the gate made of it (``pass``,
    ``baseline``, ``override``, ``refused``); ``log`` the KAT log, relative to the run
    directory. ``timed_without_pass`` is true exactly under the override. ``basis`` is
    what the verdict rests on (:data:`KAT_BASES`, comma-separated when the files differ;
    None in runs of an ngcc that did not record it) and ``reference`` the manifest or
    folder checked against; ``by_content``, when the instance name is no manifest
    label, the lines its files were matched to by content (``equal to Foo512's
    manifest lines (Foo_SIMD512 is no manifest label)``), else None.
    """

    verdict: str
    files: tuple[str, ...]
    log: str
    log_sha256: str | None
    gate: str
    timed_without_pass: bool
    basis: str | None = added(None)
    reference: str | None = added(None)
    by_content: str | None = added(None)

    def _check(self, where: str) -> None:
        _one_of(self.verdict, KAT_VERDICTS, where + "verdict")
        _one_of(self.gate, GATES, where + "gate")
        _sha256(self.log_sha256, where + "log_sha256")
        for part in (self.basis or KAT_BASES[0]).split(", "):
            _one_of(part, KAT_BASES, where + "basis")
        if self.timed_without_pass != (self.gate == "override"):
            raise FieldError(where + "timed_without_pass", "is %r but the gate is %r"
                             % (self.timed_without_pass, self.gate))

    @property
    def retried(self) -> bool:
        """True when the verdict is environmental and is checked again on the next run."""
        return self.verdict in RETRIED_VERDICTS


@dataclass(frozen=True)
class BuildEntry(Evidence):
    """One library of a run in ``build.json``: what it is, its size, its KAT verdict."""

    candidate: str
    instance: str
    label: str
    family: str
    digest_bits: int
    implementation: Implementation
    elf_image_bytes: int | None
    kat: KatFacts

    def _check(self, where: str) -> None:
        _name(self.candidate, where + "candidate")
        _name(self.instance, where + "instance")
        _name(self.label, where + "label")
        _positive(self.digest_bits, where + "digest_bits")
        _at_least(self.elf_image_bytes, 0, where + "elf_image_bytes")
        _derived(self.kat.log, kat_log_relpath(self.candidate, self.label), where + "kat.log")


@dataclass(frozen=True)
class BuildState(Evidence):
    """``build.json``: the libraries of a run and their KAT gate facts."""

    run_id: str
    libraries: tuple[BuildEntry, ...]

    def _check(self, where: str) -> None:
        labels = [entry.label for entry in self.libraries]
        for index, label in enumerate(labels):
            if labels.index(label) != index:
                raise FieldError("%slibraries[%d].label" % (where, index),
                                 "%r is given to two libraries" % label)

    def entry(self, label: str) -> BuildEntry | None:
        """The entry of the library labelled ``label``, if any."""
        return next((e for e in self.libraries if e.label == label), None)


# ------------------------------------------------------------------ the campaign

@dataclass(frozen=True)
class PlanLibrary(Evidence):
    """One library a campaign measures: its instance, label and the sha256 it must keep."""

    candidate: str
    instance: str
    label: str
    variant: str
    library: str
    library_sha256: str

    def _check(self, where: str) -> None:
        _name(self.candidate, where + "candidate")
        _name(self.instance, where + "instance")
        _name(self.label, where + "label")
        _sha256(self.library_sha256, where + "library_sha256")


@dataclass(frozen=True)
class Plan(Evidence):
    """The settings that must not change while a run is resumed (compared key by key)."""

    libraries: tuple[PlanLibrary, ...]
    lengths: tuple[int, ...]
    trials: int
    trial_target_seconds: float
    op_budget_seconds: float
    max_calls: int
    min_calls: int
    cpu: int
    quick: bool
    target_ci_percent: float | None
    max_trials: int
    kat_files: tuple[str, ...]
    kat_override: bool
    statistic: str = "mean"
    calls_rule: str = "harness"

    def _check(self, where: str) -> None:
        _one_of(self.statistic, STATISTICS, where + "statistic")
        _one_of(self.calls_rule, CALLS_RULES, where + "calls_rule")
        if not self.lengths:
            raise FieldError(where + "lengths", "is empty")
        for index, length in enumerate(self.lengths):
            _at_least(length, 1, "%slengths[%d]" % (where, index))
        for name in ("trials", "max_calls", "min_calls", "max_trials"):
            _at_least(getattr(self, name), 1, where + name)
        _positive(self.trial_target_seconds, where + "trial_target_seconds")
        _positive(self.op_budget_seconds, where + "op_budget_seconds")
        _positive(self.target_ci_percent, where + "target_ci_percent")
        _at_least(self.cpu, 0, where + "cpu")
        labels = [library.label for library in self.libraries]
        for index, label in enumerate(labels):
            if labels.index(label) != index:
                raise FieldError("%slibraries[%d].label" % (where, index),
                                 "%r is given to two libraries" % label)


@dataclass(frozen=True)
class Settings(Evidence):
    """Settings of one start that may change between starts (not part of the plan)."""

    kat_timeout_seconds: float | None
    trial_timeout_seconds: float | None
    strict: bool
    runner: str
    order: str | None = None
    #: What measured the jobs: ``None`` for this process's own trial loop, else the
    #: executor (``dask LocalCluster: 2 workers, CPUs 0, 1``, ``dask tcp://host:8786``).
    executor: str | None = added(None)
    #: The counter asked for (``--counter``: one of
    #: :data:`~ngcc.evidence.choices.COUNTER_CHOICES`); None: the runner's default.
    #: Each trial records the counter it got.
    counter: str | None = added(None)

    def _check(self, where: str) -> None:
        if self.order is not None:
            _one_of(self.order, ORDERS, where + "order")
        if self.counter is not None:
            _one_of(self.counter, COUNTER_CHOICES, where + "counter")


@dataclass(frozen=True)
class HostWarning(Evidence):
    """One reason the host is not fixed for measurement; the message quotes the measured
    value and the remedy."""

    code: str
    message: str


@dataclass(frozen=True)
class Counter(Evidence):
    """The cycle counter as calibrated when the campaign started."""

    name: str
    frequency_hz: float
    overhead_min: int
    overhead_median: int
    #: What a tick is (``tsc-ticks``, ``timer-ticks``, ``ns``), as the C side names it;
    #: None in records written before it was stored (the name then tells).
    unit: str | None = added(None)
    #: The rate the architecture states (``cntfrq_el0`` of the AArch64 generic timer);
    #: None where it states none.
    nominal_hz: float | None = added(None)
    #: The smallest step the counter moves in (ticks; ``None`` before ngcc measured it).
    resolution: int | None = added(None)


@dataclass(frozen=True)
class Environment(Evidence):
    """The host fingerprint (``measure.host.fingerprint``); ``None`` where the host does not say."""

    cpu_model: str | None
    machine: str
    cpu: int
    cpu_count: int | None
    cpu_max_mhz: float | None
    governor: str | None
    turbo: bool | None
    smt_siblings: tuple[int, ...]
    virtualization: str | None
    perf_event_paranoid: int | None
    memory_mib: int | None
    counter: Counter | None
    load_average_start: tuple[float, float, float]
    kernel: str
    os: str | None
    compiler: str | None
    python: str
    numpy: str
    ngcc_version: str
    git_commit: str | None
    git_dirty: bool | None
    executable: str | None = None
    #: The host name of the machine measured on (``platform.node()``); None in records
    #: written before ngcc measured on several hosts. Reports never pool one statistic
    #: across hosts.
    host: str | None = added(None)

    def _check(self, where: str) -> None:
        _at_least(self.cpu, 0, where + "cpu")


@dataclass(frozen=True)
class Remeasured(Evidence):
    """A record a start found defective (its path and why) and measured again."""

    record: str
    defect: str


@dataclass(frozen=True)
class Resubmitted(Evidence):
    """A job whose worker was lost while measuring it (``--workers``/``--scheduler``):
    its partial trials were discarded and it was measured again from the start."""

    record: str
    worker: str
    reason: str


@dataclass(frozen=True)
class Start(Evidence):
    """One start of the campaign in this run directory (the first one created it)."""

    at: str
    command: tuple[str, ...] | None
    settings: Settings | None
    load_average_start: tuple[float, float, float]
    host_warnings: tuple[HostWarning, ...]
    remeasured: tuple[Remeasured, ...] = ()
    resubmitted: tuple[Resubmitted, ...] = added(())

    def _check(self, where: str) -> None:
        _utc(self.at, where + "at")


@dataclass(frozen=True)
class Job(Evidence):
    """One library × message length: its status, calibration and plan, its files."""

    candidate: str
    instance: str
    label: str
    message_bytes: int
    status: str
    t1_seconds: float | None
    calls_per_trial: int | None
    warmup_calls: int | None
    trials_planned: int
    estimated_seconds: float | None
    record: str
    raw: str
    error: str | None
    warm_call_seconds: float | None = None

    def _check(self, where: str) -> None:
        _name(self.candidate, where + "candidate")
        _name(self.instance, where + "instance")
        _name(self.label, where + "label")
        _at_least(self.message_bytes, 1, where + "message_bytes")
        _one_of(self.status, JOB_STATUSES, where + "status")
        _positive(self.t1_seconds, where + "t1_seconds")
        _positive(self.warm_call_seconds, where + "warm_call_seconds")
        _trial_calls(self.calls_per_trial, where + "calls_per_trial")
        _at_least(self.warmup_calls, 0, where + "warmup_calls")
        _at_least(self.trials_planned, 1, where + "trials_planned")
        _derived(self.record, record_relpath(self.candidate, self.label, self.message_bytes),
                 where + "record")
        _derived(self.raw, raw_relpath(self.candidate, self.label, self.message_bytes),
                 where + "raw")
        if self.status not in ("pending", "done") and not self.error:
            raise FieldError(where + "error", "is empty for a %s job" % self.status)


@dataclass(frozen=True)
class CampaignState(Evidence):
    """``campaign.json``: plan, environment of the first start, every start, every job."""

    run_id: str
    created: str
    updated: str | None
    finished: str | None
    plan: Plan
    environment: Environment
    starts: tuple[Start, ...]
    load_average_end: tuple[float, float, float] | None
    jobs: tuple[Job, ...]

    def _check(self, where: str) -> None:
        if not self.run_id:
            raise FieldError(where + "run_id", "is empty")
        for name in ("created", "updated", "finished"):
            _utc(getattr(self, name), where + name)
        if not self.starts:
            raise FieldError(where + "starts", "is empty")
        labels = {library.label for library in self.plan.libraries}
        seen: set[tuple[str, int]] = set()
        for index, job in enumerate(self.jobs):
            key = (job.label, job.message_bytes)
            if job.label not in labels:
                raise FieldError("%sjobs[%d].label" % (where, index),
                                 "%r is no library of the plan" % job.label)
            if key in seen:
                raise FieldError("%sjobs[%d]" % (where, index),
                                 "%s at %d B is listed twice" % key)
            seen.add(key)
        planned = [(library.label, length) for library in self.plan.libraries
                   for length in self.plan.lengths]
        missing = [key for key in planned if key not in seen]
        if missing:  # every planned job is listed from the start, pending until run
            raise FieldError(where + "jobs", "is empty" if not self.jobs else
                             "lacks %d planned job(s): %s at %d B first" % (
                                 len(missing), *missing[0]))


# ------------------------------------------------------------------ one trial's facts

#: The units a counter's ticks can be in.
UNITS = ("tsc-ticks", "timer-ticks", "ns", "core-cycles")
#: What submitted code ran in (``base.sandbox``): its own user, PID, network, IPC and
#: mount namespaces with the seccomp filter, or the seccomp filter alone.
ISOLATIONS = ("namespaces", "filter")
#: Where a trial's timed message lay: ``heap`` is where the NGCC harness puts its own
#: (a heap buffer, 64-byte aligned, with 64 bytes after the message:
#: ``csrc/driver/buffers.h``); a trial without it (before ngcc recorded it) had its
#: message end at the last byte of a page, against a guard page.
PLACEMENTS = ("heap",)


@dataclass(frozen=True)
class TrialMeasurement:
    """The facts of one trial, as the trial process reported them: facts only (no
    statistics); a fact a runner cannot observe is ``None`` (for example the context
    switches of a trial measured by an older runner).

    Attributes:
        pid: the trial process.
        cpu: the CPU the process was pinned to.
        cycles: counter ticks of every timed call (uint64, one per call), each
            call bracketed by two serialised counter reads (overhead included).
        loop_ticks, loop_ns: one counter reading and one CLOCK_MONOTONIC_RAW
            reading around the whole per-call loop.
        counter: ``rdtsc``, ``cntvct_el0``, ``clock_monotonic_raw``,
            ``perf_cycles_rdpmc`` or ``perf_cycles_read`` (core cycles by perf).
        unit: the unit of ``cycles``: one of :data:`UNITS`.
        frequency_hz: counter ticks per second, calibrated in the trial process.
        overhead_min_ticks, overhead_median_ticks: an empty timed region.
        baseline_rss_kib: resident set after loading the library, before any call.
        peak_rss_kib: peak resident set after the timed loops.
        load_average: the 1, 5 and 15 minute load averages at the end.
        batch_calls, batch_ticks, batch_ns: the same calls timed again in a loop
            without per-call reads (one reading each around it).
        batch_thread_cpu_ns, batch_involuntary_switches: the thread's CPU time and
            involuntary context switches over that batch.
        core_cycles_per_tick: core clock cycles per counter tick, estimated in the
            trial from a dependency chain of known latency (None where unknown).
        thread_cpu_ns: CPU time of the thread over the per-call loop.
        voluntary_switches, involuntary_switches: context switches of the thread
            over the per-call loop (``getrusage(RUSAGE_THREAD)``).
        affinity_changed: the process's CPU affinity was no longer ``{cpu}`` after
            the loops (the library changed it).
        parent_wall_ns: the parent's own clock around the whole child, for the
            cross-check of the claimed loop time.
        counter_resolution_ticks: the smallest step the counter moved in, measured in
            the trial process (the gcd of the differences of successive reads).
        batch_min_cpu_ns, batch_min_calls: the batch's sub-batch of least thread CPU
            time per call (up to 16 of 1 ms or more): its CPU time and its calls.
        honesty_calls, honesty_ticks, honesty_ns, honesty_min_cpu_ns, honesty_min_calls:
            the honesty batch after it (calls on varied messages of the same length,
            timed the same way: ``csrc/driver/honesty.h``); None where none was made.
        outside_batch_cpu_ns: the on-CPU time of the trial's thread around the batch,
            read by the parent from the kernel (``ngcc.driver.outside``); None where
            not read.
        isolation: what the trial process ran in: ``namespaces`` (its own user, PID,
            network, IPC and mount namespaces, and the seccomp filter) or ``filter``
            (the seccomp filter alone: ``--no-sandbox``); None where not recorded.
        placement: where the timed message lay (:data:`PLACEMENTS`); None where not
            recorded.
    """

    pid: int
    cpu: int
    cycles: np.ndarray
    loop_ticks: int
    loop_ns: int
    counter: str
    unit: str
    frequency_hz: float
    overhead_min_ticks: int
    overhead_median_ticks: int
    baseline_rss_kib: int
    peak_rss_kib: int
    load_average: tuple[float, float, float]
    batch_calls: int | None = None
    batch_ticks: int | None = None
    batch_ns: int | None = None
    core_cycles_per_tick: float | None = None
    thread_cpu_ns: int | None = None
    voluntary_switches: int | None = None
    involuntary_switches: int | None = None
    affinity_changed: bool | None = None
    parent_wall_ns: int | None = None
    batch_thread_cpu_ns: int | None = None
    batch_involuntary_switches: int | None = None
    counter_resolution_ticks: int | None = None
    batch_min_cpu_ns: int | None = None
    batch_min_calls: int | None = None
    isolation: str | None = None
    placement: str | None = None
    honesty_calls: int | None = None
    honesty_ticks: int | None = None
    honesty_ns: int | None = None
    honesty_min_cpu_ns: int | None = None
    honesty_min_calls: int | None = None
    outside_batch_cpu_ns: int | None = None


# ------------------------------------------------------------------ the record

@dataclass(frozen=True)
class TrialStatistics(Evidence):
    """Statistics of one trial's per-call counts (``stats.trials.trial_statistics``)."""

    mean_cycles: float
    median_cycles: float
    min_cycles: int
    p5_cycles: float
    p95_cycles: float
    stdev_cycles: float | None
    counter_rate_ratio: float | None
    # Version 3: the thread's CPU time per call over the uninstrumented batch (its
    # sub-batch of least CPU time per call, where measured) and over the per-call loop,
    # in ns and in counter units (None before, or not measured).
    cpu_time_ns: float | None = added(None)
    cpu_time_ticks: float | None = added(None)
    loop_cpu_time_ns: float | None = added(None)
    loop_cpu_time_ticks: float | None = added(None)


@dataclass(frozen=True)
class Trial(Evidence):
    """One trial (a fresh process pinned to ``cpu``): every fact its runner reported
    (:class:`TrialMeasurement`; ``None`` where the runner cannot observe it)
    and the statistics of its calls. The per-call counts are in the raw file."""

    index: int
    started: str
    pid: int
    cpu: int
    calls: int
    warmup_calls: int
    counter: str
    unit: str
    frequency_hz: float
    loop_ticks: int
    loop_ns: int
    overhead_min_ticks: int
    overhead_median_ticks: int | None
    baseline_rss_kib: int
    peak_rss_kib: int
    load_average: tuple[float, float, float]
    statistics: TrialStatistics
    batch_calls: int | None = None
    batch_ticks: int | None = None
    batch_ns: int | None = None
    core_cycles_per_tick: float | None = None
    thread_cpu_ns: int | None = None
    voluntary_switches: int | None = None
    involuntary_switches: int | None = None
    affinity_changed: bool | None = None
    parent_wall_ns: int | None = None
    batch_thread_cpu_ns: int | None = None
    batch_involuntary_switches: int | None = None
    position: int | None = None
    #: The counter's smallest step in this trial's process (``counter_resolution``).
    counter_resolution_ticks: int | None = added(None)
    #: The batch's sub-batch of least thread CPU time per call: its CPU time, its calls.
    batch_min_cpu_ns: int | None = added(None)
    batch_min_calls: int | None = added(None)
    #: What the trial process ran in (:data:`ISOLATIONS`); None in older runs.
    isolation: str | None = added(None)
    #: Where the timed message lay (:data:`PLACEMENTS`); None in older runs.
    placement: str | None = added(None)
    #: The honesty batch (calls on varied messages of the same length, timed as the
    #: batch is): its calls, ticks, ns and its sub-batch of least thread CPU time per
    #: call; None in older runs and where none was made.
    honesty_calls: int | None = added(None)
    honesty_ticks: int | None = added(None)
    honesty_ns: int | None = added(None)
    honesty_min_cpu_ns: int | None = added(None)
    honesty_min_calls: int | None = added(None)
    #: The thread's on-CPU time around the batch, read by ngcc from outside the
    #: process (``/proc/TID/task/TID/schedstat``); None in older runs, or not read.
    outside_batch_cpu_ns: int | None = added(None)

    def _check(self, where: str) -> None:
        _at_least(self.index, 0, where + "index")
        if self.isolation is not None:
            _one_of(self.isolation, ISOLATIONS, where + "isolation")
        if self.placement is not None:
            _one_of(self.placement, PLACEMENTS, where + "placement")
        _at_least(self.counter_resolution_ticks, 0, where + "counter_resolution_ticks")
        for name in ("honesty_calls", "honesty_ticks", "honesty_ns", "honesty_min_cpu_ns",
                     "honesty_min_calls", "outside_batch_cpu_ns"):
            _at_least(getattr(self, name), 0, where + name)
        _at_least(self.position, 0, where + "position")
        _utc(self.started, where + "started")
        _at_least(self.cpu, 0, where + "cpu")
        _at_least(self.calls, 1, where + "calls")
        _at_least(self.warmup_calls, 0, where + "warmup_calls")
        _one_of(self.unit, UNITS, where + "unit")
        _positive(self.frequency_hz, where + "frequency_hz")
        for name in ("loop_ticks", "loop_ns", "baseline_rss_kib", "peak_rss_kib"):
            _at_least(getattr(self, name), 0, where + name)

    @property
    def loop_seconds(self) -> float:
        """Wall-clock seconds of the per-call loop."""
        return self.loop_ns / 1e9

    @classmethod
    def of(cls, index: int, started: str, warmup_calls: int, measured: TrialMeasurement,
           statistics: TrialStatistics, position: int | None = None) -> Trial:
        """A trial entry from a runner's measurement: every fact but the cycles."""
        return cls(
            index=index, started=started, pid=measured.pid, cpu=measured.cpu,
            calls=len(measured.cycles), warmup_calls=warmup_calls, counter=measured.counter,
            unit=measured.unit, frequency_hz=measured.frequency_hz,
            loop_ticks=measured.loop_ticks, loop_ns=measured.loop_ns,
            overhead_min_ticks=measured.overhead_min_ticks,
            overhead_median_ticks=measured.overhead_median_ticks,
            baseline_rss_kib=measured.baseline_rss_kib, peak_rss_kib=measured.peak_rss_kib,
            load_average=measured.load_average, statistics=statistics,
            batch_calls=measured.batch_calls, batch_ticks=measured.batch_ticks,
            batch_ns=measured.batch_ns, core_cycles_per_tick=measured.core_cycles_per_tick,
            thread_cpu_ns=measured.thread_cpu_ns,
            voluntary_switches=measured.voluntary_switches,
            involuntary_switches=measured.involuntary_switches,
            affinity_changed=measured.affinity_changed,
            parent_wall_ns=measured.parent_wall_ns,
            batch_thread_cpu_ns=measured.batch_thread_cpu_ns,
            batch_involuntary_switches=measured.batch_involuntary_switches,
            position=position, counter_resolution_ticks=measured.counter_resolution_ticks,
            batch_min_cpu_ns=measured.batch_min_cpu_ns,
            batch_min_calls=measured.batch_min_calls, isolation=measured.isolation,
            placement=measured.placement, honesty_calls=measured.honesty_calls,
            honesty_ticks=measured.honesty_ticks, honesty_ns=measured.honesty_ns,
            honesty_min_cpu_ns=measured.honesty_min_cpu_ns,
            honesty_min_calls=measured.honesty_min_calls,
            outside_batch_cpu_ns=measured.outside_batch_cpu_ns)


#: The codes of :class:`Flag` (``outlying_trial`` only in statistics of version 1;
#: ``slow_process`` and ``coarse_counter`` from version 3, ``slow_state`` from 4).
FLAG_CODES = ("slow_trial", "fast_trial", "preempted", "counter_rate", "affinity_changed",
              "outlying_trial", "slow_process", "coarse_counter", "slow_state")


@dataclass(frozen=True)
class Flag(Evidence):
    """A flagged trial: why (one of :data:`FLAG_CODES`), which, the message (the figure,
    a cause that fits it, the remedy) and the figure itself: the relative departure
    from the median of trial means (``slow_trial`` > 0, ``fast_trial`` < 0), the
    counter rate ratio (``counter_rate``), the share of wall time on the CPU
    (``preempted``), the per-call minimum's departure from the job's best
    (``slow_process`` > 0), the CPU-time figure's departure from the job's fastest
    trial's (``slow_state`` > 0) or the counter steps per call (``coarse_counter``); ``None``
    in statistics of version 1 and for ``affinity_changed`` (the library changed the
    trial process's CPU affinity)."""

    code: str
    trial: int
    message: str
    value: float | None = None

    def _check(self, where: str) -> None:
        _one_of(self.code, FLAG_CODES, where + "code")

    @property
    def severity(self) -> float | None:
        """How far ``value`` lies from an undisturbed trial's (0 for the departures of
        ``slow_trial``/``fast_trial``, 1 for the ratios of ``preempted`` and
        ``counter_rate``): what picks the worst flag of a kind; ``None`` without value."""
        if self.value is None:
            return None
        if self.code == "coarse_counter":  # the fewer steps, the worse
            return -self.value
        quiet = 1.0 if self.code in ("preempted", "counter_rate") else 0.0
        return abs(self.value - quiet)


#: The figures a record can lead with (``Statistics.leading``; ``evidence.figures``).
LEADING_FIGURES = _figures.LEADING_CODES


@dataclass(frozen=True)
class Statistics(Evidence):
    """The aggregate statistics of one job over its trials (``stats.trials.aggregate``), by
    the rules of ``version`` (:data:`STATISTICS_VERSIONS`). Fields named ``_cycles``
    keep their ngcc 0.1 names and hold counter ticks, like the ``_ticks`` fields; only
    ``core_cycles_…`` are core cycles.

    Which figure a record leads with, and how every view reads it: :attr:`figure`
    (``evidence.figures.lead``). From version 4, ``cycles_per_byte``, ``mean_seconds``'s
    ``mb_per_s`` and ``core_cycles_per_byte`` are of that leading figure; before, of the
    per-call mean (``mean_cycles``)."""

    trials: int
    calls: int
    mean_cycles: float
    median_cycles: float
    min_cycles: int
    p5_cycles: float
    p95_cycles: float
    stdev_cycles: float | None
    median_of_trial_means_cycles: float
    ci95_low_cycles: float | None
    ci95_high_cycles: float | None
    ci95_half_width_cycles: float | None
    ci95_relative: float | None
    cycles_per_byte: float | None
    mean_seconds: float
    mb_per_s: float | None
    outlying_trials: tuple[int, ...]
    disturbed_trials: tuple[int, ...]
    flags: tuple[Flag, ...]
    # Version 2 (ngcc 0.2): ``None`` in a record of version 1 means "not computed by
    # the ngcc that wrote it"; in version 2 it means undefined (one trial, no facts).
    version: int = 1
    per_call_mean_ticks: float | None = None
    mean_bootstrap_ci95_low_ticks: float | None = None
    mean_bootstrap_ci95_high_ticks: float | None = None
    mean_bootstrap_ci95_relative: float | None = None
    median_ci95_low_ticks: float | None = None
    median_ci95_high_ticks: float | None = None
    median_ci95_relative: float | None = None
    batch_mean_ticks: float | None = None
    observer_effect_ticks: float | None = None
    observer_effect_relative: float | None = None
    core_cycles_per_tick: float | None = None
    core_cycles_per_byte: float | None = None
    preempted_trials: tuple[int, ...] | None = None
    # Version 3: the CPU-time figure (the thread's CPU time per call over the
    # uninstrumented batch, median of the trials, bootstrap interval) and which figure
    # leads (``cpu_time`` or ``harness_mean``: ``stats.trials.leading_figure``).
    # (absent from the JSON of older records, which read and write back as they were)
    cpu_time_ticks: float | None = added(None)
    cpu_time_seconds: float | None = added(None)
    cpu_time_ci95_low_ticks: float | None = added(None)
    cpu_time_ci95_high_ticks: float | None = added(None)
    cpu_time_ci95_relative: float | None = added(None)
    loop_cpu_time_ticks: float | None = added(None)
    cpu_time_per_byte: float | None = added(None)
    leading: str | None = added(None)
    # Version 4: the trials of the slow speed state, left out of the CPU-time figure
    # (``stats.trials.speed_states``), and the spread of the trials' estimates of core
    # cycles per tick ((max - min) / median).
    left_out_trials: tuple[int, ...] | None = added(None)
    core_cycles_per_tick_spread: float | None = added(None)

    @property
    def figure(self) -> _figures.Value:
        """The figure this record leads with (``evidence.figures.lead``): the number
        every table, page, plot, export and comparison shows first."""
        return _figures.lead(self)

    @property
    def mean_ci95(self) -> tuple[float | None, float | None, float | None]:
        """The 95 % CI of the mean, the one rule every page and table shows: the
        bootstrap interval (never below zero) from version 2, else the t interval, as
        (low, high, half-width / mean); None where a single trial has none."""
        if self.version >= 2:
            return (self.mean_bootstrap_ci95_low_ticks, self.mean_bootstrap_ci95_high_ticks,
                    self.mean_bootstrap_ci95_relative)
        return self.ci95_low_cycles, self.ci95_high_cycles, self.ci95_relative

    def _check(self, where: str) -> None:
        _at_least(self.trials, 1, where + "trials")
        if self.leading is not None:
            _one_of(self.leading, LEADING_FIGURES, where + "leading")
        _at_least(self.calls, 1, where + "calls")
        _one_of(str(self.version), tuple(str(v) for v in STATISTICS_VERSIONS),
                where + "version")
        for name in ("mean_bootstrap_ci95_low_ticks", "median_ci95_low_ticks",
                     "batch_mean_ticks", "core_cycles_per_tick", "core_cycles_per_byte"):
            _at_least(getattr(self, name), 0, where + name)


@dataclass(frozen=True)
class JobPlan(Evidence):
    """The plan of one job as it was measured (calibration, calls, warm-up, budget)."""

    t1_seconds: float
    calls_per_trial: int
    warmup_calls: int
    trials_planned: int
    trial_target_seconds: float
    op_budget_seconds: float
    target_ci_percent: float | None
    max_trials: int
    cpu: int
    estimated_seconds: float
    calls_rule: str = "harness"
    statistic: str = "mean"
    order: str | None = None
    warm_call_seconds: float | None = None

    def _check(self, where: str) -> None:
        _one_of(self.calls_rule, CALLS_RULES, where + "calls_rule")
        _one_of(self.statistic, STATISTICS, where + "statistic")
        if self.order is not None:
            _one_of(self.order, ORDERS, where + "order")
        _positive(self.warm_call_seconds, where + "warm_call_seconds")
        _positive(self.t1_seconds, where + "t1_seconds")
        _trial_calls(self.calls_per_trial, where + "calls_per_trial")
        _at_least(self.warmup_calls, 0, where + "warmup_calls")
        _at_least(self.cpu, 0, where + "cpu")


@dataclass(frozen=True)
class RejectedTrial(Evidence):
    """A trial ``--strict`` rejected and repeated: the trial it would have been
    (``trial``), its position in the run's order, when it started, why (a flag code:
    ``preempted`` or ``counter_rate``) and the flag's message. Its calls are not kept."""

    trial: int
    position: int | None
    started: str
    code: str
    message: str

    def _check(self, where: str) -> None:
        _at_least(self.trial, 0, where + "trial")
        _utc(self.started, where + "started")
        _one_of(self.code, FLAG_CODES, where + "code")


@dataclass(frozen=True)
class Resources(Evidence):
    """Static memory (the library's ELF image) and the maxima of the trials' RSS."""

    elf_image_bytes: int | None
    baseline_rss_kib: int
    peak_rss_kib: int

    @classmethod
    def of(cls, elf_image_bytes: int | None, trials: Sequence[Trial]) -> Resources:
        """The rule: the maxima over ``trials`` of their resident sets."""
        return cls(elf_image_bytes=elf_image_bytes,
                   baseline_rss_kib=max(t.baseline_rss_kib for t in trials),
                   peak_rss_kib=max(t.peak_rss_kib for t in trials))


@dataclass(frozen=True)
class RawRef(Evidence):
    """Where a job's per-call cycles are (relative path), their sha256, calls per trial."""

    path: str
    sha256: str
    calls_per_trial: tuple[int, ...]

    def _check(self, where: str) -> None:
        _sha256(self.sha256, where + "sha256")


@dataclass(frozen=True)
class Provenance(Evidence):
    """Who wrote a record, when, with which command, runner and message."""

    created: str
    ngcc_version: str
    git_commit: str | None
    command: tuple[str, ...]
    runner: str
    message: str

    def _check(self, where: str) -> None:
        _utc(self.created, where + "created")


@dataclass(frozen=True)
class Record(Evidence):
    """One timed job (library × message length): its trials, statistics and provenance.

    The record is the commit point of a job: it names its raw samples by path and
    sha256, and ``ngcc validate`` recomputes its statistics from them.
    """

    run_id: str
    candidate: str
    instance: str
    label: str
    family: str
    digest_bits: int
    operation: str
    message_bytes: int
    implementation: Implementation
    kat: KatFacts
    plan: JobPlan
    environment: Environment
    trials: tuple[Trial, ...]
    statistics: Statistics
    resources: Resources
    raw: RawRef
    provenance: Provenance
    rejected_trials: tuple[RejectedTrial, ...] = ()
    #: With ``--target-ci``: the relative half-width (percent) of the 95 % interval of
    #: the plan's statistic when the job stopped (None without a target, or one trial).
    target_ci_reached_percent: float | None = added(None)

    def _check(self, where: str) -> None:
        _name(self.candidate, where + "candidate")
        _name(self.instance, where + "instance")
        _name(self.label, where + "label")
        _at_least(self.message_bytes, 1, where + "message_bytes")
        _derived(self.operation, operation(self.message_bytes), where + "operation")
        _derived(self.raw.path, raw_relpath(self.candidate, self.label, self.message_bytes),
                 where + "raw.path")
        _derived(self.kat.log, kat_log_relpath(self.candidate, self.label), where + "kat.log")
        if not self.trials:
            raise FieldError(where + "trials", "is empty")
        for index, trial in enumerate(self.trials):
            if trial.index != index:
                raise FieldError("%strials[%d].index" % (where, index),
                                 "is %d, not %d" % (trial.index, index))
        positions = [t.position for t in self.trials]
        for index in range(1, len(positions)):
            before, now = positions[index - 1], positions[index]
            if before is not None and now is not None and now <= before:
                raise FieldError("%strials[%d].position" % (where, index),
                                 "is %d, not after trial %d's %d" % (now, index - 1, before))

    @property
    def target_missed(self) -> bool:
        """True when the job had ``--target-ci`` and stopped (at ``--max-trials``)
        with its interval wider than that."""
        target = self.plan.target_ci_percent
        reached = self.target_ci_reached_percent
        return target is not None and (reached is None or reached > target)

    @property
    def relpath(self) -> str:
        """Where this record is, relative to the run directory."""
        return record_relpath(self.candidate, self.label, self.message_bytes)

    def __repr__(self) -> str:
        lead = self.statistics.figure
        unit = _figures.unit_word(t.unit for t in self.trials)
        return "<Record %s %s %d B: %.1f %s/byte (%s), ±%.2f %% over %d trials>" % (
            self.candidate, self.label, self.message_bytes,
            lead.per_byte(self.message_bytes) or 0.0, unit, lead.figure.short,
            100 * (lead.ci_relative or 0.0), self.statistics.trials)


#: The evidence class of each schema string this version reads.
FILE_CLASSES: dict[str, type[Evidence]] = {
    SCHEMA_CAMPAIGN: CampaignState, SCHEMA_BUILD: BuildState, SCHEMA_RECORD: Record}
