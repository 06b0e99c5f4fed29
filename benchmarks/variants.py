"""Benchmark: ticks per byte of every built-in instance x variant, and ratios to its ref.

From one run: each variant's median ticks/byte at 32 B and 64 KiB (the median of
several repetitions, each the median of a batch of timed calls, variants
interleaved so that a change in machine load hits them alike); its ratio to the
instance's `ref`; SM3 `ref` against OpenSSL's SM3 (through hashlib, when it has
sm3); and, with --theirs, our `ref` against a submitter's library built with
`ngcc build --flags reference` (ratio ours / theirs: below 1 means ours is faster).

    python benchmarks/variants.py [--family WChain] [--reps 9] [--theirs PATH.so ...]

Ticks are those of ngcc's counter (the TSC on x86-64: a constant rate, not core
cycles where the clock varies). OpenSSL's SM3 is timed with time.perf_counter in
this process and converted at the counter's measured frequency. The timed call
runs on the CPU this process is on; pin it (taskset -c N) on a shared machine.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import time
from pathlib import Path

import ngcc
from ngcc.library.registry import Instance

SIZES = (32, 64 * 1024)
BATCH_TICKS = 50e6  # ticks of hashing per repetition and size (about 20 ms)


def _calls_for(inst: Instance, size: int) -> int:
    """How many timed calls make one repetition of about BATCH_TICKS ticks."""
    probe = ngcc.time_calls(inst, size, calls=3, warmup=1)
    per_call = max(1.0, float(statistics.median(probe.cycles)))
    return max(5, min(20000, int(BATCH_TICKS / per_call)))


def _median_ticks(inst: Instance, size: int, calls: int) -> float:
    """Median ticks of one call, over one batch."""
    return float(statistics.median(ngcc.time_calls(inst, size, calls=calls, warmup=2).cycles))


def _openssl_sm3_ticks(size: int, calls: int, frequency_hz: float) -> float:
    """Median ticks of one hashlib SM3 call on ``size`` bytes (perf_counter, converted)."""
    message = ngcc.default_message(size)
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        hashlib.new("sm3", message).digest()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * frequency_hz


def measure(subjects: list[Instance], reps: int, with_openssl: bool
            ) -> dict[tuple[str, int], list[float]]:
    """Each subject's median ticks per call in each of ``reps`` repetitions, by
    (subject key, size); the key "openssl:SM3" holds hashlib's SM3."""
    frequency = ngcc.counter_info().frequency_hz
    calls = {(s.key, size): _calls_for(s, size) for s in subjects for size in SIZES}
    samples: dict[tuple[str, int], list[float]] = {key: [] for key in calls}
    if with_openssl:
        for size in SIZES:
            samples[("openssl:SM3", size)] = []
    for _ in range(reps):
        for size in SIZES:
            for subject in subjects:
                key = (subject.key, size)
                samples[key].append(_median_ticks(subject, size, calls[key]))
            if with_openssl:
                samples[("openssl:SM3", size)].append(
                    _openssl_sm3_ticks(size, calls[("SM3:ref", size)], frequency))
    return samples


def _conditions(reps: int) -> list[str]:
    counter = ngcc.counter_info()
    registry = ngcc.instance("SM3")
    try:
        cpu = sorted(os.sched_getaffinity(0))
    except OSError:
        cpu = []
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo
                  if line.startswith("model name")), platform.processor())
    return [
        "cpu        %s (allowed CPUs %s)" % (model, ",".join(map(str, cpu))),
        "counter    %s at %.1f MHz (ticks, not core cycles)" % (
            counter.name, counter.frequency_hz / 1e6),
        "load       %.2f %.2f %.2f (1/5/15 min average, other work on the machine)"
        % os.getloadavg(),
        "compiler   %s" % registry.compiler,
        "method     median of %d repetitions, each the median of a batch of calls of "
        "about %.0e ticks; variants interleaved; (best): the ratio of the least disturbed "
        "repetitions" % (reps, BATCH_TICKS),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append",
                        help="only this family (repeatable), e.g. WChain, SM3")
    parser.add_argument("--reps", type=int, default=9, help="repetitions (default 9)")
    parser.add_argument("--theirs", action="append", default=[], metavar="PATH.so",
                        help="a submitter's library (ngcc build --flags reference) to "
                             "compare with our ref of the same instance name")
    args = parser.parse_args()

    every = [i for i in ngcc.instances(all_variants=True)
             if not args.family or i.family.casefold() in {f.casefold() for f in args.family}]
    runnable = [i for i in every if not i.missing_cpu_features]
    theirs = [ngcc.instance(path) for path in args.theirs]
    builtin_refs = {i.key: i for i in ngcc.instances()} | {i.key: i for i in runnable}
    runnable = list({**{i.key: i for i in runnable},
                     **{key: builtin_refs[key] for key in ("%s:ref" % t.name for t in theirs)
                        if key in builtin_refs}}.values())
    with_openssl = "sm3" in hashlib.algorithms_available and any(
        i.key == "SM3:ref" for i in runnable)
    samples = measure(runnable + theirs, args.reps, with_openssl)
    results = {key: statistics.median(values) for key, values in samples.items()}
    least = {key: min(values) for key, values in samples.items()}

    print("\n".join(_conditions(args.reps)))
    print()
    print("%-20s %-8s %-5s %10s %10s %9s %9s %9s" % (
        "instance", "variant", "ct", "32 B t/B", "64KiB t/B", "÷ref 32B", "÷ref 64K",
        "(best)"))
    for inst in every:
        if inst.missing_cpu_features:
            print("%-20s %-8s %-5s  not run: this CPU lacks %s" % (
                inst.name, inst.variant, "yes" if inst.constant_time else "no",
                ",".join(inst.missing_cpu_features)))
            continue
        per_byte = [results[(inst.key, size)] / size for size in SIZES]
        ref = [results[("%s:ref" % inst.name, size)] / size for size in SIZES]
        best = least[(inst.key, SIZES[-1])] / least[("%s:ref" % inst.name, SIZES[-1])]
        print("%-20s %-8s %-5s %10.2f %10.2f %9.3f %9.3f %9.3f" % (
            inst.name, inst.variant, "yes" if inst.constant_time else "no",
            per_byte[0], per_byte[1], per_byte[0] / ref[0], per_byte[1] / ref[1], best))
    if with_openssl:
        print()
        ours, openssl = (results[("SM3:ref", SIZES[-1])], results[("openssl:SM3", SIZES[-1])])
        print("SM3 at 64 KiB: ours %.2f t/B, OpenSSL (hashlib) %.2f t/B: ours / OpenSSL = %.3f "
              "(best repetitions: %.3f)" % (ours / SIZES[-1], openssl / SIZES[-1], ours / openssl,
                                            least[("SM3:ref", SIZES[-1])]
                                            / least[("openssl:SM3", SIZES[-1])]))
        small = results[("SM3:ref", SIZES[0])] / results[("openssl:SM3", SIZES[0])]
        print("SM3 at 32 B: ours / OpenSSL = %.3f (hashlib's call overhead included)" % small)
    for inst in theirs:
        print()
        ours_key = "%s:ref" % inst.name
        if (ours_key, SIZES[-1]) not in results:
            print("%s (theirs, %s): no built-in ref of that name to compare"
                  % (inst.name, inst.library))
            continue
        print("%s: ours ref / theirs (%s) = %.3f at 32 B, %.3f at 64 KiB" % (
            inst.name, inst.library.name,
            *(results[(ours_key, size)] / results[(inst.key, size)] for size in SIZES)))


if __name__ == "__main__":
    main()
