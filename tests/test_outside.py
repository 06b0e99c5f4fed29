"""Figures measured from outside the library's process (issue 45): around a trial's
batch the driver waits twice for the parent, which reads the thread's on-CPU time from
the kernel; the batch's own figures (which a library sharing the process can forge)
must hold it, within the stops' cost. Nothing here asserts a duration: the outside
figure and the thread's own CPU time are the kernel's count of one thread, so the
first holds the second under any load."""

from __future__ import annotations

import pytest

import ngcc
from ngcc.driver import child as _child
from ngcc.driver import facts as _facts
from ngcc.driver import protocol as _protocol
from ngcc.driver.protocol import Conversation, ProtocolError


def test_a_trial_records_its_batchs_cpu_time_read_from_outside(sandbox):
    measured = _child.trial(ngcc.instance("SM3"), 64, 200, 1)
    assert measured.batch_thread_cpu_ns and measured.outside_batch_cpu_ns
    assert measured.outside_batch_cpu_ns >= measured.batch_thread_cpu_ns  # one clock
    assert _child.trial(ngcc.instance("SM3"), 64, 20, 1, batch_calls=0) \
        .outside_batch_cpu_ns is None  # no batch, no stops


def _facts_of(thread_cpu_ns: int, ticks: int) -> dict[str, int | float]:
    name, _, frequency = _facts.counter_floor()
    counter = next(i for i, (n, _) in _protocol.COUNTERS.items() if n == name)
    return {"batch_calls": 100, "batch_thread_cpu_ns": thread_cpu_ns, "counter_id": counter,
            "batch_ticks": ticks, "frequency_hz": frequency}


def test_a_batch_claiming_less_than_the_outside_figure_is_refused_by_name():
    frequency = _facts.counter_floor()[2]
    outside = 100_000_000
    floor = int(outside * (1 - _facts.OUTSIDE_SLACK_SHARE) - _facts.OUTSIDE_SLACK_NS)
    at_floor = _facts_of(floor, int(floor * frequency / 1e9) + 1)
    assert _facts.below_outside(at_floor, outside) == ""
    assert _facts.below_outside(at_floor, None) == ""  # not read: nothing to hold
    cpu = _facts.below_outside(_facts_of(floor - 1000, int(outside * frequency / 1e9)), outside)
    assert "(its thread's CPU time), below the 100 ms of CPU time the kernel" in cpu
    assert "read by ngcc from outside the process" in cpu
    ticks = _facts.below_outside(_facts_of(outside, int(floor * frequency / 1e9) // 2), outside)
    assert "(its counter's ticks), below the 100 ms" in ticks


def test_batch_marks_come_only_when_asked_and_in_order():
    def feed(conversation: Conversation, *marks: int) -> None:
        hello = _protocol.HELLO_LAYOUT.pack(_protocol.PROTOCOL_VERSION, 1)
        conversation.feed(_protocol.HEADER.pack(_protocol.HELLO, len(hello)) + hello
                          + _protocol.HEADER.pack(_protocol.LOADED, 0))
        for phase in marks:
            conversation.feed(_protocol.HEADER.pack(_protocol.BATCH_MARK, 4)
                              + _protocol.MARK_LAYOUT.pack(phase))

    with pytest.raises(ProtocolError, match="in a run that asked for none"):
        feed(Conversation("trial", digest_bytes=32, calls=1), 0)
    seen: list[int] = []
    with pytest.raises(ProtocolError, match="of phase 1 where 0 was due"):
        feed(Conversation("trial", digest_bytes=32, calls=1, on_mark=seen.append), 1)
    with pytest.raises(ProtocolError, match="after the batch's two"):
        feed(Conversation("trial", digest_bytes=32, calls=1, on_mark=seen.append), 0, 1, 0)
    assert seen == [0, 1]
