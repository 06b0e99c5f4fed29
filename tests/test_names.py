"""The name rule and the paths built from names (ngcc/base/names.py)."""

import pytest

from ngcc.base import names as _names
from ngcc.base.errors import InvalidNameError


@pytest.mark.parametrize("name", ["Wish512", "WChain-V1-512", "Pavelor-512@perf", "a.b+c_d",
                                  "x" * 80])
def test_valid_names_pass(name):
    assert _names.check_name(name) == name


@pytest.mark.parametrize("name", ["", "../../PWNED-build", "a/b", ".hidden", "-flag", "x" * 81,
                                  "a b", "a\x00b", "é", 7, None])
def test_invalid_names_are_refused_with_the_rule(name):
    with pytest.raises(InvalidNameError, match="not a valid name: use letters"):
        _names.check_name(name, "instance name")


def test_inside_refuses_escapes(tmp_path):
    assert _names.inside(tmp_path, "records/hash-34/X.json") == tmp_path / "records/hash-34/X.json"
    for bad in ("../x", "/etc/passwd", "records/../../x"):
        with pytest.raises(InvalidNameError):
            _names.inside(tmp_path, bad)
    (tmp_path / "link").symlink_to("/tmp")
    with pytest.raises(InvalidNameError, match="outside"):
        _names.inside(tmp_path, "link/x")


def test_assign_labels_keeps_the_first_bare_and_tells_clashes_apart():
    labels = _names.assign_labels(
        ["Pavelor-512", "Pavelor-512", "Pavelor-512", "Pavelor-512"],
        [None, None, None, None], [[], ["built"], ["perf", "built"], ["opt", "built"]])
    assert labels == ["Pavelor-512", "Pavelor-512@built", "Pavelor-512@perf", "Pavelor-512@opt"]
    assert _names.assign_labels(["A", "A", "A"], [None, None, None], [[], ["x"], ["x"]]) == \
        ["A", "A@x", "A@2"]


def test_assign_labels_refuses_duplicate_explicit_labels():
    with pytest.raises(InvalidNameError, match="given to two"):
        _names.assign_labels(["A", "B"], ["same", "same"], [[], []])
    with pytest.raises(InvalidNameError):
        _names.assign_labels(["A"], ["../x"], [[]])


def test_labels_differing_only_in_case_clash():
    assert _names.assign_labels(["SM3", "sm3"], [None, None], [[], ["mine"]]) == \
        ["SM3", "sm3@mine"]
    with pytest.raises(InvalidNameError, match="two libraries"):
        _names.assign_labels(["A", "B"], ["Same", "SAME"], [[], []])
    assert _names.unique_label("X@opt", {"x@opt", "x@opt@a-b"}, ["a b"]) == "X@opt@2"
