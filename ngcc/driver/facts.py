"""The facts ``ngcc-driver`` reports, held against the request, the parent's clock and
this host's counter: a library shares the driver's process and can forge its every
word, so a trial's or a leak run's figures that no run of this request could give are
a ``protocol`` :class:`~ngcc.driver.process.DriverError` (:mod:`ngcc.driver.child`
raises it with the defect these functions name).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from ngcc import _core
from ngcc.driver import protocol as wire
from ngcc.driver.process import DriverRun, driver_command
from ngcc.driver.protocol import Conversation

if TYPE_CHECKING:  # a trial's cycles are numpy's; the KAT check loads none of it
    import numpy as np


@functools.cache
def counter_floor() -> tuple[str, int, float]:
    """This host's counter as the parent measures it, once per process: its name, the
    least ticks any timed region can read (a quarter of the minimum of an empty
    region: a margin for the jitter of the reading and for a CPU of another kind than
    the parent's) and its frequency. What the driver claims is
    held against it, since a library can forge the driver's every word."""
    calibration = _core.counter_calibrate()
    return (calibration["name"], max(1, calibration["overhead_min"] // 4),
            calibration["frequency_hz"])


def below_floor(least: int, floor: int) -> str:
    """Why a per-call reading of ``least`` ticks cannot be (below the counter's
    ``floor``), or ""."""
    return ("a per-call reading of %d ticks, below the %d ticks the counter needs to read "
            "itself" % (least, floor)) if least < floor else ""


#: The fastest a counter other than the host's own may tick, in Hz, and the slowest its
#: claimed rate may be (a trial on ``--counter clock|perf``): the clock counts
#: nanoseconds; a perf counter core cycles, which no core makes 10¹⁰ of a second.
OTHER_COUNTER_RATES = {"clock_monotonic_raw": (0.5e9, 1.05e9),
                       "perf_cycles_rdpmc": (1e7, 1e10), "perf_cycles_read": (1e7, 1e10)}


def _impossible(f: dict[str, int | float], cycles: np.ndarray, run: DriverRun) -> str:
    """Why the trial's figures cannot have been measured on this host's counter, or "":
    a per-call reading below the counter's minimum overhead, a counter frequency far
    from the parent's own measurement, ticks the parent's wall time cannot hold. A
    trial on another counter (:data:`OTHER_COUNTER_RATES`) is held to that counter's
    rates instead; one on a counter the host has not is impossible, but behind
    ``NGCC_DRIVER_PREFIX`` (an emulated driver's: its machine's counter) unchecked."""
    name, floor, frequency = counter_floor()
    counter = wire.COUNTERS[int(f["counter_id"])][0]
    ticks = f["loop_ticks"] + f["batch_ticks"]
    if counter != name:
        if counter not in OTHER_COUNTER_RATES and len(driver_command()) == 1:
            return "a %s counter, which this host has not" % counter
        slowest, fastest = OTHER_COUNTER_RATES.get(counter, (0.0, math.inf))  # emulated
        least_ns = ticks / fastest * 1e9
        checks = [(slowest <= f["frequency_hz"] <= fastest, "a %s counter of %.4g Hz"
                   % (counter, f["frequency_hz"])),
                  (least_ns <= run.wall_ns * 1.05 + 1e7, "%d ticks of timed loops (%.0f ns "
                   "at least, on %s) in a child that ran %d ns" % (ticks, least_ns, counter,
                                                                   run.wall_ns))]
        return next((defect for ok, defect in checks if not ok), "")
    least = int(cycles.min()) if len(cycles) else floor
    ticks_ns = ticks / frequency * 1e9
    checks = [
        (f["overhead_min_ticks"] >= floor, "a counter overhead of %d ticks, below the %d "
         "ticks it needs" % (f["overhead_min_ticks"], floor)),
        (0.5 <= f["frequency_hz"] / frequency <= 2.0, "a counter of %.4g Hz, where ngcc "
         "measures %.4g Hz" % (f["frequency_hz"], frequency)),
        (ticks_ns <= run.wall_ns * 1.05 + 1e7, "%d ticks of timed loops (%.0f ns at this "
         "host's rate) in a child that ran %d ns" % (ticks, ticks_ns, run.wall_ns)),
    ]
    return below_floor(least, floor) or next((defect for ok, defect in checks if not ok), "")


def unasked_counter(claimed: str, asked: str | None) -> str:
    """Why a trial's counter cannot be the one asked for (``--counter``), or "": perf
    only for perf or auto, the clock for clock (or tsc, where the machine has no
    counter of its own)."""
    perf = claimed.startswith("perf_")
    fits = {"perf": perf, "clock": claimed == "clock_monotonic_raw", "auto": True}
    if fits.get(asked or "tsc", not perf):
        return ""
    return "a %s counter, where %s was asked for" % (claimed, asked or "tsc")


def implausible_trial(f: dict[str, int | float], cycles: np.ndarray, run: DriverRun,
                      cpu: int | None, calls: int, warmup: int, batch: int,
                      honesty: int = 0) -> str:
    """Why the trial facts cannot be true of this request and this child, or ""."""
    slack_ns = run.wall_ns * 1.01 + 1e6  # CLOCK_MONOTONIC_RAW against our CLOCK_MONOTONIC
    checks = [
        (f["honesty_calls"] == honesty
         and f["honesty_min_calls"] <= f["honesty_calls"]
         and f["honesty_min_cpu_ns"] <= f["honesty_ns"] * 1.01 + 1e6,
         "an honesty batch of %d calls (%d asked for), its least sub-batch %d calls and "
         "%d ns in %d ns" % (f["honesty_calls"], honesty, f["honesty_min_calls"],
                             f["honesty_min_cpu_ns"], f["honesty_ns"])),
        (f["pid"] == run.pid, "the facts name pid %d, not the child's %d" % (f["pid"], run.pid)),
        (f["cpu"] == (-1 if cpu is None else cpu), "cpu %d, not the one asked for" % f["cpu"]),
        ((f["calls"], f["warmup"], f["batch_calls"]) == (calls, warmup, batch),
         "%d calls, %d warm-up, %d batch: not the request" % (
             f["calls"], f["warmup"], f["batch_calls"])),
        (f["counter_id"] in wire.COUNTERS, "unknown counter %d" % f["counter_id"]),
        (f["still_pinned"] in (0, 1), "still_pinned = %d" % f["still_pinned"]),
        (-1 <= f["cpu_at_end"] < 1 << 16, "cpu_at_end = %d" % f["cpu_at_end"]),
        (f["counter_resolution"] <= max(f["overhead_median_ticks"], 1) * 1000,
         "a counter resolution of %d ticks" % f["counter_resolution"]),
        (f["batch_min_calls"] <= f["batch_calls"]
         and f["batch_min_cpu_ns"] <= f["batch_thread_cpu_ns"],
         "a sub-batch of %d calls and %d ns in a batch of %d calls and %d ns" % (
             f["batch_min_calls"], f["batch_min_cpu_ns"], f["batch_calls"],
             f["batch_thread_cpu_ns"])),
        (1e5 <= f["frequency_hz"] <= 1e11, "a counter of %r Hz" % f["frequency_hz"]),
        (f["overhead_min_ticks"] <= f["overhead_median_ticks"] <= 10**7,
         "overhead %d / %d ticks" % (f["overhead_min_ticks"], f["overhead_median_ticks"])),
        (f["core_cycles_per_tick"] == 0 or 0.01 <= f["core_cycles_per_tick"] <= 1000,
         "%r core cycles per tick" % f["core_cycles_per_tick"]),
        (f["loop_ns"] > 0 and int(cycles.sum(dtype="uint64")) <= f["loop_ticks"],
         "a per-call loop of %d ticks / %d ns holding calls of %d ticks in all" % (
             f["loop_ticks"], f["loop_ns"], int(cycles.sum(dtype="uint64")))),
        (f["loop_ns"] + f["batch_ns"] + f["honesty_ns"] <= slack_ns,
         "%d ns of timed loops in a child that ran %d ns" % (
             f["loop_ns"] + f["batch_ns"] + f["honesty_ns"], run.wall_ns)),
        (f["thread_cpu_ns"] <= f["loop_ns"] * 1.01 + 1e6
         and f["batch_thread_cpu_ns"] <= f["batch_ns"] * 1.01 + 1e6,
         "more CPU time than wall time in a loop"),
        (batch == 0 or (f["batch_ticks"] > 0 and f["batch_ns"] > 0), "an empty batch"),
        (max(f["voluntary_switches"], f["involuntary_switches"],
             f["batch_involuntary_switches"]) < 1 << 40, "a context-switch count out of range"),
        (0 < f["baseline_rss_kib"] < 1 << 40 and 0 < f["peak_rss_kib"] < 1 << 40,
         "RSS %d / %d KiB" % (f["baseline_rss_kib"], f["peak_rss_kib"])),
        (all(math.isfinite(f[k]) and 0 <= f[k] < 1e6 for k in ("load_1", "load_5", "load_15")),
         "a load average out of range"),
    ]
    return next((defect for ok, defect in checks if not ok), "") or _impossible(f, cycles, run)


def implausible_leak(f: dict[str, int | float], conversation: Conversation, run: DriverRun,
                     cpu: int | None, calls: int, warmup: int, batch_calls: int, seed: int,
                     message_bytes: int, ticks_total: int) -> str:
    """Why the LEAK_DONE facts cannot be true of this request and these batches, or ""."""
    frequency = float(f["frequency_hz"])
    sane_frequency = 1e5 <= frequency <= 1e11
    checks = [
        (f["pid"] == run.pid, "the facts name pid %d, not the child's %d" % (f["pid"], run.pid)),
        (f["cpu"] == (-1 if cpu is None else cpu), "cpu %d, not the one asked for" % f["cpu"]),
        ((f["seed"], f["message_bytes"], f["batch_calls"]) == (seed, message_bytes, batch_calls),
         "seed, length or batch size not the request's"),
        (f["calls"] == conversation.leak_calls and f["calls"] <= calls,
         "%d calls claimed, %d sent in batches" % (f["calls"], conversation.leak_calls)),
        ((f["class0_calls"], f["class1_calls"]) == (
            conversation.leak_calls - conversation.leak_class1_calls,
            conversation.leak_class1_calls), "class counts other than the batches'"),
        (f["warmup"] <= warmup, "%d warm-up calls, more than asked" % f["warmup"]),
        (f["stop_reason"] in wire.LEAK_STOPS, "unknown stop reason %d" % f["stop_reason"]),
        (f["stop_reason"] != 1 or f["calls"] == calls, "stopped at its calls before making them"),
        (f["counter_id"] in wire.COUNTERS, "unknown counter %d" % f["counter_id"]),
        (f["still_pinned"] in (0, 1), "still_pinned = %d" % f["still_pinned"]),
        (-1 <= f["cpu_at_end"] < 1 << 16, "cpu_at_end = %d" % f["cpu_at_end"]),
        (sane_frequency, "a counter of %r Hz" % frequency),
        (f["overhead_min_ticks"] <= f["overhead_median_ticks"] <= 10**7,
         "overhead %d / %d ticks" % (f["overhead_min_ticks"], f["overhead_median_ticks"])),
        (f["loop_ns"] <= run.wall_ns * 1.01 + 1e6,
         "%d ns of timed batches in a child that ran %d ns" % (f["loop_ns"], run.wall_ns)),
        (not sane_frequency or ticks_total / frequency * 1e9 <= f["loop_ns"] * 1.01 + 1e6,
         "calls of %d ticks in all inside %d ns of batches" % (ticks_total, f["loop_ns"])),
        (max(f["voluntary_switches"], f["involuntary_switches"]) < 1 << 40,
         "a context-switch count out of range"),
        (0 < f["peak_rss_kib"] < 1 << 40, "peak RSS %d KiB" % f["peak_rss_kib"]),
    ]
    return next((defect for ok, defect in checks if not ok), "")



#: CPU time a trial's process may spend besides its calls (start-up, the namespaces,
#: loading, the counter's calibration, filling the buffers), in ns: generous, so that
#: only a gross understatement is caught. Added to it: the work claimed, times
#: :data:`CPU_CLAIM_RATIO`.
CPU_ALLOWANCE_NS = 250_000_000
CPU_CLAIM_RATIO = 8


def unclaimed_cpu(f: dict[str, int | float], cycles: np.ndarray, run: DriverRun,
                  calls: int, warmup: int) -> str:
    """Why the trial's claimed work cannot be the work its process did, or "": the
    kernel's CPU time of the process (``wait4``: its own and that of every process it
    reaped) is more than :data:`CPU_ALLOWANCE_NS` plus :data:`CPU_CLAIM_RATIO` times the
    claimed time of its calls (the per-call ticks, the warm-up at their mean, the
    batch; converted at this host's counter rate, or for another counter its claimed
    rate, already held to :data:`OTHER_COUNTER_RATES`). CPU time is per process, so a
    busy machine does not inflate it; the counter's ticks run on while the process
    waits, so load only raises the claim. Unchecked behind an emulator, whose
    translation costs CPU time the guest's counter does not see."""
    if len(driver_command()) > 1 or run.cpu_ns <= 0:
        return ""
    name, _, frequency = counter_floor()
    counter = wire.COUNTERS[int(f["counter_id"])][0]
    rate = frequency if counter == name else float(f["frequency_hz"])
    loop = int(cycles.sum(dtype="uint64"))
    ticks = loop + (loop / calls * warmup if calls else 0) + int(f["batch_ticks"])
    claimed_ns = ticks / rate * 1e9
    if run.cpu_ns <= CPU_ALLOWANCE_NS + CPU_CLAIM_RATIO * claimed_ns:
        return ""
    return ("calls claiming %.3g ms of work (%d ticks at %.4g Hz, warm-up and batch "
            "included) in a process the kernel accounted %.3g ms of CPU time: more than "
            "%d x the claim plus %d ms of start-up" % (
                claimed_ns / 1e6, round(ticks), rate, run.cpu_ns / 1e6, CPU_CLAIM_RATIO,
                CPU_ALLOWANCE_NS // 10**6))


def other_digest(digests: bytes, expected: bytes) -> str:
    """Why a trial's TRIAL_DIGEST (the digest its last timed call left, then its batch's
    last) is not the message's digest from a run of its own (``expected``), or ""."""
    half = len(digests) // 2
    for name, digest in (("the last timed call", digests[:half]),
                         ("the last batch call", digests[half:])):
        if digest != expected:
            return ("%s left the digest %s..., but the same message hashes to %s... in a "
                    "run of its own: the library computes something else when it is "
                    "timed" % (name, digest[:8].hex(), expected[:8].hex()))
    return ""


#: The honesty batch (``csrc/driver/honesty.h``): its calls on varied messages may cost
#: per call up to this many times the batch's on one message, plus
#: :data:`HONESTY_SLACK_NS` per sub-batch (the CPU-time read, a timer interrupt),
#: before the trial is refused. Both sides are the least thread CPU time per call of
#: a sub-batch (the honesty batch has at least 4), which a busy host hardly moves: it
#: is not counted while the thread waits, and a burst of interrupts or of time the
#: hypervisor takes lands in one sub-batch, not in all. Generous: an honest library
#: costs the same on both (1.0 to 1.4 x measured, load 6 on 2 cores), while one that
#: keeps its last answer costs a copy in the batch against a computed call in the
#: honesty batch: 88 x at 64 KiB (issue 45).
HONESTY_TOLERANCE = 3.0
HONESTY_SLACK_NS = 50_000


def costly_honesty(f: dict[str, int | float]) -> str:
    """Why the trial's batch on one message cannot be the work its honesty batch on
    varied messages of the same length shows, or "" (also where no CPU time was
    measured: a system without per-thread CPU time)."""
    if not (f["honesty_min_calls"] and f["batch_min_calls"] and f["batch_min_cpu_ns"]):
        return ""
    batch_ns = f["batch_min_cpu_ns"] / f["batch_min_calls"]
    honest_ns = f["honesty_min_cpu_ns"] / f["honesty_min_calls"]
    if f["honesty_min_cpu_ns"] <= (HONESTY_TOLERANCE * batch_ns * f["honesty_min_calls"]
                                   + HONESTY_SLACK_NS):
        return ""
    return ("honesty batch: calls on varied messages of the same length cost %.0f ns of "
            "CPU time each, the batch's on one message %.0f ns (%.1f x, more than %g x "
            "plus %d us a sub-batch): an answer kept from an earlier call stands in for "
            "the work" % (
                honest_ns, batch_ns, honest_ns / batch_ns, HONESTY_TOLERANCE,
                HONESTY_SLACK_NS // 1000))


def other_honesty_digest(fold: bytes, expected: bytes) -> str:
    """Why the honesty batch's HONESTY_DIGEST (the SM3 of its digests) is not the one a
    run of its own computed on the same messages, or ""."""
    if fold == expected:
        return ""
    return ("honesty batch: its digests of varied messages fold to %s..., but the same "
            "messages fold to %s... in a run of its own: not every call was computed" % (
                fold[:8].hex(), expected[:8].hex()))


#: The batch's own figures may fall below the on-CPU time ngcc read from outside around
#: it (:mod:`ngcc.driver.outside`) by this share of it plus :data:`OUTSIDE_SLACK_NS`
#: (the two stops' system calls and wake-ups, which the outside figure also holds)
#: before the trial is refused. Both are the kernel's count of the same thread, so an
#: honest trial's own figure is the outside one less the stops, under any load.
OUTSIDE_SLACK_SHARE = 0.05
OUTSIDE_SLACK_NS = 2_000_000


def below_outside(f: dict[str, int | float], outside_ns: int | None) -> str:
    """Why the trial's batch figures (its thread's CPU time, its counter ticks at this
    host's rate) cannot hold the on-CPU time the kernel accounted its thread around
    the batch, read from outside the process (``outside_ns``), or "" (also where none
    was read, and behind an emulator, whose translation the guest's figures miss)."""
    if outside_ns is None or not f["batch_calls"] or len(driver_command()) > 1:
        return ""
    floor = outside_ns - OUTSIDE_SLACK_SHARE * outside_ns - OUTSIDE_SLACK_NS
    name, _, frequency = counter_floor()
    counter = wire.COUNTERS[int(f["counter_id"])][0]
    rate = frequency if counter == name else float(f["frequency_hz"])
    figures = [("its thread's CPU time", f["batch_thread_cpu_ns"]),
               ("its counter's ticks", f["batch_ticks"] / rate * 1e9)]
    for figure, ns in figures:
        if ns and ns < floor:
            return ("the batch's %d calls claim %.3g ms (%s), below the %.3g ms of CPU "
                    "time the kernel accounted the thread around it, read by ngcc from "
                    "outside the process (more than %g %% plus %d ms below): a figure "
                    "the library made up" % (
                        f["batch_calls"], ns / 1e6, figure, outside_ns / 1e6,
                        100 * OUTSIDE_SLACK_SHARE, OUTSIDE_SLACK_NS // 10**6))
    return ""


#: A leak run's two classes, their per-call ticks' medians (converted at this host's
#: counter rate) and their least on-CPU time per call in sub-batches of one class timed
#: from outside (:attr:`ngcc.driver.outside.Outside.class_ns`), may differ between the
#: classes by amounts apart by this share of the costlier class's outside time plus
#: :data:`LEAK_OUTSIDE_SLACK_NS` before the run is refused. Generous: it sees a
#: difference of whole microseconds, the outside sub-batches run each class alone (the
#: branch predictor learns them), and the ticks hold the counter's own cost; load
#: raises neither difference (a median call is not preempted, CPU time is not counted
#: while the thread waits).
LEAK_OUTSIDE_SHARE = 0.5
LEAK_OUTSIDE_SLACK_NS = 1_000


def leak_outside_differs(medians_ticks: tuple[float, float] | None, counter_id: int,
                         frequency_hz: float, outside_ns: tuple[float, float] | None) -> str:
    """Why the difference between a leak run's classes in its per-call ticks (their
    medians, ``medians_ticks``) cannot be the one the kernel's on-CPU time of the
    same thread shows between them, read by ngcc from outside the process
    (``outside_ns``, per call), or "" (also where either is missing, and behind an
    emulator, whose translation the guest's counter misses)."""
    if medians_ticks is None or outside_ns is None or len(driver_command()) > 1:
        return ""
    name, _, frequency = counter_floor()
    rate = frequency if wire.COUNTERS[counter_id][0] == name else frequency_hz
    claimed = [ticks / rate * 1e9 for ticks in medians_ticks]
    told, seen = claimed[1] - claimed[0], outside_ns[1] - outside_ns[0]
    bound = LEAK_OUTSIDE_SHARE * max(outside_ns) + LEAK_OUTSIDE_SLACK_NS
    if abs(told - seen) <= bound:
        return ""
    return ("the per-call ticks put random messages %+.0f ns from the fixed one (medians "
            "%.0f and %.0f ns), but the kernel's on-CPU time of the thread, read by ngcc "
            "from outside the process around calls of one class, puts them %+.0f ns "
            "apart (%.0f and %.0f ns a call; more than %g %% plus %d ns off): per-call "
            "figures the library made up" % (
                told, claimed[0], claimed[1], seen, outside_ns[0], outside_ns[1],
                100 * LEAK_OUTSIDE_SHARE, LEAK_OUTSIDE_SLACK_NS))
