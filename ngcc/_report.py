"""Markdown report pages of a run: one page per candidate, and a summary page.

A candidate page has the structure of the independent NGCC performance pages
(``docs/spec/seeds/``), which follow the NICCS x86 self-assessment guide §3.5: sections
1 (basic information), 2 (assessment environment), 3 (functional testing), 4
(performance), 5 (resource consumption) and 7 (raw evidence index), with the same
columns and number formatting (:mod:`ngcc._format`). What those pages lack — the
95 % confidence interval of each mean, the per-call median, the ratio to the
pseudoXOF baseline, the trial flags and the plots — sits in one clearly titled extra
section after section 4.

Pages are a pure function of the run directory: no rendering time, no absolute
path, so ``ngcc validate`` can regenerate them and compare byte for byte.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc import _format
from ngcc._errors import CorruptRecordError, ReportError
from ngcc._records import Record, file_stem

if TYPE_CHECKING:
    from ngcc._run import Run

SECTION_TITLES = (
    "1. Basic information",
    "2. Assessment environment",
    "3. Functional testing (KAT)",
    "4. Performance",
    "5. Resource consumption",
    "7. Raw evidence index",
)
EXTRA_TITLE = "Additional statistics (beyond the guide's structure)"

ENVIRONMENT_COLUMNS = ("item", "value")
KAT_COLUMNS = ("instance", "build flags", "KAT")
PERFORMANCE_COLUMNS = ("instance", "message", "mean cycles", "cycles/byte", "mean time",
                       "MB/s", "n")
EXTRA_COLUMNS = ("instance", "message", "mean cycles", "95 % CI of the mean",
                 "CI half-width", "median cycles/call", "× pseudoXOF")
RESOURCE_COLUMNS = ("instance", "operation", "static: ELF image (bytes)", "baseline RSS",
                    "peak RSS")
EVIDENCE_COLUMNS = ("instance", "item", "file")

CANDIDATE_TITLES = {
    "hash-22": "Pavelor: A Highly Secure Hash Algorithm for Software Implementation",
    "hash-34": "WChain Hash Function",
    "hash-35": "Wish Hash Function",
    "baseline": "ICCS baseline functions (SM3, pseudohash, pseudoXOF)",
}
"""The algorithm titles of the candidates ngcc ships (as their submissions name them)."""

GUIDE_CFLAGS = frozenset({"-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-O2", "-fPIC"})
"""The NGCC guide's reference compiler flags; a build adding only what a shared library
needs (:data:`LIBRARY_CFLAGS`) is shown as ``guide``, as on the seed pages."""
LIBRARY_CFLAGS = frozenset({"-fvisibility=hidden", "-shared"})

VARIANT_NAMES = {"ref": "reference", "opt": "optimised", "external": "external library"}
MACHINE_NAMES = {"x86_64": "x86-64", "aarch64": "AArch64", "arm64": "AArch64"}
WARNING = "⚠"
BASELINE_FAMILY = "pseudoXOF"


# ------------------------------------------------------------------ Markdown pieces

def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table: header, separator, one line per row."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return lines


def code(text: str) -> str:
    """Inline code, as the seeds show instance names and files: `` `Wish512` ``."""
    return f"`{text}`"


def _utc(stamp: str | None) -> str:
    """``2026-09-25T10:02:21Z`` as the seeds show it (no ``Z``; the header says UTC)."""
    return stamp.rstrip("Z") if stamp else "not finished"


# ------------------------------------------------------------------ what a run holds

def instance_label(record: Record) -> str:
    """The instance as the tables show it: `` `Wish512` ``, plus ⚠ when timed without a
    KAT pass; a non-reference variant carries its suffix (`` `Wish512.opt` ``)."""
    label = code(record_stem(record))
    return f"{label} {WARNING}" if record.timed_without_pass else label


def candidates(run: Run) -> list[str]:
    """The candidate ids of a run, in plan order."""
    found: list[str] = []
    for entry in run.plan.get("instances", []):
        if entry["candidate"] not in found:
            found.append(entry["candidate"])
    for record in run.records:
        if record.candidate not in found:
            found.append(record.candidate)
    return found


def build_entries(run: Run, candidate: str) -> list[dict[str, Any]]:
    """The ``build.json`` entries (library, flags, ELF size, KAT) of one candidate."""
    return [entry for entry in run.build.get("instances", [])
            if entry["candidate"] == candidate]


def candidate_records(run: Run, candidate: str) -> list[Record]:
    """The records of one candidate, in plan order (instance, then message length)."""
    return [record for record in run.records if record.candidate == candidate]


def baseline_record(run: Run, record: Record) -> Record | None:
    """The pseudoXOF record of the same output width and length, if the run has one."""
    name = f"{BASELINE_FAMILY}-{record.data.get('digest_bits')}"
    for other in run.records:
        if other.instance == name and other.message_bytes == record.message_bytes:
            return other
    return None


def baseline_ratio(run: Run, record: Record) -> float | None:
    """Mean cycles of ``record`` over those of its pseudoXOF baseline (``None`` if absent)."""
    baseline = baseline_record(run, record)
    if baseline is None:
        return None
    return float(record.statistics["mean_cycles"]) / float(
        baseline.statistics["mean_cycles"])


def calls_per_trial(record: Record) -> list[int]:
    """How many calls each trial timed."""
    return [int(trial["calls"]) for trial in record.trials]


# ------------------------------------------------------------------ candidate page

def candidate_page(run: Run, candidate: str) -> str:
    """The Markdown page of one candidate of a run (sections 1–5 and 7 of the guide)."""
    records = candidate_records(run, candidate)
    builds = build_entries(run, candidate)
    lines = _title(run, candidate)
    lines += _basic_information(run, candidate, records, builds)
    lines += _environment(run)
    lines += _functional_testing(run, candidate, builds)
    lines += _performance(run, candidate, records)
    lines += _additional_statistics(run, candidate, records)
    lines += _resources(records)
    lines += _evidence_index(run, records, builds)
    return "\n".join(lines) + "\n"


def _family(records: Sequence[Record], builds: Sequence[dict[str, Any]]) -> str:
    families = [str(r.data.get("family", "")) for r in records]
    families += [str(b.get("family", "")) for b in builds]
    return next((family for family in families if family), "")


def _title(run: Run, candidate: str) -> list[str]:
    machine = str(run.environment.get("machine") or "")
    title = CANDIDATE_TITLES.get(candidate) or _family(candidate_records(run, candidate),
                                                       build_entries(run, candidate))
    return [
        f"# {candidate} {title} — performance on {MACHINE_NAMES.get(machine, machine)} "
        f"(run {run.run_id})", "",
        "Independent measurement following the structure of the NICCS x86 "
        "self-assessment guide, §3.5 (1)–(7). Not a submitter self-assessment. "
        "Made by ngcc from the run directory; every figure below can be traced to a "
        "file listed in section 7.", ""]


def _instances(records: Sequence[Record], builds: Sequence[dict[str, Any]]) -> list[str]:
    names = [build_stem(b) for b in builds]
    for record in records:
        name = record_stem(record)
        if name not in names:
            names.append(name)
    return names


def _basic_information(run: Run, candidate: str, records: Sequence[Record],
                       builds: Sequence[dict[str, Any]]) -> list[str]:
    variants = {str(r.data.get("variant", "ref")) for r in records}
    variants |= {str(b.get("variant", "ref")) for b in builds}
    plan = run.plan
    method = (f"ngcc {run.environment.get('ngcc_version', '')}: KAT gate, then per-call "
              f"cycle counts in {plan.get('trials')} trials per message length, each a "
              f"fresh process pinned to CPU {plan.get('cpu')} (README, Method)")
    title = CANDIDATE_TITLES.get(candidate) or _family(records, builds)
    items = [
        ("Category", "cryptographic hash algorithm; function: hash"),
        ("Algorithm", title),
        ("Implementation versions measured",
         ", ".join(VARIANT_NAMES.get(v, v) for v in sorted(variants)) or _format.MISSING),
        ("Parameter sets", ", ".join(_instances(records, builds)) or _format.MISSING),
        ("Security evaluation", "outside the scope of this performance report"),
        ("Measurement method", method),
        ("Submission", f"NGCC Round 1 candidate {candidate}"),
    ]
    return ["## " + SECTION_TITLES[0], ""] + [f"- {k}: {v}" for k, v in items] + [""]


def _clock(env: dict[str, Any]) -> str:
    mhz = env.get("cpu_max_mhz")
    turbo = "unknown" if env.get("turbo") is None else ("on" if env["turbo"] else "off")
    siblings = env.get("smt_siblings")
    smt = "unknown" if siblings is None else ("off" if len(siblings) <= 1 else "on")
    maximum = f"max {mhz / 1000:.2f} GHz" if mhz else "max unknown"
    return (f"{maximum}, governor {env.get('governor') or 'unknown'}, turbo {turbo}, "
            f"SMT {smt}")


def _counter(env: dict[str, Any]) -> str:
    counter = env.get("counter") or {}
    frequency = counter.get("frequency_hz")
    rate = f"{frequency / 1e9:.3f} GHz" if frequency else "unknown rate"
    return (f"{counter.get('name', 'unknown')}, {rate}, overhead "
            f"{counter.get('overhead_min')}–{counter.get('overhead_median')} cycles "
            f"(min–median; recorded, not subtracted)")


def environment_items(run: Run) -> list[tuple[str, str]]:
    """Section 2's rows: the seed's six items, then the fingerprint's other facts."""
    env = run.environment
    memory = env.get("memory_mib")
    software = (f"Python {env.get('python')}, numpy {env.get('numpy')}, ngcc "
                f"{env.get('ngcc_version')}{_commit(env)}")
    return [
        ("processor", f"{env.get('cpu_model') or 'unknown'} (CPU {env.get('cpu')}, one core)"),
        ("clock", _clock(env)),
        ("memory", f"{memory} MiB" if memory else _format.MISSING),
        ("OS / kernel", f"{env.get('os') or 'unknown'} / {env.get('kernel') or 'unknown'}"),
        ("compiler / build tool", f"{env.get('compiler') or 'unknown'} / setuptools, "
                                  "ngcc build"),
        ("campaign start / end (UTC)",
         f"{_utc(run.campaign.get('created'))} / {_utc(run.campaign.get('finished'))}"),
        ("cycle counter", _counter(env)),
        ("virtualization", env.get("virtualization") or "none detected"),
        ("load average (1 min) start / end", _load(env.get("load_average_start"),
                                                   run.campaign.get("load_average_end"))),
        ("software", software),
    ]


def _commit(env: dict[str, Any]) -> str:
    """`` (git 38b161e0a2b4)``, ``, uncommitted changes`` when dirty; empty if unknown."""
    commit = env.get("git_commit")
    if not commit:
        return ""
    return f" (git {str(commit)[:12]}{', uncommitted changes' if env.get('git_dirty') else ''})"


def _load(start: Sequence[float] | None, end: Sequence[float] | None) -> str:
    def first(values: Sequence[float] | None) -> str:
        return f"{values[0]:.2f}" if values else _format.MISSING
    return f"{first(start)} / {first(end)}"


def _environment(run: Run) -> list[str]:
    lines = ["## " + SECTION_TITLES[1], ""]
    lines += table(ENVIRONMENT_COLUMNS, environment_items(run)) + [""]
    for warning in run.host_warnings:
        lines += [f"- {WARNING} {warning}"]
    return lines + ([""] if run.host_warnings else [])


def build_flags(cflags: Sequence[str]) -> str:
    """``guide`` for the guide's reference flags, else the flags themselves."""
    flags = set(cflags)
    if GUIDE_CFLAGS.issubset(flags) and (flags - GUIDE_CFLAGS).issubset(LIBRARY_CFLAGS):
        return "guide"
    return code(" ".join(cflags)) if cflags else _format.MISSING


def kat_cell(kat: dict[str, Any]) -> str:
    """The KAT column: the gate's verdict, with ⚠ when timed without a pass."""
    verdict = str(kat.get("verdict", "not checked"))
    if kat.get("gate") == "baseline":
        return f"{verdict} (baseline: no official KAT)"
    if kat.get("timed_without_pass"):
        return f"{verdict} {WARNING} timed without a KAT pass (override)"
    return verdict


def _functional_testing(run: Run, candidate: str,
                        builds: Sequence[dict[str, Any]]) -> list[str]:
    files = ", ".join(str(name) for name in run.plan.get("kat_files", [])) or "none"
    lines = ["## " + SECTION_TITLES[2], "",
             f"Each library was checked against the official KAT vectors (SHA-256 manifest "
             f"{code(f'kat/{candidate}.sha256')} in ngcc; KAT files checked: {files}) "
             "before timing.", ""]
    rows = [(code(build_stem(b)), build_flags(b.get("cflags", [])), kat_cell(b.get("kat", {})))
            for b in builds]
    lines += table(KAT_COLUMNS, rows) + [""]
    if any(b.get("kat", {}).get("timed_without_pass") for b in builds):
        lines += [f"{WARNING} marks an instance timed although its KAT verdict is not "
                  "PASS (explicit override): its figures measure a function that does "
                  "not compute the candidate's hash.", ""]
    return lines


def performance_row(record: Record) -> tuple[str, ...]:
    """One row of section 4, formatted as on the seed pages."""
    stats = record.statistics
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats["mean_cycles"]),
            _format.cycles_per_byte(stats["cycles_per_byte"]),
            _format.duration(stats["mean_seconds"]),
            _format.megabytes_per_second(stats["mb_per_s"]),
            _format.call_count(calls_per_trial(record)))


def _performance(run: Run, candidate: str, records: Sequence[Record]) -> list[str]:
    lines = ["## " + SECTION_TITLES[3], ""]
    lines += table(PERFORMANCE_COLUMNS, [performance_row(r) for r in records]) + [""]
    lines += ["Mean cycles: all cycles of all timed calls / number of calls (batch mean; "
              "counter overhead included). Mean time and MB/s (10⁶ bytes per second) from "
              "wall-clock time. n: calls in total (trials × calls per trial), each trial "
              "a fresh process.", ""]
    failed = [job for job in run.failed_jobs if job["candidate"] == candidate]
    for job in failed:
        lines += [f"- Not measured: {code(job['instance'])} at "
                  f"{_format.message(job['message_bytes'])}: {job['status']}"
                  + (f" ({job['error']})" if job.get("error") else "")]
    return lines + ([""] if failed else [])


def extra_row(run: Run, record: Record) -> tuple[str, ...]:
    """One row of the additional statistics: CI, median, ratio to pseudoXOF."""
    stats = record.statistics
    low, high = stats.get("ci95_low_cycles"), stats.get("ci95_high_cycles")
    interval = (f"{_format.cycles(low)} – {_format.cycles(high)}"
                if low is not None and high is not None else _format.MISSING)
    half = stats.get("ci95_relative")
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats["mean_cycles"]), interval,
            "± " + _format.percent(half) if half is not None else _format.MISSING,
            _format.cycles(stats["median_cycles"]),
            _format.ratio(baseline_ratio(run, record)))


def _additional_statistics(run: Run, candidate: str, records: Sequence[Record]) -> list[str]:
    lines = ["## " + EXTRA_TITLE, "",
             "Not part of the seed pages. 95 % CI: confidence interval of the mean across "
             "trials (t distribution, n = trials; the trials are the independent samples). "
             "CI half-width: relative to the mean of trial means. Median: of all calls "
             "pooled. × pseudoXOF: mean cycles over those of pseudoXOF of the same output "
             f"width at the same length in this run ({_format.MISSING} when that baseline "
             "was not measured).", ""]
    lines += table(EXTRA_COLUMNS, [extra_row(run, r) for r in records]) + [""]
    flags = [(record, flag) for record in records for flag in record.statistics.get("flags", [])]
    for record, flag in flags:
        lines += [f"- {WARNING} {code(record_stem(record))} "
                  f"{_format.message(record.message_bytes)}: {flag['message']}"]
    if flags:
        lines += [""]
    lines += [f"![cycles/byte of {candidate}]({plot_stem_cpb(candidate)}.png)", "",
              f"Cycles/byte against message length ({code(plot_stem_cpb(candidate) + '.svg')} "
              "as SVG). Per-call distributions: "
              + ", ".join(f"[{code(record_stem(r))} {_format.message(r.message_bytes)}]"
                          f"({plot_stem_distribution(r)}.png)"
                          for r in distribution_records(records)) + ".", ""]
    return lines


def resource_row(record: Record) -> tuple[str, ...]:
    """One row of section 5."""
    resources = record.data["resources"]
    return (instance_label(record), _format.operation(record.message_bytes),
            _format.byte_count(resources.get("elf_image_bytes")),
            _format.kibibytes(resources.get("baseline_rss_kib")),
            _format.kibibytes(resources.get("peak_rss_kib")))


def _resources(records: Sequence[Record]) -> list[str]:
    return ["## " + SECTION_TITLES[4], "",
            "Static memory is approximated by the library's loadable ELF segments (the "
            "memory sizes of its PT_LOAD segments); peak memory is the process high-water "
            "mark (VmHWM) including the benchmark driver, the Python interpreter, numpy "
            "and libc, so both are upper-bound proxies rather than isolated algorithm "
            "memory. Baseline RSS is taken after loading the library, before the warm-up; "
            "both are the maxima over the trials.", ""] + table(
        RESOURCE_COLUMNS, [resource_row(r) for r in records]) + [""]


def evidence_rows(records: Sequence[Record], builds: Sequence[dict[str, Any]]
                  ) -> list[tuple[str, str, str]]:
    """Section 7's rows: per instance its KAT log, then its records and raw samples
    (sorted by file name, as on the seed pages)."""
    logs = {build_stem(b): b.get("kat", {}) for b in builds}
    rows: list[tuple[str, str, str]] = []
    for stem in _instances(records, builds):
        kat = logs.get(stem, {})
        if kat.get("log"):
            digest = str(kat.get("log_sha256", ""))[:16]
            rows.append((code(stem), f"KAT log (sha256 {code(digest + '…')})",
                         code(kat["log"])))
        timing = sorted((r for r in records if record_stem(r) == stem),
                        key=lambda r: _format.operation(r.message_bytes))
        rows += [(code(stem), f"timing {_format.operation(r.message_bytes)}",
                  code(_relpath(r))) for r in timing]
        rows += [(code(stem), f"per-call cycles {_format.operation(r.message_bytes)}",
                  code(str(r.data["raw"]["path"]))) for r in timing]
    return rows


def record_stem(record: Record) -> str:
    """The instance as evidence file names spell it (``Wish512``, ``Wish512.opt``)."""
    return record.stem


def build_stem(build: dict[str, Any]) -> str:
    """The same for a ``build.json`` entry."""
    return str(build.get("stem") or file_stem(str(build["instance"]),
                                              str(build.get("variant", "ref"))))


def _relpath(record: Record) -> str:
    return record.path.relative_to(record.run_dir).as_posix()


def _evidence_index(run: Run, records: Sequence[Record],
                    builds: Sequence[dict[str, Any]]) -> list[str]:
    return ["## " + SECTION_TITLES[5], "",
            "Paths are relative to the run directory; each JSON file records its plan, "
            "environment and trials, and the sha256 of its raw samples (format: "
            f"{code('docs/evidence-format.md')}).", ""] + table(
        EVIDENCE_COLUMNS, evidence_rows(records, builds)) + [
        "", f"Scripts: {code('ngcc/_campaign.py')}, {code('ngcc/_worker.py')}, "
            f"{code('csrc/bench.c')} in ngcc {run.environment.get('ngcc_version', '')}"
            f"{_commit(run.environment)}."]


# ------------------------------------------------------------------ summary page

def summary_page(run: Run) -> str:
    """The run's summary page: cycles/byte of every instance at every length."""
    lengths = sorted({record.message_bytes for record in run.records})
    env = run.environment
    lines = [f"# Run {run.run_id} — summary", "",
             f"{env.get('cpu_model') or 'unknown CPU'}, CPU {env.get('cpu')}; "
             f"{_clock(env)}. Campaign {_utc(run.campaign.get('created'))} – "
             f"{_utc(run.campaign.get('finished'))} (UTC); {len(run.records)} of "
             f"{len(run.jobs)} jobs measured.", ""]
    for warning in run.host_warnings:
        lines += [f"- {WARNING} {warning}"]
    lines += ["", "## Cycles/byte (mean over all calls)", ""]
    columns = ("candidate", "instance", "KAT", *[_format.message(n) for n in lengths])
    lines += table(columns, _summary_rows(run, lengths)) + [""]
    lines += ["Candidate pages: " + ", ".join(
        f"[{c}]({page_name(c)})" for c in candidates(run)) + ".", "",
        f"![cycles/byte of every instance]({PLOT_RUN_CPB}.png)", ""]
    failed = run.failed_jobs
    if failed:
        lines += ["## Jobs not measured", ""]
        lines += table(("candidate", "instance", "message", "status", "error"), [
            (job["candidate"], code(job["instance"]), _format.message(job["message_bytes"]),
             job["status"], job.get("error") or "") for job in failed]) + [""]
    return "\n".join(lines) + "\n"


def _summary_rows(run: Run, lengths: Sequence[int]) -> list[tuple[str, ...]]:
    rows = []
    seen: dict[tuple[str, str], dict[int, Record]] = {}
    for record in run.records:
        key = (record.candidate, record_stem(record))
        seen.setdefault(key, {})[record.message_bytes] = record
    for (candidate, _stem), by_length in seen.items():
        first = next(iter(by_length.values()))
        cells = [_format.cycles_per_byte(by_length[n].statistics["cycles_per_byte"])
                 if n in by_length else _format.MISSING for n in lengths]
        rows.append((candidate, instance_label(first), kat_cell(first.data["kat"]), *cells))
    return rows


# ------------------------------------------------------------------ evidence check

_NUMBER = (int, float)
_OPTIONAL_NUMBER = (int, float, type(None))
RECORD_FIELDS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("candidate", (str,)), ("instance", (str,)), ("message_bytes", (int,)),
    ("kat", (dict,)), ("resources", (dict,)), ("raw.path", (str,)), ("trials", (list,)),
    ("statistics.mean_cycles", _NUMBER), ("statistics.median_cycles", _NUMBER),
    ("statistics.cycles_per_byte", _NUMBER), ("statistics.mean_seconds", _NUMBER),
    ("statistics.mb_per_s", _OPTIONAL_NUMBER),
    ("statistics.ci95_low_cycles", _OPTIONAL_NUMBER),
    ("statistics.ci95_high_cycles", _OPTIONAL_NUMBER),
    ("statistics.ci95_relative", _OPTIONAL_NUMBER),
    ("resources.elf_image_bytes", _OPTIONAL_NUMBER),
    ("resources.baseline_rss_kib", _OPTIONAL_NUMBER),
    ("resources.peak_rss_kib", _OPTIONAL_NUMBER))
TRIAL_FIELDS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("calls", (int,)), ("total_seconds", _NUMBER), ("total_cycles", (int,)),
    ("baseline_rss_kib", _NUMBER), ("peak_rss_kib", _NUMBER))
JOB_FIELDS = (("candidate", (str,)), ("instance", (str,)), ("message_bytes", (int,)),
              ("status", (str,)))
BUILD_FIELDS = (("candidate", (str,)), ("instance", (str,)), ("kat", (dict,)))


def _defect(data: Any, fields: Sequence[tuple[str, tuple[type, ...]]], where: str = ""
            ) -> str | None:
    """The first field of ``fields`` (dotted paths) that is missing or of another type."""
    for dotted, kinds in fields:
        value = data
        for key in dotted.split("."):
            if not isinstance(value, dict) or key not in value:
                return f"{where}{dotted} is missing"
            value = value[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            return f"{where}{dotted} is {value!r}, not a {' or '.join(k.__name__ for k in kinds)}"
    return None


def check_evidence(run: Run) -> None:
    """Check that every field the pages and plots read is present and well typed.

    Raises:
        CorruptRecordError: naming the file and the field.
    """
    campaign = run.path / "campaign.json"
    for index, job in enumerate(run.campaign["jobs"]):
        _raise_if(campaign, _defect(job, JOB_FIELDS, f"jobs[{index}]."))
    for index, entry in enumerate(run.build.get("instances", [])):
        _raise_if(run.path / "build.json", _defect(entry, BUILD_FIELDS, f"instances[{index}]."))
    for record in run.records:
        _raise_if(record.path, _defect(record.data, RECORD_FIELDS))
        for index, trial in enumerate(record.data["trials"]):
            _raise_if(record.path, _defect(trial, TRIAL_FIELDS, f"trials[{index}]."))
        if not record.data["trials"]:
            _raise_if(record.path, "trials is empty")


def _raise_if(path: Path, defect: str | None) -> None:
    if defect is not None:
        raise CorruptRecordError(path, defect)


# ------------------------------------------------------------------ files

PLOT_RUN_CPB = "run-cpb"
SUMMARY_PAGE = "summary.md"


def _file_safe(text: str) -> str:
    """A candidate id as a file name: anything but letters, digits, ``.-_`` becomes ``_``
    (an external library's id is free text)."""
    return re.sub(r"[^\w.-]", "_", text)


def page_name(candidate: str) -> str:
    """File name of a candidate's page in ``report/``."""
    return f"{_file_safe(candidate)}.md"


def plot_stem_cpb(candidate: str) -> str:
    """File stem of a candidate's cycles/byte plot in ``report/``."""
    return f"{_file_safe(candidate)}-cpb"


def plot_stem_distribution(record: Record) -> str:
    """File stem of the per-call distribution plot of one record."""
    return f"{record_stem(record)}__{_format.operation(record.message_bytes)}-calls"


def distribution_records(records: Sequence[Record]) -> list[Record]:
    """The records whose distributions a report draws: each instance's shortest length
    (where per-call noise matters most relative to the work)."""
    chosen: dict[tuple[str, str], Record] = {}
    for record in records:
        key = (record.candidate, record_stem(record))
        if key not in chosen or record.message_bytes < chosen[key].message_bytes:
            chosen[key] = record
    return list(chosen.values())


def pages(run: Run) -> dict[str, str]:
    """Every report page of a run: file name in ``report/`` → Markdown text.

    Raises:
        CorruptRecordError: an evidence file lacks a field the pages show (named).
    """
    check_evidence(run)
    rendered = {page_name(c): candidate_page(run, c) for c in candidates(run)}
    rendered[SUMMARY_PAGE] = summary_page(run)
    return rendered


def write_report(run: Run, out_dir: str | os.PathLike[str] | None = None, plots: bool = True,
                 distributions: Sequence[tuple[str, int]] = ()) -> list[Path]:
    """Write the pages (and, unless ``plots`` is false, the plots) of a run.

    Args:
        run: the run.
        out_dir: where to write; default the run's ``report/``.
        plots: also draw the cycles/byte plots (per candidate and for the run) and
            the per-call distributions (PNG and SVG).
        distributions: further (instance, message bytes) whose per-call distribution
            to draw, besides each instance's shortest length.

    Raises:
        ReportError: a chosen distribution has no record in the run (checked before
            anything is written).

    Returns:
        The files written, pages first.
    """
    chosen_records(run, distributions)
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in pages(run).items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    if plots:
        written += write_plots(run, out, chosen_records(run, distributions))
    return written


def chosen_records(run: Run, distributions: Sequence[tuple[str, int]]) -> list[Record]:
    """The records of the (instance, message bytes) pairs asked for.

    Raises:
        ReportError: a pair the run has no record of; the message lists what it has.
    """
    chosen = []
    for instance, length in distributions:
        try:
            chosen.append(run.record(instance, length))
        except KeyError:
            measured = sorted({f"{r.stem}:{r.message_bytes}" for r in run.records})
            raise ReportError(f"run {run.run_id} has no record of {instance} at {length} B; "
                              f"measured: {', '.join(measured) or 'nothing'}") from None
    return chosen


def write_plots(run: Run, out: Path, chosen: Sequence[Record] = ()) -> list[Path]:
    """Draw every plot the pages link to into ``out``, and the distributions of the
    ``chosen`` records; return the files."""
    from ngcc import _plot

    summary = run.summary()
    written = _plot.save(_plot.cycles_per_byte(summary, f"Run {run.run_id}: cycles/byte"),
                         out / PLOT_RUN_CPB)
    for candidate in candidates(run):
        rows = summary[summary["candidate"] == candidate]
        if len(rows):
            figure = _plot.cycles_per_byte(rows, f"{candidate}: cycles/byte")
            written += _plot.save(figure, out / plot_stem_cpb(candidate))
    drawn = [r for c in candidates(run) for r in distribution_records(candidate_records(run, c))]
    drawn += [record for record in chosen if record not in drawn]
    for record in drawn:
        figure = _plot.distribution(record.cycles(), f"{record_stem(record)}, "
                                    f"{_format.message(record.message_bytes)}: cycles per call")
        written += _plot.save(figure, out / plot_stem_distribution(record))
    return written


# ------------------------------------------------------------------ Jupyter

def record_html(record: Record) -> str:
    """An HTML table of one record for Jupyter: the section 4 row and its CI/median."""
    stats = record.statistics
    rows = list(zip(PERFORMANCE_COLUMNS, performance_row(record), strict=True))
    low, high = stats.get("ci95_low_cycles"), stats.get("ci95_high_cycles")
    rows += [("95 % CI of the mean", f"{_format.cycles(low)} – {_format.cycles(high)}"
              if low is not None and high is not None else _format.MISSING),
             ("median cycles/call", _format.cycles(stats["median_cycles"])),
             ("KAT", kat_cell(record.data["kat"]))]
    body = "".join(f"<tr><th style='text-align:left'>{_html(k)}</th>"
                   f"<td style='text-align:right'>{_html(v)}</td></tr>" for k, v in rows)
    return f"<table><caption>{_html(record.candidate)} record</caption>{body}</table>"


def run_html(run: Run) -> str:
    """An HTML table of a run for Jupyter: the section 4 rows of every record."""
    head = "".join(f"<th>{_html(c)}</th>" for c in PERFORMANCE_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{_html(v)}</td>" for v in performance_row(r))
                   + "</tr>" for r in run.records)
    done = len(run.records)
    caption = f"run {run.run_id}: {done}/{len(run.jobs)} jobs measured"
    return (f"<table><caption>{_html(caption)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def _html(text: object) -> str:
    import html

    return html.escape(str(text).replace("`", ""))
