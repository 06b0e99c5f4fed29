"""Constant time checked, not claimed: every built-in variant through ``ngcc ct``'s own
analysis (:func:`ngcc.measure.ct_measurement.constant_time`: its debug twin under
valgrind memcheck, the message marked undefined), and each variant's ``constant_time``
in instances.json held to its verdict, both ways.

The analysis proves itself on the fixtures that leak on purpose (tests/test_ct.py:
tests/fixtures/leaky/ and tests/fixtures/ct/). For a variant whose instructions
valgrind 3.19 cannot decode (VAES, AVX-512), the twin is built with the variant's
``valgrind_twin_cflags``, which replace just those instructions; the twin must hash
like the variant wherever this CPU runs the variant.

What it cannot see: timing of instructions whose latency depends on their operands
(none of our families uses division or variable-time multiplication on message
data), and the microarchitecture; ``ngcc leak`` times those.
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _testlib import compiler

import ngcc
from ngcc.evidence.ct_evidence import CONSTANT_TIME, LEAKS, CtEvidence
from ngcc.library.registry import sanitized_build
from ngcc.measure.ct_measurement import constant_time

VARIANTS = ngcc.instances(all_variants=True)


def _kind(inst: ngcc.Instance) -> tuple[str, str]:
    """An ICCS variant's kind whatever its output size: (``pseudoXOF``, ``ref``)."""
    return inst.name.rsplit("-", 1)[0], inst.variant


#: Each kind's first size, the one the end-to-end tier analyses.
FIRST_SIZE: dict[tuple[str, str], str] = {}
for _inst in VARIANTS:
    FIRST_SIZE.setdefault(_kind(_inst), _inst.name)


def _one_more_size(inst: ngcc.Instance) -> bool:
    """A pseudohash or pseudoXOF variant at another output size than its kind's first:
    the same C sources with another length define, so the end-to-end tier leaves them to
    ``-m slow`` (about half of the tier's valgrind time)."""
    return inst.family == "ICCS" and FIRST_SIZE[_kind(inst)] != inst.name


#: Every family's every variant under valgrind in the end-to-end tier; the repeated
#: sizes under ``-m slow``.
PARAMS = [pytest.param(inst, id=inst.key,
                       marks=pytest.mark.slow if _one_more_size(inst) else pytest.mark.e2e)
          for inst in VARIANTS]


def _analysed(variants: list[ngcc.Instance]) -> dict[str, CtEvidence]:
    """``ngcc ct``'s analysis of ``variants``, two at a time; skips without valgrind and
    its memcheck.h (fails in CI)."""
    if shutil.which("valgrind") is None or not Path("/usr/include/valgrind/memcheck.h").is_file():
        message = "valgrind and its memcheck.h are needed (apt-get install valgrind)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    if sanitized_build():
        pytest.skip("the libraries are built with ASan (NGCC_SANITIZE=1): valgrind cannot "
                    "run them")
    compiler()
    with ThreadPoolExecutor(max_workers=2) as pool:
        found = pool.map(lambda inst: constant_time(inst, label=inst.name), variants)
        return {inst.key: evidence for inst, evidence in zip(variants, found, strict=True)}


@pytest.fixture(scope="module")
def families_evidence() -> dict[str, CtEvidence]:
    return _analysed([inst for inst in VARIANTS if not _one_more_size(inst)])


@pytest.fixture(scope="module")
def sizes_evidence() -> dict[str, CtEvidence]:
    return _analysed([inst for inst in VARIANTS if _one_more_size(inst)])


@pytest.fixture
def evidence(request: pytest.FixtureRequest, inst: ngcc.Instance) -> CtEvidence:
    """The analysis of ``inst``, from the module's one run over its tier's variants."""
    which = "sizes_evidence" if _one_more_size(inst) else "families_evidence"
    return request.getfixturevalue(which)[inst.key]


@pytest.mark.parametrize("inst", PARAMS)
def test_constant_time_declaration_matches_memcheck(evidence, inst):
    expected = CONSTANT_TIME if inst.constant_time else LEAKS
    assert evidence.verdict == expected, (
        "%s is declared constant_time: %s in instances.json, but ngcc ct says %s; sites: %s"
        % (inst.key, str(inst.constant_time).lower(), evidence.summary(),
           ["%s:%d %s" % (s.file, s.line, s.kind) for s in evidence.sites[:10]]))


@pytest.mark.parametrize("inst", PARAMS)
def test_a_debug_twin_hashes_like_its_library(evidence, inst):
    """A twin must compute the same function, or memcheck would check something else."""
    assert evidence.twin is not None and "-g" in evidence.twin.cflags
    if inst.missing_cpu_features:
        assert evidence.twin.same_digests is None  # the library itself cannot run here
    else:
        assert evidence.twin.same_digests is True, inst.key
