"""The NGCC Round 1 hash candidates: ids, algorithm names, instances and manifests.

One data file, ``kat/candidates.tsv`` (installed as ``ngcc/_lib/kat/candidates.tsv``
beside the harness's KAT manifests ``kat/hash-NN.sha256``), lists every hash instance
of the field: its candidate id, algorithm, instance name, the manifest folder of its
KAT lines and the instance name in its KAT file names (``Laurus-512`` is folder
``Laurus-512`` with files ``KAT_2_12_laurus_512.txt``), and its digest length (empty
for an XOF, whose output length its header gives). This module is the only reader.

Besides the 35 candidates there are two ids no row lists: ``baseline`` (the ICCS
functions SM3, pseudohash and pseudoXOF ngcc ships, which have no official KAT) and
``external`` (a library that no candidate claims).
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.errors import InvalidNameError, NgccError

DATA_DIR = Path(__file__).resolve().parents[1] / "_lib" / "kat"
TABLE_NAME = "candidates.tsv"
COLUMNS = ("id", "algorithm", "instance", "manifest_folder", "kat_instance_name",
           "digest_bits")
BASELINE = "baseline"
EXTERNAL = "external"
BASELINE_TITLE = "ICCS baseline functions (SM3, pseudohash, pseudoXOF)"


class UnknownCandidateError(InvalidNameError):
    """A candidate id that the registry does not list; the message lists the known ids."""


class AmbiguousInstanceError(NgccError):
    """An instance name that more than one candidate has; the message lists them."""


@dataclass(frozen=True)
class CandidateInstance:
    """One hash instance of a candidate, as the harness lists it.

    Attributes:
        name: the harness's instance name, e.g. ``"Laurus-512"``.
        kat_name: the instance name in its KAT file names (the submission's
            ``ALGORITHM_INSTANCE``), e.g. ``"laurus_512"``.
        manifest_folder: the folder its manifest lines name, e.g. ``"Laurus-512"``.
        digest_bits: the digest length in bits; None for an XOF (its header gives the
            output length).
    """

    name: str
    kat_name: str
    manifest_folder: str
    digest_bits: int | None

    @property
    def xof(self) -> bool:
        """True for an extendable-output instance (no fixed digest length)."""
        return self.digest_bits is None


@dataclass(frozen=True)
class Candidate:
    """One Round 1 hash candidate: ``hash-14`` Laurus and its instances."""

    id: str
    algorithm: str
    instances: tuple[CandidateInstance, ...]

    @property
    def manifest(self) -> Path:
        """Its harness KAT manifest, ``kat/<id>.sha256`` as installed."""
        return DATA_DIR / ("%s.sha256" % self.id)

    @property
    def title(self) -> str:
        """``hash-14 Laurus``: how pages and tables name it."""
        return "%s %s" % (self.id, self.algorithm)

    def instance(self, name: str) -> CandidateInstance | None:
        """Its instance whose KAT-file or harness name is ``name`` (see
        :func:`infer_candidate` for the matching), else None."""
        found = [i for i in self.instances if _matches(i, name, exact=True)]
        found = found or [i for i in self.instances if _matches(i, name, exact=False)]
        return found[0] if len(found) == 1 else None


def parse_table(text: str, source: str = "candidates.tsv") -> list[Candidate]:
    """The candidates of a registry table's text, in its order.

    Raises:
        NgccError: a table whose header or a row is not as :data:`COLUMNS` describes.
    """
    reader = csv.reader(io.StringIO(text), delimiter="\t")
    header = next(reader, None)
    if header is None or tuple(header) != COLUMNS:
        raise NgccError("%s: the header is %r, expected %s; reinstall ngcc"
                        % (source, header, "\\t".join(COLUMNS)))
    rows: dict[str, tuple[str, list[CandidateInstance]]] = {}
    for number, row in enumerate(reader, start=2):
        if len(row) != len(COLUMNS) or not all(row[:5]):
            raise NgccError("%s line %d is not %d tab-separated fields: %r; reinstall ngcc"
                            % (source, number, len(COLUMNS), row))
        ident, algorithm, name, folder, kat_name, bits = row
        if bits and not bits.isdigit():
            raise NgccError("%s line %d: digest_bits %r is not a number" % (source, number, bits))
        entry = rows.setdefault(ident, (algorithm, []))
        entry[1].append(CandidateInstance(name, kat_name, folder, int(bits) if bits else None))
    return [Candidate(ident, algorithm, tuple(found))
            for ident, (algorithm, found) in rows.items()]


def _table() -> tuple[Candidate, ...]:
    return _load(DATA_DIR / TABLE_NAME)


@functools.lru_cache(maxsize=4)
def _load(table: Path) -> tuple[Candidate, ...]:
    if not table.is_file():
        raise NgccError("the candidate registry %s is missing: reinstall ngcc with `pip "
                        "install .`" % table)
    return tuple(parse_table(table.read_text(encoding="utf-8"), str(table)))


def candidates() -> list[Candidate]:
    """Every Round 1 hash candidate, in the registry's order (hash-01 … hash-35)."""
    return list(_table())


def candidate_ids() -> list[str]:
    """The ids every ``--candidate`` accepts: the registry's, then ``baseline``."""
    return [c.id for c in _table()] + [BASELINE]


def candidate(ident: str) -> Candidate:
    """The candidate with this id.

    Raises:
        UnknownCandidateError: an id the registry does not list (the message lists them).
    """
    for found in _table():
        if found.id == ident:
            return found
    raise UnknownCandidateError(unknown_message(ident))


def harness_name(ident: str, name: str) -> str:
    """The harness's name of a candidate's instance (``laurus_512`` → ``Laurus-512``):
    ``name`` itself where the registry does not list it."""
    try:
        found = candidate(ident).instance(name)
    except UnknownCandidateError:  # external, baseline
        return name
    return found.name if found is not None else name


def manifest_folder(ident: str, name: str) -> str | None:
    """The folder the shipped manifest names a candidate's instance by (``laurus_512`` →
    ``Laurus-512``); None where the registry does not list it."""
    try:
        found = candidate(ident).instance(name)
    except UnknownCandidateError:  # external, baseline, ambiguous
        return None
    return found.manifest_folder if found is not None else None


def unknown_message(ident: object, what: str = "candidate id", also: Sequence[str] = ()
                    ) -> str:
    """``unknown candidate id 'hash-99': known candidate ids are hash-01, …``."""
    shown = repr(ident) if len(repr(ident)) <= 60 else repr(ident)[:57] + "..."
    return ("unknown %s %s: known candidate ids are %s (see `ngcc list --candidates`; a "
            "library no candidate claims needs none: it is %r)"
            % (what, shown, ", ".join([*candidate_ids(), *also]), EXTERNAL))


def title(ident: str) -> str | None:
    """The algorithm name of a candidate id (``Laurus``), the baseline's title, or None
    for an id the registry does not list (``external``)."""
    if ident == BASELINE:
        return BASELINE_TITLE
    return next((c.algorithm for c in _table() if c.id == ident), None)


def _fold(name: str) -> str:
    return name.casefold().replace("-", "").replace("_", "")


def _matches(inst: CandidateInstance, name: str, exact: bool) -> bool:
    if exact:
        return name in (inst.kat_name, inst.name)
    return _fold(name) in (_fold(inst.kat_name), _fold(inst.name))


def infer_candidate(instance_name: str,
                    table: Sequence[Candidate] | None = None) -> str | None:
    """The id of the one candidate with an instance named ``instance_name``.

    A name matches an instance's KAT-file name (the submission's ``ALGORITHM_INSTANCE``,
    ``laurus_512``) or its harness name (``Laurus-512``); exact matches first, else
    ignoring case, ``-`` and ``_``.

    Returns:
        The id; None when no candidate has the name.

    Raises:
        AmbiguousInstanceError: several candidates have it (the message lists them).
    """
    rows = _table() if table is None else table
    for exact in (True, False):
        found = [c for c in rows if any(_matches(i, instance_name, exact) for i in c.instances)]
        if len(found) == 1:
            return found[0].id
        if found:
            raise AmbiguousInstanceError(
                "the instance name %r belongs to %d candidates: %s; choose one with "
                "--candidate ID" % (instance_name, len(found),
                                    ", ".join("%s (%s)" % (c.id, c.algorithm) for c in found)))
    return None
