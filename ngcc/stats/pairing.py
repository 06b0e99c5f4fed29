"""Which records of two runs (or two labels of one run) pair, in which unit, and the
ratio and test of each pair: the statistics of ``ngcc compare`` and ``Run.compare``,
nothing rendered (:mod:`ngcc.report.compare` writes the tables and the plot).

The statistics are :mod:`ngcc.stats.compare`'s; this module decides *what* is compared:

* **Pairs**: the labels both runs hold (``Wish512`` against ``Wish512``), or the pairs
  asked for (``Wish512@built=Wish512``: that label of run A against this one of run B;
  both may be in one run). Every message length that both sides measured is compared;
  the others are listed with the reason (pending: the run is still in progress,
  crashed, not planned on that side) and skipped.
* **Units**: figures are compared in their counter's unit when both sides share it
  (TSC ticks of the same rate, timer ticks of the same rate, or ns). Otherwise each
  trial's figure is converted to core cycles with that trial's core-cycles-per-tick
  estimate when every trial of both sides carries one; else the comparison is refused
  (:class:`~ngcc.base.errors.UnitMismatchError`), because a ratio of two units means nothing.
* **Hosts**: records whose host fingerprints differ (CPU model, counter, frequency,
  kernel …) are compared, and the notes say which fields differ.

The result, :class:`RunComparison`, holds the rows, the summaries and the notes, and
gives them as records and as a pandas DataFrame (``Run.compare``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ngcc.base.errors import (
    NothingToCompareError,
    UnknownHostError,
    UnknownLabelError,
)
from ngcc.base.names import check_name
from ngcc.evidence import choices as _choices
from ngcc.stats import compare as _compare
from ngcc.stats import sides as _sides

if TYPE_CHECKING:
    import pandas as pd

    from ngcc.evidence.model import Record
    from ngcc.evidence.run import Run

#: The DataFrame's columns, one row per pair × length, then one per pair's summary.
COLUMNS = ("label_a", "label_b", "message_bytes", "statistic", "unit", "trials_a",
           "trials_b", "figure_a", "figure_b", "ratio", "ci_low", "ci_high", "p_value",
           "significant", "verdict", "same_host")
GEOMEAN = "geomean"

# ------------------------------------------------------------------ what is compared

@dataclass(frozen=True)
class Pair:
    """A library of run A (``label_a``) against one of run B (``label_b``)."""

    label_a: str
    label_b: str

    @classmethod
    def parse(cls, text: str) -> Pair:
        """``NAME`` (that label on both sides) or ``A=B``; each a valid label.

        Raises:
            InvalidNameError: a side is empty or breaks the name rule.
        """
        a, sep, b = text.partition("=")
        a = check_name(a.strip(), "label")
        return cls(a, check_name(b.strip(), "label") if sep else a)

    def __str__(self) -> str:
        return self.label_a if self.label_a == self.label_b else "%s=%s" % (self.label_a,
                                                                            self.label_b)


@dataclass(frozen=True)
class Row:
    """One pair at one message length: the figures, their unit and the comparison."""

    pair: Pair
    message_bytes: int
    unit: str
    trials_a: int
    trials_b: int
    figure_a: float
    figure_b: float
    comparison: _compare.Comparison
    host_differences: tuple[str, ...]


@dataclass(frozen=True)
class Summary:
    """One pair's geometric-mean ratio over the lengths compared."""

    pair: Pair
    lengths: tuple[int, ...]
    comparison: _compare.Comparison


@dataclass(frozen=True)
class RunComparison:
    """Every row, summary and note of a comparison of run A with run B.

    Attributes:
        run_a, run_b: the run directories (the same one for a comparison inside a run).
        statistic: ``median`` or ``mean``: the per-trial figure compared.
        alpha: the significance level; the intervals' confidence is 1 − alpha.
        rows: one per pair × length both sides measured, in run A's plan order.
        summaries: one per pair with an interval at some length.
        notes: what the reader must know first (hosts, units, what was skipped).
        margin: ratios within 1 ± margin are not called significant: ``MARGIN``, or
            wider where the host ran at several speeds (a note says so).
    """

    run_a: str
    run_b: str
    statistic: str
    alpha: float
    rows: tuple[Row, ...]
    summaries: tuple[Summary, ...]
    notes: tuple[str, ...]
    margin: float = _compare.MARGIN

    @property
    def confidence(self) -> float:
        """The intervals' confidence level, 1 − alpha."""
        return 1.0 - self.alpha

    def records(self) -> list[dict[str, Any]]:
        """The rows then the summaries as dicts with the keys of :data:`COLUMNS`."""
        out = []
        for row in self.rows:
            out.append(_record(row.pair, row.message_bytes, self.statistic, row.unit,
                               row.trials_a, row.trials_b, row.figure_a, row.figure_b,
                               row.comparison, not row.host_differences))
        for summary in self.summaries:
            out.append(_record(summary.pair, None, self.statistic, None, None, None, None,
                               None, summary.comparison, None))
        return out

    def to_frame(self) -> pd.DataFrame:
        """A DataFrame with :data:`COLUMNS`; summary rows have ``message_bytes`` <NA>.

        ``frame.attrs`` holds ``notes``, ``statistic``, ``alpha``, ``margin``, ``run_a``,
        ``run_b``.
        """
        import pandas as pd

        frame = pd.DataFrame(self.records(), columns=list(COLUMNS))
        for column in ("message_bytes", "trials_a", "trials_b"):
            frame[column] = frame[column].astype("Int64")
        frame["same_host"] = frame["same_host"].astype("boolean")
        frame.attrs.update(notes=list(self.notes), statistic=self.statistic,
                           alpha=self.alpha, margin=self.margin, run_a=self.run_a,
                           run_b=self.run_b)
        return frame


def _record(pair: Pair, message_bytes: int | None, statistic: str, unit: str | None,
            trials_a: int | None, trials_b: int | None, figure_a: float | None,
            figure_b: float | None, comparison: _compare.Comparison,
            same_host: bool | None) -> dict[str, Any]:
    return {"label_a": pair.label_a, "label_b": pair.label_b, "message_bytes": message_bytes,
            "statistic": statistic, "unit": unit, "trials_a": trials_a, "trials_b": trials_b,
            "figure_a": figure_a, "figure_b": figure_b, "ratio": comparison.ratio,
            "ci_low": comparison.ci_low, "ci_high": comparison.ci_high,
            "p_value": comparison.p_value, "significant": comparison.significant,
            "verdict": comparison.words, "same_host": same_host}


# ------------------------------------------------------------------ pairing

def _labels(run: Run) -> list[str]:
    return [library.label for library in run.plan.libraries]


def _check_label(run: Run, side: str, label: str) -> None:
    labels = _labels(run)
    if label in labels:
        return
    close = difflib.get_close_matches(label, labels, n=3, cutoff=0.5)
    hint = " Did you mean %s?" % ", ".join(close) if close else ""
    raise UnknownLabelError("no library labelled %r in run %s (%s); its labels: %s.%s"
                            % (label, side, run.path, ", ".join(labels) or "none", hint))


def _pairs(run_a: Run, run_b: Run, asked: Sequence[Pair | str], one_run: bool) -> list[Pair]:
    pairs = [p if isinstance(p, Pair) else Pair.parse(p) for p in asked]
    for pair in pairs:
        _check_label(run_a, "A", pair.label_a)
        _check_label(run_b, "B", pair.label_b)
    if pairs:
        return list(dict.fromkeys(pairs))
    if one_run:
        raise NothingToCompareError(
            "one run: name the libraries to compare with --instance A=B (labels of %s: %s)"
            % (run_a.path, ", ".join(_labels(run_a))))
    in_b = set(_labels(run_b))
    common = [Pair(label, label) for label in _labels(run_a) if label in in_b]
    if not common:
        raise NothingToCompareError(
            "runs %s and %s have no library label in common (A: %s; B: %s); pair them "
            "explicitly with --instance A_LABEL=B_LABEL" % (
                run_a.path, run_b.path, ", ".join(_labels(run_a)) or "none",
                ", ".join(_labels(run_b)) or "none"))
    return common


def _hosts(run_a: Run, run_b: Run, hosts: Sequence[str]) -> tuple[str | None, str | None]:
    """A's and B's host from ``hosts`` (none, one for both, or one each), each checked."""
    if len(hosts) > 2:
        raise ValueError("give at most two hosts (A's and B's), got %d" % len(hosts))
    chosen = (None, None) if not hosts else (hosts[0], hosts[-1])
    for side, run, host in (("A", run_a, chosen[0]), ("B", run_b, chosen[1])):
        known = list(dict.fromkeys(str(r.environment.host) for r in run.records))
        if host is not None and host not in known:
            raise UnknownHostError("no record of run %s (%s) was measured on host %r; its "
                                   "hosts: %s" % (side, run.path, host,
                                                  ", ".join(known) or "none"))
    return chosen


def _statuses(run: Run, label: str) -> dict[int, str]:
    return {job.message_bytes: job.status for job in run.jobs if job.label == label}


def _why_missing(side: str, status: str | None, host: str | None = None) -> str:
    if status == "done" and host is not None:  # a record there, of another host
        return "measured on host %s in %s" % (host, side)
    if status is None:
        return "not planned in %s" % side
    if status == "pending":
        return "pending in %s" % side
    return "%s in %s" % (status, side)


# ------------------------------------------------------------------ the comparison

def run_comparison(run_a: Run, run_b: Run | None, pairs: Iterable[Pair | str],
                   statistic: str, alpha: float, hosts: Sequence[str], load_limit: float,
                   margin: float = _compare.MARGIN) -> RunComparison:
    """Compare the records of ``run_a`` with those of ``run_b`` (or of ``run_a`` itself):
    the statistics behind ``report.compare.compare_runs``, whose arguments these are (its
    docstring says each), ``load_limit``, the 1-minute load average above which a
    side's host was busy (``measure.host.LOAD_LIMIT``): the notes then say so, and
    ``margin``: ratios within 1 ± margin are not called significant.

    Raises:
        UnknownLabelError: a label of ``pairs`` is not in its run.
        UnknownHostError: a host of ``hosts`` measured no record of its run.
        NothingToCompareError: no pair has a length measured on both sides.
        UnitMismatchError: two figures in different units that cannot be converted.
        ValueError: an unknown statistic, or alpha outside (0, 1).
    """
    if statistic not in _choices.COMPARED_STATISTICS:
        raise ValueError("statistic %r: choose one of %s" % (
            statistic, ", ".join(_choices.COMPARED_STATISTICS)))
    if not 0 < alpha < 1:
        raise ValueError("alpha is %r; a significance level lies strictly between 0 and 1, "
                         "e.g. 0.05" % alpha)
    one_run = run_b is None
    other = run_a if run_b is None else run_b
    chosen = _pairs(run_a, other, list(pairs), one_run)
    notes = _progress_notes(run_a, other, one_run)
    host_a, host_b = _hosts(run_a, other, hosts)
    by_key_a = {(r.label, r.message_bytes): r for r in run_a.records
                if host_a is None or r.environment.host == host_a}
    by_key_b = {(r.label, r.message_bytes): r for r in other.records
                if host_b is None or r.environment.host == host_b}
    elsewhere = {("A", r.label, r.message_bytes): r.environment.host for r in run_a.records}
    elsewhere.update({("B", r.label, r.message_bytes): r.environment.host
                      for r in other.records})
    margin, margin_note = _margin(chosen, by_key_a, by_key_b, margin)
    rows: list[Row] = []
    summaries: list[Summary] = []
    compared_records: list[tuple[Record, Record]] = []
    for pair in chosen:
        status_a, status_b = _statuses(run_a, pair.label_a), _statuses(other, pair.label_b)
        lengths = sorted(set(status_a) | set(status_b))
        compared, skipped = [], []
        for length in lengths:
            a, b = by_key_a.get((pair.label_a, length)), by_key_b.get((pair.label_b, length))
            if a is None or b is None:
                reasons = [_why_missing(side, status.get(length), elsewhere.get(
                               (side, label, length)))
                           for side, status, record, label in (
                               ("A", status_a, a, pair.label_a), ("B", status_b, b, pair.label_b))
                           if record is None]
                skipped.append("%d B (%s)" % (length, ", ".join(reasons)))
                continue
            row, note = _row(pair, length, a, b, statistic, alpha, margin)
            compared_records.append((a, b))
            if note is not None:
                notes.append(note)
            compared.append(row)
        if skipped:
            notes.append("%s: not compared at %s" % (pair, "; ".join(skipped)))
        rows.extend(compared)
        summary, note = _summary(pair, compared, alpha, compared_records[-len(compared):]
                                 if compared else [], margin)
        if summary is not None:
            summaries.append(summary)
        if note is not None:
            notes.append(note)
    if not rows:
        raise NothingToCompareError("nothing to compare: no pair has a length measured on "
                                    "both sides. " + " ".join(notes))
    notes[:0] = _host_notes(rows) + _load_notes(compared_records, load_limit) + \
        ([margin_note] if margin_note else [])
    return RunComparison(str(run_a.path), str(other.path), statistic, alpha, tuple(rows),
                         tuple(summaries), tuple(dict.fromkeys(notes)), margin)


def _margin(chosen: Sequence[Pair], by_key_a: Mapping[tuple[str, int], Record],
            by_key_b: Mapping[tuple[str, int], Record], floor: float
            ) -> tuple[float, str | None]:
    """The margin of every verdict: ``floor``, or wider where the host ran at several
    speeds while these records were measured (``sides.speed_state_spread``): a whole run
    can fall in one speed state, so two runs of the same code differ by as much, and
    the trials of one run cannot show it. The note says why it is wider."""
    keys = [(p.label_a, p.label_b, n) for p in chosen for (label, n) in by_key_a
            if label == p.label_a and (p.label_b, n) in by_key_b]
    records = [by_key_a[(a, n)] for a, _, n in keys] + [by_key_b[(b, n)] for _, b, n in keys]
    spread, record = _sides.speed_state_spread(records)
    if record is None or spread - 1 <= floor:
        return floor, None
    return spread - 1, (
        "the host ran at several speeds: %s's trials at %d B spread %.2f× from fastest to "
        "slowest, and a whole run can fall in one speed, so ratios within ±%.0f %% (not "
        "±%g %%) are not called significant; measure on a quiet host (`ngcc host`) to "
        "tell smaller differences" % (record.label, record.message_bytes, spread,
                                      100 * (spread - 1), 100 * floor))


def _row(pair: Pair, length: int, a: Record, b: Record, statistic: str, alpha: float,
         margin: float) -> tuple[Row, str | None]:
    """One length of a pair. By the leading figure, each side's figure is its record's
    own (what every view shows) and the ratio theirs; otherwise, and where the figures
    were converted to core cycles, the geometric means of the trials' figures."""
    values_a, values_b, unit, note = _sides.comparable(str(pair), length, a, b, statistic)
    figure_a, figure_b = _compare.geometric_mean(values_a), _compare.geometric_mean(values_b)
    centre = None
    if statistic == "figure" and unit != _sides.CORE_CYCLES and \
            a.statistics.figure.code == b.statistics.figure.code:
        figure_a, figure_b = a.statistics.figure.ticks or 0.0, b.statistics.figure.ticks or 0.0
        centre = figure_a / figure_b if figure_a > 0 and figure_b > 0 else None
    comparison = _compare.compare(values_a, values_b, alpha, margin, centre)
    return Row(pair, length, unit, len(values_a), len(values_b), figure_a, figure_b,
               comparison, _sides.host_differences(a.environment, b.environment)), note


def _summary(pair: Pair, rows: Sequence[Row], alpha: float,
             records: Sequence[tuple[Record, Record]] = (), margin: float = 0.0
             ) -> tuple[Summary | None, str | None]:
    """The pair's geometric mean over the lengths with an interval, and a note naming the
    lengths left out (too few trials, or trials without any spread); none when a side's
    records are of several hosts (one statistic is never pooled across hosts)."""
    for side, group in zip("AB", zip(*records, strict=True) if records else (), strict=False):
        several = list(dict.fromkeys(record.environment.host for record in group))
        if len(several) > 1:
            return None, ("%s: no geometric mean over the lengths: %s's records were "
                          "measured on hosts %s, and no statistic is pooled across hosts; "
                          "choose one with --host" % (pair, side, ", ".join(
                              str(h) for h in several)))
    usable = [row for row in rows if row.comparison.has_interval]
    left_out = ["%d B (%s)" % (row.message_bytes, "fewer than 2 trials on a side"
                               if row.comparison.p_value is None else
                               "no spread between trials on either side")
                for row in rows if not row.comparison.has_interval]
    note = ("%s: no interval, so left out of the geometric mean, at %s" % (
        pair, "; ".join(left_out))) if left_out else None
    if not usable:
        return None, note
    return Summary(pair, tuple(row.message_bytes for row in usable),
                   _compare.summarize([row.comparison for row in usable], alpha, margin)), note


def _progress_notes(run_a: Run, run_b: Run, one_run: bool) -> list[str]:
    notes = []
    for side, run in (("A", run_a),) if one_run else (("A", run_a), ("B", run_b)):
        pending = [job for job in run.jobs if job.status == "pending"]
        if pending:
            notes.append("run %s (%s) is still in progress: %d of %d jobs pending; they are "
                         "skipped" % (side, run.path, len(pending), len(run.jobs)))
    return notes


def _host_notes(rows: Sequence[Row]) -> list[str]:
    differences = list(dict.fromkeys(d for row in rows for d in row.host_differences))
    if not differences:
        return []
    some = sum(bool(row.host_differences) for row in rows)
    share = "every row" if some == len(rows) else "%d of %d rows" % (some, len(rows))
    return ["different hosts (%s): the fingerprints differ in %s; a ratio then measures "
            "the hosts as well as the libraries" % (share, "; ".join(differences))]


def _load_notes(pairs: Sequence[tuple[Record, Record]], load_limit: float) -> list[str]:
    """A note when a side's trials ran on a busy host (1-minute load above the limit)."""
    peaks = [max(trial.load_average[0] for record in side for trial in record.trials)
             for side in zip(*pairs, strict=True)]
    if max(peaks) <= load_limit:
        return []
    return ["busy host: the 1-minute load average reached %.2f during A's trials and %.2f "
            "during B's (above %.1f): other work lands in the figures, and in each side's "
            "at another time, so a significant ratio may be the load's; measure on an idle "
            "host (`ngcc check`)" % (peaks[0], peaks[1], load_limit)]
