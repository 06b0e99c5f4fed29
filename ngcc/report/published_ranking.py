"""The run's ranking beside the published one (``ngcc compare RUN --published SYSTEM``).

The published ranking of a system and security target is the harness's rule
(:mod:`ngcc.stats.ranking`: one set per candidate, each metric ranked, overall the rank
of the mean metric rank) applied to the published mean cycles of every Round 1
instance of the target's digest length at 32 B, 1 KiB and 64 KiB; each published
instance is the candidate's through the shipped registry (``library.candidates``). The
run's is :func:`ngcc.stats.ranking.rank` of its reference builds (the published figures
are of reference builds). For the candidates both hold: each one's rank there (among the
whole published field) and here (with its interval), and Spearman's rank correlation of
the two orders (the Pearson correlation of their ranks among those candidates, ties
sharing the average position).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ngcc.base import format as _format
from ngcc.evidence.model import Record
from ngcc.library import candidates as _candidates
from ngcc.stats import ranking as _ranking


@dataclass(frozen=True)
class Standing:
    """One candidate both rankings hold: its set and rank here (with the rank's 95 %
    interval) and its set and rank in the published ranking."""

    candidate: str
    label: str
    rank: float
    low: float
    high: float
    published_instance: str
    published_rank: float


@dataclass(frozen=True)
class RankingBeside:
    """The run's ranking at one security target beside the published one.

    Attributes:
        target: the security target in bits.
        published_field: how many candidates the published ranking holds.
        ranked_here: how many the run's ranking holds.
        standings: the candidates both hold, in the run's order.
        correlation: Spearman's ρ of the two orders over ``standings`` (None for fewer
            than two, or where an order has no spread).
    """

    target: int
    published_field: int
    ranked_here: int
    standings: tuple[Standing, ...]
    correlation: float | None


def _instances() -> dict[str, tuple[str, int | None]]:
    """Every Round 1 instance's harness names → (candidate id, digest bits)."""
    found: dict[str, tuple[str, int | None]] = {}
    for candidate in _candidates.candidates():
        for instance in candidate.instances:
            for name in (instance.name, instance.manifest_folder):
                found[name] = (candidate.id, instance.digest_bits)
    return found


def published_standings(figures: Mapping[tuple[str, int], float], target: int
                        ) -> dict[str, tuple[str, float]]:
    """The published ranking at ``target`` bits from the published mean cycles by
    (instance, message bytes): candidate → (its set, its overall rank)."""
    bits = _ranking.digest_bits(target)
    sets: dict[str, dict[str, tuple[str, list[float]]]] = {}
    for name, (candidate, digest) in _instances().items():
        values = [figures.get((name, n)) for n in _ranking.METRIC_LENGTHS]
        if digest == bits and all(v is not None for v in values):
            sets.setdefault(candidate, {})[name] = (name, [float(v or 0) for v in values])
    chosen = {c: _ranking.representative(c, found)[0] for c, found in sets.items()}
    if not chosen:
        return {}
    names = list(chosen)
    _, _, overall = _ranking.standings(np.array([sets[c][chosen[c]][1] for c in names]))
    return {c: (chosen[c], float(overall[i])) for i, c in enumerate(names)}


def spearman(here: Sequence[float], there: Sequence[float]) -> float | None:
    """Spearman's ρ of two orders of the same candidates (None for fewer than two, or
    an order without spread)."""
    if len(here) < 2:
        return None
    a = _ranking.positions(np.asarray(here, dtype=np.float64))
    b = _ranking.positions(np.asarray(there, dtype=np.float64))
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return round(float(np.corrcoef(a, b)[0, 1]), 12)  # -1, not -0.9999999999999999


def rankings_beside(records: Sequence[Record], figures: Mapping[tuple[str, int], float]
                    ) -> tuple[list[RankingBeside], list[str]]:
    """The run's ranking at each security target of its records beside the published
    one, where both hold a candidate; and notes on what could not be set beside."""
    out, notes = [], []
    for target in _ranking.targets(records):
        try:
            here = _ranking.rank(records, target)
        except ValueError as exc:  # records of several hosts
            notes.append("no ranking beside the published one at %d-bit security: %s"
                         % (target, exc))
            continue
        there = published_standings(figures, target)
        both = [e for e in here.entries if e.candidate in there]
        if not both:
            continue
        standings = tuple(Standing(e.candidate, e.label, e.rank, e.low, e.high,
                                   *there[e.candidate]) for e in both)
        out.append(RankingBeside(target, len(there), len(here.entries), standings,
                                 spearman([s.rank for s in standings],
                                          [s.published_rank for s in standings])))
    return out, notes


COLUMNS = ("candidate", "set here", "rank here", "published set", "published rank")


def heading(beside: RankingBeside, system: str) -> str:
    """The line above a ranking beside the published one."""
    rho = "%.2f" % beside.correlation if beside.correlation is not None else _format.MISSING
    return ("ranking at %d-bit security beside the published one on %s (%d candidates "
            "ranked there, %d here): Spearman's rank correlation over the %d both hold: %s"
            % (beside.target, system, beside.published_field, beside.ranked_here,
               len(beside.standings), rho))


def table_rows(beside: RankingBeside) -> list[list[str]]:
    """One row per candidate both hold."""
    return [[s.candidate, s.label, _ranking.rank_with_interval(s.rank, s.low, s.high),
             s.published_instance, "%s of %d" % (_ranking.rank_text(s.published_rank),
                                                 beside.published_field)]
            for s in beside.standings]


def as_json(beside: RankingBeside) -> dict[str, Any]:
    """A ranking beside the published one as JSON."""
    return {"target_bits": beside.target, "published_field": beside.published_field,
            "ranked_here": beside.ranked_here, "spearman": beside.correlation,
            "candidates": [{"candidate": s.candidate, "label": s.label, "rank": s.rank,
                            "rank_low": s.low, "rank_high": s.high,
                            "published_instance": s.published_instance,
                            "published_rank": s.published_rank} for s in beside.standings]}
