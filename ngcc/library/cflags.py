"""The compile flags of a build: the NGCC guide's three flag sets (or literal flags),
the ``--define`` macros as ``-D`` flags, what a shared library adds, and the CPU
features the ``-m`` flags let the compiler use (recorded in the sidecar, so a CPU
without them refuses the library on lookup)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

from ngcc.base.errors import BuildError

# The NGCC guide's three flag sets.
FLAG_SETS: dict[str, str] = {
    "reference": "-std=c99 -Wpedantic -Wall -Wextra -O2",
    "performance": "-O3 -march=x86-64 -mavx2 -mtune=native -flto -fomit-frame-pointer "
                   "-std=c99 -Wpedantic -Wall -Wextra",
    "resource": "-Os -march=x86-64 -mavx2 -flto -fomit-frame-pointer "
                "-std=c99 -Wpedantic -Wall -Wextra",
}
# What a shared library needs on top of any flag set (recorded with the flags).
LIBRARY_FLAGS = ("-fPIC", "-shared")

# The CPU features (cpuid names, as ``Instance.cpu_features``) a -m flag lets the
# compiler use anywhere in the library: recorded, so a CPU without them refuses it
# on lookup instead of dying of SIGILL.
_FLAG_FEATURES = {
    "-msse3": "pni", "-mpclmul": "pclmulqdq", "-mssse3": "ssse3", "-mfma": "fma",
    "-msse4.1": "sse4_1", "-msse4.2": "sse4_2", "-mmovbe": "movbe", "-mpopcnt": "popcnt",
    "-maes": "aes", "-mavx": "avx", "-mf16c": "f16c", "-mbmi": "bmi1", "-mavx2": "avx2",
    "-mbmi2": "bmi2", "-madx": "adx", "-msha": "sha_ni", "-mgfni": "gfni", "-mvaes": "vaes",
    "-mvpclmulqdq": "vpclmulqdq", "-mavx512f": "avx512f", "-mavx512dq": "avx512dq",
    "-mavx512bw": "avx512bw", "-mavx512vl": "avx512vl", "-mavx512vbmi": "avx512vbmi",
}
_DEFINE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def resolve_flags(flags: str) -> list[str]:
    """A flag-set name (reference, performance, resource) or a literal flag string."""
    return shlex.split(FLAG_SETS.get(flags, flags))


def cpu_features(cflags: Iterable[str]) -> tuple[str, ...]:
    """The CPU features the ``-m`` flags among ``cflags`` let the compiler use, in
    order (``-mno-<x>`` after ``-m<x>`` takes it back)."""
    features: dict[str, None] = {}
    for flag in cflags:
        if flag in _FLAG_FEATURES:
            features[_FLAG_FEATURES[flag]] = None
        elif flag.startswith("-mno-") and "-m" + flag[5:] in _FLAG_FEATURES:
            features.pop(_FLAG_FEATURES["-m" + flag[5:]], None)
    return tuple(features)


def define_flags(defines: Iterable[str]) -> list[str]:
    """``-DNAME`` / ``-DNAME=VALUE`` for each ``NAME[=VALUE]``; refuses a NAME that is
    not a C identifier."""
    flags = []
    for define in defines:
        name, _, _ = define.partition("=")
        if not _DEFINE_NAME.fullmatch(name) or "\n" in define:
            raise BuildError("--define %r: expected NAME or NAME=VALUE with NAME a C "
                             "identifier" % define)
        flags.append("-D" + define)
    return flags
