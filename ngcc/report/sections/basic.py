"""Sections 1 (basic information) and 2 (assessment environment) of a candidate page,
with the hosts a run was measured on when there were several."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.base import untrusted as _untrusted
from ngcc.evidence.model import BuildEntry, Record
from ngcc.library.candidates import title as registry_title
from ngcc.report import host as _host_words
from ngcc.report.sections.common import (
    SECTION_TITLES,
    WARNING,
    candidate_title,
    code,
    utc,
)
from ngcc.report.tables import markdown_table
from ngcc.stats import groups as _analysis

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

ENVIRONMENT_COLUMNS = ("item", "value")

VARIANT_NAMES = {"ref": "reference", "opt": "optimised", "external": "external library"}
#: What a library ``ngcc build`` made of a candidate's code is called where no folder of
#: ``ngcc evaluate`` says its kind.
BUILT_NAME = "built from the submission (ngcc build)"


def _implementations(run: Run, candidate: str, records: Sequence[Record],
                     builds: Sequence[BuildEntry]) -> str:
    """``reference`` or, where the evidence has the implementation string,
    ``reference (portable C99, …)``: each kind and description once. The kind of a
    library ``ngcc evaluate`` built is its folder's (``reference``, ``optimized``,
    ``additional``); an ``external`` build of a known candidate is never called an
    external library."""
    kinds = ({f.label: f.kind for f in run.evaluation.folders if f.label}
             if run.evaluation is not None else {})
    known = candidate != "baseline" and registry_title(candidate) is not None
    seen: list[tuple[str, str]] = []
    for label, implementation in [(b.label, b.implementation) for b in builds] + [
            (r.label, r.implementation) for r in records]:
        kind = kinds.get(label) or (BUILT_NAME if known and implementation.variant
                                    == "external" else VARIANT_NAMES.get(
                                        implementation.variant, implementation.variant))
        key = (kind, implementation.description)
        if key not in seen:
            seen.append(key)
    shown = sorted({kind + (f" ({_untrusted.markdown_text(d)})" if d else "")
                    for kind, d in seen})  # a sidecar's description is the submitter's text
    return ", ".join(shown) or _format.MISSING


def basic_information(run: Run, candidate: str, records: Sequence[Record],
                      builds: Sequence[BuildEntry]) -> list[str]:
    plan = run.plan
    method = (f"ngcc {run.environment.ngcc_version}: KAT gate, then per-call "
              f"cycle counts in {plan.trials} trials per message length, each a "
              f"fresh process pinned to CPU {plan.cpu} (README, Method)")
    if {t.placement for r in records for t in r.trials} == {"heap"}:
        method += ("; each timed message on the heap, 64-byte aligned, as the harness "
                   "places its own")
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
        ("Implementation versions measured",
         _implementations(run, candidate, records, builds)),
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
    the words of the one renderer (``measure.host``)."""
    env = run.environment
    return [
        ("processor", _host_words.processor_text(env)),
        ("clock", _host_words.clock_text(env)),
        ("memory", _host_words.memory_text(env)),
        ("OS / kernel", _host_words.system_text(env)),
        ("compiler / build tool", f"{env.compiler or _host_words.UNKNOWN} / setuptools, "
                                  "ngcc build"),
        ("campaign start / end (UTC)",
         f"{utc(run.campaign.created)} / {utc(run.campaign.finished)}"),
        ("cycle counter", _host_words.counter_text(env)),
        ("virtualization", _host_words.virtualization_text(env)),
        ("load average (1 min) start / end", _load(env.load_average_start,
                                                   run.campaign.load_average_end)),
        ("software", _host_words.software_text(env)),
    ]


def _load(start: Sequence[float] | None, end: Sequence[float] | None) -> str:
    def first(values: Sequence[float] | None) -> str:
        return f"{values[0]:.2f}" if values else _format.MISSING
    return f"{first(start)} / {first(end)}"


def environment(run: Run) -> list[str]:
    lines = ["## " + SECTION_TITLES[1], ""]
    lines += markdown_table(ENVIRONMENT_COLUMNS, environment_items(run)) + [""]
    lines += _hosts_table(run.records)
    for warning in run.host_warnings:
        lines += [f"- {WARNING} {warning}"]
    return lines + ([""] if run.host_warnings else [])

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
        rows.append((code(name or _host_words.UNKNOWN), "%s (CPU %s)" % (
            env.cpu_model or _host_words.UNKNOWN, ", ".join(map(str, cpus))),
            _host_words.clock_text(env), str(len(group))))
    return ["The records were measured on %d hosts (the table above describes the "
            "campaign's own); every figure below is of one host:" % len(groups), ""] + \
        markdown_table(HOST_COLUMNS, rows) + [""]
