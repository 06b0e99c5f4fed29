"""The KAT generator (csrc/common/kat.c) and check (ngcc.kat): official format byte for byte,
PASS for every shipped instance, and every other verdict from libraries built to fail."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import KAT_DATA, raw_sha256

import ngcc
import ngcc.kat
from ngcc import _core
from ngcc.base.errors import HashError, UnknownInstanceError
from ngcc.cli.main import main

#: The seven instances of hash-22, hash-34 and hash-35 and their candidates.
SHIPPED = {
    "Pavelor-512": "hash-22", "Pavelor-768": "hash-22", "Pavelor-1024": "hash-22",
    "WChain-V1-512": "hash-34", "WChain-V2-1024": "hash-34",
    "Wish512": "hash-35", "Wish1024": "hash-35",
}


def _registered(name: str) -> ngcc.Instance:
    """The built-in instance; a test fails (not skips) while it is not built yet."""
    if name not in {inst.name for inst in ngcc.instances()}:
        pytest.fail("%s is not in the instance registry: its algorithm is not built "
                    "(algorithms/<family>/instances.json)" % name)
    return ngcc.instance(name)


def _any_shipped() -> ngcc.Instance:
    built = {inst.name for inst in ngcc.instances()}
    name = next((n for n in SHIPPED if n in built), None)
    if name is None:
        pytest.fail("none of the seven shipped instances is built yet")
    return ngcc.instance(name)


# ------------------------------------------------------------- libraries built to fail

BAD_LIBRARY_C = r"""
/* Instance libraries that go wrong on purpose (tests/test_kat.py). WRAP_ libraries call
 * the real library REAL_LIBRARY and misbehave only for messages of AT_BITS bits. */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

typedef int (*crypt_hash_fn)(int, const unsigned char *, unsigned long long, unsigned char *);

static int real_hash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *out)
{
#ifdef REAL_LIBRARY
    static crypt_hash_fn real;
    if (real == NULL) {
        void *handle = dlopen(REAL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        void *symbol = handle ? dlsym(handle, "CryptHash") : NULL;
        if (symbol == NULL)
            return -99;
        memcpy(&real, &symbol, sizeof real);
    }
    return real(d, msg, bits, out);
#else
    (void)msg; (void)bits;
    memset(out, 0, (size_t)d / 8);  /* ZERO: a digest of zeros, for format checks */
    return 0;
#endif
}

__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *out)
{
    int status;
#if defined(HANG)
    for (;;)
        pause();
#elif defined(CRASH)
    raise(SIGSEGV);
#endif
#if defined(CRASH_AT)
    if (bits == AT_BITS)
        raise(SIGSEGV);
#endif
#if defined(FAIL_AT)
    if (bits == AT_BITS)
        return -1;
#endif
    status = real_hash(d, msg, bits, out);
#if defined(FLIP_AT)
    if (bits == AT_BITS)
        out[0] ^= 0x01;  /* one wrong bit for one message length */
#endif
    return status;
}
"""


class BadLibraries:
    """Builds instance libraries (with their ``.json`` sidecar) from BAD_LIBRARY_C."""

    def __init__(self, folder: Path):
        self.folder = folder
        (folder / "bad.c").write_text(BAD_LIBRARY_C)

    def build(self, label: str, name: str, digest_bits: int, candidate: str,
              defines: tuple[str, ...] = (), real: ngcc.Instance | None = None) -> Path:
        library = self.folder / label / ("%s.so" % name)
        library.parent.mkdir(exist_ok=True)
        flags = ["-D%s" % d for d in defines] + ["-DAT_BITS=1000ULL"]
        if real is not None:  # beside it, loaded at run time: the sandbox's view holds
            # the library file alone, so its callers run with the seccomp filter alone
            shutil.copy2(real.library, library.parent / ("real-" + Path(real.library).name))
            flags.append('-DREAL_LIBRARY="%s"' % (library.parent / (
                "real-" + Path(real.library).name)))
        subprocess.run(["cc", "-std=c99", "-D_GNU_SOURCE", "-O2", "-Wall", "-Wextra", "-fPIC",
                        "-shared", "-o", str(library), str(self.folder / "bad.c"), *flags,
                        "-ldl"], check=True)
        library.with_name(library.name + ".json").write_text(json.dumps(
            {"name": name, "family": "test", "digest_bits": digest_bits,
             "candidate": candidate}))
        return library


@pytest.fixture(scope="session")
def bad_libraries(tmp_path_factory) -> BadLibraries:
    return BadLibraries(tmp_path_factory.mktemp("bad-libraries"))


def _generate(inst_or_library, name: str, digest_bits: int, kind: str, path: Path,
              **options) -> bytes:
    library = _core.Library(str(inst_or_library))
    _core.kat_generate(library, name, digest_bits, kind, str(path), **options)
    return path.read_bytes()


def _without_digests(data: bytes) -> list[bytes]:
    return [line for line in data.split(b"\n") if not line.startswith(b"Dst")]


# ------------------------------------------------------------------------ file format

@pytest.mark.parametrize("kind", ["2_12", "2_23"])
def test_message_lines_are_the_official_ones_byte_for_byte(official_kat, tmp_path, kind):
    """Generated with SM3 as the hash: every line but Dst_Len/Dst equals the official files."""
    data = _generate(ngcc.instance("SM3").library, "SM3", 256, kind,
                     tmp_path / ("KAT_%s_SM3.txt" % kind))
    assert b"\r" not in data and data.endswith(b"\n\n") and not data.endswith(b"\n\n\n")
    records = 4097 if kind == "2_12" else 3
    assert data.count(b"\n") == 5 * records + (records if kind != "2_12" else 0)
    officials = official_kat.files(kind)
    assert len(officials) == 7
    for official in officials:
        assert _without_digests(data) == _without_digests(official.read_bytes()), official


@pytest.mark.parametrize("digest_bits", [512, 768, 1024])
def test_loop_file_format(official_kat, tmp_path, bad_libraries, digest_bits):
    """m_0 and the record layout of KAT_Loop (a zero digest makes the chain quick)."""
    zero = bad_libraries.build("zero-%d" % digest_bits, "Zero", digest_bits, "external")
    data = _generate(zero, "Zero", digest_bits, "Loop", tmp_path / "KAT_Loop_Zero.txt")
    lines = data.split(b"\n")
    official = next(p for p in official_kat.files("Loop")
                    if b"Dst_Len = %d\n" % digest_bits in p.read_bytes())
    assert lines[:3] == official.read_bytes().split(b"\n")[:3]  # Msg_Len, Msg, Dst_Len
    assert lines[3] == b"Dst = " + b"00" * (digest_bits // 8)
    assert lines[4:] == [b"", b""] and lines[1].startswith(b"Msg = 2D911820A8ED0879")


def test_blank_digests_option(tmp_path):
    """OUTPUT_BLANK_TEST_VECTORS: every Dst line empty, everything else unchanged."""
    sm3 = ngcc.instance("SM3").library
    full = _generate(sm3, "SM3", 256, "2_23", tmp_path / "full.txt").split(b"\n")
    blank = _generate(sm3, "SM3", 256, "2_23", tmp_path / "blank.txt",
                      blank_digests=True).split(b"\n")
    assert len(full) == len(blank)
    for mine, other in zip(blank, full, strict=True):
        assert mine == (b"Dst = " if other.startswith(b"Dst = ") else other)


def test_progress_reports_and_a_raising_callback_stops_generation(tmp_path):
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= 100:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        _generate(ngcc.instance("SM3").library, "SM3", 256, "2_12", tmp_path / "x.txt",
                  progress=progress)
    assert seen[0] == (1, 4097) and seen[-1] == (100, 4097)


def test_generator_argument_errors(tmp_path):
    library = _core.Library(str(ngcc.instance("SM3").library))
    with pytest.raises(ValueError, match="instance name"):
        _core.kat_generate(library, "bad name!", 256, "2_12", str(tmp_path / "a"))
    with pytest.raises(ValueError, match="instance name"):
        _core.kat_generate(library, "x" * 65, 256, "2_12", str(tmp_path / "a"))
    with pytest.raises(ValueError, match="digest_bits"):
        _core.kat_generate(library, "SM3", 12, "2_12", str(tmp_path / "a"))
    with pytest.raises(ValueError, match="unknown KAT file"):
        _core.kat_generate(library, "SM3", 256, "2_13", str(tmp_path / "a"))
    with pytest.raises(OSError, match="cannot create"):
        _core.kat_generate(library, "SM3", 256, "2_12", str(tmp_path / "no" / "such" / "a"))


def test_nonzero_crypthash_return_names_the_record(tmp_path, bad_libraries):
    failing = bad_libraries.build("fail-sm3", "SM3", 256, "baseline", ("FAIL_AT",),
                                  ngcc.instance("SM3"))
    with pytest.raises(HashError, match=r"returned -1 for record 1000 \(Msg_Len = 1000\)"):
        _generate(failing, "SM3", 256, "2_12", tmp_path / "x.txt")


# ---------------------------------------------------------- PASS: the shipped instances

@pytest.mark.parametrize("name", list(SHIPPED))
def test_quick_files_pass(name, tmp_path):
    inst = _registered(name)
    [result] = ngcc.kat.check(inst, files=("2_12", "2_23"), out_dir=tmp_path, progress=False,
                              official_dir=KAT_DATA)  # holds KAT_2_23, not KAT_2_12
    assert [(f.name, f.verdict) for f in result.files] == [
        ("KAT_2_12_%s.txt" % name, "PASS"), ("KAT_2_23_%s.txt" % name, "PASS")]
    assert (result.instance, result.candidate, result.verdict) == (name, SHIPPED[name], "PASS")
    assert result.log == tmp_path / SHIPPED[name] / ("%s.log" % name)
    assert result.log.read_text().splitlines()[-1] == "RESULT %s %s PASS" % (SHIPPED[name], name)
    assert not list(tmp_path.rglob("*.txt")), "generated files must be deleted unless keep"
    assert result.files[0].detail == ""
    assert result.files[1].detail == "byte-identical to the official file %s" % (
        KAT_DATA / SHIPPED[name] / name / result.files[1].name)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SHIPPED))
def test_long_files_pass(name, tmp_path):
    """KAT_Loop (10^6 hash calls) and KAT_2_33 (three 1 GiB messages): minutes each."""
    inst = _registered(name)
    [result] = ngcc.kat.check(inst, files=("loop", "2_33"), out_dir=tmp_path, progress=False)
    assert [(f.kind, f.verdict) for f in result.files] == [("2_33", "PASS"), ("loop", "PASS")], \
        [f.detail for f in result.files]
    print("%s: %s" % (name, ", ".join("%s %.1f s" % (f.name, f.seconds) for f in result.files)))


def test_keep_leaves_files_identical_to_the_official_ones(tmp_path):
    inst = _any_shipped()
    [result] = ngcc.kat.check(inst, files="2_23,2_12", out_dir=tmp_path, keep=True,
                              progress=False)
    official_sha256 = raw_sha256(inst.candidate)
    for file in result.files:
        assert file.path == tmp_path / inst.candidate / inst.name / file.name
        data = file.path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == official_sha256[
            "%s/%s" % (inst.name, file.name)], file.name
        if file.kind == "2_23":  # small enough to be in the repository
            assert data == (KAT_DATA / inst.candidate / inst.name / file.name).read_bytes()


# ------------------------------------------------------------------- the other verdicts

def test_wrong_instance_gives_mismatch_naming_the_first_differing_record(
        official_kat, tmp_path, bad_libraries, monkeypatch):
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")  # the wrapper loads a file beside it
    real = _any_shipped()
    wrong = bad_libraries.build("flip", real.name, real.digest_bits, real.candidate,
                                ("FLIP_AT",), real)
    [result] = ngcc.kat.check(wrong, files=("2_12", "2_23"), out_dir=tmp_path, progress=False,
                              official_dir=official_kat.folder(real.name))
    assert result.verdict == "MISMATCH"
    first, second = result.files
    assert first.verdict == "MISMATCH" and second.verdict == "PASS"
    assert "record 1000 (line 5001, Msg_Len = 1000): Dst differs" in first.detail
    log = result.log.read_text()
    assert "record 1000 (line 5001, Msg_Len = 1000)" in log
    assert log.splitlines()[-1] == "RESULT %s %s MISMATCH" % (real.candidate, real.name)
    # the build declares a built-in's name: its label (and its log's name) adds its folder
    assert result.label == real.name + "@flip"
    assert result.log.name == "%s@flip.log" % real.name


def test_mismatch_without_the_official_file(tmp_path, bad_libraries, monkeypatch):
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")  # the wrapper loads a file beside it
    real = _any_shipped()
    wrong = bad_libraries.build("flip", real.name, real.digest_bits, real.candidate,
                                ("FLIP_AT",), real)
    empty = tmp_path / "no-official-files"
    empty.mkdir()
    [result] = ngcc.kat.check(wrong, files="2_12", out_dir=tmp_path, progress=False,
                              official_dir=empty)
    assert result.files[0].verdict == "MISMATCH"
    assert "official file not at hand" in result.files[0].detail


def test_nonzero_return_gives_mismatch(tmp_path, bad_libraries, monkeypatch):
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")  # the wrapper loads a file beside it
    real = _any_shipped()
    failing = bad_libraries.build("fail", real.name, real.digest_bits, real.candidate,
                                  ("FAIL_AT",), real)
    [result] = ngcc.kat.check(failing, files="2_12", out_dir=tmp_path, progress=False)
    assert result.verdict == "MISMATCH"
    assert "returned -1 for record 1000 (Msg_Len = 1000)" in result.files[0].detail
    assert not list(tmp_path.rglob("*.txt*")), "no half-written file may stay behind"


def test_nokat_for_an_instance_without_manifest_line(tmp_path):
    [result] = ngcc.kat.check("SM3", out_dir=tmp_path, progress=False)
    assert result.verdict == "NOKAT"
    assert [f.verdict for f in result.files] == ["NOKAT", "NOKAT"]
    assert all(f.canonical_sha256 and f.expected_sha256 is None for f in result.files)
    assert result.log.read_text().splitlines()[-1] == "RESULT baseline SM3 NOKAT"


def test_crashing_library_gives_crash_and_the_caller_survives(tmp_path, bad_libraries):
    crashing = bad_libraries.build("crash", "Crasher", 512, "external", ("CRASH",))
    [result] = ngcc.kat.check(crashing, out_dir=tmp_path, progress=False)
    assert result.verdict == "CRASH"
    assert [f.verdict for f in result.files] == ["CRASH", "CRASH"]
    assert "SIGSEGV" in result.files[0].detail
    assert not list(tmp_path.rglob("*.txt*"))
    assert result.log.read_text().splitlines()[-1] == "RESULT external Crasher CRASH"


def test_a_crash_in_one_file_does_not_stop_the_next(tmp_path, bad_libraries, monkeypatch):
    monkeypatch.setenv("NGCC_NO_SANDBOX", "1")  # the wrapper loads a file beside it
    crashing = bad_libraries.build("crash-at", "SM3", 256, "baseline", ("CRASH_AT",),
                                   ngcc.instance("SM3"))
    [result] = ngcc.kat.check(crashing, out_dir=tmp_path, progress=False)
    assert [f.verdict for f in result.files] == ["CRASH", "NOKAT"]
    assert result.verdict == "CRASH"


def test_hanging_library_gives_timeout(tmp_path, bad_libraries):
    hanging = bad_libraries.build("hang", "Hanger", 512, "external", ("HANG",))
    [result] = ngcc.kat.check(hanging, files="2_23", out_dir=tmp_path, progress=False,
                              timeout=2)
    assert result.verdict == "TIMEOUT"
    assert "killed" in result.files[0].detail
    assert not list(tmp_path.rglob("*.txt*"))


def test_a_killed_caller_takes_the_generating_child_with_it(tmp_path, bad_libraries):
    """A hanging library must not outlive a caller that was killed (e.g. by a CI timeout)."""
    hanging = bad_libraries.build("hang", "Hanger", 512, "external", ("HANG",))
    caller = subprocess.Popen([sys.executable, "-c", "import ngcc.kat, sys; "
                               "ngcc.kat.check(sys.argv[1], out_dir=sys.argv[2], progress=False)",
                               str(hanging), str(tmp_path)])
    children = Path("/proc/%d/task/%d/children" % (caller.pid, caller.pid))
    if not children.exists():
        caller.kill()
        caller.wait()
        pytest.skip("no /proc/PID/task/PID/children here")
    deadline = time.monotonic() + 60
    while not list(tmp_path.rglob("*.part")) and time.monotonic() < deadline:
        time.sleep(0.05)  # the child is inside the library once the .part file exists
    [child_pid] = [int(pid) for pid in children.read_text().split()]
    caller.kill()
    caller.wait()
    while Path("/proc/%d" % child_pid).exists() and time.monotonic() < deadline:
        status = Path("/proc/%d/stat" % child_pid).read_text(errors="replace")
        if status.rsplit(")", 1)[-1].split()[0] == "Z":  # dead, waiting to be reaped
            break
        time.sleep(0.05)
    else:
        assert not Path("/proc/%d" % child_pid).exists(), "the child outlived its caller"


MEMORY_CHILD = textwrap.dedent("""
    import resource, sys
    import ngcc, ngcc.kat
    from ngcc import _core
    from ngcc.base.errors import KatMemoryError

    def vm_size():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

    out = sys.argv[1]
    limit = vm_size() + 512 * 2**20  # room for everything but the 1 GiB message
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    library = _core.Library(str(ngcc.instance("SM3").library))
    try:
        _core.kat_generate(library, "SM3", 256, "2_33", out + "/direct.txt")
    except KatMemoryError as exc:
        print("direct", isinstance(exc, MemoryError), exc)
    [result] = ngcc.kat.check("SM3", files="2_33", out_dir=out, progress=False)
    print("check", result.verdict, result.files[0].detail)
""")


def test_no_memory_for_the_1_gib_message_is_a_clear_error(tmp_path):
    child = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(tmp_path)],
                           capture_output=True, text=True, timeout=300, check=False)
    assert child.returncode == 0, child.stderr
    direct, checked = child.stdout.splitlines()
    assert direct.startswith("direct True cannot allocate the 1073741824-byte message buffer")
    assert checked.startswith("check ERROR KatMemoryError: cannot allocate the 1073741824-byte")


# ------------------------------------------------------------------ arguments and CLI

def test_check_argument_errors():
    with pytest.raises(ValueError, match="unknown KAT file"):
        ngcc.kat.check("SM3", files="2_12,2_34", progress=False)
    with pytest.raises(ValueError, match="no KAT file"):
        ngcc.kat.check("SM3", files="", progress=False)
    with pytest.raises(ValueError, match="timeout"):
        ngcc.kat.check("SM3", timeout=0, progress=False)
    with pytest.raises(UnknownInstanceError):
        ngcc.kat.check(["SM3", "NoSuchHash"], progress=False)


def test_file_name():
    assert ngcc.kat.file_name("loop", "Wish512") == "KAT_Loop_Wish512.txt"
    assert ngcc.kat.file_name("KAT_2_33", "Pavelor-768") == "KAT_2_33_Pavelor-768.txt"


def test_cli_exit_status_is_zero_only_if_all_pass(tmp_path, capsys):
    inst = _any_shipped()
    assert main(["kat", inst.name, "--out", str(tmp_path), "--no-progress"]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main(["kat", inst.name, "SM3", "--files", "2_23", "--out", str(tmp_path),
                 "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "NOKAT" in out and "KAT_2_23_SM3.txt" in out
    assert (tmp_path / "baseline" / "SM3.log").is_file()


def test_two_builds_of_one_instance_get_two_logs(tmp_path, capsys):
    """The label, not the instance name, names the log: two builds of one instance (and
    a --label) each keep their own log; the instance name still picks the manifest line."""
    paths = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        library = tmp_path / folder / "SM3.so"
        library.write_bytes(ngcc.instance("SM3").library.read_bytes())
        (tmp_path / folder / "SM3.so.json").write_text(json.dumps(
            {"name": "SM3", "digest_bits": 256, "candidate": "baseline"}))
        paths.append(str(library))
    results = ngcc.kat.check([*paths, "SM3"], files="2_23", out_dir=tmp_path / "logs",
                             progress=False)
    assert [r.label for r in results] == ["SM3@a", "SM3@b", "SM3"]
    assert [r.log.name for r in results] == ["SM3@a.log", "SM3@b.log", "SM3.log"]
    assert all(r.verdict == "NOKAT" and r.log.is_file() for r in results)
    assert "label       SM3@b" in results[1].log.read_text()
    assert main(["kat", paths[0], "--label", "theirs", "--files", "2_23", "--no-progress",
                 "--out", str(tmp_path / "cli")]) == 1                   # NOKAT
    assert (tmp_path / "cli" / "baseline" / "theirs.log").is_file()
    assert "theirs" in capsys.readouterr().out


def test_cli_candidate_and_all_check_every_builtin_instance(tmp_path, monkeypatch, capsys):
    checked: list[list[str]] = []

    def fake_check(instances, **settings):       # what the CLI asks for, not generated
        checked.append([inst.name for inst in instances])
        return [ngcc.kat.KatResult(inst.name, inst.candidate, "PASS", tmp_path / "x.log", (),
                                   inst.variant, None, label) for inst, label in
                zip(instances, settings["labels"], strict=True)]
    monkeypatch.setattr(ngcc.driver.kat, "check", fake_check)
    assert main(["kat", "--candidate", "hash-35", "--no-progress"]) == 0
    assert main(["kat", "--all", "--no-progress"]) == 0
    assert checked == [[i.name for i in ngcc.instances() if i.candidate == "hash-35"],
                       [i.name for i in ngcc.instances()]]
    assert "Wish1024" in capsys.readouterr().out
    assert main(["kat", "--no-progress"]) == 2  # a usage mistake
    assert "--candidate ID or --all" in capsys.readouterr().err


def test_cli_without_a_terminal_prints_a_line_per_file_and_no_carriage_return(tmp_path):
    child = subprocess.run([sys.executable, "-m", "ngcc", "kat", "SM3", "--out",
                            str(tmp_path)], capture_output=True, text=True, timeout=120,
                           check=False)
    assert child.returncode == 1, child.stderr                 # SM3 is NOKAT
    assert "\r" not in child.stdout + child.stderr
    lines = child.stderr.splitlines()
    assert [line.split(":")[0] for line in lines] == ["KAT_2_12_SM3", "KAT_2_23_SM3"]
    assert all(" generated in " in line for line in lines)


def test_kat_files_is_spelled_as_in_campaign_and_the_old_spelling_still_works(tmp_path,
                                                                               capsys):
    for option in ("--kat-files", "--files"):
        assert main(["kat", "SM3", option, "2_99", "--out", str(tmp_path)]) == 2
        assert "unknown KAT file '2_99'" in capsys.readouterr().err
    assert main(["kat", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "--kat-files LIST" in shown and "--files LIST" not in shown
