"""Test every implementation variant of a family: one parameter per instance x variant.

The variants come from the family's instances.json, in its order (``ref`` first). A
variant needing CPU features (``cpu_features``) that this CPU lacks is skipped with
the missing features named: it would be refused there, and not running it is no
failure of the code. A variant the CPU can run must be built, so a missing library
fails the test instead of hiding behind a skip. A variant this build skipped because
the compiler rejects its flags (``registry.json``'s ``skipped_variants``: the AArch64
``neon`` variants on x86-64) gets no parameter at all: its tests run where it is built
(``.ci/aarch64`` checks the ``neon`` libraries' KAT files under qemu-aarch64).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ngcc.library.registry import LIB_DIR, cpu_features

ALGORITHMS = Path(__file__).resolve().parents[1] / "algorithms"


def variants(family: str) -> dict[str, dict]:
    """``{variant: its instances.json entry}`` of ``algorithms/<family>/``, in order,
    less the variants this build skipped (their flags are for another machine)."""
    spec = json.loads((ALGORITHMS / family / "instances.json").read_text())
    registry = json.loads((LIB_DIR / "registry.json").read_text())
    skipped = {s["variant"] for s in registry.get("skipped_variants", [])
               if s["family"] == spec["family"]}
    return {name: v for name, v in spec["variants"].items() if name not in skipped}


def missing_features(family: str, variant: str) -> list[str]:
    """The CPU features a variant needs and this CPU lacks."""
    have = cpu_features()
    return [f for f in variants(family)[variant].get("cpu_features", []) if f not in have]


def _marks(family: str, variant: str) -> list:
    missing = missing_features(family, variant)
    return [pytest.mark.skip(reason="this CPU lacks %s" % ", ".join(missing))] if missing else []


def variant_params(family: str, instances, *, include_ref: bool = True) -> list:
    """``pytest.param("<instance>:<variant>")`` for each instance and variant."""
    return [pytest.param("%s:%s" % (name, variant), id="%s:%s" % (name, variant),
                         marks=_marks(family, variant))
            for variant in variants(family) if include_ref or variant != "ref"
            for name in instances]


def variant_name_params(family: str) -> list:
    """``pytest.param(variant)`` for each variant of the family."""
    return [pytest.param(variant, id=variant, marks=_marks(family, variant))
            for variant in variants(family)]


def instance_of(name: str) -> str:
    """``"Pavelor-512:opt"`` -> ``"Pavelor-512"``."""
    return name.split(":")[0]


def ref_of(name: str) -> str:
    """``"Pavelor-512:opt"`` -> ``"Pavelor-512:ref"``, which every variant must equal."""
    return "%s:ref" % instance_of(name)


def assert_kat_files_pass(official_kat, name: str, files: tuple[str, ...], out_dir) -> None:
    """Regenerate ``files`` (``2_12``, ``2_23``, ``loop``, ``2_33``) of the variant
    ``name`` whole and assert each matches the manifest; a mismatch shows the checker's
    detail (the first differing record of the official file)."""
    import ngcc

    [result] = ngcc.kat.check(name, files=files, out_dir=out_dir, progress=False,
                              official_dir=official_kat.folder(instance_of(name)))
    expected = [(kind, "PASS") for kind in ngcc.kat.FILES if kind in files]  # its order
    assert [(f.kind, f.verdict) for f in result.files] == expected, \
        [f.detail for f in result.files]
