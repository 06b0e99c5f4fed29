"""Number formatting against the rows of the target pages in docs/spec/seeds/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ngcc.base import format as _format

PERFORMANCE_ROW = re.compile(
    r"^`?(?P<instance>[\w-]+)`?\s+(?P<bytes>\d+) B\s+(?P<cycles>[\d.]+(?: [kM])?)\s+"
    r"(?P<cpb>[\d.]+)\s+(?P<time>[\d.]+ (?:ns|µs|ms|s))\s+(?P<mbs>[\d.]+)\s+"
    r"(?P<n>(?P<total>\d+) \((?P<trials>\d+) × (?P<calls>\d+)\))$")
RESOURCE_ROW = re.compile(
    r"^`?(?P<instance>[\w-]+)`?\s+(?P<operation>hash_(?P<bytes>\d+))\s+(?P<elf>\d+)\s+"
    r"(?P<baseline>(?P<baseline_kib>\d+) KiB)\s+(?P<peak>(?P<peak_kib>\d+) KiB)$")
UNIT_SECONDS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
UNIT_CYCLES = {"k": 1e3, "M": 1e6}


def seed_rows(seeds_dir: Path, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    rows = []
    for page in sorted(seeds_dir.glob("*.txt")):
        for line in page.read_text(encoding="utf-8").splitlines():
            match = pattern.match(line.strip())
            if match:
                rows.append(match)
    return rows


@pytest.fixture(scope="module")
def performance_rows(seeds_dir: Path) -> list[re.Match[str]]:
    rows = seed_rows(seeds_dir, PERFORMANCE_ROW)
    assert len(rows) == 56, "the three seeds hold 7 instances × 8 lengths"
    return rows


def parse_cycles(text: str) -> float:
    number, _, unit = text.partition(" ")
    return float(number) * UNIT_CYCLES.get(unit, 1.0)


def parse_seconds(text: str) -> float:
    number, unit = text.split(" ")
    return float(number) * UNIT_SECONDS[unit]


# --- the values the issue quotes -------------------------------------------------

def test_quoted_examples() -> None:
    assert _format.cycles(37_788.8) == "37.8 k"
    assert _format.cycles(1_598_000) == "1.60 M"
    assert _format.cycles_per_byte(1180.9) == "1180.9"
    assert _format.duration(18.08e-6) == "18.1 µs"
    assert _format.megabytes_per_second(1.768) == "1.8"
    assert _format.call_count([20000] * 5) == "100000 (5 × 20000)"


# --- every row of the seeds ------------------------------------------------------

def test_performance_rows_reformat_identically(performance_rows: list[re.Match[str]]) -> None:
    """Each displayed number, read back and formatted again, gives the seed's text:
    the unit, the precision and the trailing-zero rule all match."""
    for row in performance_rows:
        assert _format.cycles(parse_cycles(row["cycles"])) == row["cycles"], row.string
        assert _format.cycles_per_byte(float(row["cpb"])) == row["cpb"], row.string
        assert _format.duration(parse_seconds(row["time"])) == row["time"], row.string
        assert _format.megabytes_per_second(float(row["mbs"])) == row["mbs"], row.string
        assert _format.message(int(row["bytes"])) == "%s B" % row["bytes"]


def test_call_counts(performance_rows: list[re.Match[str]]) -> None:
    for row in performance_rows:
        trials, calls = int(row["trials"]), int(row["calls"])
        assert trials * calls == int(row["total"]), row.string
        assert _format.call_count([calls] * trials) == row["n"]


def test_cycles_per_byte_from_exact_cycles(performance_rows: list[re.Match[str]]) -> None:
    """Where the page shows cycles exactly (below 10 000), cycles/byte follows from them."""
    exact = [row for row in performance_rows if " " not in row["cycles"]]
    assert len(exact) >= 5
    for row in exact:
        cpb = int(row["cycles"]) / int(row["bytes"])
        assert _format.cycles_per_byte(cpb) == row["cpb"], row.string


def test_mean_cycles_from_cycles_per_byte(performance_rows: list[re.Match[str]]) -> None:
    """Where cycles/byte carries more digits than mean cycles (short messages of slow
    instances), mean cycles = cycles/byte × bytes formats to the seed's text."""
    checked = 0
    for row in performance_rows:
        approx = float(row["cpb"]) * int(row["bytes"])
        half_step = 0.05 * int(row["bytes"])  # cycles/byte is rounded to 0.1
        shown = parse_cycles(row["cycles"])
        resolution = 0.5 * (1e4 if row["cycles"].endswith("M") else 50)
        if half_step < resolution / 10 and shown >= 1e4:
            assert _format.cycles(approx) == row["cycles"], row.string
            checked += 1
    assert checked >= 10


def test_resource_rows(seeds_dir: Path) -> None:
    rows = seed_rows(seeds_dir, RESOURCE_ROW)
    assert len(rows) == 56
    for row in rows:
        assert _format.operation(int(row["bytes"])) == row["operation"]
        assert _format.byte_count(int(row["elf"])) == row["elf"]
        assert _format.kibibytes(float(row["baseline_kib"])) == row["baseline"]
        assert _format.kibibytes(float(row["peak_kib"])) == row["peak"]


# --- boundaries the seeds do not show --------------------------------------------

@pytest.mark.parametrize(("cycles", "text"), [
    (0, "0"), (9999.4, "9999"), (9999.6, "10.0 k"), (999_949, "999.9 k"),
    (999_960, "1.00 M"), (414_040_000, "414.04 M")])
def test_cycles_boundaries(cycles: float, text: str) -> None:
    assert _format.cycles(cycles) == text


@pytest.mark.parametrize(("seconds", "text"), [
    (0.0, "0 ns"), (5e-10, "0.5 ns"), (999.4e-9, "999 ns"), (999.6e-9, "1 µs"),
    (999.6e-6, "1 ms"), (0.149, "149 ms"), (1.0, "1 s"), (1234.0, "1234 s")])
def test_duration_boundaries(seconds: float, text: str) -> None:
    assert _format.duration(seconds) == text


def test_missing_values_never_show_nan() -> None:
    for function in (_format.cycles, _format.cycles_per_byte, _format.duration,
                     _format.megabytes_per_second, _format.kibibytes, _format.percent,
                     _format.ratio):
        assert function(None) == _format.MISSING
        assert function(float("nan")) == _format.MISSING
    assert _format.call_count([]) == _format.MISSING
    assert _format.byte_count(None) == _format.MISSING


def test_unequal_trials_are_listed() -> None:
    assert _format.call_count([20, 20, 10]) == "50 (20 + 20 + 10)"


def test_percent_and_ratio() -> None:
    assert _format.percent(0.0042) == "0.42 %"
    assert _format.ratio(3.14159) == "3.14"
    assert _format.ratio(45.67) == "45.7"
    assert _format.ratio(1180.4) == "1180"


def test_one_unit_word_rule():
    from ngcc.evidence.figures import unit_word
    assert unit_word(["tsc-ticks", "tsc-ticks"]) == "ticks"
    assert unit_word(["tsc-ticks", "timer-ticks"]) == "ticks"  # a counter's ticks alike
    assert unit_word(["ns", "ns"]) == "ns"
    assert unit_word(["core-cycles"]) == "core cycles"  # never a TSC's ticks
    assert unit_word(["ns", "timer-ticks"]) == "ticks"
