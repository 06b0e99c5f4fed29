"""The instance registry: built-in instances, lookup by name, external library paths."""

from __future__ import annotations

import pytest
from _testlib import FAILING_SOURCE, build_library

import ngcc
from ngcc._errors import LibraryError, UnknownInstanceError
from ngcc._registry import CANDIDATES


def test_every_builtin_instance_is_complete_and_built():
    found = ngcc.instances()
    assert found, "no built-in instance"
    for inst in found:
        assert inst.library.is_file(), inst.name
        assert inst.candidate in CANDIDATES, inst.name
        assert inst.digest_bits > 0 and inst.digest_bits % 8 == 0, inst.name
        assert inst.variant in ("ref", "opt"), inst.name
        assert inst.builtin and inst.family and inst.compiler, inst.name


def test_instance_names_are_unique():
    names = [inst.name for inst in ngcc.instances()]
    assert len(names) == len(set(names))


def test_sm3_is_the_baseline():
    sm3 = ngcc.instance("SM3")
    assert (sm3.family, sm3.candidate, sm3.digest_bits, sm3.variant) == (
        "SM3", "baseline", 256, "ref")
    assert str(sm3) == "SM3"


def test_lookup_ignores_case_and_accepts_a_variant_or_an_instance():
    sm3 = ngcc.instance("SM3")
    assert ngcc.instance("sm3") is sm3
    assert ngcc.instance("SM3:ref") is sm3
    assert ngcc.instance(sm3) is sm3


def test_an_unknown_name_lists_close_matches():
    with pytest.raises(UnknownInstanceError) as caught:
        ngcc.instance("SM4")
    assert caught.value.close_matches == ["SM3"]
    assert isinstance(caught.value, LookupError)
    assert str(caught.value) == ("unknown instance 'SM4'. Did you mean: SM3? "
                                 "Run `ngcc list` to see every instance.")


def test_an_unknown_name_without_close_match_says_what_to_do():
    with pytest.raises(UnknownInstanceError, match="Run `ngcc list`") as caught:
        ngcc.instance("zzzzzzzz")
    assert caught.value.close_matches == []


def test_an_external_library_with_its_sidecar_is_an_instance(tmp_path):
    path = build_library(tmp_path, "Mine", FAILING_SOURCE, digest_bits=384)
    inst = ngcc.instance(str(path))
    assert (inst.name, inst.digest_bits, inst.variant) == ("Mine", 384, "external")
    assert not inst.builtin
    assert inst.library == path.resolve()
    assert ngcc.instance(tmp_path) == inst  # a folder holding exactly one library


def test_a_missing_path_is_an_unknown_instance(tmp_path):
    with pytest.raises(UnknownInstanceError):
        ngcc.instance(str(tmp_path / "absent.so"))


def test_a_library_without_sidecar_is_refused_by_name(tmp_path):
    path = build_library(tmp_path, "Bare", FAILING_SOURCE, sidecar=False)
    with pytest.raises(LibraryError, match=r"Bare\.so: no Bare\.so\.json beside it"):
        ngcc.instance(str(path))


def test_a_corrupt_sidecar_is_refused_by_name(tmp_path):
    path = build_library(tmp_path, "Broken", FAILING_SOURCE)
    (tmp_path / "Broken.so.json").write_text('{"name": "Broken"}')
    with pytest.raises(LibraryError, match=r"Broken\.so\.json: corrupt sidecar"):
        ngcc.instance(str(path))


def test_a_folder_without_exactly_one_library_is_refused(tmp_path):
    with pytest.raises(LibraryError, match="expected exactly one instance library"):
        ngcc.instance(tmp_path)
