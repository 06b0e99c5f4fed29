"""``ngcc list`` and ``ngcc hash``: the built-in instances (or the candidate registry)
and the digest of a file with one of them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ngcc.base.errors import NgccError
from ngcc.cli.common import refuse_together, table, usage_checks
from ngcc.library.registry import instance, instances


def add_list(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "list", help="list the built-in hash instances (or every Round 1 candidate)",
        description="List the built-in hash instances, one row per implementation "
                    "variant (the bare name is the default variant, the others are "
                    "NAME:VARIANT): family, candidate id, digest length, variant, "
                    "whether it is constant-time, and whether this CPU can run it. "
                    "With --candidates: every NGCC Round 1 hash candidate of the registry "
                    "instead (id, algorithm, instances with digest bits, manifest lines, "
                    "built-in instances).")
    parser.add_argument("--candidates", action="store_true",
                        help="list the candidate registry instead of the built-in instances")
    parser.add_argument("--library", metavar="INSTANCE",
                        help="print only the library file of INSTANCE (a name of the list, "
                             "NAME:VARIANT included), for a tool that loads it: "
                             "library=$(ngcc list --library WChain-V1-512:opt)")
    parser.set_defaults(run=_run_list)


def _run_list_candidates() -> int:
    from ngcc.library import candidates as _candidates
    from ngcc.library.katfile import read_manifest

    built = {inst.name for inst in instances()}
    rows: list[tuple[str, ...]] = [("id", "algorithm", "instance", "KAT file name",
                                    "digest bits", "manifest lines", "built-in")]
    for found in _candidates.candidates():
        folders = [path.partition("/")[0] for path in read_manifest(found.manifest)]
        for inst in found.instances:
            rows.append((found.id, found.algorithm, inst.name, inst.kat_name,
                         str(inst.digest_bits or "XOF (header)"),
                         str(folders.count(inst.manifest_folder)),
                         "yes" if {inst.name, inst.kat_name} & built else "-"))
    baseline = [inst.name for inst in instances() if inst.candidate == _candidates.BASELINE]
    rows += [(_candidates.BASELINE, "ICCS baseline", name, "-", "-",
              "0 (no official KAT)", "yes") for name in baseline]
    print(table(rows))
    return 0


def _run_list(args: argparse.Namespace) -> int:
    refuse_together(args, ("library", "candidates"))
    if args.library is not None:
        with usage_checks():
            print(instance(args.library).library)
        return 0
    if args.candidates:
        return _run_list_candidates()
    rows: list[tuple[str, ...]] = [("instance", "family", "candidate", "digest bits",
                                    "variant", "constant time", "runs here")]
    defaults = set(instances())
    for i in instances(all_variants=True):
        missing = i.missing_cpu_features
        rows.append((i.name if i in defaults else i.key, i.family, i.candidate,
                     str(i.digest_bits), i.variant, "yes" if i.constant_time else "no",
                     "no (lacks %s)" % ",".join(missing) if missing else "yes"))
    print(table(rows))
    return 0


def add_hash(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "hash", help="print the digest of a file or of standard input",
        description="Hash a file (or standard input, `-`) with one instance and print the "
                    "digest in hex.")
    parser.add_argument("instance", help="instance name (see `ngcc list`) or library path")
    parser.add_argument("file", nargs="?", default="-",
                        help="file to hash; `-` or nothing reads standard input")
    parser.add_argument("--bits", type=int, metavar="N",
                        help="hash only the first N bits (default: the whole input)")
    parser.set_defaults(run=_run_hash)


def _run_hash(args: argparse.Namespace) -> int:
    from ngcc.driver.hashing import hash as hash_data

    with usage_checks():  # a typo fails before waiting for stdin
        inst = instance(args.instance)
        if args.bits is not None and args.bits < 0:
            raise ValueError("--bits must be 0 or more, got %d" % args.bits)
    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise NgccError("cannot read %s: %s" % (args.file, exc.strerror or exc)) from None
    with usage_checks():  # --bits beyond the input
        digest = hash_data(inst, data, args.bits)
    print(digest.hex())
    return 0
