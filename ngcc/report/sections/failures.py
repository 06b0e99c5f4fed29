"""What a page warns of: the trial flags of its records, one line per kind, and the
jobs that were not measured, each distinct cause once at the top of the page."""

from __future__ import annotations

from collections.abc import Sequence

from ngcc.base import format as _format
from ngcc.evidence.model import Job, Record
from ngcc.report.sections.common import WARNING, code, plural
from ngcc.stats import groups as _analysis

CAUSE_WIDTH = 300
"""The longest a failure's example message is shown on a page (the whole message stays
in ``campaign.json``)."""


def flag_lines(records: Sequence[Record]) -> list[str]:
    """The trial flags of ``records``, one line per kind: how many trials in how many
    records, and the worst case's message (empty when nothing was flagged)."""
    lines = []
    for kind, flagged, (record, worst) in _analysis.flag_kinds(records):
        count = len({id(rec) for rec, _ in flagged})
        lines += [f"- {WARNING} {code(kind)}: {plural(len(flagged), 'trial')} in "
                  f"{count} of {plural(len(records), 'record')}; worst: "
                  f"{code(record.label)} {_format.message(record.message_bytes)}, "
                  f"{worst.message}"]
    return lines + ([""] if lines else [])


def clip(text: str, width: int = CAUSE_WIDTH) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def jobs_text(jobs: Sequence[Job]) -> str:
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
    lines = [f"**{WARNING} {len(unmeasured)} of {plural(len(jobs), 'job')} not measured** "
             f"({_analysis.status_counts(jobs)}); "
             + ("one cause:" if causes == 1 else f"{causes} causes:"), ""]
    for name, group in groups:
        lines += [f"- {name}, {plural(len(group), 'job')} ({jobs_text(group)}): "
                  f"{code(clip(group[0].error or name))}"]
    if pending:
        lines += [f"- pending, {plural(len(pending), 'job')} ({jobs_text(pending)}): not "
                  "run (the campaign stopped before them or is still running; the same "
                  "command resumes it)"]
    return lines + [""]
