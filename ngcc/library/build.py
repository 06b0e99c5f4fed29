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
file-size limits, in the kernel's isolation with the folder read-only and the build's
work folder the one it may write (:mod:`ngcc.library.cc`, which also reads the facts
out of its diagnostics and objects; the library is linked there and copied out), and
the library and its ``<library>.json`` sidecar (the facts :func:`ngcc.instance` reads,
and the build's provenance) are written inside the output folder.

The candidate id is inferred from the instance name through the candidate registry
(:func:`ngcc.library.candidates.infer_candidate`) unless given: ``laurus_512`` is hash-14.

This module runs the steps and writes the library and its sidecar; the pieces it runs
them with: the compile flags (:mod:`ngcc.library.cflags`), the folder's files and the
sources chosen (:mod:`ngcc.library.sources`), the instance header
(:mod:`ngcc.library.header`), the messages of a failed compile or link
(:mod:`ngcc.library.diagnose`) and the provenance (:mod:`ngcc.library.provenance`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.errors import BuildError, KatError, NgccError
from ngcc.base.files import atomic_write_bytes, sha256_file
from ngcc.base.names import check_name, inside
from ngcc.library import candidates as _candidates
from ngcc.library.cc import (
    DEFAULT_TIMEOUT,
    Compiler,
    exports_crypt_hash,
    multiply_defined,
    object_symbols,
    read_input,
    shorten,
    shorten_link,
    undefined_symbols,
)
from ngcc.library.cflags import LIBRARY_FLAGS, cpu_features, define_flags, resolve_flags
from ngcc.library.diagnose import compile_failure, duplicates_text, undefined_message
from ngcc.library.header import find_instance_header
from ngcc.library.katfile import read_manifest
from ngcc.library.provenance import Provenance, build_provenance
from ngcc.library.registry import (
    EXTERNAL,
    LIB_DIR,
    Instance,
    check_candidate,
    external_instance,
    sidecar_path,
)
from ngcc.library.sources import CompiledObject, folder_files, select_sources

# The link refuses undefined symbols (a library that would fail to load, or load and
# fail on first call); libm is there for the sources that call it.
LINK_FLAGS = ("-Wl,-z,defs",)
LINK_LIBRARIES = ("-lm",)

# The ICCS DRNG, supplied when the objects call it and none defines it (setup.py
# installs these sources), compiled with our own flags.
SUPPORT_DIR = LIB_DIR / "src"
DRNG_SOURCES = ("sm3/sm3.c", "drng/sm3_drng.c", "drng/iccs/drng.c")
DRNG_CFLAGS = ("-O2", "-fPIC")
DRNG_SYMBOLS = frozenset({"init_random_number", "get_random_number"})


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


# ------------------------------------------------------------------ compiling

def _compile(folder: Path, sources: list[Path], cflags: list[str], extra: list[str],
             includes: list[str], compiler: Compiler) -> tuple[list[CompiledObject], str]:
    """Compile each source to an object; return them and the compiler's warnings
    (``extra``: the flags the user added, for the remedy of a missing -m flag)."""
    objects: list[CompiledObject] = []
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
        objects.append(CompiledObject(source.name, obj, *symbols))
    if failures:
        raise BuildError(*compile_failure(folder, cflags, extra, failures,
                                          [source.name for source in sources]))
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


def _needs_drng(objects: list[CompiledObject]) -> bool:
    """True when the objects call the ICCS DRNG and none of them defines it."""
    used = DRNG_SYMBOLS & set().union(*(o.undefined for o in objects))
    return bool(used - set().union(*(o.defined for o in objects)))


# ------------------------------------------------------------------ linking

def _link(folder: Path, library_objects: list[CompiledObject], programs: list[CompiledObject],
          extra_objects: list[str], cflags: list[str], libs: list[str], partial: Path,
          compiler: Compiler) -> str:
    """Link the library (refusing undefined symbols), ``libs`` after the objects; return
    the linker's warnings."""
    linked = compiler.work_dir / "library.so"  # the isolated compiler writes only there
    status, errors = compiler.run(
        [*cflags, *LINK_FLAGS, "-o", str(linked), *(str(o.path) for o in library_objects),
         *extra_objects, *libs, *LINK_LIBRARIES], compiler.work_dir, "linking")
    if status == 0:
        shutil.copyfile(linked, partial)
        return errors
    symbols = undefined_symbols(errors)
    if not symbols:
        raise BuildError("%s does not link with %s:\n%s%s"
                         % (folder, " ".join(cflags), duplicates_text(
                             folder, multiply_defined(errors), library_objects),
                            shorten_link(errors)))
    raise BuildError(*undefined_message(folder, symbols, library_objects, programs))



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
               for path in folder_files(folder)}
    sources, skipped = select_sources(folder, exclude)
    with tempfile.TemporaryDirectory(prefix="ngcc-build-") as work:
        compiler = Compiler(Path(work), timeout, reads=[folder, SUPPORT_DIR])
        header_name, digest_bits, _ = find_instance_header(folder, cflags, compiler)
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
    provenance = build_provenance(folder, name, candidate, flags, defines, extra, cflags,
                                  version, digests, skipped, link_libs, manifest_file,
                                  compiler.isolation)
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

