"""Reading official KAT files and manifests: records, canonical digest, first difference.

The file format is ``spec/kat-format.md`` §3; the manifest digest is §10.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

MANIFEST_MODES = ("strict", "nolen")
"""How a manifest line hashes its file: all lines, or all but the ``*_Len`` lines."""


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
    records: list[KatRecord] = []
    fields: dict[str, str] = {}
    first_line = 0
    for number, raw in enumerate(text.replace("\r", "").split("\n"), start=1):
        line = raw.strip()
        if not line:
            if fields:
                records.append(KatRecord(len(records), first_line, fields))
                fields = {}
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError("line %d is not `key = value`: %r" % (number, raw[:80]))
        if not fields:
            first_line = number
        fields[key.strip()] = value.strip()
    if fields:
        records.append(KatRecord(len(records), first_line, fields))
    return records


def parse_kat_file(path: Path) -> list[KatRecord]:
    """Read and parse one KAT file."""
    return parse_kat_text(Path(path).read_text(encoding="ascii"))


def canonical_text(data: bytes, mode: str = "strict") -> bytes:
    """The manifests' canonical form: CR removed, trailing blanks stripped, empty lines
    dropped, every remaining line ended by LF (kat-format.md §10). Mode ``nolen`` also
    drops the lines whose key ends in ``_Len``."""
    if mode not in MANIFEST_MODES:
        raise ValueError("unknown manifest mode %r: expected one of %s"
                         % (mode, ", ".join(MANIFEST_MODES)))
    lines = (line.rstrip(b" \t") for line in data.replace(b"\r", b"").split(b"\n"))
    kept = [line for line in lines if line and not (mode == "nolen" and _is_len_line(line))]
    return b"".join(line + b"\n" for line in kept)


def _is_len_line(line: bytes) -> bool:
    key, sep, _ = line.partition(b"=")
    return bool(sep) and key.strip().endswith(b"_Len")


def canonical_sha256(data: bytes, mode: str = "strict") -> str:
    """SHA-256 (hex) of the canonical text of a KAT file's bytes."""
    return hashlib.sha256(canonical_text(data, mode)).hexdigest()


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


def first_difference(generated: bytes, official: bytes) -> str | None:
    """Describe where a generated KAT file first departs from the official one.

    Names the first differing record (index, line, ``Msg_Len``, the differing keys);
    ``None`` when the canonical texts are equal.
    """
    if canonical_text(generated) == canonical_text(official):
        return None
    try:
        ours = parse_kat_text(generated.decode("ascii"))
        theirs = parse_kat_text(official.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return _first_different_line(generated, official)
    for mine, other in zip(ours, theirs, strict=False):
        if mine.fields != other.fields:
            keys = list(dict.fromkeys(k for k in (*other.fields, *mine.fields)
                                      if mine.fields.get(k) != other.fields.get(k)))
            return "record %d (line %d, Msg_Len = %s): %s %s" % (
                mine.index, mine.line, other.fields.get("Msg_Len", "?"), ", ".join(keys),
                "differs" if len(keys) == 1 else "differ")
    if len(ours) != len(theirs):
        missing_from = "generated" if len(ours) < len(theirs) else "official"
        extra = (theirs if len(ours) < len(theirs) else ours)[min(len(ours), len(theirs))]
        return ("record %d (line %d, Msg_Len = %s) is missing from the %s file "
                "(%d records generated, %d official)"
                % (extra.index, extra.line, extra.fields.get("Msg_Len", "?"), missing_from,
                   len(ours), len(theirs)))
    return _first_different_line(generated, official)


def _first_different_line(generated: bytes, official: bytes) -> str:
    ours = canonical_text(generated).split(b"\n")
    theirs = canonical_text(official).split(b"\n")
    for number, (mine, other) in enumerate(zip(ours, theirs, strict=False), start=1):
        if mine != other:
            return "canonical line %d differs: %r vs official %r" % (number, mine[:60], other[:60])
    return "the canonical texts differ in length (%d vs %d lines)" % (len(ours), len(theirs))
