"""The registry of hash instances: built-in ones and the libraries a user points to.

The built-in instances are the libraries ``setup.py`` compiled into ``ngcc/_lib/``;
``registry.json`` beside them says what each one is. An instance may also be
given as a path to an instance library (``.so``) made by ``ngcc build``, whose
``<library>.json`` sidecar carries the same facts.

A variant built for instruction-set extensions (``cpu_features``) that this CPU
lacks is listed, but looking it up raises :class:`LibraryError` naming the
missing features, so it is never called (that would die of SIGILL).
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ngcc import _core
from ngcc.base.errors import (
    InvalidNameError,
    LibraryError,
    LibraryNotFoundError,
    MeasurementWarning,
    NgccError,
    UnknownInstanceError,
)
from ngcc.base.files import sha256_file
from ngcc.base.names import assign_labels, check_name
from ngcc.base.untrusted import load_json_file
from ngcc.library import candidates as _candidates

LIB_DIR = Path(__file__).resolve().parents[1] / "_lib"
CANDIDATES = ("hash-22", "hash-34", "hash-35", "baseline")  # those of the built-in instances
EXTERNAL = _candidates.EXTERNAL  # the candidate id of a library no candidate claims
MAX_SIDECAR_BYTES = 1 << 20


@dataclass(frozen=True)
class Instance:
    """One hash instance: an ICCS ``CryptHash`` library and what it computes.

    Attributes:
        name: the instance name, e.g. ``"Wish512"`` (``ALGORITHM_INSTANCE``).
        family: the hash family, e.g. ``"Wish"``.
        candidate: its candidate id (``"hash-35"``, any of ``ngcc.library.candidates``),
            ``"baseline"``, or ``"external"`` for a library no candidate claims.
        digest_bits: the digest length in bits (``DIGEST_BIT_LENGTH``).
        variant: the implementation: ``"ref"``, ``"opt"`` or ``"external"``.
        library: absolute path of the shared library.
        cflags: the compiler flags the library was built with.
        compiler: the compiler's version line.
        description: what the implementation is (``instances.json``), e.g.
            ``"AVX2, four lanes per vector"``; empty when unknown.
        cpu_features: the instruction-set extensions the library needs, by Linux
            /proc/cpuinfo flag names (``("aes", "ssse3")``); empty for portable code.
        constant_time: whether the implementation is declared constant-time (no
            branch or memory address depends on the message; checked under
            valgrind for the built-in ones); None when unknown (external libraries).
        label: the name ``ngcc build --label`` gave the library for files, tables and
            plots (None for built-ins and unlabelled builds); the instance name
            still selects the KAT manifest line.
        sidecar: for a library made by ``ngcc build``, the facts of its sidecar.
    """

    name: str
    family: str
    candidate: str
    digest_bits: int
    variant: str
    library: Path
    cflags: tuple[str, ...] = field(default=(), compare=False)
    compiler: str = field(default="", compare=False)
    description: str = field(default="", compare=False)
    cpu_features: tuple[str, ...] = field(default=(), compare=False)
    constant_time: bool | None = field(default=None, compare=False)
    label: str | None = field(default=None, compare=False)
    sidecar: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def builtin(self) -> bool:
        """True for the instances shipped with the package."""
        return self.variant != "external"

    @property
    def missing_cpu_features(self) -> tuple[str, ...]:
        """The entries of ``cpu_features`` that this CPU lacks (empty: it can run here)."""
        have = cpu_features()
        return tuple(name for name in self.cpu_features if name not in have)

    @property
    def key(self) -> str:
        """The name that looks up exactly this instance: ``name:variant`` for a built-in
        one (``"WChain-V1-512:opt"``), the library path for an external one."""
        return "%s:%s" % (self.name, self.variant) if self.builtin else str(self.library)

    def __str__(self) -> str:
        return self.name


@functools.cache
def cpu_features() -> frozenset[str]:
    """The instruction-set extensions of this CPU (cpuid), as ``_core.cpu_features``."""
    return _core.cpu_features()


#: The command the driver runs behind (``ngcc/driver/child.py``), e.g. an emulator of another
#: architecture: a library path then runs on that CPU, not this one, and the driver,
#: which checks ``--cpu-features`` where it runs, alone judges its CPU features.
DRIVER_PREFIX_ENV = "NGCC_DRIVER_PREFIX"


def require_cpu_features(inst: Instance) -> Instance:
    """Return ``inst`` when this CPU has every feature it needs (or, for a library path
    run behind ``NGCC_DRIVER_PREFIX``, leave the check to the driver).

    Raises:
        LibraryError: naming the missing features and what to use instead.
    """
    missing = inst.missing_cpu_features
    if missing and not (not inst.builtin and os.environ.get(DRIVER_PREFIX_ENV)):
        raise LibraryError(
            "%s needs the CPU feature%s %s, which this CPU lacks (cpuid); use %s:ref, or a "
            "machine whose /proc/cpuinfo flags list %s"
            % (inst.key, "s" if len(missing) > 1 else "", ", ".join(missing), inst.name,
               " and ".join(missing)))
    return inst


@functools.lru_cache(maxsize=1)
def _registry_file() -> dict[str, Any]:
    """``registry.json``: what setup.py built beside the package (read once)."""
    registry_file = LIB_DIR / "registry.json"
    if not registry_file.exists():
        raise NgccError("the instance libraries are not built (%s is missing): reinstall "
                        "with `pip install .` or run `python setup.py build_ext --inplace`"
                        % registry_file)
    registry: dict[str, Any] = json.loads(registry_file.read_text())
    return registry


def sanitized_build() -> bool:
    """True for an AddressSanitizer build (``NGCC_SANITIZE``, ``.ci/sanitize``), whose
    programs take no address-space cap."""
    return bool(_registry_file().get("sanitized"))


@functools.lru_cache(maxsize=1)
def _builtin() -> dict[str, Instance]:
    registry = _registry_file()
    found: dict[str, Instance] = {}
    for entry in registry["instances"]:
        instance = Instance(
            name=entry["name"], family=entry["family"], candidate=entry["candidate"],
            digest_bits=int(entry["digest_bits"]), variant=entry["variant"],
            library=LIB_DIR / entry["library"], cflags=tuple(entry["cflags"]),
            compiler=registry["compiler"], description=entry.get("description", ""),
            cpu_features=tuple(entry.get("cpu_features", ())),
            constant_time=entry.get("constant_time"))
        # The first variant listed for an instance answers to the bare name.
        found.setdefault(instance.name, instance)
        found["%s:%s" % (instance.name, instance.variant)] = instance
    return found


def instances(all_variants: bool = False) -> list[Instance]:
    """Return every built-in instance, in registry order: its default variant, or
    with ``all_variants`` every variant built (``ref``, ``opt`` ...), including
    those this CPU cannot run (see :attr:`Instance.missing_cpu_features`)."""
    return [inst for key, inst in _builtin().items() if (":" in key) == all_variants]


def instance(name: str | os.PathLike[str] | Instance, candidate: str | None = None) -> Instance:
    """Look up an instance by name (case-insensitive), ``name:variant`` or library path.

    ``candidate`` gives the candidate id of a library path (default: the one its
    ``ngcc build`` sidecar records, else the manifest that lists its name); it does
    not apply to built-in instances.

    Raises:
        UnknownInstanceError: no such instance; the message lists close matches.
        UnknownCandidateError: ``candidate`` is no known candidate id (an
            :class:`InvalidNameError`), whatever ``name`` is.
        LibraryError: a path that exists but is not a usable instance library, or a
            variant that needs CPU features this CPU lacks (named in the message).
    """
    if candidate is not None:
        check_candidate(candidate)
    if isinstance(name, Instance):
        return require_cpu_features(name)
    if not isinstance(name, (str, os.PathLike)):  # bytes too: names are text
        raise TypeError("an instance is named by a str, a path or an Instance, not %s"
                        % type(name).__name__)
    text = os.fspath(name)
    if not isinstance(text, str):
        raise TypeError("an instance is named by a str path, not a %s path" % type(text).__name__)
    table = _builtin()
    if text in table:
        return require_cpu_features(table[text])
    folded = {key.casefold(): inst for key, inst in table.items()}
    if text.casefold() in folded:
        return require_cpu_features(folded[text.casefold()])
    if os.sep in text or text.endswith(".so") or os.path.exists(text):
        return require_cpu_features(external_instance(Path(text), candidate))
    names = {inst.name.casefold(): inst.name for inst in instances()}
    close = difflib.get_close_matches(text.casefold(), list(names), n=3, cutoff=0.5)
    raise UnknownInstanceError(text, [names[c] for c in close])


def is_library_path(name: object) -> bool:
    """True for a name that can only be a library path (``built/X.so``, a Path)."""
    return isinstance(name, os.PathLike) or (
        isinstance(name, str) and (os.sep in name or name.endswith(".so")))


def default_label(inst: Instance) -> str:
    """The label a library carries unless told otherwise: the instance name for the
    variant the bare name means (``Wish512``), ``<name>@<variant>`` for another built-in
    variant (``Wish512@opt``), the instance name for an external library."""
    if not inst.builtin:
        return inst.name
    try:
        default: Instance | None = instance(inst.name)
    except NgccError:
        default = None
    return inst.name if default == inst else "%s@%s" % (inst.name, inst.variant)


def _folder_hints(inst: Instance, depth: int = 4) -> list[str]:
    """The folders of an external library, nearest first: what tells two builds apart."""
    if inst.builtin:
        return [inst.variant]
    return [parent.name for parent in list(inst.library.parents)[:depth] if parent.name]


@functools.cache
def reserved_labels() -> frozenset[str]:
    """The names no external library may carry as its label, casefolded: every built-in
    instance's name and default label (``SM3``, ``pseudoXOF-256``, ``Wish512@opt``).
    A label is what tables, plots and the × pseudoXOF column read a library as."""
    return frozenset(name.casefold() for inst in instances(all_variants=True)
                     for name in (inst.name, default_label(inst)))


def takes_builtin_name(inst: Instance) -> bool:
    """Whether an external library declares a built-in instance's name (any case)."""
    return not inst.builtin and inst.name.casefold() in reserved_labels()


def run_labels(chosen: Sequence[Instance], wanted: Sequence[str | None] = ()) -> list[str]:
    """A unique label for every library of a run, in order (``base.names.assign_labels``:
    unique regardless of case).

    ``wanted`` gives an explicit label per library (None: the instance's own ``label``,
    from its sidecar, unless that is a built-in name; else derived). Built-in libraries
    keep their default first, so ``Pavelor-512`` means the built-in one and two builds
    of it become ``Pavelor-512@perf`` and ``Pavelor-512@opt`` (their nearest differing
    folder). An
    external library never carries a built-in name (:func:`reserved_labels`): one that
    declares one gets its folder (``pseudoXOF-256@mine``), so no table reads it as
    the built-in instance (nor, by ``stats.groups.baseline_record``, as a baseline).

    Raises:
        InvalidNameError: an explicit label that breaks the name rule, is given twice,
            or is a built-in name given to an external library.
    """
    given = [wanted[i] if i < len(wanted) else None for i in range(len(chosen))]
    for inst, label in zip(chosen, given, strict=True):
        if label is not None and not inst.builtin and label.casefold() in reserved_labels():
            raise InvalidNameError(
                "label %r is the name of a built-in instance, so it cannot label the external "
                "library %s (tables and the × pseudoXOF column would read it as the built-in "
                "one); give it another --label" % (label, inst.library))
    # A sidecar's own label that is a built-in name is the library's claim, not the
    # user's: it is dropped, and the library gets its folder like any other.
    explicit = [label or (inst.label if inst.builtin or inst.label is None
                          or inst.label.casefold() not in reserved_labels() else None)
                for inst, label in zip(chosen, given, strict=True)]
    order = sorted(range(len(chosen)), key=lambda i: not chosen[i].builtin)
    defaults = [default_label(chosen[i]) for i in order]
    # Builds whose default clashes, or is a built-in's name, all get their folder: the
    # bare name would read as the built-in instance. A placeholder takes the bare name
    # first (dropped after).
    unlabelled = [d for d, i in zip(defaults, order, strict=True) if explicit[i] is None]
    builtin = {d for d, i in zip(defaults, order, strict=True) if chosen[i].builtin}
    held = [name for name in dict.fromkeys(unlabelled) if name not in builtin
            and (unlabelled.count(name) > 1 or name.casefold() in reserved_labels())]
    labels = assign_labels([*held, *defaults], [*([None] * len(held)),
                                                *(explicit[i] for i in order)],
                           [*([[]] * len(held)), *(_folder_hints(chosen[i]) for i in order)])
    result = [""] * len(chosen)
    for position, index in enumerate(order):
        result[index] = labels[len(held) + position]
    return result


def external_instance(path: Path, candidate: str | None = None) -> Instance:
    """Describe an instance library outside the package from its ``.json`` sidecar."""
    given, path = path, path.resolve()
    if path.is_dir():
        libraries = sorted(path.glob("*.so"))
        if len(libraries) != 1:
            raise LibraryError("%s: expected exactly one instance library (.so) in the "
                               "folder, found %d; build it with `ngcc build`"
                               % (path, len(libraries)))
        path = libraries[0]
    if not path.exists():
        raise LibraryNotFoundError(str(given))
    if not path.is_file():
        raise UnknownInstanceError(str(path), [])
    sidecar = sidecar_path(path)
    if not sidecar.is_file():
        raise LibraryError("%s: no %s beside it, so its instance name and digest length are "
                           "unknown; build the library with `ngcc build`" % (path, sidecar.name))
    if sidecar.stat().st_size > MAX_SIDECAR_BYTES:
        raise LibraryError("%s: sidecar larger than %d bytes; rebuild with `ngcc build`"
                           % (sidecar, MAX_SIDECAR_BYTES))
    try:
        meta = load_json_file(sidecar)
        _check_sidecar_types(meta)
        name, family, label = meta["name"], meta.get("family", meta["name"]), meta.get("label")
        stored = meta.get("candidate")
        digest_bits = meta["digest_bits"]
        cflags, compiler = tuple(meta.get("cflags", ())), meta.get("compiler", "")
        description = str(meta.get("description") or "")
        cpu_features = tuple(meta.get("cpu_features", ()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LibraryError("%s: corrupt sidecar (%s); rebuild with `ngcc build`"
                           % (sidecar, exc)) from exc
    # Names from a sidecar become file names: checked here, at the edge.
    check_name(name, "instance name in %s" % sidecar)
    check_name(family, "family in %s" % sidecar)
    if label is not None:
        check_name(label, "label in %s" % sidecar)
    if candidate is not None:
        candidate = check_candidate(candidate)
    elif stored is not None:
        candidate = check_candidate(stored, "candidate id in %s" % sidecar, EXTERNAL)
    _warn_if_rebuilt(path, sidecar, meta.get("sha256"))
    return Instance(name=name, family=family, candidate=candidate or candidate_of(name),
                    digest_bits=digest_bits, variant="external", library=path,
                    cflags=cflags, compiler=compiler, description=description,
                    cpu_features=cpu_features, label=label, sidecar=dict(meta))


#: The type of each sidecar field an Instance is made of, in words (lists hold strings).
_SIDECAR_TYPES: dict[str, tuple[type, str]] = {
    "name": (str, "a string"), "family": (str, "a string"), "label": (str, "a string"),
    "candidate": (str, "a string"), "digest_bits": (int, "an integer"),
    "cflags": (list, "a list of strings"), "compiler": (str, "a string"),
    "description": (str, "a string"), "cpu_features": (list, "a list of strings")}


def _check_sidecar_types(meta: object) -> None:
    """A TypeError naming the first sidecar field of the wrong type (``"digest_bits":
    "256"``), a ValueError for a digest length that is no whole number of bytes."""
    if not isinstance(meta, dict):
        raise TypeError("the sidecar is a JSON %s, not an object" % type(meta).__name__)
    for key, (kind, words) in _SIDECAR_TYPES.items():
        value = meta.get(key)
        if value is None and key != "digest_bits":  # optional, or refused just below
            continue
        if isinstance(value, bool) or not isinstance(value, kind) or (
                isinstance(value, list) and not all(isinstance(v, str) for v in value)):
            shown = "missing" if value is None else "%s %s" % (
                type(value).__name__, repr(value)[:40])
            raise TypeError("field %r is %s, not %s" % (key, shown, words))
    if meta["digest_bits"] <= 0 or meta["digest_bits"] % 8:
        raise ValueError("field 'digest_bits' is %d, not a positive whole number of bytes"
                         % meta["digest_bits"])


def _warn_if_rebuilt(library: Path, sidecar: Path, recorded: object) -> None:
    """A MeasurementWarning when the sidecar's ``sha256`` is not the library's: its
    facts (flags, CPU features, sources) may describe another build."""
    if not isinstance(recorded, str):
        return
    try:
        digest = sha256_file(library)
    except OSError:
        return  # loading it says what is wrong
    if digest != recorded:
        warnings.warn("%s: its sha256 %s… is not the %s… its sidecar %s records (changed "
                      "since `ngcc build`?): the sidecar's facts may describe another build"
                      % (library, digest[:16], recorded[:16], sidecar.name),
                      MeasurementWarning, stacklevel=3)


def sidecar_path(library: Path) -> Path:
    """Where ``ngcc build`` keeps a library's facts: ``<library>.json`` beside it."""
    return library.with_name(library.name + ".json")


def candidate_of(instance_name: str) -> str:
    """The one candidate of the registry with an instance of this name
    (:func:`ngcc.library.candidates.infer_candidate`), else ``"external"`` (also when several
    candidates have it: only ``--candidate`` can choose then)."""
    try:
        return _candidates.infer_candidate(instance_name) or EXTERNAL
    except _candidates.AmbiguousInstanceError:
        return EXTERNAL


def known_candidates() -> list[str]:
    """The candidate ids ngcc knows: every Round 1 candidate of the registry, and
    ``baseline``."""
    return _candidates.candidate_ids()


def check_candidate(text: object, what: str = "candidate id", *also: str) -> str:
    """Return ``text`` when it is a known candidate id (or one of ``also``), else raise
    :class:`~ngcc.library.candidates.UnknownCandidateError` (an :class:`InvalidNameError`)
    listing the known ones.

    A library no candidate claims gets no invented id: it is ``external`` (an invented
    id would only file its evidence under a name no manifest backs).
    """
    if text not in [*known_candidates(), *also]:
        raise _candidates.UnknownCandidateError(_candidates.unknown_message(text, what, also))
    return str(text)


def manifest_path(candidate: str) -> Path:
    """Path of the official KAT manifest shipped for ``candidate`` (may not exist)."""
    return _candidates.DATA_DIR / ("%s.sha256" % candidate)
