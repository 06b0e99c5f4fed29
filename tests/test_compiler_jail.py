"""The compiler on a submission's sources runs in the kernel's isolation (ngcc-jail,
csrc/jail/jail.c; ngcc.library.cc.Compiler): new user, PID, network, IPC and mount
namespaces whose view holds the system, the submission (read-only) and the build's
work folder (the one writable place).

Each hostile archive or compiler below is written in the test. Where the isolation
should stop something, a control run with ``NGCC_NO_SANDBOX=1`` shows that the same
thing does happen without it, so that no test passes by never trying. Where the kernel
refuses user namespaces, the jail must say so with exit status 122 (checked by
test_the_jail_runs_where_the_kernel_allows_it); the hostile tests then skip. Nothing
here asserts a duration.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest
from _testlib import NO_UNSHARE_SOURCE, compiler

import ngcc
from ngcc.base import sandbox
from ngcc.base.errors import BuildError, SandboxUnavailableError
from ngcc.library import cc as _cc
from ngcc.library.build import build
from ngcc.library.provenance import read_provenance

JAIL = _cc.JAIL
EXIT_UNAVAILABLE = 122  # isolate.h: ISOLATE_EXIT_UNAVAILABLE
FIXTURE = (Path(__file__).resolve().parent / "fixtures" / "archive" / "Tiny Hash"
           / "Implementations and Test_Vectors" / "API_CryptHash" / "Reference_Implementation"
           / "TinyHash-256")
SECRET = "NGCC_SECRET_7f3a91"

HEADER = '#define ALGORITHM_INSTANCE "Jailed-256"\n#define DIGEST_BIT_LENGTH 256\n'
SOURCE = r"""#include <string.h>
#include "CryptHash_AlgorithmInstance.h"
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    (void)m; (void)bits;
    memset(out, 0x33, (size_t)d / 8);
    return 0;
}
"""



def _jail(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(JAIL), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def _submission(path: Path, source: str = SOURCE) -> Path:
    path.mkdir(parents=True)
    (path / "CryptHash_AlgorithmInstance.h").write_text(HEADER)
    (path / "CryptHash_AlgorithmInstance.c").write_text(source)
    return path


@pytest.fixture(scope="module")
def isolated() -> None:
    """The hostile tests need the isolation: where the kernel refuses it they stop."""
    probe = _jail("--", "/bin/true")
    if probe.returncode == EXIT_UNAVAILABLE:
        pytest.skip("isolation unavailable on this machine (the jail refused as "
                    "documented): %s" % probe.stderr.strip())


@pytest.fixture()
def sandbox_on(monkeypatch, isolated) -> None:
    monkeypatch.delenv(sandbox.ENVIRONMENT_VARIABLE, raising=False)


# ------------------------------------------------------------------ the jail itself

def _kernel_allows_user_namespaces() -> bool | None:
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    return subprocess.run([unshare, "-Ur", "true"], capture_output=True).returncode == 0


def test_the_jail_runs_where_the_kernel_allows_it():
    ran = _jail("--", "/bin/sh", "-c", "exit 7")
    allowed = _kernel_allows_user_namespaces()
    if ran.returncode == EXIT_UNAVAILABLE:
        assert allowed is not True, "unshare -Ur works, the jail did not: " + ran.stderr
        assert ran.stderr.startswith("ngcc-jail: isolation unavailable: ")
    else:
        assert allowed is not False, "the jail isolated where unshare -Ur fails?"
        assert (ran.returncode, ran.stderr) == (7, "")


def test_the_view_has_the_folders_given_and_nothing_beside_them(isolated, tmp_path):
    source, work = tmp_path / "source", tmp_path / "work"
    source.mkdir()
    work.mkdir()
    (source / "input.txt").write_text("input\n")
    (tmp_path / "beside.txt").write_text(SECRET)
    script = ('cat input.txt; cat ../beside.txt; echo no > input.txt; '
              'echo made > %s/out.txt; ls -A "$HOME" | wc -l; hostname' % work)
    ran = _jail("--read", str(source), "--write", str(work), "--chdir", str(source), "--",
                "/bin/sh", "-c", script)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split("\n") == ["input", "0", "ngcc-jail", ""]
    assert "No such file" in ran.stderr and "Read-only file system" in ran.stderr
    assert SECRET not in ran.stdout + ran.stderr
    assert (source / "input.txt").read_text() == "input\n"
    assert (work / "out.txt").read_text() == "made\n"


def test_a_read_only_folder_inside_the_writable_one_stays_read_only(isolated, tmp_path):
    work = tmp_path / "work"
    (work / "kept").mkdir(parents=True)
    ran = _jail("--write", str(work), "--read", str(work / "kept"), "--", "/bin/sh", "-c",
                "touch %s/new && touch %s/kept/new" % (work, work))
    assert ran.returncode != 0 and "Read-only file system" in ran.stderr
    assert (work / "new").exists() and not (work / "kept" / "new").exists()


def test_the_jail_ends_as_its_command_ended(isolated):
    assert _jail("--", "/bin/sh", "-c", "exit 3").returncode == 3
    assert _jail("--", "/bin/sh", "-c", "kill -TERM $$").returncode == -signal.SIGTERM
    missing = _jail("--", "/no/such/compiler")
    assert missing.returncode == 127 and "cannot run /no/such/compiler" in missing.stderr


@pytest.mark.parametrize("args", [
    ("--read", "relative", "--", "/bin/true"), ("--read", "/", "--", "/bin/true")])
def test_a_folder_that_is_not_absolute_below_root_is_refused(isolated, args):
    ran = _jail(*args)
    assert ran.returncode == EXIT_UNAVAILABLE
    assert ran.stderr.startswith("ngcc-jail: isolation unavailable: bind the folder ")


@pytest.mark.parametrize(("args", "says"), [
    (("/bin/true",), "unknown option: /bin/true"), (("--",), "no command after --"),
    (("--write", "/a", "--write", "/b", "--", "/bin/true"), "only one --write folder"),
    (("--address-space-limit", "-1", "--", "/bin/true"), "a positive number of bytes")])
def test_a_bad_command_line_is_exit_125_naming_it(args, says):
    ran = _jail(*args)
    assert ran.returncode == 125 and says in ran.stderr and ran.stdout == ""


def test_the_address_space_limit_applies_to_the_command(isolated):
    ran = _jail("--address-space-limit", str(256 << 20), "--", "/bin/sh", "-c", "ulimit -v")
    assert (ran.returncode, ran.stdout) == (0, "%d\n" % (256 << 10))


def test_a_refused_namespace_is_exit_122_with_one_line_naming_the_call(tmp_path):
    launcher = _no_unshare_launcher(tmp_path)
    ran = subprocess.run([str(launcher), str(JAIL), "--", "/bin/true"], capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == EXIT_UNAVAILABLE
    assert ran.stderr == ("ngcc-jail: isolation unavailable: unshare(CLONE_NEWUSER): "
                          "%s (errno 1)\n" % os.strerror(1))


def _no_unshare_launcher(folder: Path) -> Path:
    launcher = folder / "no-unshare"
    (folder / "no-unshare.c").write_text(NO_UNSHARE_SOURCE)
    subprocess.run(compiler() + ["-o", str(launcher), str(folder / "no-unshare.c")],
                   check=True, capture_output=True)
    return launcher


# ------------------------------------------------------------------ ngcc build

def test_the_fixture_archive_builds_isolated_and_the_provenance_says_so(sandbox_on, tmp_path):
    result = build(FIXTURE, out_dir=tmp_path / "out")
    assert result.provenance.compiler_isolation == "namespaces"
    assert read_provenance(result.instance.library).compiler_isolation == "namespaces"
    assert result.instance.library.parent == tmp_path / "out"
    assert len(ngcc.hash(result.instance, b"abc")) == 32


def test_without_the_sandbox_the_compiler_runs_as_before_and_the_provenance_says_so(
        monkeypatch, tmp_path):
    monkeypatch.setenv(sandbox.ENVIRONMENT_VARIABLE, "1")
    monkeypatch.setattr(_cc, "JAIL", tmp_path / "no-such-jail")  # never asked for
    result = build(FIXTURE, out_dir=tmp_path / "out")
    assert result.provenance.compiler_isolation == "none"
    assert read_provenance(result.instance.library).compiler_isolation == "none"


@pytest.mark.parametrize("where", ["beside", "home"])
def test_an_include_outside_the_submission_is_not_found(sandbox_on, monkeypatch, tmp_path,
                                                        where):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    secret = (tmp_path if where == "beside" else home) / "secret.h"
    secret.write_text("#error %s\n" % SECRET)
    include = '#include "../secret.h"\n' if where == "beside" else '#include "%s"\n' % secret
    folder = _submission(tmp_path / "sub", include + SOURCE)
    with pytest.raises(BuildError) as caught:
        build(folder, out_dir=tmp_path / "out")
    assert "No such file" in str(caught.value) and SECRET not in str(caught.value)
    monkeypatch.setenv(sandbox.ENVIRONMENT_VARIABLE, "1")  # the control: it is read there
    with pytest.raises(BuildError, match=SECRET):
        build(folder, out_dir=tmp_path / "out")


WRAPPER = r"""#!/bin/sh
# A hostile compiler wrapper: once per build (the work folder is $TMPDIR), it tries to
# reach outside, then compiles as asked.
if [ ! -e "$TMPDIR/tried" ]; then
    : > "$TMPDIR/tried"
    echo pwned > "$NGCC_TEST_SUBMISSION/pwned.c" 2>/dev/null
    echo pwned > "$NGCC_TEST_HOME/pwned" 2>/dev/null
    kill -KILL "$NGCC_TEST_SENTINEL" 2>/dev/null
    PYTHON -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 5)" \
        "$NGCC_TEST_PORT" 2>/dev/null
fi
exec REAL_CC "$@"
"""


@pytest.fixture()
def hostile_compiler(monkeypatch, tmp_path):
    """CC set to WRAPPER (in a folder of its own, which the jail binds read-only), a
    sentinel process to kill, a port to connect to, a home to write."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    real_cc = shutil.which(compiler()[0])
    if python is None or real_cc is None:
        pytest.skip("no /usr/bin/python3 or C compiler for the hostile wrapper")
    tools, home = tmp_path / "tools", tmp_path / "home"
    tools.mkdir()
    home.mkdir()
    wrapper = tools / "hostile-cc"
    wrapper.write_text(WRAPPER.replace("PYTHON", python).replace("REAL_CC", real_cc))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    sentinel = subprocess.Popen(["sleep", "600"])
    folder = _submission(tmp_path / "sub")
    # (the home comes as NGCC_TEST_HOME: the compiler gets no HOME, base/sandbox)
    for name, value in (("CC", str(wrapper)), ("HOME", str(home)), ("NGCC_TEST_HOME", str(home)),
                        ("NGCC_TEST_SUBMISSION", str(folder)),
                        ("NGCC_TEST_SENTINEL", str(sentinel.pid)),
                        ("NGCC_TEST_PORT", str(listener.getsockname()[1]))):
        monkeypatch.setenv(name, value)
    yield folder, home, sentinel, listener
    sentinel.kill()
    sentinel.wait()
    listener.close()


def _reached(folder: Path, home: Path, sentinel: subprocess.Popen[bytes],
             listener: socket.socket) -> set[str]:
    """What the wrapper managed to do outside its view."""
    reached = set()
    if (folder / "pwned.c").exists():
        reached.add("wrote the submission")
    if (home / "pwned").exists():
        reached.add("wrote the home")
    if sentinel.poll() is not None:
        reached.add("killed a process")
    try:
        listener.accept()[0].close()
        reached.add("connected")
    except BlockingIOError:
        pass
    return reached


def test_a_hostile_compiler_reaches_nothing_outside_and_the_build_still_lands(
        sandbox_on, hostile_compiler, tmp_path):
    folder, home, sentinel, listener = hostile_compiler
    result = build(folder, out_dir=tmp_path / "out")
    assert _reached(folder, home, sentinel, listener) == set()
    assert result.instance.library == tmp_path / "out" / "Jailed-256.so"
    assert ngcc.hash(result.instance, b"abc") == b"\x33" * 32
    assert sorted(p.name for p in folder.iterdir()) == ["CryptHash_AlgorithmInstance.c",
                                                        "CryptHash_AlgorithmInstance.h"]


def test_without_the_sandbox_the_same_compiler_reaches_all_of_it(monkeypatch,
                                                                 hostile_compiler, tmp_path):
    folder, home, sentinel, listener = hostile_compiler
    monkeypatch.setenv(sandbox.ENVIRONMENT_VARIABLE, "1")
    build(folder, out_dir=tmp_path / "out", timeout=120)
    sentinel.wait(timeout=60)
    assert _reached(folder, home, sentinel, listener) == {
        "wrote the submission", "wrote the home", "killed a process", "connected"}


def test_a_refused_isolation_stops_the_build_at_once_with_the_remedy(sandbox_on, monkeypatch,
                                                                      tmp_path):
    launcher = _no_unshare_launcher(tmp_path)
    calls = tmp_path / "calls"
    refusing = tmp_path / "refusing-jail"
    refusing.write_text('#!/bin/sh\necho >> "%s"\nexec "%s" "%s" "$@"\n'
                        % (calls, launcher, JAIL))
    refusing.chmod(0o755)
    monkeypatch.setattr(_cc, "JAIL", refusing)
    with pytest.raises(SandboxUnavailableError) as caught:
        build(_submission(tmp_path / "sub"), out_dir=tmp_path / "out")
    message = str(caught.value)
    assert "ngcc-jail: isolation unavailable: unshare(CLONE_NEWUSER)" in message
    assert sandbox.REMEDY in message
    assert calls.read_text() == "\n"  # the first compiler run, and no other
    assert not (tmp_path / "out").exists()


def test_a_compiler_in_a_home_folder_is_refused_naming_the_remedy(sandbox_on, monkeypatch,
                                                                  tmp_path):
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    fake = home / "bin" / "gcc"  # its prefix would be the home itself
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CC", str(fake))
    with pytest.raises(BuildError, match=r"needs .*/home, which the compiler's isolation "
                                         r"does not show.*--no-sandbox"):
        build(_submission(tmp_path / "sub"), out_dir=tmp_path / "out")


def test_the_compiler_folders_follow_symlinks_to_the_real_prefix(tmp_path):
    prefix = tmp_path / "opt" / "cross"
    (prefix / "bin").mkdir(parents=True)
    real = prefix / "bin" / "xcc"
    real.write_text("")
    links = tmp_path / "alternatives"
    links.mkdir()
    (links / "cc").symlink_to(real)
    (tmp_path / "cc").symlink_to(links / "cc")
    assert _cc.compiler_folders(tmp_path / "cc") == [tmp_path, links, prefix]
    assert _cc.compiler_folders(Path("/usr/bin/env")) == []


def test_folders_the_evaluator_names_in_flags_are_shown_read_only(sandbox_on, tmp_path):
    extra = tmp_path / "opt" / "include"
    extra.mkdir(parents=True)
    (extra / "extra.h").write_text("#define EXTRA_BYTE 0x33\n")
    source = SOURCE.replace("0x33", "EXTRA_BYTE").replace("#include <string.h>",
                                                          '#include <string.h>\n#include "extra.h"')
    folder = _submission(tmp_path / "sub", source)
    result = build(folder, out_dir=tmp_path / "out", extra_cflags=["-I", str(extra)])
    assert ngcc.hash(result.instance, b"abc") == b"\x33" * 32
    assert _cc.flag_folders(["-I/usr/include", "-L", str(extra), "-include",
                             str(extra / "extra.h"), "-Irelative", "-I/no/such", "-o",
                             str(extra)]) == ["/usr/include", str(extra)]


def _running(marker: str) -> list[int]:
    """The pids of this machine's processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_the_command_dies_with_the_jails_parent(isolated, tmp_path):
    marker = "ngcc-jail-test-%d" % os.getpid()
    started = tmp_path / "started"
    started.mkdir()
    parent = subprocess.Popen(
        ["/bin/sh", "-c", '"$0" --write "$1" -- /bin/sh -c "touch $1/up; sleep 600; : $2"; :',
         str(JAIL), str(started), marker], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):  # until the command is up (a bound, not a duration under test)
            if (started / "up").exists():
                break
            time.sleep(0.05)
        assert (started / "up").exists() and _running(marker)
    finally:
        parent.kill()
        parent.wait()
    for _ in range(600):
        if not _running(marker):
            break
        time.sleep(0.05)
    assert _running(marker) == []
