"""The official KAT files: their names, where a submission keeps them, and reading
them and their manifests (records, canonical digest, first difference).

The file format is ``spec/kat-format.md`` §3; the manifest digest is §10.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import BinaryIO

from ngcc.base.errors import KatError
from ngcc.base.untrusted import open_regular

FILES = ("2_12", "2_23", "2_33", "loop")
"""The four KAT files, in the official generator's order."""

DEFAULT_FILES = ("2_12", "2_23")
"""The files checked by default: the quick ones (seconds, not minutes)."""

# kind -> the tag in the file name and the DRNG seed ("KAT_" + tag, 8 times)
TAGS = {"2_12": "2_12", "2_23": "2_23", "2_33": "2_33", "loop": "Loop"}

MANIFEST_MODES = ("strict", "nolen")
"""How a manifest line hashes its file: all lines, or all but the ``*_Len`` lines."""

MAX_KAT_BYTES = 256 * 2**20
"""The largest KAT file ngcc reads, 256 MiB (the largest official KAT file is about
200 MB): a larger file, generated or given, is refused by its size before a byte of it
is read. Files are read a line at a time, so the memory a check takes does not grow
with the file."""

MAX_LINE_BYTES = 16 * 2**20
"""The longest line of a KAT file ngcc reads, 16 MiB (a ``Msg`` of 2^26 bits in hex;
the official files' longest is 1,024 characters)."""

KatSource = bytes | Path
"""A KAT file's text in memory, or the file it is in (read a line at a time)."""


@dataclass(frozen=True)
class KatRecord:
    """One record of a KAT file (the ``key = value`` lines up to the blank line).

    ``index`` counts records from 0; ``line`` is the 1-based line number of the
    record's first line in its file.
    """

    index: int
    line: int
    fields: dict[str, str]

    @property
    def msg_len_bits(self) -> int:
        """The ``Msg_Len`` value: message length in bits."""
        return int(self.fields["Msg_Len"])

    @property
    def message(self) -> bytes:
        """The ``Msg`` bytes (full-message records only)."""
        return bytes.fromhex(self.fields["Msg"])

    @property
    def digest(self) -> bytes:
        """The ``Dst`` bytes."""
        return bytes.fromhex(self.fields["Dst"])


@dataclass(frozen=True)
class ManifestEntry:
    """One manifest line ``<sha256> <mode> <instance>/<file>``."""

    sha256: str
    mode: str
    path: str


def parse_kat_text(text: str) -> list[KatRecord]:
    """Split a KAT file's text into records; raises ValueError on a malformed line."""
    return list(_records(text.split("\n")))


def _records(lines: Iterable[str]) -> Iterator[KatRecord]:
    """The records of a KAT file's lines (numbered from 1), one at a time; a ValueError
    names a line that is not ``key = value``."""
    fields: dict[str, str] = {}
    first_line = index = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.replace("\r", "").strip()
        if not line:
            if fields:
                yield KatRecord(index, first_line, fields)
                fields, index = {}, index + 1
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError("line %d is not `key = value`: %r" % (number, raw[:80]))
        if not fields:
            first_line = number
        fields[key.strip()] = value.strip()
    if fields:
        yield KatRecord(index, first_line, fields)


def parse_kat_file(path: Path) -> list[KatRecord]:
    """Read and parse one KAT file (at most :data:`MAX_KAT_BYTES`)."""
    with _lines(Path(path)) as lines:
        return list(_records(line.decode("ascii") for line in lines))


def open_kat(path: Path) -> BinaryIO:
    """A KAT file opened for reading: a regular file (never a FIFO or a device) of at
    most :data:`MAX_KAT_BYTES`, its size taken from the opened file.

    Raises:
        KatError: the file is larger than the cap (nothing of it read).
        OSError: it cannot be opened, or is not a regular file (the message names it).
    """
    handle = open_regular(path)
    size = os.fstat(handle.fileno()).st_size
    if size > MAX_KAT_BYTES:
        handle.close()
        raise KatError("the KAT file %s is %d bytes, more than ngcc reads of a KAT file "
                       "(%d bytes, 256 MiB; the largest official one is about 200 MB): "
                       "not read" % (path, size, MAX_KAT_BYTES))
    return handle


@contextmanager
def _lines(source: KatSource) -> Iterator[Iterator[bytes]]:
    """The lines of a KAT file (without their LF): of bytes in memory, or of a file
    read a line at a time (:func:`open_kat`; a line over :data:`MAX_LINE_BYTES` is a
    KatError naming the file and the line)."""
    if isinstance(source, bytes):
        yield iter(source.split(b"\n"))
        return
    with open_kat(source) as handle:
        yield _read_lines(handle, source)


def _read_lines(handle: BinaryIO, path: Path) -> Iterator[bytes]:
    number = 0
    while line := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            raise KatError("the KAT file %s: line %d is longer than %d bytes (16 MiB): "
                           "not read further" % (path, number, MAX_LINE_BYTES))
        yield line.removesuffix(b"\n")


def canonical_text(data: bytes, mode: str = "strict") -> bytes:
    """The manifests' canonical form: CR removed, trailing blanks stripped, empty lines
    dropped, every remaining line ended by LF (kat-format.md §10). Mode ``nolen`` also
    drops the lines whose key ends in ``_Len``."""
    with _lines(data) as lines:
        return b"".join(_canonical_lines(lines, mode))


def _canonical_lines(lines: Iterable[bytes], mode: str) -> Iterator[bytes]:
    """The canonical form's lines (each ended by LF), one at a time."""
    if mode not in MANIFEST_MODES:
        raise ValueError("unknown manifest mode %r: expected one of %s"
                         % (mode, ", ".join(MANIFEST_MODES)))
    for raw in lines:
        line = raw.replace(b"\r", b"").rstrip(b" \t")
        if line and not (mode == "nolen" and _is_len_line(line)):
            yield line + b"\n"


def _is_len_line(line: bytes) -> bool:
    key, sep, _ = line.partition(b"=")
    return bool(sep) and key.strip().endswith(b"_Len")


def canonical_sha256(source: KatSource, mode: str = "strict") -> str:
    """SHA-256 (hex) of the canonical text of a KAT file's bytes, or of the file
    (read a line at a time, at most :data:`MAX_KAT_BYTES`)."""
    digest = hashlib.sha256()
    with _lines(source) as lines:
        for line in _canonical_lines(lines, mode):
            digest.update(line)
    return digest.hexdigest()


def same_bytes(first: Path, second: Path) -> bool:
    """Whether two KAT files hold the same bytes (read in blocks; each at most
    :data:`MAX_KAT_BYTES`)."""
    with open_kat(first) as one, open_kat(second) as other:
        if os.fstat(one.fileno()).st_size != os.fstat(other.fileno()).st_size:
            return False
        while block := one.read(2**20):
            if block != other.read(2**20):
                return False
        return True


def read_manifest(path: Path) -> dict[str, ManifestEntry]:
    """The lines of a ``kat.sha256`` manifest, keyed by ``<instance>/<file name>``.

    A missing file is an empty manifest. Raises ValueError naming the line when a
    line is not ``<64 hex digits> <mode> <path>``.
    """
    path = Path(path)
    if not path.is_file():
        return {}
    entries: dict[str, ManifestEntry] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if (len(parts) != 3 or len(parts[0]) != 64 or parts[1] not in MANIFEST_MODES
                or not _is_hex(parts[0])):
            raise ValueError("%s line %d is not `<sha256> <strict|nolen> <instance>/<file>`: %r"
                             % (path, number, line[:120]))
        entries[parts[2]] = ManifestEntry(parts[0].lower(), parts[1], parts[2])
    return entries


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return True


def first_difference(generated: KatSource, official: KatSource) -> str | None:
    """Describe where a generated KAT file first departs from the official one.

    Names the first differing record (index, line, ``Msg_Len``, the differing keys);
    ``None`` when the canonical texts are equal. Files are read a line at a time and
    only up to the first difference (the record count of a missing record aside).

    Raises:
        KatError: a file over :data:`MAX_KAT_BYTES`, or a line over :data:`MAX_LINE_BYTES`.
        OSError: a file that cannot be read (the message names it).
    """
    line = _first_different_line(generated, official)
    if line is None:
        return None
    try:
        return _first_different_record(generated, official) or line
    except (UnicodeDecodeError, ValueError):
        return line


def _first_different_record(generated: KatSource, official: KatSource) -> str | None:
    with _lines(generated) as mine, _lines(official) as other:
        ours = _records(line.decode("ascii") for line in mine)
        theirs = _records(line.decode("ascii") for line in other)
        for count, (own, their) in enumerate(zip_longest(ours, theirs)):
            if own is None or their is None:
                extra = their if own is None else own
                rest = 1 + sum(1 for _ in (theirs if own is None else ours))
                generated_count, official_count = (
                    (count, count + rest) if own is None else (count + rest, count))
                return ("record %d (line %d, Msg_Len = %s) is missing from the %s file "
                        "(%d records generated, %d official)"
                        % (extra.index, extra.line, extra.fields.get("Msg_Len", "?"),
                           "generated" if own is None else "official",
                           generated_count, official_count))
            if own.fields != their.fields:
                keys = list(dict.fromkeys(k for k in (*their.fields, *own.fields)
                                          if own.fields.get(k) != their.fields.get(k)))
                return "record %d (line %d, Msg_Len = %s): %s %s" % (
                    own.index, own.line, their.fields.get("Msg_Len", "?"), ", ".join(keys),
                    "differs" if len(keys) == 1 else "differ")
    return None


def _first_different_line(generated: KatSource, official: KatSource) -> str | None:
    """The first canonical line where the two files differ; None when they are equal."""
    with _lines(generated) as mine, _lines(official) as other:
        pairs = zip_longest(_canonical_lines(mine, "strict"), _canonical_lines(other, "strict"))
        for number, (own, their) in enumerate(pairs, start=1):
            if own is None or their is None:
                return "the %s file ends before canonical line %d (%r)" % (
                    "generated" if own is None else "official", number,
                    (their or own or b"")[:60])
            if own != their:
                return "canonical line %d differs: %r vs official %r" % (
                    number, own.rstrip(b"\n")[:60], their.rstrip(b"\n")[:60])
    return None


# ------------------------------------------------------------------ file names

def file_name(kind: str, instance_name: str) -> str:
    """The official KAT file name: ``file_name("loop", "Wish512") == "KAT_Loop_Wish512.txt"``."""
    return "KAT_%s_%s.txt" % (TAGS[_normalise_kind(kind)], instance_name)


def _normalise_kind(kind: str) -> str:
    """``"KAT_Loop"``, ``"loop"`` … as the kind's name in :data:`FILES`."""
    folded = kind.strip().lower()
    folded = folded[4:] if folded.startswith("kat_") else folded
    if folded not in TAGS:
        raise ValueError("unknown KAT file %r: expected one of %s" % (kind, ", ".join(FILES)))
    return folded


def normalise_files(files: str | Iterable[str]) -> list[str]:
    """The kinds named (a list, or a comma-separated string), in :data:`FILES` order."""
    wanted = {_normalise_kind(k) for k in (files.split(",") if isinstance(files, str) else files)
              if k.strip()}
    if not wanted:
        raise ValueError("no KAT file asked for: give some of %s" % ", ".join(FILES))
    return [kind for kind in FILES if kind in wanted]


def manifest_entry(manifest: dict[str, ManifestEntry], instance_name: str,
                   name: str) -> ManifestEntry | None:
    """The manifest line of the KAT file ``name``: the line ``<instance>/<name>``, else
    the one line whose file is ``name`` whatever its folder (the harness names folders
    by its own labels: ``Laurus-512/KAT_2_12_laurus_512.txt``); None when no line or
    several name it."""
    exact = manifest.get("%s/%s" % (instance_name, name))
    if exact is not None:
        return exact
    found = [entry for path, entry in manifest.items() if path.rpartition("/")[2] == name]
    return found[0] if len(found) == 1 else None


SUBMISSION_LEVELS = 4
"""How many folders above an ``ngcc build`` source folder the submission's own KAT files
are looked for (the official archives keep them in ``Test_Vectors/`` two or three
levels above the instance folder)."""

_VECTOR_FOLDERS = frozenset({"test_vectors", "testvectors", "kat", "kats", "kat_files"})


def submission_kat_folders(source_dir: Path, instance_name: str | Iterable[str]) -> list[Path]:
    """The folders where a submission's own KAT files may sit, nearest first.

    The source folder and each of its first :data:`SUBMISSION_LEVELS` ancestors,
    each followed by its test-vector subfolders (``Test_Vectors``, ``KAT``, …, any
    case, spaces as ``_``) and their subfolders named after the instance
    (``instance_name``: one name or several) or after the source folder itself
    (Laurus ships ``laurus_512`` in a folder ``Laurus-512``). Only folders that
    exist are listed."""
    names = [instance_name] if isinstance(instance_name, str) else list(instance_name)
    names = list(dict.fromkeys([*names, source_dir.name]))
    folders: list[Path] = []
    for base in [source_dir, *source_dir.parents][:SUBMISSION_LEVELS + 1]:
        folders.append(base)
        with suppress(OSError):  # unreadable: nothing to find there
            for sub in sorted(base.iterdir()):
                if (sub.name.casefold().replace(" ", "_") in _VECTOR_FOLDERS
                        and sub.is_dir()):
                    folders.append(sub)
                    folders += [sub / name for name in names if (sub / name).is_dir()]
    return list(dict.fromkeys(folders))


