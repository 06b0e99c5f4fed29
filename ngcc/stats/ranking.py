"""The field ranked, as the NGCC harness ranks it, with the uncertainty of each rank.

The harness's rule (its ranking pages, one per security target):

* **eligible**: the instances of the target, a k-bit security target taking the 2k-bit
  digests (:func:`digest_bits`: ``ranking-512`` ranks the 1024-bit instances), of every
  candidate but the baseline, reference builds (a separate ranking holds the optimized
  builds: :func:`ngcc.stats.groups.optimized_build`);
* **who is ranked**: each candidate (an external library, which no candidate claims, by
  its family: each submission of ``ngcc evaluate`` its own; :func:`ranked_name`);
* **one representative per candidate**: the set the candidate recommends where it names
  one (:data:`RECOMMENDED`), else its fastest eligible set by mean rank (each metric's
  ranks among its own sets, averaged; the first in the run's order on a tie);
* **metrics**: the leading figure at 32 B, 1 KiB and 64 KiB (:data:`METRIC_LENGTHS`, those
  the run measured), each ranked on its own, lower is better, exact ties sharing the
  average of their positions (:func:`positions`);
* **overall**: the mean of a candidate's metric ranks, ranked the same way.

What the harness does not show, and this module adds:

* **rank intervals**: the trials of each record (those its figure rests on,
  :func:`ngcc.stats.sides.trial_figures`) are resampled with the statistics' seeded
  bootstrap (:func:`ngcc.stats.intervals.bootstrap_indices`, one seed per candidate and
  metric, so every reader recomputes the same); each resample's figure is the median of
  its trials (the figure's own rule), every resample is ranked as above, and the 2.5 and
  97.5 percentiles of a candidate's ranks are its interval (``4 [3–6]``);
* **ties in the noise**: two candidates whose figures at a metric ``ngcc compare``'s test
  does not call different (:func:`ngcc.stats.compare.compare` with its ``MARGIN``; see
  :data:`TIE_RULE`) are marked tied.

Pure functions of the records; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ngcc.evidence.model import Record
from ngcc.library import candidates as _candidates
from ngcc.stats import compare as _compare
from ngcc.stats import groups as _groups
from ngcc.stats.intervals import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE,
    bootstrap_indices,
)
from ngcc.stats.sides import trial_figures

#: The metrics' message lengths: the harness's short, medium and long messages.
METRIC_LENGTHS = (32, 1024, 65536)
#: The security targets the harness ranks at (bits): 2k-bit digests each.
TARGETS = (128, 256, 512)
#: The set each candidate recommends (candidate id → instance name), where it names one.
#: The shipped registry records none, so each candidate is represented by its fastest
#: eligible set.
RECOMMENDED: Mapping[str, str] = {}
#: The builds a ranking holds: the harness ranks reference builds only.
BUILDS = ("reference", "optimized")
#: The rule of a tie, in words (pages and notes say it).
TIE_RULE = ("two candidates are tied at a metric when ngcc compare's test does not call "
            "their figures different: Welch's t on the logarithms of their trials' "
            "figures gives p ≥ %g, or the ratio's %g %% interval reaches within ±%g %% "
            "(what two runs of the same code differ by), or a side has fewer than %d "
            "trials" % (_compare.ALPHA, 100 * (1 - _compare.ALPHA), 100 * _compare.MARGIN,
                        _compare.MIN_TRIALS))


def digest_bits(target: int) -> int:
    """The digest length a security target of ``target`` bits ranks: 2 × target."""
    return 2 * target


def targets(records: Sequence[Record]) -> list[int]:
    """The security targets of the candidates' records (their digest lengths / 2)."""
    return sorted({r.digest_bits // 2 for r in records
                   if r.candidate != _groups.BASELINE_CANDIDATE and r.digest_bits % 2 == 0})


def ranked_name(record: Record) -> str:
    """Who ``record`` ranks as: its candidate, or for a library no candidate claims
    (``external``) its family, so two such submissions are two entries, not one."""
    return record.family if record.candidate == _candidates.EXTERNAL else record.candidate


def ranked_candidates(records: Sequence[Record]) -> list[str]:
    """Who a ranking can hold (every candidate but the baseline, :func:`ranked_name`),
    in order."""
    return list(dict.fromkeys(ranked_name(r) for r in records
                              if r.candidate != _groups.BASELINE_CANDIDATE))


def positions(figures: np.ndarray) -> np.ndarray:
    """The rank of each figure along the last axis, 1 = least, exact ties sharing the
    average of their positions (``[5, 3, 3, 9]`` → ``[3, 1.5, 1.5, 4]``)."""
    from scipy.stats import rankdata

    return np.asarray(rankdata(figures, method="average", axis=-1), dtype=np.float64)


@dataclass(frozen=True)
class MetricRank:
    """One candidate at one metric (message length).

    Attributes:
        message_bytes: the metric's length.
        figure: the record's leading figure per call (counter units).
        x_pseudoxof: the figure over its pseudoXOF baseline's (None without one).
        trials: how many trials the figure rests on.
        rank: its position (shared average on an exact tie).
        low, high: the 95 % interval of its rank over the bootstrap resamples.
        tied_with: the candidates it is tied with by :data:`TIE_RULE`.
    """

    message_bytes: int
    figure: float
    x_pseudoxof: float | None
    trials: int
    rank: float
    low: float
    high: float
    tied_with: tuple[str, ...]


@dataclass(frozen=True)
class Entry:
    """One candidate of a ranking: its representative, its metric ranks and overall.

    Attributes:
        candidate, label, instance: its candidate id, and the library (set) that
            represents it.
        name: who is ranked (:func:`ranked_name`): the candidate id, or an external
            library's family.
        chosen_by: ``recommended`` or ``fastest of N sets`` (how the set was chosen).
        metrics: one :class:`MetricRank` per metric, in :attr:`Ranking.lengths` order.
        mean_rank: the mean of its metric ranks.
        rank, low, high: its overall position (the rank of its mean rank) and that
            position's 95 % interval over the resamples.
    """

    candidate: str
    name: str
    label: str
    instance: str
    chosen_by: str
    metrics: tuple[MetricRank, ...]
    mean_rank: float
    rank: float
    low: float
    high: float


@dataclass(frozen=True)
class Ranking:
    """A ranking of one security target and one kind of build.

    Attributes:
        target: the security target in bits; ``digest_bits`` = 2 × target.
        build: ``reference`` or ``optimized``.
        lengths: the metrics' message lengths.
        entries: the candidates, best overall first.
        left_out: why a library of the target is not ranked (missing metric …).
    """

    target: int
    build: str
    lengths: tuple[int, ...]
    entries: tuple[Entry, ...]
    left_out: tuple[str, ...]

    @property
    def digest_bits(self) -> int:
        """The digest length it ranks."""
        return digest_bits(self.target)


def _eligible(records: Sequence[Record], target: int, build: str
              ) -> dict[str, dict[str, dict[int, Record]]]:
    """candidate → label → length → record, of the target's digests and the build."""
    if build not in BUILDS:
        raise ValueError("build %r: a ranking holds %s builds" % (build, " or ".join(BUILDS)))
    found: dict[str, dict[str, dict[int, Record]]] = {}
    for record in records:
        if record.candidate == _groups.BASELINE_CANDIDATE \
                or record.digest_bits != digest_bits(target) \
                or (_groups.optimized_build(record) is None) != (build == "reference"):
            continue
        found.setdefault(ranked_name(record), {}).setdefault(record.label, {})[
            record.message_bytes] = record
    return found


def _figure(record: Record) -> float:
    return float(record.statistics.figure.ticks or np.nan)


def representative(candidate: str, sets: Mapping[str, tuple[str, Sequence[float]]],
                   recommended: Mapping[str, str] = RECOMMENDED) -> tuple[str, str]:
    """The set that represents ``candidate`` of its eligible ``sets`` (name → its
    instance and its figure at each metric, in order), and how it was chosen: the one
    it recommends, else the fastest by mean rank among its own sets (the first on a
    tie)."""
    named = recommended.get(candidate)
    for name, (instance, _) in sets.items():
        if named is not None and instance == named:
            return name, "recommended"
    names = list(sets)
    if len(names) == 1:
        return names[0], "its only set"
    figures = np.array([list(sets[name][1]) for name in names], dtype=np.float64)
    return names[int(np.argmin(standings(figures)[1]))], "fastest of %d sets" % len(names)


def standings(figures: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rule on point figures (candidates × metrics): each metric's ranks (metrics ×
    candidates), each candidate's mean rank, and its overall rank (of the mean ranks)."""
    metric_ranks = positions(np.asarray(figures, dtype=np.float64).T)
    mean = metric_ranks.mean(axis=0)
    return metric_ranks, mean, positions(mean)


def _resampled(values: np.ndarray, seed: int) -> np.ndarray:
    """The figure of each bootstrap resample of one record's trial figures."""
    if len(values) < 2:
        return np.full(BOOTSTRAP_RESAMPLES, float(np.median(values)))
    return np.median(values[bootstrap_indices(len(values), seed=seed)], axis=1)


def _interval(ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The central 95 % of each candidate's ranks over the resamples (axis 0)."""
    tail = 50 * (1 - CONFIDENCE)
    return (np.percentile(ranks, tail, axis=0, method="lower"),
            np.percentile(ranks, 100 - tail, axis=0, method="higher"))


def _tied(records: Sequence[Record], names: Sequence[str]) -> list[tuple[str, ...]]:
    """For each record, the names of the others compare's test does not tell from it."""
    values = [trial_figures(record) for record in records]
    out = []
    for i, record in enumerate(records):
        out.append(tuple(
            names[j] for j, other in enumerate(records) if j != i and not _compare.compare(
                values[i], values[j], _compare.ALPHA, _compare.MARGIN,
                _figure(record) / _figure(other)).significant))
    return out


def rank(records: Sequence[Record], target: int = 512, build: str = "reference",
         recommended: Mapping[str, str] = RECOMMENDED) -> Ranking:
    """The ranking of ``records`` (one host's; the baselines among them give ×
    pseudoXOF) at a security target of ``target`` bits: the module docstring's rule.

    Raises:
        ValueError: records of several hosts (no rank is taken across hosts), or an
            unknown ``build``.
    """
    hosts = _groups.hosts(records)
    if len(hosts) > 1:
        raise ValueError("the records were measured on hosts %s; a ranking holds one "
                         "host's (choose one)" % ", ".join(str(h) for h in hosts))
    eligible = _eligible(records, target, build)
    lengths = tuple(n for n in METRIC_LENGTHS
                    if any(n in by_length for sets in eligible.values()
                           for by_length in sets.values()))
    left_out: list[str] = []
    chosen: list[tuple[str, str, str]] = []
    for candidate, sets in eligible.items():
        complete = {label: by_length for label, by_length in sets.items()
                    if all(n in by_length for n in lengths)}
        left_out += ["%s (%s): no record at %s" % (label, candidate, ", ".join(
            "%d B" % n for n in lengths if n not in by_length))
            for label, by_length in sets.items() if label not in complete]
        if complete:
            chosen.append((candidate, *representative(candidate, {
                label: (next(iter(by_length.values())).instance,
                        [_figure(by_length[n]) for n in lengths])
                for label, by_length in complete.items()}, recommended)))
    if not chosen or not lengths:
        return Ranking(target, build, lengths, (), tuple(left_out))
    grid = [[eligible[c][label][n] for n in lengths] for c, label, _ in chosen]
    names = [c for c, _, _ in chosen]
    point, mean_ranks, overall_point = standings(
        np.array([[_figure(r) for r in row] for row in grid]))  # point: metric × candidate
    resamples = np.stack([np.stack([
        _resampled(trial_figures(grid[c][m]), BOOTSTRAP_SEED + c * len(lengths) + m)
        for c in range(len(chosen))], axis=-1) for m in range(len(lengths))])
    resampled_ranks = positions(resamples)  # metric × resample × candidate
    overall_ranks = positions(resampled_ranks.mean(axis=0))
    overall_low, overall_high = _interval(overall_ranks)
    metric_bounds = [_interval(resampled_ranks[m]) for m in range(len(lengths))]
    ties = [_tied([grid[c][m] for c in range(len(chosen))], names) for m in range(len(lengths))]
    entries = []
    for c, (candidate, label, how) in enumerate(chosen):
        metrics = tuple(MetricRank(
            n, _figure(grid[c][m]), _groups.baseline_ratio(records, grid[c][m]),
            len(trial_figures(grid[c][m])), float(point[m, c]),
            float(metric_bounds[m][0][c]), float(metric_bounds[m][1][c]), ties[m][c])
            for m, n in enumerate(lengths))
        entries.append(Entry(grid[c][0].candidate, candidate, label, grid[c][0].instance,
                             how, metrics,
                             float(mean_ranks[c]), float(overall_point[c]),
                             float(overall_low[c]), float(overall_high[c])))
    entries.sort(key=lambda e: (e.rank, e.mean_rank, names.index(e.name)))
    return Ranking(target, build, lengths, tuple(entries), tuple(left_out))


def rank_text(value: float) -> str:
    """A rank as a page shows it: ``4``, ``2.5``."""
    return "%g" % value


def rank_with_interval(value: float, low: float, high: float) -> str:
    """``4 [3–6]``; ``4`` alone where every resample agrees."""
    if low == high == value:
        return rank_text(value)
    return "%s [%s–%s]" % (rank_text(value), rank_text(low), rank_text(high))


#: The columns of a ranking's rows before the per-metric ones.
ROW_COLUMNS = ("target_bits", "digest_bits", "build", "rank", "rank_low", "rank_high",
               "mean_rank", "candidate", "name", "label", "instance", "chosen_by")
#: The per-metric columns, each followed by ``_<message bytes>``.
METRIC_COLUMNS = ("figure", "x_pseudoXOF", "trials", "rank", "rank_low", "rank_high",
                  "tied_with")


def columns(lengths: Sequence[int]) -> list[str]:
    """The columns of :func:`rows` for metrics at ``lengths``."""
    return [*ROW_COLUMNS, *("%s_%d" % (name, n) for n in lengths for name in METRIC_COLUMNS)]


def rows(ranking: Ranking) -> list[dict[str, Any]]:
    """One flat row per candidate (best first): the columns of the data frame, the CSV
    and the JSON of a ranking."""
    out = []
    for entry in ranking.entries:
        row: dict[str, Any] = dict(zip(ROW_COLUMNS, (
            ranking.target, ranking.digest_bits, ranking.build, entry.rank, entry.low,
            entry.high, entry.mean_rank, entry.candidate, entry.name, entry.label,
            entry.instance,
            entry.chosen_by), strict=True))
        for metric in entry.metrics:
            row.update(("%s_%d" % (name, metric.message_bytes), value) for name, value in zip(
                METRIC_COLUMNS, (metric.figure, metric.x_pseudoxof, metric.trials,
                                 metric.rank, metric.low, metric.high,
                                 list(metric.tied_with)), strict=True))
        out.append(row)
    return out
