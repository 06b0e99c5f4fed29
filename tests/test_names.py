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


def test_numbers_in_names_sort_by_value():
    names = ["Bar-1024", "bar-768", "Bar-XOF", "Bar-512", "Bar-2048@opt", "Bar-512@opt"]
    assert sorted(names, key=_names.natural_key) == [
        "Bar-512", "Bar-512@opt", "bar-768", "Bar-1024", "Bar-2048@opt", "Bar-XOF"]


def test_an_archives_folders_come_in_the_order_of_their_sizes(tmp_path):
    """``Bar-512`` before ``Bar-1024``: so an evaluation's libraries, its plan and its
    pages list the instance sizes in order, not as text."""
    from ngcc.library.archive import find_folders

    for size in (1024, 512, 768):
        folder = tmp_path / "Bar" / "Reference_Implementation" / ("Bar-%d" % size)
        folder.mkdir(parents=True)
        (folder / "CryptHash_AlgorithmInstance.h").write_text("")
    assert [f.path.name for f in find_folders(tmp_path / "Bar")] == [
        "Bar-512", "Bar-768", "Bar-1024"]
