"""A leak run's classes timed from outside the library's process (issue 45): after its
timed calls the driver hashes sub-batches of one class each, between LEAK_MARK frames
at which ngcc reads the thread's on-CPU time from the kernel; the difference between
the classes in the per-call ticks (which a library sharing the process can rewrite)
must be the one the kernel shows. The forging fixture
(``tests/fixtures/forging/tick_forger.c``) rewrites the ticks in the driver's memory,
flattening a gross leak or making one up while the sum stays the same.

Nothing here asserts a duration. The fixture's leak is 100 x the work (8000 mixing
rounds against 80, about 17 us against 0.4 us of CPU time here), far beyond the
tolerance (half the costlier class plus 1 us) however loaded the host: CPU time is not
counted while the thread waits, and the medians of the ticks miss the preempted calls.
The honest runs are made under a load of our own as well (more spinning processes than
CPUs), where they must pass the same check.
"""

from __future__ import annotations

import multiprocessing
import os
import struct
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from _testlib import build_library, fake_driver

import ngcc
from ngcc.driver import facts as _facts
from ngcc.driver import leak_mode as _leak_mode
from ngcc.driver import process as _process
from ngcc.driver import protocol as _protocol
from ngcc.driver.protocol import Conversation, ProtocolError

FORGER = Path(__file__).parent / "fixtures" / "forging" / "tick_forger.c"
LENGTH = 64
CALLS = 3000
REFUSAL = "per-call figures the library made up"


@pytest.fixture(scope="module")
def forgers(tmp_path_factory) -> dict[str, ngcc.Instance]:
    """The fixture four ways: honest or forging, leaky or constant."""
    folder = tmp_path_factory.mktemp("forgers")
    source = FORGER.read_text()
    return {name: ngcc.instance(build_library(
        folder, name, "#define LEAKY %d\n#define FORGE %d\n" % (leaky, forge) + source))
        for name, leaky, forge in (("LeakyHonest-256", 1, 0), ("ConstantHonest-256", 0, 0),
                                   ("LeakyFlattened-256", 1, 1),
                                   ("ConstantSkewed-256", 0, 2))}


def _leak(inst: ngcc.Instance) -> _leak_mode.LeakRun:
    return _leak_mode.leak(inst, LENGTH, CALLS, 1000, 7, lambda ticks, classes: False)


@pytest.mark.parametrize("name", ["LeakyFlattened-256", "ConstantSkewed-256"])
def test_a_leak_run_whose_ticks_were_rewritten_is_refused_by_name(forgers, sandbox, name):
    with pytest.raises(_process.DriverError) as caught:
        _leak(forgers[name])
    assert caught.value.status == "protocol"
    detail = caught.value.detail
    assert REFUSAL in detail and "read by ngcc from outside the process" in detail
    assert "the per-call ticks put random messages" in detail


def test_the_api_and_the_command_line_name_the_refusal(forgers, tmp_path, capsys):
    from ngcc.cli import main as _cli

    with pytest.raises(ngcc.InstanceProtocolError, match=REFUSAL):
        ngcc.leak(forgers["LeakyFlattened-256"], LENGTH, calls=CALLS, wait=0)
    status = _cli.main(["leak", str(forgers["ConstantSkewed-256"].library), "--calls",
                        str(CALLS), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "  ERROR  " in line)
    assert status == 1 and line.startswith("ConstantSkewed-256  ERROR") and REFUSAL in line
    assert not list((tmp_path / "out").rglob("*.json"))  # no evidence of a refused run


def _spin(seconds: float) -> None:
    import time
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


@pytest.fixture
def busy() -> Iterator[None]:
    """More spinning processes than CPUs, for the length of a test (at most 60 s)."""
    spinners = [multiprocessing.Process(target=_spin, args=(60.0,), daemon=True)
                for _ in range((os.cpu_count() or 1) + 1)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()


@pytest.mark.parametrize("loaded", [False, True])
def test_an_honest_leak_run_passes_the_check_and_records_the_outside_figures(
        forgers, request, loaded):
    if loaded:
        request.getfixturevalue("busy")
    runs = {name: _leak(forgers[name]) for name in ("LeakyHonest-256", "ConstantHonest-256")}
    runs["SM3"] = _leak(ngcc.instance("SM3"))
    for name, run in runs.items():
        assert run.outside_ns is not None and min(run.outside_ns) > 0, name
    fixed, random = runs["LeakyHonest-256"].outside_ns or (0.0, 0.0)
    assert random > 4 * fixed  # 100 x the work: the kernel sees the leak, whatever the load


def test_the_rule_holds_the_difference_to_half_the_costlier_class_plus_a_microsecond():
    name, _, frequency = _facts.counter_floor()
    counter = next(i for i, (n, _) in _protocol.COUNTERS.items() if n == name)
    outside = (1_000.0, 9_000.0)          # ns a call, by class
    bound = _facts.LEAK_OUTSIDE_SHARE * 9_000 + _facts.LEAK_OUTSIDE_SLACK_NS

    def told(difference_ns: float) -> str:
        ticks = (2_000 * frequency / 1e9, (2_000 + difference_ns) * frequency / 1e9)
        return _facts.leak_outside_differs(ticks, counter, frequency, outside)
    assert told(8_000) == ""                      # as the kernel sees it
    assert told(8_000 + bound - 1) == ""          # within the bound
    assert REFUSAL in told(8_000 + bound + 10)    # made up: further apart
    assert REFUSAL in told(8_000 - bound - 10)    # made up: closer (a hidden leak)
    assert "+0 ns from the fixed one" in told(0)
    assert _facts.leak_outside_differs(None, counter, frequency, outside) == ""
    assert _facts.leak_outside_differs((1.0, 1.0), counter, frequency, None) == ""


def _mark(phase: int, calls: int) -> bytes:
    return (_protocol.HEADER.pack(_protocol.LEAK_MARK, _protocol.LEAK_MARK_LAYOUT.size)
            + _protocol.LEAK_MARK_LAYOUT.pack(phase, calls))


def _started(**options) -> Conversation:
    conversation = Conversation("leak", digest_bytes=32, calls=10, batch_calls=10, **options)
    hello = _protocol.HELLO_LAYOUT.pack(_protocol.PROTOCOL_VERSION, 1)
    conversation.feed(_protocol.HEADER.pack(_protocol.HELLO, len(hello)) + hello
                      + _protocol.HEADER.pack(_protocol.LOADED, 0))
    return conversation


def _batch() -> bytes:
    return (_protocol.HEADER.pack(_protocol.LEAK_BATCH, 9 * 2) + struct.pack("<2Q", 5, 5)
            + bytes([0, 1]))


@pytest.mark.parametrize(("frames", "defect"), [
    (lambda: _batch() + _mark(0, 0), "in a run that asked for none"),
])
def test_leak_marks_come_only_when_asked(frames, defect):
    with pytest.raises(ProtocolError, match=defect):
        _started().feed(frames())


@pytest.mark.parametrize(("frames", "defect"), [
    (lambda: _mark(0, 0), "before any LEAK_BATCH frame"),
    (lambda: _batch() + _mark(1, 3), "of phase 1 and 3 calls where phase 0 was due"),
    (lambda: _batch() + _mark(0, 3), "where phase 0 was due with 0 calls"),
    (lambda: _batch() + _mark(0, 0) + _mark(1, 0), "due with its sub-batch's calls"),
    (lambda: _batch() + _mark(0, 0) + _batch(), "a LEAK_BATCH frame after the LEAK_MARK"),
    (lambda: _batch() + b"".join(_mark(p, p % 2) for p in range(_protocol.LEAK_MARKS))
     + _mark(_protocol.LEAK_MARKS, 0), "after the 16 of the sub-batches timed from outside"),
])
def test_leak_marks_come_in_order_after_the_batches(frames, defect):
    seen: list[tuple[int, int]] = []
    with pytest.raises(ProtocolError, match=defect):
        _started(on_leak_mark=lambda phase, calls: seen.append((phase, calls))).feed(frames())


def test_a_leak_run_without_its_marks_is_refused_by_name(tmp_path, monkeypatch):
    fields = {name: 0 for name, _ in _protocol.LEAK_FIELDS}
    fields.update(cpu=-1, counter_id=1, stop_reason=1, calls=2, class0_calls=1,
                  class1_calls=1, seed=7, message_bytes=LENGTH, batch_calls=2,
                  frequency_hz=2e9, loop_ns=10**6, peak_rss_kib=1)
    body = textwrap.dedent("""
        frame(1, struct.pack('<II', 1, pid)); frame(2)
        frame(14, struct.pack('<2Q', 1000, 1000) + bytes([0, 1]))
        facts = %r
        facts[0] = pid
        frame(15, struct.pack(%r, *facts)); frame(13)
    """) % ([fields[name] for name, _ in _protocol.LEAK_FIELDS], _protocol.LEAK_LAYOUT.format)
    monkeypatch.setattr(_process, "DRIVER", fake_driver(tmp_path, body))
    with pytest.raises(_process.DriverError) as caught:
        _leak_mode.leak(ngcc.instance("SM3"), LENGTH, 2, 2, 7, lambda ticks, classes: False)
    assert caught.value.status == "protocol"
    assert "(0 of the 16 LEAK_MARK frames of its sub-batches timed from outside)" \
        in caught.value.detail
