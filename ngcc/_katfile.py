"""Reading official KAT files: records, and the manifests' canonical digest.

The file format is ``spec/kat-format.md`` §3; the manifest digest is §10.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


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


def canonical_text(data: bytes) -> bytes:
    """The manifests' canonical form: CR removed, trailing blanks stripped, empty lines
    dropped, every remaining line ended by LF (kat-format.md §10, mode ``strict``)."""
    lines = data.replace(b"\r", b"").split(b"\n")
    kept = [line.rstrip(b" \t") for line in lines]
    return b"".join(line + b"\n" for line in kept if line)


def canonical_sha256(data: bytes) -> str:
    """SHA-256 (hex) of the canonical text of a KAT file's bytes."""
    return hashlib.sha256(canonical_text(data)).hexdigest()
