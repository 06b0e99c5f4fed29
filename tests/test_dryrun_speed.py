"""The dry run's calls before any build: a library whose instance the harness published
takes its published figures at this host's rate (the built-in SM3's seconds per cycle of
the published sm3hash-256 at each length); the others, SM3's calls. Held against the
fake runner's campaign at a simulated CPU share of 0.5 (no clock is read)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ngcc
from ngcc.app import dryrun as _dryrun
from ngcc.campaign import conditions as _conditions
from ngcc.campaign import cost as _cost
from ngcc.campaign.settings import CampaignSettings
from tests._fakes import FREQUENCY_HZ, FakeKat, FakeRunner, cost_cycles, fixed_host, still_dry_run
from tests.test_share import (
    SharedRunner,
    _plan_only_seconds,
    _two_others_on_two_cpus,
    fake_sm3_calls,
)

pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")

FAST = "WChain-V2-1024"  # the fake's calls of it: about 3.5 times shorter than SM3's


def _published(name: str, lengths: tuple[int, ...]) -> tuple[tuple[int, float], ...]:
    """``name``'s fake cycles on another host, 1.3 times this one's, as a page gives them."""
    return tuple((n, 1.3 * cost_cycles(name, n)) for n in lengths)


def test_a_published_instance_is_timed_at_this_hosts_rate_between_its_lengths():
    fast = _cost.PublishedCalls(FAST, _published(FAST, (32, 1024, 65536)),
                                _published("SM3", (32, 128, 1024, 65536)), fake_sm3_calls())
    for n in (32, 100, 1024, 4096, 65536, 131072):  # between and beyond the lengths given
        assert fast(n) == pytest.approx(cost_cycles(FAST, n) / FREQUENCY_HZ)


def test_the_dry_run_of_a_published_instance_holds_where_sm3s_calls_do_not(
        tmp_path, monkeypatch):
    """At 32 and 128 B the plan's 20000-call cap binds: trials of calls 3.5 times shorter
    than SM3's take a fraction of SM3's. Taken from the instance's published figures, the
    dry run holds within a quarter of the campaign; taken as SM3's, it reads more than a
    quarter high."""
    fixed_host(monkeypatch)
    _two_others_on_two_cpus(monkeypatch)
    lengths = (32, 128)
    settings = CampaignSettings.make(trials=3, lengths=lengths)
    sm3 = fake_sm3_calls()
    fast = _cost.PublishedCalls(FAST, _published(FAST, (32, 1024, 65536)),
                                _published("SM3", (32, 1024, 65536)), sm3)
    runner, plans = SharedRunner(0.5, lengths), []
    start = _conditions.start_cost(runner, 1, _conditions.host_share(cpu=1))
    share = _conditions.host_share()
    by_published = _cost.plan_only([fast], settings, start, share, sm3, "x86_1")
    as_sm3 = _cost.plan_only([None], settings, start, share, sm3, "x86_1")
    assert ("each call of 1 library as long as its instance's published x86_1 figure, at "
            "this host's rate of the built-in SM3 against the published sm3hash-256; "
            "otherwise each call as long as the built-in SM3's here now") in by_published
    assert "published" not in as_sm3.split("from the plan alone")[1]
    ngcc.Campaign([FAST], run_dir=tmp_path / "run", runner=runner, kat_checker=FakeKat(),
                  trials=3, lengths=list(lengths), progress=False,
                  on_plan=lambda _: plans.append(runner.wall)).run()
    trials = runner.wall - plans[0]
    assert _plan_only_seconds(by_published) == pytest.approx(trials, rel=0.25)
    assert _plan_only_seconds(as_sm3) > 1.25 * trials


def _folder(root: Path, instance: str, bits: int) -> None:
    """A reference folder whose header declares ``instance`` (nothing else is read)."""
    folder = root / "Reference_Implementation" / instance
    folder.mkdir(parents=True)
    (folder / "CryptHash_AlgorithmInstance.h").write_text(
        '#define ALGORITHM_INSTANCE "%s"\n#define DIGEST_BIT_LENGTH %d\n' % (instance, bits))
    (folder / "hash.c").write_text("int x;\n")


def test_the_dry_run_says_which_libraries_it_times_by_their_published_figures(
        tmp_path, monkeypatch):
    """A submission's folder named as the harness's instance (``laurus_512`` is
    ``Laurus-512``) is timed by its published figures, a name no candidate has by SM3's."""
    still_dry_run(monkeypatch)
    _folder(tmp_path / "Laurus", "laurus_512", 512)
    _folder(tmp_path / "Toy", "Toy-256", 256)
    [line] = [line for line in _dryrun.plan_lines([tmp_path], ct=False, runner=FakeRunner())
              if line.startswith("the trials: ")]
    assert "(2 libraries × 8 length(s) × 5 trial(s)" in line
    assert ("each call of 1 library as long as its instance's published %s figure"
            % _dryrun.PUBLISHED_SYSTEM) in line
    assert _dryrun._published_calls(["Laurus-512", None], None) == [None, None]  # no SM3
