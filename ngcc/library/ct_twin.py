"""The debug twin of a library for the constant-time analysis (``ngcc ct``): the same
sources and flags plus ``-g``, so that memcheck names the source line of each report.

- A submission folder is built by :func:`ngcc.library.build.build` with ``-g`` added.
- A library ``ngcc build`` made is built again from the folder, flag set, defines,
  extra flags and libraries its sidecar's provenance records, plus ``-g``.
- A built-in variant is compiled from ``algorithms/<family>/`` as ``setup.py`` does,
  plus ``-g`` and the variant's ``valgrind_twin_cflags`` (``instances.json``): flags
  that replace just the instructions valgrind cannot decode by equivalent ones (one
  256-bit VAESENC by two 128-bit ones).

Each returns a :class:`DebugTwin`; what cannot be twinned is a :class:`TwinError`
whose text says why (the analysis's ``not analysed`` reason).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.errors import BuildError, NgccError
from ngcc.base.files import sha256_file
from ngcc.library.build import build
from ngcc.library.cflags import LIBRARY_FLAGS
from ngcc.library.provenance import read_provenance
from ngcc.library.registry import EXTERNAL, LIB_DIR, Instance, external_instance

DEBUG_FLAG = "-g"
#: The built-in families' sources, in a checkout (an installed ngcc has none).
ALGORITHMS = LIB_DIR.parents[1] / "algorithms"
TWIN_TIMEOUT = 600.0


class TwinError(NgccError):
    """A library whose debug twin cannot be built; the text says why."""


@dataclass(frozen=True)
class DebugTwin:
    """A library's debug twin: the twin itself (an instance whose ``library`` is the
    twin), the folder its sources came from, every flag it was compiled with, and its
    SHA-256."""

    instance: Instance
    source_dir: Path
    cflags: tuple[str, ...]
    sha256: str


def folder_twin(folder: Path, out_dir: Path, candidate: str | None = None) -> DebugTwin:
    """The twin of a submission folder: ``ngcc build`` with ``-g`` (BuildError as it
    gives it)."""
    built = build(folder, out_dir=out_dir, candidate=candidate, extra_cflags=[DEBUG_FLAG])
    return DebugTwin(built.instance, folder.resolve(), built.provenance.cflags, built.sha256)


def twin(inst: Instance, out_dir: Path) -> DebugTwin:
    """The twin of ``inst`` (built-in, or made by ``ngcc build``) in ``out_dir``.

    Raises:
        TwinError: no sources are known for it, or they do not build any more.
    """
    if inst.builtin:
        return _builtin_twin(inst, out_dir)
    provenance = read_provenance(inst.library)
    if provenance is None:
        raise TwinError("%s records no sources (a library ngcc build did not make): "
                        "give its submission folder instead" % inst.library)
    folder = Path(provenance.source_dir)
    if not folder.is_dir():
        raise TwinError("its source folder %s is gone" % folder)
    literal = list(provenance.cflags[:len(provenance.cflags) - len(provenance.defines)
                                     - len(provenance.extra_cflags) - len(LIBRARY_FLAGS)])
    try:
        built = build(folder, name=inst.name, out_dir=out_dir,
                      candidate=None if inst.candidate == EXTERNAL else inst.candidate,
                      flags=provenance.flag_set or shlex.join(literal),
                      defines=provenance.defines, libs=provenance.libs,
                      extra_cflags=[*provenance.extra_cflags, DEBUG_FLAG])
    except BuildError as exc:
        raise TwinError("its sources in %s do not build again: %s" % (folder, exc)) from None
    return DebugTwin(built.instance, folder.resolve(), built.provenance.cflags, built.sha256)


def builtin_spec(inst: Instance) -> tuple[Path, dict, dict]:
    """The family folder, the ``instances.json`` variant entry and instance entry of a
    built-in variant.

    Raises:
        TwinError: the sources are not here (an installed ngcc ships none).
    """
    for spec_file in sorted(ALGORITHMS.glob("*/instances.json")):
        spec = json.loads(spec_file.read_text())
        entries = [entry for entry in spec["instances"] if entry["name"] == inst.name]
        if spec["family"] == inst.family and inst.variant in spec["variants"] and entries:
            return spec_file.parent, spec["variants"][inst.variant], entries[0]
    raise TwinError("the sources of %s are not installed (they are in a checkout of "
                    "ngcc, under algorithms/)" % inst.key)


def _builtin_twin(inst: Instance, out_dir: Path) -> DebugTwin:
    folder, spec, entry = builtin_spec(inst)  # compiled as setup.py compiles it
    cflags = (*inst.cflags, *spec.get("valgrind_twin_cflags", ()), DEBUG_FLAG)
    library = out_dir / ("%s.%s.so" % (inst.name, inst.variant))  # the name's ``:`` aside
    out_dir.mkdir(parents=True, exist_ok=True)
    command = [*shlex.split(os.environ.get("CC", "cc")), *cflags,
               "-I", str(ALGORITHMS / "include"), "-I", str(folder),
               "-DDIGEST_BIT_LENGTH=%d" % inst.digest_bits,
               '-DALGORITHM_INSTANCE="%s"' % inst.name,
               *("-D%s=%s" % pair for pair in entry.get("defines", {}).items()),
               "-shared", "-o", str(library),
               *(str(folder / source) for source in spec["sources"])]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              timeout=TWIN_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TwinError("its twin did not compile: %s" % exc) from None
    if done.returncode != 0:
        raise TwinError("its twin did not compile: %s" % done.stderr.strip()[-400:])
    (library.with_name(library.name + ".json")).write_text(json.dumps(
        {"name": inst.name, "digest_bits": inst.digest_bits, "candidate": inst.candidate}))
    twin_instance = external_instance(library, inst.candidate)
    return DebugTwin(twin_instance, folder.resolve(), cflags, sha256_file(library))
