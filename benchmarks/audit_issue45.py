"""The cases issue 45 adds to ``benchmarks/trust_audit.py`` (every name ends ``[45]``:
``--only [45]`` runs them alone). Each is judged by its effect, like the audit's
others: a secret's text in an output or an evidence file, the words of the request
read by the library, processes it ran, a figure it made up, the memory a check took.

  home       a library saved in $HOME reads ~/.ssh/id_rsa (its folder is bound)
  tmp        a library saved in /tmp reads another file of the host's /tmp
  secrets    a token in ngcc's environment reaches the library (getenv)
  katfile    a 1 GiB official KAT file (peak memory), an --official file linked to ~/.ssh
  forkstorm  200 processes at once inside one call (the process limit: one line)
  forger     the library reads its request (its mode) from the driver's memory
  caching    a library that returns its last digest for the same message (timed;
             refused by the honesty batch, and `ngcc validate` names it)
  leakforger a library that rewrites the leak mode's per-call ticks in the driver's
             memory (tests/fixtures/forging/tick_forger.c): a gross leak flattened, a
             constant-time library made to leak (refused by the classes timed from
             outside, or it is a silent wrong)
"""

from __future__ import annotations

import atexit
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

SECRET = "AUDIT45-SECRET-9d3f"
SECRETS_ENV = ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD")  # (NGCC_* are ngcc's own)
PEAK_RSS_LIMIT_MB = 512
STORM = 200

# What each library does, in act() of trust_audit.ISOLATION_PRELUDE (forge_error ends
# the process with its text as ngcc's error: the text arrives wherever ngcc shows it).
READ_FILE = (
    "{ char line[200] = \"\"; FILE *f = fopen(SECRET_PATH, \"r\"); "
    "if (f && fgets(line, sizeof line, f)) { fclose(f); line[strcspn(line, \"\\n\")] = 0; "
    "forge_error(line); } if (f) fclose(f); }")
GETENV = (
    "{ static const char *names[] = {%s}; unsigned i; for (i = 0; i < sizeof names / "
    "sizeof *names; i++) { const char *v = getenv(names[i]); if (v) forge_error(v); } }"
    % ", ".join('"%s"' % name for name in SECRETS_ENV))
# (the children sleep and end: kill() is not a library's to call under the filter)
FORK_STORM = (
    "{ pid_t kids[STORM]; int n = 0, i; char text[64]; for (i = 0; i < STORM; i++) "
    "{ pid_t c = fork(); if (c == 0) { usleep(500000); _exit(0); } if (c < 0) break; "
    "kids[n++] = c; } for (i = 0; i < n; i++) waitpid(kids[i], NULL, 0); "
    "snprintf(text, sizeof text, \"forked %d at once\", n); forge_error(text); }")
READ_REQUEST = "{ dl_iterate_phdr(find_request, NULL); }"
REQUEST_SCAN = r"""
#include <link.h>
#include <sys/wait.h>
static void forge_error(const char *text);
/* The driver's request words ("trial\0--result-fd\0...") in a writable segment of the
 * main program: the mode is the word after the zeros before them. */
static int find_request(struct dl_phdr_info *info, size_t size, void *data)
{
    int i;
    (void)size; (void)data;
    if (info->dlpi_name && info->dlpi_name[0])
        return 0;  /* not the main program */
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        const char *at, *end;
        if (p->p_type != PT_LOAD || !(p->p_flags & PF_W))
            continue;
        at = (const char *)(info->dlpi_addr + p->p_vaddr);
        end = at + p->p_memsz - 16;
        for (; at < end; at++)
            if (memcmp(at, "\0--library\0", 11) == 0) {
                const char *word = at, *start = (const char *)(info->dlpi_addr + p->p_vaddr);
                char text[160];
                while (word > start && !(word[-1] == 0 && word[-2] == 0))
                    word--;
                snprintf(text, sizeof text, "mode read: %.60s", word);
                forge_error(text);
            }
    }
    return 1;
}
"""


def _library(audit: ModuleType, folder: Path, stem: str, body: str, defines: str = "",
             prelude: str = "") -> Path:
    from _testlib import build_library

    folder.mkdir(parents=True, exist_ok=True)
    source = ("#define MARKS_DIR \"/nonexistent\"\n#define FAKE_HOME \"/nonexistent\"\n"
              "#define LISTEN_PORT 9\n#define FROM_CONSTRUCTOR 0\n" + defines
              + audit.ISOLATION_PRELUDE.replace("static void act(void)", prelude
                                                + "static void act(void)", 1)
              .replace("BODY", body))
    return build_library(folder, stem, source)


def _said(pattern: str, *folders: Path) -> str | None:
    """The first text matching ``pattern`` in the outputs' files under ``folders``."""
    for folder in folders:
        for path in (folder.rglob("*") if folder.is_dir() else []):
            if path.is_file() and path.suffix != ".so":
                found = re.search(pattern, path.read_bytes().decode("utf-8", "replace"))
                if found:
                    return found.group(0)
    return None


def _modes(audit: ModuleType, library: Path, message: Path, out: Path,
           campaign: bool = False) -> dict[str, list[str]]:
    modes = {"hash": audit.cli("hash", str(library), str(message)),
             "kat": audit.cli("kat", str(library), "--files", "2_23", "--out", str(out / "kat"))}
    if campaign:
        modes["campaign"] = audit.cli(
            "campaign", str(library), "--quick", "--lengths", "32", "--trials", "2",
            "--allow-kat-fail", "--quiet", "--run-dir", str(out / "run"), "--wait",
            str(audit.CPU_WAIT))
    return modes


def place_cases(audit: ModuleType, tmp: Path) -> list:
    """Libraries where users keep them: in $HOME beside ~/.ssh, in the host's /tmp."""
    home = tmp / "home45"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET + "-home\nrest of the key\n")
    message = tmp / "message45"
    message.write_bytes(b"abc")
    homed = _library(audit, home, "Homed", READ_FILE, "#define SECRET_PATH %s\n"
                     % audit._c_string(str(home / ".ssh" / "id_rsa")))
    cases = []
    for mode, argv in _modes(audit, homed, message, tmp / "home45-out").items():
        cases.append(audit.Case("home library saved in $HOME reads ~/.ssh: %s [45]" % mode,
                                argv, expect="any", timeout=240, env={"HOME": str(home)},
                                check=audit._no_secret(SECRET + "-home", tmp / "home45-out")))
    stem = "ngcc45-audit-%d" % os.getpid()
    secret = Path("/tmp") / (stem + "-secret.txt")
    secret.write_text(SECRET + "-tmp\n")
    built = _library(audit, tmp / "tmp45", stem, READ_FILE, "#define SECRET_PATH %s\n"
                     % audit._c_string(str(secret)))
    placed = Path("/tmp") / built.name
    for source, target in ((built, placed), (Path(str(built) + ".json"),
                                             Path(str(placed) + ".json"))):
        target.write_bytes(source.read_bytes())
    atexit.register(lambda: [p.unlink(missing_ok=True) for p in (
        secret, placed, Path(str(placed) + ".json"))])
    for mode, argv in _modes(audit, placed, message, tmp / "tmp45-out").items():
        cases.append(audit.Case("tmp library saved in /tmp reads another /tmp file: %s [45]"
                                % mode, argv, expect="any", timeout=240,
                                check=audit._no_secret(SECRET + "-tmp", tmp / "tmp45-out")))
    return cases


def secret_cases(audit: ModuleType, tmp: Path) -> list:
    """A token in ngcc's environment, in every mode."""
    message = tmp / "message45"
    library = _library(audit, tmp / "env45", "Getenv", GETENV)
    env = {name: "%s-env-%s" % (SECRET, name) for name in SECRETS_ENV}
    out = tmp / "env45-out"
    cases = []
    for mode, argv in _modes(audit, library, message, out, campaign=True).items():
        def check(done: subprocess.CompletedProcess[str]) -> str | None:
            for value in env.values():
                leaked = audit._no_secret(value, out)(done)
                if leaked:
                    return leaked
            return None
        cases.append(audit.Case("secrets environment token reaches the library: %s [45]"
                                % mode, argv, expect="any", timeout=300, env=env,
                                check=check, serial=mode == "campaign"))
    return cases


def katfile_cases(audit: ModuleType, tmp: Path) -> list:
    """A 1 GiB official KAT file (sparse: no disk used), and one linked to a secret."""
    huge = tmp / "katfile45" / "huge"
    huge.mkdir(parents=True)
    with (huge / "KAT_2_23_SM3.txt").open("wb") as handle:
        handle.truncate(2**30)
    rss = tmp / "katfile45" / "peak-rss-kib"
    script = audit.py("""
        import resource, sys
        from ngcc.cli.main import main
        status = main(["kat", "SM3", "--files", "2_23", "--official", %r, "--out", %r,
                       "--no-progress"])
        open(%r, "w").write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
        sys.exit(status)
        """ % (str(huge), str(tmp / "katfile45" / "out"), str(rss)))

    def bounded(done: subprocess.CompletedProcess[str]) -> str | None:
        if done.returncode == 0:
            return "silent wrong: a 1 GiB KAT file of zeros passed"
        peak = int(rss.read_text()) // 1024 if rss.exists() else None
        if peak is not None and peak > PEAK_RSS_LIMIT_MB:
            return "silent wrong: a 1 GiB KAT file took %d MB of memory" % peak
        return None
    linked = tmp / "katfile45" / "linked"
    linked.mkdir()
    secret = tmp / "katfile45" / "id_rsa"
    secret.write_text(SECRET + "-kat\n")
    (linked / "KAT_2_23_SM3.txt").symlink_to(secret)
    out = tmp / "katfile45" / "linked-out"
    return [audit.Case("katfile a 1 GiB official KAT file: kat [45]", script, expect="any",
                       timeout=400, check=bounded),
            audit.Case("katfile an --official KAT file linked to a secret: kat [45]",
                       audit.cli("kat", "SM3", "--files", "2_23", "--official", str(linked),
                                 "--out", str(out)), expect="any", timeout=240,
                       check=audit._no_secret(SECRET + "-kat", out))]


def storm_case(audit: ModuleType, tmp: Path) -> list:
    """STORM processes at once inside one call: the limit stops them, or it is an escape."""
    library = _library(audit, tmp / "storm45", "Storm", FORK_STORM,
                       "#define STORM %d\n#include <sys/wait.h>\n" % STORM)

    def limited(done: subprocess.CompletedProcess[str]) -> str | None:
        found = re.search(r"forked (\d+) at once", done.stdout + done.stderr)
        if found and int(found.group(1)) >= STORM:
            return "escape: the library ran %s processes at once inside one call" % (
                found.group(1))
        if "the library tried to start a process" not in done.stderr \
                or done.stderr.count("\n") != 1:
            return "silent wrong: no one line naming the process limit: %r" % (
                done.stderr[-200:])
        return None
    return [audit.Case("forkstorm %d processes inside one call: hash [45]" % STORM,
                       audit.cli("hash", str(library), str(tmp / "message45")), expect="any",
                       timeout=240, check=limited)]


def forger_cases(audit: ModuleType, tmp: Path) -> list:
    """The request's words read from the driver's memory: the library knows its mode."""
    library = _library(audit, tmp / "forger45", "Reader", READ_REQUEST, prelude=REQUEST_SCAN)
    out = tmp / "forger45-out"
    cases = []
    for mode, argv in _modes(audit, library, tmp / "message45", out, campaign=True).items():
        def knows(done: subprocess.CompletedProcess[str]) -> str | None:
            said = re.search(r"mode read: [\w-]+", done.stdout + done.stderr) or None
            text = said.group(0) if said else _said(r"mode read: [\w-]+", out)
            if text:
                return "escape: the library read its request in the driver's memory (%s)" % (
                    text)
            return None
        cases.append(audit.Case("forger reads its request from the driver's memory: %s [45]"
                                % mode, argv, expect="any", timeout=300, check=knows,
                                serial=mode == "campaign"))
    return cases


def caching_case(audit: ModuleType, tmp: Path) -> list:
    """A library that returns its last digest for the same message, timed beside the
    same code hashing every call."""
    from _testlib import KEEPING_SOURCE, build_library

    folder = tmp / "caching45"
    folder.mkdir()
    honest = build_library(folder, "Hashing-256", "#define KEEP 0\n" + KEEPING_SOURCE)
    caching = build_library(folder, "Caching-256", "#define KEEP 1\n" + KEEPING_SOURCE)
    run_dir = tmp / "caching45-run"

    def caught(done: subprocess.CompletedProcess[str]) -> str | None:
        fair, cached = (audit._record_cycles(run_dir, name, 65536)
                        for name in ("Hashing-256", "Caching-256"))
        if done.returncode == 0 and fair and cached and cached < 0.6 * fair:
            return "silent wrong: the caching library's 64 KiB call timed at %.0f vs %.0f" % (
                cached, fair)
        valid = subprocess.run([sys.executable, "-m", "ngcc", "validate", str(run_dir)],
                               capture_output=True, text=True, timeout=300)
        if "refused by the driver's checks: Caching-256 at 65536 B" not in valid.stderr \
                or "honesty batch" not in valid.stderr:
            return "silent wrong: validate names no refusal of the caching library: %r" % (
                (valid.stdout + valid.stderr)[-300:])
        return None
    return [audit.Case("caching a library returning its last digest: campaign [45]", audit.cli(
        "campaign", str(honest), str(caching), "--quick", "--lengths", "65536", "--trials",
        "2", "--allow-kat-fail", "--quiet", "--run-dir", str(run_dir), "--wait",
        str(audit.CPU_WAIT)), expect="any", timeout=400, check=caught, serial=True)]


LEAK_FORGERS = {"flattened": (1, 1, "a gross leak shown as none"),
                "skewed": (0, 2, "a constant-time library shown as leaking")}


def leak_forger_cases(audit: ModuleType, tmp: Path) -> list:
    """`ngcc leak` of a library that rewrites its per-call ticks in the driver's memory:
    believed (a verdict line, evidence written) is a silent wrong."""
    from _testlib import build_library

    folder = tmp / "leakforger45"
    folder.mkdir()
    source = (audit.REPO / "tests" / "fixtures" / "forging" / "tick_forger.c").read_text()
    cases = []
    for name, (leaky, forge, what) in LEAK_FORGERS.items():
        library = build_library(folder, "Forged%s-256" % name.title(),
                                "#define LEAKY %d\n#define FORGE %d\n" % (leaky, forge)
                                + source)
        out = tmp / ("leakforger45-" + name)

        def refused(done: subprocess.CompletedProcess[str]) -> str | None:
            if "  ERROR  " in done.stdout and "the library made up" in done.stdout:
                return None
            return "silent wrong: the forged run was believed: %r" % (
                (done.stdout + done.stderr).strip()[-200:])
        cases.append(audit.Case("leakforger %s: leak [45]" % what, audit.cli(
            "leak", str(library), "--calls", "20000", "--seconds", "20", "--out", str(out),
            "--wait", str(audit.CPU_WAIT)), expect="any", timeout=240, check=refused,
            serial=True))
    return cases


def issue45_cases(audit: ModuleType, tmp: Path) -> list:
    """Every case of issue 45's classes."""
    return (place_cases(audit, tmp) + secret_cases(audit, tmp) + katfile_cases(audit, tmp)
            + storm_case(audit, tmp) + forger_cases(audit, tmp) + caching_case(audit, tmp)
            + leak_forger_cases(audit, tmp))
