"""``ngcc compare`` on synthetic runs with known answers: pairing, lengths, progress,
corrupt records, hosts, units, the DataFrame and the command line's formats.

The runs are written by a real campaign (plan, KAT gate stand-in, records, statistics)
whose trial runner draws each trial's per-call cycles around a known centre: the
library's base cost × its scale × a per-trial lognormal wobble (seeded), so the true
ratio of two runs is known.
"""

from __future__ import annotations

import csv
import io
import json
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from _fakes import ENVIRONMENT, FakeKat, fixed_host

import ngcc
from ngcc.base.errors import (
    ChildError,
    CorruptRecordError,
    InvalidNameError,
    NothingToCompareError,
    UnitMismatchError,
    UnknownLabelError,
)
from ngcc.cli import main as _cli
from ngcc.evidence.model import TrialMeasurement
from ngcc.measure import host as _host
from ngcc.measure import locks as _locks
from ngcc.report import compare as _compare_runs
from ngcc.stats import compare as _compare
from ngcc.stats import pairing as _pairing
from ngcc.stats import sides as _sides

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")

LENGTHS = [32, 1024]
TRIALS = 6
#: Another host than the fakes' ENVIRONMENT.
OTHER_HOST = replace(ENVIRONMENT, cpu_model="Other CPU 9000", kernel="6.12.0",
                     cpu_max_mhz=3500.0)


class ScaledRunner:
    """Trials whose per-call cycles centre on base × scale × a per-trial wobble.

    Args:
        scale: by instance key (``WChain-V1-512:opt``) or name (``Wish512``), default 1.
        spread: the per-trial wobble (sd of its logarithm).
        seed: changes every draw (two runs of one library with different seeds are two
            independent measurements of the same truth).
        ticks_per_cycle: counter ticks per core cycle; the counts are ticks.
        report_conversion: report core cycles per tick (the C driver's estimate).
        unit, frequency_hz: the counter's.
        fail: (instance key or name, length, trial) → exception instead of a trial.
        load: the 1-minute load average each trial reports.
        cpu_time: each trial also reports an uninstrumented batch and its thread's CPU
            time, so its records lead with the CPU-time figure.
        slow: (name, length, trial) → that trial runs this much slower (a host's slow
            speed state).
    """

    def __init__(self, scale=None, spread=0.004, seed=0, ticks_per_cycle=1.0,
                 report_conversion=False, unit="tsc-ticks", frequency_hz=2.1e9, fail=None,
                 load=0.01, cpu_time=False, slow=None):
        self.cpu_time, self.slow = cpu_time, dict(slow or {})
        self.scale = dict(scale or {})
        self.spread, self.seed = spread, seed
        self.ticks_per_cycle, self.report_conversion = ticks_per_cycle, report_conversion
        self.unit, self.frequency_hz = unit, frequency_hz
        self.fail = dict(fail or {})
        self.load = load

    @staticmethod
    def base_cycles(name: str, message_bytes: int) -> float:
        return 900.0 + 30.0 * (zlib.crc32(name.encode()) % 5 + 1) * message_bytes

    def centre(self, instance, message_bytes: int) -> float:
        scale = self.scale.get(instance.key, self.scale.get(instance.name, 1.0))
        return self.base_cycles(instance.name, message_bytes) * scale

    def cold_call(self, instance, message_bytes, cpu, timeout):
        return self.centre(instance, message_bytes) / self.frequency_hz

    def trial(self, instance, message_bytes, calls, warmup, cpu, index, timeout):
        error = self.fail.get((instance.key, message_bytes, index),
                              self.fail.get((instance.name, message_bytes, index)))
        if error is not None:
            raise error
        rng = np.random.default_rng(zlib.crc32(("%s/%d/%d/%d" % (
            instance.key, message_bytes, index, self.seed)).encode()))
        core = self.centre(instance, message_bytes) * rng.lognormal(0.0, self.spread)
        core *= self.slow.get((instance.name, message_bytes, index), 1.0)
        ticks = core * self.ticks_per_cycle
        cycles = np.rint(rng.gamma(2500, ticks / 2500, calls)).astype(np.uint64)
        loop_ticks = int(cycles.sum()) + 30 * calls
        batch = {}
        if self.cpu_time:
            batch_ticks = int(cycles.sum())
            batch_ns = round(batch_ticks / self.frequency_hz * 1e9)
            batch = dict(batch_calls=calls, batch_ticks=batch_ticks, batch_ns=batch_ns,
                         batch_thread_cpu_ns=batch_ns,
                         thread_cpu_ns=round(loop_ticks / self.frequency_hz * 1e9))
        return TrialMeasurement(
            pid=50000 + index, cpu=cpu, cycles=cycles, loop_ticks=loop_ticks,
            loop_ns=round(loop_ticks / self.frequency_hz * 1e9), counter="rdtsc",
            unit=self.unit, frequency_hz=self.frequency_hz, overhead_min_ticks=24,
            overhead_median_ticks=26, baseline_rss_kib=1600, peak_rss_kib=1700,
            load_average=(self.load, 0.02, 0.03),
            core_cycles_per_tick=1 / self.ticks_per_cycle if self.report_conversion else None,
            **batch)


def build_run(run_dir, monkeypatch, instances=("Wish512", "SM3"), runner=None,
              environment=None, lengths=LENGTHS, trials=TRIALS, labels=()):
    """A campaign run by ``runner`` on a fixed host (``environment``, default the fakes')."""
    host = environment or ENVIRONMENT
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: replace(
        host, cpu=_locks.default_cpu() if cpu is None else cpu))
    return ngcc.Campaign(list(instances), run_dir=run_dir, labels=labels,
                         runner=runner or ScaledRunner(), kat_checker=FakeKat(), quick=True,
                         trials=trials, trial_target=0.002, lengths=lengths,
                         progress=False).run()


@pytest.fixture
def make_run(tmp_path, monkeypatch):
    """make_run(name, instances=..., runner=..., environment=..., lengths=...) → Run."""
    fixed_host(monkeypatch)
    return lambda name, **settings: build_run(tmp_path / name, monkeypatch, **settings)


def rows_of(result, label_a, label_b=None):
    return [row for row in result.rows
            if (row.pair.label_a, row.pair.label_b) == (label_a, label_b or label_a)]


# ------------------------------------------------------------------ known answers

def test_a_ten_percent_slower_run_is_significant_at_every_length(make_run):
    a = make_run("a", runner=ScaledRunner(seed=1))
    b = make_run("b", runner=ScaledRunner(scale={"Wish512": 1.10}, seed=2))
    result = _compare_runs.compare_runs(a, b)
    wish = rows_of(result, "Wish512")
    assert [row.message_bytes for row in wish] == LENGTHS
    for row in wish:
        c = row.comparison
        assert c.significant and c.words.endswith("× faster")    # A is the quicker one
        assert c.ratio == pytest.approx(1 / 1.10, rel=0.02)
        assert c.ci_low < 1 / 1.10 < c.ci_high
        assert (row.trials_a, row.trials_b, row.unit) == (TRIALS, TRIALS, "tsc-ticks")
        assert row.figure_a / row.figure_b == pytest.approx(c.ratio)
    summary = {s.pair.label_a: s for s in result.summaries}
    assert summary["Wish512"].comparison.words.endswith("× faster")
    assert summary["Wish512"].lengths == tuple(LENGTHS)
    # the same library measured twice with the same truth: the ratio is about 1
    for row in rows_of(result, "SM3"):
        assert row.comparison.ratio == pytest.approx(1.0, abs=0.02)
    assert result.notes == ()


def test_a_run_against_itself_is_exactly_one_and_not_significant(make_run):
    run = make_run("a")
    result = _compare_runs.compare_runs(run, run)
    for row in result.rows:
        assert (row.comparison.ratio, row.comparison.p_value) == (1.0, 1.0)
        assert row.comparison.words == "not significant"


def test_a_difference_within_the_margin_is_not_significant(make_run):
    # 3 % slower: p is tiny with these quiet fake trials, but two runs of the same code
    # on a busy host differ by that much, so the verdict says "within 5 %"
    a = make_run("a", runner=ScaledRunner(seed=1))
    b = make_run("b", runner=ScaledRunner(scale={"Wish512": 1.03}, seed=2))
    result = _compare_runs.compare_runs(a, b)
    for row in rows_of(result, "Wish512"):
        assert row.comparison.p_value < 0.05 and not row.comparison.significant
        assert row.comparison.words == "within 5 %"
    assert not {s.pair.label_a: s for s in result.summaries}["Wish512"].comparison.significant
    # with no margin, the same ratio is called
    unguarded = _compare.compare([100.0, 101, 99, 100], [103.0, 104, 102, 103])
    assert unguarded.significant and unguarded.words == "1.03× faster"


def test_a_host_running_at_several_speeds_widens_the_margin(make_run):
    # One trial of run A ran 1.6x slow (the host's slow speed state): a whole run could
    # have, so a 1.3x difference between the runs is not called, and a note says why
    b = make_run("b", runner=ScaledRunner(scale={"Wish512": 1.3}, seed=2, cpu_time=True))
    a = make_run("a", runner=ScaledRunner(seed=1, cpu_time=True,
                                          slow={("Wish512", 32, 0): 1.6}))
    result = _compare_runs.compare_runs(a, b)
    assert result.margin == pytest.approx(0.6, abs=0.03)
    for row in rows_of(result, "Wish512"):
        assert row.comparison.p_value < 0.05 and not row.comparison.significant
        assert row.comparison.words.startswith("within 6")
    assert [note for note in result.notes if "several speeds" in note and
            "Wish512's trials at 32 B" in note]
    assert "beyond ±6" in _compare_runs.method_text(result)
    # the same difference between runs whose trials kept one speed is called
    quiet = _compare_runs.compare_runs(make_run("c", runner=ScaledRunner(seed=1, cpu_time=True)), b)
    assert quiet.margin == _compare.MARGIN
    assert all(row.comparison.significant for row in rows_of(quiet, "Wish512"))
    assert not [note for note in quiet.notes if "several speeds" in note]


def test_the_statistic_picks_the_per_trial_figure(make_run):
    a, b = make_run("a", runner=ScaledRunner(seed=1)), make_run("b", runner=ScaledRunner(seed=2))
    for statistic in ("median", "mean"):
        row = rows_of(_compare_runs.compare_runs(a, b, statistic=statistic), "SM3")[0]
        figures = [getattr(t.statistics, statistic + "_cycles")
                   for t in a.record("SM3", 32).trials]
        assert row.figure_a == pytest.approx(float(np.exp(np.mean(np.log(figures)))))
    with pytest.raises(ValueError, match="statistic 'p99'"):
        _compare_runs.compare_runs(a, b, statistic="p99")


def test_two_labels_of_one_run(make_run):
    run = make_run("a", instances=("WChain-V1-512", "WChain-V1-512:opt"),
                   runner=ScaledRunner(scale={"WChain-V1-512:opt": 0.5}))
    result = _compare_runs.compare_runs(run, pairs=["WChain-V1-512@opt=WChain-V1-512"])
    assert {row.pair for row in result.rows} == {
        _pairing.Pair("WChain-V1-512@opt", "WChain-V1-512")}
    assert all(row.comparison.words == "2.00× faster" for row in result.rows)
    assert result.run_a == result.run_b == str(run.path)


def test_explicit_pairs_across_runs_and_a_bare_label(make_run):
    a = make_run("a", instances=("Wish512",), labels=("Wish512-theirs",))
    b = make_run("b")
    result = _compare_runs.compare_runs(a, b, pairs=["Wish512-theirs=Wish512"])
    assert {str(row.pair) for row in result.rows} == {"Wish512-theirs=Wish512"}
    with pytest.raises(NothingToCompareError, match="no library label in common"):
        _compare_runs.compare_runs(a, b)
    only_sm3 = _compare_runs.compare_runs(make_run("c"), b, pairs=["SM3"])
    assert {str(row.pair) for row in only_sm3.rows} == {"SM3"}


# ------------------------------------------------------------------ bad input

def test_unknown_label_names_the_run_and_its_labels(make_run):
    run = make_run("a")
    with pytest.raises(UnknownLabelError, match=r"'Wish51' in run A .*Wish512, SM3\. "
                                                r"Did you mean Wish512\?"):
        _compare_runs.compare_runs(run, run, pairs=["Wish51"])
    with pytest.raises(UnknownLabelError, match="'SM4' in run B"):
        _compare_runs.compare_runs(run, run, pairs=["SM3=SM4"])
    with pytest.raises(InvalidNameError):
        _compare_runs.compare_runs(run, run, pairs=["=SM3"])


def test_one_run_needs_pairs(make_run):
    run = make_run("a")
    with pytest.raises(NothingToCompareError, match="--instance A=B"):
        _compare_runs.compare_runs(run)


def test_mismatched_lengths_compare_what_is_common_and_list_the_rest(make_run):
    a = make_run("a", lengths=[32, 1024])
    b = make_run("b", lengths=[1024, 4096])
    result = _compare_runs.compare_runs(a, b, pairs=["SM3"])
    assert [row.message_bytes for row in result.rows] == [1024]
    assert result.notes == ("SM3: not compared at 32 B (not planned in B); "
                            "4096 B (not planned in A)",)
    with pytest.raises(NothingToCompareError, match="not planned in B"):
        _compare_runs.compare_runs(make_run("c", lengths=[64]), make_run("d", lengths=[128]))


def test_a_run_in_progress_lists_its_unfinished_jobs_and_skips_them(make_run):
    a = make_run("a")
    # the trials are interleaved: stopped in the last round, the other three jobs are done
    runner = ScaledRunner(fail={("SM3", 1024, TRIALS - 1): KeyboardInterrupt()})
    with pytest.raises(KeyboardInterrupt):
        make_run("b", runner=runner)
    b = ngcc.load_run(a.path.parent / "b")
    assert not b.complete
    result = _compare_runs.compare_runs(a, b)
    assert {(str(row.pair), row.message_bytes) for row in result.rows} == {
        ("Wish512", 32), ("Wish512", 1024), ("SM3", 32)}
    assert result.notes[0].startswith("run B (%s) is still in progress: 1 of 4 jobs "
                                      "pending" % b.path)
    assert "SM3: not compared at 1024 B (pending in B)" in result.notes


def test_failed_jobs_are_listed_with_their_status(make_run):
    a = make_run("a")
    b = make_run("b", runner=ScaledRunner(fail={
        ("Wish512", 32, 1): ChildError("crash", "Wish512 at 32 B: SIGSEGV in trial 1")}))
    result = _compare_runs.compare_runs(a, b)
    assert "Wish512: not compared at 32 B (crash in B)" in result.notes
    assert len(result.rows) == 3


def test_a_corrupt_record_is_named_by_the_evidence_layer(make_run, capsys):
    a = make_run("a")
    b = make_run("b")
    record = b.path / b.record("SM3", 32).relpath
    record.write_text(record.read_text()[:-40])
    with pytest.raises(CorruptRecordError, match=r"SM3__hash_32\.json"):
        ngcc.load_run(b.path)
    assert _cli.main(["compare", str(a.path), str(b.path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ngcc: error: corrupt evidence file") and "SM3__hash_32" in err
    assert len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------ hosts and units

def test_different_hosts_are_compared_and_named(make_run):
    a = make_run("a")
    b = make_run("b", environment=OTHER_HOST)
    result = _compare_runs.compare_runs(a, b)
    frame = result.to_frame()
    assert len(result.rows) == 4
    assert not frame["same_host"][frame["message_bytes"].notna()].any()
    note = result.notes[0]
    assert note.startswith("different hosts (every row)")
    for text in ("CPU model: Fake CPU vs Other CPU 9000", "kernel: 6.1.0 vs 6.12.0",
                 "max frequency (MHz): 2100.0 vs 3500.0"):
        assert text in note


def test_a_busy_host_is_noted_with_its_load(make_run):
    a = make_run("a")
    b = make_run("b", runner=ScaledRunner(load=3.0))
    notes = _compare_runs.compare_runs(a, b).notes
    assert notes == ("busy host: the 1-minute load average reached 0.01 during A's trials "
                     "and 3.00 during B's (above 0.5): other work lands in the figures, and "
                     "in each side's at another time, so a significant ratio may be the "
                     "load's; measure on an idle host (`ngcc check`)",)


def test_host_differences_ignore_calibration_noise_and_software():
    same = replace(ENVIRONMENT, python="3.12.1", load_average_start=(3.0, 2.0, 1.0),
                   counter=replace(ENVIRONMENT.counter, frequency_hz=2.1e9 * 1.004))
    assert _sides.host_differences(ENVIRONMENT, same) == ()
    faster = replace(ENVIRONMENT, counter=replace(ENVIRONMENT.counter, frequency_hz=3.0e9))
    assert _sides.host_differences(ENVIRONMENT, faster) == (
        "counter rate: 2.1 GHz vs 3 GHz",)


def test_ticks_of_another_rate_without_conversion_are_refused(make_run):
    a = make_run("a")
    b = make_run("b", runner=ScaledRunner(frequency_hz=3.0e9), environment=OTHER_HOST)
    with pytest.raises(UnitMismatchError, match=r"A is in tsc-ticks at 2.1 GHz, B in "
                                                r"tsc-ticks at 3 GHz.*which A and B lack"):
        _compare_runs.compare_runs(a, b)


def test_other_units_are_converted_to_core_cycles_when_both_sides_carry_the_estimate(
        make_run):
    # True core cycles: B's Wish512 takes 10 % more. A counts 1.25 ticks per core cycle
    # at 2.1 GHz, B 0.8 at 3 GHz: in ticks B would look 0.70× of A, in core cycles 1.10×.
    a = make_run("a", runner=ScaledRunner(ticks_per_cycle=1.25, report_conversion=True))
    b = make_run("b", runner=ScaledRunner(scale={"Wish512": 1.10}, ticks_per_cycle=0.8,
                                          report_conversion=True, frequency_hz=3.0e9),
                 environment=OTHER_HOST)
    result = _compare_runs.compare_runs(a, b)
    for row in rows_of(result, "Wish512"):
        assert row.unit == "core-cycles"
        assert row.comparison.ci_low < 1 / 1.10 < row.comparison.ci_high
        assert row.comparison.words == "1.10× faster"
    assert any("compared in core cycles" in note and "B in tsc-ticks at 3 GHz" in note
               for note in result.notes)


def test_one_side_without_the_estimate_is_refused_naming_it(make_run):
    a = make_run("a", runner=ScaledRunner(unit="ns", frequency_hz=1e9))
    b = make_run("b", runner=ScaledRunner(report_conversion=True))
    with pytest.raises(UnitMismatchError, match=r"A is in ns, B in tsc-ticks at 2.1 GHz.*"
                                                r"which A lacks"):
        _compare_runs.compare_runs(a, b)


# ------------------------------------------------------------------ Python and CLI

def test_run_compare_returns_the_frame(two_runs):
    a, b = two_runs
    frame = a.compare(b)
    assert tuple(frame.columns) == _pairing.COLUMNS
    per_length = frame[frame["message_bytes"].notna()]
    summary = frame[frame["message_bytes"].isna()]
    assert len(per_length) == 4 and list(summary["label_a"]) == ["Wish512", "SM3"]
    wish = per_length[per_length["label_a"] == "Wish512"]
    assert all(words.endswith("× faster") for words in wish["verdict"])
    assert np.allclose(wish["ratio"], wish["figure_a"] / wish["figure_b"], rtol=1e-12)
    assert frame.attrs["statistic"] == "figure"
    assert frame.attrs["notes"][0].startswith("different hosts")
    inside = a.compare(instances=["Wish512=SM3"], statistic="mean", alpha=0.01)
    assert set(inside["label_b"]) == {"SM3"} and inside.attrs["alpha"] == 0.01


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Run A, and run B on another host with Wish512 10 % slower (shared by the CLI tests)."""
    folder = tmp_path_factory.mktemp("two-runs")
    with pytest.MonkeyPatch.context() as monkeypatch:
        a = build_run(folder / "a", monkeypatch, runner=ScaledRunner(seed=1))
        b = build_run(folder / "b", monkeypatch, environment=OTHER_HOST,
                      runner=ScaledRunner(scale={"Wish512": 1.10}, seed=2))
    return a, b


def test_cli_table(two_runs, capsys):
    a, b = two_runs
    assert _cli.main(["compare", str(a.path), str(b.path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[:2] == ["A: %s" % a.path, "B: %s" % b.path]
    header = lines[3]
    assert header.split()[:4] == ["pair", "length", "A", "(ticks)"]
    for column in ("B (ticks)", "A/B", "95 % CI", "p", "verdict"):
        assert column in header
    assert sum("× faster" in line for line in lines) == 3   # 2 lengths + summary
    # the notes after the tables, wrapped: every line within 100 columns
    assert lines.index("geometric mean over lengths") < next(
        i for i, line in enumerate(lines) if line.startswith("note: different hosts (every row)"))
    assert max(len(line) for line in lines) <= 100


def test_cli_wide_table_names_each_side_the_figure_and_the_trials(two_runs, capsys):
    a, b = two_runs
    assert _cli.main(["compare", str(a.path), str(b.path), "--wide"]) == 0
    header = capsys.readouterr().out.splitlines()[3]
    assert header.split()[:3] == ["A", "B", "length"]
    for column in ("leading figure A (ticks)", "leading figure B (ticks)", "trials"):
        assert column in header


def test_cli_markdown(two_runs, capsys):
    a, b = two_runs
    assert _cli.main(["compare", str(a.path), str(b.path), "--format", "markdown",
                      "--alpha", "0.01"]) == 0
    out = capsys.readouterr().out
    tables = [line for line in out.splitlines() if line.startswith("|")]
    assert tables[0].startswith("| A | B | length |") and "99 % CI" in tables[0]
    assert len(tables) == 2 + 4 + 2 + 2        # head, rule, rows; head, rule, summaries
    assert "- different hosts" in out


def test_cli_csv_keeps_notes_off_stdout(two_runs, capsys):
    a, b = two_runs
    assert _cli.main(["compare", str(a.path), str(b.path), "--format", "csv",
                      "--statistic", "mean"]) == 0
    captured = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(captured.out)))
    assert tuple(rows[0]) == _pairing.COLUMNS and len(rows) == 6
    assert {row["statistic"] for row in rows} == {"mean"}
    wish = [row for row in rows if row["label_a"] == "Wish512"]
    assert [row["message_bytes"] for row in wish] == ["32", "1024", ""]
    assert float(wish[0]["figure_a"]) / float(wish[0]["figure_b"]) == pytest.approx(
        float(wish[0]["ratio"]))
    assert captured.err.startswith("ngcc: note: different hosts")


def test_cli_json_within_one_run(two_runs, capsys):
    a, _ = two_runs
    assert _cli.main(["compare", str(a.path), "--instance", "Wish512=SM3",
                      "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["run_a"] == data["run_b"] == str(a.path)
    assert [row["message_bytes"] for row in data["rows"]] == LENGTHS
    assert data["summary"][0]["message_bytes"] == LENGTHS
    assert set(data["rows"][0]) >= {"figure_a", "ratio", "ci_low", "p_value", "df",
                                    "verdict", "host_differences"}


@pytest.mark.parametrize(("argv", "message"), [
    (["--alpha", "1.5"], "strictly between 0 and 1"),
    (["--alpha", "x"], "not a number"),
    (["--statistic", "p99"], "invalid choice"),
    (["--format", "xml"], "invalid choice"),
])
def test_cli_usage_errors(two_runs, capsys, argv, message):
    a, b = two_runs
    assert _cli.main(["compare", str(a.path), str(b.path), *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["{missing}"], "missing does not exist; give the directory a campaign wrote"),
    (["{b}", "--instance", "Nope"], "no library labelled 'Nope' in run A"),
    ([], "one run: name the libraries to compare with --instance A=B"),
])
def test_cli_runtime_errors_are_one_line(two_runs, tmp_path, capsys, argv, message):
    a, b = two_runs
    argv = [arg.format(missing=tmp_path / "missing", b=b.path) for arg in argv]
    # a label the run does not hold is a usage mistake (2); a missing run directory is not
    assert _cli.main(["compare", str(a.path), *argv]) == (2 if "Nope" in argv else 1)
    err = capsys.readouterr().err
    assert err.startswith("ngcc: error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_plot_file_suffixes(tmp_path):
    stem = _compare_runs.plot_stem(Path(tmp_path / "cmp.png"))
    assert stem == tmp_path / "cmp"
    assert _compare_runs.plot_stem(tmp_path / "a.b") == tmp_path / "a.b"


def test_cli_plot_writes_png_and_svg_and_keeps_stdout_clean(two_runs, tmp_path, capsys):
    a, b = two_runs
    target = tmp_path / "plots" / "theirs-vs-ours.png"
    assert _cli.main(["compare", str(a.path), str(b.path), "--format", "json",
                      "--plot", str(target)]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)
    png, svg = tmp_path / "plots" / "theirs-vs-ours.png", tmp_path / "plots" / "theirs-vs-ours.svg"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert "<svg" in text and "Wish512 / Wish512" in text and "SM3 / SM3" in text
    assert captured.err.splitlines()[-2:] == ["ngcc: wrote %s" % png, "ngcc: wrote %s" % svg]
