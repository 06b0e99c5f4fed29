"""The driver's ``leak`` mode: the calls of a fixed-vs-random (dudect) timing test in
a fresh ``ngcc-driver`` (``csrc/driver/``), their ticks and classes streamed in
batches, the run's facts (its LEAK_DONE frame) checked against the request by
:mod:`ngcc.driver.facts`, and the difference between the classes in the per-call ticks
against the one the kernel's on-CPU time shows from outside the process
(:mod:`ngcc.driver.outside`). The test around it is :mod:`ngcc.measure.leak_measurement`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ngcc.driver import ending as _ending
from ngcc.driver import facts as _facts
from ngcc.driver import outside as _outside
from ngcc.driver import process as _process
from ngcc.driver import protocol as wire
from ngcc.driver.child import library_options, memory_options
from ngcc.driver.protocol import Conversation
from ngcc.library.registry import Instance

#: Seconds a leak run may take beyond its own time limit (start-up, warm-up, the end).
LEAK_TIMEOUT_SLACK = 120.0
#: The per-call ticks of each class kept for their median (the first ones: enough for
#: a median, bounded in memory however long the run).
CLASS_SAMPLE = 1 << 18


@dataclass(frozen=True)
class LeakRun:
    """The facts of one leak run (its LEAK_DONE frame), checked against the request
    and against the batches that came; the batches themselves went to ``on_batch``."""

    pid: int
    cpu: int | None                 # the CPU asked for (None: not pinned)
    stop_reason: str                # "calls", "seconds" or "parent"
    calls: int                      # timed calls, all classes
    class_calls: tuple[int, int]    # ... with the fixed message, with random ones
    warmup: int
    seed: int
    batch_calls: int
    counter: str
    unit: str
    frequency_hz: float
    overhead_min_ticks: int
    overhead_median_ticks: int
    loop_ns: int                    # the driver's clock, first timed call to last
    voluntary_switches: int
    involuntary_switches: int
    peak_rss_kib: int
    affinity_changed: bool | None   # None when not pinned
    parent_wall_ns: int
    isolation: str                  # "namespaces" or "filter" (ngcc.base.sandbox)
    outside_ns: tuple[float, float] | None = None  # on-CPU ns a call by class, from outside


def leak(inst: Instance, message_bytes: int, calls: int, batch_calls: int, seed: int,
         on_batch: Callable[[np.ndarray, np.ndarray], bool], *, warmup: int = 0,
         seconds: float | None = None, cpu: int | None = None,
         fixed: bytes | memoryview | None = None, control: bool = False,
         what: str | None = None, timeout: float | None = None,
         memory_limit: int | None = None) -> LeakRun:
    """The measurements of a fixed-vs-random (dudect) test in a fresh driver.

    Up to ``calls`` timed calls of ``message_bytes``-byte messages, each the fixed
    message (class 0: ``fixed``, default all zero) or a fresh random one (class 1),
    the class drawn per call by a PRNG seeded with ``seed``; ``warmup`` untimed calls
    first. The ticks and classes arrive in batches of at most ``batch_calls`` calls:
    ``on_batch(ticks uint64, classes uint8)`` is called with each and returns True to
    stop the run early (a batch or two already sent may still follow). ``control``
    gives class 0 fresh random messages too (an A/A test: no function can make the
    classes differ, so a flag then blames the harness or the host). ``seconds``
    bounds the run's calls by time; the deadline is ``timeout``, else ``seconds``
    (default 600) plus LEAK_TIMEOUT_SLACK. After the timed calls the driver hashes
    sub-batches of one class each, whose on-CPU time ngcc reads from outside the
    process: where the classes differ there otherwise than in the per-call ticks,
    the run is refused (:func:`ngcc.driver.facts.leak_outside_differs`).
    """
    what = what or "%s leak test at %d B" % (inst.name, message_bytes)
    if timeout is None:
        timeout = (600.0 if seconds is None else seconds) + LEAK_TIMEOUT_SLACK
    options = library_options(inst) + [
        "--message-bytes", str(message_bytes), "--calls", str(calls), "--warmup", str(warmup),
        "--batch-calls", str(batch_calls), "--seed", str(seed)]
    options += [] if seconds is None else ["--time-limit-ms", str(max(1, round(seconds * 1e3)))]
    options += [] if cpu is None else ["--cpu", str(cpu)]
    options += [] if fixed is None else ["--message-stdin"]
    options += ["--control"] if control else []
    options += memory_options(memory_limit)
    stop = [False]
    ticks_total = [0]
    ticks_least = [2**64]
    samples: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])

    def batch(ticks: memoryview, classes: memoryview) -> None:
        values = np.frombuffer(ticks, dtype="<u8").astype(np.uint64)
        ticks_total[0] += int(values.sum(dtype=np.uint64))
        ticks_least[0] = min(ticks_least[0], int(values.min()))
        labels = np.frombuffer(classes, dtype=np.uint8)
        for klass, kept in enumerate(samples):
            room = CLASS_SAMPLE - sum(len(part) for part in kept)
            if room > 0:
                kept.append(values[labels == klass][:room])
        if on_batch(values, np.frombuffer(classes, dtype=np.uint8).copy()):
            stop[0] = True  # batches already on their way still count

    outside = _outside.Outside()
    conversation = Conversation("leak", digest_bytes=inst.digest_bits // 8, calls=calls,
                                batch_calls=batch_calls, on_batch=batch,
                                on_leak_mark=outside.leak_mark)
    outside.conversation = conversation
    try:
        run = _process.run_driver(conversation, options + outside.options(), timeout,
                                  b"" if fixed is None else fixed,
                                  hold_stdin=lambda: not stop[0], pass_fds=(outside.read_fd,))
    finally:
        outside.close()
    _ending.judge(run, what, memory_limit)
    facts = conversation.frames[wire.LEAK_DONE]
    defect = _facts.implausible_leak(facts, conversation, run, cpu, calls, warmup, batch_calls,
                                     seed, message_bytes, ticks_total[0])
    name, floor, _ = _facts.counter_floor()
    if not defect and wire.COUNTERS[int(facts["counter_id"])][0] == name:
        defect = _facts.below_floor(ticks_least[0], floor)
    medians = None
    if all(sum(len(part) for part in kept) for kept in samples):
        fixed_ticks, random_ticks = (float(np.median(np.concatenate(kept))) for kept in samples)
        medians = (fixed_ticks, random_ticks)
    defect = defect or _facts.leak_outside_differs(
        medians, int(facts["counter_id"]), float(facts["frequency_hz"]), outside.class_ns)
    if defect:
        raise _ending.broken_protocol(run, what, defect)
    counter, unit = wire.COUNTERS[int(facts["counter_id"])]
    return LeakRun(
        pid=run.pid, cpu=cpu, stop_reason=wire.LEAK_STOPS[int(facts["stop_reason"])],
        calls=int(facts["calls"]),
        class_calls=(int(facts["class0_calls"]), int(facts["class1_calls"])),
        warmup=int(facts["warmup"]), seed=seed, batch_calls=batch_calls, counter=counter,
        unit=unit, frequency_hz=float(facts["frequency_hz"]),
        overhead_min_ticks=int(facts["overhead_min_ticks"]),
        overhead_median_ticks=int(facts["overhead_median_ticks"]),
        loop_ns=int(facts["loop_ns"]), voluntary_switches=int(facts["voluntary_switches"]),
        involuntary_switches=int(facts["involuntary_switches"]),
        peak_rss_kib=int(facts["peak_rss_kib"]),
        affinity_changed=(not facts["still_pinned"] or facts["cpu_at_end"] != cpu)
        if cpu is not None else None,
        parent_wall_ns=run.wall_ns, isolation=run.isolation, outside_ns=outside.class_ns)
