"""The instance header of a submission folder: ``ALGORITHM_INSTANCE`` and
``DIGEST_BIT_LENGTH`` as the preprocessor sees them with the build's flags, the name
checked by the name rule and the digest length a whole number of bytes."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ngcc.base.errors import BuildError
from ngcc.base.names import check_name
from ngcc.library.cc import DEFAULT_TIMEOUT, Compiler, read_input, shorten
from ngcc.library.sources import refuse_link_out

INSTANCE_HEADER = "CryptHash_AlgorithmInstance.h"
_HEADER_FILE = re.compile(r"[A-Za-z0-9_.+-]+\.h")
_STRING_LITERALS = re.compile(r'(?:\s*"[^"\\\n]*")+\s*')
_DIGEST_BITS = re.compile(r"\(?\s*(\d+)[uUlL]*\s*\)?")
MAX_DIGEST_BITS = 1 << 14

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
        folder = Path(source_dir).resolve()
        name, bits, _ = find_instance_header(folder, list(cflags),
                                             Compiler(Path(work), timeout, reads=[folder]))
    return name, bits


def find_instance_header(folder: Path, cflags: list[str],
                         compiler: Compiler) -> tuple[str, int, Path]:
    """:func:`read_instance_header` with the build's ``compiler`` (its work folder and
    deadline): the name, the digest length and the header that defines them."""
    header = folder / INSTANCE_HEADER
    if os.path.lexists(header):
        candidates = [header]
    else:
        candidates = [p for p in sorted(folder.glob("*.h")) if _HEADER_FILE.fullmatch(p.name)]
    for path in candidates:
        refuse_link_out(folder, path)  # never a file outside the folder
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
