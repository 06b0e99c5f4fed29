"""``ngcc build``: ICCS submission folders made by the tests themselves (no foreign code)."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

import ngcc
import ngcc.library.katfile
from ngcc.base.errors import (
    BuildError,
    InstanceCrashError,
    InstanceTimeoutError,
    InvalidNameError,
    KatGateError,
    LibraryError,
)
from ngcc.driver import child as _child
from ngcc.library.build import build
from ngcc.library.header import read_instance_header
from ngcc.library.provenance import read_provenance
from ngcc.library.sources import select_sources

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
    """Lay out an ICCS-style submission folder from one of our own families' ``ref``
    variant (its sources in instances.json; an ``opt`` variant's need other flags).

    Each C file first includes the instance header, as a submission's sources do.
    """
    path.mkdir(parents=True)
    for header in (ALGORITHMS / family).glob("*.h"):
        shutil.copy(header, path)
    spec = json.loads((ALGORITHMS / family / "instances.json").read_text())
    for name_in_family in spec["variants"]["ref"]["sources"]:
        source = ALGORITHMS / family / name_in_family
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


@pytest.mark.parametrize("flags", ["reference", "performance"])  # plain and LTO objects
def test_programs_whose_object_defines_main_are_left_out(tmp_path, flags):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    (folder / "selftest.c").write_text("int main(void) { return 0; }\n")
    (folder / "bench.c").write_text("#include <stdio.h>\nint main(int c, char **v)\n"
                                    "{ (void)c; (void)v; return 0; }\n")
    (folder / "notes.c").write_text('/* main(void) is elsewhere */\nconst char *ngcc_note = '
                                    '"int main(void)";\n')  # mentions main, defines none
    sources, skipped = select_sources(folder)  # the compiler decides, not the text
    assert {s.name for s in sources} == {"CryptHash_AlgorithmInstance.c", "bench.c",
                                         "notes.c", "selftest.c"} and not skipped
    result = build(folder, flags=flags, out_dir=tmp_path / "out")
    assert set(result.skipped) == {"selftest.c", "bench.c"}
    assert all("defines main()" in why for why in result.skipped.values())
    assert result.sources == ("CryptHash_AlgorithmInstance.c", "notes.c")


def test_excluded_files_are_left_out_and_unknown_ones_refused(tmp_path):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    (folder / "broken_tool.c").write_text("#include \"missing_header.h\"\n")
    with pytest.raises(BuildError, match=r"missing_header\.h(.|\n)*--exclude FILE"):
        build(folder, out_dir=tmp_path / "out")
    result = build(folder, out_dir=tmp_path / "out", exclude=["broken_tool.c"])
    assert result.skipped == {"broken_tool.c": "excluded by request"}
    with pytest.raises(BuildError, match=r"no C file absent\.c to exclude"):
        build(folder, out_dir=tmp_path / "out", exclude=["absent.c"])


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
    monkeypatch.setattr(_child, "HASH_TIMEOUT", 2.0)
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
    from ngcc.cli.main import main

    folder = iccs_folder(tmp_path / "sm3", "sm3", "SM3", 256)
    assert main(["build", str(folder), "--out", str(tmp_path / "out"), "--name", "MySM3"]) == 0
    out = capsys.readouterr().out
    assert "skipped KAT_CryptHash.c" in out and "MySM3.so" in out
    assert main(["hash", str(tmp_path / "out" / "MySM3.so"), str(folder / "sm3.h")]) == 0
    assert capsys.readouterr().out.strip() == ngcc.hash(
        "SM3", (folder / "sm3.h").read_bytes()).hex()


def test_cli_build_failure_is_one_line_and_nonzero(tmp_path, capsys):
    from ngcc.cli.main import main

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


# The audit's cases (issues 13 and 16), each on a small folder written here.

GUARDED_MAIN = """
#if !defined(FIXTURE_NO_MAIN)
#include <stdio.h>
/* the submitters' self-test, compiled unless -DFIXTURE_NO_MAIN */
int main(void)
{
    unsigned char digest[64];
    wchain_hash((const unsigned char *)"abc", 24, digest);
    printf("%02x\\n", digest[0]);
    return 0;
}
#endif
"""


@pytest.fixture(scope="module")
def wchain_like(tmp_path_factory):
    """A WChain folder whose library code shares a file with a guarded main, as the
    submitters' wchain_c.c does; built once with --define FIXTURE_NO_MAIN."""
    from ngcc.cli.main import main

    root = tmp_path_factory.mktemp("wchain-like")
    folder = iccs_folder(root / "WChain-V1-512", "wchain", "WChain-V1-512", 512)
    with (folder / "wchain_mode.c").open("a") as source:
        source.write(GUARDED_MAIN)
    assert main(["build", str(folder), "--define", "FIXTURE_NO_MAIN", "--label", "theirs-ref",
                 "--extra-cflags", "-fno-strict-aliasing", "--out", str(root / "out")]) == 0
    return folder, root / "out" / "WChain-V1-512.so"


def test_a_guarded_main_is_named_with_the_define_that_turns_it_off(wchain_like, tmp_path):
    folder, _ = wchain_like
    with pytest.raises(BuildError) as error:
        build(folder, out_dir=tmp_path / "out")
    text = str(error.value)
    assert ("wchain_hash, used by crypthash.c; defined in wchain_mode.c, left out because "
            "its object defines main()") in text
    assert re.search(r"wchain_mode\.c:\d+: main\(\) is inside `#if !defined\(FIXTURE_NO_MAIN\)` "
                     r"\(line \d+\): build with --define FIXTURE_NO_MAIN", text)
    assert not list((tmp_path / "out").glob("*.so*"))


def test_a_guarded_main_builds_and_passes_the_kat_with_its_define(wchain_like, tmp_path):
    _, library = wchain_like
    inst = ngcc.instance(library)
    assert (inst.name, inst.candidate, inst.label) == ("WChain-V1-512", "hash-34", "theirs-ref")
    assert "-DFIXTURE_NO_MAIN" in inst.cflags and "-fno-strict-aliasing" in inst.cflags
    assert json.loads((library.parent / "WChain-V1-512.so.json").read_text())["skipped"] == {
        "KAT_CryptHash.c": "the official KAT driver (ngcc generates KATs itself)"}
    (report,) = ngcc.kat.check([library], files="2_12", out_dir=tmp_path / "kat",
                               progress=False)
    assert (report.candidate, report.verdict) == ("hash-34", "PASS")


def test_an_unguarded_main_is_named_with_a_define_that_renames_it(tmp_path):
    folder = c_folder(tmp_path / "f", """
int helper(unsigned char *out, int n);
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    (void)m; (void)bits;
    return helper(out, d / 8);
}
""")
    (folder / "helper-and-test.c").write_text(
        "#include <string.h>\n"
        "int helper(unsigned char *out, int n) { memset(out, 0x42, (size_t)n); return 0; }\n"
        "int main(void) { unsigned char d[32]; return helper(d, 32); }\n")
    with pytest.raises(BuildError, match=r"helper-and-test\.c:3: main\(\) is not guarded by a "
                                         r"macro; .* --define main=helper_and_test_main"):
        build(folder, out_dir=tmp_path / "out")
    result = build(folder, defines=["main=helper_and_test_main"], out_dir=tmp_path / "out")
    assert "helper-and-test.c" in result.sources
    assert ngcc.hash(result.instance, b"abc") == b"\x42" * 32


def test_the_sidecar_records_the_provenance(wchain_like):
    folder, library = wchain_like
    facts = read_provenance(library)
    assert facts is not None
    assert facts.source_dir == str(folder)
    assert facts.source_sha256 == {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
                                   for path in folder.iterdir()
                                   if path.suffix in (".c", ".h")}
    assert (facts.flag_set, facts.defines, facts.extra_cflags) == (
        "reference", ("FIXTURE_NO_MAIN",), ("-fno-strict-aliasing",))
    assert facts.cflags == tuple(ngcc.instance(library).cflags)
    assert facts.compiler == ngcc.instance(library).compiler and facts.compiler
    assert facts.ngcc_version == ngcc.__version__
    built = datetime.datetime.strptime(facts.built_at, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc)
    assert abs(datetime.datetime.now(datetime.timezone.utc) - built) < datetime.timedelta(hours=1)
    assert facts.skipped == {"KAT_CryptHash.c": "the official KAT driver (ngcc generates KATs "
                                                "itself)"}
    assert facts.kat_basis == "manifest" and facts.kat_files[0].endswith("hash-34.sha256")
    meta = json.loads((library.parent / "WChain-V1-512.so.json").read_text())
    assert {key: meta[key] for key in facts.to_json()} == facts.to_json()
    assert ngcc.instance("WChain-V1-512").label is None  # built-ins have none


def test_provenance_of_an_old_or_tampered_sidecar(wchain_like, tmp_path):
    _, library = wchain_like
    meta = json.loads(library.with_name(library.name + ".json").read_text())
    copy = tmp_path / library.name
    shutil.copy(library, copy)
    old = {k: v for k, v in meta.items() if k not in read_provenance(library).to_json()}
    copy.with_name(copy.name + ".json").write_text(json.dumps(old))
    assert read_provenance(copy) is None  # an ngcc that recorded none
    copy.with_name(copy.name + ".json").write_text(json.dumps({**meta, "source_sha256": []}))
    with pytest.raises(LibraryError, match=r"corrupt provenance.*source_sha256"):
        read_provenance(copy)


@pytest.mark.parametrize(("key", "value", "what"), [
    ("name", "../../PWNED", "instance name"), ("label", "a/b", "label"),
    ("family", ".hidden", "family"), ("candidate", "../x", "candidate id"),
    ("candidate", "hash-99", "candidate id")])
def test_sidecar_names_are_checked_when_read(wchain_like, tmp_path, key, value, what):
    _, library = wchain_like
    meta = json.loads(library.with_name(library.name + ".json").read_text())
    copy = tmp_path / library.name
    shutil.copy(library, copy)
    sidecar = copy.with_name(copy.name + ".json")
    sidecar.write_text(json.dumps({**meta, key: value}))
    with pytest.raises(InvalidNameError, match=r"%s in %s" % (what, re.escape(str(sidecar)))):
        ngcc.instance(copy)


def test_an_undefined_symbol_fails_the_build_naming_it(tmp_path):
    folder = c_folder(tmp_path / "f", """
int helper_not_shipped(const unsigned char *m, unsigned long long bits);
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    memset(out, 0, (size_t)d / 8);
    return helper_not_shipped(m, bits);
}
""")
    with pytest.raises(BuildError) as error:
        build(folder, out_dir=tmp_path / "out")
    assert ("helper_not_shipped, used by CryptHash_AlgorithmInstance.c; no source of the "
            "folder defines it") in str(error.value)
    assert "-Wl,-z,defs" in str(error.value)
    assert not list((tmp_path / "out").glob("*.so*"))


AES_NI = """#include <wmmintrin.h>
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    __m128i state = _mm_setzero_si128(), key = _mm_set1_epi32(0x01020304);
    unsigned long long i;
    for (i = 0; i < bits / 8; i++) {
        state = _mm_xor_si128(state, _mm_set1_epi8((char)m[i]));
        state = _mm_aesenc_si128(state, key);
        state = _mm_aesenc_si128(state, key);
    }
    memset(out, 0, (size_t)d / 8);
    _mm_storeu_si128((__m128i *)out, _mm_aesenclast_si128(state, key));
    return 0;
}
"""


@pytest.mark.parametrize("flags", ["reference", "performance"])
def test_intrinsics_without_their_flag_name_it_once_with_the_line(tmp_path, flags):
    folder = c_folder(tmp_path / "f", AES_NI)
    line = 1 + AES_NI.count("\n", 0, AES_NI.index("_mm_aesenc_si128")) + 3  # c_folder's prefix
    with pytest.raises(BuildError) as error:
        build(folder, flags=flags, out_dir=tmp_path / "out")
    text = str(error.value)
    assert ("-maes for _mm_aesenc_si128 at CryptHash_AlgorithmInstance.c:%d (and 2 more places)"
            % line) in text
    assert text.count("_mm_aesenc") == 1 and "more lines" not in text
    assert 'Add them: --extra-cflags="-maes"' in text and len(text.splitlines()) == 3


def test_intrinsics_build_with_the_flag_added(tmp_path, capsys):
    from ngcc.cli.main import main

    folder = c_folder(tmp_path / "f", AES_NI)
    assert main(["build", str(folder), "--flags", "performance", "--extra-cflags", "-maes",
                 "--out", str(tmp_path / "out")]) == 0
    inst = ngcc.instance(tmp_path / "out")
    assert inst.cflags[-3:] == ("-maes", "-fPIC", "-shared") and "-mavx2" in inst.cflags
    assert inst.cpu_features == ("avx2", "aes")  # refused on lookup by a CPU without them
    if "aes" in Path("/proc/cpuinfo").read_text().split():  # it runs where AES-NI does
        digest = ngcc.hash(inst, b"abc")
        assert len(digest) == 32 and digest != bytes(32) and digest == ngcc.hash(inst, b"abc")


def test_several_missing_flags_are_listed_with_the_users_own(tmp_path):
    folder = c_folder(tmp_path / "f", """#include <wmmintrin.h>
#include <smmintrin.h>
#include <tmmintrin.h>
int CryptHash(int d, const unsigned char *m, unsigned long long bits, unsigned char *out)
{
    __m128i s = _mm_set1_epi8((char)(bits ? m[0] : 0)), k = _mm_set1_epi32(3);
    s = _mm_clmulepi64_si128(s, k, 0x01);
    s = _mm_blend_epi16(s, k, 0x0f);
    s = _mm_shuffle_epi8(s, k);
    memset(out, 0, (size_t)d / 8);
    _mm_storeu_si128((__m128i *)out, _mm_aesenc_si128(s, k));
    return 0;
}
""")
    with pytest.raises(BuildError) as error:
        build(folder, out_dir=tmp_path / "out", extra_cflags="-O1 -mpclmul")
    text = str(error.value)
    for flag, function in (("-msse4.1", "_mm_blend_epi16"), ("-mssse3", "_mm_shuffle_epi8"),
                           ("-maes", "_mm_aesenc_si128")):
        assert re.search(r"^  %s for %s at CryptHash_AlgorithmInstance\.c:\d+$"
                         % (re.escape(flag), function), text, re.M), text
    assert "-mpclmul for" not in text
    added = re.search(r'--extra-cflags="([^"]*)"', text).group(1).split()
    assert added[:2] == ["-O1", "-mpclmul"]
    assert sorted(added[2:]) == ["-maes", "-msse4.1", "-mssse3"]


@contextmanager
def _within(seconds: int):
    """Fail, instead of hanging, when the block takes longer than ``seconds``."""
    def expire(signum, frame):
        raise AssertionError("took longer than %d s" % seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(("file", "make", "kind"), [
    ("z.c", os.mkfifo, "is a FIFO"),
    ("zz.h", os.mkfifo, "is a FIFO"),
    ("big.c", lambda path: os.symlink("/dev/zero", path),
     "is a character device (a symlink to /dev/zero)"),
    ("dir.c", os.mkdir, "is a folder"),
])
def test_inputs_that_are_not_regular_files_are_refused_quickly(tmp_path, file, make, kind):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    make(str(folder / file))
    with _within(20), pytest.raises(BuildError, match=re.escape("%s %s, not a regular file"
                                                                % (folder / file, kind))):
        build(folder, out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_oversized_source_is_refused(tmp_path, monkeypatch):
    from ngcc.library import cc as _cc

    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    monkeypatch.setattr(_cc, "MAX_INPUT_BYTES", 1000)
    (folder / "tables.c").write_text("const unsigned char t[] = {%s};\n" % ("0," * 600))
    with pytest.raises(BuildError, match=r"tables\.c is 1\d\d\d bytes, more than the 1000"):
        build(folder, out_dir=tmp_path / "out")


def test_a_compiler_that_never_finishes_is_stopped(tmp_path):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES + '#include "never_ends.inc"\n')
    os.mkfifo(folder / "never_ends.inc")  # the compiler blocks opening it
    started = time.monotonic()
    with _within(60), pytest.raises(BuildError, match=re.escape(
            "compiling CryptHash_AlgorithmInstance.c: the compiler did not finish within the "
            "build's time limit of 2 s")):
        build(folder, out_dir=tmp_path / "out", timeout=2)
    assert time.monotonic() - started < 30
    time.sleep(0.5)
    left = [pid for pid in os.listdir("/proc") if pid.isdigit()
            and str(folder).encode() in _cmdline(pid)]
    assert not left, "compiler processes outlived the timeout: %s" % left


def _cmdline(pid: str) -> bytes:
    try:
        return Path("/proc/%s/cmdline" % pid).read_bytes()
    except OSError:
        return b""


def test_a_path_in_the_instance_name_is_refused(tmp_path):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES, name="../../PWNED-build")
    out = tmp_path / "fx" / "bo-t" / "a"
    header = folder / "CryptHash_AlgorithmInstance.h"
    with pytest.raises(InvalidNameError, match=r"ALGORITHM_INSTANCE in %s '\.\./\.\./PWNED-build'"
                                               r" is not a valid name" % re.escape(str(header))):
        build(folder, out_dir=out)
    with pytest.raises(InvalidNameError, match=re.escape("--name '../x'")):
        build(folder, out_dir=out, name="../x")
    with pytest.raises(InvalidNameError, match=re.escape("--label 'a/b'")):
        build(folder, out_dir=out, name="Fine-256", label="a/b")
    assert not list(tmp_path.rglob("*.so*"))


def test_the_header_is_read_by_the_preprocessor_with_the_defines(tmp_path):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    (folder / "CryptHash_AlgorithmInstance.h").write_text(
        "#ifdef FIXTURE_BIG\n#define ALGORITHM_INSTANCE \"Fix-512\"\n"
        "#define DIGEST_BIT_LENGTH 512\n#else\n#define SIZE 256\n"
        "#define ALGORITHM_INSTANCE \"Fix-\" \"256\"\n#define DIGEST_BIT_LENGTH (SIZE)\n#endif\n")
    assert read_instance_header(folder) == ("Fix-256", 256)
    assert read_instance_header(folder, ["-DFIXTURE_BIG"]) == ("Fix-512", 512)
    result = build(folder, defines=["FIXTURE_BIG"], out_dir=tmp_path / "out")
    assert (result.instance.name, result.instance.digest_bits) == ("Fix-512", 512)
    assert result.instance.library.name == "Fix-512.so"


@pytest.mark.parametrize(("header", "message"), [
    ('#define ALGORITHM_INSTANCE Fix\n#define DIGEST_BIT_LENGTH 256\n', "not a string literal"),
    ('#define ALGORITHM_INSTANCE "Fix"\n#define DIGEST_BIT_LENGTH 99999999\n',
     "not a whole number of bytes"),
    ('#define ALGORITHM_INSTANCE "Fix"\n#define DIGEST_BIT_LENGTH 12\n',
     "not a whole number of bytes"),
    ('#include "absent.h"\n', "does not preprocess"),
])
def test_a_header_with_unusable_values_is_refused(tmp_path, header, message):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    (folder / "CryptHash_AlgorithmInstance.h").write_text(header)
    with pytest.raises(BuildError, match=message):
        read_instance_header(folder)


def test_cpu_features_follow_the_m_flags():
    from ngcc.library.cflags import cpu_features

    assert cpu_features(["-O2", "-msse4.1", "-maes", "-mavx2", "-mno-aes", "-march=x86-64"]) == (
        "sse4_1", "avx2")


def test_a_bad_define_is_refused(tmp_path):
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    with pytest.raises(BuildError, match="--define '1X'"):
        build(folder, defines=["1X"], out_dir=tmp_path / "out")


def test_build_help_describes_the_options(capsys):
    from ngcc.cli.main import main

    assert main(["build", "--help"]) == 0
    text = capsys.readouterr().out
    assert "The compiler decides what goes in" in text
    for option in ("--define", "--extra-cflags", "--label", "--exclude", "--timeout"):
        assert option in text


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


@pytest.mark.parametrize(("source", "vectors"), [
    # as the official archives ship them: two and three levels above the instance folder
    ("Implementations and Test_Vectors/Reference_Implementation/MyChain",
     "Implementations and Test_Vectors/Test_Vectors/MyChain"),
    ("Implementations/Optimized_Implementation/avx2/MyChain", "Implementations/KAT"),
])
def test_kat_against_the_submissions_own_files(tmp_path, official_kat, source, vectors):
    official = official_kat.file("WChain-V1-512", "2_12")
    package = tmp_path / "package"
    folder = iccs_folder(package / source, "wchain", "MyChain", 512)
    (package / vectors).mkdir(parents=True)
    own = package / vectors / "KAT_2_12_MyChain.txt"
    shutil.copy(official, own)
    result = build(folder, out_dir=tmp_path / "out")
    assert result.instance.candidate == "external"
    assert (result.provenance.kat_basis, result.provenance.kat_files) == (
        "submission files", (str(own),))
    library = result.instance.library

    (report,) = ngcc.kat.check([library], files="2_12,2_23", out_dir=tmp_path / "kat",
                               progress=False)
    assert [f.verdict for f in report.files] == ["PASS", "NOKAT"]
    assert "submission's own KAT file %s" % own in report.files[0].detail
    looked = report.files[1].detail  # says where it looked, nearest first
    assert "no submission KAT file KAT_2_23_MyChain.txt in %s, " % folder in looked
    assert str(package / vectors) in looked

    lines = official.read_text().split("\n")  # flip the last digit of record 1000's Dst
    dst = next(i for i, line in enumerate(lines) if line.startswith("Dst = ")
               and lines[i - 3] == "Msg_Len = 1000")
    lines[dst] = lines[dst][:-1] + ("0" if lines[dst][-1] != "0" else "1")
    own.write_text("\n".join(lines))
    (report,) = ngcc.kat.check([library], files="2_12", out_dir=tmp_path / "kat",
                               progress=False)
    assert report.verdict == "MISMATCH"
    assert "Msg_Len = 1000" in report.files[0].detail


def test_submission_kat_folders_are_searched_a_bounded_way_up(tmp_path):
    source = tmp_path / "l5" / "l4" / "l3" / "l2" / "l1" / "X-256"
    (source.parent / "kat" / "X-256").mkdir(parents=True)
    (source.parent / "kat" / "Y-256").mkdir()
    source.mkdir()
    four_up, five_up = source.parents[3], source.parents[4]  # l4, l5
    (four_up / "Test_Vectors").mkdir()
    (five_up / "Test_Vectors").mkdir()
    folders = ngcc.library.katfile.submission_kat_folders(source, "X-256")
    assert folders[:4] == [source, source.parent, source.parent / "kat",
                           source.parent / "kat" / "X-256"]
    assert four_up / "Test_Vectors" in folders
    assert five_up / "Test_Vectors" not in folders and five_up not in folders
    assert source.parent / "kat" / "Y-256" not in folders


def test_an_unknown_candidate_is_refused_with_the_known_ones(tmp_path, capsys):
    from ngcc.cli.main import main

    folder = iccs_folder(tmp_path / "src", "wchain", "WChain-V1-512", 512)
    known = ", ".join("hash-%02d" % n for n in range(1, 36)) + ", baseline"  # the registry
    with pytest.raises(InvalidNameError, match="unknown --candidate 'hash-99': known "
                                               "candidate ids are %s" % known):
        build(folder, out_dir=tmp_path / "out", candidate="hash-99")
    assert main(["build", str(folder), "--candidate", "../x", "--out", str(tmp_path / "o")]) == 2
    assert known in capsys.readouterr().err
    assert not (tmp_path / "o").exists()

    library = build(folder, out_dir=tmp_path / "out", candidate="hash-34").instance.library
    assert ngcc.instance(library).candidate == "hash-34"  # recorded by ngcc build
    assert main(["kat", str(library), "--candidate", "hash-99", "--files", "2_12",
                 "--no-progress", "--out", str(tmp_path / "kat")]) == 2
    assert known in capsys.readouterr().err
    assert not (tmp_path / "kat" / "hash-99").exists()
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


@pytest.mark.e2e  # a real campaign: many trials in the real driver
def test_campaign_measures_a_built_submission_like_the_builtin(tmp_path):
    folder = iccs_folder(tmp_path / "src", "wchain", "WChain-V1-512", 512)
    external = build(folder, out_dir=tmp_path / "out").instance
    run = _quick([external.library, "WChain-V1-512"], tmp_path / "run", lengths=[32, 1024])
    assert run.complete and not run.failed_jobs
    # two libraries of one instance: the built-in keeps the bare name, the build its folder
    assert {job.label for job in run.jobs} == {"WChain-V1-512", "WChain-V1-512@out"}
    assert len(run.records) == 4
    # the bare name means the built-in one even when the external is listed first
    assert run.record("WChain-V1-512", 32).implementation.variant == "ref"
    assert run.record("WChain-V1-512@out", 32).implementation.variant == "external"
    for rec in run.records:  # both passed the same official KAT gate
        assert rec.kat.verdict == "PASS", rec.path
        assert not rec.kat.timed_without_pass, rec.path
    run.report()
    page = (run.path / "report" / "hash-34.md").read_text()
    # Each library keeps its own name on the page and its own distribution plot.
    assert "[`WChain-V1-512` 32 B](WChain-V1-512__hash_32-calls.png)" in page
    assert "[`WChain-V1-512@out` 32 B](WChain-V1-512@out__hash_32-calls.png)" in page
    assert (run.path / "report" / "WChain-V1-512@out__hash_32-calls.png").is_file()


@pytest.mark.e2e  # a real campaign: many trials in the real driver
def test_campaign_survives_a_library_that_crashes_hangs_and_fails(tmp_path):
    library = build(c_folder(tmp_path / "f", FAILS_AT), out_dir=tmp_path / "o").instance
    run = _quick([library.library], tmp_path / "run", lengths=[32, 64, 128, 256, 512],
                 allow_kat_fail=True, kat_files=["2_23"], kat_timeout=20,
                 trial_timeout=5)
    status = {job.message_bytes: job.status for job in run.jobs}
    assert status == {32: "done", 64: "crash", 128: "timeout", 256: "error", 512: "done"}
    errors = {job.message_bytes: job.error for job in run.failed_jobs}
    assert "Fixture-256" in errors[64] and "SIGSEGV" in errors[64]
    assert "Fixture-256" in errors[128] and "128 B" in errors[128]
    assert "Fixture-256" in errors[256]
    assert {rec.message_bytes for rec in run.records} == {32, 512}
    for rec in run.records:  # timed after a failed KAT gate: marked in every record
        assert rec.kat.timed_without_pass


def test_campaign_refuses_a_submission_that_crashes_in_the_kat(tmp_path):
    library = build(c_folder(tmp_path / "f", FAILS_AT), out_dir=tmp_path / "o").instance
    with pytest.raises(KatGateError, match=r"Fixture-256 CRASH"):
        _quick([library.library], tmp_path / "run", lengths=[32], kat_files=["2_12"],
               kat_timeout=20)
    log = (tmp_path / "run" / "kat" / "external" / "Fixture-256.log").read_text()
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


@pytest.mark.parametrize("name", ["@opts.c", "-wrapper.c", "@inc.h"])
def test_a_file_name_the_compiler_would_read_as_options_is_refused(tmp_path, name):
    # GCC reads an argument @FILE as a response file of options: "@opts.c" beside an
    # "opts.c" holding "-wrapper" would run a shell command as the evaluator.
    marker = tmp_path / "ran"
    folder = c_folder(tmp_path / "f", CRASH_ON_64_BYTES)
    (folder / "opts.c").write_text('-wrapper "/bin/sh,-c,touch %s"\n' % marker)
    (folder / name).write_text("")
    with pytest.raises(BuildError, match=re.escape("file name %r starts with %r"
                                                   % (name, name[0]))):
        build(folder, out_dir=tmp_path / "out")
    assert not marker.exists()


def test_sources_reach_the_compiler_as_paths_and_errors_name_them_plainly(tmp_path):
    folder = c_folder(tmp_path / "f", "int CryptHash(void) { return undeclared_thing; }\n")
    with pytest.raises(BuildError) as error:
        build(folder, out_dir=tmp_path / "out")
    assert "./" not in str(error.value)


def test_the_provenance_says_how_the_compiler_ran(wchain_like, tmp_path):
    _, library = wchain_like
    meta = json.loads(library.with_name(library.name + ".json").read_text())
    assert read_provenance(library).compiler_isolation in ("namespaces", "none")
    copy = tmp_path / library.name
    shutil.copy(library, copy)
    sidecar = copy.with_name(copy.name + ".json")
    sidecar.write_text(json.dumps({k: v for k, v in meta.items() if k != "compiler_isolation"}))
    assert read_provenance(copy).compiler_isolation == "none"  # before the jail: none
    sidecar.write_text(json.dumps({**meta, "compiler_isolation": "bubblewrap"}))
    with pytest.raises(LibraryError, match=r"corrupt provenance.*compiler_isolation"):
        read_provenance(copy)
