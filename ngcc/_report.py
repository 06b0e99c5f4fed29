"""Markdown report pages of a run: one page per candidate, and a summary page.

A candidate page has the structure of the independent NGCC performance pages
(``docs/spec/seeds/``), which follow the NICCS x86 self-assessment guide §3.5: sections
1 (basic information), 2 (assessment environment), 3 (functional testing), 4
(performance), 5 (resource consumption) and 7 (raw evidence index), with the same
columns and number formatting (:mod:`ngcc._format`). What those pages lack — the
95 % confidence interval of each mean, the per-call median, the ratio to the
pseudoXOF baseline, the trial flags and the plots — sits in one clearly titled extra
section after section 4.

This module only renders: the facts come from the evidence model (``_model``), the
groupings and ratios from ``_analysis``, the host's description from ``_host``, the
file names from ``_model``. Pages are a pure function of the run directory: no
rendering time, no absolute path, so ``ngcc validate`` can regenerate them and
compare byte for byte.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ngcc import _analysis, _format, _host
from ngcc._errors import ReportError
from ngcc._model import (
    BuildEntry,
    KatFacts,
    Record,
    page_name,
    plot_stem_cpb,
    plot_stem_distribution,
)

if TYPE_CHECKING:
    from ngcc._run import Run, RunRecord

SECTION_TITLES = (
    "1. Basic information",
    "2. Assessment environment",
    "3. Functional testing (KAT)",
    "4. Performance",
    "5. Resource consumption",
    "7. Raw evidence index",
)
EXTRA_TITLE = "Additional statistics (beyond the guide's structure)"
LEAK_TITLE = "Timing leakage (beyond the guide's structure)"
LEAK_COLUMNS = ("instance", "message", "verdict", "max \\|t\\|", "test",
                "calls (fixed / random)", "seconds", "evidence")

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
PLOT_RUN_CPB = "run-cpb"
SUMMARY_PAGE = "summary.md"


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


def instance_label(record: Record) -> str:
    """The library as the tables show it: its label (`` `Wish512` ``,
    `` `Pavelor-512@perf` ``), plus ⚠ when timed without a KAT pass."""
    label = code(record.label)
    return f"{label} {WARNING}" if record.kat.timed_without_pass else label


def kat_cell(kat: KatFacts | None) -> str:
    """The KAT column: the gate's verdict, with ⚠ when timed without a pass."""
    if kat is None:
        return "not checked"
    if kat.gate == "baseline":
        return f"{kat.verdict} (baseline: no official KAT)"
    if kat.timed_without_pass:
        return f"{kat.verdict} {WARNING} timed without a KAT pass (override)"
    return kat.verdict


def build_flags(cflags: Sequence[str]) -> str:
    """``guide`` for the guide's reference flags, else the flags themselves."""
    flags = set(cflags)
    if GUIDE_CFLAGS.issubset(flags) and (flags - GUIDE_CFLAGS).issubset(LIBRARY_CFLAGS):
        return "guide"
    return code(" ".join(cflags)) if cflags else _format.MISSING


# ------------------------------------------------------------------ candidate page

def _candidates(run: Run) -> list[str]:
    return _analysis.candidates([lib.candidate for lib in run.plan.libraries], run.records)


def candidate_page(run: Run, candidate: str) -> str:
    """The Markdown page of one candidate of a run (sections 1–5 and 7 of the guide)."""
    records = _analysis.of_candidate(run.records, candidate)
    builds = _analysis.entries_of_candidate(run.build_entries, candidate)
    lines = _title(run, candidate, records, builds)
    lines += _basic_information(run, candidate, records, builds)
    lines += _environment(run)
    lines += _functional_testing(run, candidate, builds)
    lines += _performance(run, candidate, records)
    lines += _additional_statistics(run, candidate, records)
    lines += _robust_statistics(records)
    lines += _resources(records)
    lines += _leak_section(run, candidate)
    lines += _evidence_index(run, records, builds)
    return "\n".join(lines) + "\n"


def _family(records: Sequence[Record], builds: Sequence[BuildEntry]) -> str:
    families = [r.family for r in records] + [b.family for b in builds]
    return next((family for family in families if family), "")


def _title(run: Run, candidate: str, records: Sequence[Record],
           builds: Sequence[BuildEntry]) -> list[str]:
    machine = run.environment.machine
    title = CANDIDATE_TITLES.get(candidate) or _family(records, builds)
    return [
        f"# {candidate} {title} — performance on {MACHINE_NAMES.get(machine, machine)} "
        f"(run {run.run_id})", "",
        "Independent measurement following the structure of the NICCS x86 "
        "self-assessment guide, §3.5 (1)–(7). Not a submitter self-assessment. "
        "Made by ngcc from the run directory; every figure below can be traced to a "
        "file listed in section 7.", ""]


def _implementations(records: Sequence[Record], builds: Sequence[BuildEntry]) -> str:
    """``reference`` or, where the evidence has the implementation string,
    ``reference (portable C99, …)``: each variant and description once."""
    seen: list[tuple[str, str]] = []
    for implementation in [b.implementation for b in builds] + [r.implementation
                                                                 for r in records]:
        key = (implementation.variant, implementation.description)
        if key not in seen:
            seen.append(key)
    shown = sorted({VARIANT_NAMES.get(v, v) + (f" ({d})" if d else "") for v, d in seen})
    return ", ".join(shown) or _format.MISSING


def _basic_information(run: Run, candidate: str, records: Sequence[Record],
                       builds: Sequence[BuildEntry]) -> list[str]:
    plan = run.plan
    method = (f"ngcc {run.environment.ngcc_version}: KAT gate, then per-call "
              f"cycle counts in {plan.trials} trials per message length, each a "
              f"fresh process pinned to CPU {plan.cpu} (README, Method)")
    title = CANDIDATE_TITLES.get(candidate) or _family(records, builds)
    items = [
        ("Category", "cryptographic hash algorithm; function: hash"),
        ("Algorithm", title),
        ("Implementation versions measured", _implementations(records, builds)),
        ("Parameter sets", ", ".join(_analysis.labels(records, builds)) or _format.MISSING),
        ("Security evaluation", "outside the scope of this performance report"),
        ("Measurement method", method),
        ("Submission", f"NGCC Round 1 candidate {candidate}"),
    ]
    return ["## " + SECTION_TITLES[0], ""] + [f"- {k}: {v}" for k, v in items] + [""]


def environment_items(run: Run) -> list[tuple[str, str]]:
    """Section 2's rows: the seed's six items, then the fingerprint's other facts, in
    the words of the one renderer (``_host``)."""
    env = run.environment
    return [
        ("processor", _host.processor_text(env)),
        ("clock", _host.clock_text(env)),
        ("memory", _host.memory_text(env)),
        ("OS / kernel", _host.system_text(env)),
        ("compiler / build tool", f"{env.compiler or _host.UNKNOWN} / setuptools, "
                                  "ngcc build"),
        ("campaign start / end (UTC)",
         f"{_utc(run.campaign.created)} / {_utc(run.campaign.finished)}"),
        ("cycle counter", _host.counter_text(env)),
        ("virtualization", _host.virtualization_text(env)),
        ("load average (1 min) start / end", _load(env.load_average_start,
                                                   run.campaign.load_average_end)),
        ("software", _host.software_text(env)),
    ]


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


def _functional_testing(run: Run, candidate: str, builds: Sequence[BuildEntry]) -> list[str]:
    files = ", ".join(run.plan.kat_files) or "none"
    lines = ["## " + SECTION_TITLES[2], "",
             f"Each library was checked against the official KAT vectors (SHA-256 manifest "
             f"{code(f'kat/{candidate}.sha256')} in ngcc; KAT files checked: {files}) "
             "before timing.", ""]
    rows = [(code(b.label), build_flags(b.implementation.cflags), kat_cell(b.kat))
            for b in builds]
    lines += table(KAT_COLUMNS, rows) + [""]
    if any(b.kat.timed_without_pass for b in builds):
        lines += [f"{WARNING} marks an instance timed although its KAT verdict is not "
                  "PASS (explicit override): its figures measure a function that does "
                  "not compute the candidate's hash.", ""]
    return lines


def performance_row(record: Record) -> tuple[str, ...]:
    """One row of section 4, formatted as on the seed pages."""
    stats = record.statistics
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.mean_cycles), _format.cycles_per_byte(stats.cycles_per_byte),
            _format.duration(stats.mean_seconds), _format.megabytes_per_second(stats.mb_per_s),
            _format.call_count(_analysis.calls_per_trial(record)))


def _performance(run: Run, candidate: str, records: Sequence[Record]) -> list[str]:
    lines = ["## " + SECTION_TITLES[3], ""]
    lines += table(PERFORMANCE_COLUMNS, [performance_row(r) for r in records]) + [""]
    lines += ["Mean cycles: all cycles of all timed calls / number of calls (batch mean; "
              "counter overhead included). Mean time and MB/s (10⁶ bytes per second) from "
              "wall-clock time. n: calls in total (trials × calls per trial), each trial "
              "a fresh process.", ""]
    failed = [job for job in run.failed_jobs if job.candidate == candidate]
    for job in failed:
        lines += [f"- Not measured: {code(job.label)} at "
                  f"{_format.message(job.message_bytes)}: {job.status}"
                  + (f" ({job.error})" if job.error else "")]
    return lines + ([""] if failed else [])


def confidence_interval(record: Record) -> str:
    """``2.10 k – 2.14 k``: the 95 % CI of the mean (the bootstrap interval, which
    cannot go below zero, in statistics of version 2; else the t interval), or — for a
    single trial."""
    stats = record.statistics
    low, high = ((stats.mean_bootstrap_ci95_low_ticks, stats.mean_bootstrap_ci95_high_ticks)
                 if stats.version >= 2 else (stats.ci95_low_cycles, stats.ci95_high_cycles))
    if low is None or high is None:
        return _format.MISSING
    return f"{_format.cycles(low)} – {_format.cycles(high)}"


def extra_row(records: Sequence[Record], record: Record) -> tuple[str, ...]:
    """One row of the additional statistics: CI, median, ratio to pseudoXOF."""
    stats = record.statistics
    half = stats.mean_bootstrap_ci95_relative if stats.version >= 2 else stats.ci95_relative
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.mean_cycles), confidence_interval(record),
            "± " + _format.percent(half) if half is not None else _format.MISSING,
            _format.cycles(stats.median_cycles),
            _format.ratio(_analysis.baseline_ratio(records, record)))


def _additional_statistics(run: Run, candidate: str, records: Sequence[Record]) -> list[str]:
    method = ("percentile bootstrap of the trial means, never below zero; see below"
              if any(r.statistics.version >= 2 for r in records)
              else "t distribution, n = trials; the trials are the independent samples")
    lines = ["## " + EXTRA_TITLE, "",
             "Not part of the seed pages. 95 % CI: confidence interval of the mean across "
             f"trials ({method}). "
             "CI half-width: relative to the mean of trial means. Median: of all calls "
             "pooled. × pseudoXOF: mean cycles over those of pseudoXOF of the same output "
             f"width at the same length in this run ({_format.MISSING} when that baseline "
             "was not measured).", ""]
    lines += table(EXTRA_COLUMNS, [extra_row(run.records, r) for r in records]) + [""]
    flags = [(record, flag) for record in records for flag in record.statistics.flags]
    for record, flag in flags:
        lines += [f"- {WARNING} {code(record.label)} "
                  f"{_format.message(record.message_bytes)}: {flag.message}"]
    if flags:
        lines += [""]
    cpb = plot_stem_cpb(candidate)
    lines += [f"![cycles/byte of {candidate}]({cpb}.png)", "",
              f"Cycles/byte against message length ({code(cpb + '.svg')} "
              "as SVG). Per-call distributions: "
              + ", ".join(f"[{code(r.label)} {_format.message(r.message_bytes)}]"
                          f"({plot_stem_distribution(r.label, r.message_bytes)}.png)"
                          for r in _analysis.distribution_records(records)) + ".", ""]
    return lines


ROBUST_TITLE = "Robust statistics and the observer effect"
ROBUST_COLUMNS = ("instance", "message", "per-call mean", "95 % CI (bootstrap)", "median",
                  "95 % CI of the median", "batch mean", "observer effect",
                  "core cycles/byte", "flags")


def robust_row(record: Record) -> tuple[str, ...]:
    """One row of the robust statistics (statistics version 2)."""
    stats = record.statistics

    def interval(low: float | None, high: float | None) -> str:
        if low is None or high is None:
            return _format.MISSING
        return f"{_format.cycles(low)} – {_format.cycles(high)}"

    relative = 100 * (stats.observer_effect_relative or 0.0)
    effect = (_format.MISSING if stats.observer_effect_ticks is None else
              f"{stats.observer_effect_ticks:+.1f} ({relative:+.2f} %)")
    codes = Counter(flag.code for flag in stats.flags)
    flags = ", ".join(f"{n} {code}" for code, n in codes.items())
    if record.rejected_trials:
        flags += (", " if flags else "") + f"{len(record.rejected_trials)} rejected (--strict)"
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.per_call_mean_ticks),
            interval(stats.mean_bootstrap_ci95_low_ticks, stats.mean_bootstrap_ci95_high_ticks),
            _format.cycles(stats.median_cycles),
            interval(stats.median_ci95_low_ticks, stats.median_ci95_high_ticks),
            _format.cycles(stats.batch_mean_ticks), effect,
            _format.cycles_per_byte(stats.core_cycles_per_byte), flags or _format.MISSING)


def _robust_statistics(records: Sequence[Record]) -> list[str]:
    """The figures of statistics version 2 (engineer "numbers"); nothing for a run
    written before them, so its pages stay as they were."""
    newer = [r for r in records if r.statistics.version >= 2]
    if not newer:
        return []
    return ["## " + ROBUST_TITLE, "",
            "Counter ticks unless named core cycles. Per-call mean: the mean of the trial "
            "means (each trial, a fresh process, is one sample; the harness mean of "
            "section 4 pools the calls instead). Its 95 % CI: percentile bootstrap of the "
            "trial means (4000 resamples from a fixed seed). Median: of all calls pooled; "
            "its 95 % CI: t interval of the logarithms of the trial medians (positive by "
            "construction). Batch mean: the same calls timed in a loop without per-call "
            "counter readings; observer effect: per-call mean − batch mean. Core "
            "cycles/byte: the harness mean converted with each trial's estimate of core "
            "cycles per tick. Flags: trials by kind (slow_trial, fast_trial, preempted, "
            "counter_rate); rejected: trials --strict measured again.", "",
            *table(ROBUST_COLUMNS, [robust_row(r) for r in newer]), ""]


def resource_row(record: Record) -> tuple[str, ...]:
    """One row of section 5."""
    resources = record.resources
    return (instance_label(record), _format.operation(record.message_bytes),
            _format.byte_count(resources.elf_image_bytes),
            _format.kibibytes(resources.baseline_rss_kib),
            _format.kibibytes(resources.peak_rss_kib))


def _resources(records: Sequence[Record]) -> list[str]:
    return ["## " + SECTION_TITLES[4], "",
            "Static memory is approximated by the library's loadable ELF segments (the "
            "memory sizes of its PT_LOAD segments); peak memory is the process high-water "
            "mark (VmHWM) including the benchmark driver, the Python interpreter, numpy "
            "and libc, so both are upper-bound proxies rather than isolated algorithm "
            "memory. Baseline RSS is taken after loading the library, before the warm-up; "
            "both are the maxima over the trials.", ""] + table(
        RESOURCE_COLUMNS, [resource_row(r) for r in records]) + [""]


def leak_row(test: dict[str, Any]) -> tuple[str, ...]:
    """One row of the leak section, from a leak evidence file."""
    fixed, random = test["calls_per_class"]
    return (code(test["label"]), _format.message(test["message_bytes"]), test["verdict"],
            "%.2f" % test["max_t"], test["max_test"] or _format.MISSING,
            f"{test['calls']} ({fixed} / {random})", "%.1f s" % test["seconds"],
            code(test["relpath"]))


def _leak_section(run: Run, candidate: str) -> list[str]:
    """The ``--leak`` results of the candidate's libraries; nothing when there are none."""
    tests = [t for t in run.leak_tests if t["candidate"] == candidate]
    if not tests:
        return []
    lines = ["## " + LEAK_TITLE, "",
             "`ngcc leak`, the dudect method (Reparaz, Balasch, Verbauwhede 2017): Welch's t "
             "between calls on one fixed message (all zero) and calls on fresh random "
             "messages of the same length, the class of each call drawn at random, on every "
             "call and on the fastest calls under 15 percentiles, first and second order. "
             "Largest |t| below 4.5: no leak detected; 4.5 to 10: possible leak; above 10: "
             "LEAK. A pass does not prove constant time: a leak below the noise, or one "
             "that depends on other inputs or another machine, passes.", ""]
    lines += table(LEAK_COLUMNS, [leak_row(t) for t in tests]) + [""]
    lines += [", ".join(f"![|t| of {t['label']}]({plot_stem_leak(t)}.png)" for t in tests),
              ""]
    return lines


def plot_stem_leak(test: dict[str, Any]) -> str:
    """The report's file stem of a leak test's |t| plot: its evidence file's."""
    return Path(str(test["relpath"])).stem


def evidence_rows(records: Sequence[Record], builds: Sequence[BuildEntry]
                  ) -> list[tuple[str, str, str]]:
    """Section 7's rows: per library its KAT log, then its records and raw samples
    (sorted by file name, as on the seed pages)."""
    logs = {b.label: b.kat for b in builds}
    rows: list[tuple[str, str, str]] = []
    for label in _analysis.labels(records, builds):
        kat = logs.get(label)
        if kat is not None:
            digest = (kat.log_sha256 or "")[:16]
            rows.append((code(label), f"KAT log (sha256 {code(digest + '…')})", code(kat.log)))
        timing = sorted((r for r in records if r.label == label),
                        key=lambda r: _format.operation(r.message_bytes))
        rows += [(code(label), f"timing {_format.operation(r.message_bytes)}",
                  code(r.relpath)) for r in timing]
        rows += [(code(label), f"per-call cycles {_format.operation(r.message_bytes)}",
                  code(r.raw.path)) for r in timing]
    return rows


def _evidence_index(run: Run, records: Sequence[Record],
                    builds: Sequence[BuildEntry]) -> list[str]:
    return ["## " + SECTION_TITLES[5], "",
            "Paths are relative to the run directory; each JSON file records its plan, "
            "environment and trials, and the sha256 of its raw samples (format: "
            f"{code('docs/evidence-format.md')}).", ""] + table(
        EVIDENCE_COLUMNS, evidence_rows(records, builds)) + [
        "", f"Scripts: {', '.join(code(s) for s in scripts(records))} in ngcc "
            f"{run.environment.ngcc_version}{_host.commit_text(run.environment)}."]


#: The source files that ran a runner's trials, by the runner a record names.
RUNNER_SCRIPTS = {
    "ngcc._child.DriverRunner": ("ngcc/_child.py", "csrc/driver.c"),
    "python -m ngcc._isolate → ngcc._worker.trial": ("ngcc/_worker.py", "csrc/bench.c"),
}


def scripts(records: Sequence[Record]) -> list[str]:
    """The campaign and the sources of the runners that timed ``records`` (a runner
    ngcc does not know is named as the record names it)."""
    found = ["ngcc/_campaign.py"]
    runners = [r.provenance.runner for r in records] or ["ngcc._child.DriverRunner"]
    for runner in runners:
        for script in RUNNER_SCRIPTS.get(runner, (runner,)):
            if script not in found:
                found.append(script)
    return found


# ------------------------------------------------------------------ summary page

def summary_page(run: Run) -> str:
    """The run's summary page: cycles/byte of every library at every length."""
    lengths = sorted({record.message_bytes for record in run.records})
    env = run.environment
    lines = [f"# Run {run.run_id} — summary", "",
             f"{env.cpu_model or 'unknown CPU'}, CPU {env.cpu}; "
             f"{_host.clock_text(env)}. Campaign {_utc(run.campaign.created)} – "
             f"{_utc(run.campaign.finished)} (UTC); {len(run.records)} of "
             f"{len(run.jobs)} jobs measured.", ""]
    for warning in run.host_warnings:
        lines += [f"- {WARNING} {warning}"]
    lines += ["", "## Cycles/byte (mean over all calls)", ""]
    columns = ("candidate", "instance", "KAT", *[_format.message(n) for n in lengths])
    lines += table(columns, _summary_rows(run.records, lengths)) + [""]
    lines += ["Candidate pages: " + ", ".join(
        f"[{c}]({page_name(c)})" for c in _candidates(run)) + ".", "",
        f"![cycles/byte of every instance]({PLOT_RUN_CPB}.png)", ""]
    failed = run.failed_jobs
    if failed:
        lines += ["## Jobs not measured", ""]
        lines += table(("candidate", "instance", "message", "status", "error"), [
            (job.candidate, code(job.label), _format.message(job.message_bytes),
             job.status, job.error or "") for job in failed]) + [""]
    return "\n".join(lines) + "\n"


def _summary_rows(records: Sequence[Record], lengths: Sequence[int]) -> list[tuple[str, ...]]:
    rows = []
    by_label: dict[str, dict[int, Record]] = {}
    for record in records:
        by_label.setdefault(record.label, {})[record.message_bytes] = record
    for by_length in by_label.values():
        first = next(iter(by_length.values()))
        cells = [_format.cycles_per_byte(by_length[n].statistics.cycles_per_byte)
                 if n in by_length else _format.MISSING for n in lengths]
        rows.append((first.candidate, instance_label(first), kat_cell(first.kat), *cells))
    return rows


# ------------------------------------------------------------------ files

def pages(run: Run) -> dict[str, str]:
    """Every report page of a run: file name in ``report/`` → Markdown text."""
    rendered = {page_name(c): candidate_page(run, c) for c in _candidates(run)}
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
        distributions: further (label or instance, message bytes) whose per-call
            distribution to draw, besides each library's shortest length.

    Raises:
        ReportError: a chosen distribution has no record in the run (checked before
            anything is written).
        CorruptRecordError: a raw file to draw is missing or does not match its
            record (checked before anything is written).

    Returns:
        The files written, pages first.
    """
    chosen = chosen_records(run, distributions)
    samples = _distribution_samples(run, chosen) if plots else {}  # raw files checked first
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in pages(run).items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    if plots:
        written += write_plots(run, out, samples)
    return written


def _distribution_samples(run: Run, chosen: Sequence[RunRecord]
                          ) -> dict[tuple[str, int], tuple[RunRecord, list[np.ndarray]]]:
    """The records whose per-call distributions are drawn (each library's shortest
    length, and those chosen), with their raw samples, checked against their sha256.

    Raises:
        CorruptRecordError: a raw file that is missing or does not match its record.
    """
    drawn = [r for c in _candidates(run)
             for r in _analysis.distribution_records(_analysis.of_candidate(run.records, c))]
    drawn += [record for record in chosen if record not in drawn]
    return {(r.label, r.message_bytes): (r, r.cycles()) for r in drawn}


def chosen_records(run: Run, distributions: Sequence[tuple[str, int]]) -> list[RunRecord]:
    """The records of the (label or instance, message bytes) pairs asked for.

    Raises:
        ReportError: a pair the run has no record of; the message lists what it has.
    """
    chosen = []
    for name, length in distributions:
        try:
            chosen.append(run.record(name, length))
        except KeyError:
            measured = sorted({f"{r.label}:{r.message_bytes}" for r in run.records})
            raise ReportError(f"run {run.run_id} has no record of {name} at {length} B; "
                              f"measured: {', '.join(measured) or 'nothing'}") from None
    return chosen


def write_plots(run: Run, out: Path,
                samples: dict[tuple[str, int], tuple[RunRecord, list[np.ndarray]]]
                ) -> list[Path]:
    """Draw every plot the pages link to into ``out``: the cycles/byte plots and the
    distributions of ``samples``; return the files."""
    from ngcc import _leak, _plot

    summary = run.summary()
    written = _plot.save(_plot.cycles_per_byte(summary, f"Run {run.run_id}: cycles/byte"),
                         out / PLOT_RUN_CPB)
    for candidate in _candidates(run):
        rows = summary[summary["candidate"] == candidate]
        if len(rows):
            figure = _plot.cycles_per_byte(rows, f"{candidate}: cycles/byte")
            written += _plot.save(figure, out / plot_stem_cpb(candidate))
    for (label, length), (_, cycles) in samples.items():
        figure = _plot.distribution(cycles, f"{label}, {_format.message(length)}: "
                                    "cycles per call")
        written += _plot.save(figure, out / plot_stem_distribution(label, length))
    for test in run.leak_tests:
        calls, traces = _leak.trace_of(run.path / str(test["relpath"]), test)
        title = (f"{test['label']} at {_format.message(int(test['message_bytes']))}: "
                 f"{test['verdict']} (max |t| {test['max_t']:.1f})")
        written += _plot.save(_plot.leak_trace_plot(calls, traces, title=title),
                              out / plot_stem_leak(test))
    return written
