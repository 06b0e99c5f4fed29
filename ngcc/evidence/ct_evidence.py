"""The evidence of the constant-time analysis (``ngcc ct``): one file per library,
``OUT/<candidate>/<label>__ct.json`` (``ngcc.ct/1``, a :class:`CtEvidence`), written
atomically; an evaluation's lie in ``RUN_DIR/ct/``.

A file holds the verdict and what earned it: the sites memcheck reported (each a
source line of the submission where message data decides a branch or an address),
the lengths hashed, the debug twin that ran (its flags and sha256) and valgrind's
version and options. The analysis itself is :mod:`ngcc.measure.ct_measurement`; the
sites are made from memcheck's XML by :mod:`ngcc.stats.ct_statistics`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc.base import untrusted as _untrusted
from ngcc.base.clock import utc_now
from ngcc.base.codec import Evidence, FieldError
from ngcc.base.errors import CorruptRecordError
from ngcc.base.names import check_name, inside, is_valid_name
from ngcc.base.version import __version__
from ngcc.evidence import records as _records

if TYPE_CHECKING:
    import pandas as pd

SCHEMA_CT = "ngcc.ct/1"
CT_DIR = "ct"
"""An evaluation's constant-time evidence: ``RUN_DIR/ct/<candidate>/<label>__ct.json``."""

CONSTANT_TIME, LEAKS, NOT_ANALYSED = "constant-time", "leaks", "not analysed"
#: A library's verdict: no site, at least one site, or no analysis (``reason`` says why).
VERDICTS = (CONSTANT_TIME, LEAKS, NOT_ANALYSED)
BRANCH, ADDRESS, OTHER = "branch", "address", "other"
#: What the message decides at a site: a conditional branch (or move), a load or store
#: address, or another use memcheck reports (a system call's argument, ...).
SITE_KINDS = (BRANCH, ADDRESS, OTHER)
#: The most characters of a quoted source line kept in the evidence.
MAX_QUOTE = 200

_SHA256 = re.compile(r"[0-9a-f]{64}")
_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@dataclass(frozen=True)
class CtSite(Evidence):
    """One source line where message data decides something, over every length hashed.

    Attributes:
        file: the source file, relative to the submission folder (``/`` separated).
        line: its line number (1-based).
        function: the function memcheck names there.
        kind: ``branch``, ``address`` or ``other`` (:data:`SITE_KINDS`).
        quote: the source line itself, stripped (at most :data:`MAX_QUOTE` characters;
            empty when the file cannot be read).
        lengths: how many of the lengths hashed reached it.
        what: memcheck's own words for the first report of it.
    """

    file: str
    line: int
    function: str
    kind: str
    quote: str
    lengths: int
    what: str

    def _check(self, where: str) -> None:
        checks = [
            ("file", bool(self.file) and not self.file.startswith("/")
             and ".." not in self.file.split("/"), "is not a path inside the submission"),
            ("line", self.line >= 1, "is below 1"),
            ("kind", self.kind in SITE_KINDS, "is %r, not one of %s"
             % (self.kind, ", ".join(SITE_KINDS))),
            ("quote", len(self.quote) <= MAX_QUOTE, "is longer than %d characters" % MAX_QUOTE),
            ("lengths", self.lengths >= 1, "is below 1"),
        ]
        _raise_first(where, checks)

    @property
    def order(self) -> tuple[str, int, str, str]:
        """How sites are sorted: by file, line, kind, function."""
        return (self.file, self.line, self.kind, self.function)


@dataclass(frozen=True)
class CtTwin(Evidence):
    """The debug twin that ran under memcheck: the library rebuilt from the same
    sources and flags plus ``-g``.

    Attributes:
        source_dir: the folder its sources came from (sites are relative to it).
        cflags: every compile flag of the twin, ``-g`` included.
        sha256: the twin library's SHA-256.
        same_digests: whether the twin hashed every length like the library itself
            (None where the library was not run beside it).
    """

    source_dir: str
    cflags: tuple[str, ...]
    sha256: str
    same_digests: bool | None

    def _check(self, where: str) -> None:
        _raise_first(where, [("sha256", bool(_SHA256.fullmatch(self.sha256)),
                              "is not a sha256"),
                             ("cflags", "-g" in self.cflags, "lacks -g")])


@dataclass(frozen=True)
class CtValgrind(Evidence):
    """The valgrind that ran: its version line and its options before the driver."""

    version: str
    options: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class CtEvidence(Evidence):
    """The constant-time analysis of one library, as its evidence file holds it.

    ``verdict`` is ``constant-time`` (no site), ``leaks`` (``sites``) or ``not
    analysed`` (``reason``, and no site); ``lengths`` are the message lengths in bits
    the twin hashed under memcheck, ``refused_lengths`` the bit lengths (not a multiple
    of 8) the library does not take. ``created`` and ``ngcc_version`` are filled in by
    :func:`write_evidence`."""

    schema: str = SCHEMA_CT
    instance: str
    label: str
    candidate: str
    variant: str
    library: str
    verdict: str
    reason: str = ""
    sites: tuple[CtSite, ...] = ()
    lengths: tuple[int, ...] = ()
    refused_lengths: tuple[int, ...] = ()
    twin: CtTwin | None = None
    valgrind: CtValgrind | None = None
    isolation: str = ""
    seconds: float = 0.0
    created: str = ""
    ngcc_version: str = ""

    def _check(self, where: str) -> None:
        analysed = self.verdict != NOT_ANALYSED
        sites = [site.order for site in self.sites]
        checks = [
            ("schema", self.schema == SCHEMA_CT, "is %r, not %r" % (self.schema, SCHEMA_CT)),
            ("label", is_valid_name(self.label), "is not a valid name"),
            ("candidate", is_valid_name(self.candidate), "is not a valid name"),
            ("verdict", self.verdict in VERDICTS, "is %r, not one of %s"
             % (self.verdict, ", ".join(VERDICTS))),
            ("reason", bool(self.reason) != analysed,
             "must say why exactly when the verdict is %r" % NOT_ANALYSED),
            ("sites", bool(self.sites) == (self.verdict == LEAKS),
             "must hold a site exactly when the verdict is %r" % LEAKS),
            ("sites", sites == sorted(set(sites)), "are not sorted and unique"),
            ("sites", all(site.lengths <= len(self.lengths) for site in self.sites),
             "count more lengths than were hashed"),
            ("lengths", not analysed or bool(self.lengths), "is empty for an analysis"),
            ("twin", not analysed or self.twin is not None, "is missing for an analysis"),
            ("valgrind", not analysed or self.valgrind is not None,
             "is missing for an analysis"),
            ("isolation", self.isolation in ("", "namespaces", "filter"),
             "is %r, not namespaces or filter" % self.isolation[:40]),
            ("created", bool(_UTC.fullmatch(self.created)), "is %r, not a UTC time"
             % self.created),
        ]
        _raise_first(where, checks)

    @property
    def functions(self) -> list[str]:
        """The functions of the sites, each once, in the order of the sites."""
        return list(dict.fromkeys(site.function for site in self.sites))

    def summary(self) -> str:
        """The verdict in words: ``leaks (3 sites in 2 functions)``, ``not analysed:
        ...``, ``constant-time``."""
        if self.verdict == LEAKS:
            count = len(self.functions)
            return "%s (%d site%s in %d function%s)" % (
                LEAKS, len(self.sites), "" if len(self.sites) == 1 else "s", count,
                "" if count == 1 else "s")
        if self.verdict == NOT_ANALYSED:
            return "%s: %s" % (NOT_ANALYSED, self.reason)
        return CONSTANT_TIME


def _raise_first(where: str, checks: list[tuple[str, bool, str]]) -> None:
    for name, ok, defect in checks:
        if not ok:
            raise FieldError(where + name, defect)


def evidence_path(evidence: CtEvidence, out_dir: str | os.PathLike[str]) -> Path:
    """``OUT/<candidate>/<label>__ct.json``, kept inside ``out_dir``."""
    folder = inside(out_dir, check_name(evidence.candidate, "candidate id"))
    return inside(folder, "%s__ct.json" % check_name(evidence.label, "label"))


def write_evidence(evidence: CtEvidence, out_dir: str | os.PathLike[str]) -> Path:
    """Write ``OUT/<candidate>/<label>__ct.json`` (``ngcc.ct/1``) atomically, stamped
    with the time and this ngcc's version; return its path."""
    path = evidence_path(evidence, out_dir)
    written = replace(evidence, created=utc_now(), ngcc_version=__version__)
    _records.write_json(path, written.to_json())
    return path


def read_evidence(path: str | os.PathLike[str]) -> CtEvidence:
    """Read a constant-time evidence file.

    Raises:
        CorruptRecordError: it cannot be read, is not ``ngcc.ct/1``, or a field is
            missing, unknown or out of range.
    """
    remedy = "Run `ngcc ct` again to remake it."
    try:
        data = _untrusted.load_json_file(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CorruptRecordError(path, "cannot be read (%s)" % exc, remedy) from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_CT:
        raise CorruptRecordError(path, "not an %s file" % SCHEMA_CT, remedy)
    try:
        return CtEvidence.from_json(data)
    except FieldError as exc:
        raise CorruptRecordError(path, str(exc), remedy) from None


def run_evidence(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every constant-time evidence file of a run directory (``ct/*/*.json``), read
    and checked, in file-name order, each with its ``relpath`` in the run directory.

    Raises:
        CorruptRecordError: a file that is not sound ``ngcc.ct/1`` evidence.
    """
    root = Path(run_dir)
    return [{**read_evidence(path).to_json(), "relpath": path.relative_to(root).as_posix()}
            for path in sorted((root / CT_DIR).glob("*/*.json"))]


#: The columns of :func:`sites_frame`.
SITE_COLUMNS = ("candidate", "label", "instance", "verdict", "file", "line", "function",
                "kind", "lengths", "quote", "relpath")


def sites_frame(evidence: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The sites of constant-time evidence (``Run.constant_time``): one row per site of
    each library, a library without a site one row whose site columns are empty."""
    import pandas as pd

    rows = []
    for record in evidence:
        library = {key: record.get(key, "") for key in ("candidate", "label", "instance",
                                                        "verdict", "relpath")}
        sites = record.get("sites") or [{}]
        rows += [{**library, **{key: site.get(key) for key in
                                ("file", "line", "function", "kind", "lengths", "quote")}}
                 for site in sites]
    return pd.DataFrame(rows, columns=list(SITE_COLUMNS))
