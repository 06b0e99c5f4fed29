"""Markdown report pages of a run: an index, one page per candidate, and a summary page.

A candidate page has the structure of the independent NGCC performance pages
(``docs/spec/seeds/``), which follow the NICCS x86 self-assessment guide §3.5: sections
1 (basic information), 2 (assessment environment), 3 (functional testing), 4
(performance), 5 (resource consumption) and 7 (raw evidence index), with the same
columns and number formatting (:mod:`ngcc.base.format`). What those pages lack — the
95 % confidence interval of each mean, the per-call median, the ratio to the
pseudoXOF baseline, the trial flags and the plots — sits in one clearly titled extra
section after section 4. Trial flags are one line per kind (how many, the worst case);
jobs that were not measured are said once at the top of each page (counts by status,
each distinct cause once with the jobs it stopped); a page links only the plots that
are drawn beside it.

This module only renders: the facts come from the evidence model (``_model``), the
groupings and ratios from ``_analysis``, the host's description from ``_host``, the
file names from ``_model``, the other formats from ``_export``. Pages are a pure
function of the run directory (and of whether the plots are drawn): no rendering time,
no absolute path, so ``ngcc validate`` can regenerate them and compare byte for byte.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ngcc.base import files as _files
from ngcc.base import format as _format
from ngcc.base import untrusted as _untrusted
from ngcc.base.errors import ReportError
from ngcc.evidence.model import (
    BuildEntry,
    Job,
    KatFacts,
    Record,
    page_name,
    plot_stem_cpb,
    plot_stem_distribution,
)
from ngcc.library.candidates import title as registry_title
from ngcc.measure import host as _host
from ngcc.report import export as _export
from ngcc.report import folders as _folders
from ngcc.report import verdict as _verdict
from ngcc.stats import groups as _analysis

if TYPE_CHECKING:
    from ngcc.evidence.run import Run, RunRecord

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
#: Section 4 when a record of the page leads with the CPU-time figure: the figure each
#: row leads with, then the harness mean beside it under its own name.
LEADING_COLUMNS = ("instance", "message", "figure", "cycles", "cycles/byte", "time",
                   "MB/s", "harness mean", "n")
EXTRA_COLUMNS = ("instance", "message", "mean cycles", "95 % CI of the mean ({})",
                 "CI half-width", "median cycles/call", "× pseudoXOF")
RESOURCE_COLUMNS = ("instance", "operation", "static: ELF image (bytes)", "baseline RSS",
                    "peak RSS")
EVIDENCE_COLUMNS = ("instance", "item", "file")

KAT_BASIS_WORDS = {
    "shipped manifest": "against the official KAT vectors of the SHA-256 manifest {ref} in "
                        "ngcc",
    "manifest": "against the SHA-256 manifest {ref} given with --manifest",
    "official files": "against the official KAT files given with --official (no manifest "
                      "line)",
    "submission files": "against the KAT files shipped with the submission (no manifest "
                        "line)",
    "none": "not checked (no reference)",
}
"""What section 3 says each KAT basis (``ngcc.kat.BASES``) was checked against."""

GUIDE_CFLAGS = frozenset({"-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-O2", "-fPIC"})
"""The NGCC guide's reference compiler flags; a build adding only what a shared library
needs (:data:`LIBRARY_CFLAGS`) is shown as ``guide``, as on the seed pages."""
LIBRARY_CFLAGS = frozenset({"-fvisibility=hidden", "-shared"})

VARIANT_NAMES = {"ref": "reference", "opt": "optimised", "external": "external library"}
MACHINE_NAMES = {"x86_64": "x86-64", "aarch64": "AArch64", "arm64": "AArch64"}
WARNING = "⚠"
PLOT_RUN_CPB = "run-cpb"
SUMMARY_PAGE = "summary.md"
INDEX_PAGE = "index.md"
CAUSE_WIDTH = 300
"""The longest a failure's example message is shown on a page (the whole message stays
in ``campaign.json``)."""


# ------------------------------------------------------------------ Markdown pieces

def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table: header, separator, one line per row."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return lines


def code(text: str) -> str:
    """Inline code, as the seeds show instance names and files: `` `Wish512` ``; any
    text, a library's included, stays literal (``_untrusted.markdown``)."""
    return _untrusted.markdown(text) or "``"


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
    if kat.timed_without_pass and kat.verdict == "NOKAT":
        return f"NOKAT {WARNING} not checked (no reference), timed with --allow-kat-fail"
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


def candidate_page(run: Run, candidate: str, plotted: frozenset[str] | None = None) -> str:
    """The Markdown page of one candidate of a run (sections 1–5 and 7 of the guide).

    ``plotted`` is the stems of the plots drawn beside the page (default: every plot
    :func:`plot_stems` names); the page links no other plot.
    """
    plotted = plot_stems(run) if plotted is None else plotted
    records = _analysis.of_candidate(run.records, candidate)
    builds = _analysis.entries_of_candidate(run.build_entries, candidate)
    lines = _title(run, candidate, records, builds)
    lines += _verdict.page_lines(run, records)
    lines += failure_banner([job for job in run.jobs if job.candidate == candidate])
    lines += _basic_information(run, candidate, records, builds)
    lines += submission_folders(run, candidate)
    lines += _environment(run)
    lines += _functional_testing(run, candidate, builds)
    lines += _performance(run, candidate, records)
    lines += _additional_statistics(run, candidate, records, plotted)
    lines += _robust_statistics(records)
    lines += _cpu_time_table(records)
    lines += _resources(records)
    lines += _leak_section(run, candidate, plotted)
    lines += _evidence_index(run, records, builds)
    return "\n".join(lines) + "\n"


def _family(records: Sequence[Record], builds: Sequence[BuildEntry]) -> str:
    families = [r.family for r in records] + [b.family for b in builds]
    return next((family for family in families if family), "")


def candidate_title(candidate: str, records: Sequence[Record] = (),
                    builds: Sequence[BuildEntry] = ()) -> str:
    """The algorithm name of a candidate from the registry (``Laurus``), else (an
    ``external`` library) the family its libraries give."""
    return registry_title(candidate) or _family(records, builds)


def _title(run: Run, candidate: str, records: Sequence[Record],
           builds: Sequence[BuildEntry]) -> list[str]:
    machine = run.environment.machine
    title = candidate_title(candidate, records, builds)
    return [
        f"# {candidate} {title} — performance on {MACHINE_NAMES.get(machine, machine)} "
        f"(run {run.run_id})", "", system_line(run), "",
        "Independent measurement following the structure of the NICCS x86 "
        "self-assessment guide, §3.5 (1)–(7). Not a submitter self-assessment. "
        "Made by ngcc from the run directory; every figure below can be traced to a "
        "file listed in section 7.", ""]


def system_line(run: Run) -> str:
    """The run's system, under every page's title: architecture, CPU and counter
    (``System: AArch64 · Neoverse-N1 · counter cntvct_el0 (ARM generic timer), 19.2 MHz
    by cntfrq_el0, 52.1 ns a tick: the “cycles” of the tables below are its ticks, not
    core cycles``), so no figure is read as another system's, and the seeds' column
    words are not read as core cycles where the counter is the generic timer."""
    env = run.environment
    ticks = (": the “cycles” of the tables below are its ticks, not core cycles"
             if env.counter and _host.counter_unit(env.counter) == _host.GENERIC_TIMER else "")
    return (f"System: {MACHINE_NAMES.get(env.machine, env.machine)} · "
            f"{env.cpu_model or _host.UNKNOWN} · counter {_host.counter_brief(env)}{ticks}")


def _implementations(records: Sequence[Record], builds: Sequence[BuildEntry]) -> str:
    """``reference`` or, where the evidence has the implementation string,
    ``reference (portable C99, …)``: each variant and description once."""
    seen: list[tuple[str, str]] = []
    for implementation in [b.implementation for b in builds] + [r.implementation
                                                                 for r in records]:
        key = (implementation.variant, implementation.description)
        if key not in seen:
            seen.append(key)
    shown = sorted({VARIANT_NAMES.get(v, v) + (f" ({_untrusted.markdown_text(d)})" if d else "")
                    for v, d in seen})  # a sidecar's description is the submitter's text
    return ", ".join(shown) or _format.MISSING


def _basic_information(run: Run, candidate: str, records: Sequence[Record],
                       builds: Sequence[BuildEntry]) -> list[str]:
    plan = run.plan
    method = (f"ngcc {run.environment.ngcc_version}: KAT gate, then per-call "
              f"cycle counts in {plan.trials} trials per message length, each a "
              f"fresh process pinned to CPU {plan.cpu} (README, Method)")
    where = sorted({(r.environment.host or "", r.environment.cpu) for r in run.records})
    if len(where) > 1 or any(cpu != plan.cpu for _, cpu in where):  # Dask workers measured
        method = method.replace(f"pinned to CPU {plan.cpu}", "pinned to the CPU of the "
                                "worker that measured the job (" + ", ".join(
                                    f"{host} CPU {cpu}" if host else f"CPU {cpu}"
                                    for host, cpu in where) + ")")
    title = candidate_title(candidate, records, builds)
    items = [
        ("Category", "cryptographic hash algorithm; function: hash"),
        ("Algorithm", title),
        ("Implementation versions measured", _implementations(records, builds)),
        ("Parameter sets", ", ".join(_analysis.labels(records, builds)) or _format.MISSING),
        ("Security evaluation", "outside the scope of this performance report"),
        ("Measurement method", method),
        ("Submission", _submission(candidate)),
    ]
    return ["## " + SECTION_TITLES[0], ""] + [f"- {k}: {v}" for k, v in items] + [""]


def _submission(candidate: str) -> str:
    """Section 1's submission: the Round 1 candidate, or what the libraries are instead."""
    if candidate == "baseline":
        return "none: the ICCS baseline functions, reference points for the candidates"
    if registry_title(candidate) is None:
        return "no NGCC Round 1 candidate claims these libraries (external)"
    return f"NGCC Round 1 candidate {candidate}"


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
    lines += _hosts_table(run.records)
    for warning in run.host_warnings:
        lines += [f"- {WARNING} {warning}"]
    return lines + ([""] if run.host_warnings else [])


def kat_basis(kat: KatFacts) -> str:
    """What a library's KAT verdict rests on (``ngcc.kat.BASES``); for a run of an ngcc
    that did not record it, the shipped manifest, or none for a NOKAT."""
    return kat.basis or ("none" if kat.verdict == "NOKAT" else "shipped manifest")


def basis_words(candidate: str, kat: KatFacts) -> str:
    """Section 3's words for what one library was checked against."""
    words = []
    for basis in kat_basis(kat).split(", "):
        ref = (code(f"kat/{candidate}.sha256") if basis == "shipped manifest"
               else code(Path(kat.reference or "").name) if basis == "manifest" else "")
        words.append(KAT_BASIS_WORDS[basis].format(ref=ref))
    return "; ".join(words)


def _functional_testing(run: Run, candidate: str, builds: Sequence[BuildEntry]) -> list[str]:
    files = ", ".join(run.plan.kat_files) or "none"
    said = list(dict.fromkeys(basis_words(candidate, b.kat) for b in builds))
    if said == [KAT_BASIS_WORDS["none"]]:
        lines = ["## " + SECTION_TITLES[2], "",
                 f"The KAT files ({files}) were generated but not checked (no reference): no "
                 "manifest line, official file or submission KAT file covers them."
                 + (" The ICCS baseline functions have no official KAT; ngcc's test suite "
                    "checks their test vectors." if candidate == "baseline" else ""), ""]
    elif len(said) <= 1:
        against = said[0] if said else KAT_BASIS_WORDS["shipped manifest"].format(
            ref=code(f"kat/{candidate}.sha256"))
        lines = ["## " + SECTION_TITLES[2], "", f"Each library was checked {against} (KAT "
                 f"files checked: {files}) before timing.", ""]
    else:
        lines = ["## " + SECTION_TITLES[2], "",
                 f"The libraries were checked before timing (KAT files: {files}):", ""]
        lines += [f"- {code(b.label)}: {basis_words(candidate, b.kat)}" for b in builds]
        lines += [""]
    rows = [(code(b.label), build_flags(b.implementation.cflags), kat_cell(b.kat))
            for b in builds]
    lines += table(KAT_COLUMNS, rows) + [""]
    return lines + override_notes([b.kat for b in builds])


def override_notes(kats: Sequence[KatFacts]) -> list[str]:
    """What ⚠ means for the verdicts timed under ``--allow-kat-fail``: a MISMATCH is
    not the candidate's hash; a NOKAT was not checked; a file that could not be made
    is not shown to be the candidate's hash."""
    verdicts = {k.verdict for k in kats if k.timed_without_pass}
    lines = []
    if "MISMATCH" in verdicts:
        lines += [f"{WARNING} with MISMATCH marks an instance timed although its KAT "
                  "verdict is not PASS (explicit override): its figures measure a "
                  "function that does not compute the candidate's hash.", ""]
    if "NOKAT" in verdicts:
        lines += [f"{WARNING} with NOKAT marks an instance timed unchecked "
                  "(--allow-kat-fail): not checked (no reference), so its figures are of a "
                  "function not shown to compute the candidate's hash.", ""]
    failed = sorted(verdicts - {"MISMATCH", "NOKAT"})
    if failed:
        lines += [f"{WARNING} with {' or '.join(failed)} marks an instance timed although "
                  "its KAT files could not be generated and checked (explicit override): "
                  "its figures are of a function not shown to compute the candidate's "
                  "hash.", ""]
    return lines


def performance_row(record: Record) -> tuple[str, ...]:
    """One row of section 4, formatted as on the seed pages."""
    stats = record.statistics
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.mean_cycles), _format.cycles_per_byte(stats.cycles_per_byte),
            _format.duration(stats.mean_seconds), _format.megabytes_per_second(stats.mb_per_s),
            _format.call_count(_analysis.calls_per_trial(record)))


def leading_row(record: Record) -> tuple[str, ...]:
    """One row of section 4 on a disturbed host: the record's leading figure
    (``_analysis.leading``), then its harness mean."""
    stats, lead = record.statistics, _analysis.leading(record.statistics)
    n = record.message_bytes
    return (instance_label(record), _format.message(n), lead.name, _format.cycles(lead.ticks),
            _format.cycles_per_byte(lead.ticks / n), _format.duration(lead.seconds),
            _format.megabytes_per_second(n / lead.seconds / 1e6 if lead.seconds else None),
            _format.cycles(stats.mean_cycles),
            _format.call_count(_analysis.calls_per_trial(record)))


def _leads_with_cpu_time(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if _analysis.leading(r.statistics).code == "cpu_time"]


def _performance(run: Run, candidate: str, records: Sequence[Record]) -> list[str]:
    lines = ["## " + SECTION_TITLES[3], ""]
    disturbed = _leads_with_cpu_time(records)
    if disturbed:
        lines += [f"{WARNING} Trials of {len(disturbed)} of {_plural(len(records), 'job')} "
                  "below were preempted (another task held their CPU while the counter ran "
                  "on), so those rows lead with the CPU-time figure — the thread's CPU time "
                  "per call over the uninstrumented batch, which stops while the thread is "
                  "off the CPU — and show the harness mean, which holds the time the other "
                  "tasks took, beside it under its own name.", ""]
        lines += _by_host(LEADING_COLUMNS, records, leading_row, run=run)
        lines += ["Figure: what the row's cycles, cycles/byte, time and MB/s are (CPU time: "
                  "the thread's CPU time over the uninstrumented batch / its calls, in "
                  "counter ticks at the trial's counter rate; harness mean: all counter "
                  "ticks of all timed calls / number of calls, counter overhead included, "
                  "time from wall-clock time). n: calls in total (trials × calls per "
                  "trial), each trial a fresh process.", ""]
    else:
        lines += _by_host(PERFORMANCE_COLUMNS, records, performance_row, run=run)
        lines += ["Mean cycles: all counter ticks of all timed calls / number of calls (the "
                  "harness mean; counter overhead included). Mean time and MB/s (10⁶ bytes "
                  "per second) from wall-clock time. n: calls in total (trials × calls per "
                  "trial), each trial a fresh process.", ""]
    failed = [job for job in run.failed_jobs if job.candidate == candidate]
    if failed:
        lines += ["Not measured (the causes are at the top of the page): " + "; ".join(
            f"{code(job.label)} at {_format.message(job.message_bytes)} ({job.status})"
            for job in failed) + ".", ""]
    return lines


def confidence_interval(record: Record) -> str:
    """``2.10 k – 2.14 k``: the 95 % CI of the mean (the bootstrap interval, which
    cannot go below zero, in statistics of version 2; else the t interval), or — for a
    single trial."""
    stats = record.statistics
    low, high = ((stats.mean_bootstrap_ci95_low_ticks, stats.mean_bootstrap_ci95_high_ticks)
                 if stats.version >= 2 else (stats.ci95_low_cycles, stats.ci95_high_cycles))
    if low is None or high is None:
        return _format.MISSING
    return f"{_format.cycles(max(low, 0.0))} – {_format.cycles(high)}"  # counts are >= 0


def extra_row(records: Sequence[Record], record: Record) -> tuple[str, ...]:
    """One row of the additional statistics: CI, median, ratio to pseudoXOF."""
    stats = record.statistics
    half = stats.mean_bootstrap_ci95_relative if stats.version >= 2 else stats.ci95_relative
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.mean_cycles), confidence_interval(record),
            "± " + _format.percent(half) if half is not None else _format.MISSING,
            _format.cycles(stats.median_cycles),
            f"{_format.MISSING} (the baseline itself)" if record.instance.startswith(
                "pseudoXOF-") else _format.ratio(_analysis.baseline_ratio(records, record)))


def _additional_statistics(run: Run, candidate: str, records: Sequence[Record],
                           plotted: frozenset[str]) -> list[str]:
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
    kind = "bootstrap" if any(r.statistics.version >= 2 for r in records) else "t"
    columns = [column.format(kind) for column in EXTRA_COLUMNS]
    lines += _by_host(columns, records, lambda r: extra_row(run.records, r), run=run)
    if len(_analysis.hosts(run.records)) > 1:
        lines += [f"× pseudoXOF is {_format.MISSING} also where the baseline was measured "
                  "on another host: no ratio is taken across hosts.", ""]
    lines += flag_lines(records)
    return lines + _plot_links(candidate, records, plotted)


def _plot_links(candidate: str, records: Sequence[Record], plotted: frozenset[str]
                ) -> list[str]:
    """The candidate's cycles/byte plot and the links to its distributions: only those
    drawn (nothing when no plot was)."""
    lines = []
    cpb = plot_stem_cpb(candidate)
    if cpb in plotted:
        lines += [f"![cycles/byte of {candidate}]({cpb}.png)", "",
                  f"Cycles/byte against message length ({code(cpb + '.svg')} as SVG).", ""]
    links = [f"[{code(r.label)} {_format.message(r.message_bytes)}]({stem}.png)"
             for r in _analysis.distribution_records(records)
             if (stem := plot_stem_distribution(r.label, r.message_bytes)) in plotted]
    if links:
        lines += ["Per-call distributions: " + ", ".join(links) + ".", ""]
    return lines


ROBUST_TITLE = "Robust statistics and the observer effect"
CPU_TIME_TITLE = "CPU-time figures (beyond the guide's structure)"
ROBUST_COLUMNS = ("instance", "message", "per-call mean", "95 % CI (bootstrap)", "median",
                  "95 % CI of the median (log-t)", "batch mean", "observer effect",
                  "core cycles/byte", "flags")


def robust_row(record: Record) -> tuple[str, ...]:
    """One row of the robust statistics (statistics version 2)."""
    stats = record.statistics

    def interval(low: float | None, high: float | None) -> str:
        if low is None or high is None:
            return _format.MISSING
        return f"{_format.cycles(low)} – {_format.cycles(high)}"

    effect = _verdict.observer_text(record)  # of the undisturbed trials only
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
            "counter readings; observer effect: the median over the undisturbed trials "
            "(no flag) of each trial's per-call mean − its own batch mean (— where every "
            "trial was disturbed). Core "
            "cycles/byte: the harness mean converted with each trial's estimate of core "
            "cycles per tick. Flags: trials by kind (slow_trial, fast_trial, preempted, "
            "counter_rate); rejected: trials --strict measured again.", "",
            *table(ROBUST_COLUMNS, [robust_row(r) for r in newer]), ""]


CPU_TIME_COLUMNS = ("instance", "message", "CPU time/call", "95 % CI (bootstrap median)",
                    "per-call loop CPU time/call", "CPU time/byte", "leads")


def cpu_time_row(record: Record) -> tuple[str, ...]:
    """One row of the CPU-time figures (statistics version 3)."""
    stats = record.statistics
    interval = (_format.MISSING if stats.cpu_time_ci95_low_ticks is None
                or stats.cpu_time_ci95_high_ticks is None else
                f"{_format.cycles(stats.cpu_time_ci95_low_ticks)} – "
                f"{_format.cycles(stats.cpu_time_ci95_high_ticks)}")
    return (instance_label(record), _format.message(record.message_bytes),
            _format.cycles(stats.cpu_time_ticks), interval,
            _format.cycles(stats.loop_cpu_time_ticks),
            _format.cycles_per_byte(stats.cpu_time_per_byte),
            _analysis.leading(stats).name)


def _cpu_time_table(records: Sequence[Record]) -> list[str]:
    """The CPU-time figures of statistics version 3; nothing for older records."""
    newer = [r for r in records if r.statistics.version >= 3]
    if not newer:
        return []
    return ["## " + CPU_TIME_TITLE, "",
            "CPU time/call: the thread's CPU time over the uninstrumented batch / its "
            "calls, in counter ticks at each trial's counter rate, "
            "the median of the trials (a fresh process slow as a whole cannot move it); its "
            "95 % CI: percentile bootstrap of that median across the trials (4000 resamples "
            "from a fixed seed). Per-call loop: the same over the loop "
            "of timed calls, brackets included. Leads: the figure section 4 leads with: "
            f"{_analysis.LEADING_RULE}.", "",
            *table(CPU_TIME_COLUMNS, [cpu_time_row(r) for r in newer]), ""]


# ------------------------------------------------------------------ warnings, failures

def flag_lines(records: Sequence[Record]) -> list[str]:
    """The trial flags of ``records``, one line per kind: how many trials in how many
    records, and the worst case's message (empty when nothing was flagged)."""
    lines = []
    for kind, flagged, (record, worst) in _analysis.flag_kinds(records):
        count = len({id(rec) for rec, _ in flagged})
        lines += [f"- {WARNING} {code(kind)}: {_plural(len(flagged), 'trial')} in "
                  f"{count} of {_plural(len(records), 'record')}; worst: "
                  f"{code(record.label)} {_format.message(record.message_bytes)}, "
                  f"{worst.message}"]
    return lines + ([""] if lines else [])


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _clip(text: str, width: int = CAUSE_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _jobs_text(jobs: Sequence[Job]) -> str:
    """``Pavelor-512 at 32 B, 1024 B; Wish512 at 32 B``: the jobs by label."""
    lengths: dict[str, list[str]] = {}
    for job in jobs:
        lengths.setdefault(job.label, []).append(_format.message(job.message_bytes))
    return "; ".join(f"{code(label)} at {', '.join(found)}" for label, found in lengths.items())


def failure_banner(jobs: Sequence[Job]) -> list[str]:
    """What a page says at its top when some of ``jobs`` were not measured: the counts by
    status, then each distinct cause once with the jobs it stopped and one example
    message, and the jobs not run yet (empty when every job was measured)."""
    unmeasured = [job for job in jobs if job.status != "done"]
    if not unmeasured:
        return []
    groups = _analysis.failure_groups(jobs)
    pending = [job for job in unmeasured if job.status == "pending"]
    causes = len(groups) + bool(pending)
    lines = [f"**{WARNING} {len(unmeasured)} of {_plural(len(jobs), 'job')} not measured** "
             f"({_analysis.status_counts(jobs)}); "
             + ("one cause:" if causes == 1 else f"{causes} causes:"), ""]
    for name, group in groups:
        lines += [f"- {name}, {_plural(len(group), 'job')} ({_jobs_text(group)}): "
                  f"{code(_clip(group[0].error or name))}"]
    if pending:
        lines += [f"- pending, {_plural(len(pending), 'job')} ({_jobs_text(pending)}): not "
                  "run (the campaign stopped before them or is still running; the same "
                  "command resumes it)"]
    return lines + [""]


def resource_row(record: Record) -> tuple[str, ...]:
    """One row of section 5."""
    resources = record.resources
    return (instance_label(record), _format.operation(record.message_bytes),
            _format.byte_count(resources.elf_image_bytes),
            _format.kibibytes(resources.baseline_rss_kib),
            _format.kibibytes(resources.peak_rss_kib))


def _rss_process(records: Sequence[Record]) -> str:
    """What the RSS figures include: the trial process was ``ngcc-driver`` (C) or, in runs
    of ngcc versions before it, a Python process."""
    if all(r.provenance.runner.endswith("DriverRunner") for r in records):
        return "of the trial process, ngcc-driver (C) with the library and libc"
    return ("of the trial process, including, where it was a Python process, the "
            "interpreter and numpy (about 40 MiB)")


def _resources(records: Sequence[Record]) -> list[str]:
    return ["## " + SECTION_TITLES[4], "",
            "Static memory is approximated by the library's loadable ELF segments (the "
            "memory sizes of its PT_LOAD segments); peak memory is the process high-water "
            "mark (VmHWM) " + _rss_process(records) + ", so both are upper-bound proxies "
            "rather than isolated algorithm memory. Baseline RSS is taken after loading "
            "the library, before the warm-up; both are the maxima over the trials.", ""] + table(
        RESOURCE_COLUMNS, [resource_row(r) for r in records]) + [""]


def leak_row(test: dict[str, Any]) -> tuple[str, ...]:
    """One row of the leak section, from a leak evidence file."""
    fixed, random = test["calls_per_class"]
    return (code(test["label"]), _format.message(test["message_bytes"]), test["verdict"],
            "%.2f" % test["max_t"], test["max_test"] or _format.MISSING,
            f"{test['calls']} ({fixed} / {random})", "%.1f s" % test["seconds"],
            code(test["relpath"]))


def _leak_section(run: Run, candidate: str, plotted: frozenset[str]) -> list[str]:
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
    images = [f"![|t| of {t['label']}]({plot_stem_leak(t)}.png)" for t in tests
              if plot_stem_leak(t) in plotted]
    return lines + ([", ".join(images), ""] if images else [])


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


#: The campaign module that ran a run's jobs, by the version of the layout.
CAMPAIGN_SCRIPT = "ngcc/campaign/campaign.py"
#: Before the stage folders, the campaign and the driver runner lay at the package root
#: (their records name the runner ``ngcc._child.DriverRunner``).
_FLAT_LAYOUT = tuple("ngcc/%s.py" % name for name in ("_campaign", "_child"))
#: The source files that ran a runner's trials, by the runner a record names (each
#: layout's own paths, so that an old run's pages still regenerate as they were).
RUNNER_SCRIPTS = {
    "ngcc.driver.child.DriverRunner": (CAMPAIGN_SCRIPT, "ngcc/driver/child.py",
                                       "csrc/driver/driver.c"),
    "ngcc._child.DriverRunner": (*_FLAT_LAYOUT, "csrc/driver/driver.c"),
    "python -m ngcc._isolate → ngcc._worker.trial": (_FLAT_LAYOUT[0], "ngcc/_worker.py",
                                                      "csrc/bench.c"),
}


def scripts(records: Sequence[Record]) -> list[str]:
    """The campaign and the sources of the runners that timed ``records`` (a runner
    ngcc does not know is named as the record names it)."""
    found: list[str] = []
    runners = [r.provenance.runner for r in records] or ["ngcc.driver.child.DriverRunner"]
    for runner in runners:
        for script in RUNNER_SCRIPTS.get(runner, (CAMPAIGN_SCRIPT, runner)):
            if script not in found:
                found.append(script)
    return found


# ------------------------------------------------------------------ summary page

def summary_page(run: Run, plotted: frozenset[str] | None = None) -> str:
    """The run's summary page: cycles/byte of every library at every length."""
    plotted = plot_stems(run) if plotted is None else plotted
    lengths = sorted({record.message_bytes for record in run.records})
    lines = run_page_head(run, "summary")
    lines += failure_banner(run.jobs)
    lines += [f"- {WARNING} {warning}" for warning in run.host_warnings]
    disturbed = _leads_with_cpu_time(run.records)
    lines += ([""] if run.host_warnings else []) + [
        "## Cycles/byte (the leading figure)" if disturbed
        else "## Cycles/byte (mean over all calls)", ""]
    if disturbed:
        lines += [f"{WARNING} Trials of {len(disturbed)} of "
                  f"{_plural(len(run.records), 'job')} were preempted: a cell marked (CPU) "
                  "is the CPU-time figure (the thread's CPU time per call over the "
                  "uninstrumented batch, which the time other tasks took cannot inflate), "
                  "the others the mean over all calls.", ""]
    columns = ("candidate", "instance", "KAT", *[_format.message(n) for n in lengths])
    lines += (_by_host(columns, run.records, None, lambda rs: _summary_rows(rs, lengths),
                       run=run)
              if run.records else ["No job was measured.", ""])
    lines += ["Candidate pages: " + ", ".join(
        f"[{c}]({page_name(c)})" for c in _candidates(run)) + f"; [index]({INDEX_PAGE}).", ""]
    if PLOT_RUN_CPB in plotted:
        lines += [f"![cycles/byte of every instance]({PLOT_RUN_CPB}.png)", ""]
    failed = run.failed_jobs
    if failed:
        lines += ["## Jobs not measured", "", "Their causes are at the top of the page.", ""]
        lines += table(("candidate", "instance", "message", "status"), [
            (job.candidate, code(job.label), _format.message(job.message_bytes),
             job.status) for job in failed]) + [""]
    return "\n".join(lines) + "\n"


def run_page_head(run: Run, page: str) -> list[str]:
    """The head of a page of the whole run: its title, its system, its run line."""
    return [f"# Run {run.run_id} — {page}", "", system_line(run), "", _run_line(run), ""]


def _run_line(run: Run) -> str:
    env = run.environment
    return (f"{env.cpu_model or 'unknown CPU'}, CPU {env.cpu}; "
            f"{_host.clock_text(env)}. Campaign {_utc(run.campaign.created)} – "
            f"{_utc(run.campaign.finished)} (UTC); {len(run.records)} of "
            f"{len(run.jobs)} jobs measured.")


def _summary_rows(records: Sequence[Record], lengths: Sequence[int]) -> list[tuple[str, ...]]:
    rows = []
    by_label: dict[str, dict[int, Record]] = {}
    for record in records:
        by_label.setdefault(record.label, {})[record.message_bytes] = record
    for by_length in by_label.values():
        first = next(iter(by_length.values()))
        cells = [_summary_cell(by_length[n]) if n in by_length else _format.MISSING
                 for n in lengths]
        rows.append((first.candidate, instance_label(first), kat_cell(first.kat), *cells))
    return rows


def _summary_cell(record: Record) -> str:
    """A record's leading figure per byte, marked ``(CPU)`` when it is the CPU time."""
    lead = _analysis.leading(record.statistics)
    cell = _format.cycles_per_byte(lead.ticks / record.message_bytes)
    return cell + " (CPU)" if lead.code == "cpu_time" else cell


# ------------------------------------------------------------------ hosts
# A run measured by Dask workers on several machines (``--scheduler``) has records of
# more than one host: its tables are split by host, and no figure mixes two hosts. A
# run of one host reads as before.

HOST_COLUMNS = ("host", "processor", "clock", "records")


def _hosts_table(records: Sequence[Record]) -> list[str]:
    """Section 2's list of the hosts measured on, when there is more than one."""
    groups = _analysis.by_host(records)
    if len(groups) < 2:
        return []
    rows = []
    for name, group in groups:
        cpus = sorted({r.environment.cpu for r in group})
        env = group[0].environment
        rows.append((code(name or _host.UNKNOWN), "%s (CPU %s)" % (
            env.cpu_model or _host.UNKNOWN, ", ".join(map(str, cpus))),
            _host.clock_text(env), str(len(group))))
    return ["The records were measured on %d hosts (the table above describes the "
            "campaign's own); every figure below is of one host:" % len(groups), ""] + \
        table(HOST_COLUMNS, rows) + [""]


def _by_host(columns: Sequence[str], records: Sequence[Record],
             row: Callable[[Record], Sequence[object]] | None,
             rows: Callable[[Sequence[Record]], Iterable[Sequence[object]]] | None = None,
             *, run: Run) -> list[str]:
    """A table of ``records`` (one ``row`` each, or ``rows`` of a group): one per host
    under its name when ``run`` has records of several hosts."""
    def made(group: Sequence[Record]) -> list[str]:
        body = rows(group) if rows is not None else [row(r) for r in group] if row else []
        return table(columns, body) + [""]
    if len(_analysis.hosts(run.records)) < 2:
        return made(records)
    groups = _analysis.by_host(records)
    lines: list[str] = []
    for name, group in groups:
        lines += [f"Measured on host {code(name or _host.UNKNOWN)}:", ""] + made(group)
    return lines


# ------------------------------------------------------------------ index page

INDEX_COLUMNS = ("candidate", "algorithm", "libraries", "message lengths", "jobs", "page")


def index_row(run: Run, candidate: str, hosts: bool = False) -> tuple[str, ...]:
    """One candidate's row of the index page (with the hosts its records were measured
    on when ``hosts``)."""
    jobs = [job for job in run.jobs if job.candidate == candidate]
    records = _analysis.of_candidate(run.records, candidate)
    builds = _analysis.entries_of_candidate(run.build_entries, candidate)
    labels = [lib.label for lib in run.plan.libraries if lib.candidate == candidate]
    labels += [label for label in _analysis.labels(records, builds) if label not in labels]
    unpassed = {b.label for b in builds if b.kat.timed_without_pass}
    lengths = sorted({job.message_bytes for job in jobs})
    return (candidate, candidate_title(candidate, records, builds)
            or _format.MISSING, ", ".join(code(label) + (f" {WARNING}" if label in unpassed
                                                          else "") for label in labels),
            ", ".join(_format.message(n) for n in lengths) or _format.MISSING,
            _analysis.status_counts(jobs), f"[{candidate}]({page_name(candidate)})",
            *([", ".join(h or _format.MISSING for h in _analysis.hosts(records))
               or _format.MISSING] if hosts else []))


def index_page(run: Run) -> str:
    """The run's index: every candidate with its libraries, lengths, job counts by
    status and a link to its page; the failures' causes at the top."""
    lines = run_page_head(run, "index")
    lines += _verdict.page_lines(run)
    lines += failure_banner(run.jobs)
    lines += ["## Candidates", ""]
    hosts = len(_analysis.hosts(run.records)) > 1  # a run of one host reads as before
    lines += table((*INDEX_COLUMNS, "hosts") if hosts else INDEX_COLUMNS,
                   [index_row(run, c, hosts) for c in _candidates(run)]) + [""]
    lines += [f"Cycles/byte of every library at every length: [summary]({SUMMARY_PAGE}). "
              f"{field_index_line()} "
              f"Jobs: {_analysis.status_counts(run.jobs)}.", ""]
    lines += submission_folders(run, None)
    return "\n".join(lines) + "\n"


FOLDERS_TITLE = "Submission folders (ngcc evaluate)"


def submission_folders(run: Run, candidate: str | None) -> list[str]:
    """The folders ``ngcc evaluate`` found, with how each was built (its adjustments)
    or why not: a candidate's submissions on its page, every folder on the index
    (``candidate`` None); nothing for a run it did not make."""
    evaluation = run.evaluation
    if evaluation is None:
        return []
    entries = (list(evaluation.folders) if candidate is None
               else evaluation.of_candidate(candidate))
    if not entries:
        return []
    verdicts = {b.label: b.kat.verdict for b in run.build_entries}
    failed = sum(e.status == "build failed" for e in entries)
    lines = [f"## {FOLDERS_TITLE}", "",
             f"{_plural(len(entries), 'folder')} found, {len(entries) - failed} built"
             + (f", {failed} not built (a row each, with the build's reason)" if failed
                else "") + ". Reference folders are built with the guide's reference "
             "flags, optimized ones with its performance flags.", ""]
    lines += table(_folders.FOLDER_COLUMNS, _folders.folder_rows(entries, verdicts)) + [""]
    if any(e.adjustments for e in entries):
        lines += [_folders.ADJUSTMENT_NOTE, ""]
    return lines
# ------------------------------------------------------------------ the field summary
# One row per library of the run, whatever the number of candidates, like the harness's
# summary table: candidate, algorithm, KAT verdict, mean cycles at 32 B, 1 KiB and 64 KiB
# with the ratio to the pseudoXOF baseline of the same width measured in the run.

FIELD_PAGE = "field.md"
FIELD_LENGTHS = (32, 1024, 65536)
"""The message lengths of the field summary: short, medium and long messages."""


def field_index_line() -> str:
    """The index page's sentence that links the field summary."""
    lengths = ", ".join(_format.message(n) for n in FIELD_LENGTHS)
    return (f"Mean cycles at {lengths} with × pseudoXOF and the KAT verdict of every "
            f"instance: [field summary]({FIELD_PAGE}).")


def field_columns() -> tuple[str, ...]:
    """The field table's columns: who, the KAT verdict, then per length mean cycles and
    the ratio to pseudoXOF."""
    per_length = [(f"{_format.message(n)} mean cycles", f"{_format.message(n)} × pseudoXOF")
                  for n in FIELD_LENGTHS]
    return ("candidate", "algorithm", "instance", "KAT",
            *[name for pair in per_length for name in pair])


def field_rows(run: Run, records: Sequence[Record]) -> list[tuple[str, ...]]:
    """One row per library of the run, in plan order, from ``records`` (one host's)."""
    builds = {b.label: b for b in run.build_entries}
    by_label: dict[str, dict[int, Record]] = {}
    for record in records:
        by_label.setdefault(record.label, {})[record.message_bytes] = record
    labels = [lib.label for lib in run.plan.libraries]
    labels += [label for label in by_label if label not in labels]
    rows = []
    for label in labels:
        measured = by_label.get(label, {})
        build = builds.get(label)
        first = next(iter(measured.values()), None)
        candidate = first.candidate if first is not None else _candidate(run, label, build)
        kat = first.kat if first is not None else build.kat if build is not None else None
        cells: list[str] = []
        for length in FIELD_LENGTHS:
            at = measured.get(length)
            cells += ([_format.cycles(at.statistics.mean_cycles),
                       _format.ratio(_analysis.baseline_ratio(run.records, at))]
                      if at is not None else [_format.MISSING, _format.MISSING])
        shown = instance_label(first) if first is not None else code(label)
        rows.append((f"[{candidate}]({page_name(candidate)})",
                     candidate_title(candidate, list(measured.values()),
                                             [build] if build is not None else [])
                     or _format.MISSING, shown, kat_cell(kat), *cells))
    return rows


def _candidate(run: Run, label: str, build: BuildEntry | None) -> str:
    if build is not None:
        return build.candidate
    return next(lib.candidate for lib in run.plan.libraries if lib.label == label)


def field_page(run: Run) -> str:
    """The run's field summary page (:data:`FIELD_PAGE`)."""
    lines = run_page_head(run, "field summary")
    lines += failure_banner(run.jobs)
    lines += ["One row per instance: mean cycles per call (all counter ticks of all timed "
              "calls / calls, as section 4 of the candidate pages) at "
              + ", ".join(_format.message(n) for n in FIELD_LENGTHS)
              + "; × pseudoXOF: over pseudoXOF of the same output width at the same length "
              f"in this run ({_format.MISSING} where it was not measured); KAT: the gate's "
              "verdict. The candidate links to its page.", ""]
    lines += _by_host(field_columns(), run.records, None,
                                   lambda records: field_rows(run, records), run=run)
    lines += [f"Candidate pages: [index]({INDEX_PAGE}); cycles/byte at every length: "
              f"[summary]({SUMMARY_PAGE}).", ""]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ files

def pages(run: Run, plots: bool = True) -> dict[str, str]:
    """Every report page of a run: file name in ``report/`` → Markdown text.

    ``plots``: whether the plots are drawn beside the pages; without them the pages
    link none.
    """
    plotted = plot_stems(run) if plots else frozenset()
    rendered = {INDEX_PAGE: index_page(run)}
    rendered.update({page_name(c): candidate_page(run, c, plotted) for c in _candidates(run)})
    rendered[SUMMARY_PAGE] = summary_page(run, plotted)
    rendered[FIELD_PAGE] = field_page(run)
    return rendered


def plot_stems(run: Run) -> frozenset[str]:
    """The stems of the plots :func:`write_plots` draws for a run's pages (the run's and
    each measured candidate's cycles/byte, each library's shortest distribution, the
    leak tests' |t|): what the pages may link."""
    stems = {PLOT_RUN_CPB} if run.records else set()
    for candidate in _candidates(run):
        records = _analysis.of_candidate(run.records, candidate)
        if records:
            stems.add(plot_stem_cpb(candidate))
        stems.update(plot_stem_distribution(r.label, r.message_bytes)
                     for r in _analysis.distribution_records(records))
    stems.update(plot_stem_leak(test) for test in run.leak_tests)
    return frozenset(stems)


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """``formats`` each once, in order.

    Raises:
        ReportError: an unknown format (the message lists the known ones).
    """
    unknown = [f for f in formats if f not in _export.FORMATS]
    if unknown or not formats:
        raise ReportError(f"unknown report format {', '.join(unknown) or '(none)'}; "
                          f"choose from {', '.join(_export.FORMATS)}")
    return tuple(dict.fromkeys(formats))


def report_files(run: Run, formats: Sequence[str] = ("markdown",), plots: bool = True,
                 images: Mapping[str, bytes] | None = None) -> dict[str, str]:
    """Every file of a report but the plots: file name in ``report/`` → text.

    Args:
        run: the run.
        formats: any of :data:`ngcc.report.export.FORMATS`: ``markdown`` (the pages),
            ``html`` (the same pages, self-contained), ``csv`` and ``json`` (the
            statistics table, ``statistics.csv``/``.json``).
        plots: whether the plots are drawn beside the pages (else the pages link none).
        images: the PNG bytes of the drawn plots by file name, which HTML pages inline.

    Raises:
        ReportError: an unknown format.
    """
    formats = check_formats(formats)
    markdown = pages(run, plots)
    files: dict[str, str] = {}
    if "markdown" in formats:
        files.update(markdown)
    if "html" in formats:
        files.update(_export.html_pages(markdown, images or {}))
    if "csv" in formats:
        files[_export.STATISTICS_STEM + ".csv"] = _export.statistics_csv(run.records)
    if "json" in formats:
        files[_export.STATISTICS_STEM + ".json"] = _export.statistics_json(run.records)
    return files


def write_report(run: Run, out_dir: str | os.PathLike[str] | None = None, plots: bool = True,
                 distributions: Sequence[tuple[str, int]] = (),
                 formats: Sequence[str] = ("markdown",)) -> list[Path]:
    """Write the pages (and, unless ``plots`` is false, the plots) of a run.

    Args:
        run: the run.
        out_dir: where to write; default the run's ``report/``.
        plots: also draw the cycles/byte plots (per candidate and for the run) and
            the per-call distributions (PNG and SVG).
        distributions: further (label or instance, message bytes) whose per-call
            distribution to draw, besides each library's shortest length.
        formats: what to write (:func:`report_files`); default the Markdown pages.

    Raises:
        ReportError: an unknown format, or a chosen distribution has no record in the
            run (checked before anything is written).
        CorruptRecordError: a raw file to draw is missing or does not match its
            record (checked before anything is written).

    Returns:
        The files written, pages and tables first, then the plots.
    """
    formats = check_formats(formats)
    chosen = chosen_records(run, distributions)
    samples = _distribution_samples(run, chosen) if plots else {}  # raw files checked first
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    out.mkdir(parents=True, exist_ok=True)
    _clear_odd_files(out)
    drawn = write_plots(run, out, samples) if plots else []
    images = {path.name: path.read_bytes() for path in drawn if path.suffix == ".png"}
    written = []
    for name, text in report_files(run, formats, plots, images).items():
        path = out / name
        _files.atomic_write_bytes(path, text.encode("utf-8"))
        written.append(path)
    return written + drawn


def _clear_odd_files(out: Path) -> None:
    """Remove what is neither a regular file nor a folder from the report folder (a
    FIFO would block the write, a symbolic link would send it elsewhere)."""
    for path in out.iterdir():
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            path.unlink()


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


def _leading_summary(run: Run) -> Any:
    """The run's summary table with each row's cycles/byte and CI bars those of its
    leading figure (``_analysis.leading``): what the cycles/byte plots draw."""
    summary = run.summary()
    for index, record in zip(summary.index, run.records, strict=True):
        lead = _analysis.leading(record.statistics)
        if lead.code != "cpu_time":
            continue
        n = record.message_bytes
        summary.loc[index, "cycles_per_byte"] = lead.ticks / n
        summary.loc[index, "cpb_ci_low"] = (lead.ci_low if lead.ci_low is not None
                                            else lead.ticks) / n
        summary.loc[index, "cpb_ci_high"] = (lead.ci_high if lead.ci_high is not None
                                             else lead.ticks) / n
    return summary


def write_plots(run: Run, out: Path,
                samples: dict[tuple[str, int], tuple[RunRecord, list[np.ndarray]]]
                ) -> list[Path]:
    """Draw every plot the pages link to into ``out``: the cycles/byte plots and the
    distributions of ``samples``; return the files."""
    from ngcc.evidence import leak as _leak
    from ngcc.report import plots as _plot

    summary = _leading_summary(run)
    statistic = ("CPU time where preempted, else mean"
                 if _leads_with_cpu_time(run.records) else "mean")
    per_byte = "%s/byte" % _format.unit_word(t.unit for r in run.records for t in r.trials)
    written = []
    if len(summary):
        written += _plot.save(_plot.cycles_per_byte(summary, f"Run {run.run_id}: {per_byte}",
                                                    unit=per_byte, statistic=statistic),
                              out / PLOT_RUN_CPB)
    for candidate in _candidates(run):
        rows = summary[summary["candidate"] == candidate]
        if len(rows):
            figure = _plot.cycles_per_byte(rows, f"{candidate}: {per_byte}", unit=per_byte,
                                           statistic=statistic)
            written += _plot.save(figure, out / plot_stem_cpb(candidate))
    for (label, length), (record, cycles) in samples.items():
        unit = _format.unit_word(t.unit for t in record.trials)  # counter ticks, or ns
        figure = _plot.distribution(cycles, f"{label}, {_format.message(length)}: "
                                    f"{unit} per call", unit=f"{unit}/call")
        written += _plot.save(figure, out / plot_stem_distribution(label, length))
    for test in run.leak_tests:
        calls, traces = _leak.trace_of(run.path / str(test["relpath"]), test)
        title = (f"{test['label']} at {_format.message(int(test['message_bytes']))}: "
                 f"{test['verdict']} (max |t| {test['max_t']:.1f})")
        written += _plot.save(_plot.leak_trace_plot(calls, traces, title=title),
                              out / plot_stem_leak(test))
    return written
