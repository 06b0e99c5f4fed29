"""``ngcc build``: an ICCS submission folder compiled into an instance library."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ngcc.base.errors import UsageError
from ngcc.base.untrusted import plain
from ngcc.cli.common import _positive_seconds, table, usage_checks
from ngcc.cli.options import add_out, add_setting
from ngcc.library.cc import DEFAULT_TIMEOUT


def add_build(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "build", help="compile an ICCS submission folder into an instance library",
        description="Compile an ICCS hash instance folder (CryptHash_AlgorithmInstance.h "
                    "defining ALGORITHM_INSTANCE and DIGEST_BIT_LENGTH, and its C sources) "
                    "into an instance library. The compiler decides what goes in: each C "
                    "file is compiled with the flags and defines given, a file whose object "
                    "defines main() is a program and is left out (as is the official "
                    "KAT_CryptHash.c), and the link refuses undefined symbols, naming them. "
                    "Only regular files are read, within a size limit, and the compiler has "
                    "a deadline. The library path (or its folder) then works wherever an "
                    "instance name does: hash, kat, campaign; its <library>.json sidecar "
                    "records the build's provenance.",
        epilog="example: ngcc build Reference_Implementation/WChain-V1-512 --define "
               "WCHAIN_NO_MAIN --define WCHAIN_DISABLE_SIMD --flags performance "
               "--extra-cflags=-maes --label wchain-perf --out built/perf")
    parser.add_argument("source_dir", type=Path, metavar="SOURCE_DIR",
                        help="the instance folder (CryptHash_AlgorithmInstance.h and sources)")
    parser.add_argument("--name", help="instance name, which selects the KAT manifest line "
                                       "(default: the header's ALGORITHM_INSTANCE)")
    add_setting(parser, "labels", dest="label", type=str,
                help="the library's name in files, tables and plots (default: the instance "
                     "name)")
    parser.add_argument("--flags", default="reference", metavar="SET",
                        help="reference, performance, resource (the NGCC guide's flag sets) "
                             "or literal compiler flags in quotes; default: %(default)s")
    parser.add_argument("--define", action="append", default=[], metavar="NAME[=VALUE]",
                        help="define a macro for every source (-D); repeatable, e.g. "
                             "--define WCHAIN_NO_MAIN")
    parser.add_argument("--extra-cflags", default="", metavar='"FLAGS"',
                        help="flags added to the set, e.g. --extra-cflags=\"-maes -mpclmul\"")
    parser.add_argument("--exclude", action="append", default=[], metavar="FILE",
                        help="leave this C file of the folder out; repeatable")
    parser.add_argument("--candidate", metavar="ID",
                        help="candidate id, any of `ngcc list --candidates` (default: the one "
                             "candidate with an instance of that name, e.g. laurus_512 is "
                             "hash-14, else external)")
    parser.add_argument("--libs", default="", metavar='"OPTIONS"',
                        help='link options after the objects, e.g. --libs="-lcrypto" '
                             "(-Wl,-z,defs still applies)")
    parser.add_argument("--manifest", type=Path, metavar="FILE",
                        help="a kat.sha256 manifest ngcc does not ship: recorded, so every KAT "
                             "check of the library uses it")
    add_out(parser, "the library and its sidecar (default: ./ngcc-build/<name>/)")
    parser.add_argument("--timeout", type=_positive_seconds, metavar="SECONDS",
                        default=DEFAULT_TIMEOUT,
                        help="time all compiler runs may take together; default: %(default)g")
    parser.set_defaults(run=_run_build)


def _check_options(args: argparse.Namespace) -> None:
    """The names and the flag set, checked before the folder is read."""
    from ngcc.base.names import check_name
    from ngcc.library.registry import check_candidate

    with usage_checks():
        if args.candidate is not None:
            check_candidate(args.candidate, "--candidate")
        for given, what in ((args.label, "--label"), (args.name, "--name")):
            if given is not None:
                check_name(given, what)
        if any(flag.startswith(("-o", "--output")) for flag in args.extra_cflags.split()):
            raise UsageError("--extra-cflags may not name an output file: the library is "
                             "written to --out")


def _run_build(args: argparse.Namespace) -> int:
    from ngcc.library.build import build

    _check_options(args)
    result = build(args.source_dir, name=args.name, flags=args.flags, out_dir=args.out,
                   candidate=args.candidate, defines=args.define,
                   extra_cflags=args.extra_cflags, label=args.label, exclude=args.exclude,
                   timeout=args.timeout, libs=args.libs, manifest=args.manifest)
    inst, facts = result.instance, result.provenance
    for note in result.notes:  # the submission's text (names, compiler lines): inert
        print(plain(note))
    for name, why in result.skipped.items():
        print(plain("skipped %s: %s" % (name, why)))
    for line in result.warnings.rstrip().splitlines():
        print(plain(line), file=sys.stderr)
    print(table([(key, plain(value)) for key, value in [
        ("instance", inst.name),
        ("label", inst.label or inst.name),
        ("candidate", inst.candidate),
        ("digest bits", str(inst.digest_bits)),
        ("library", str(inst.library)),
        ("sha256", result.sha256),
        ("flags", " ".join(inst.cflags)),
        ("compiler", inst.compiler),
        ("sources", " ".join(result.sources)),
        ("kat basis", " ".join([facts.kat_basis, *facts.kat_files])),
        ("warnings", "%d line(s)" % len(result.warnings.splitlines())),
    ]]))
    return 0
