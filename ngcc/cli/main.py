"""The ``ngcc`` command line; ``python -m ngcc`` runs the same :func:`main`.

Each subcommand is one ``_add_<name>(subcommands)`` function that adds its
parser and sets ``run`` to a function ``(args) -> exit status``; listing it in
``SUBCOMMANDS`` makes it available. Errors the user can fix (an ``NgccError``,
a ``ValueError`` or an ``OSError`` such as a missing file) become one line
``ngcc: error: ...`` on stderr and exit status 1; usage errors exit with 2.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from tqdm import tqdm

from ngcc.base import format as _format
from ngcc.base import progress as _progress
from ngcc.base.clock import run_id_now
from ngcc.base.errors import MeasurementWarning, NgccError, TrialFlagWarning
from ngcc.base.untrusted import plain
from ngcc.base.version import __version__
from ngcc.campaign import campaign as _campaign
from ngcc.driver import kat
from ngcc.driver.hashing import hash as hash_data
from ngcc.evidence.model import COUNTER_CHOICES, Job, Record
from ngcc.evidence.run import Run, load_run
from ngcc.library import build as _build
from ngcc.library.registry import Instance, instance, instances, is_library_path
from ngcc.measure import host as _host
from ngcc.measure import locks as _locks
from ngcc.measure import plan as _plan
from ngcc.stats import groups as _analysis

EXIT_RUNTIME_ERROR = 1
EXIT_USAGE = 2
#: ``ngcc campaign``: every job measured, but some stopped at --max-trials above
#: --target-ci (each named in a warning).
EXIT_TARGET_MISSED = 3


class _UsageError(NgccError):
    """A command line that asks for nothing or for something out of range: exit 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, like the runtime errors."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, "ngcc: error: %s (see `%s --help`)\n" % (message, self.prog))


# ------------------------------------------------------------------------------- list

def _add_list(subcommands: argparse._SubParsersAction) -> None:
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
    print(_table(rows))
    return 0


def _run_list(args: argparse.Namespace) -> int:
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
    print(_table(rows))
    return 0


# ------------------------------------------------------------------------------- hash

def _add_hash(subcommands: argparse._SubParsersAction) -> None:
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
    inst = instance(args.instance)  # a typo fails before waiting for stdin
    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise NgccError("cannot read %s: %s" % (args.file, exc.strerror or exc)) from None
    print(hash_data(inst, data, args.bits).hex())
    return 0


# ------------------------------------------------------------------------------- info

def _add_info(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "info", help="show the cycle counter and this machine",
        description="Calibrate the cycle counter (about 50 ms) and show it with the facts "
                    "that decide whether figures from this machine are comparable.")
    parser.set_defaults(run=_run_info)


def _run_info(args: argparse.Namespace) -> int:
    # the same facts, in the same words, as a campaign stores and a report shows them
    print(_table([("item", "value"), *_host.describe(_host.fingerprint())]))
    return 0


# -------------------------------------------------------------------------------- kat

def _add_kat(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "kat", help="check instances against the official known-answer tests",
        description="Regenerate the official KAT files of each instance (in a child "
                    "process, so a crash or hang is a verdict), compare each file's canonical "
                    "SHA-256 with the official manifest, and write a KAT log per instance. "
                    "Verdicts: PASS, MISMATCH, NOKAT, CRASH, TIMEOUT, ERROR. The exit status "
                    "is 0 only if every file of every instance is PASS. Progress goes to "
                    "stderr: a bar per file on a terminal, else a line per finished file.")
    parser.add_argument("instances", nargs="*", metavar="INSTANCE",
                        help="instance name (see `ngcc list`) or library path")
    parser.add_argument("--all", action="store_true", help="every built-in instance")
    parser.add_argument("--files", default="2_12,2_23", metavar="LIST",
                        help="comma-separated KAT files: 2_12, 2_23, 2_33 (three 1 GiB "
                             "messages: minutes, 1 GiB of memory), loop (10^6 hash calls); "
                             "default: %(default)s")
    parser.add_argument("--out", type=Path, default=Path("ngcc-kat"), metavar="DIR",
                        help="folder for the logs (DIR/<candidate>/<label>.log) and the "
                             "generated files; default: %(default)s")
    parser.add_argument("--keep", action="store_true",
                        help="keep the generated KAT files (DIR/<candidate>/<label>/)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="time allowed per file and for the guard probe (default: 600 s "
                             "for 2_12 and 2_23, 7200 s for 2_33 and loop)")
    _add_kat_references(parser)
    parser.add_argument("--candidate", metavar="ID",
                        help="every built-in instance of this candidate (any id of `ngcc "
                             "list --candidates`); or, when library paths are named, their "
                             "candidate id, whose manifest is used (default: the one `ngcc "
                             "build` recorded)")
    parser.add_argument("--label", action="append", default=[], metavar="NAME",
                        help="the label of a library path in file names and tables "
                             "(repeatable, in the order of the library paths; default: the "
                             "instance name, with @<folder> when two builds clash)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars or lines")
    parser.set_defaults(run=_run_kat)


def _run_kat(args: argparse.Namespace) -> int:
    if not (args.instances or args.candidate or args.all):
        raise _UsageError("name the instances to check, or use --candidate ID or --all "
                          "(see `ngcc list`)")
    chosen, labels = _plan.resolve_libraries(args.instances, args.candidate, args.all,
                                             _path_labels(args.instances, args.label))
    results = kat.check(chosen, files=args.files, out_dir=args.out,
                        keep=args.keep, progress=not args.no_progress,
                        timeout=args.timeout, official_dir=args.official, labels=labels,
                        manifest=args.manifest)
    rows = [("instance", "candidate", "verdict", "files", "basis", "log")]
    rows += [(r.label, r.candidate, r.verdict,
              " ".join("%s:%s" % (f.kind, f.verdict) for f in r.files), r.basis, str(r.log))
             for r in results]
    print(_table(rows))
    for r in results:
        for f in r.files:
            if f.verdict != "PASS":
                print("%s %s %s: %s" % (r.label, f.name, f.verdict, f.detail))
    if any(f.verdict == "NOKAT" for r in results if r.candidate != "baseline" for f in r.files):
        print("ngcc: NOKAT: no reference to check against: give --manifest FILE or --official "
              "DIR", file=sys.stderr)
    return 0 if all(r.passed for r in results) else 1


def _add_kat_references(parser: argparse.ArgumentParser) -> None:
    """--manifest and --official: the references a KAT check may rest on."""
    parser.add_argument("--manifest", type=Path, metavar="FILE",
                        help="a kat.sha256 manifest ngcc does not ship, checked instead of "
                             "the candidate's (a line matches a KAT file by its name, "
                             "whatever folder it names)")
    parser.add_argument("--official", type=Path, metavar="DIR",
                        help="your copy of the official KAT files (DIR/<candidate>/<folder>/"
                             "KAT_*.txt, DIR/<folder>/KAT_*.txt or flat): the reference of a "
                             "file no manifest line covers (PASS or MISMATCH with the first "
                             "differing record), and where a MISMATCH names that record")


def _path_labels(names: Sequence[str], labels: Sequence[str]) -> list[str | None]:
    """The ``--label`` values (given in the order of the library paths) aligned with
    every name of the command line (None for the others)."""
    paths = [index for index, name in enumerate(names) if is_library_path(name)]
    if len(labels) > len(paths):
        raise NgccError("%d --label given for %d library path(s): --label names library "
                        "paths, one each, in their order" % (len(labels), len(paths)))
    aligned: list[str | None] = [None] * len(names)
    for index, label in zip(paths, labels, strict=False):
        aligned[index] = label
    return aligned


# ---------------------------------------------------------------------- campaign, check

def _lengths(text: str) -> list[int]:
    try:
        lengths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated byte counts, e.g. "
                                         "32,1024,65536; got %r" % text) from None
    if not lengths or min(lengths) < 1:
        raise argparse.ArgumentTypeError("message lengths must be positive, got %r" % text)
    return lengths


def _wait_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number of seconds, got %r" % text) from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("expected a number of seconds >= 0, got %r" % text)
    return value


def _add_wait(parser: argparse.ArgumentParser, waits: bool = True) -> None:
    """``--wait [SECONDS]``: how long to wait for a CPU another ngcc measurement holds."""
    bound = _locks.DEFAULT_WAIT_SECONDS
    parser.add_argument(
        "--wait", type=_wait_seconds, nargs="?", metavar="SECONDS",
        const=bound, default=bound if waits else None,
        help="wait up to SECONDS (alone: %g) for a CPU another ngcc measurement holds, "
             "saying for whom; 0 refuses at once%s" % (
                 bound, "; default: %g" % bound if waits else "; default: do not wait"))


def _print_wait(message: str) -> None:
    print("ngcc: %s" % message, file=sys.stderr, flush=True)


def _add_campaign(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "campaign", help="KAT-check, then time instances at every message length",
        description="The main job: KAT gate, then for every instance x message length one "
                    "cold call (t1), the harness's plan (calls per trial = min(20000, "
                    "max(ceil(T/t1), 20)), capped by the operation budget), and trials, each "
                    "in a fresh process pinned to one CPU. Evidence goes to the run "
                    "directory; a stopped campaign resumes when run again with the same "
                    "settings. Before the trials it prints the plan: jobs, calls and the time "
                    "estimated from the calibration. Progress goes to stderr: a bar per phase "
                    "on a terminal, else one line per finished job (its figure, elapsed time, "
                    "ETA). Exit status 1 if any job failed or was refused (the last line "
                    "counts them: `30 done, 2 crash`), or when the first %d jobs all fail "
                    "with one cause and none succeeds: the campaign then stops there, naming "
                    "the cause; exit status %d when every job was measured but some missed "
                    "--target-ci (a warning names each, with the CI reached)."
                    % (_campaign.STOP_AFTER_FAILURES, EXIT_TARGET_MISSED))
    parser.add_argument("instances", nargs="*", metavar="INSTANCE",
                        help="instance name (see `ngcc list`) or library path")
    parser.add_argument("--candidate", metavar="ID",
                        help="every built-in instance of this candidate (any id of `ngcc "
                             "list --candidates`), or the id of the libraries named")
    _add_kat_references(parser)
    parser.add_argument("--all", action="store_true", help="every built-in instance")
    parser.add_argument("--lengths", type=_lengths, metavar="LIST",
                        default=list(_plan.DEFAULT_LENGTHS),
                        help="message lengths in bytes (default: the eight guide lengths "
                             "32,128,512,1024,4096,8192,16384,65536)")
    parser.add_argument("--trials", type=int, metavar="N",
                        help="trials per instance x length (default 5; 3 with --quick)")
    parser.add_argument("--trial-target", type=float, metavar="SECONDS",
                        help="seconds of calls per trial, T (default 1.0; 0.02 with --quick)")
    parser.add_argument("--op-budget", type=float, metavar="SECONDS",
                        help="seconds for all trials of one instance x length "
                             "(default 900; 5 with --quick)")
    parser.add_argument("--cpu", type=int, metavar="N",
                        help="pin every trial to CPU N (default: the last CPU allowed that "
                             "no other running ngcc campaign holds)")
    parser.add_argument("--run-dir", type=Path, metavar="DIR",
                        help="run directory (default: runs/<UTC start time>); an existing "
                             "one with the same plan is resumed")
    parser.add_argument("--quick", action="store_true",
                        help="a small plan for smoke tests: T = 0.02 s, 3 trials, 5 s budget")
    parser.add_argument("--target-ci", type=float, metavar="PCT",
                        help="add trials until the 95%% CI of --statistic is within PCT %% "
                             "(up to --max-trials); with several libraries only the jobs "
                             "not yet precise enough get extra rounds")
    parser.add_argument("--statistic", choices=("mean", "median"), default="mean",
                        help="what --target-ci aims at: the mean (t interval of the trial "
                             "means, as ngcc 0.1) or the per-call median (log-scale interval "
                             "of the trial medians, robust to preemptions); default: "
                             "%(default)s")
    parser.add_argument("--plan", choices=("harness", "warm"), default="harness",
                        dest="calls_rule",
                        help="calls per trial: the NGCC harness's rule from one cold call "
                             "(comparable with its figures), or warm: calibrated with warm "
                             "calls so that each trial holds about --trial-target seconds "
                             "of timed loop; default: %(default)s")
    parser.add_argument("--order", choices=("interleaved", "sequential"),
                        help="run trial k of every job before trial k+1 of any "
                             "(interleaved: drift hits every library alike; the default "
                             "with more than one library) or job after job (sequential)")
    parser.add_argument("--max-trials", type=int, metavar="N",
                        help="the cap on trials with --target-ci (default 20)")
    parser.add_argument("--counter", choices=COUNTER_CHOICES,
                        help="what times the calls: perf (core cycles of the thread in user "
                             "mode, perf_event_open; RDPMC per call where the kernel allows "
                             "it), tsc (the time-stamp counter: ticks, not core cycles), "
                             "clock (clock_gettime, ns), or auto (perf where RDPMC is "
                             "allowed, else tsc); default: tsc. Each trial records the "
                             "counter it got"),
    parser.add_argument("--allow-kat-fail", action="store_true",
                        help="time instances whose KAT verdict is not PASS; their records "
                             "are marked timed_without_pass and reports show a warning sign")
    parser.add_argument("--kat-files", default="2_12,2_23", metavar="LIST",
                        help="KAT files the gate checks (default: %(default)s)")
    parser.add_argument("--kat-timeout", type=float, metavar="SECONDS",
                        help="time allowed per KAT file (default: 600 s for 2_12 and 2_23, "
                             "7200 s for 2_33 and loop)")
    parser.add_argument("--trial-timeout", type=float, metavar="SECONDS",
                        help="kill a trial after this long (default: 10x its estimate + 60 s)")
    parser.add_argument("--strict", action="store_true",
                        help="refuse to measure on an unfixed host (see `ngcc check`), and "
                             "repeat a trial that was preempted or whose counter ran off "
                             "its rate (at most 3 attempts; the record lists the rejected)")
    parser.add_argument("--label", action="append", default=[], metavar="NAME",
                        help="the label of a library path in file names, tables and plots "
                             "(repeatable, in the order of the library paths; default: the "
                             "instance name, with @<folder> when two builds clash)")
    distributed = parser.add_mutually_exclusive_group()
    distributed.add_argument("--workers", type=int, metavar="N",
                             help="measure whole jobs on a local Dask cluster of N worker "
                                  "processes, one per CPU (the last N allowed), each pinning "
                                  "its trials to its own CPU (pip install "
                                  "\"ngcc[distributed]\")")
    distributed.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                             help="measure whole jobs on the workers of this Dask scheduler, "
                                  "each started with --resources cpu=1 and NGCC_CPU=<its CPU> "
                                  "(README, Distributed campaigns)")
    parser.add_argument("--leak", action="store_true",
                        help="after the KAT gate, test every library it lets through for "
                             "timing leakage (ngcc leak); evidence in RUN_DIR/leak/, a "
                             "section in the report")
    parser.add_argument("--leak-length", type=int, default=64, metavar="BYTES",
                        help="the message length of the leak tests (default %(default)s)")
    parser.add_argument("--leak-calls", type=int, metavar="N",
                        help="the most calls of each leak test (default 1000000)")
    parser.add_argument("--leak-seconds", type=_positive_seconds, metavar="S",
                        help="the most seconds of each leak test (default 60)")
    parser.add_argument("--dry-run", action="store_true",
                        help="run the KAT gate and the calibration (one cold call per job), "
                             "print the plan and stop before any trial; the run directory "
                             "keeps both, so the same command without --dry-run resumes there")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but warnings and errors: no plan, no progress, "
                             "no summary table")
    _add_wait(parser)
    parser.set_defaults(run=_run_campaign)


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: object = None, line: str | None = None) -> None:
    tqdm.write("ngcc: warning: %s" % plain(str(message)), file=sys.stderr)


class _FlagWarnings:
    """Shows the first job's warning of each kind of trial flag as it comes and counts
    the others, which :meth:`summary` then gives as one line per kind for the run (a
    campaign on a busy host would otherwise print a warning for nearly every job)."""

    def __init__(self) -> None:
        self.held: dict[str, int] = {}

    def show(self, message: Warning | str, category: type[Warning], filename: str,
             lineno: int, file: object = None, line: str | None = None) -> None:
        if isinstance(message, TrialFlagWarning):
            if message.code in self.held:
                self.held[message.code] += 1
                return
            self.held[message.code] = 0
            message = "%s (further jobs with %s trials: one line at the end)" % (
                message, message.code)
        _show_warning(message, category, filename, lineno, file, line)

    def summary(self, run: Run) -> list[str]:
        """One line per kind of flag that had jobs held back: trials, jobs, the worst."""
        lines = []
        for code, flagged, (worst_record, worst) in _analysis.flag_kinds(run.records):
            if not self.held.get(code):
                continue
            lines.append("%d trial(s) in %d job(s) flagged %s; the worst: %s at %d B: %s" % (
                len(flagged), len({r.relpath for r, _ in flagged}), code, worst_record.label,
                worst_record.message_bytes, worst.message))
        return lines


def _run_campaign(args: argparse.Namespace) -> int:
    if not (args.instances or args.candidate or args.all):
        raise _UsageError("name the instances to measure, or use --candidate ID or --all "
                          "(see `ngcc list`)")
    if args.trials == 1 and not args.quiet:
        print("ngcc: note: with --trials 1 no figure gets a confidence interval (it needs "
              "2 trials or more); the tables show — for it", file=sys.stderr)
    campaign = _campaign.Campaign(
        args.instances, candidate=args.candidate, all_instances=args.all,
        lengths=args.lengths, trials=args.trials, trial_target=args.trial_target,
        op_budget=args.op_budget, cpu=args.cpu, run_dir=args.run_dir, quick=args.quick,
        strict=args.strict, target_ci=args.target_ci, max_trials=args.max_trials,
        allow_kat_fail=args.allow_kat_fail, kat_files=args.kat_files.split(","),
        kat_timeout=args.kat_timeout, trial_timeout=args.trial_timeout, progress=not args.quiet,
        labels=_path_labels(args.instances, args.label),
        leak=args.leak_length if args.leak else None, leak_calls=args.leak_calls,
        leak_seconds=args.leak_seconds, statistic=args.statistic,
        calls_rule=args.calls_rule, order=args.order,
        workers=args.workers, scheduler=args.scheduler, counter=args.counter,
        wait=args.wait, on_wait=_print_wait,
        kat_manifest=args.manifest, kat_official=args.official,
        on_plan=_print_plan(sys.stdout) if args.dry_run else None if args.quiet
        else _print_plan(sys.stderr),
        command=["ngcc", *sys.argv[1:]] if sys.argv[1:2] == ["campaign"] else None)
    flag_warnings = _FlagWarnings()
    with warnings.catch_warnings():
        warnings.simplefilter("always", MeasurementWarning)
        warnings.showwarning = flag_warnings.show
        try:
            if args.dry_run:
                campaign.dry_run()
                print("dry run: nothing measured; the KAT verdicts and the calibration are "
                      "kept in %s (run the command without --dry-run to measure)"
                      % campaign.run_dir)
                return 0
            run = campaign.run()
        except KeyboardInterrupt:
            print("ngcc: interrupted; %s: run the same command again to resume"
                  % _kept_words(campaign.run_dir), file=sys.stderr)
            return 130
    for line in flag_warnings.summary(run):
        print("ngcc: warning: %s" % plain(line), file=sys.stderr)
    if not args.quiet and run.records:  # no empty table for a run that measured nothing
        print(_campaign_summary(run))
        print(_verdict_text(run))
    if not run.failed_jobs:
        return EXIT_TARGET_MISSED if any(r.target_missed for r in run.records) else 0
    for line in _failure_lines(run.failed_jobs):
        print("ngcc: %s" % plain(line), file=sys.stderr)
    print("ngcc: %s" % _analysis.status_counts(run.jobs), file=sys.stderr)
    return EXIT_RUNTIME_ERROR


def _kept_words(run_dir: Path) -> str:
    """``3 finished job(s) and 7 trial(s) of unfinished ones are kept in DIR``."""
    from ngcc.measure import partial as _partial

    try:
        done = sum(job.status == "done" for job in load_run(run_dir).jobs)
    except (NgccError, OSError):
        done = 0  # stopped before the run directory was written
    return "%d finished job(s) and %d trial(s) of unfinished ones are kept in %s" % (
        done, _partial.count(run_dir), run_dir)


def _print_plan(stream: TextIO) -> Callable[[_campaign.CostEstimate], None]:
    """Print the plan to ``stream``: stderr beside the progress, so that stdout holds the
    summary table alone; stdout for ``--dry-run``, whose result it is."""
    def show(estimate: _campaign.CostEstimate) -> None:
        print(estimate, file=stream, flush=True)
    return show


#: ``SM3 at 64 B (trial 0) ``: the job's own words at the start of a child's error.
_JOB_PREFIX = re.compile(r"^\S+ at \d+ B \([^)]*\) ")


def _failure_lines(jobs: Sequence[Job], shown: int = 4) -> list[str]:
    """One line per status and cause: a job's own error, or ``2 jobs crash (SM3 64 B,
    SM3 128 B): crashed: SIGSEGV`` (the first ``shown`` jobs named, the others counted)."""
    lines = []
    for status, alike in _analysis.failure_groups(jobs):  # the report's grouping
        if len(alike) == 1:
            lines.append(alike[0].error or "%s %s" % (alike[0].label, status))
            continue
        cause = _JOB_PREFIX.sub("", alike[0].error or status)
        names = ", ".join("%s %d B" % (job.label, job.message_bytes) for job in alike[:shown])
        more = " and %d more" % (len(alike) - shown) if len(alike) > shown else ""
        lines.append("%d jobs %s (%s%s): %s" % (len(alike), status, names, more, cause))
    return lines


def _campaign_summary(run: Run) -> str:
    unit = _format.unit_word(t.unit for r in run.records for t in r.trials)
    rows = [("instance", "message", "leads", unit + "/call", unit + "/byte", "95% CI (of)",
             "harness mean", "median", "95% CI (log-t)", "observer", "core c/B", "MB/s",
             "n", "KAT", "flags")]
    for record in run.records:
        stats = record.statistics
        lead = _analysis.leading(stats)
        rows.append((record.label, _format.message(record.message_bytes), lead.name,
                     _format.cycles(lead.ticks),
                     _format.cycles_per_byte(lead.ticks / record.message_bytes),
                     "±%s %s" % (_format.percent(lead.ci_relative), lead.interval)
                     if lead.ci_relative is not None else _format.MISSING,
                     _format.cycles(stats.mean_cycles),
                     _format.cycles(stats.median_cycles),
                     "±" + _format.percent(stats.median_ci95_relative),
                     _observer(record),
                     _format.cycles_per_byte(stats.core_cycles_per_byte),
                     _format.megabytes_per_second(record.message_bytes / lead.seconds / 1e6
                                                  if lead.seconds else None),
                     _format.call_count(list(record.raw.calls_per_trial)),
                     record.kat.verdict + (" ⚠" if record.kat.timed_without_pass else ""),
                     _flag_counts(record)))
    return ("%s\n\nleads: what the row's %s/call, /byte, 95%% CI and MB/s are: %s; "
            "harness mean: Σ %s / Σ calls "
            "(the NICCS pages' mean); 95%% CI (of): the interval of the row's figure and "
            "which it is (bootstrap median: percentile bootstrap of the median of the "
            "trials' CPU-time figures; bootstrap mean: of the trial means); 95%% CI "
            "(log-t): of the per-call "
            "median, t interval of the logarithms of the trial medians; observer: per-call "
            "mean over the uninstrumented batch mean (median of the trials); core c/B: core "
            "cycles per byte, from each trial's estimate of core cycles per tick; MB/s: of "
            "the row's figure\nevidence: %s   (next: ngcc report %s)"
            % (_table(rows), unit, _analysis.LEADING_RULE, unit, run.path, run.path))




def _verdict_text(run: Run) -> str:
    """The run's publishability verdict, the command line's last line."""
    from ngcc.report import verdict as _verdict

    return _verdict.verdict_line(run)


def _observer(record: Record) -> str:
    """The observer effect of the undisturbed trials, relative (``+1.20 %``)."""
    from ngcc.report import verdict as _verdict

    effect = _verdict.observer_effect(record)
    if effect is None and not {t.index for t in record.trials} - {
            f.trial for f in record.statistics.flags}:
        return _verdict.DISTURBED
    return _signed_percent(effect[1] if effect is not None else None)


def _signed_percent(value: float | None) -> str:
    return _format.MISSING if value is None else "%+.2f %%" % (100 * value)


def _flag_counts(record: Record) -> str:
    """``2 preempted, 1 slow_trial``: the record's flags by code, and the trials
    ``--strict`` rejected; ``—`` for none."""
    counts = Counter(flag.code for flag in record.statistics.flags)
    parts = ["%d %s" % (n, code) for code, n in counts.items()]
    if record.rejected_trials:
        parts.append("%d rejected" % len(record.rejected_trials))
    return ", ".join(parts) or _format.MISSING


def _add_check(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "check", help="check that this host is fixed for measurement",
        description="Show the environment fingerprint every run stores (CPU, counter, "
                    "governor, turbo, SMT, virtualisation, load, software) and warn about "
                    "everything that makes cycle counts drift, with the remedy. Exit status 1 "
                    "under --strict when there is a warning.")
    parser.add_argument("--cpu", type=int, metavar="N",
                        help="the CPU a campaign would pin to (default: the last one allowed "
                             "that no other running ngcc campaign holds)")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 if the host is not fixed")
    _add_wait(parser, waits=False)
    parser.set_defaults(run=_run_check)


def _run_check(args: argparse.Namespace) -> int:
    cpu = _locks.default_cpu() if args.cpu is None else _locks.check_cpu(args.cpu)
    if args.wait is not None:  # read the host once no other measurement runs there
        with _locks.hold_cpu(cpu, None, wait=args.wait, on_wait=_print_wait):
            pass
    environment = _host.fingerprint(cpu)
    print(_table([("item", "value"), *_host.describe(environment)]))
    issues = [*_host.host_warnings(environment), *_locks.cpu_issues(cpu)]
    for issue in issues:
        print("warning: %s" % issue.message)
    if not issues:
        print("the host is fixed for measurement")
    return EXIT_RUNTIME_ERROR if issues and args.strict else 0


# ------------------------------------------------------------------- report, validate

def _distribution_choice(text: str) -> tuple[str, int]:
    instance, _, length = text.rpartition(":")
    if not instance or not length.isdigit():
        raise argparse.ArgumentTypeError("expected INSTANCE:BYTES, e.g. Wish512:1024; got %r"
                                         % text)
    return instance, int(length)


def _add_report(subcommands: argparse._SubParsersAction) -> None:
    from ngcc.report import export as _export

    parser = subcommands.add_parser(
        "report", help="write the pages (Markdown or HTML), tables and plots of a run",
        description="Write one page per candidate (sections 1-5 and 7 of the NICCS "
                    "x86 self-assessment structure, plus confidence intervals, medians and "
                    "the ratio to pseudoXOF), a summary page, an index page, and the plots "
                    "(cycles/byte, per-call distributions; PNG and SVG). Pages depend only "
                    "on the run directory, so `ngcc validate` can regenerate them.")
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a campaign's run "
                        "directory")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="where to write (default: RUN_DIR/report)")
    parser.add_argument("--no-plots", action="store_true", help="write the pages only")
    parser.add_argument("--format", dest="formats", action="append", choices=_export.FORMATS,
                        metavar="FORMAT",
                        help="markdown (default): the pages as .md; html: the same pages as "
                             "self-contained .html files (plots inline, nothing fetched); "
                             "csv, json: every statistic per library x length in "
                             "statistics.csv / statistics.json (repeatable)")
    parser.add_argument("--distribution", type=_distribution_choice, action="append",
                        default=[], metavar="INSTANCE:BYTES",
                        help="also plot the per-call distribution of this instance at this "
                             "length (repeatable; each instance's shortest length is always "
                             "plotted)")
    parser.set_defaults(run=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    from ngcc.report import pages as _report

    run = load_run(args.run_dir)
    written = _report.write_report(run, args.out, plots=not args.no_plots,
                                   distributions=args.distribution,
                                   formats=args.formats or ("markdown",))
    for path in written:
        print(path)
    unmeasured = [job for job in run.jobs if job.status != "done"]
    if unmeasured:
        print("ngcc: %d of %d jobs of %s were not measured (%s); each page says why at its "
              "top" % (len(unmeasured), len(run.jobs), run.path,
                       _analysis.status_counts(run.jobs)), file=sys.stderr)
    return 0


def _add_validate(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "validate", help="recompute a run's statistics and pages from its raw samples",
        description="Recompute every record's statistics from its raw per-call samples "
                    "(with the campaign's own statistics code) and regenerate every report "
                    "page; list each file that differs. Exit status 1 on any difference.")
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a campaign's run "
                        "directory")
    parser.set_defaults(run=_run_validate)


def _run_validate(args: argparse.Namespace) -> int:
    from ngcc.report import validate as _validate

    result = _validate.validate(args.run_dir)
    for difference in result.differences:
        print("ngcc: difference: %s" % difference, file=sys.stderr)
    summary = "%d record(s) recomputed from raw samples, %d report file(s) regenerated" % (
        result.records_checked, result.pages_checked)
    if result.ok:
        print("%s: valid (%s)" % (args.run_dir, summary))
        return 0
    print("%s: %d difference(s) (%s)" % (args.run_dir, len(result.differences), summary),
          file=sys.stderr)
    return EXIT_RUNTIME_ERROR


# ---------------------------------------------------------------------------- compare

def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text) from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError("%r: a significance level lies strictly between "
                                         "0 and 1, e.g. 0.05" % text)
    return value


def _add_compare(subcommands: argparse._SubParsersAction) -> None:
    from ngcc.report import compare as _compare_runs
    from ngcc.stats import compare as _compare

    parser = subcommands.add_parser(
        "compare", help="is A faster than B, and is the difference real?",
        description="Compare the records of two runs (or two libraries of one run): for "
                    "every library label both runs hold (or each --instance pair) at every "
                    "message length both measured, the ratio A/B of the per-trial figure "
                    "with its confidence interval and Welch's t-test on the logarithms of "
                    "the per-trial figures (the trials are the samples), in plain words; "
                    "then the geometric mean over lengths per pair. Different hosts are "
                    "named, different units converted to core cycles where every trial "
                    "carries the estimate (else refused).")
    parser.add_argument("run_a", type=Path, metavar="RUN_A", help="run directory A")
    parser.add_argument("run_b", type=Path, metavar="RUN_B", nargs="?",
                        help="run directory B (default: RUN_A, comparing --instance pairs "
                             "inside it)")
    parser.add_argument("--instance", action="append", default=[], metavar="NAME[=NAME]",
                        help="compare label NAME of A with label NAME of B, or A_LABEL=B_LABEL "
                             "(e.g. Wish512@built=Wish512); repeatable; default: every "
                             "label both runs hold")
    parser.add_argument("--host", action="append", default=[], metavar="NAME",
                        help="only records measured on this host (a run measured by Dask "
                             "workers on several machines); given twice: A's host, then "
                             "B's (with one run: the hosts of --instance A=B)")
    parser.add_argument("--statistic", choices=_compare.STATISTICS, default="median",
                        help="the per-trial figure compared: median (default; robust to "
                             "preemptions) or mean cycles per call")
    parser.add_argument("--alpha", type=_alpha, default=_compare.ALPHA,
                        help="significance level (default 0.05; the CI is 1 - alpha)")
    parser.add_argument("--format", choices=_compare_runs.FORMATS, default="table",
                        help="output format (default table; csv prints the notes on stderr)")
    parser.add_argument("--plot", type=Path, metavar="FILE",
                        help="also draw the ratio and its CI against message length to "
                             "FILE.png and FILE.svg")
    parser.add_argument("--published", choices=("x86_1", "arm_1"), metavar="SYSTEM",
                        help="compare RUN_A with the NGCC harness's published figures on "
                             "SYSTEM (x86_1 or arm_1): per instance and length the run's "
                             "harness mean beside the published one, their ratio, and the "
                             "shape (cycles/byte over that at 64 KiB) beside the published "
                             "shape, with a geometric-mean row")
    parser.set_defaults(run=_run_compare)


def _run_compare(args: argparse.Namespace) -> int:
    from ngcc.report import compare as _compare_runs
    from ngcc.report import published as _published

    if args.published is not None:
        if args.run_b is not None or args.instance or args.host or args.plot:
            print("ngcc: error: --published compares one run with the published figures: "
                  "give RUN_A only, without --instance, --host or --plot", file=sys.stderr)
            return EXIT_USAGE
        beside = _published.compare_published(load_run(args.run_a), args.published)
        sys.stdout.write(_published.render(beside, args.format))
        return 0

    run_a = load_run(args.run_a)
    run_b = load_run(args.run_b) if args.run_b is not None else None
    result = _compare_runs.compare_runs(run_a, run_b, args.instance, args.statistic,
                                        args.alpha, args.host)
    plots = _compare_runs.write_plot(result, args.plot) if args.plot is not None else []
    if args.format == "csv":
        for note in result.notes:
            print("ngcc: note: %s" % note, file=sys.stderr)
    sys.stdout.write(_compare_runs.render(result, args.format))
    for path in plots:
        print("ngcc: wrote %s" % path, file=sys.stderr)
    return 0


# ------------------------------------------------------------------------------ build

def _add_build(subcommands: argparse._SubParsersAction) -> None:
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
    parser.add_argument("--label", metavar="LABEL",
                        help="the library's name in files, tables and plots (default: the "
                             "instance name)")
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
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="output folder (default: ./ngcc-build/<name>/)")
    parser.add_argument("--timeout", type=_positive_seconds, metavar="SECONDS",
                        default=_build.DEFAULT_TIMEOUT,
                        help="time all compiler runs may take together; default: %(default)g")
    parser.set_defaults(run=_run_build)


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("expected a positive number of seconds, got %r" % text)
    return value


def _run_build(args: argparse.Namespace) -> int:
    from ngcc.library.build import build

    result = build(args.source_dir, name=args.name, flags=args.flags, out_dir=args.out,
                   candidate=args.candidate, defines=args.define,
                   extra_cflags=args.extra_cflags, label=args.label, exclude=args.exclude,
                   timeout=args.timeout, libs=args.libs, manifest=args.manifest)
    inst, facts = result.instance, result.provenance
    for note in result.notes:
        print(note)
    for name, why in result.skipped.items():
        print("skipped %s: %s" % (name, why))
    if result.warnings:
        print(result.warnings.rstrip(), file=sys.stderr)
    print(_table([
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
    ]))
    return 0


def _glue_flag_values(argv: Sequence[str]) -> list[str]:
    """``--extra-cflags -maes`` as ``--extra-cflags=-maes``: argparse would take a value
    that starts with ``-`` for an option."""
    glued: list[str] = []
    for arg in argv:
        if glued and glued[-1] in ("--extra-cflags", "--flags", "--libs"):
            glued[-1] += "=" + arg
        else:
            glued.append(arg)
    return glued


# --------------------------------------------------------------------------- evaluate

def _add_evaluate(subcommands: argparse._SubParsersAction) -> None:
    from ngcc.report import export as _export

    parser = subcommands.add_parser(
        "evaluate", help="build, KAT-check, measure and report every folder of "
                         "submission archives",
        description="Find every implementation folder of every candidate in the "
                    "submission archives (<Name>/.../Reference_Implementation/<instance>/ "
                    "and .../Optimized_Implementation/<instance>/), build each with the "
                    "guide's flag set of its kind (reference: reference; optimized: "
                    "performance), applying only the fixes the build's own diagnosis is "
                    "certain of (a missing -m flag for the intrinsics used, the define "
                    "that leaves out a guarded main), each recorded as an adjustment; "
                    "then one campaign over every library built (KAT gate, interleaved "
                    "trials) and the report (RUN_DIR/report/: index, a page per "
                    "candidate, summary). A folder that does not build or pass is a row "
                    "with its reason. Run again with the same arguments, it resumes. Exit "
                    "status 1 when a folder was not built or a job not measured.")
    parser.add_argument("archives", nargs="+", type=Path, metavar="ARCHIVE",
                        help="the folder of an unpacked submission archive")
    parser.add_argument("--run-dir", type=Path, metavar="DIR",
                        help="run directory (default: runs/<UTC start time>); an existing "
                             "evaluation there is resumed")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the folders found and how each will be built; build "
                             "and measure nothing")
    parser.add_argument("--quick", action="store_true",
                        help="a small plan for smoke tests: T = 0.02 s, 3 trials, 5 s budget")
    parser.add_argument("--lengths", type=_lengths, metavar="LIST",
                        default=list(_plan.DEFAULT_LENGTHS),
                        help="message lengths in bytes (default: the eight guide lengths)")
    parser.add_argument("--trials", type=int, metavar="N",
                        help="trials per library x length (default 5; 3 with --quick)")
    parser.add_argument("--cpu", type=int, metavar="N",
                        help="pin every trial to CPU N (default: the last CPU allowed that "
                             "no other running ngcc campaign holds)")
    parser.add_argument("--kat-files", default="2_12,2_23", metavar="LIST",
                        help="KAT files the gate checks (default: %(default)s)")
    parser.add_argument("--allow-kat-fail", action="store_true",
                        help="time libraries whose KAT verdict is not PASS (marked)")
    parser.add_argument("--format", dest="formats", action="append", choices=_export.FORMATS,
                        metavar="FORMAT",
                        help="the report's formats (repeatable; default: markdown and html)")
    parser.add_argument("--no-plots", action="store_true", help="write the pages only")
    parser.add_argument("--build-timeout", type=_positive_seconds, metavar="SECONDS",
                        default=_build.DEFAULT_TIMEOUT,
                        help="time the compiler runs of one build may take together; "
                             "default: %(default)g")
    parser.add_argument("--quiet", action="store_true",
                        help="no plan and no progress; the table of folders still")
    _add_wait(parser)
    parser.set_defaults(run=_run_evaluate)


def _run_evaluate(args: argparse.Namespace) -> int:
    from ngcc.app import evaluate as _evaluate
    from ngcc.report import folders as _folders

    if args.dry_run:
        for line in _evaluate.plan_lines(args.archives):
            print(line)
        return 0
    run_dir = args.run_dir or Path("runs") / run_id_now()
    flag_warnings = _FlagWarnings()
    with warnings.catch_warnings():
        warnings.simplefilter("always", MeasurementWarning)
        warnings.showwarning = flag_warnings.show
        try:
            result = _evaluate.evaluate(
                args.archives, run_dir, formats=args.formats or ("markdown", "html"),
                plots=not args.no_plots, build_timeout=args.build_timeout, quick=args.quick,
                lengths=args.lengths, trials=args.trials, cpu=args.cpu,
                kat_files=args.kat_files.split(","), allow_kat_fail=args.allow_kat_fail,
                progress=not args.quiet, wait=args.wait, on_wait=_print_wait,
                on_plan=None if args.quiet else _print_plan(sys.stderr),
                command=["ngcc", *sys.argv[1:]] if sys.argv[1:2] == ["evaluate"] else None)
        except KeyboardInterrupt:
            print("ngcc: interrupted; the folders built and %s: run the same command "
                  "again to resume" % _kept_words(run_dir), file=sys.stderr)
            return 130
    verdicts = ({b.label: b.kat.verdict for b in result.run.build_entries}
                if result.run is not None else {})
    rows = [("folder", "kind", "built with", "library", "outcome")]
    rows += [(f.folder, f.kind, f.options, f.label or "-", _folders.outcome(f, verdicts))
             for f in result.evaluation.folders]
    print(_table(rows))
    if result.run is not None:
        for line in flag_warnings.summary(result.run):
            print("ngcc: warning: %s" % line, file=sys.stderr)
        index = next((p for p in result.report if p.name == "index.md"), None)
        print("evidence: %s%s" % (run_dir, "   report: %s" % index if index else ""))
        print(_verdict_text(result.run))
    else:
        print("ngcc: no folder built, so nothing was measured (each row says why)",
              file=sys.stderr)
    failed = result.run.failed_jobs if result.run is not None else []
    if failed and result.run is not None:
        print("ngcc: %s" % _analysis.status_counts(result.run.jobs), file=sys.stderr)
    return EXIT_RUNTIME_ERROR if result.not_built or failed or result.run is None else 0


# ------------------------------------------------------------------------------- leak

def _add_leak(subcommands: argparse._SubParsersAction) -> None:
    from ngcc.measure import leak as _leak

    parser = subcommands.add_parser(
        "leak", help="test instances for timing leakage (dudect: fixed vs random messages)",
        description="Time each instance in ngcc-driver on two classes of messages of one "
                    "length, the class of each call drawn at random: one fixed message (all "
                    "zero unless --fixed) and fresh random ones. Welch's t between the classes "
                    "(every call, the fastest calls under several percentiles, first and "
                    "second order), updated as calls arrive. Verdict from the largest |t|: "
                    "'no leak detected' below 4.5, 'LEAK' above 10 (the test stops once a "
                    "test is above 10 at two looks in a row), "
                    "'possible leak' between. A pass never proves constant time. Evidence: "
                    "DIR/<candidate>/<instance>__leak_<bytes>.json, the t trace (.npz) and a "
                    "plot of |t| against calls. Exit status 0 if no leak was detected in any "
                    "instance, 1 for a LEAK, a possible leak, too few calls or an error.")
    parser.add_argument("instances", nargs="+", metavar="INSTANCE",
                        help="instance name (see `ngcc list`) or library path")
    parser.add_argument("--length", type=int, metavar="BYTES",
                        help="message length of both classes, 1 to %d; default: the --fixed "
                             "message's, else %d" % (_leak.MAX_LENGTH, _leak.DEFAULT_LENGTH))
    parser.add_argument("--calls", type=int, default=_leak.DEFAULT_CALLS, metavar="N",
                        help="the most timed calls per instance, %d to %d; default: "
                             "%%(default)s" % (_leak.MIN_CALLS, _leak.MAX_CALLS))
    parser.add_argument("--seconds", type=_positive_seconds, default=_leak.DEFAULT_SECONDS,
                        metavar="S", help="the most seconds of calls per instance; default: "
                                          "%(default)g")
    parser.add_argument("--cpu", type=int, metavar="N",
                        help="pin the calls to CPU N (default: the last CPU allowed)")
    parser.add_argument("--fixed", type=_hex_bytes, metavar="HEX",
                        help="the fixed message in hex (its length is the --length); default: "
                             "all zero")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="seed of the driver's PRNG (classes, random messages); default: "
                             "a random one, recorded in the evidence")
    parser.add_argument("--control", action="store_true",
                        help="also run the A/A control of each instance: both classes random, "
                             "so only the harness or the host can make them differ; its "
                             "verdict should be 'no leak detected' (a flagged control makes "
                             "the exit status 1 too: the host cannot be trusted)")
    parser.add_argument("--no-early-stop", action="store_true",
                        help="make every call even once a test is above |t| = 10")
    parser.add_argument("--label", action="append", default=[], metavar="NAME",
                        help="the label of a library path in file names (repeatable, in the "
                             "order of the library paths; default: the instance name, with "
                             "@<folder> when two builds clash)")
    parser.add_argument("--out", type=Path, default=Path("ngcc-leak"), metavar="DIR",
                        help="folder for the evidence; default: %(default)s")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar on a terminal (without one there is none: "
                             "the result line of each instance is the progress)")
    _add_wait(parser)
    parser.set_defaults(run=_run_leak)


def _hex_bytes(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected hex digits, got %r" % text) from None


def _run_leak(args: argparse.Namespace) -> int:
    from ngcc.library.registry import run_labels
    from ngcc.measure import leak as _leak

    length = args.length if args.length is not None else \
        len(args.fixed) if args.fixed is not None else _leak.DEFAULT_LENGTH
    try:  # a setting out of range is a usage mistake, said before any call
        _leak.checked_limits(length, args.calls, args.seconds)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    found = [instance(name) for name in args.instances]  # every typo before any call
    labels = run_labels(found, _path_labels(args.instances, args.label))
    # a bar on a terminal only: without one, each instance's result line is its progress
    reporter = _progress.Progress("off" if args.no_progress or not sys.stderr.isatty()
                                  else "bar")
    with _locks.hold_cpu(args.cpu, None, wait=args.wait, on_wait=_print_wait) as cpu:
        status = _leak_each(args, found, labels, length, cpu, reporter)
    print("evidence: %s" % args.out)
    return status


def _leak_each(args: argparse.Namespace, found: Sequence[Instance], labels: Sequence[str],
               length: int, cpu: int, reporter: _progress.Progress) -> int:
    """Run the leak test of each instance on ``cpu`` (held); return the exit status."""
    from ngcc.evidence import leak as _leak_evidence
    from ngcc.measure import leak as _leak
    from ngcc.report import plots as _plot

    status = 0
    for inst, label in zip(found, labels, strict=True):
        for control in (False, True) if args.control else (False,):
            try:
                with reporter.task("%s%s" % (label, " (control)" if control else ""),
                                   args.calls) as task:
                    result = _leak.leak(inst, length, calls=args.calls, seconds=args.seconds,
                                        cpu=cpu, fixed=None if control else args.fixed,
                                        seed=args.seed, early_stop=not args.no_early_stop,
                                        control=control, label=label,
                                        progress=task)
            except NgccError as exc:  # this instance failed; the others still run
                print("%s  ERROR  %s" % (label, plain(str(exc))), flush=True)
                status = EXIT_RUNTIME_ERROR
                break
            calls, traces = result.trace_series()
            evidence = result.evidence()
            _plot.save(_plot.leak_trace_plot(calls, traces, title=result.title),
                       _leak_evidence.evidence_path(evidence, args.out, ""))
            _leak_evidence.write_evidence(evidence, args.out, plot=True)
            print(result.summary(), flush=True)
            if result.leaks:
                status = EXIT_RUNTIME_ERROR
    return status


# ------------------------------------------------------------------------------- main

#: One function per subcommand, in the order ``ngcc --help`` lists them.
SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_list,
    _add_hash,
    _add_info,
    _add_kat,
    _add_campaign,
    _add_check,
    _add_report,
    _add_validate,
    _add_compare,
    _add_build,
    _add_evaluate,
    _add_leak,
]


def build_parser() -> argparse.ArgumentParser:
    """The ``ngcc`` argument parser with every subcommand of ``SUBCOMMANDS``."""
    parser = _Parser(prog="ngcc", description="Measure cryptographic hash functions the way "
                     "a competition evaluator does.")
    parser.add_argument("--version", action="version", version="ngcc %s" % __version__)
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(subcommands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ngcc`` command line with ``argv`` (default: ``sys.argv[1:]``); return
    the exit status."""
    try:
        args = build_parser().parse_args(_glue_flag_values(
            sys.argv[1:] if argv is None else argv))
    except SystemExit as stop:  # --help, --version, or a usage error already printed
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    try:
        return args.run(args)
    except BrokenPipeError:  # `ngcc list | head -1`: the reader left; not an error
        _silence_stdout()
        return 0
    except _UsageError as exc:
        print("ngcc: error: %s" % exc, file=sys.stderr)
        return EXIT_USAGE
    except (NgccError, ValueError, OSError) as exc:
        print("ngcc: error: %s" % plain(str(exc)), file=sys.stderr)
        return EXIT_RUNTIME_ERROR
    except MemoryError:  # `ngcc hash SM3 /dev/zero` under a memory limit
        print("ngcc: error: out of memory (a message larger than the memory this process "
              "may use?)", file=sys.stderr)
        return EXIT_RUNTIME_ERROR
    except KeyboardInterrupt:
        print("ngcc: interrupted", file=sys.stderr)
        return 130


def _table(rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                     for row in rows)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
