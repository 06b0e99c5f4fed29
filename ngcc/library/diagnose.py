"""Why a submission does not build, in words a submitter can act on, with the fixes
(:class:`~ngcc.base.errors.BuildFix`) a caller may apply: a compile failure (the ``-m``
flags its intrinsics lack, once each, at the first place they are needed, else the
compiler's first errors) and a link failure (each symbol defined twice and which file
``#include``s which; each undefined symbol, who uses it and the left-out program that
defines it, with the define that turns off a guarded ``main``)."""

from __future__ import annotations

from pathlib import Path

from ngcc.base.errors import BuildFix
from ngcc.library.cc import (
    MAX_ERROR_LINES,
    included_sources,
    main_hint,
    main_place,
    missing_target_flags,
    other_errors,
    shorten,
)
from ngcc.library.sources import CompiledObject


def included_fixes(folder: Path, sources: list[str], names: list[str]
                   ) -> tuple[BuildFix, ...]:
    """Each of ``names`` that another of ``sources`` ``#include``s, as a fix leaving it
    out of the compile list: its code is compiled where it is included (with what that
    file defines first), so compiled alone it is no part of the library."""
    fixes = []
    for name in names:
        includer = next((source for source in sources if source != name
                         and name in included_sources(folder / source)), None)
        if includer is not None:
            fixes.append(BuildFix("exclude", name, "%s #includes it, so its code is "
                                  "compiled there, not alone" % includer))
    return tuple(fixes)


def compile_failure(folder: Path, cflags: list[str], extra: list[str],
                    failures: list[tuple[str, str]], sources: list[str]
                    ) -> tuple[str, tuple[BuildFix, ...]]:
    """The message for sources that do not compile: a source another one ``#include``s
    (left out: :func:`included_fixes`), else the missing -m flags once each, with the
    first place they are needed, else the compiler's first errors; and the fixes when
    they are certain (flags: when they are the only errors)."""
    text = "\n".join(errors for _, errors in failures)
    head = "%s does not compile with %s" % (folder, " ".join(cflags))
    included = included_fixes(folder, sources, [name for name, _ in failures])
    if included:
        return "%s:\n%s\n%s" % (head, shorten(text), "\n".join(
            "%s does not compile alone: %s; leave it out (--exclude %s)" % (
                fix.value, fix.reason, fix.value) for fix in included)), included
    missing = missing_target_flags(text)
    if not missing:
        hint = ("\n(a file that is no part of the library can be left out with --exclude "
                "FILE)" if len(sources) > 1 else "")
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



def duplicates_text(folder: Path, symbols: list[str], library_objects: list[CompiledObject]) -> str:
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


def _definer(symbol: str, programs: list[CompiledObject], folder: Path) -> CompiledObject | None:
    """The left-out program defining ``symbol``: rather the file that defines it than a
    program that has it only because it ``#include``s that file."""
    definers = [p for p in programs if symbol in p.defined]
    by_name = {p.source: p for p in definers}
    for program in definers:
        for name in included_sources(folder / program.source):
            if name in by_name:
                return by_name[name]
    return definers[0] if definers else None


def undefined_message(folder: Path, symbols: list[str], library_objects: list[CompiledObject],
                      programs: list[CompiledObject]) -> tuple[str, tuple[BuildFix, ...]]:
    """Name each undefined symbol, who uses it, and the left-out program defining it;
    the define that turns off a guarded main of such a program is a fix."""
    lines = ["%s: the library would leave symbols undefined (it is linked with -Wl,-z,defs "
             "so that it never fails when loaded):" % folder]
    culprits: dict[str, CompiledObject] = {}
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

