"""pandas views of a run: tidy tables for analysis in Jupyter and for the plots.

Three shapes, all "tidy" (one observation per row, one variable per column):

* :func:`trial_frame`: one row per instance × message length × trial, with the
  trial's own statistics as the record stores them;
* :func:`call_frame`: one row per timed call (the raw counts, in call order);
* :func:`summary_frame`: one row per instance × message length, with the aggregate
  statistics, cycles/byte with its confidence interval and the ratio to pseudoXOF.

Nothing is recomputed here: the numbers are those of the records and raw files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ngcc._records import Record

if TYPE_CHECKING:
    from ngcc._run import Run

TRIAL_FIELDS = ("calls", "warmup_calls", "total_cycles", "total_seconds",
                "counter_rate_ratio", "mean_cycles", "median_cycles", "min_cycles",
                "p5_cycles", "p95_cycles", "stdev_cycles", "overhead_cycles",
                "baseline_rss_kib", "peak_rss_kib", "cpu", "pid", "started")
SUMMARY_FIELDS = ("trials", "calls", "mean_cycles", "median_cycles", "min_cycles",
                  "p5_cycles", "p95_cycles", "stdev_cycles", "median_of_trial_means_cycles",
                  "ci95_low_cycles", "ci95_high_cycles", "ci95_relative", "cycles_per_byte",
                  "mean_seconds", "mb_per_s")


def _keys(record: Record) -> dict[str, Any]:
    return {"candidate": record.candidate, "instance": record.instance,
            "variant": str(record.data.get("variant", "ref")),
            "digest_bits": record.data.get("digest_bits"),
            "message_bytes": record.message_bytes}


def trial_frame(records: Sequence[Record]) -> pd.DataFrame:
    """One row per instance × message length × trial (``trial`` counts from 0)."""
    rows = [{**_keys(record), "trial": int(trial.get("index", index)),
             **{name: trial.get(name) for name in TRIAL_FIELDS}}
            for record in records for index, trial in enumerate(record.trials)]
    frame = pd.DataFrame(rows, columns=[*_keys_columns(), "trial", *TRIAL_FIELDS])
    frame["cycles_per_byte"] = frame["mean_cycles"] / frame["message_bytes"]
    return frame


def call_frame(records: Sequence[Record]) -> pd.DataFrame:
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
        return pd.DataFrame(columns=[*_keys_columns(), "trial", "call", "cycles"])
    return pd.concat(parts, ignore_index=True)


def summary_frame(run: Run) -> pd.DataFrame:
    """One row per instance × message length: aggregate statistics of each record.

    Adds ``cpb_ci_low``/``cpb_ci_high`` (the 95 % CI in cycles/byte), ``kat_verdict``,
    ``kat_passed`` (false when timed without a KAT pass) and ``pseudoxof_ratio``.
    """
    from ngcc._report import baseline_ratio

    rows = []
    for record in run.records:
        stats = record.statistics
        row = {**_keys(record), **{name: stats.get(name) for name in SUMMARY_FIELDS}}
        row["kat_verdict"] = record.kat_verdict
        row["kat_passed"] = not record.timed_without_pass
        row["pseudoxof_ratio"] = baseline_ratio(run, record)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*_keys_columns(), *SUMMARY_FIELDS, "kat_verdict",
                                        "kat_passed", "pseudoxof_ratio"])
    for bound in ("low", "high"):
        cycles = pd.to_numeric(frame[f"ci95_{bound}_cycles"], errors="coerce")
        frame[f"cpb_ci_{bound}"] = (cycles / frame["message_bytes"]).fillna(
            frame["cycles_per_byte"])
    return frame


def _keys_columns() -> list[str]:
    return ["candidate", "instance", "variant", "digest_bits", "message_bytes"]
