"""Running the C compiler on an untrusted submission, and reading what it says.

:func:`read_input` reads a submission's file only when it is a regular file under a
size limit; :class:`Compiler` runs ``$CC`` with a deadline and resource limits, in the
kernel's isolation (``ngcc-jail``, ``csrc/jail/jail.c``) unless the sandbox is off
(:mod:`ngcc.base.sandbox`), and returns its diagnostics; the rest reads facts out of
those diagnostics and of the objects it wrote: an object's symbols
(:func:`object_symbols`), the ``-m`` flags a source's intrinsics lack
(:func:`missing_target_flags`), the symbols a link left undefined
(:func:`undefined_symbols`) and the macro guarding a program's ``main``
(:func:`main_hint`). :mod:`ngcc.library.build` decides with them.
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ngcc.base import sandbox as _sandbox
from ngcc.base.errors import BuildError, SandboxUnavailableError
from ngcc.base.untrusted import plain
from ngcc.library.registry import LIB_DIR

# Limits on untrusted input: every file read, and the compiler run on it.
MAX_INPUT_BYTES = 16 << 20
DEFAULT_TIMEOUT = 600.0
COMPILER_MEMORY_BYTES = 4 << 30   # RLIMIT_AS of each compiler process
COMPILER_FILE_BYTES = 1 << 30     # RLIMIT_FSIZE: no object, library or log larger
MAX_DIAGNOSTIC_BYTES = 1 << 20    # compiler output kept for messages
MAX_ERROR_LINES = 12              # compiler error lines quoted in a message

# The compiler's isolation (csrc/jail/jail.c): its line when the kernel refuses the
# namespaces (after base.sandbox.EXIT_UNAVAILABLE), the system folders its view always has.
JAIL = LIB_DIR / "ngcc-jail"
JAIL_REFUSAL = "ngcc-jail: isolation unavailable: "
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ALTERNATIVES = "/etc/alternatives"  # Debian's cc, c++, ... symlinks (read-only)
ISOLATED = _sandbox.NAMESPACES  # the compiler ran in ngcc-jail's namespaces and view
NOT_ISOLATED = "none"  # NGCC_NO_SANDBOX=1 / --no-sandbox: as the evaluator, unconfined


def read_input(path: Path, limit: int | None = None) -> bytes:
    """The bytes of one file of a submission, refused with :class:`BuildError` unless
    it is a regular file (a symlink to one is fine) of at most ``limit`` bytes
    (default :data:`MAX_INPUT_BYTES`).

    A FIFO, a device or a folder is never read: ``big.c -> /dev/zero`` is refused
    from its ``stat`` before it is opened, and the opened file is checked again."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    try:
        _check_regular(path, os.stat(path), limit)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise BuildError("cannot read %s: %s" % (path, exc.strerror or exc)) from exc
    with os.fdopen(fd, "rb") as stream:
        _check_regular(path, os.fstat(stream.fileno()), limit)  # not swapped meanwhile
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise BuildError("%s grew past %d bytes while being read" % (path, limit))
    return data


def _check_regular(path: Path, info: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                 (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                 (stat.S_ISSOCK, "a socket"))
        kind = next((what for test, what in kinds if test(info.st_mode)), "not a file")
        link = " (a symlink to %s)" % os.readlink(path) if os.path.islink(path) else ""
        raise BuildError("%s is %s%s, not a regular file: ngcc build reads only regular "
                         "files; remove it from the folder" % (path, kind, link))
    if info.st_size > limit:
        raise BuildError("%s is %d bytes, more than the %d a source file may have"
                         % (path, info.st_size, limit))


class Compiler:
    """The C compiler (``$CC``, default ``cc``) run on untrusted input.

    English diagnostics in the C locale (ngcc parses them), one deadline for the
    whole build, limits on memory, file size and core dumps, temporary files in the
    build's work folder, and the whole process group killed when time runs out.

    Unless the sandbox is off (``NGCC_NO_SANDBOX=1``, ``--no-sandbox``), every run is
    in ``ngcc-jail``: new user, PID, network, IPC and mount namespaces whose view holds
    the system's programs and headers read-only, ``reads`` (the submission's folder,
    ngcc's own sources) and the compiler's own folders read-only, and ``work_dir`` as
    the one writable folder. A source that ``#include``s a file outside them, or a
    compiler plugin or wrapper that writes, connects or signals outside, fails there.
    """

    def __init__(self, work_dir: Path, timeout: float, reads: Sequence[Path] = ()):
        if not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds, got %r" % timeout)
        self.command = shlex.split(os.environ.get("CC", "cc")) or ["cc"]
        self.work_dir = work_dir
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        # ngcc's own environment stays out (its tokens, and a sanitizer runtime that
        # LD_PRELOAD gives ngcc under the README's ASan recipe, which under the memory
        # cap could not reserve its shadow memory).
        self.env = _sandbox.minimal_environment(LC_ALL="C", LANG="C", LANGUAGE="C",
                                                TMPDIR=str(work_dir))
        self.runs = 0
        self.isolation = ISOLATED if _sandbox.sandbox_enabled() else NOT_ISOLATED
        self.reads = [Path(folder) for folder in reads]
        self._jailed: tuple[list[str], str] | None = None  # made on first use

    def run(self, args: Sequence[str], cwd: Path, what: str) -> tuple[int, str]:
        """Run the compiler with ``args`` in ``cwd``; return (exit status, diagnostics).

        Raises:
            BuildError: the compiler cannot be run, or did not finish in time.
            SandboxUnavailableError: the kernel refused the compiler's isolation (the
                jail's line and the remedy): the build stops at the first such run.
        """
        self.runs += 1
        log_path = self.work_dir / ("cc-%d.log" % self.runs)
        command = [*self.command, *args]
        if self.isolation == ISOLATED:
            options, executable = self._jail()
            flags = [part for folder in flag_folders(args) for part in ("--read", folder)]
            command = [str(JAIL), *options, *flags, "--chdir", str(cwd), "--", executable,
                       *command[1:]]
        with log_path.open("w+b") as log:
            status = self._wait(self._start(command, cwd, log), what)
            log.seek(0)
            text = log.read(MAX_DIAGNOSTIC_BYTES).decode("utf-8", "replace")
        if self.isolation == ISOLATED and status == _sandbox.EXIT_UNAVAILABLE \
                and text.startswith(JAIL_REFUSAL):
            raise SandboxUnavailableError("%s: the compiler's isolation: %s; %s" % (
                what, plain(text.splitlines()[0]), _sandbox.REMEDY))
        # the submission's sources choose what the compiler quotes: no controls
        return status, "\n".join(plain(line) for line in text.split("\n"))

    def _start(self, command: list[str], cwd: Path, log: BinaryIO) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(  # an argv, no shell
                command, cwd=cwd, env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=log, start_new_session=True, preexec_fn=_limit_compiler)
        except OSError as exc:
            raise BuildError("cannot run the C compiler %r: %s (set CC to the compiler "
                             "to use)" % (" ".join(self.command), exc.strerror or exc)
                             ) from exc

    def _wait(self, process: subprocess.Popen[bytes], what: str) -> int:
        try:
            return process.wait(timeout=max(0.01, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise BuildError("%s: the compiler did not finish within the build's time "
                             "limit of %g s (a file it reads may never end, or raise "
                             "--timeout)" % (what, self.timeout)) from None
        except BaseException:  # Ctrl-C: leave no compiler behind
            _kill_group(process)
            raise

    def _jail(self) -> tuple[list[str], str]:
        """The jail's options (``--read`` each folder, ``--write`` the work folder) and
        the compiler's absolute path (the jail looks nothing up on the host), worked out
        once per build."""
        if self._jailed is None:
            executable = shutil.which(self.command[0], path=self.env.get("PATH"))
            if executable is None:
                raise BuildError("cannot run the C compiler %r: %s is not on PATH (set CC "
                                 "to the compiler to use)"
                                 % (" ".join(self.command), self.command[0]))
            executable = os.path.abspath(executable)
            folders = [*compiler_folders(Path(executable)), *self.reads]
            if os.path.isdir(ALTERNATIVES):  # a wrapper script's own `cc` goes through it
                folders.append(Path(ALTERNATIVES))
            reads = dict.fromkeys(str(f.resolve()) for f in folders)  # in order, once
            options = [part for folder in reads for part in ("--read", folder)]
            self._jailed = ([*options, "--write", str(self.work_dir.resolve())], executable)
        return self._jailed

    def version(self) -> str:
        """The compiler's version line."""
        status, text = self.run(["--version"], self.work_dir, "asking the compiler's version")
        lines = text.splitlines()
        return lines[0] if status == 0 and lines else " ".join(self.command)


# Options whose value is a folder or file the compiler reads, joined (-I/x) or apart (-I /x).
_PATH_OPTIONS = ("-I", "-L", "-B", "-isystem", "-idirafter", "-iquote", "-include",
                 "-imacros", "--sysroot", "-isysroot")


def flag_folders(args: Sequence[str]) -> list[str]:
    """The absolute, existing folders that the evaluator's flags name (``--extra-cflags
    -I/opt/x/include``, ``--libs "-L/opt/x/lib -lx"``; a file's folder for ``-include``):
    the compiler's view shows them read-only. Relative ones are the submission's own."""
    found: list[str] = []
    for index, arg in enumerate(args):
        for option in _PATH_OPTIONS:
            if arg == option and index + 1 < len(args):
                value = args[index + 1]
            elif arg.startswith(option) and arg != option:
                value = arg[len(option):].removeprefix("=")
            else:
                continue
            if os.path.isabs(value) and os.path.exists(value) and value != "/":
                folder = value if os.path.isdir(value) else os.path.dirname(value)
                found.append(os.path.realpath(folder))
            break
    return [f for f in dict.fromkeys(found) if f != "/"]


def compiler_folders(executable: Path) -> list[Path]:
    """The folders outside the jail's system folders (/usr, /bin, /lib...) that running
    ``executable`` needs: the folder of each symlink on the way to it (Debian's
    ``cc -> /etc/alternatives/cc -> gcc``), and the installation prefix of the real file
    (the parent of its ``bin/``: GCC finds ``cc1``, ``as`` and its headers from there).

    Raises:
        BuildError: the compiler's prefix would be a home folder (``~/bin/cc``), a
            folder above one, or ``/``: the isolation hides the homes.
    """
    hops = [Path(os.path.abspath(executable))]
    while hops[-1].is_symlink() and len(hops) < 40:
        hops.append(Path(os.path.normpath(hops[-1].parent / os.readlink(hops[-1]))))
    folders = [hop.parent for hop in hops[:-1]]
    real = hops[-1].parent
    folders.append(real.parent if real.name == "bin" else real)
    needed = [f for f in folders if not any(f == Path(s) or Path(s) in f.parents
                                            for s in SYSTEM_FOLDERS)]
    for folder in needed:
        _check_compiler_folder(executable, folder)
    return needed


def _check_compiler_folder(executable: Path, folder: Path) -> None:
    homes = [Path("/home"), Path("/root")] + (
        [Path(os.environ["HOME"])] if os.path.isabs(os.environ.get("HOME", "")) else [])
    if folder == Path("/") or any(folder == h or folder in h.parents for h in homes):
        raise BuildError("the C compiler %s needs %s, which the compiler's isolation does "
                         "not show (it hides the home folders and binds no whole file "
                         "system): install the compiler in a folder of its own (/opt/NAME, "
                         "~/NAME/bin/cc) or under /usr, or build without the isolation: "
                         "--no-sandbox or %s=1" % (executable, folder,
                                                   _sandbox.ENVIRONMENT_VARIABLE))


def _limit_compiler() -> None:
    """Runs in the compiler's process before exec: cap memory, file size, core dumps."""
    for limit, value in ((resource.RLIMIT_AS, COMPILER_MEMORY_BYTES),
                         (resource.RLIMIT_FSIZE, COMPILER_FILE_BYTES),
                         (resource.RLIMIT_CORE, 0)):
        hard = resource.getrlimit(limit)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (value, value))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # the compiler and what it started
    process.wait()


# ------------------------------------------------------------------ what it says

def object_symbols(path: Path) -> tuple[frozenset[str], frozenset[str]] | None:
    """(defined, undefined) global symbols of an ELF object; None when it holds no
    machine code to read (a GCC slim LTO object, LLVM bitcode)."""
    from elftools.common.exceptions import ELFError  # here: the command line's start
    from elftools.elf.elffile import ELFFile  # reads this module's deadline alone
    from elftools.elf.sections import SymbolTableSection

    defined: set[str] = set()
    undefined: set[str] = set()
    try:
        with path.open("rb") as stream:
            table = ELFFile(stream).get_section_by_name(".symtab")
            if not isinstance(table, SymbolTableSection):
                return None
            for symbol in table.iter_symbols():
                if symbol.name and symbol["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK"):
                    (undefined if symbol["st_shndx"] == "SHN_UNDEF" else defined).add(
                        symbol.name)
    except (ELFError, ValueError):
        return None
    if "__gnu_lto_slim" in defined:
        return None
    return frozenset(defined), frozenset(undefined)


def exports_crypt_hash(library: Path) -> bool:
    """True when the library's dynamic symbol table defines ``CryptHash``."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    try:
        with library.open("rb") as stream:
            symbols = ELFFile(stream).get_section_by_name(".dynsym")
            return isinstance(symbols, SymbolTableSection) and any(
                s.name == "CryptHash" and s["st_shndx"] != "SHN_UNDEF"
                for s in symbols.iter_symbols())
    except ELFError:
        return False


def shorten(stderr: str) -> str:
    """Keep the first error lines of a compiler's output, which say what is wrong."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    # a full disk says so before the linker's "ld returned 1 exit status"
    errors = [line for line in lines if "No space left on device" in line] or [
        line for line in lines if "error" in line]
    kept = (errors or lines)[:MAX_ERROR_LINES]
    more = len(lines) - len(kept)
    return "\n".join(kept) + ("\n... (%d more lines)" % more if more > 0 else "")


def shorten_link(stderr: str) -> str:
    """The first lines of a failed link as the linker wrote them (``multiple definition
    of`` ... ``first defined here`` say why; the final ``collect2: error: ld returned 1``
    says only that it failed), that summary line kept last."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    summary = [line for line in lines if line.startswith("collect2:")]
    body = [line for line in lines if not line.startswith("collect2:")]
    kept = body[:MAX_ERROR_LINES]
    more = len(body) - len(kept)
    return "\n".join(kept + (["... (%d more lines)" % more] if more > 0 else []) + summary)


_MULTIPLE = re.compile(r"multiple definition of [`'](?P<symbol>[^'`]+)'")


def multiply_defined(stderr: str) -> list[str]:
    """The symbols a failed link says are defined more than once (GNU ld, gold, lld's
    ``duplicate symbol``), in order."""
    found = [m["symbol"] for m in _MULTIPLE.finditer(stderr)]
    found += re.findall(r"duplicate symbol: (\S+)", stderr)
    return list(dict.fromkeys(found))


# GCC: the intrinsic's header and name, then the submission's line in a note.
_GCC_INLINE = re.compile(r"^(?P<header>.+?):\d+:\d+: error: inlining failed in call to "
                         r"'?always_inline'? '(?P<function>\w+)'.*target specific option "
                         r"mismatch")
_GCC_CALLED = re.compile(r"^(?P<where>.+?:\d+):\d+: note: called from here")
_GCC_ISA = re.compile(r"^(?P<where>.+?:\d+):\d+: error: '(?P<function>\w+)' needs isa "
                      r"option (?P<flag>-m[\w.-]+)")
_CLANG_FEATURE = re.compile(r"^(?P<where>.+?:\d+):\d+: error: always_inline function "
                            r"'(?P<function>\w+)' requires target feature '(?P<feature>[\w.-]+)'")
# Intrinsics whose header serves several flags, then the headers not named after theirs.
_FUNCTION_FLAGS = (("_mm_aes", "-maes"), ("_mm_clmulepi64", "-mpclmul"),
                   ("_mm_crc32", "-msse4.2"), ("_mm_sha", "-msha"),
                   ("_mm256_aes", "-mvaes"), ("_mm512_aes", "-mvaes"),
                   ("_mm256_clmulepi64", "-mvpclmulqdq"), ("_mm512_clmulepi64", "-mvpclmulqdq"))
_HEADER_FLAGS = {"mmintrin.h": "-mmmx", "xmmintrin.h": "-msse", "emmintrin.h": "-msse2",
                 "pmmintrin.h": "-msse3", "tmmintrin.h": "-mssse3", "smmintrin.h": "-msse4.1",
                 "nmmintrin.h": "-msse4.2", "ammintrin.h": "-msse4a", "wmmintrin.h": "-maes"}
_UMBRELLA_HEADERS = frozenset({"immintrin.h", "x86intrin.h", "x86gprintrin.h", "ia32intrin.h"})


def _flag_for(function: str, header: str) -> str | None:
    """The -m flag an intrinsic needs, from its name or the GCC header declaring it
    (``avx2intrin.h`` -> ``-mavx2``)."""
    for prefix, flag in _FUNCTION_FLAGS:
        if function.startswith(prefix):
            return flag
    base = os.path.basename(header)
    if base in _HEADER_FLAGS:
        return _HEADER_FLAGS[base]
    named = re.fullmatch(r"(\w+?)intrin\.h", base)
    return "-m" + named.group(1) if named and base not in _UMBRELLA_HEADERS else None


def missing_target_flags(stderr: str) -> dict[str, list[tuple[str, str]]]:
    """The -m flags a compile lacked for the intrinsics it calls (GCC's "target specific
    option mismatch", its "needs isa option", clang's "requires target feature"):
    flag -> [(intrinsic, "file:line"), ...] in the order met."""
    missing: dict[str, list[tuple[str, str]]] = {}
    pending: tuple[str, str | None] | None = None  # (function, flag) awaiting its note
    for line in stderr.splitlines():
        if (match := _GCC_INLINE.match(line)) is not None:
            pending = (match["function"], _flag_for(match["function"], match["header"]))
        elif pending is not None and (match := _GCC_CALLED.match(line)) is not None:
            function, flag = pending
            if flag is not None:
                missing.setdefault(flag, []).append((function, match["where"]))
            pending = None
        elif (match := _GCC_ISA.match(line)) is not None:
            missing.setdefault(match["flag"], []).append((match["function"], match["where"]))
        elif (match := _CLANG_FEATURE.match(line)) is not None:
            missing.setdefault("-m" + match["feature"], []).append(
                (match["function"], match["where"]))
    return missing


def other_errors(stderr: str) -> list[str]:
    """The error lines of a compile that are not about a missing target flag."""
    return [line for line in stderr.splitlines() if "error" in line
            and not any(p.match(line) for p in (_GCC_INLINE, _GCC_ISA, _CLANG_FEATURE))]


_UNDEFINED = re.compile(r"undefined reference to [`'](?P<ld>[^'`]+)'|undefined symbol: "
                        r"(?P<lld>\S+)")


def undefined_symbols(stderr: str) -> list[str]:
    """The symbols a failed link names as undefined (GNU ld, gold, lld), in order."""
    return list(dict.fromkeys(m["ld"] or m["lld"] for m in _UNDEFINED.finditer(stderr)))


_CONDITIONAL = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
_NOT_DEFINED = re.compile(r"^\s*#\s*(?:ifndef\s+(\w+)|if\s+!\s*defined\s*\(?\s*(\w+)\s*\)?\s*$)")
_INCLUDE_C = re.compile(r'^\s*#\s*include\s*"([^"\n]+\.c)"', re.M)


def _source_text(source: Path) -> str:
    """A source's text with its comments blanked out (line numbers kept)."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group().count("\n"),
                  read_input(source).decode("utf-8", "replace"), flags=re.S)


def included_sources(source: Path) -> list[str]:
    """The ``.c`` files ``source`` ``#include``s (as written), in order: their functions
    are compiled into its object too."""
    return list(dict.fromkeys(_INCLUDE_C.findall(_source_text(source))))


@dataclass(frozen=True)
class MainPlace:
    """Where a program's ``main()`` sits: its line, and the innermost conditional
    around it (None when unguarded) with the macro whose definition turns it off."""

    line: int
    guard_line: int | None
    guard: str | None
    macro: str | None


def main_place(source: Path) -> MainPlace | None:
    """Where ``main()`` is defined in ``source`` as its text reads (None if not found)."""
    open_conditionals: list[tuple[int, str]] = []
    for number, line in enumerate(_source_text(source).splitlines(), start=1):
        directive = _CONDITIONAL.match(line)
        if directive is not None:
            kind = directive.group(1)
            if kind in ("if", "ifdef", "ifndef"):
                open_conditionals.append((number, line.strip()))
            elif kind == "endif" and open_conditionals:
                open_conditionals.pop()
            elif open_conditionals:  # elif, else: the guard no longer reads as written
                open_conditionals[-1] = (number, line.strip())
        elif re.search(r"\bmain\s*\(", line):
            if not open_conditionals:
                return MainPlace(number, None, None, None)
            where, guard = open_conditionals[-1]
            macro = _NOT_DEFINED.match(guard)
            return MainPlace(number, where, guard,
                             (macro.group(1) or macro.group(2)) if macro else None)
    return None


def main_hint(source: Path) -> str:
    """Where a program's main() sits and, when a macro guards it, the --define that
    leaves it out (a hint only: the compiler's object decided that it is a program).

    A program that ``#include``s another ``.c`` file of its folder defines that file's
    functions too: renaming its ``main`` would define them twice, so the hint is then to
    leave it out (the build does) and keep the included file."""
    place = main_place(source)
    if place is None:
        return "%s defines main() (its object does)" % source.name
    included = [name for name in included_sources(source)
                if (source.parent / name).is_file()]
    if place.guard is None:
        if included:
            return ("%s:%d: main() is not guarded by a macro, and %s #includes %s, so its "
                    "object defines the functions of %s too: it is a program, left out of "
                    "the library (do not rename its main with --define main=..., which "
                    "would define them twice); the library takes them from %s itself"
                    % (source.name, place.line, source.name, ", ".join(included),
                       " and ".join(included), " and ".join(included)))
        return ("%s:%d: main() is not guarded by a macro; to keep the file's other "
                "functions, build with --define main=%s_main (it renames main, so "
                "the object defines none; for a folder with one program)"
                % (source.name, place.line, re.sub(r"\W", "_", source.stem)))
    remedy = ("build with --define %s to leave main out and keep the file" % place.macro
              if place.macro else "that condition holds with these flags: change the "
              "defines so that it does not")
    return "%s:%d: main() is inside `%s` (line %d): %s" % (
        source.name, place.line, place.guard, place.guard_line or place.line, remedy)
