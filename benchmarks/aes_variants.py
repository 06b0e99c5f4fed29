"""Benchmark: every Pavelor and Wish variant in TSC ticks per byte, against ref and
against this machine's AES-NI floor (and, with --baseline, the ref of another commit).

    python benchmarks/aes_variants.py [--baseline GITREF] [--reps 7] [--markdown]

One run measures everything: the libraries take turns, round after round, so that
load from other processes spreads over all of them alike. Each round times a few
calls (ngcc.time_calls) and keeps the fastest, the call least disturbed by other
processes; each figure is the median over the rounds of those minima. On a busy
machine a 64 KiB call of a ref variant (2 to 10 ms) is preempted however often it is
repeated, and the slower a library, the more: the speed-ups are therefore taken at
4 KiB (calls under 1.5 ms, which mostly run undisturbed; per byte within a few per
cent of 64 KiB, the fixed cost being one or two permutations). The AES-NI floor of an
instance is the AES rounds it needs per message byte divided by the AESENC
throughput of this machine (a small C loop of independent AESENC streams, built
here). ``--baseline main`` builds the ref variants of another commit (git archive)
with the flags of today's ref and times them beside the others: the old-vs-new
figure of a change, from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import ngcc

REPO = Path(__file__).resolve().parents[1]
FAMILIES = ("Pavelor", "Wish")
SIZES = (65536, 4096, 32)
CALLS = {65536: 10, 4096: 200, 32: 2000}
RATIO_SIZE = 4096  # the speed-ups (see the module docstring)

# AES rounds per absorbed message byte: Pavelor's permutation is 24 rounds of 19 AES
# rounds (docs/spec/pavelor.md §10) per rate block; Wish's is 2 rounds on every lane
# per step (docs/spec/wish.md §1, §6) per rate block (half the lanes).
AES_ROUNDS_PER_BYTE = {
    "Pavelor-512": 24 * 19 / 192, "Pavelor-768": 24 * 19 / 128, "Pavelor-1024": 24 * 19 / 64,
    "Wish512": 2 * 9 * 8 / 64, "Wish1024": 2 * 12 * 16 / 128,
}

AESENC_LOOP = r"""
#include <stdio.h>
#include <stdint.h>
#include <wmmintrin.h>
#include <x86intrin.h>
#define STREAMS 12
int main(void)
{
    __m128i x[STREAMS], k = _mm_set1_epi32(0x5a5a5a5a), s;
    uint64_t best = ~(uint64_t)0;
    int i, j, run;
    for (j = 0; j < STREAMS; j++) x[j] = _mm_set1_epi32(j);
    for (run = 0; run < 20; run++) {
        uint64_t start = __rdtsc(), ticks;
        for (i = 0; i < 200000; i++)
            for (j = 0; j < STREAMS; j++) x[j] = _mm_aesenc_si128(x[j], k);
        ticks = __rdtsc() - start;
        if (ticks < best) best = ticks;
    }
    s = x[0];
    for (j = 1; j < STREAMS; j++) s = _mm_xor_si128(s, x[j]);
    printf("%.4f %d\n", 200000.0 * STREAMS / (double)best, _mm_cvtsi128_si32(s) & 1);
    return 0;
}
"""


@dataclass
class Library:
    """One library to time: an instance name:variant, or a baseline library path."""

    instance: str
    label: str  # "ref", "opt", "ref@main"
    target: str | Path


def aesenc_per_tick(cc: list[str], work: Path) -> float:
    """AESENC per TSC tick with 12 independent streams (best of 20 runs)."""
    (work / "aesenc.c").write_text(AESENC_LOOP)
    subprocess.run(cc + ["-O2", "-funroll-loops", "-maes", str(work / "aesenc.c"), "-o",
                         str(work / "aesenc")], check=True)
    out = subprocess.run([str(work / "aesenc")], check=True, capture_output=True, text=True)
    return float(out.stdout.split()[0])


def build_baseline(ref: str, cc: list[str], work: Path) -> list[Library]:
    """The ref variants of Pavelor and Wish at git revision ``ref``, compiled with the
    flags of today's ref, each with the sidecar that makes it an external instance."""
    archive = work / "baseline.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), ref, "algorithms"],
                   check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(work / "baseline", filter="data")
    root = work / "baseline" / "algorithms"
    libraries = []
    for family in FAMILIES:
        folder = root / family.lower()
        spec = json.loads((folder / "instances.json").read_text())
        for entry in spec["instances"]:
            today = ngcc.instance("%s:ref" % entry["name"])
            flags = [f for f in today.cflags if not f.startswith(("-I", "-D"))]
            library = work / ("%s.%s.so" % (entry["name"], ref.replace("/", "_")))
            subprocess.run(cc + flags + ["-I", str(root / "include"), "-I", str(folder),
                                         "-DDIGEST_BIT_LENGTH=%d" % entry["digest_bits"],
                                         '-DALGORITHM_INSTANCE="%s"' % entry["name"],
                                         "-shared", "-o", str(library)]
                           + [str(folder / s) for s in spec["variants"]["ref"]["sources"]],
                           check=True)
            library.with_name(library.name + ".json").write_text(json.dumps({
                "name": entry["name"], "digest_bits": entry["digest_bits"],
                "candidate": today.candidate, "description": "ref at %s" % ref}))
            libraries.append(Library(entry["name"], "ref@%s" % ref, library))
    return libraries


def measure(libraries: list[Library], reps: int) -> dict[tuple[str, str, int], float]:
    """{(instance, label, message bytes): ticks per call}, the median over ``reps``
    rounds of the fastest call of each round; the libraries take turns."""
    samples: dict[tuple[str, str, int], list[float]] = {}
    for _ in range(reps):
        for lib in libraries:
            for size in SIZES:
                result = ngcc.time_calls(lib.target, size, calls=CALLS[size])
                samples.setdefault((lib.instance, lib.label, size), []).append(
                    float(result.min_cycles))
    return {key: statistics.median(values) for key, values in samples.items()}


def table(libraries: list[Library], ticks: dict[tuple[str, str, int], float],
          throughput: float, baseline: str | None) -> str:
    def per_byte(instance: str, label: str, size: int) -> float:
        return ticks[(instance, label, size)] / size

    head = ["instance", "variant", "64 KiB ticks/B", "4 KiB ticks/B", "32 B ticks"]
    if baseline:
        head.append("speed-up vs ref@%s" % baseline)
    head += ["speed-up vs ref", "AES-NI floor ticks/B", "x floor (64 KiB)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for lib in libraries:
        now = per_byte(lib.instance, lib.label, RATIO_SIZE)
        floor = AES_ROUNDS_PER_BYTE[lib.instance] / throughput
        row = [lib.instance, lib.label, "%.2f" % per_byte(lib.instance, lib.label, 65536),
               "%.2f" % now, "%.0f" % ticks[(lib.instance, lib.label, 32)]]
        if baseline:
            row.append("%.2f" % (per_byte(lib.instance, "ref@%s" % baseline, RATIO_SIZE) / now))
        row.append("%.2f" % (per_byte(lib.instance, "ref", RATIO_SIZE) / now))
        row += ["%.2f" % floor, "%.2f" % (per_byte(lib.instance, lib.label, 65536) / floor)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="GITREF",
                        help="also time the ref variants of this git revision (e.g. main)")
    parser.add_argument("--reps", type=int, default=7, help="rounds over all libraries")
    args = parser.parse_args()
    cc = shlex.split(os.environ.get("CC", "cc"))
    libraries = [Library(inst.name, inst.variant, inst.key)
                 for inst in ngcc.instances(all_variants=True)
                 if inst.family in FAMILIES and not inst.missing_cpu_features]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        throughput = aesenc_per_tick(cc, work)
        if args.baseline:
            libraries += build_baseline(args.baseline, cc, work)
        libraries.sort(key=lambda lib: (list(AES_ROUNDS_PER_BYTE).index(lib.instance),
                                        lib.label.startswith("ref@"), lib.label != "ref"))
        ticks = measure(libraries, args.reps)
    counter = ngcc.counter_info()
    print("AESENC throughput here: %.2f per tick (12 independent streams); counter: %s"
          % (throughput, counter))
    print("Median over %d rounds of the fastest of %d calls at 64 KiB (%d at 4 KiB, %d at "
          "32 B); speed-ups at 4 KiB.\n" % (args.reps, CALLS[65536], CALLS[4096], CALLS[32]))
    print(table(libraries, ticks, throughput, args.baseline))


if __name__ == "__main__":
    main()
