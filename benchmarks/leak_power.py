"""Benchmark: the power of ``ngcc leak`` here, and its quiet on constant-time code.

For each leaky fixture (tests/fixtures/leaky/early_exit, tests/fixtures/leak/large_table
and tests/fixtures/leaky/table_sbox, built like submissions), ``--repeats`` leak tests
of up to ``--calls`` calls with the early stop: how many ended in LEAK, and the calls
and seconds each needed (goal: LEAK within 10^6 calls, under 60 s). Then every
built-in instance (``--variants``: every variant this CPU runs) for the same number
of calls without the early stop: its max |t| and the test that gave it (a
constant-time function should stay below 4.5); for every one at or above 4.5, and
for the first fixture, the A/A control too (both classes random: only the harness or
the host can make it differ). Prints figures; asserts nothing.

    python benchmarks/leak_power.py [--calls 1000000] [--length 64] [--repeats 5]
                                    [--seconds 60] [--cpu N] [--variants] [--only NAME]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import ngcc

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
LEAKY = {"early_exit": FIXTURES / "leaky" / "early_exit",
         "large_table": FIXTURES / "leak" / "large_table",
         "table_sbox": FIXTURES / "leaky" / "table_sbox"}


def fixtures(folder: Path) -> dict[str, ngcc.Instance]:
    return {name: ngcc.build(source, out_dir=folder / name).instance
            for name, source in LEAKY.items()}


def power(name: str, inst: ngcc.Instance, args: argparse.Namespace) -> None:
    rows = []
    for _ in range(args.repeats):
        r = ngcc.leak(inst, args.length, calls=args.calls, seconds=args.seconds, cpu=args.cpu)
        rows.append(r)
        print("  %-12s %-16s max |t| %8.2f  %-28s %9d calls  %6.2f s" % (
            name, r.verdict, r.max_t, r.max_test, r.calls, r.seconds), flush=True)
    flagged = [r for r in rows if r.verdict == "LEAK"]
    if flagged:
        print("  %-12s LEAK in %d of %d; calls to flag: median %d, max %d; seconds: median "
              "%.2f, max %.2f" % (name, len(flagged), len(rows),
                                  statistics.median(r.calls for r in flagged),
                                  max(r.calls for r in flagged),
                                  statistics.median(r.seconds for r in flagged),
                                  max(r.seconds for r in flagged)))
    else:
        print("  %-12s LEAK in 0 of %d" % (name, len(rows)))


def quiet(inst: ngcc.Instance, args: argparse.Namespace, control: bool = False) -> float:
    r = ngcc.leak(inst, args.length, calls=args.calls, seconds=args.seconds, cpu=args.cpu,
                  early_stop=False, control=control)
    name = inst.key if inst.builtin and inst.variant != "ref" else inst.name
    print("  %-22s %-16s max |t| %5.2f  %-30s %8d calls  %6.1f s  (%d involuntary switches)"
          % (name + (" [control]" if control else ""), r.verdict, r.max_t, r.max_test,
             r.calls, r.seconds, r.driver.involuntary_switches), flush=True)
    return r.max_t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cpu", type=int)
    parser.add_argument("--variants", action="store_true",
                        help="every built-in variant this CPU can run, not only the defaults")
    parser.add_argument("--only", choices=("fixtures", "builtins"))
    args = parser.parse_args()
    with open("/proc/loadavg") as handle:
        load = handle.read().split()[:3]
    print("ngcc leak power: %d B messages, up to %d calls, %g s; load average %s"
          % (args.length, args.calls, args.seconds, " ".join(load)))
    started = time.monotonic()
    if args.only != "builtins":
        print("leaky fixtures (%d repeats, early stop at |t| > 10):" % args.repeats)
        with tempfile.TemporaryDirectory() as folder:
            built = fixtures(Path(folder))
            for name, inst in built.items():
                power(name, inst, args)
            quiet(built["early_exit"], args, control=True)
    if args.only != "fixtures":
        print("built-in instances (%d calls each, no early stop):" % args.calls)
        builtins = [i for i in ngcc.instances(all_variants=args.variants)
                    if not i.missing_cpu_features]
        for inst in builtins:
            if quiet(inst, args) >= 4.5:
                quiet(inst, args, control=True)
    print("total %.0f s" % (time.monotonic() - started))


if __name__ == "__main__":
    main()
