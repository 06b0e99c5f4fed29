"""What ``ngcc campaign`` and ``ngcc evaluate`` print around a measurement: the plan,
the warnings (one line each, above the progress), what an
interrupted run keeps, the summary table, one line per cause of failure, and the
publishability verdict."""

from __future__ import annotations

import re
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from ngcc.base import format as _format
from ngcc.base.errors import NgccError
from ngcc.base.untrusted import plain
from ngcc.campaign.cost import CostEstimate
from ngcc.evidence import figures as _figures
from ngcc.evidence.evaluation import FolderEntry
from ngcc.evidence.model import Job, Record
from ngcc.evidence.run import Run, load_run
from ngcc.report.tables import WIDTH, aligned_table, fit
from ngcc.stats import groups as _analysis


def show_warning(message: Warning | str, category: type[Warning], filename: str,
                 lineno: int, file: object = None, line: str | None = None) -> None:
    """A warning as one ``ngcc: warning:`` line above the progress bar (the library has
    collapsed trial flags already: ``campaign.record.FlagWarnings``)."""
    from tqdm import tqdm  # a warning is rare: no command pays for tqdm's import without one

    tqdm.write("ngcc: warning: %s" % plain(str(message)), file=sys.stderr)


def kept_words(run_dir: Path) -> str:
    """``3 finished job(s) and 7 trial(s) of unfinished ones are kept in DIR``."""
    from ngcc.measure import partial as _partial

    try:
        done = sum(job.status == "done" for job in load_run(run_dir).jobs)
    except (NgccError, OSError):
        done = 0  # stopped before the run directory was written
    return "%d finished job(s) and %d trial(s) of unfinished ones are kept in %s" % (
        done, _partial.count(run_dir), run_dir)


def print_plan(stream: TextIO) -> Callable[[CostEstimate], None]:
    """Print the plan to ``stream``: stderr beside the progress, so that stdout holds the
    summary table alone; stdout for ``--dry-run``, whose result it is."""
    def show(estimate: CostEstimate) -> None:
        print(estimate, file=stream, flush=True)
    return show


#: ``SM3 at 64 B (trial 0) ``: the job's own words at the start of a child's error.
_JOB_PREFIX = re.compile(r"^\S+ at \d+ B \([^)]*\) ")


def failure_lines(jobs: Sequence[Job], shown: int = 4) -> list[str]:
    """One line per status and cause: a job's own error, or ``2 jobs crash (SM3 64 B,
    SM3 128 B): crashed: SIGSEGV`` (the first ``shown`` jobs named, the others counted)."""
    lines = []
    for status, alike in _analysis.failure_groups(jobs):  # the report's grouping
        if len(alike) == 1:
            lines.append(alike[0].error or "%s %s" % (alike[0].label, status))
            continue
        cause = _JOB_PREFIX.sub("", alike[0].error or status)
        names = ", ".join("%s %d B" % (job.label, job.message_bytes) for job in alike[:shown])
        more = " and %d more" % (len(alike) - shown) if len(alike) > shown else ""
        lines.append("%d jobs %s (%s%s): %s" % (len(alike), status, names, more, cause))
    return lines


def campaign_summary(run: Run, wide: bool = False) -> str:
    """The table ``ngcc campaign`` ends with, its legend folded to :data:`WIDTH`: by
    default the columns a reader needs first (each row's figure per byte and per call,
    its 95 % CI, the trials, KAT verdict and flags), which fit in :data:`WIDTH`
    columns; with ``wide`` every column (the median and its CI, the observer effect,
    core cycles per byte, MB/s, the calls)."""
    unit = _figures.unit_word(t.unit for r in run.records for t in r.trials)
    rows = [_wide_row(record) if wide else _short_row(record) for record in run.records]
    lines = aligned_table([_wide_header(unit) if wide else _short_header(unit), *rows])
    legend = _WIDE_LEGEND if wide else _SHORT_LEGEND
    return "%s\n\n%s\nevidence: %s\nnext: ngcc report %s" % (
        "\n".join(lines if wide else [fit(line) for line in lines]),
        "\n".join(textwrap.wrap(legend % {"unit": unit}, WIDTH)), run.path, run.path)


def _short_header(unit: str) -> tuple[str, ...]:
    return ("instance", "message", "leads", unit + "/byte", unit + "/call", "95% CI",
            "trials", "KAT", "flags")


def _short_row(record: Record) -> tuple[str, ...]:
    lead = record.statistics.figure
    return (record.label, _format.message(record.message_bytes), lead.figure.short,
            _format.cycles_per_byte(lead.per_byte(record.message_bytes)),
            _format.cycles(lead.ticks), _ci(lead), str(len(record.raw.calls_per_trial)),
            _kat(record), _flag_counts(record))


def _wide_header(unit: str) -> tuple[str, ...]:
    return ("instance", "message", "leads", unit + "/call", unit + "/byte", "95% CI (of)",
            "per-call mean", "median", "95% CI (log-t)", "observer", "core c/B (est.)", "MB/s",
            "n",
            "KAT", "flags")


def _wide_row(record: Record) -> tuple[str, ...]:
    stats = record.statistics
    lead = stats.figure
    return (record.label, _format.message(record.message_bytes), lead.figure.short,
            _format.cycles(lead.ticks),
            _format.cycles_per_byte(lead.per_byte(record.message_bytes)),
            "%s %s" % (_ci(lead), lead.figure.interval) if lead.ci_relative is not None
            else _format.MISSING,
            _format.cycles(stats.mean_cycles), _format.cycles(stats.median_cycles),
            "±" + _format.percent(stats.median_ci95_relative), _observer(record),
            _format.cycles_per_byte(_figures.core_cycles_per_byte(stats, record.message_bytes)),
            _format.megabytes_per_second(lead.megabytes_per_second(record.message_bytes)),
            _format.call_count(list(record.raw.calls_per_trial)), _kat(record),
            _flag_counts(record))


def _ci(lead: _figures.Value) -> str:
    return ("±" + _format.percent(lead.ci_relative) if lead.ci_relative is not None
            else _format.MISSING)


def _kat(record: Record) -> str:
    return record.kat.verdict + (" ⚠" if record.kat.timed_without_pass else "")


_SHORT_LEGEND = (
    "leads: the row's figure: %s; %s where the trials did not measure it. 95%%%% CI: of "
    "that figure, over the trials. flags: the trials flagged, by kind (slow_state: a trial "
    "of the host's slow speed state, left out). --wide: every column (the per-call mean "
    "and median, observer effect, core c/B, MB/s, calls)." % (
        _figures.CPU_TIME.short + " is " + _figures.CPU_TIME.meaning.replace("%", "%%"),
        _figures.PER_CALL_MEAN.short))

_WIDE_LEGEND = (
    "leads: what the row's %(unit)s/call, /byte, 95%% CI and MB/s are: "
    + _figures.LEADING_RULE.replace("%", "%%") + "; per-call mean: "
    + _figures.PER_CALL_MEAN.meaning.replace("%", "%%") + "; 95%% CI (of): the interval "
    "of the row's figure and which it is (bootstrap median: percentile bootstrap of the "
    "median of the trials' CPU-time figures; bootstrap mean: of the trial means); 95%% CI "
    "(log-t): of the per-call median, t interval of the logarithms of the trial medians; "
    "observer: per-call mean over the uninstrumented batch mean (median of the trials); "
    "core c/B (est.): the row's figure in core cycles per byte, estimated with the trials' "
    "core cycles per tick (no PMU counted them); MB/s: of the row's figure")


def verdict_text(run: Run) -> str:
    """The run's publishability verdict, the command line's last line; where its host
    missed a condition, it names ``ngcc host``, which says what to change."""
    from ngcc.measure import host as _host
    from ngcc.report import verdict as _verdict

    line = _verdict.verdict_line(run)
    if _host.host_warnings(run.environment):
        line += " `ngcc host` shows what makes this host unfit, with the command for each."
    return line


def _observer(record: Record) -> str:
    """The observer effect of the undisturbed trials, relative (``+1.20 %``)."""
    from ngcc.report import verdict as _verdict

    effect = _verdict.observer_effect(record)
    if effect is None and not {t.index for t in record.trials} - {
            f.trial for f in record.statistics.flags}:
        return _verdict.DISTURBED
    return _signed_percent(effect[1] if effect is not None else None)


def _signed_percent(value: float | None) -> str:
    return _format.MISSING if value is None else "%+.2f %%" % (100 * value)


def _flag_counts(record: Record) -> str:
    """``2 preempted, 1 slow_trial``: the record's flags by code, and the trials
    ``--strict`` rejected; ``—`` for none."""
    counts = Counter(flag.code for flag in record.statistics.flags)
    parts = ["%d %s" % (n, code) for code, n in counts.items()]
    if record.rejected_trials:
        parts.append("%d rejected" % len(record.rejected_trials))
    return ", ".join(parts) or _format.MISSING


def folder_table(folders: Sequence[FolderEntry], run: Run | None, wide: bool = False
                 ) -> list[str]:
    """The table ``ngcc evaluate`` ends with, a row per folder: by default within
    :data:`WIDTH` (its submission, kind, library (or folder's name, not built), outcome
    and its leading figure per byte at the longest length and per call at the shortest);
    with ``wide`` the whole folder, the options it was built with, the outcome's reason
    and the figure per byte at every length."""
    from ngcc.report import folders as _folders

    records = {(r.label, r.message_bytes): r for r in run.records} if run is not None else {}
    verdicts = {b.label: b.kat.verdict for b in run.build_entries} if run is not None else {}
    lengths = sorted({n for _, n in records})
    unit = _figures.unit_word(t.unit for r in records.values() for t in r.trials)

    def figure(label: str | None, n: int, per_call: bool = False) -> str:
        record = records.get((label or "", n))
        if record is None:
            return _format.MISSING
        lead = record.statistics.figure
        return _format.cycles(lead.ticks) if per_call else \
            _format.cycles_per_byte(lead.per_byte(n))

    if wide:
        return aligned_table([
            ("folder", "kind", "built with", "library", "outcome",
             *("%s/byte %s" % (unit, _format.message(n)) for n in lengths)),
            *((plain(f.folder), f.kind, plain(f.options), f.label or "-",
               _folders.outcome(f, verdicts, plain), *(figure(f.label, n) for n in lengths))
              for f in folders)])
    ends = ["%s/byte %s" % (unit, _format.message(lengths[-1])),
            "%s/call %s" % (unit, _format.message(lengths[0]))] if lengths else []
    return [fit(line) for line in aligned_table([
        ("submission", "kind", "library", "outcome", *ends),
        *((plain(f.submission), f.kind, plain(f.label or f.folder.rpartition("/")[2]),
           _folders.outcome(f, verdicts, plain).partition(": ")[0],
           *((figure(f.label, lengths[-1]), figure(f.label, lengths[0], per_call=True))
             if lengths else ()))
          for f in folders)])]
