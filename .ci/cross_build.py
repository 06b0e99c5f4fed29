"""Cross-build ngcc-driver and every instance library for another architecture.

    CC=aarch64-linux-gnu-gcc NGCC_WERROR=1 python3 .ci/cross_build.py OUT_DIR

Runs setup.py's own build of the libraries and the driver (``build_instances``: the
same source lists, flags and variant probe as ``pip install .``) with the compiler
``CC`` names, into OUT_DIR. A variant whose flags that compiler rejects (``-maes`` on
AArch64) is skipped, as in any build; every ``ref`` is built. Beside each library it
writes the ``<library>.json`` sidecar that ``ngcc build`` writes, so the package's
own commands take the libraries as library paths (``ngcc kat OUT_DIR/X.ref.so``), and
writes the candidate libraries (those an official manifest covers), one a line, to
``OUT_DIR/candidates.txt``.

The extension's own C (``ngcc._core``: setup.py's ``core`` Extension, its sources,
macros and flags) is compiled too, to objects only: with no Python for that machine
it cannot be linked or run, so it is compiled against this Python's headers (x86-64's
and AArch64's configuration headers differ in a few HAVE_ macros, not in type sizes:
both are LP64 little-endian; Debian's multiarch one is pointed at this machine's) to
prove it builds warning-free there.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import setup as build  # noqa: E402  (setup.py: its build runs only as __main__)

SIDECAR_KEYS = ("name", "family", "candidate", "digest_bits", "cflags", "description",
                "cpu_features")


def sidecar(entry: dict, compiler: str) -> dict:
    """The ``ngcc build`` sidecar of one registry entry: ``Wish512`` labels the ``ref``
    build, ``Wish512@neon`` another variant (as the built-in instances are labelled)."""
    label = entry["name"] if entry["variant"] == "ref" else "%s@%s" % (entry["name"],
                                                                       entry["variant"])
    return {**{key: entry[key] for key in SIDECAR_KEYS}, "compiler": compiler,
            "label": label}


def host_pyconfig() -> str:
    """This Python's configuration header: Debian's multiarch one for this machine where
    ``pyconfig.h`` only dispatches by architecture, else ``pyconfig.h`` itself."""
    include = Path(sysconfig.get_paths()["include"])
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    specific = include.parent / multiarch / include.name / "pyconfig.h"
    return str(specific) if multiarch and specific.is_file() else sysconfig.get_config_h_filename()


def compile_extension(cc: list[str], scratch: Path) -> int:
    """Compile the extension's C sources with ``cc`` to objects; return how many."""
    triple = subprocess.run(cc + ["-dumpmachine"], capture_output=True, text=True,
                            check=True).stdout.strip()
    shim = scratch / "python" / triple / Path(sysconfig.get_paths()["include"]).name
    shim.mkdir(parents=True)
    (shim / "pyconfig.h").symlink_to(host_pyconfig())
    core = build.core
    flags = [*core.extra_compile_args, "-fPIC", *("-D%s=%s" % (name, value or 1)
                                                  for name, value in core.define_macros)]
    includes = [str(scratch / "python"), sysconfig.get_paths()["include"],
                *(str(ROOT / d) if not Path(d).is_absolute() else d for d in core.include_dirs)]
    for source in core.sources:
        command = [*cc, *flags, *("-I" + d for d in includes), "-c", str(ROOT / source),
                   "-o", str(scratch / (Path(source).name + ".o"))]
        print(" ".join(shlex.quote(c) for c in command))
        subprocess.run(command, check=True)
    return len(core.sources)


def main(out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        registry = build.build_instances(build._compiler(), out_dir, Path(scratch) / "probe")
        compiled = compile_extension(build._compiler(), Path(scratch))
    candidates = []
    for entry in registry["instances"]:
        library = out_dir / entry["library"]
        (out_dir / (library.name + ".json")).write_text(
            json.dumps(sidecar(entry, registry["compiler"]), indent=1) + "\n")
        if entry["candidate"] != "baseline":
            candidates.append(str(library))
    (out_dir / "candidates.txt").write_text("".join(c + "\n" for c in candidates))
    print("cross-built %d libraries (%d of candidates) and ngcc-driver with %s into %s, and "
          "compiled the extension's %d C files; skipped: %s" % (
              len(registry["instances"]), len(candidates), registry["compiler"], out_dir,
              compiled, ", ".join("%s %s" % (s["family"], s["variant"])
                                  for s in registry["skipped_variants"]) or "none"))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: CC=<cross compiler> python3 .ci/cross_build.py OUT_DIR")
    sys.exit(main(Path(sys.argv[1])))
