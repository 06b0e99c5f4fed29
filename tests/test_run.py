"""The run object's analysis side: tidy data frames that round-trip the raw counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _fakerun import LENGTHS, TRIALS, make_run

import ngcc
from ngcc.base.errors import ForeignRunDirError
from ngcc.evidence.run import Run

CALLS = 60


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return ngcc.load_run(make_run(tmp_path_factory.mktemp("run") / "run", calls=CALLS))


def test_trial_frame_is_one_row_per_instance_length_trial(run: Run) -> None:
    frame = run.to_dataframe()
    assert len(frame) == 3 * len(LENGTHS) * TRIALS
    assert not frame.duplicated(["instance", "message_bytes", "trial"]).any()
    assert list(frame.columns[:8]) == ["candidate", "instance", "label", "variant",
                                       "implementation", "digest_bits", "message_bytes",
                                       "trial"]
    row = frame[(frame.instance == "Pavelor-512") & (frame.message_bytes == 1024)
                & (frame.trial == 2)].iloc[0]
    trial = run.record("Pavelor-512", 1024).trials[2]
    assert row["loop_ticks"] == trial.loop_ticks and row["pid"] == trial.pid
    assert row["mean_cycles"] == trial.statistics.mean_cycles
    assert row["cycles_per_byte"] == trial.statistics.mean_cycles / 1024
    assert row["implementation"] == "" and row["label"] == "Pavelor-512"


def test_trial_frame_agrees_with_the_raw_counts(run: Run) -> None:
    frame = run.to_dataframe().set_index(["instance", "message_bytes", "trial"])
    for record in run.records:
        for index, cycles in enumerate(record.cycles()):
            row = frame.loc[(record.instance, record.message_bytes, index)]
            assert row["calls"] == len(cycles)
            assert row["mean_cycles"] == pytest.approx(cycles.astype(np.float64).mean(),
                                                       rel=1e-12)
            assert row["min_cycles"] == int(cycles.min())


def test_per_call_frame_round_trips_the_raw_counts(run: Run) -> None:
    calls = run.to_dataframe(per_call=True)
    assert calls["cycles"].dtype == np.uint64
    assert len(calls) == 3 * len(LENGTHS) * TRIALS * CALLS
    groups = calls.groupby(["instance", "message_bytes", "trial"], sort=False)
    for record in run.records:
        for index, cycles in enumerate(record.cycles()):
            part = groups.get_group((record.instance, record.message_bytes, index))
            assert list(part["call"]) == list(range(len(cycles)))
            np.testing.assert_array_equal(part["cycles"].to_numpy(), cycles)


def test_summary_frame(run: Run) -> None:
    summary = run.summary()
    assert len(summary) == len(run.records)
    row = summary[(summary.instance == "Pavelor-512") & (summary.message_bytes == 32)].iloc[0]
    stats = run.record("Pavelor-512", 32).statistics
    baseline = run.record("pseudoXOF-512", 32).statistics
    assert row["cpb_ci_low"] == pytest.approx(stats.mean_bootstrap_ci95_low_ticks / 32)  # >= 0
    assert row["pseudoxof_ratio"] == pytest.approx(stats.mean_cycles / baseline.mean_cycles)
    assert summary[summary.instance == "Pavelor-1024"]["pseudoxof_ratio"].isna().all()
    assert list(summary.kat_passed) == [True] * 3 + [False] * 3 + [True] * 3


def test_empty_run_frames(tmp_path: Path) -> None:
    run = ngcc.load_run(make_run(tmp_path / "run", calls=20))
    run.records = []
    assert len(run.to_dataframe()) == 0
    assert isinstance(run.to_dataframe(per_call=True), pd.DataFrame)
    assert len(run.summary()) == 0


def test_load_run_of_a_foreign_directory(tmp_path: Path) -> None:
    with pytest.raises(ForeignRunDirError, match="not an ngcc run directory"):
        ngcc.load_run(tmp_path)
