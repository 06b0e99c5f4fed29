"""Check a cross-built ngcc (``.ci/cross_build.py``) beyond its KAT run, through the
package's own code, with the driver run as ``NGCC_DRIVER`` / ``NGCC_DRIVER_PREFIX``
say (``.ci/aarch64``: under qemu-aarch64):

    CC=<cross compiler> python3 .ci/cross_check.py OUT_DIR MACHINE COUNTER_PROBE_OUTPUT

1. the driver and every library in OUT_DIR are ELF files for MACHINE (``EM_AARCH64``):
   what ran was the cross build, not the host's;
2. every instance of the host's build has its ``ref`` cross-built, and every
   cross-built library, baselines included (no manifest covers them), gives the
   digests of the host's built-in ``ref`` of that instance at 0, 3, 800 and 8000 bits
   (``ngcc.hash`` of a library path: the driver's ``hash`` mode);
3. the guard pages work there: a library cross-built to read one byte past the
   message gets CRASH (read past the message) from ``ngcc.kat.check``, one that reads
   the byte before it gets CRASH from the guard probe (read before the message);
4. a trial in the driver (``ngcc.driver.child.trial``) names the counter and unit the
   counter probe printed (``.ci/counter_probe.c``: csrc/common/timer.c there), and
   the probe's facts read as the fingerprint shows them (``ngcc.measure.host.counter_text``).

Prints what it checked; exits 1 at the first defect.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from elftools.elf.elffile import ELFFile

import ngcc
import ngcc.kat
from ngcc.driver import child as _child
from ngcc.evidence.model import Counter
from ngcc.library import registry as _registry
from ngcc.measure import host as _host
from ngcc.report import host as _host_words

LENGTHS_BITS = (0, 3, 800, 8000)
MESSAGE = bytes((i * 131 + 7) % 256 for i in range(1000))


def fail(text: str) -> None:
    sys.exit("cross check: " + text)


def check_machine(out_dir: Path, machine: str) -> list[Path]:
    files = [out_dir / "ngcc-driver", *sorted(out_dir.glob("*.so"))]
    for path in files:
        with open(path, "rb") as handle:
            found = ELFFile(handle)["e_machine"]
        if found != machine:
            fail("%s is built for %s, not %s" % (path, found, machine))
    print("ELF: ngcc-driver and %d libraries are %s" % (len(files) - 1, machine))
    return files[1:]


def check_every_ref(out_dir: Path) -> None:
    """Every instance the host built has its ``ref`` in the cross build."""
    registry = json.loads((out_dir / "registry.json").read_text())
    cross = {e["name"] for e in registry["instances"] if e["variant"] == "ref"}
    missing = sorted({inst.name for inst in ngcc.instances()} - cross)
    if missing:
        fail("no cross-built ref of %s" % ", ".join(missing))
    print("refs: all %d instances of the host build have their ref cross-built" % len(cross))


def check_digests(out_dir: Path) -> None:
    registry = json.loads((out_dir / "registry.json").read_text())
    for entry in registry["instances"]:
        native = "%s:ref" % entry["name"]  # every variant must equal ref
        for bits in LENGTHS_BITS:
            cross = ngcc.hash(out_dir / entry["library"], MESSAGE, bits)
            if cross != ngcc.hash(native, MESSAGE, bits):
                fail("%s differs from the host's %s at %d bits" % (entry["library"], native,
                                                                   bits))
    print("digests: %d libraries equal the host's ref build at %s bits" % (
        len(registry["instances"]), ", ".join(map(str, LENGTHS_BITS))))


# A CryptHash that reads one byte outside its message (READ is msg[bytes] or msg[-1]).
STRAY_READ = r"""
#include <stddef.h>
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    size_t bytes = (size_t)((bits + 7) / 8), i;
    volatile unsigned char sink = READ;
    for (i = 0; i < (size_t)d / 8; i++)
        digest[i] = (unsigned char)(sink + i);
    return 0;
}
"""


def stray_library(folder: Path, name: str, read: str) -> Path:
    """Cross-compile the stray reader ``read`` as an external library with its sidecar."""
    source, library = folder / (name + ".c"), folder / (name + ".so")
    source.write_text(STRAY_READ.replace("READ", read))
    subprocess.run([*shlex.split(os.environ.get("CC", "cc")), "-O1", "-fPIC", "-shared",
                    "-o", str(library), str(source)], check=True)
    (folder / (name + ".so.json")).write_text(json.dumps(
        {"name": name, "digest_bits": 256, "candidate": "external"}))
    return library


def check_guards(scratch: Path) -> None:
    over = stray_library(scratch, "overread", "msg[bytes]")
    under = stray_library(scratch, "underread", "*(msg - 1)")
    [past] = ngcc.kat.check(over, files="2_12", out_dir=scratch / "kat", progress=False)
    if past.verdict != "CRASH" or "read past the message" not in past.files[0].detail:
        fail("a read past the message gave %s: %s" % (past.verdict, past.files[0].detail))
    [before] = ngcc.kat.check(under, files="2_12", out_dir=scratch / "kat", progress=False)
    if before.probe is None or before.probe.verdict != "CRASH" \
            or "read before the message" not in before.probe.detail:
        fail("a read before the message gave %s: %s" % (before.verdict, before.probe))
    print("guards: %s; %s" % (past.files[0].detail, before.probe.detail))


def probe_facts(path: Path) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in path.read_text().splitlines() if line)


def check_counter(library: Path, facts: dict[str, str]) -> None:
    measured = _child.trial(_registry.instance(library), 64, 100, 10)
    if (measured.counter, measured.unit) != (facts["name"], facts["unit"]):
        fail("the trial's counter is %s (%s), the probe's %s (%s)" % (
            measured.counter, measured.unit, facts["name"], facts["unit"]))
    nominal = float(facts["nominal_hz"])
    if facts["unit"] == _host_words.GENERIC_TIMER and not nominal:
        fail("the generic timer's cntfrq_el0 reads 0")
    counter = Counter(name=facts["name"], frequency_hz=float(facts["frequency_hz"]),
                      overhead_min=int(facts["overhead_min"]),
                      overhead_median=int(facts["overhead_median"]), unit=facts["unit"],
                      nominal_hz=nominal or None, resolution=int(facts["resolution"]))
    env = replace(_host.fingerprint(), counter=counter)
    print("counter: a trial and the probe name %s (%s); the fingerprint shows: %s"
          % (measured.counter, measured.unit, _host_words.counter_text(env)))


def main(out_dir: Path, machine: str, probe_output: Path) -> int:
    libraries = check_machine(out_dir, machine)
    check_every_ref(out_dir)
    check_digests(out_dir)
    with tempfile.TemporaryDirectory() as scratch:
        check_guards(Path(scratch))
    check_counter(libraries[0], probe_facts(probe_output))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python3 .ci/cross_check.py OUT_DIR MACHINE COUNTER_PROBE_OUTPUT")
    sys.exit(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
