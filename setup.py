"""The C build of ngcc: the ``ngcc._core`` extension, one library per hash instance,
and ``ngcc-driver``, the small executable that runs every foreign library, and
``ngcc-jail``, which runs the compiler of ``ngcc build`` in the kernel's isolation.

Every hash instance is a shared library exporting only the ICCS ``CryptHash``
entry point (see ``algorithms/include/crypt_hash.h``). The instances come from
``algorithms/<family>/instances.json``; each is compiled with the NGCC guide's
reference flags and installed in ``ngcc/_lib/`` together with ``registry.json``,
which the Python registry (``ngcc/library/registry.py``) reads at run time, and with
``ngcc-driver`` (csrc/driver/, ngcc/driver/child.py).

A family builds each of its variants (``ref`` first: the bare instance name means
it) for every instance. A variant says in ``instances.json``:
  sources        the C files, relative to the family folder
  cflags         flags beyond the reference set (e.g. ["-maes", "-mssse3"])
  description    what the implementation is, in a few words
  cpu_features   Linux /proc/cpuinfo flag names it needs at run time (["avx2"]);
                 the registry refuses it on a CPU without them
  constant_time  true when no branch or address depends on the message (checked
                 under valgrind by tests/test_constant_time.py)
A variant whose cflags this compiler rejects is skipped, and the build says why.

Environment switches:
  NGCC_SANITIZE=1  compile everything with ASan + UBSan (run Python with
                   LD_PRELOAD=$(gcc -print-file-name=libasan.so)); see README.
  NGCC_WERROR=1    turn C warnings into errors (CI uses it).
"""

import json
import os
import shlex
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
ALGORITHMS = ROOT / "algorithms"

# The NGCC guide's reference flag set, plus what a shared library needs:
# -fPIC, -shared, and hidden visibility so CryptHash is the only exported symbol.
REFERENCE_CFLAGS = ["-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-O2"]
LIBRARY_CFLAGS = ["-fPIC", "-fvisibility=hidden"]
SANITIZE = os.environ.get("NGCC_SANITIZE") == "1"
SANITIZER_FLAGS = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                   "-fno-sanitize-recover=undefined", "-g"]
WERROR = ["-Werror"] if os.environ.get("NGCC_WERROR") == "1" else []


def _instance_families():
    """(family folder, parsed instances.json) of every hash family: the candidates in
    candidate order first, then the baselines (the order `ngcc list` shows)."""
    families = [(spec_file.parent, json.loads(spec_file.read_text()))
                for spec_file in ALGORITHMS.glob("*/instances.json")]
    return sorted(families, key=lambda f: (f[1]["candidate"] == "baseline",
                                           f[1]["candidate"], f[0].name))


def _compiler():
    return shlex.split(os.environ.get("CC", "cc"))


def _compiler_version(cc):
    out = subprocess.run(cc + ["--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else " ".join(cc)


def _variant_cflags(variant_spec):
    """Every flag one variant's sources are compiled with."""
    return (REFERENCE_CFLAGS + LIBRARY_CFLAGS + WERROR + variant_spec.get("cflags", [])
            + (SANITIZER_FLAGS if SANITIZE else []))


def _unsupported_flags(cc, cflags, scratch):
    """None when the compiler accepts ``cflags``, else why not (its first error line).

    A variant's flags (``-maes``, ``-mavx2`` ...) are tried on a tiny file first, so
    that a compiler without them skips the variant instead of failing the build."""
    probe = scratch / "probe.c"
    probe.write_text("int ngcc_probe(int x);\nint ngcc_probe(int x) { return x + 1; }\n")
    done = subprocess.run(cc + cflags + ["-c", "-o", str(scratch / "probe.o"), str(probe)],
                          capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[0] if lines else "exit status %d" % done.returncode


def _instance_library(cc, folder, family, instance, variant, out_dir):
    """The compile command of one instance x variant (``<instance>.<variant>.so``) and
    its registry entry."""
    variant_spec = family["variants"][variant]
    sources = [str((folder / s).resolve()) for s in variant_spec["sources"]]
    defines = {"DIGEST_BIT_LENGTH": str(instance["digest_bits"]),
               "ALGORITHM_INSTANCE": '"%s"' % instance["name"]}
    defines.update(instance.get("defines", {}))
    cflags = _variant_cflags(variant_spec)
    library = out_dir / ("%s.%s.so" % (instance["name"], variant))
    command = (cc + cflags + ["-I", str(ALGORITHMS / "include"), "-I", str(folder)]
               + ["-D%s=%s" % kv for kv in defines.items()]
               + ["-shared", "-o", str(library)] + sources)
    return command, {
        "name": instance["name"],
        "family": family["family"],
        "candidate": family["candidate"],
        "digest_bits": instance["digest_bits"],
        "variant": variant,
        "library": library.name,
        "cflags": cflags,
        "description": variant_spec.get("description", ""),
        "cpu_features": list(variant_spec.get("cpu_features", [])),
        "constant_time": bool(variant_spec.get("constant_time", False)),
    }


def _compile_all(commands):
    """Run the compile commands, as many at once as this machine has CPUs (the
    libraries are independent); the first that fails stops the build."""
    def compile_one(command):
        print(" ".join(shlex.quote(c) for c in command), flush=True)
        subprocess.run(command, check=True)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for done in [pool.submit(compile_one, command) for command in commands]:
            done.result()


# C that `ngcc build` links into a submission folder's library when the folder
# calls the ICCS DRNG but ships none (ngcc/library/build.py); installed as ngcc/_lib/src/.
BUILD_SUPPORT = ["sm3/sm3.h", "sm3/sm3.c", "drng/sm3_drng.h", "drng/sm3_drng.c",
                 "drng/iccs/drng.h", "drng/iccs/drng.c"]


# Our own WChain ref sources, which notebooks/compare.ipynb lays out as a submitter's
# folder: installed as ngcc/_lib/src/wchain/ and ngcc/_lib/src/include/, so the notebook
# runs from a `pip install .` as from the checkout.
EXAMPLE_SUBMISSION = ["wchain/wchain.h", "wchain/wchain_tables.h", "wchain/wchain_cf.c",
                      "wchain/wchain_mode.c", "wchain/crypthash.c", "include/crypt_hash.h"]


def _copy_build_support(src_dir):
    for name in BUILD_SUPPORT + EXAMPLE_SUBMISSION:
        (src_dir / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ALGORITHMS / name, src_dir / name)


# csrc/ holds the programs, one folder each, beside what they share: common/ (loader,
# timer, timing loop, KAT generator, CPU features) and isolate/ (the kernel isolation
# of ngcc-driver --isolate and ngcc-jail). core/ is the ngcc._core extension's Python
# binding, driver/ ngcc-driver (the executable every foreign library runs in), jail/
# ngcc-jail. Each program compiles, and sees the headers of, its folders below alone;
# the extension and the driver also take the KAT generator's DRNG.
PROGRAM_FOLDERS = {"core": ("common", "core"), "driver": ("common", "isolate", "driver"),
                   "jail": ("isolate", "jail")}
SHARED_C = ["algorithms/drng/sm3_drng.c", "algorithms/sm3/sm3.c"]
ALGORITHM_INCLUDES = ["algorithms/include", "algorithms/sm3", "algorithms/drng"]


def _program_sources(program):
    """The C files of one program (``core``, ``driver`` or ``jail``): its folders', and
    the DRNG's for the two that generate KAT files."""
    own = [path.relative_to(ROOT).as_posix() for part in PROGRAM_FOLDERS[program]
           for path in sorted((ROOT / "csrc" / part).glob("*.c"))]
    return own + ([] if program == "jail" else SHARED_C)


def _program_includes(program):
    return (["csrc/%s" % part for part in PROGRAM_FOLDERS[program]]
            + ([] if program == "jail" else ALGORITHM_INCLUDES))


C_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-O2"] + WERROR + (SANITIZER_FLAGS if SANITIZE else [])


def _build_program(cc, program, binary, out_dir, libraries=()):
    """Compile the program of csrc/ into ``out_dir/binary``."""
    command = (cc + C_FLAGS + ["-D_GNU_SOURCE"]
               + ["-I%s" % d for d in _program_includes(program)]
               + ["-o", str(out_dir / binary)]
               + [str(ROOT / s) for s in _program_sources(program)] + list(libraries))
    print(" ".join(shlex.quote(c) for c in command))
    subprocess.run(command, check=True, cwd=ROOT)


def _build_driver(cc, out_dir):
    """Compile ``ngcc-driver`` (csrc/common/, csrc/isolate/, csrc/driver/) into out_dir."""
    _build_program(cc, "driver", "ngcc-driver", out_dir, ["-ldl"])


def _build_jail(cc, out_dir):
    """Compile ``ngcc-jail`` (csrc/isolate/, csrc/jail/): the compiler of ``ngcc build``
    runs in the driver's kernel isolation."""
    _build_program(cc, "jail", "ngcc-jail", out_dir)


def build_instances(cc, out_dir, scratch):
    """Build every instance library whose variant's flags ``cc`` accepts (every ``ref``
    on any machine), ``ngcc-driver`` and ``ngcc-jail``, into out_dir; write its registry.json and
    return the registry. Used by the build below and by the AArch64 cross-build of CI
    (.ci/cross_build.py), which passes a cross compiler."""
    libraries, skipped = [], []
    scratch.mkdir(parents=True, exist_ok=True)
    for folder, family in _instance_families():
        variants = []
        for variant, variant_spec in family["variants"].items():
            reason = _unsupported_flags(cc, _variant_cflags(variant_spec), scratch)
            if reason is None:
                variants.append(variant)
                continue
            print("ngcc: skipping the %s variant %r: the compiler rejects its flags "
                  "%s (%s)" % (family["family"], variant,
                               " ".join(variant_spec.get("cflags", [])), reason))
            skipped.append({"family": family["family"], "variant": variant,
                            "reason": reason})
        for instance in family["instances"]:  # each instance's variants side by side
            for variant in variants:
                libraries.append(_instance_library(cc, folder, family, instance,
                                                   variant, out_dir))
    _compile_all([command for command, _ in libraries])
    entries = [entry for _, entry in libraries]
    _build_driver(cc, out_dir)
    _build_jail(cc, out_dir)
    registry = {"compiler": _compiler_version(cc), "sanitized": SANITIZE,
                "instances": entries, "skipped_variants": skipped}
    (out_dir / "registry.json").write_text(json.dumps(registry, indent=1) + "\n")
    return registry


class BuildWithInstances(build_ext):
    """build_ext that also builds the instance libraries, ngcc-driver and ngcc-jail next
    to the extension."""

    def run(self):
        super().run()
        package_dir = ROOT / "ngcc" if self.inplace else Path(self.build_lib) / "ngcc"
        out_dir = package_dir / "_lib"
        out_dir.mkdir(parents=True, exist_ok=True)
        build_instances(_compiler(), out_dir, Path(self.build_temp) / "variant_probe")
        _copy_build_support(out_dir / "src")
        # The official KAT manifests and the candidate registry travel with the package
        # (kat/ -> ngcc/_lib/kat/).
        (out_dir / "kat").mkdir(exist_ok=True)
        for data in [*sorted((ROOT / "kat").glob("*.sha256")), ROOT / "kat" / "candidates.tsv"]:
            shutil.copyfile(data, out_dir / "kat" / data.name)


core = Extension(
    "ngcc._core",
    # csrc/common/ and csrc/core/, plus the DRNG of the KAT generator and its SM3.
    sources=_program_sources("core"),
    include_dirs=_program_includes("core") + [numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"), ("_GNU_SOURCE", None)],
    extra_compile_args=C_FLAGS,
    extra_link_args=["-ldl"] + (SANITIZER_FLAGS if SANITIZE else []),
)

if __name__ == "__main__":  # pip and `python setup.py` run it so; CI imports build_instances
    setup(ext_modules=[core], cmdclass={"build_ext": BuildWithInstances})
