"""``ngcc build``: compile an ICCS submission folder into an instance library.

A submission folder holds ``CryptHash_AlgorithmInstance.c/.h`` (the header defines
``ALGORITHM_INSTANCE`` and ``DIGEST_BIT_LENGTH``), sibling sources, often the official
``KAT_CryptHash.c`` driver and ``drng.c/.h``, and sometimes programs with a ``main``,
some of them guarded by a macro the submitters define (``-DWCHAIN_NO_MAIN``). The
compiler decides what goes in, with the user's flags and defines:

1. the preprocessor reads the name and digest length from the instance header;
2. every C source but the official KAT driver is compiled to an object; an object
   that defines ``main`` is a program and is left out, with the reason recorded;
3. ngcc's own ICCS DRNG is compiled in when the objects call it and none defines it;
4. the objects are linked with ``-Wl,-z,defs``, so a symbol nobody defines fails the
   build with its name (and the left-out program that defines it, if one does);
   ``libs`` (``--libs "-lcrypto"``) come after the objects;
5. the library must export ``CryptHash`` (read from its ELF symbol table).

No foreign code runs here, and the folder is untrusted: only regular files under a
size limit are read (never a FIFO or a device behind a symlink), names go through
:func:`ngcc.base.names.check_name`, the compiler runs with a deadline, memory and
file-size limits (:mod:`ngcc.library.cc`, which also reads the facts out of its
diagnostics and objects), and the library and its ``<library>.json`` sidecar (the
facts :func:`ngcc.instance` reads, and the build's provenance) are written inside
the output folder.

The candidate id is inferred from the instance name through the candidate registry
(:func:`ngcc.library.candidates.infer_candidate`) unless given: ``laurus_512`` is hash-14.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngcc.base.clock import utc_now
from ngcc.base.errors import BuildError, BuildFix, KatError, LibraryError, NgccError
from ngcc.base.files import atomic_write_bytes, sha256_file
from ngcc.base.names import check_name, inside
from ngcc.base.untrusted import loads_json
from ngcc.base.version import __version__
from ngcc.library import candidates as _candidates
from ngcc.library import katfile as _katfile
from ngcc.library.cc import (
    DEFAULT_TIMEOUT,
    MAX_ERROR_LINES,
    Compiler,
    exports_crypt_hash,
    included_sources,
    main_hint,
    main_place,
    missing_target_flags,
    multiply_defined,
    object_symbols,
    other_errors,
    read_input,
    shorten,
    shorten_link,
    undefined_symbols,
)
from ngcc.library.katfile import read_manifest
from ngcc.library.registry import (
    EXTERNAL,
    LIB_DIR,
    Instance,
    check_candidate,
    external_instance,
    manifest_path,
    sidecar_path,
)

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
# The link refuses undefined symbols (a library that would fail to load, or load and
# fail on first call); libm is there for the sources that call it.
LINK_FLAGS = ("-Wl,-z,defs",)
LINK_LIBRARIES = ("-lm",)
KAT_DRIVER = "KAT_CryptHash.c"
INSTANCE_HEADER = "CryptHash_AlgorithmInstance.h"

# The ICCS DRNG, supplied when the objects call it and none defines it (setup.py
# installs these sources), compiled with our own flags.
SUPPORT_DIR = LIB_DIR / "src"
DRNG_SOURCES = ("sm3/sm3.c", "drng/sm3_drng.c", "drng/iccs/drng.c")
DRNG_CFLAGS = ("-O2", "-fPIC")
DRNG_SYMBOLS = frozenset({"init_random_number", "get_random_number"})

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
_HEADER_FILE = re.compile(r"[A-Za-z0-9_.+-]+\.h")
_STRING_LITERALS = re.compile(r'(?:\s*"[^"\\\n]*")+\s*')
_DIGEST_BITS = re.compile(r"\(?\s*(\d+)[uUlL]*\s*\)?")
MAX_DIGEST_BITS = 1 << 14


@dataclass(frozen=True)
class Provenance:
    """Where a library came from: what ``ngcc build`` records in its sidecar.

    Attributes:
        source_dir: the absolute source folder.
        source_sha256: SHA-256 of every C source and header in the folder, by file name.
        flag_set: ``"reference"``, ``"performance"``, ``"resource"``, or None for
            literal flags.
        defines: the ``--define`` additions, as ``NAME`` or ``NAME=VALUE``.
        extra_cflags: the ``--extra-cflags`` additions.
        cflags: every compile flag, in order (set or literal flags, ``-D`` defines,
            extra flags, :data:`LIBRARY_FLAGS`).
        compiler: the compiler's version line.
        ngcc_version: the ngcc that built it.
        built_at: when, UTC, ``YYYY-MM-DDTHH:MM:SSZ``.
        skipped: the folder's C files left out, with the reason.
        kat_basis: what a KAT check will rest on, as far as the build can see:
            ``"manifest"`` (the instance name is in a shipped manifest),
            ``"submission files"`` (the submission's own KAT files) or ``"none"``.
        kat_files: the manifest's path, or the submission's KAT files (empty for none).
        libs: the ``--libs`` link options, after the objects (``-lcrypto``).
    """

    source_dir: str
    source_sha256: dict[str, str]
    flag_set: str | None
    defines: tuple[str, ...]
    extra_cflags: tuple[str, ...]
    cflags: tuple[str, ...]
    compiler: str
    ngcc_version: str
    built_at: str
    skipped: dict[str, str]
    kat_basis: str
    kat_files: tuple[str, ...]
    libs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The fields as JSON values (tuples as lists), as stored in the sidecar."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in self.__dict__.items()}


@dataclass(frozen=True)
class BuildResult:
    """What ``ngcc build`` made.

    Attributes:
        instance: the built instance (variant ``"external"``), usable everywhere.
        sources: the C files compiled into the library, relative to the source folder.
        skipped: files left out and why (the KAT driver, programs whose object
            defines ``main``, ``exclude``).
        warnings: the compiler's diagnostics (empty when clean).
        sha256: SHA-256 of the library file.
        drng_supplied: True when ngcc linked its own ICCS DRNG (the folder had none).
        provenance: source folder, file digests, flags, compiler, ngcc version, build
            time and KAT basis (the sidecar's record of them).
        notes: what the build decided for the user to know: the candidate id and where
            it came from, a digest length the registry disagrees with.
    """

    instance: Instance
    sources: tuple[str, ...]
    skipped: dict[str, str]
    warnings: str
    sha256: str
    drng_supplied: bool
    provenance: Provenance
    notes: tuple[str, ...] = ()


# ------------------------------------------------------------------ untrusted input

def _folder_files(folder: Path) -> list[Path]:
    """The folder's C sources and headers (no hidden files), checked to be readable."""
    files = sorted(p for p in folder.iterdir()
                   if p.suffix in (".c", ".h") and not p.name.startswith("."))
    for path in files:
        if not path.name.isprintable():
            raise BuildError("%s: file name %r has control characters; rename it"
                             % (folder, path.name))
        if path.name[:1] in ("@", "-"):  # the compiler would read it as options
            raise BuildError("%s: file name %r starts with %r, which a C compiler reads as "
                             "options, not a file; rename it" % (folder, path.name, path.name[0]))
        if (path.is_symlink() and path.resolve().is_file()  # a FIFO or device: read_input
                and not path.resolve().is_relative_to(folder.resolve())):
            raise BuildError("%s: %s is a symbolic link to %s, outside the folder; a "
                             "submission is the files in its folder (copy it in)"
                             % (folder, path.name, path.resolve()))
    return files


# ------------------------------------------------------------------ the instance header

_PROBE = """#include "%s"
#ifdef ALGORITHM_INSTANCE
ngcc_probe_name ALGORITHM_INSTANCE
#endif
#ifdef DIGEST_BIT_LENGTH
ngcc_probe_bits DIGEST_BIT_LENGTH
#endif
"""


def read_instance_header(source_dir: str | os.PathLike[str], cflags: Sequence[str] = (), *,
                         timeout: float = DEFAULT_TIMEOUT) -> tuple[str, int]:
    """Return (ALGORITHM_INSTANCE, DIGEST_BIT_LENGTH) as the preprocessor sees them.

    The header is ``CryptHash_AlgorithmInstance.h``, else the first header of the
    folder that defines ``ALGORITHM_INSTANCE``; ``cflags`` (``-D`` defines, ``-I``
    folders) apply as they will in the build.

    Raises:
        BuildError: no such header, a header that does not preprocess, a name that is
            not a string literal or a digest length that is not a whole number of bytes.
        InvalidNameError: a name that breaks the name rule (``"../x"``); the message
            names the header.
    """
    with tempfile.TemporaryDirectory(prefix="ngcc-build-") as work:
        name, bits, _ = _read_instance_header(Path(source_dir).resolve(), list(cflags),
                                              Compiler(Path(work), timeout))
    return name, bits


def _read_instance_header(folder: Path, cflags: list[str],
                          compiler: Compiler) -> tuple[str, int, Path]:
    header = folder / INSTANCE_HEADER
    if os.path.lexists(header):
        candidates = [header]
    else:
        candidates = [p for p in sorted(folder.glob("*.h")) if _HEADER_FILE.fullmatch(p.name)]
    for path in candidates:
        read_input(path)  # a regular file of bounded size, before the compiler opens it
        found = _probe_header(folder, path, cflags, compiler, required=path == header)
        if found is None:
            continue
        name_text, bits_text = found
        if bits_text is None:
            raise BuildError("%s defines ALGORITHM_INSTANCE but no DIGEST_BIT_LENGTH; add "
                             "`#define DIGEST_BIT_LENGTH <bits>`" % path)
        return _instance_name(path, name_text), _digest_bits(path, bits_text), path
    raise BuildError("%s: no header defines ALGORITHM_INSTANCE (expected %s)"
                     % (folder, INSTANCE_HEADER))


def _probe_header(folder: Path, header: Path, cflags: list[str], compiler: Compiler,
                  required: bool) -> tuple[str, str | None] | None:
    """What ALGORITHM_INSTANCE and DIGEST_BIT_LENGTH expand to after ``#include``-ing
    the header; None when it does not define the name (or, unless required, does not
    preprocess on its own)."""
    probe = compiler.work_dir / "instance-probe.c"
    probe.write_text(_PROBE % header.name)
    expanded = compiler.work_dir / "instance-probe.i"
    status, errors = compiler.run([*cflags, "-I", str(folder.absolute()), "-E", "-P", "-o",
                                   str(expanded), str(probe)], compiler.work_dir,
                                  "reading %s" % header.name)
    if status != 0:
        if required:
            raise BuildError("%s does not preprocess with %s:\n%s"
                             % (header, " ".join(cflags), shorten(errors)))
        return None
    with expanded.open("rb") as stream:  # our lines come last
        stream.seek(max(0, expanded.stat().st_size - 65536))
        tail = stream.read().decode("utf-8", "replace").splitlines()
    values = {}
    for line in tail:
        key, _, value = line.partition(" ")
        if key in ("ngcc_probe_name", "ngcc_probe_bits"):
            values[key] = value
    if "ngcc_probe_name" not in values:
        return None
    return values["ngcc_probe_name"], values.get("ngcc_probe_bits")


def _instance_name(header: Path, text: str) -> str:
    if not _STRING_LITERALS.fullmatch(text):
        raise BuildError("%s: ALGORITHM_INSTANCE is not a string literal: %s"
                         % (header, text.strip()[:100]))
    name = "".join(re.findall(r'"([^"]*)"', text))
    return check_name(name, "ALGORITHM_INSTANCE in %s" % header)


def _digest_bits(header: Path, text: str) -> int:
    digits = _DIGEST_BITS.fullmatch(text.strip())
    if digits is None:
        raise BuildError("%s: DIGEST_BIT_LENGTH is not a plain number: %r" % (header, text))
    bits = int(digits.group(1))
    if not 0 < bits <= MAX_DIGEST_BITS or bits % 8:
        raise BuildError("%s: DIGEST_BIT_LENGTH %d is not a whole number of bytes between "
                         "8 and %d bits" % (header, bits, MAX_DIGEST_BITS))
    return bits


# ------------------------------------------------------------------ compiling

@dataclass(frozen=True)
class _Object:
    """One source compiled to an object, and the global symbols it defines and uses."""

    source: str
    path: Path
    defined: frozenset[str]
    undefined: frozenset[str]


def select_sources(source_dir: str | os.PathLike[str],
                   exclude: Iterable[str] = ()) -> tuple[list[Path], dict[str, str]]:
    """The folder's C files to compile, and those left out before compiling (the
    official KAT driver, and the ``exclude`` file names). Programs are found later,
    by the compiler: see :func:`build`."""
    folder = Path(source_dir)
    excluded = set(exclude)
    sources: list[Path] = []
    skipped: dict[str, str] = {}
    for path in _folder_files(folder):
        if path.suffix != ".c":
            continue
        if path.name in excluded:
            skipped[path.name] = "excluded by request"
        elif path.name == KAT_DRIVER:
            skipped[path.name] = "the official KAT driver (ngcc generates KATs itself)"
        else:
            sources.append(path)
    missing = excluded - set(skipped)
    if missing:
        raise BuildError("%s: no C file %s to exclude" % (folder, ", ".join(sorted(missing))))
    return sources, skipped


def _compile(folder: Path, sources: list[Path], cflags: list[str], extra: list[str],
             includes: list[str], compiler: Compiler) -> tuple[list[_Object], str]:
    """Compile each source to an object; return them and the compiler's warnings
    (``extra``: the flags the user added, for the remedy of a missing -m flag)."""
    objects: list[_Object] = []
    warnings: list[str] = []
    failures: list[tuple[str, str]] = []
    for index, source in enumerate(sources):
        argument = "./" + source.name  # a path, never an option or an @response file
        obj = compiler.work_dir / ("%03d.o" % index)
        status, errors = compiler.run([*cflags, *includes, "-c", argument, "-o", str(obj)],
                                      folder, "compiling %s" % source.name)
        errors = errors.replace(argument + ":", source.name + ":")  # as the user names it
        if status != 0:
            failures.append((source.name, errors))
            continue
        if errors.strip():
            warnings.append(errors.rstrip())
        symbols = object_symbols(obj)
        if symbols is None:  # LTO objects carry no symbol table: read a plain one
            plain = compiler.work_dir / ("%03d.symbols.o" % index)
            status, errors = compiler.run([*cflags, "-fno-lto", *includes, "-c", argument,
                                           "-o", str(plain)], folder,
                                          "compiling %s" % source.name)
            symbols = object_symbols(plain) if status == 0 else None
            if symbols is None:
                raise BuildError("%s: cannot read the symbols of %s compiled with %s:\n%s"
                                 % (folder, source.name, " ".join(cflags), shorten(errors)))
        objects.append(_Object(source.name, obj, *symbols))
    if failures:
        raise BuildError(*_compile_failure(folder, cflags, extra, failures, len(sources)))
    return objects, "\n".join(warnings)


def _compile_drng(compiler: Compiler) -> list[str]:
    """Compile the supplied DRNG into objects in the work folder; return their paths."""
    objects = []
    for source in DRNG_SOURCES:
        obj = compiler.work_dir / (Path(source).stem + ".drng.o")
        status, errors = compiler.run([*DRNG_CFLAGS, "-I", str(SUPPORT_DIR / "sm3"), "-c",
                                       str(SUPPORT_DIR / source), "-o", str(obj)],
                                      compiler.work_dir, "compiling the ICCS DRNG")
        if status != 0:
            raise BuildError("the supplied ICCS DRNG does not compile here:\n%s"
                             % shorten(errors))
        objects.append(str(obj))
    return objects


def _needs_drng(objects: list[_Object]) -> bool:
    """True when the objects call the ICCS DRNG and none of them defines it."""
    used = DRNG_SYMBOLS & set().union(*(o.undefined for o in objects))
    return bool(used - set().union(*(o.defined for o in objects)))


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


def _compile_failure(folder: Path, cflags: list[str], extra: list[str],
                     failures: list[tuple[str, str]], source_count: int
                     ) -> tuple[str, tuple[BuildFix, ...]]:
    """The message for sources that do not compile: the missing -m flags once each,
    with the first place they are needed, else the compiler's first errors; and the
    flags as fixes when they are the only errors."""
    text = "\n".join(errors for _, errors in failures)
    head = "%s does not compile with %s" % (folder, " ".join(cflags))
    missing = missing_target_flags(text)
    if not missing:
        hint = ("\n(a file that is no part of the library can be left out with --exclude "
                "FILE)" if source_count > 1 else "")
        return "%s:\n%s%s" % (head, shorten(text), hint), ()
    lines = ["%s: its intrinsics need compiler flags these flags lack:" % head]
    fixes = []
    for flag, uses in missing.items():
        places = sorted(set(uses), key=lambda use: _place_order(use[1]))
        function, where = places[0]
        more = len(places) - 1
        use = "%s at %s%s" % (function, where, " (and %d more place%s)"
                              % (more, "s" * (more > 1)) if more else "")
        lines.append("  %s for %s" % (flag, use))
        fixes.append(BuildFix("extra_cflags", flag, "its intrinsics need it: %s" % use))
    lines.append('Add them: --extra-cflags="%s"' % " ".join([*extra, *missing]))
    other = other_errors(text)
    if other:
        lines.append("Other errors:\n%s" % shorten("\n".join(other)))
    return "\n".join(lines), () if other else tuple(fixes)


def _place_order(where: str) -> tuple[str, int]:
    """``"aes.c:12"`` as ("aes.c", 12), so places sort by file, then line."""
    file, _, line = where.rpartition(":")
    return file, int(line) if line.isdigit() else 0


# ------------------------------------------------------------------ linking

def _link(folder: Path, library_objects: list[_Object], programs: list[_Object],
          extra_objects: list[str], cflags: list[str], libs: list[str], partial: Path,
          compiler: Compiler) -> str:
    """Link the library (refusing undefined symbols), ``libs`` after the objects; return
    the linker's warnings."""
    status, errors = compiler.run(
        [*cflags, *LINK_FLAGS, "-o", str(partial), *(str(o.path) for o in library_objects),
         *extra_objects, *libs, *LINK_LIBRARIES], compiler.work_dir, "linking")
    if status == 0:
        return errors
    partial.unlink(missing_ok=True)
    symbols = undefined_symbols(errors)
    if not symbols:
        raise BuildError("%s does not link with %s:\n%s%s"
                         % (folder, " ".join(cflags), _duplicates_text(
                             folder, multiply_defined(errors), library_objects),
                            shorten_link(errors)))
    raise BuildError(*_undefined_message(folder, symbols, library_objects, programs))


def _duplicates_text(folder: Path, symbols: list[str], library_objects: list[_Object]) -> str:
    """Who defines each symbol defined twice, and which file ``#include``s which."""
    lines = []
    for symbol in symbols[:MAX_ERROR_LINES]:
        definers = [o.source for o in library_objects if symbol in o.defined]
        lines.append("  %s is defined in %s" % (symbol, " and ".join(definers) or "two objects"))
    for obj in library_objects:
        included = [name for name in included_sources(folder / obj.source)
                    if name in {o.source for o in library_objects}]
        if included:
            lines.append("  %s #includes %s, so its object defines that file's functions "
                         "too: leave one of them out (--exclude)" % (obj.source,
                                                                      ", ".join(included)))
    return "".join(line + "\n" for line in lines) + ("the linker said:\n" if lines else "")


def _definer(symbol: str, programs: list[_Object], folder: Path) -> _Object | None:
    """The left-out program defining ``symbol``: rather the file that defines it than a
    program that has it only because it ``#include``s that file."""
    definers = [p for p in programs if symbol in p.defined]
    by_name = {p.source: p for p in definers}
    for program in definers:
        for name in included_sources(folder / program.source):
            if name in by_name:
                return by_name[name]
    return definers[0] if definers else None


def _undefined_message(folder: Path, symbols: list[str], library_objects: list[_Object],
                       programs: list[_Object]) -> tuple[str, tuple[BuildFix, ...]]:
    """Name each undefined symbol, who uses it, and the left-out program defining it;
    the define that turns off a guarded main of such a program is a fix."""
    lines = ["%s: the library would leave symbols undefined (it is linked with -Wl,-z,defs "
             "so that it never fails when loaded):" % folder]
    culprits: dict[str, _Object] = {}
    for symbol in symbols[:MAX_ERROR_LINES]:
        users = [o.source for o in library_objects if symbol in o.undefined]
        line = "  %s, used by %s" % (symbol, ", ".join(users) or "the library")
        definer = _definer(symbol, programs, folder)
        if definer is not None:
            culprits[definer.source] = definer
            line += "; defined in %s, left out because its object defines main()" \
                % definer.source
        else:
            line += "; no source of the folder defines it"
        lines.append(line)
    if len(symbols) > MAX_ERROR_LINES:
        lines.append("  ... and %d more" % (len(symbols) - MAX_ERROR_LINES))
    fixes = []
    for source in culprits:
        lines.append(main_hint(folder / source))
        place = main_place(folder / source)
        if place is not None and place.macro is not None:
            fixes.append(BuildFix("define", place.macro, "main() in %s:%d is inside `%s`"
                                  % (source, place.line, place.guard)))
    for program in programs:  # a program that includes a culprit: say why it stays out
        if program.source not in culprits and any(
                name in culprits for name in included_sources(folder / program.source)):
            lines.append(main_hint(folder / program.source))
    return "\n".join(lines), tuple(fixes)


# ------------------------------------------------------------------ provenance

def _kat_basis(name: str, candidate: str, folder: Path,
               manifest: Path | None) -> tuple[str, tuple[str, ...]]:
    """What a KAT check of this build will rest on, as far as the build can see: a
    manifest line for one of its KAT file names (in ``manifest`` or the candidate's
    shipped one), else the submission's own KAT files."""
    manifest = manifest or manifest_path(candidate)
    try:
        lines = read_manifest(manifest)
    except (ValueError, UnicodeDecodeError):
        lines = {}
    if any(_katfile.manifest_entry(lines, name, _katfile.file_name(kind, name))
           for kind in _katfile.FILES):
        return "manifest", (str(manifest),)
    names = [name]
    with contextlib.suppress(NgccError):
        listed = _candidates.candidate(candidate).instance(name)
        names += [listed.manifest_folder] if listed is not None else []
    folders = _katfile.submission_kat_folders(folder, names)
    found = []
    for kind in _katfile.FILES:
        file_name = _katfile.file_name(kind, name)
        match = next((f / file_name for f in folders if (f / file_name).is_file()), None)
        if match is not None:
            found.append(str(match))
    return ("submission files", tuple(found)) if found else ("none", ())


def read_provenance(library: str | os.PathLike[str]) -> Provenance | None:
    """The provenance ``ngcc build`` recorded beside ``library``; None for a sidecar
    written by an ngcc that recorded none.

    Raises:
        LibraryError: no sidecar, or one whose provenance fields have the wrong types.
    """
    sidecar = sidecar_path(Path(library))
    try:
        meta = loads_json(read_input(sidecar, 1 << 20))
    except (BuildError, ValueError) as exc:
        raise LibraryError("%s: unreadable sidecar (%s); rebuild with `ngcc build`"
                           % (sidecar, exc)) from exc
    if not isinstance(meta, dict) or "ngcc_version" not in meta:
        return None
    try:
        return _provenance_from(meta)
    except (KeyError, TypeError, ValueError) as exc:
        raise LibraryError("%s: corrupt provenance (%s); rebuild with `ngcc build`"
                           % (sidecar, exc)) from exc


def _provenance_from(meta: dict[str, Any]) -> Provenance:
    def text(key: str) -> str:
        if not isinstance(meta[key], str):
            raise TypeError("%s is not a string" % key)
        return meta[key]

    def texts(key: str) -> tuple[str, ...]:
        if not isinstance(meta[key], list) or not all(isinstance(v, str) for v in meta[key]):
            raise TypeError("%s is not a list of strings" % key)
        return tuple(meta[key])

    def table(key: str) -> dict[str, str]:
        value = meta[key]
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise TypeError("%s is not a table of strings" % key)
        return dict(value)

    flag_set = meta["flag_set"]
    if flag_set is not None and flag_set not in FLAG_SETS:
        raise ValueError("flag_set %r is not one of %s" % (flag_set, ", ".join(FLAG_SETS)))
    basis = text("kat_basis")
    if basis not in ("manifest", "submission files", "none"):
        raise ValueError("kat_basis %r" % basis)
    return Provenance(text("source_dir"), table("source_sha256"), flag_set, texts("defines"),
                      texts("extra_cflags"), texts("cflags"), text("compiler"),
                      text("ngcc_version"), text("built_at"), table("skipped"), basis,
                      texts("kat_files"), texts("libs") if "libs" in meta else ())


# ------------------------------------------------------------------ build

def build(source_dir: str | os.PathLike[str], *, name: str | None = None,
          flags: str = "reference", out_dir: str | os.PathLike[str] | None = None,
          candidate: str | None = None, defines: Iterable[str] = (),
          extra_cflags: str | Sequence[str] = (), label: str | None = None,
          exclude: Iterable[str] = (), timeout: float = DEFAULT_TIMEOUT,
          libs: str | Sequence[str] = (),
          manifest: str | os.PathLike[str] | None = None,
          adjustments: Sequence[str] = ()) -> BuildResult:
    """Compile an ICCS submission folder into ``<out_dir>/<name>.so`` plus its sidecar.

    Args:
        source_dir: the instance folder (``CryptHash_AlgorithmInstance.h`` and sources).
        name: instance name; defaults to the header's ``ALGORITHM_INSTANCE``. It
            selects the KAT manifest line.
        flags: ``"reference"``, ``"performance"``, ``"resource"`` or literal flags.
        out_dir: where the library goes; defaults to ``./ngcc-build/<name>/``.
        candidate: the candidate id (any of ``ngcc list --candidates``, or
            ``baseline``); default: the one candidate of the registry with an instance
            of that name (:func:`ngcc.library.candidates.infer_candidate`), else ``external``.
        defines: ``NAME`` or ``NAME=VALUE`` macros added to the flags (``-D``).
        extra_cflags: flags added after the set's (a string is split like a shell).
        label: the library's name in files, tables and plots (stored in the sidecar).
        exclude: C file names to leave out.
        timeout: seconds all compiler runs of the build may take together.
        libs: link options after the objects, e.g. ``"-lcrypto"`` (a string is split
            like a shell); ``-Wl,-z,defs`` still applies.
        manifest: a ``kat.sha256`` manifest ngcc does not ship: recorded (path and
            sha256), so every KAT check of the library uses it.
        adjustments: what a caller changed in these options on the build's own
            diagnosis, and why (``ngcc evaluate``): kept in the sidecar (and so in the
            KAT log).

    Raises:
        BuildError: no instance header, no sources, a file that is not a regular file
            or is too large, a compile error (shortened; missing ``-m`` flags named
            once), an undefined symbol (named), a library without ``CryptHash``, or
            a compiler past the timeout.
        InvalidNameError: a name, label or candidate id that breaks the name rule,
            or an unknown candidate id (``UnknownCandidateError``).
        AmbiguousInstanceError: several candidates have the instance name and none
            was given (the message lists them).
        KatError: a manifest that is not a file or is corrupt.
    """
    folder = Path(source_dir).resolve()
    if not folder.is_dir():
        raise BuildError("%s is not a folder" % folder)
    if candidate is not None:
        candidate = check_candidate(candidate, "--candidate")
    for given, what in ((label, "--label"), (name, "--name")):
        if given is not None:
            check_name(given, what)
    if not isinstance(flags, str):
        raise TypeError("flags must be a flag set name or a string of flags, not %s"
                        % type(flags).__name__)
    extra = shlex.split(extra_cflags) if isinstance(extra_cflags, str) else list(extra_cflags)
    link_libs = shlex.split(libs) if isinstance(libs, str) else list(libs)
    manifest_file = _given_manifest(manifest)
    output = [flag for flag in extra if flag.startswith("-o") or flag.startswith("--output")]
    if output:
        raise BuildError("--extra-cflags may not name an output file (%s): the library is "
                         "written to --out" % " ".join(output))
    defines = list(defines)
    cflags = [*resolve_flags(flags), *define_flags(defines), *extra, *LIBRARY_FLAGS]
    digests = {path.name: hashlib.sha256(read_input(path)).hexdigest()
               for path in _folder_files(folder)}
    sources, skipped = select_sources(folder, exclude)
    with tempfile.TemporaryDirectory(prefix="ngcc-build-") as work:
        compiler = Compiler(Path(work), timeout)
        header_name, digest_bits, _ = _read_instance_header(folder, cflags, compiler)
        name = name or header_name
        candidate, notes = _candidate_of(name, candidate, digest_bits)
        includes = ["-I", str(folder.absolute()), "-idirafter", str(SUPPORT_DIR / "drng" / "iccs")]
        objects, warnings = _compile(folder, sources, cflags, extra, includes, compiler)
        programs = [o for o in objects if "main" in o.defined]
        skipped.update((o.source, "its object defines main() (a program, not library code)")
                       for o in programs)
        library_objects = [o for o in objects if "main" not in o.defined]
        if not library_objects:
            raise BuildError("%s: no C source left to build a library from (skipped: %s)"
                             % (folder, ", ".join(skipped) or "nothing"))
        out = Path(out_dir) if out_dir is not None else inside("ngcc-build", name)
        out.mkdir(parents=True, exist_ok=True)
        library = inside(out, "%s.so" % name).resolve()
        partial = inside(out, "%s.so.partial" % name).resolve()
        supplied = _needs_drng(library_objects)
        drng = _compile_drng(compiler) if supplied else []
        warnings = "\n".join(filter(None, [warnings, _link(
            folder, library_objects, programs, drng, cflags, link_libs, partial,
            compiler).rstrip()]))
        if not exports_crypt_hash(partial):
            partial.unlink(missing_ok=True)
            raise BuildError("%s: the library built from %s does not export CryptHash"
                             % (folder, ", ".join(o.source for o in library_objects)))
        version = compiler.version()
    provenance = _provenance(folder, name, candidate, flags, defines, extra, cflags,
                             version, digests, skipped, link_libs, manifest_file)
    digest = sha256_file(partial)
    meta = {
        "name": name, "family": name, "label": label,
        "candidate": candidate, "digest_bits": digest_bits,
        "sources": [o.source for o in library_objects],
        "link_flags": [*LINK_FLAGS, *link_libs, *LINK_LIBRARIES],
        "cpu_features": list(cpu_features(cflags)),
        "warnings": warnings, "sha256": digest, "drng_supplied": supplied,
        **({"adjustments": list(adjustments)} if adjustments else {}),
        **provenance.to_json(),
    }
    if manifest_file is not None:
        meta.update(kat_manifest=str(manifest_file),
                    kat_manifest_sha256=sha256_file(manifest_file))
    # The sidecar, then the library: its sha256 names the library it describes.
    atomic_write_bytes(sidecar_path(library), (json.dumps(meta, indent=1) + "\n").encode())
    os.replace(partial, library)
    return BuildResult(external_instance(library), tuple(meta["sources"]), skipped, warnings,
                       digest, supplied, provenance, notes)


def _given_manifest(manifest: str | os.PathLike[str] | None) -> Path | None:
    """The ``--manifest`` file, resolved and checked to be a readable manifest."""
    if manifest is None:
        return None
    path = Path(manifest).resolve()
    if not path.is_file():
        raise KatError("--manifest %s is not a file" % manifest)
    try:
        read_manifest(path)
    except (ValueError, UnicodeDecodeError) as exc:
        raise KatError("--manifest %s is corrupt: %s" % (manifest, exc)) from exc
    return path


def _candidate_of(name: str, given: str | None, digest_bits: int) -> tuple[str, tuple[str, ...]]:
    """The build's candidate id (``given``, else inferred from the instance name) and
    the notes that say where it came from."""
    if given is not None:
        notes = ["candidate %s: given with --candidate" % given]
        candidate = given
    else:
        inferred = _candidates.infer_candidate(name)
        candidate = inferred or EXTERNAL
        notes = ["candidate %s (%s): inferred from the instance name %r, which only this "
                 "Round 1 candidate has (--candidate ID overrides)"
                 % (inferred, _candidates.title(inferred), name) if inferred else
                 "candidate %s: no Round 1 candidate has an instance named %r (--candidate "
                 "ID sets one; a KAT check needs --manifest FILE, --official DIR or the "
                 "submission's own KAT files)" % (EXTERNAL, name)]
    with contextlib.suppress(NgccError):
        found = _candidates.candidate(candidate).instance(name)
        if found is not None and found.digest_bits not in (None, digest_bits):
            notes.append("DIGEST_BIT_LENGTH is %d but the registry gives %s %d bits"
                         % (digest_bits, found.name, found.digest_bits))
    return candidate, tuple(notes)


def _provenance(folder: Path, name: str, candidate: str, flags: str,
                defines: list[str], extra: list[str], cflags: list[str], compiler: str,
                digests: dict[str, str], skipped: dict[str, str], libs: list[str],
                manifest: Path | None) -> Provenance:
    basis, kat_files = _kat_basis(name, candidate, folder, manifest)
    return Provenance(
        source_dir=str(folder), source_sha256=digests,
        flag_set=flags if flags in FLAG_SETS else None, defines=tuple(defines),
        extra_cflags=tuple(extra), cflags=tuple(cflags), compiler=compiler,
        ngcc_version=__version__,
        built_at=utc_now(),
        skipped=dict(skipped), kat_basis=basis, kat_files=kat_files, libs=tuple(libs))
