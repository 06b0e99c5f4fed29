"""``ngcc ct``: the constant-time analysis of libraries and submission folders (each
one's debug twin under valgrind memcheck, the message marked undefined)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ngcc.base.errors import NgccError
from ngcc.base.untrusted import plain
from ngcc.cli.common import EXIT_RUNTIME_ERROR, path_labels, usage_checks
from ngcc.cli.options import add_labels, add_out

if TYPE_CHECKING:
    from ngcc.evidence.ct_evidence import CtEvidence

#: The sites printed under a library's verdict (the evidence holds them all).
SITES_SHOWN = 5


def add_command(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "ct", help="find where message data decides a branch or an address (valgrind "
                   "memcheck on a debug twin)",
        description="For each library or submission folder, build its debug twin (the same "
                    "sources and flags plus -g) and hash messages of every length that "
                    "reaches a path (0, 1, a partial block, one and several blocks, bit "
                    "lengths not a multiple of 8 where the library takes them) in "
                    "ngcc-driver under valgrind memcheck, the message bytes marked "
                    "undefined and the length defined. Each memcheck report is a site: the "
                    "source line where message data decides a branch or an address. "
                    "Verdict per library: 'constant-time', 'leaks' (N sites in K "
                    "functions) or 'not analysed' with the reason. Memcheck cannot see "
                    "instructions whose time depends on their operands, nor the "
                    "microarchitecture: `ngcc leak` times them. Evidence: "
                    "DIR/<candidate>/<label>__ct.json. Exit status 0 if every library is "
                    "constant-time, 1 otherwise.")
    parser.add_argument("targets", nargs="+", metavar="LIB|FOLDER",
                        help="an instance name (see `ngcc list`; name:variant for one "
                             "variant), a library ngcc build made, or a submission folder")
    add_labels(parser)
    add_out(parser, "the evidence", Path("ngcc-ct"))
    parser.set_defaults(run=_run_ct)


def _run_ct(args: argparse.Namespace) -> int:
    from ngcc.evidence import ct_evidence as _evidence
    from ngcc.library.registry import Instance, instance, run_labels
    from ngcc.measure import ct_measurement as _ct

    with usage_checks():  # a typo in a name, said before any twin is built
        targets: list[Instance | Path] = [Path(name) if Path(name).is_dir() else
                                          instance(name) for name in args.targets]
        libraries = [t for t in targets if isinstance(t, Instance)]
        wanted = [label for target, label in zip(targets, path_labels(args.targets,
                                                                       args.labels),
                                                 strict=True) if isinstance(target, Instance)]
        labels = iter(run_labels(libraries, wanted))
    status, used = 0, set[str]()
    for target in targets:
        label = next(labels) if isinstance(target, Instance) else _folder_label(target, used)
        used.add(label)
        try:
            evidence = _ct.constant_time(target, label=label)
            path = _evidence.write_evidence(evidence, args.out)
        except NgccError as exc:  # this one failed; the others still run
            print("%s  ERROR  %s" % (label, plain(str(exc))), flush=True)
            status = EXIT_RUNTIME_ERROR
            continue
        print(_lines(evidence, path), flush=True)
        if evidence.verdict != _evidence.CONSTANT_TIME:
            status = EXIT_RUNTIME_ERROR
    print("evidence: %s" % args.out)
    return status


def _folder_label(folder: Path, used: set[str]) -> str:
    """A submission folder's label: its name made a valid one, unique in this run."""
    from ngcc.base.names import is_valid_name

    base = folder.resolve().name
    base = base if is_valid_name(base) else "folder"
    label, n = base, 2
    while label in used:
        label, n = "%s@%d" % (base, n), n + 1
    return label


def _lines(evidence: CtEvidence, path: Path) -> str:
    """A library's verdict line, its first sites, and its evidence file."""
    lines = ["%s  %s" % (evidence.label, plain(evidence.summary()))]
    for site in evidence.sites[:SITES_SHOWN]:
        lines.append("    %s:%d  %s  %s  %s" % (plain(site.file), site.line,
                                              plain(site.function), site.kind,
                                              plain(site.quote)))
    if len(evidence.sites) > SITES_SHOWN:
        lines.append("    ... %d more in %s" % (len(evidence.sites) - SITES_SHOWN, path))
    return "\n".join(lines)
