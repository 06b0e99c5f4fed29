"""Whether a run's figures are fit to publish, and if not, why (counted).

A run is **fit to publish** only when every host it was measured on meets the NGCC
guide's conditions as ``ngcc check`` reads them (:func:`ngcc.measure.host.host_warnings`: a
fixed clock, turbo off, an idle SMT sibling, not virtual, an idle machine, a counter
of known rate) and no trial was disturbed (no trial flag of any kind: preempted, off
its counter's rate, slower or faster than the others, outlying). Otherwise it is
**not fit to publish**, with each reason counted: ``160/160 trials preempted; KVM
guest; load 4.20–8.20``. The command line's last lines, the index, every candidate
page and so the HTML say it in these words (:func:`verdict_line`).

The sentence under the verdict names the figure section 4 leads with, from each
record's own leading figure (``evidence.figures``; :func:`leading_sentence`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ngcc.evidence import figures as _figures
from ngcc.evidence.model import Environment, Record
from ngcc.measure import host as _host
from ngcc.stats import trials as _stats

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

FIT = "fit to publish"
NOT_FIT = "not fit to publish"
CONDITIONS = ("the host meets the guide's conditions as `ngcc check` reads them (one "
              "core, fixed clock, turbo off, SMT sibling idle, not virtual, idle) and no "
              "trial was disturbed")
#: How each trial flag reads in a reason: ``12/160 trials preempted``.
FLAG_WORDS = {"preempted": "preempted", "counter_rate": "off their counter's rate",
              "slow_trial": "slower than the others", "fast_trial": "faster than the others",
              "outlying_trial": "outlying", "slow_process": "in processes slow as a whole",
              "affinity_changed": "whose library changed their CPU affinity",
              "coarse_counter": "too short for the counter's resolution",
              "slow_state": "in the host's slow speed state (left out of the figure)"}


@dataclass(frozen=True)
class Verdict:
    """A run's verdict: ``fit`` only with no ``reasons``."""

    fit: bool
    reasons: tuple[str, ...]

    def __str__(self) -> str:
        return FIT if self.fit else "%s: %s" % (NOT_FIT, "; ".join(self.reasons))


def _trial_reasons(records: Sequence[Record]) -> list[str]:
    """``160/160 trials preempted``: the trials flagged, per kind of flag, of all."""
    total = sum(len(r.trials) for r in records)
    flagged: dict[str, set[tuple[str, int]]] = {code: set() for code in FLAG_WORDS}
    for record in records:
        for flag in record.statistics.flags:
            flagged.setdefault(flag.code, set()).add((record.relpath, flag.trial))
    return ["%d/%d trials %s" % (len(which), total, FLAG_WORDS.get(code, code))
            for code, which in flagged.items() if which]


def _host_reason(code: str, env: Environment) -> str:
    """A host warning in a few words (the page's section 2 says it in full)."""
    if code == "virtualization":
        return "%s guest" % (env.virtualization or "virtual").upper()
    if code == "governor":
        return "governor %s (clock not fixed)" % env.governor
    if code == "smt":
        return "SMT sibling CPU %s" % ",".join(str(c) for c in env.smt_siblings if c != env.cpu)
    if code == "turbo":
        return "turbo on"
    if code == "counter":
        return "counter rate unknown"
    return code


def _loads(run: Run) -> list[float]:
    """The 1-minute load averages the run saw: at each start, after each trial, at the
    end."""
    values = [start.load_average_start[0] for start in run.campaign.starts]
    values += [t.load_average[0] for r in run.records for t in r.trials]
    if run.campaign.load_average_end is not None:
        values.append(run.campaign.load_average_end[0])
    return values


def verdict(run: Run) -> Verdict:
    """The run's verdict (module docstring): its trials' flags counted, then the host
    conditions it missed (of the campaign's host and every host a record names)."""
    reasons = _trial_reasons(run.records) if run.records else ["no job was measured"]
    envs = [run.environment, *(r.environment for r in run.records)]
    seen: dict[str, str] = {}
    for env in envs:
        for issue in _host.host_warnings(env):
            if issue.code != "load":
                seen.setdefault(issue.code, _host_reason(issue.code, env))
    reasons += list(seen.values())
    loads = _loads(run)
    if loads and max(loads) > _host.LOAD_LIMIT:
        reasons.append("load %.2f–%.2f" % (min(loads), max(loads)) if min(loads) != max(loads)
                       else "load %.2f" % max(loads))
    return Verdict(not reasons, tuple(reasons))


def verdict_line(run: Run) -> str:
    """The verdict as the pages and the command line's last line give it."""
    return "Verdict: %s." % verdict(run)


def leading_sentence(records: Sequence[Record]) -> str:
    """``Section 4 leads with …``: the figure the records lead with
    (``evidence.figures.leading_words``), and how many trials of the slow speed state
    were left out of it."""
    left_out = sum(len(r.statistics.left_out_trials or ()) for r in records)
    sentence = "Section 4 leads with the %s." % _figures.leading_words(records)
    if left_out:
        sentence += (" %d trial(s) of the host's slow speed state were left out of it and "
                     "measured again (flag slow_state)." % left_out)
    return sentence


def page_lines(run: Run, records: Sequence[Record] | None = None) -> list[str]:
    """The verdict at the top of a page: the verdict, what it needs, and what §4 of the
    page leads with for ``records`` (default: all the run's)."""
    found = verdict(run)
    head = f"**Verdict: {FIT}.**" if found.fit else \
        f"**Verdict: {NOT_FIT}** — {'; '.join(found.reasons)}."
    shown = run.records if records is None else records
    return [head + f" Fit to publish only when {CONDITIONS}. "
            + leading_sentence(shown), ""]


DISTURBED = "—, trials disturbed"
"""What the observer effect reads where no trial of a record was undisturbed."""


def observer_effect(record: Record) -> tuple[float, float | None] | None:
    """``(ticks, relative)``: the observer effect (:func:`ngcc.stats.trials.observer_effect`)
    of the record's undisturbed trials only (no flag of any kind): a preempted loop says
    nothing of what the per-call readings cost. None when no trial is undisturbed, or
    the trials timed no batch."""
    flagged = {flag.trial for flag in record.statistics.flags}
    quiet = [t for t in record.trials if t.index not in flagged]
    if not quiet:
        return None
    return _stats.observer_effect([t.statistics.mean_cycles for t in quiet], quiet)


def observer_text(record: Record) -> str:
    """``+12.3 (+1.20 %)`` of the undisturbed trials, ``(2 of 3 trials)`` when some were
    left out, or :data:`DISTURBED`."""
    flagged = {flag.trial for flag in record.statistics.flags}
    quiet = len([t for t in record.trials if t.index not in flagged])
    effect = observer_effect(record)
    if quiet == 0:
        return DISTURBED
    if effect is None:
        return "—"
    ticks, relative = effect
    text = "%+.1f" % ticks + (" (%+.2f %%)" % (100 * relative) if relative is not None else "")
    return text + (" (%d of %d trials)" % (quiet, len(record.trials))
                   if quiet < len(record.trials) else "")
