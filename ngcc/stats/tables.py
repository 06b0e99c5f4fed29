"""pandas views of a run: tidy tables for analysis in Jupyter and for the plots.

Three shapes, all "tidy" (one observation per row, one variable per column):

* :func:`trial_frame`: one row per library × message length × trial, with the
  trial's facts and statistics as the record stores them;
* :func:`call_frame`: one row per timed call (the raw counts, in call order);
* :func:`summary_frame`: one row per library × message length, with the aggregate
  statistics, the leading figure per call and per byte with its confidence interval and
  the ratio to pseudoXOF.

Nothing is recomputed here: the numbers are those of the records and raw files, and
the columns are the evidence model's field names; ``cycles_per_byte`` is the leading
figure's (``evidence.figures.lead``) in every frame, whatever version wrote the record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ngcc.evidence import figures as _figures
from ngcc.evidence.model import Record, Statistics, Trial, TrialStatistics
from ngcc.stats.groups import baseline_ratio, host

if TYPE_CHECKING:
    from ngcc.evidence.run import RunRecord

#: The columns that say which job a row belongs to, and which implementation it timed.
KEY_COLUMNS = ("candidate", "instance", "label", "variant", "implementation", "digest_bits",
               "message_bytes")
#: A trial row: the trial's facts, then its statistics (``trial`` is its index).
TRIAL_FACTS = tuple(f.name for f in fields(Trial) if f.name not in ("index", "statistics"))
TRIAL_STATISTICS = tuple(f.name for f in fields(TrialStatistics))
SUMMARY_COLUMNS = tuple(f.name for f in fields(Statistics) if f.name != "flags")


def _keys(record: Record) -> dict[str, Any]:
    return {"candidate": record.candidate, "instance": record.instance, "label": record.label,
            "variant": record.implementation.variant,
            "implementation": record.implementation.description,
            "digest_bits": record.digest_bits, "message_bytes": record.message_bytes}


def _trial_row(record: Record, trial: Trial) -> dict[str, Any]:
    left_out = record.statistics.left_out_trials or ()
    return {"trial": trial.index, **{name: getattr(trial, name) for name in TRIAL_FACTS},
            **{name: getattr(trial.statistics, name) for name in TRIAL_STATISTICS},
            "left_out": trial.index in left_out,
            "cycles_per_byte": _trial_figure(record, trial) / record.message_bytes}


def _trial_figure(record: Record, trial: Trial) -> float:
    """The trial's own value of the figure its job leads with."""
    if record.statistics.figure.figure is _figures.CPU_TIME:
        return trial.statistics.cpu_time_ticks or float("nan")
    return trial.statistics.mean_cycles


def trial_frame(records: Sequence[Record]) -> pd.DataFrame:
    """One row per library × message length × trial (``trial`` counts from 0), with
    ``left_out`` (a trial of the slow speed state, outside the job's figure) and
    ``cycles_per_byte`` (the trial's value of the figure its job leads with)."""
    rows = [{**_keys(record), **_trial_row(record, trial)}
            for record in records for trial in record.trials]
    return pd.DataFrame(rows, columns=[*KEY_COLUMNS, "trial", *TRIAL_FACTS,
                                       *TRIAL_STATISTICS, "left_out", "cycles_per_byte"])


def call_frame(records: Sequence[RunRecord]) -> pd.DataFrame:
    """One row per timed call: the raw per-call cycle counts (uint64), in call order.

    ``call`` counts from 0 within its trial. Loading verifies each raw file against
    the sha256 in its record.
    """
    parts = []
    for record in records:
        keys = _keys(record)
        for trial, cycles in enumerate(record.cycles()):
            part = pd.DataFrame({"trial": np.full(len(cycles), trial, dtype=np.int64),
                                 "call": np.arange(len(cycles), dtype=np.int64),
                                 "cycles": np.asarray(cycles, dtype=np.uint64)})
            for name, value in reversed(keys.items()):
                part.insert(0, name, value)
            parts.append(part)
    if not parts:
        return pd.DataFrame(columns=[*KEY_COLUMNS, "trial", "call", "cycles"])
    return pd.concat(parts, ignore_index=True)


def summary_frame(records: Sequence[Record]) -> pd.DataFrame:
    """One row per library × message length: aggregate statistics of each record.

    Adds the leading figure (``figure``: its name, ``figure_ticks``: per call, and
    ``cycles_per_byte`` and ``mb_per_s`` of it, whatever version wrote the record),
    ``cpb_ci_low``/``cpb_ci_high`` (its 95 % CI in cycles/byte), ``kat_verdict``,
    ``kat_passed`` (false when timed without a KAT pass) and ``pseudoxof_ratio``, and
    after the keys ``host`` when any record names the host it was measured on.
    """
    rows = []
    for record in records:
        stats, lead, n = record.statistics, record.statistics.figure, record.message_bytes
        row = {**_keys(record), **{name: getattr(stats, name) for name in SUMMARY_COLUMNS}}
        row.update(figure=lead.name, figure_ticks=lead.ticks,
                   cycles_per_byte=lead.per_byte(n), mb_per_s=lead.megabytes_per_second(n),
                   cpb_ci_low=lead.ci_low / n if lead.ci_low is not None else lead.per_byte(n),
                   cpb_ci_high=lead.ci_high / n if lead.ci_high is not None
                   else lead.per_byte(n),
                   kat_verdict=record.kat.verdict, kat_passed=not record.kat.timed_without_pass,
                   pseudoxof_ratio=baseline_ratio(records, record))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*KEY_COLUMNS, *SUMMARY_COLUMNS, "figure",
                                        "figure_ticks", "kat_verdict", "kat_passed",
                                        "pseudoxof_ratio", "cpb_ci_low", "cpb_ci_high"])
    hosts = [host(record) for record in records]
    if any(hosts):  # a run measured by workers: which host each row is of
        frame.insert(len(KEY_COLUMNS), "host", hosts)
    return frame


def ranking_frame(records: Sequence[Record], target: int = 512, build: str = "reference",
                  host_name: str | None = None) -> pd.DataFrame:
    """One row per candidate of the ranking at a security target of ``target`` bits
    (:func:`ngcc.stats.ranking.rank`), best first: its overall rank with its interval,
    its mean rank, the set that represents it, and per metric length ``n`` the figure
    (``figure_n``), ``x_pseudoXOF_n``, ``trials_n``, ``rank_n`` with ``rank_low_n`` and
    ``rank_high_n``, and ``tied_with_n``. ``host_name`` picks one host's records in a
    run measured on several.

    Raises:
        ValueError: records of several hosts and no ``host_name``, or an unknown build.
    """
    from ngcc.stats import ranking as _ranking

    if host_name is not None:
        records = [record for record in records if host(record) == host_name]
    found = _ranking.rank(records, target, build)
    return pd.DataFrame(_ranking.rows(found), columns=_ranking.columns(found.lengths))
