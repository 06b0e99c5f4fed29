"""``ngcc build``: ICCS submission folders made by the tests themselves (no foreign code)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ngcc
from ngcc import _isolate
from ngcc._build import build, read_instance_header, select_sources
from ngcc._errors import BuildError, InstanceCrashError, InstanceTimeoutError, KatGateError

# Campaigns on this shared machine warn about load; those warnings are not under test here.
pytestmark = pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")

REPO = Path(__file__).resolve().parents[1]
ALGORITHMS = REPO / "algorithms"

KAT_DRIVER = """#include <stdio.h>
#include "CryptHash_AlgorithmInstance.h"
int main(void) { puts(ALGORITHM_INSTANCE); return 0; }
"""


def _header(name: str, bits: int | None, extra: str = "") -> str:
    lines = ['#define ALGORITHM_INSTANCE "%s"' % name]
    if bits is not None:
        lines.append("#define DIGEST_BIT_LENGTH %d" % bits)
    return "\n".join(lines + [extra, ""])


def iccs_folder(path: Path, family: str, name: str, bits: int, defines: str = "") -> Path:
    """Lay out an ICCS-style submission folder from one of our own families.

    Each C file first includes the instance header, as a submission's sources do.
    """
    path.mkdir(parents=True)
    for header in (ALGORITHMS / family).glob("*.h"):
        shutil.copy(header, path)
    for source in (ALGORITHMS / family).glob("*.c"):
        (path / source.name).write_text('#include "CryptHash_AlgorithmInstance.h"\n'
                                        + source.read_text())
    shutil.copy(ALGORITHMS / "include" / "crypt_hash.h", path)
    (path / "CryptHash_AlgorithmInstance.h").write_text(_header(name, bits, defines))
    (path / "KAT_CryptHash.c").write_text(KAT_DRIVER)
    return path


def c_folder(path: Path, body: str, bits: int = 256, name: str = "Fixture-256") -> Path:
    path.mkdir(parents=True)
    (path / "CryptHash_AlgorithmInstance.h").write_text(_header(name, bits))
    (path / "CryptHash_AlgorithmInstance.c").write_text(
        '#include <signal.h>\n#include <string.h>\n#include "CryptHash_AlgorithmInstance.h"\n'
        + body)
    return path


CRASH_ON_64_BYTES = """
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    if (bits == 512) raise(SIGSEGV);
    memset(out, m && bits ? m[0] : 0, (size_t)d / 8);
    return 0;
}
"""

HANG = """
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    volatile int forever = 1;
    (void)m; (void)bits;
    while (forever) {}
    memset(out, 0, (size_t)d / 8);
    return 0;
}
"""


def test_builds_an_iccs_folder_that_hashes_like_the_builtin(tmp_path):
    folder = iccs_folder(tmp_path / "sm3", "sm3", "SM3", 256)
    result = build(folder, out_dir=tmp_path / "out")
    assert result.instance.name == "SM3"
    assert result.instance.digest_bits == 256
    assert result.instance.variant == "external"
    assert "KAT_CryptHash.c" in result.skipped
    assert result.warnings == ""
    for size in (0, 3, 64, 1000):
        msg = os.urandom(size)
        assert ngcc.hash(result.instance.library, msg) == ngcc.hash("SM3", msg)
    # The built folder and the sidecar-described library both work as instance names.
    assert ngcc.instance(tmp_path / "out").library == result.instance.library
    assert ngcc.hash(str(tmp_path / "out"), b"abc") == ngcc.hash("SM3", b"abc")


def test_flag_sets_and_literal_flags_are_recorded(tmp_path):
    folder = iccs_folder(tmp_path / "sm3", "sm3", "SM3", 256)
    result = build(folder, flags="-O1 -std=c99", out_dir=tmp_path / "o1")
    assert result.instance.cflags[:2] == ("-O1", "-std=c99")
    result = build(folder, flags="resource", out_dir=tmp_path / "res")
    assert "-Os" in result.instance.cflags


def test_header_without_digest_length_is_refused(tmp_path):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    (folder / "CryptHash_AlgorithmInstance.h").write_text(_header("NoLength", None))
    with pytest.raises(BuildError, match="no DIGEST_BIT_LENGTH"):
        read_instance_header(folder)
    with pytest.raises(BuildError, match="no DIGEST_BIT_LENGTH"):
        build(folder, out_dir=tmp_path / "out")


def test_programs_with_main_are_left_out(tmp_path):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    (folder / "selftest.c").write_text("int main(void) { return 0; }\n")
    (folder / "bench.c").write_text("#include <stdio.h>\nint main(int c, char **v)\n"
                                    "{ (void)c; (void)v; return 0; }\n")
    sources, skipped = select_sources(folder)
    assert [s.name for s in sources] == ["CryptHash_AlgorithmInstance.c"]
    assert set(skipped) == {"selftest.c", "bench.c"}
    result = build(folder, out_dir=tmp_path / "out")
    assert set(result.skipped) == {"selftest.c", "bench.c"}


def test_library_without_crypthash_is_refused(tmp_path):
    folder = c_folder(tmp_path / "f", "int NotCryptHash(void) { return 0; }\n")
    with pytest.raises(BuildError, match="does not export CryptHash"):
        build(folder, out_dir=tmp_path / "out")
    assert not list((tmp_path / "out").glob("*.so"))


def test_compile_error_is_shortened_and_names_the_file(tmp_path):
    folder = c_folder(tmp_path / "f", "int CryptHash(void) { return undeclared_thing; }\n")
    with pytest.raises(BuildError) as error:
        build(folder, out_dir=tmp_path / "out")
    text = str(error.value)
    assert "does not compile" in text and "undeclared_thing" in text
    assert len(text.splitlines()) < 20


def test_segfaulting_library_raises_and_the_caller_survives(tmp_path):
    library = build(c_folder(tmp_path / "f", CRASH_ON_64_BYTES), out_dir=tmp_path / "o").instance
    assert ngcc.hash(library.library, b"\x07" * 63) == b"\x07" * 32
    with pytest.raises(InstanceCrashError, match=r"Fixture-256.*SIGSEGV"):
        ngcc.hash(library.library, b"\x07" * 64)
    assert ngcc.hash(library.library, b"\x09" * 65) == b"\x09" * 32


def test_timing_a_segfaulting_library_raises_and_the_caller_survives(tmp_path):
    library = build(c_folder(tmp_path / "f", CRASH_ON_64_BYTES), out_dir=tmp_path / "o").instance
    result = ngcc.time_calls(library.library, 32, 50, warmup=1)
    assert result.cycles.shape == (50,) and not result.cycles.flags.writeable
    assert result.instance == library
    with pytest.raises(InstanceCrashError, match=r"Fixture-256 timing 50 calls at 64 B"):
        ngcc.time_calls(library.library, 64, 50)


def test_hanging_library_times_out(tmp_path, monkeypatch):
    library = build(c_folder(tmp_path / "f", HANG), out_dir=tmp_path / "o").instance
    monkeypatch.setattr(_isolate, "DEFAULT_TIMEOUT", 2.0)
    with pytest.raises(InstanceTimeoutError, match=r"Fixture-256.*did not finish"):
        ngcc.hash(library.library, b"abc")


def test_a_hanging_child_dies_with_its_killed_parent(tmp_path):
    # A campaign stopped with kill -9 must not leave a trial spinning on its CPU.
    library = build(c_folder(tmp_path / "f", HANG), out_dir=tmp_path / "o").instance
    parent = subprocess.Popen([sys.executable, "-c", "import ngcc, sys; "
                               "ngcc.hash(sys.argv[1], b'abc')", str(library.library)])
    children = Path("/proc/%d/task/%d/children" % (parent.pid, parent.pid))
    deadline = time.monotonic() + 60
    child = ""
    while not child and time.monotonic() < deadline:
        child = children.read_text().strip() if children.exists() else ""
        time.sleep(0.05)
    assert child, "the parent never started its child"
    time.sleep(1.0)  # the child is past its start-up and inside CryptHash
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while Path("/proc/%s" % child).exists() and time.monotonic() < deadline:
        state = (Path("/proc/%s/stat" % child).read_text().split(") ")[-1][:1]
                 if Path("/proc/%s/stat" % child).exists() else "")
        if state == "Z":  # dead, waiting for init to reap it
            break
        time.sleep(0.05)
    else:
        if Path("/proc/%s" % child).exists():
            os.kill(int(child), signal.SIGKILL)  # do not leave it spinning
            pytest.fail("the child outlived its parent")


def test_not_a_folder(tmp_path):
    with pytest.raises(BuildError, match="not a folder"):
        build(tmp_path / "missing")


def test_cli_build_then_hash(tmp_path, capsys):
    from ngcc._cli import main

    folder = iccs_folder(tmp_path / "sm3", "sm3", "SM3", 256)
    assert main(["build", str(folder), "--out", str(tmp_path / "out"), "--name", "MySM3"]) == 0
    out = capsys.readouterr().out
    assert "skipped KAT_CryptHash.c" in out and "MySM3.so" in out
    assert main(["hash", str(tmp_path / "out" / "MySM3.so"), str(folder / "sm3.h")]) == 0
    assert capsys.readouterr().out.strip() == ngcc.hash(
        "SM3", (folder / "sm3.h").read_bytes()).hex()


def test_cli_build_failure_is_one_line_and_nonzero(tmp_path, capsys):
    from ngcc._cli import main

    folder = c_folder(tmp_path / "f", "int CryptHash(void) { return undeclared_thing; }\n")
    assert main(["build", str(folder), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ngcc: error:") and "undeclared_thing" in err


USES_DRNG = """#include "drng.h"
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    init_random_number(m, (bits + 7) / 8);
    return get_random_number((unsigned long long)d, out);
}
"""


def test_supplies_the_iccs_drng_to_a_folder_without_one(tmp_path):
    from ngcc import _core

    result = build(c_folder(tmp_path / "f", USES_DRNG), out_dir=tmp_path / "o")
    assert result.drng_supplied
    for seed in (b"", b"KAT_2_12" * 8, os.urandom(100)):
        assert ngcc.hash(result.instance, seed) == _core.Drng(seed).generate(256)


def test_folder_with_its_own_drng_keeps_it(tmp_path):
    folder = c_folder(tmp_path / "f", USES_DRNG)
    (folder / "drng.h").write_text(
        "int init_random_number(const unsigned char *s, unsigned long long n);\n"
        "int get_random_number(unsigned long long n, unsigned char *o);\n")
    (folder / "drng.c").write_text('#include <string.h>\n#include "drng.h"\n'
                                   "int init_random_number(const unsigned char *s, "
                                   "unsigned long long n) { (void)s; (void)n; return 0; }\n"
                                   "int get_random_number(unsigned long long n, unsigned char *o)"
                                   " { memset(o, 0x5a, (size_t)(n / 8)); return 0; }\n")
    result = build(folder, out_dir=tmp_path / "o")
    assert not result.drng_supplied
    assert ngcc.hash(result.instance, b"abc") == b"\x5a" * 32


@pytest.mark.parametrize(("name", "bits"), [("WChain-V1-512", 512), ("WChain-V2-1024", 1024)])
def test_wchain_submission_folder_passes_the_official_kat(tmp_path, name, bits):
    folder = iccs_folder(tmp_path / name, "wchain", name, bits)
    result = build(folder, out_dir=tmp_path / "out")
    assert result.instance.candidate == "hash-34"  # from the manifest's instance names
    for size in (0, 1, 64, 1000):
        msg = os.urandom(size)
        assert ngcc.hash(result.instance, msg) == ngcc.hash(name, msg)
    (report,) = ngcc.kat.check([result.instance.library], out_dir=tmp_path / "kat",
                               progress=False)
    assert (report.candidate, report.verdict) == ("hash-34", "PASS")
    assert [f.verdict for f in report.files] == ["PASS", "PASS"]


def test_kat_against_the_submissions_own_files(tmp_path, official_kat):
    official = official_kat.file("WChain-V1-512", "2_12")
    package = tmp_path / "package"
    folder = iccs_folder(package / "Reference_Implementation", "wchain", "MyChain", 512)
    vectors = package / "Test_Vectors"
    vectors.mkdir()
    shutil.copy(official, vectors / "KAT_2_12_MyChain.txt")
    library = build(folder, out_dir=tmp_path / "out").instance.library
    assert ngcc.instance(library).candidate == "external"

    (report,) = ngcc.kat.check([library], files="2_12,2_23", out_dir=tmp_path / "kat",
                               progress=False)
    assert [f.verdict for f in report.files] == ["PASS", "NOKAT"]
    assert "submission's own KAT file" in report.files[0].detail

    lines = official.read_text().split("\n")  # flip the last digit of record 1000's Dst
    dst = next(i for i, line in enumerate(lines) if line.startswith("Dst = ")
               and lines[i - 3] == "Msg_Len = 1000")
    lines[dst] = lines[dst][:-1] + ("0" if lines[dst][-1] != "0" else "1")
    (vectors / "KAT_2_12_MyChain.txt").write_text("\n".join(lines))
    (report,) = ngcc.kat.check([library], files="2_12", out_dir=tmp_path / "kat",
                               progress=False)
    assert report.verdict == "MISMATCH"
    assert "Msg_Len = 1000" in report.files[0].detail


def test_candidate_given_on_the_command_line_picks_the_manifest(tmp_path, capsys):
    from ngcc._cli import main

    folder = iccs_folder(tmp_path / "src", "wchain", "WChain-V1-512", 512)
    library = build(folder, out_dir=tmp_path / "out", candidate="hash-99").instance.library
    assert ngcc.instance(library).candidate == "hash-99"  # recorded by ngcc build
    assert main(["kat", str(library), "--files", "2_12", "--no-progress",
                 "--out", str(tmp_path / "kat")]) == 1   # no hash-99 manifest: NOKAT
    assert "NOKAT" in capsys.readouterr().out
    assert main(["kat", str(library), "--candidate", "hash-34", "--files", "2_12",
                 "--no-progress", "--out", str(tmp_path / "kat")]) == 0
    out = capsys.readouterr().out
    assert "hash-34" in out and "PASS" in out


# Campaigns on built submissions: the crash isolation of issue 9. Each trial is a
# child process, so a library that crashes, hangs or fails at one length costs that
# job only; the others are measured and the orchestrator lives on.

FAILS_AT = """
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    volatile int forever = 1;
    if (bits == 8 * 64) raise(SIGSEGV);
    if (bits == 8 * 128) while (forever) {}
    if (bits == 8 * 256) return -7;
    memset(out, m && bits ? m[0] : 0, (size_t)d / 8);
    return 0;
}
"""


def _quick(instances, run_dir, **settings):
    settings = {"quick": True, "trials": 2, "progress": False, **settings}
    return ngcc.Campaign(instances, run_dir=run_dir, **settings).run()


def test_campaign_measures_a_built_submission_like_the_builtin(tmp_path):
    folder = iccs_folder(tmp_path / "src", "wchain", "WChain-V1-512", 512)
    external = build(folder, out_dir=tmp_path / "out").instance
    run = _quick([external.library, "WChain-V1-512"], tmp_path / "run", lengths=[32, 1024])
    assert run.complete and not run.failed_jobs
    assert {job["stem"] for job in run.jobs} == {"WChain-V1-512", "WChain-V1-512.external"}
    assert len(run.records) == 4
    # the bare name means the built-in one even when the external is listed first
    assert run.record("WChain-V1-512", 32).data["variant"] == "ref"
    assert run.record("WChain-V1-512.external", 32).data["variant"] == "external"
    for rec in run.records:  # both passed the same official KAT gate
        assert rec.data["kat"]["verdict"] == "PASS", rec.path
        assert not rec.data["kat"]["timed_without_pass"], rec.path
    run.report()
    page = (run.path / "report" / "hash-34.md").read_text()
    # Each library keeps its own name on the page and its own distribution plot.
    assert "[`WChain-V1-512` 32 B](WChain-V1-512__hash_32-calls.png)" in page
    assert ("[`WChain-V1-512.external` 32 B](WChain-V1-512.external__hash_32-calls.png)"
            in page)


def test_campaign_survives_a_library_that_crashes_hangs_and_fails(tmp_path):
    library = build(c_folder(tmp_path / "f", FAILS_AT), out_dir=tmp_path / "o").instance
    run = _quick([library.library], tmp_path / "run", lengths=[32, 64, 128, 256, 512],
                 allow_kat_fail=True, kat_files=["2_23"], kat_timeout=20,
                 trial_timeout=5)
    status = {job["message_bytes"]: job["status"] for job in run.jobs}
    assert status == {32: "done", 64: "crash", 128: "timeout", 256: "error", 512: "done"}
    errors = {job["message_bytes"]: job["error"] for job in run.failed_jobs}
    assert "Fixture-256" in errors[64] and "SIGSEGV" in errors[64]
    assert "Fixture-256" in errors[128] and "128 B" in errors[128]
    assert "Fixture-256" in errors[256]
    assert {rec.message_bytes for rec in run.records} == {32, 512}
    for rec in run.records:  # timed after a failed KAT gate: marked in every record
        assert rec.data["kat"]["timed_without_pass"]


def test_campaign_refuses_a_submission_that_crashes_in_the_kat(tmp_path):
    library = build(c_folder(tmp_path / "f", FAILS_AT), out_dir=tmp_path / "o").instance
    with pytest.raises(KatGateError, match=r"Fixture-256 CRASH"):
        _quick([library.library], tmp_path / "run", lengths=[32], kat_files=["2_12"],
               kat_timeout=20)
    log = (tmp_path / "run" / "kat" / "external" / "Fixture-256.external.log").read_text()
    assert log.rstrip().endswith("RESULT external Fixture-256 CRASH")


PRINTS = """#include <unistd.h>
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    (void)m; (void)bits;
    if (write(1, "noise from the library\\n", 23) < 0) return -1;
    memset(out, 0x11, (size_t)d / 8);
    return 0;
}
"""


def test_a_library_that_writes_to_stdout_does_not_corrupt_the_result(tmp_path):
    folder = c_folder(tmp_path / "f", PRINTS)
    library = build(folder, flags="-std=gnu99 -O2", out_dir=tmp_path / "o").instance
    assert ngcc.hash(library, b"abc") == b"\x11" * 32


def test_an_error_that_cannot_be_pickled_back_still_reaches_the_caller():
    # UnknownInstanceError takes two constructor arguments: pickle cannot rebuild it.
    with pytest.raises(ngcc.NgccError, match=r"UnknownInstanceError: unknown instance "
                                             r"'NoSuchThing'") as error:
        _isolate.run_isolated("ngcc._registry:instance", "looking up", name="NoSuchThing")
    assert not isinstance(error.value, InstanceCrashError)
