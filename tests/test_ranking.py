"""The field ranked (``stats.ranking``): the harness's rule on a fake run of five
candidates with known figures and spreads, the rank intervals and the ties in the noise."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import ngcc
from ngcc.evidence.figures import CPU_TIME
from ngcc.stats import ranking as _ranking
from tests._fakes import FakeKat, FakeRunner, fixed_host

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")

LENGTHS = (32, 1024, 65536)
TRIALS = 7


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """One real record led by the CPU-time figure, whose fields the fakes replace."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        fixed_host(monkeypatch)
        run = ngcc.Campaign(["SM3"], lengths=[32], trials=3, trial_target=0.001,
                            run_dir=tmp_path_factory.mktemp("rank") / "run", progress=False,
                            runner=FakeRunner(batch=True), kat_checker=FakeKat()).run()
    record = run.records[0]
    assert record.statistics.figure.figure is CPU_TIME
    return record


def spread_values(figure: float, spread: float) -> list[float]:
    """Seven trial figures evenly across figure × (1 ± spread): their median is figure."""
    return list(figure * (1 + spread * np.linspace(-1, 1, TRIALS)))


def fake(template, candidate: str, instance: str, length: int, values, bits: int = 1024,
         variant: str = "ref", family: str = "Fake"):
    """A record of ``instance`` at ``length`` whose trials' CPU-time figures are
    ``values`` (its figure their median), built from ``template``."""
    first = template.trials[0]
    trials = tuple(replace(first, index=i, statistics=replace(first.statistics,
                                                               cpu_time_ticks=float(v)))
                   for i, v in enumerate(values))
    statistics = replace(template.statistics, leading=CPU_TIME.code, left_out_trials=(),
                         cpu_time_ticks=float(np.median(values)), trials=len(values))
    return replace(template, candidate=candidate, instance=instance, label=instance,
                   family=family,
                   digest_bits=bits, message_bytes=length, trials=trials,
                   statistics=statistics,
                   implementation=replace(template.implementation, variant=variant))


# candidate → its figure at each metric (per call) and its trials' relative spread
FIELD = {
    "hash-01": ((100, 1_000, 50_000), 0.01),
    "hash-02": ((200, 2_000, 100_000), 0.01),
    "hash-03": ((202, 2_020, 101_000), 0.01),  # 1 % from hash-02: tied in the noise
    "hash-04": ((400, 4_000, 200_000), 0.01),
    "hash-05": ((400, 8_000, 400_000), 0.01),  # hash-04's exact figure at 32 B
}


def field(template, spreads=None, extra=()):
    records = []
    for candidate, (figures, spread) in FIELD.items():
        spread = (spreads or {}).get(candidate, spread)
        for length, figure in zip(LENGTHS, figures, strict=True):
            records.append(fake(template, candidate, candidate + "-1024", length,
                                spread_values(figure, spread)))
    for length in LENGTHS:
        records.append(fake(template, "baseline", "pseudoXOF-1024", length,
                            spread_values(50 * length, 0.01)))
    return records + list(extra)


def test_ranks_ties_and_the_overall_mean(template):
    ranking = _ranking.rank(field(template), target=512)
    assert ranking.digest_bits == 1024 and ranking.lengths == LENGTHS
    order = [entry.candidate for entry in ranking.entries]
    assert order == ["hash-01", "hash-02", "hash-03", "hash-04", "hash-05"]
    by = {entry.candidate: entry for entry in ranking.entries}
    assert [m.rank for m in by["hash-04"].metrics] == [4.5, 4, 4]  # exact tie shares 4.5
    assert [m.rank for m in by["hash-05"].metrics] == [4.5, 5, 5]
    assert by["hash-04"].mean_rank == pytest.approx((4.5 + 4 + 4) / 3)
    assert [e.rank for e in ranking.entries] == [1, 2, 3, 4, 5]
    baseline = by["hash-01"].metrics[1]
    assert baseline.figure == 1_000 and baseline.x_pseudoxof == pytest.approx(1_000 / 51_200)
    assert "baseline" not in order


def test_the_noise_ties_near_neighbours_and_not_far_ones(template):
    ranking = _ranking.rank(field(template), target=512)
    by = {entry.candidate: entry for entry in ranking.entries}
    for metric in range(3):
        assert by["hash-02"].metrics[metric].tied_with == ("hash-03",)
        assert by["hash-03"].metrics[metric].tied_with == ("hash-02",)
        assert by["hash-01"].metrics[metric].tied_with == ()
    assert by["hash-04"].metrics[0].tied_with == ("hash-05",)  # the same figures
    assert by["hash-04"].metrics[1].tied_with == ()


def test_rank_intervals_hold_the_rank_and_widen_with_the_spread(template):
    quiet = {e.candidate: e for e in _ranking.rank(field(template)).entries}
    noisy = {e.candidate: e for e in _ranking.rank(
        field(template, spreads={"hash-04": 0.8})).entries}
    for entries in (quiet, noisy):
        for entry in entries.values():
            assert entry.low <= entry.rank <= entry.high
            for metric in entry.metrics:
                assert metric.low <= metric.rank <= metric.high
    assert (quiet["hash-01"].low, quiet["hash-01"].high) == (1, 1)  # 2× from the next
    width = lambda entry, m: entry.metrics[m].high - entry.metrics[m].low  # noqa: E731
    for m in (1, 2):  # at 32 B hash-04 shares hash-05's figure: [4–5] either way
        assert width(quiet["hash-04"], m) == 0
        assert width(noisy["hash-04"], m) > 0
    assert noisy["hash-04"].high - noisy["hash-04"].low > quiet["hash-04"].high - \
        quiet["hash-04"].low


def test_the_bootstrap_is_seeded_so_every_reader_gets_the_same(template):
    records = field(template, spreads={"hash-02": 0.3, "hash-03": 0.3})
    assert _ranking.rank(records) == _ranking.rank(list(records))


def test_the_representative_set(template):
    slow = [fake(template, "hash-05", "hash-05-fast-1024", n, spread_values(f / 10, 0.01))
            for n, f in zip(LENGTHS, FIELD["hash-05"][0], strict=True)]
    ranking = _ranking.rank(field(template, extra=slow))
    first = ranking.entries[0]
    assert (first.candidate, first.label, first.chosen_by) == (
        "hash-05", "hash-05-fast-1024", "fastest of 2 sets")
    named = _ranking.rank(field(template, extra=slow),
                          recommended={"hash-05": "hash-05-1024"})
    chosen = {e.candidate: (e.label, e.chosen_by) for e in named.entries}
    assert chosen["hash-05"] == ("hash-05-1024", "recommended")
    assert len(named.entries) == 5


def test_eligibility_by_target_and_build(template):
    other = [fake(template, "hash-09", "hash-09-512", n, spread_values(10, 0.01), bits=512)
             for n in LENGTHS]
    optimized = [fake(template, "hash-01", "hash-01-avx2", n, spread_values(10, 0.01),
                      variant="opt") for n in LENGTHS]
    records = field(template, extra=other + optimized)
    assert _ranking.targets(records) == [256, 512]
    assert [e.candidate for e in _ranking.rank(records, 256).entries] == ["hash-09"]
    assert "hash-01-avx2" not in [e.label for e in _ranking.rank(records).entries]
    fast = _ranking.rank(records, 512, build="optimized")
    assert [(e.candidate, e.label) for e in fast.entries] == [("hash-01", "hash-01-avx2")]
    with pytest.raises(ValueError, match="optimized"):
        _ranking.rank(records, build="fastest")


def test_a_set_missing_a_metric_is_left_out_with_why(template):
    records = [r for r in field(template)
               if not (r.candidate == "hash-03" and r.message_bytes == 65536)]
    ranking = _ranking.rank(records)
    assert "hash-03" not in [e.candidate for e in ranking.entries]
    assert ranking.left_out == ("hash-03-1024 (hash-03): no record at 65536 B",)


def test_the_frame_and_its_rows(template):
    from ngcc.stats.tables import ranking_frame

    frame = ranking_frame(field(template))
    assert list(frame["candidate"]) == ["hash-01", "hash-02", "hash-03", "hash-04", "hash-05"]
    assert list(frame["rank_32"]) == [1, 2, 3, 4.5, 4.5]
    assert list(frame["tied_with_1024"])[1] == ["hash-03"]
    assert list(frame.columns) == _ranking.columns(LENGTHS)


def test_rank_text():
    assert _ranking.rank_with_interval(4, 3, 6) == "4 [3–6]"
    assert _ranking.rank_with_interval(1, 1, 1) == "1"
    assert _ranking.rank_with_interval(4.5, 4, 5) == "4.5 [4–5]"
    assert list(_ranking.positions(np.array([5, 3, 3, 9]))) == [3, 1.5, 1.5, 4]


def test_libraries_no_candidate_claims_rank_by_family(template):
    records = [fake(template, "external", name + "-256", n, spread_values(scale * n, 0.01),
                    bits=256, family=name)
               for name, scale in (("TinyHash", 2), ("GChain", 1)) for n in LENGTHS]
    assert _ranking.ranked_candidates(records) == ["TinyHash", "GChain"]
    ranking = _ranking.rank(records, 128)
    assert [(e.name, e.candidate) for e in ranking.entries] == [
        ("GChain", "external"), ("TinyHash", "external")]


def test_no_rank_is_taken_across_hosts(template):
    from ngcc.stats.tables import ranking_frame

    def on(host, records):
        return [replace(r, environment=replace(r.environment, host=host)) for r in records]

    records = on("alpha", field(template)) + on("beta", field(template))
    with pytest.raises(ValueError, match="hosts alpha, beta"):
        _ranking.rank(records)
    with pytest.raises(ValueError, match="one host's"):
        ranking_frame(records)
    frame = ranking_frame(records, host_name="beta")
    assert list(frame["candidate"]) == ["hash-01", "hash-02", "hash-03", "hash-04", "hash-05"]
