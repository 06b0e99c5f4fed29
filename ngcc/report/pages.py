"""Markdown report pages of a run: an index, one page per candidate, a summary page and
the field summary, each put together from the sections of :mod:`ngcc.report.sections`
(:func:`pages` gives them all by file name; :mod:`ngcc.report.write` writes them).

The pages only render: the facts come from the evidence model, the groupings and
ratios from ``stats.groups``, the host's description from ``measure.host``, the file
names from the evidence model. Pages are a pure function of the run directory (and of
whether the plots are drawn): no rendering time, no absolute path, so ``ngcc
validate`` can regenerate them and compare byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.evidence import figures as _figures
from ngcc.evidence.analyses import slice_modules
from ngcc.evidence.model import (
    BuildEntry,
    Record,
    page_key,
    page_label,
    page_name,
    plot_stem_cpb,
    plot_stem_distribution,
)
from ngcc.report import host as _host_words
from ngcc.report import verdict as _verdict
from ngcc.report.folders import submission_folders
from ngcc.report.sections.basic import basic_information, environment
from ngcc.report.sections.common import (
    WARNING,
    LibraryColumn,
    baseline_sentence,
    by_host,
    candidate_title,
    code,
    instance_label,
    kat_cell,
    plural,
    utc,
)
from ngcc.report.sections.evidence import evidence_index
from ngcc.report.sections.failures import failure_banner
from ngcc.report.sections.kat import functional_testing
from ngcc.report.sections.performance import performance
from ngcc.report.sections.resources import resource_consumption
from ngcc.report.sections.statistics import robustness
from ngcc.report.tables import markdown_table
from ngcc.stats import groups as _analysis
from ngcc.stats import ranking as _ranking

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

MACHINE_NAMES = {"x86_64": "x86-64", "aarch64": "AArch64", "arm64": "AArch64"}

PLOT_RUN_CPB = "run-cpb"
SUMMARY_PAGE = "summary.md"
INDEX_PAGE = "index.md"


def run_candidates(run: Run) -> list[str]:
    """The pages of a run's plan and records, each once, in plan order: a page per
    candidate, and one per library no candidate claims (:func:`page_key`)."""
    return _analysis.candidates([page_key(lib.candidate, lib.label)
                                 for lib in run.plan.libraries], run.records)


def candidate_page(run: Run, candidate: str, plotted: frozenset[str] | None = None) -> str:
    """The Markdown page of one candidate of a run: sections 1–5 and 7 of the guide in
    the seeds' shape, the robustness figures in one table after section 4, the leak tests
    before section 7.

    ``plotted`` is the stems of the plots drawn beside the page (default: every plot
    :func:`plot_stems` names); the page links no other plot.
    """
    plotted = plot_stems(run) if plotted is None else plotted
    records = _analysis.of_candidate(run.records, candidate)
    builds = _analysis.entries_of_candidate(run.build_entries, candidate)
    lines = _title(run, candidate, records, builds)
    lines += _verdict.page_lines(run, records)
    lines += failure_banner([job for job in run.jobs
                             if page_key(job.candidate, job.label) == candidate])
    lines += basic_information(run, candidate, records, builds)
    lines += submission_folders(run, candidate)
    lines += environment(run)
    lines += functional_testing(run, candidate, builds)
    lines += performance(run, records)
    lines += robustness(run, candidate, records, plotted)
    lines += resource_consumption(records)
    for section in slice_modules("section"):  # each analysis's section, in their order
        lines += section.section(run, candidate, plotted)
    lines += evidence_index(run, records, builds)
    return "\n".join(lines) + "\n"


def _title(run: Run, candidate: str, records: Sequence[Record],
           builds: Sequence[BuildEntry]) -> list[str]:
    machine = run.environment.machine
    own = page_label(candidate)
    title = (f"{own} (a library no candidate claims)" if own is not None
             else f"{candidate} {candidate_title(candidate, records, builds)}")
    return [
        f"# {title} — performance on {MACHINE_NAMES.get(machine, machine)} "
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
    words = _host_words
    ticks = (": the “cycles” of the tables below are its ticks, not core cycles"
             if env.counter and words.counter_unit(env.counter) == words.GENERIC_TIMER else "")
    return (f"System: {MACHINE_NAMES.get(env.machine, env.machine)} · "
            f"{env.cpu_model or words.UNKNOWN} · counter {words.counter_brief(env)}{ticks}")


# ------------------------------------------------------------------ summary page

def summary_page(run: Run, plotted: frozenset[str] | None = None) -> str:
    """The run's summary page: cycles/byte of every library at every length."""
    plotted = plot_stems(run) if plotted is None else plotted
    lengths = sorted({record.message_bytes for record in run.records})
    lines = run_page_head(run, "summary")
    lines += failure_banner(run.jobs)
    lines += [f"- {WARNING} {warning}" for warning in run.host_warnings]
    lines += ([""] if run.host_warnings else []) + [
        "## Cycles/byte (%s)" % _figures.leading_words(run.records), ""]
    uncertain = [r for r in run.records if _figures.uncertainty(r)]
    if uncertain:
        lines += [f"{WARNING} {plural(len(uncertain), 'cell')} marked (uncertain): "
                  "fewer trials than planned ran in the host's fast speed state; the "
                  "candidate page's flags say which.", ""]
    columns = ("candidate", "instance", "KAT", *[_format.message(n) for n in lengths])
    main = _figures.main_figure(run.records)
    lines += (by_host(columns, run.records, None,
                      lambda rs: _summary_rows(rs, lengths, main), run=run)
              if run.records else ["No job was measured.", ""])
    lines += ["Candidate pages: " + ", ".join(
        f"[{c}]({page_name(c)})" for c in run_candidates(run)) + f"; [index]({INDEX_PAGE}).", ""]
    if PLOT_RUN_CPB in plotted:
        lines += [f"![cycles/byte of every instance]({PLOT_RUN_CPB}.png)", ""]
    return "\n".join(lines) + "\n"  # the jobs not measured: once, at the top


def run_page_head(run: Run, page: str) -> list[str]:
    """The head of a page of the whole run: its title, its system, its run line."""
    return [f"# Run {run.run_id} — {page}", "", system_line(run), "", _run_line(run), ""]


def _run_line(run: Run) -> str:
    """The CPU (the system line above names its model), its clock, the campaign's time
    and, when every job was measured, how many (else the page's top says it, with why)."""
    env = run.environment
    measured = (f"; {len(run.records)} of {len(run.jobs)} jobs measured"
                if all(job.status == "done" for job in run.jobs) else "")
    return (f"CPU {env.cpu}; {_host_words.clock_text(env)}. Campaign "
            f"{utc(run.campaign.created)} – {utc(run.campaign.finished)} (UTC){measured}.")


def _summary_rows(records: Sequence[Record], lengths: Sequence[int], main: _figures.Figure
                  ) -> list[tuple[str, ...]]:
    rows = []
    by_label: dict[str, dict[int, Record]] = {}
    for record in records:
        by_label.setdefault(record.label, {})[record.message_bytes] = record
    for by_length in by_label.values():
        first = next(iter(by_length.values()))
        cells = [_summary_cell(by_length[n], main) if n in by_length else _format.MISSING
                 for n in lengths]
        rows.append((first.candidate, instance_label(first), kat_cell(first.kat), *cells))
    return rows


def _summary_cell(record: Record, main: _figures.Figure) -> str:
    """A record's leading figure per byte, named where it is not the page's ``main``
    figure and marked where it is uncertain (``evidence.figures.uncertainty``)."""
    lead = record.statistics.figure
    cell = _format.cycles_per_byte(lead.per_byte(record.message_bytes))
    if lead.figure is not main:
        cell += " (%s)" % lead.figure.short
    return cell + " (uncertain)" if _figures.uncertainty(record) else cell


# ------------------------------------------------------------------ index page

INDEX_COLUMNS = ("candidate", "algorithm", "libraries", "message lengths", "jobs", "page")


def index_row(run: Run, candidate: str, hosts: bool = False) -> tuple[str, ...]:
    """One candidate's row of the index page (with the hosts its records were measured
    on when ``hosts``)."""
    jobs = [job for job in run.jobs if page_key(job.candidate, job.label) == candidate]
    records = _analysis.of_candidate(run.records, candidate)
    builds = _analysis.entries_of_candidate(run.build_entries, candidate)
    labels = [lib.label for lib in run.plan.libraries
              if page_key(lib.candidate, lib.label) == candidate]
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
    lines += markdown_table((*INDEX_COLUMNS, "hosts") if hosts else INDEX_COLUMNS,
                            [index_row(run, c, hosts) for c in run_candidates(run)]) + [""]
    lines += [f"Cycles/byte of every library at every length: [summary]({SUMMARY_PAGE}). "
              f"{field_index_line()}", ""]
    targets = ranking_targets(run)
    if targets:
        lines += ["The candidates ranked as the NGCC harness ranks them, with each rank's "
                  "interval and the ties in the noise: " + ", ".join(
                      f"[{t}-bit security]({ranking_page(t)})" for t in targets) + ".", ""]
    lines += submission_folders(run, None)
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ the field summary
# One row per library of the run, whatever the number of candidates, like the harness's
# summary table: candidate, algorithm, KAT verdict, the leading figure at 32 B, 1 KiB and
# 64 KiB with the ratio to the pseudoXOF baseline of the same width measured in the run.

FIELD_PAGE = "field.md"
FIELD_LENGTHS = _ranking.METRIC_LENGTHS
"""The message lengths of the field summary: short, medium and long messages (the
ranking's metrics)."""


def field_index_line() -> str:
    """The index page's sentence that links the field summary."""
    lengths = ", ".join(_format.message(n) for n in FIELD_LENGTHS)
    return (f"The leading figure at {lengths} with × pseudoXOF and the KAT verdict of every "
            f"instance: [field summary]({FIELD_PAGE}).")


def library_columns(run: Run) -> list[LibraryColumn]:
    """The analyses' columns of the run's tables of libraries (the field summary, the
    statistics exports): one per analysis whose evidence the run holds."""
    return [column for section in slice_modules("section")
            if (column := section.library_column(run)) is not None]


def field_columns(analyses: Sequence[LibraryColumn] = ()) -> tuple[str, ...]:
    """The field table's columns: who, the KAT verdict, then per length the leading
    figure per call and its ratio to pseudoXOF, then each analysis's of ``analyses``."""
    per_length = [(f"{_format.message(n)} ticks/call", f"{_format.message(n)} × pseudoXOF")
                  for n in FIELD_LENGTHS]
    return ("candidate", "algorithm", "instance", "KAT",
            *[name for pair in per_length for name in pair],
            *[column.title for column in analyses])


def field_rows(run: Run, records: Sequence[Record],
               analyses: Sequence[LibraryColumn] = ()) -> list[tuple[str, ...]]:
    """One row per library of the run, in plan order, from ``records`` (one host's),
    with its cell of each of ``analyses`` (:data:`MISSING <ngcc.base.format.MISSING>`
    where it was not analysed)."""
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
            cells += ([_format.cycles(at.statistics.figure.ticks),
                       _format.ratio(_analysis.baseline_ratio(run.records, at))]
                      if at is not None else [_format.MISSING, _format.MISSING])
        shown = instance_label(first) if first is not None else code(label)
        rows.append((f"[{candidate}]({page_name(page_key(candidate, label))})",
                     candidate_title(candidate, list(measured.values()),
                                     [build] if build is not None else [])
                     or _format.MISSING, shown, kat_cell(kat), *cells,
                     *[column.cells.get(label, _format.MISSING) for column in analyses]))
    return rows


def _candidate(run: Run, label: str, build: BuildEntry | None) -> str:
    if build is not None:
        return build.candidate
    return next(lib.candidate for lib in run.plan.libraries if lib.label == label)


def field_page(run: Run) -> str:
    """The run's field summary page (:data:`FIELD_PAGE`)."""
    analyses = library_columns(run)
    lines = run_page_head(run, "field summary")
    lines += failure_banner(run.jobs)
    lines += ["One row per instance: its leading figure per call (%s, as section 4 of the "
              "candidate pages) at " % _figures.leading_words(run.records)
              + ", ".join(_format.message(n) for n in FIELD_LENGTHS)
              + "; KAT: the gate's verdict"
              + "".join("; %s: its verdict (the candidate page says why)" % column.title
                        for column in analyses)
              + ". " + baseline_sentence(run.records)
              + ". The candidate links to its page.", ""]
    lines += by_host(field_columns(analyses), run.records, None,
                     lambda records: field_rows(run, records, analyses), run=run)
    lines += [f"Candidate pages: [index]({INDEX_PAGE}); cycles/byte at every length: "
              f"[summary]({SUMMARY_PAGE}).", ""]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ the ranking pages
# Their text is report/ranking's; which a run has, and their names, are here, so the
# index links them.

def ranking_targets(run: Run) -> list[int]:
    """The security targets a run's ranking pages rank: every target of its candidates'
    records when it measured two or more candidates (the baseline aside), else none."""
    if len(_ranking.ranked_candidates(run.records)) < 2:
        return []
    return _ranking.targets(run.records)


def ranking_stem(target: int) -> str:
    """The file stem of the ranking at ``target`` bits: ``ranking-512``."""
    return "ranking-%d" % target


def ranking_page(target: int) -> str:
    """The ranking page at ``target`` bits: ``ranking-512.md``."""
    return ranking_stem(target) + ".md"


# ------------------------------------------------------------------ all pages

def pages(run: Run, plots: bool = True) -> dict[str, str]:
    """Every report page of a run: file name in ``report/`` → Markdown text.

    ``plots``: whether the plots are drawn beside the pages; without them the pages
    link none.
    """
    plotted = plot_stems(run) if plots else frozenset()
    rendered = {INDEX_PAGE: index_page(run)}
    rendered.update({page_name(c): candidate_page(run, c, plotted) for c in run_candidates(run)})
    rendered[SUMMARY_PAGE] = summary_page(run, plotted)
    rendered[FIELD_PAGE] = field_page(run)
    return rendered


def plot_stems(run: Run) -> frozenset[str]:
    """The stems of the plots :func:`ngcc.report.write.write_plots` draws for a run's
    pages (the run's and each measured candidate's cycles/byte, each library's shortest
    distribution, the leak tests' |t|): what the pages may link."""
    stems = {PLOT_RUN_CPB} if run.records else set()
    for candidate in run_candidates(run):
        records = _analysis.of_candidate(run.records, candidate)
        if records:
            stems.add(plot_stem_cpb(candidate))
        stems.update(plot_stem_distribution(r.label, r.message_bytes)
                     for r in _analysis.distribution_records(records))
    for section in slice_modules("section"):
        stems.update(section.plot_stems(run))
    return frozenset(stems)
