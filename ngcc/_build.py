"""``ngcc build``: compile an ICCS submission folder into an instance library.

An evaluator's submission folder holds ``CryptHash_AlgorithmInstance.c/.h``
(the header defines ``ALGORITHM_INSTANCE`` and ``DIGEST_BIT_LENGTH``), sibling
sources, often the official ``KAT_CryptHash.c`` driver and ``drng.c/.h``, and
sometimes stray programs with a ``main``. The library is built from every C
source except the programs (plus ngcc's own ICCS DRNG when the sources call
one the folder lacks); its facts go into a ``<library>.json`` sidecar
that :func:`ngcc.instance` reads, so the library can then be named anywhere an
instance name is accepted. No foreign code runs here: the export check reads
the ELF symbol table.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from ngcc._errors import BuildError
from ngcc._records import atomic_write_bytes, sha256_file
from ngcc._registry import LIB_DIR, Instance, external_instance, sidecar_path

# The NGCC guide's three flag sets.
FLAG_SETS: dict[str, str] = {
    "reference": "-std=c99 -Wpedantic -Wall -Wextra -O2",
    "performance": "-O3 -march=x86-64 -mavx2 -mtune=native -flto -fomit-frame-pointer "
                   "-std=c99 -Wpedantic -Wall -Wextra",
    "resource": "-Os -march=x86-64 -mavx2 -flto -fomit-frame-pointer "
                "-std=c99 -Wpedantic -Wall -Wextra",
}
# What a shared library needs on top of any flag set.
LIBRARY_FLAGS = ("-fPIC", "-shared")
KAT_DRIVER = "KAT_CryptHash.c"
INSTANCE_HEADER = "CryptHash_AlgorithmInstance.h"
MAX_ERROR_LINES = 12

# The ICCS DRNG, supplied when a folder calls it but ships no drng.c (setup.py
# installs these sources), compiled with our own flags.
SUPPORT_DIR = LIB_DIR / "src"
DRNG_SOURCES = ("sm3/sm3.c", "drng/sm3_drng.c", "drng/iccs/drng.c")
DRNG_CFLAGS = ("-O2", "-fPIC")
_USES_DRNG = re.compile(r'#\s*include\s*"drng\.h"|\b(init|get)_random_number\s*\(')

_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_MAIN = re.compile(r"\bmain\s*\(")
_DEFINE = r"^\s*#\s*define\s+%s\s+(.+?)\s*$"


@dataclass(frozen=True)
class BuildResult:
    """What ``ngcc build`` made.

    Attributes:
        instance: the built instance (variant ``"external"``), usable everywhere.
        sources: the C files compiled, relative to the source folder.
        skipped: files left out and why (the KAT driver, programs with ``main``).
        drng_supplied: True when ngcc linked its own ICCS DRNG (the folder had none).
        warnings: the compiler's diagnostics (empty when clean).
        sha256: SHA-256 of the library file.
    """

    instance: Instance
    sources: tuple[str, ...]
    skipped: dict[str, str]
    warnings: str
    sha256: str
    drng_supplied: bool


def read_instance_header(source_dir: Path) -> tuple[str, int]:
    """Return (ALGORITHM_INSTANCE, DIGEST_BIT_LENGTH) from the folder's instance header."""
    header = source_dir / INSTANCE_HEADER
    candidates = [header] if header.is_file() else sorted(source_dir.glob("*.h"))
    for path in candidates:
        text = _COMMENTS.sub(" ", path.read_text(errors="replace"))
        name = re.search(_DEFINE % "ALGORITHM_INSTANCE", text, re.M)
        if name is None:
            continue
        bits = re.search(_DEFINE % "DIGEST_BIT_LENGTH", text, re.M)
        if bits is None:
            raise BuildError("%s defines ALGORITHM_INSTANCE but no DIGEST_BIT_LENGTH; add "
                             "`#define DIGEST_BIT_LENGTH <bits>`" % path)
        digits = re.fullmatch(r"\(?\s*(\d+)\s*\)?", bits.group(1))
        if digits is None:
            raise BuildError("%s: DIGEST_BIT_LENGTH is not a plain number: %r"
                             % (path, bits.group(1)))
        return name.group(1).strip().strip('"'), int(digits.group(1))
    raise BuildError("%s: no header defines ALGORITHM_INSTANCE (expected %s)"
                     % (source_dir, INSTANCE_HEADER))


def select_sources(source_dir: Path) -> tuple[list[Path], dict[str, str]]:
    """Split the folder's C files into library sources and skipped programs."""
    sources: list[Path] = []
    skipped: dict[str, str] = {}
    for path in sorted(source_dir.glob("*.c")):
        if path.name == KAT_DRIVER:
            skipped[path.name] = "the official KAT driver (ngcc generates KATs itself)"
        elif _MAIN.search(_COMMENTS.sub(" ", path.read_text(errors="replace"))):
            skipped[path.name] = "defines main()"
        else:
            sources.append(path)
    if not sources:
        raise BuildError("%s: no C source left to build a library from (skipped: %s)"
                         % (source_dir, ", ".join(skipped) or "nothing"))
    return sources, skipped


def needs_drng(source_dir: Path, sources: list[Path]) -> bool:
    """True when the sources call the ICCS DRNG but the folder has no drng.c."""
    if (source_dir / "drng.c").is_file():
        return False
    return any(_USES_DRNG.search(s.read_text(errors="replace")) for s in sources)


def _compile_drng(cc: list[str], work_dir: Path) -> list[str]:
    """Compile the supplied DRNG into objects in work_dir; return their paths."""
    objects = []
    for source in DRNG_SOURCES:
        obj = work_dir / (Path(source).stem + ".drng.o")
        command = [*cc, *DRNG_CFLAGS, "-I", str(SUPPORT_DIR / "sm3"), "-c",
                   str(SUPPORT_DIR / source), "-o", str(obj)]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise BuildError("the supplied ICCS DRNG does not compile here:\n%s"
                             % _shorten(result.stderr))
        objects.append(str(obj))
    return objects


def resolve_flags(flags: str) -> list[str]:
    """A flag-set name (reference, performance, resource) or a literal flag string."""
    return shlex.split(FLAG_SETS.get(flags, flags))


def _compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc"))


def _shorten(stderr: str) -> str:
    """Keep the first error lines of a compiler's output, which say what is wrong."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line]
    kept = (errors or lines)[:MAX_ERROR_LINES]
    more = len(lines) - len(kept)
    return "\n".join(kept) + ("\n... (%d more lines)" % more if more > 0 else "")


def _exports_crypt_hash(library: Path) -> bool:
    try:
        with library.open("rb") as stream:
            symbols = ELFFile(stream).get_section_by_name(".dynsym")
            return symbols is not None and any(
                s.name == "CryptHash" and s["st_shndx"] != "SHN_UNDEF"
                for s in symbols.iter_symbols())
    except ELFError:
        return False


def build(source_dir: str | os.PathLike[str], *, name: str | None = None,
          flags: str = "reference", out_dir: str | os.PathLike[str] | None = None,
          candidate: str | None = None) -> BuildResult:
    """Compile an ICCS submission folder into ``<out_dir>/<name>.so`` plus its sidecar.

    Args:
        source_dir: the instance folder (``CryptHash_AlgorithmInstance.h`` and sources).
        name: instance name; defaults to the header's ``ALGORITHM_INSTANCE``.
        flags: ``"reference"``, ``"performance"``, ``"resource"`` or literal flags.
        out_dir: where the library goes; defaults to ``./ngcc-build/<name>/``.
        candidate: candidate id recorded in the sidecar (e.g. ``"hash-34"``).

    Raises:
        BuildError: no instance header, no sources, a compile error (shortened),
            or a library that does not export ``CryptHash``.
    """
    folder = Path(source_dir).resolve()
    if not folder.is_dir():
        raise BuildError("%s is not a folder" % folder)
    header_name, digest_bits = read_instance_header(folder)
    name = name or header_name
    sources, skipped = select_sources(folder)
    cflags = resolve_flags(flags) + list(LIBRARY_FLAGS)
    out = Path(out_dir) if out_dir is not None else Path("ngcc-build") / name
    out.mkdir(parents=True, exist_ok=True)
    library = out.resolve() / ("%s.so" % name)
    partial = library.with_suffix(".so.partial")
    cc = _compiler()
    supplied = needs_drng(folder, sources)
    with tempfile.TemporaryDirectory() as work_dir:
        extra = _compile_drng(cc, Path(work_dir)) if supplied else []
        includes = ["-I", str(folder)] + (["-I", str(SUPPORT_DIR / "drng" / "iccs")]
                                          if supplied else [])
        command = [*cc, *cflags, *includes, "-o", str(partial), *map(str, sources), *extra]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        raise BuildError("%s does not compile with %s:\n%s"
                         % (folder, " ".join(cflags), _shorten(result.stderr)))
    if not _exports_crypt_hash(partial):
        partial.unlink(missing_ok=True)
        raise BuildError("%s: the library built from %s does not export CryptHash"
                         % (folder, ", ".join(s.name for s in sources)))
    os.replace(partial, library)
    digest = sha256_file(library)
    version = subprocess.run(cc + ["--version"], capture_output=True, text=True, check=False)
    meta = {
        "name": name, "family": name, "candidate": candidate, "digest_bits": digest_bits,
        "cflags": cflags, "compiler": (version.stdout.splitlines() or [" ".join(cc)])[0],
        "source_dir": str(folder), "sources": [s.name for s in sources],
        "skipped": skipped, "warnings": result.stderr, "sha256": digest,
        "drng_supplied": supplied,
    }
    atomic_write_bytes(sidecar_path(library), (json.dumps(meta, indent=1) + "\n").encode())
    return BuildResult(external_instance(library, candidate), tuple(meta["sources"]),
                       skipped, result.stderr, digest, supplied)
