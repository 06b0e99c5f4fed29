"""Benchmark: every Pavelor and Wish variant in TSC ticks per byte, against ref and
against this machine's AES round floor at the variant's register width (and, with
--baseline, the ref of another commit; with --theirs, any built library).

    python benchmarks/aes_variants.py [--baseline GITREF] [--reps 7]
                                      [--theirs PATH.so ...]

One run measures everything: the libraries take turns, round after round, so that
load from other processes spreads over all of them alike. Each round times a few
calls (ngcc.time_calls) and keeps the fastest, the call least disturbed by other
processes; each figure is the median over the rounds of those minima, and "best"
the least of them. On a busy machine a 64 KiB call of a ref variant (2 to 10 ms) is
preempted however often it is repeated, and the slower a library, the more: the
speed-ups are therefore taken at 1 KiB.

The floor of a variant is the AES rounds its instance needs per message byte divided
by this machine's throughput of AES rounds at the variant's register width: 128 bits
(AESENC: ref, opt), 256 (VAESENC ymm: vaes) or 512 (VAESENC zmm: avx512), each
measured by a small C loop of 12 independent VAESENC chains built here (a width the
CPU or compiler lacks is left out). ``--baseline main`` builds the ref variants of
another commit (git archive) with the flags of today's ref and times them beside the
others. ``--theirs PATH.so`` (repeatable) times any built library of a Pavelor or Wish
instance (e.g. a submitter's, from ``ngcc build``) beside ours and prints ours ÷
theirs for the fastest of our variants at each length (below 1: ours faster).
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
SIZES = (65536, 1024, 64)
CALLS = {65536: 10, 1024: 300, 64: 2000}
RATIO_SIZE = 1024  # the speed-ups (see the module docstring)

# AES rounds per absorbed message byte: Pavelor's permutation is 24 rounds of 19 AES
# rounds (docs/spec/pavelor.md §10) per rate block; Wish's is 2 rounds on every lane
# per step (docs/spec/wish.md §1, §6) per rate block (half the lanes).
AES_ROUNDS_PER_BYTE = {
    "Pavelor-512": 24 * 19 / 192, "Pavelor-768": 24 * 19 / 128, "Pavelor-1024": 24 * 19 / 64,
    "Wish512": 2 * 9 * 8 / 64, "Wish1024": 2 * 12 * 16 / 128,
}

# Independent chains of AES rounds at one register width: AES rounds (128-bit lanes)
# per TSC tick, the best of 20 runs. WIDTH_BITS and the intrinsics come from -D flags.
AES_LOOP = r"""
#include <stdio.h>
#include <stdint.h>
#include <immintrin.h>
#include <x86intrin.h>
#define STREAMS 12
#define LANES (WIDTH_BITS / 128)
int main(void)
{
    VEC x[STREAMS], k = SET1(0x5a5a5a5a);
    uint64_t best = ~(uint64_t)0;
    int i, j, run, sum = 0;
    for (j = 0; j < STREAMS; j++) x[j] = SET1(j);
    for (run = 0; run < 20; run++) {
        uint64_t start = __rdtsc(), ticks;
        for (i = 0; i < 100000; i++)
            for (j = 0; j < STREAMS; j++) x[j] = AESENC(x[j], k);
        ticks = __rdtsc() - start;
        if (ticks < best) best = ticks;
    }
    for (j = 0; j < STREAMS; j++) sum ^= ((const int *)&x[j])[0];
    printf("%.4f %d\n", 100000.0 * STREAMS * LANES / (double)best, sum & 1);
    return 0;
}
"""

# width -> (flags, vector type, set1, aesenc, cpu features the loop needs)
AES_WIDTHS = {
    128: (["-maes"], "__m128i", "_mm_set1_epi32", "_mm_aesenc_si128", ("aes",)),
    256: (["-mavx2", "-mvaes"], "__m256i", "_mm256_set1_epi32", "_mm256_aesenc_epi128",
          ("avx2", "vaes")),
    512: (["-mavx512f", "-mvaes"], "__m512i", "_mm512_set1_epi32", "_mm512_aesenc_epi128",
          ("avx512f", "vaes")),
}


def variant_width(inst: ngcc.Instance) -> int:
    """The register width of a variant's AES rounds (ref: bitsliced, against 128)."""
    features = set(inst.cpu_features)
    return 512 if "avx512f" in features else 256 if "vaes" in features else 128


def aes_rounds_per_tick(cc: list[str], work: Path) -> dict[int, float]:
    """AES rounds per TSC tick at each register width this CPU and compiler have."""
    from ngcc.library.registry import cpu_features

    (work / "aes.c").write_text(AES_LOOP)
    floors = {}
    for width, (flags, vec, set1, aesenc, needs) in AES_WIDTHS.items():
        if not set(needs) <= cpu_features():
            continue
        program = work / ("aes%d" % width)
        built = subprocess.run(cc + ["-O2", "-funroll-loops", *flags, "-DWIDTH_BITS=%d" % width,
                                     "-DVEC=%s" % vec, "-DSET1=%s" % set1,
                                     "-DAESENC=%s" % aesenc, str(work / "aes.c"), "-o",
                                     str(program)], capture_output=True, check=False)
        if built.returncode == 0:
            out = subprocess.run([str(program)], check=True, capture_output=True, text=True)
            floors[width] = float(out.stdout.split()[0])
    return floors


@dataclass
class Library:
    """One library to time: an instance name:variant, or a baseline library path."""

    instance: str
    label: str  # "ref", "opt", "ref@main", "theirs1"
    target: str | Path
    width: int = 128  # the register width of its AES rounds (0: not ours, no floor)


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


def measure(libraries: list[Library], reps: int
            ) -> tuple[dict[tuple[str, str, int], float], dict[tuple[str, str, int], float]]:
    """({(instance, label, message bytes): ticks per call}, the same for the best
    round): the median over ``reps`` rounds of the fastest call of each round, and the
    fastest call of all; the libraries take turns."""
    samples: dict[tuple[str, str, int], list[float]] = {}
    for _ in range(reps):
        for lib in libraries:
            for size in SIZES:
                result = ngcc.time_calls(lib.target, size, calls=CALLS[size])
                samples.setdefault((lib.instance, lib.label, size), []).append(
                    float(result.min_cycles))
    return ({key: statistics.median(values) for key, values in samples.items()},
            {key: min(values) for key, values in samples.items()})


def table(libraries: list[Library], ticks: dict[tuple[str, str, int], float],
          best: dict[tuple[str, str, int], float], floors: dict[int, float],
          baseline: str | None) -> str:
    def per_byte(instance: str, label: str, size: int) -> float:
        return ticks[(instance, label, size)] / size

    head = ["instance", "variant", "width", "64 KiB ticks/B", "(best)", "1 KiB ticks/B",
            "64 B ticks/B"]
    if baseline:
        head.append("speed-up vs ref@%s" % baseline)
    head += ["speed-up vs ref (1 KiB)", "floor ticks/B", "× floor (64 KiB, best)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for lib in libraries:
        now = per_byte(lib.instance, lib.label, RATIO_SIZE)
        row = [lib.instance, lib.label, str(lib.width) if lib.width else "–",
               "%.3f" % per_byte(lib.instance, lib.label, 65536),
               "%.3f" % (best[(lib.instance, lib.label, 65536)] / 65536),
               "%.3f" % now, "%.2f" % per_byte(lib.instance, lib.label, 64)]
        if baseline:
            row.append("%.2f" % (per_byte(lib.instance, "ref@%s" % baseline, RATIO_SIZE) / now))
        row.append("%.2f" % (per_byte(lib.instance, "ref", RATIO_SIZE) / now))
        if lib.width in floors:
            floor = AES_ROUNDS_PER_BYTE[lib.instance] / floors[lib.width]
            row += ["%.3f" % floor,
                    "%.2f" % (best[(lib.instance, lib.label, 65536)] / 65536 / floor)]
        else:
            row += ["–", "–"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def versus_theirs(libraries: list[Library], ticks: dict[tuple[str, str, int], float]
                  ) -> list[str]:
    """Ours (the fastest variant at each length) ÷ each --theirs library."""
    lines = []
    for lib in libraries:
        if not lib.label.startswith("theirs"):
            continue
        ours = [lab for lab in {x.label for x in libraries if x.instance == lib.instance}
                if not lab.startswith(("theirs", "ref@"))]
        cells = []
        for size in SIZES:
            fastest = min(ours, key=lambda lab: ticks[(lib.instance, lab, size)])
            cells.append("%d B: %s %.3f" % (size, fastest, ticks[(lib.instance, fastest, size)]
                                            / ticks[(lib.instance, lib.label, size)]))
        lines.append("%s, ours ÷ %s (%s): %s" % (lib.instance, lib.label, lib.target,
                                                  "; ".join(cells)))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="GITREF",
                        help="also time the ref variants of this git revision (e.g. main)")
    parser.add_argument("--reps", type=int, default=7, help="rounds over all libraries")
    parser.add_argument("--theirs", action="append", default=[], metavar="PATH.so",
                        help="a built library of a Pavelor or Wish instance to time beside "
                             "ours (repeatable)")
    parser.add_argument("--family", choices=FAMILIES, help="only this family")
    args = parser.parse_args()
    cc = shlex.split(os.environ.get("CC", "cc"))
    families = [args.family] if args.family else list(FAMILIES)
    libraries = [Library(inst.name, inst.variant, inst.key, variant_width(inst))
                 for inst in ngcc.instances(all_variants=True)
                 if inst.family in families and not inst.missing_cpu_features]
    for n, path in enumerate(args.theirs):
        theirs = ngcc.instance(path)
        libraries.append(Library(theirs.name, "theirs%d" % (n + 1), Path(path), 0))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        floors = aes_rounds_per_tick(cc, work)
        if args.baseline:
            libraries += build_baseline(args.baseline, cc, work)
        libraries.sort(key=lambda lib: (list(AES_ROUNDS_PER_BYTE).index(lib.instance),
                                        lib.label.startswith(("ref@", "theirs")),
                                        lib.label != "ref"))
        ticks, best = measure(libraries, args.reps)
    counter = ngcc.counter_info()
    print("AES rounds per tick (12 independent chains): %s; counter: %s"
          % (", ".join("%d-bit %.2f" % item for item in sorted(floors.items())), counter))
    print("load average %.2f %.2f %.2f; median over %d rounds of the fastest of %d calls at "
          "64 KiB (%d at 1 KiB, %d at 64 B), (best) the fastest of all; speed-ups at 1 KiB.\n"
          % (*os.getloadavg(), args.reps, CALLS[65536], CALLS[1024], CALLS[64]))
    print(table(libraries, ticks, best, floors, args.baseline))
    for line in versus_theirs(libraries, ticks):
        print(line)


if __name__ == "__main__":
    main()
