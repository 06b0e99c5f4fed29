"""Constant time checked, not claimed: every built-in variant under valgrind memcheck
with its message marked undefined (the ctgrind method, tests/ctgrind/ctgrind.c).

Memcheck then reports each branch ("Conditional jump or move depends on
uninitialised value(s)") and each load or store address ("Use of uninitialised
value of size N") that depends on the message. A variant's ``constant_time`` in
instances.json must say what memcheck finds. The method proves itself first on
two libraries that leak on purpose (tests/fixtures/leaky/): a table-indexed S-box
and an early exit at the first zero byte.

What it cannot see: timing of instructions whose latency depends on their operands
(none of our families uses division or variable-time multiplication on message
data), and paths not taken at the few lengths tried here (message lengths are
public, so those paths differ only by length).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from _testlib import compiler

import ngcc
from ngcc.library.registry import Instance, sanitized_build

pytestmark = pytest.mark.e2e  # every built-in variant under valgrind: the end-to-end tier

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "ctgrind" / "ctgrind.c"
LEAKY = HERE / "fixtures" / "leaky"
# Message lengths in bits: partial bytes, and up to two blocks of the widest family
# (WChain-V2-1024: 288 bytes), so that the block loop, the padding and the tail run.
LENGTHS = (1, 7, 8 * 64, 8 * 300 + 3, 8 * 600)
LEAK_KINDS = ("Conditional jump or move depends on uninitialised value",
              "Use of uninitialised value of size")
VALGRIND_ERRORS = 42  # --error-exitcode: memcheck reported at least one error
TIMEOUT = 120


@dataclass(frozen=True)
class CtgrindReport:
    """What memcheck said about one library."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def leaks(self) -> dict[str, int]:
        """How often memcheck reported each kind of message-dependent operation."""
        return {kind: self.stderr.count(kind) for kind in LEAK_KINDS if kind in self.stderr}

    @property
    def ran(self) -> bool:
        """True when every hash call returned 0 (with or without memcheck errors)."""
        return self.returncode in (0, VALGRIND_ERRORS) and "memcheck errors" in self.stdout

    def summary(self) -> str:
        lines = [line for line in self.stderr.splitlines() if re.match(r"==\d+== \S", line)]
        return "exit %d; %s\n%s" % (self.returncode, self.stdout.strip(), "\n".join(lines[:40]))


@pytest.fixture(scope="module")
def ctgrind(tmp_path_factory) -> Path:
    """The ctgrind harness, compiled; skips without valgrind (fails in CI)."""
    valgrind = shutil.which("valgrind")
    header = Path("/usr/include/valgrind/memcheck.h")
    if valgrind is None or not header.is_file():
        message = "valgrind and its memcheck.h are needed (apt-get install valgrind)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    if sanitized_build():
        pytest.skip("the libraries are built with ASan (NGCC_SANITIZE=1): valgrind cannot "
                    "run them")
    program = tmp_path_factory.mktemp("ctgrind") / "ctgrind"
    built = subprocess.run(compiler() + ["-std=c99", "-O1", "-g", "-Wall", "-Wextra",
                                         "-Werror", "-o", str(program), str(HARNESS), "-ldl"],
                           capture_output=True, text=True, check=False, env=_plain_env())
    assert built.returncode == 0, built.stderr
    return program


def _plain_env() -> dict[str, str]:
    """The environment without an ASan preload, which valgrind cannot run under."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def run_ctgrind(program: Path, library: Path, digest_bits: int,
                lengths: tuple[int, ...] = LENGTHS) -> CtgrindReport:
    """Hash messages of ``lengths`` bits with ``library`` under memcheck, message undefined."""
    command = ["valgrind", "-q", "--tool=memcheck", "--error-exitcode=%d" % VALGRIND_ERRORS,
               "--num-callers=6", str(program), str(library), str(digest_bits),
               *map(str, lengths)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT,
                          check=False, env=_plain_env())
    return CtgrindReport(done.returncode, done.stdout, done.stderr)


# ------------------------------------------------------------ the method proves itself

@pytest.fixture(scope="module")
def leaky_libraries(tmp_path_factory) -> dict[str, Instance]:
    """The leaky fixture folders, built like submissions with ``ngcc.build``."""
    out = tmp_path_factory.mktemp("leaky")
    compiler()
    return {folder.name: ngcc.build(folder, out_dir=out / folder.name).instance
            for folder in sorted(LEAKY.iterdir()) if folder.is_dir()}


def test_the_leaky_fixtures_are_working_hashes(leaky_libraries):
    assert set(leaky_libraries) == {"table_sbox", "early_exit"}
    for inst in leaky_libraries.values():
        assert inst.digest_bits == 256
        first = ngcc.hash(inst, b"\x01\x02\x03")
        assert len(first) == 32 and first != ngcc.hash(inst, b"\x01\x02\x04")


def test_ctgrind_catches_a_table_indexed_sbox(ctgrind, leaky_libraries):
    report = run_ctgrind(ctgrind, leaky_libraries["table_sbox"].library, 256)
    assert report.ran, report.summary()
    assert report.returncode == VALGRIND_ERRORS, report.summary()
    assert "Use of uninitialised value of size" in report.leaks, report.summary()


def test_ctgrind_catches_a_message_dependent_early_exit(ctgrind, leaky_libraries):
    report = run_ctgrind(ctgrind, leaky_libraries["early_exit"].library, 256)
    assert report.ran, report.summary()
    assert report.returncode == VALGRIND_ERRORS, report.summary()
    assert "Conditional jump or move depends on uninitialised value" in report.leaks, \
        report.summary()


# ------------------------------------------------------------ every built-in variant

VARIANTS = ngcc.instances(all_variants=True)


ALGORITHMS = HERE.parent / "algorithms"


def _variant_spec(inst: Instance) -> tuple[Path, dict]:
    """The family folder and the instances.json entry of ``inst``'s variant."""
    for spec_file in ALGORITHMS.glob("*/instances.json"):
        spec = json.loads(spec_file.read_text())
        if spec["family"] == inst.family:
            return spec_file.parent, spec["variants"][inst.variant]
    raise LookupError(inst.family)


def valgrind_twin(inst: Instance, out_dir: Path) -> Path:
    """The library memcheck runs for ``inst``: the built one, or, for a variant using
    instructions valgrind cannot decode (VAES in valgrind 3.19), its twin: the same
    sources and flags plus the variant's ``valgrind_twin_cflags``, which replace just
    those instructions by equivalent ones (e.g. one 256-bit AESENC by two 128-bit)."""
    folder, spec = _variant_spec(inst)
    extra = spec.get("valgrind_twin_cflags")
    if not extra:
        return inst.library
    library = out_dir / ("%s.%s.twin.so" % (inst.name, inst.variant))
    built = subprocess.run(
        compiler() + list(inst.cflags) + list(extra)
        + ["-I", str(ALGORITHMS / "include"), "-I", str(folder),
           "-DDIGEST_BIT_LENGTH=%d" % inst.digest_bits,
           '-DALGORITHM_INSTANCE="%s"' % inst.name, "-shared", "-o", str(library)]
        + [str(folder / source) for source in spec["sources"]],
        capture_output=True, text=True, check=False, env=_plain_env())
    assert built.returncode == 0, built.stderr
    return library


@pytest.fixture(scope="module")
def builtin_reports(ctgrind, tmp_path_factory) -> dict[str, CtgrindReport]:
    """ctgrind over every built-in variant this CPU can run, two at a time."""
    runnable = [inst for inst in VARIANTS if not inst.missing_cpu_features]
    twins = tmp_path_factory.mktemp("twins")
    libraries = [valgrind_twin(inst, twins) for inst in runnable]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        reports = pool.map(lambda i, lib: run_ctgrind(ctgrind, lib, i.digest_bits),
                           runnable, libraries)
        return {inst.key: report for inst, report in zip(runnable, reports, strict=True)}


def test_a_valgrind_twin_hashes_like_its_library(tmp_path):
    """A twin must compute the same function, or memcheck would check something else."""
    twins = [inst for inst in VARIANTS if not inst.missing_cpu_features
             and valgrind_twin(inst, tmp_path) != inst.library]
    if not twins:
        pytest.skip("no variant with a valgrind twin runs on this CPU")
    for inst in twins:
        twin = valgrind_twin(inst, tmp_path)
        twin.with_name(twin.name + ".json").write_text(json.dumps({
            "name": inst.name, "digest_bits": inst.digest_bits, "candidate": inst.candidate}))
        for length in (0, 1, 100, 1000):
            message = bytes((7 * i + length) & 0xFF for i in range(length))
            assert ngcc.hash(twin, message) == ngcc.hash(inst, message), (inst.key, length)


@pytest.mark.parametrize("inst", VARIANTS, ids=[inst.key for inst in VARIANTS])
def test_constant_time_declaration_matches_memcheck(builtin_reports, inst):
    if inst.missing_cpu_features:
        pytest.skip("%s cannot run on this CPU (lacks %s)"
                    % (inst.key, ", ".join(inst.missing_cpu_features)))
    report = builtin_reports[inst.key]
    assert report.ran, "%s did not run under valgrind: %s" % (inst.key, report.summary())
    if inst.constant_time:
        assert report.returncode == 0 and not report.leaks, (
            "%s is declared constant_time, but memcheck finds message-dependent branches or "
            "addresses: %s" % (inst.key, report.summary()))
    else:
        assert report.leaks, (
            "%s is declared constant_time: false, but memcheck finds no message-dependent "
            "branch or address: declare it true in instances.json" % inst.key)
