"""The official KAT files: their names, where a submission keeps them, and reading
them and their manifests (records, canonical digest, first difference).

The file format is ``spec/kat-format.md`` §3; the manifest digest is §10.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

FILES = ("2_12", "2_23", "2_33", "loop")
"""The four KAT files, in the official generator's order."""

DEFAULT_FILES = ("2_12", "2_23")
"""The files checked by default: the quick ones (seconds, not minutes)."""

# kind -> the tag in the file name and the DRNG seed ("KAT_" + tag, 8 times)
TAGS = {"2_12": "2_12", "2_23": "2_23", "2_33": "2_33", "loop": "Loop"}

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


