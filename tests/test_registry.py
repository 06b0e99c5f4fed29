"""The instance registry: built-in instances, lookup by name, external library paths."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import platform
import re
import subprocess
from pathlib import Path

import pytest
from _testlib import FAILING_SOURCE, build_library, compiler

import ngcc
from ngcc import _core
from ngcc.base.errors import LibraryError, UnknownInstanceError
from ngcc.cli.main import main
from ngcc.library import registry as _registry
from ngcc.library.registry import CANDIDATES, Instance

REPO = Path(__file__).resolve().parents[1]


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
    with pytest.raises(UnknownInstanceError, match=r"^no such file: .*absent\.so"):
        ngcc.instance(str(tmp_path / "absent.so"))
    with pytest.raises(ngcc.LibraryNotFoundError, match=r"^no such file: built/X\.so "):
        ngcc.instance("built/X.so")


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


# ------------------------------------------------------------ variants, CPU features

def test_every_variant_carries_its_facts():
    every = ngcc.instances(all_variants=True)
    assert set(ngcc.instances()) <= set(every)
    for inst in every:
        assert inst.description, inst.key
        assert isinstance(inst.constant_time, bool), inst.key
        assert all(isinstance(f, str) and f for f in inst.cpu_features), inst.key
        assert ngcc.instances(all_variants=True).count(inst) == 1, inst.key
        if not inst.missing_cpu_features:
            assert ngcc.instance(inst.key) == inst


def test_the_bare_name_is_the_ref_variant():
    for inst in ngcc.instances():
        assert inst.variant == "ref", inst.name
        assert ngcc.instance("%s:ref" % inst.name) is inst


def test_cpu_features_agree_with_proc_cpuinfo():
    flags_lines = [line for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith(("flags", "Features"))]
    if not flags_lines or platform.machine() != "x86_64":
        pytest.skip("not an x86-64 Linux machine")
    flags = set(flags_lines[0].split(":", 1)[1].split())
    have = _core.cpu_features()
    assert isinstance(have, frozenset)
    assert have <= flags, "cpuid reports features the kernel does not: %s" % (have - flags)
    for name in ("sse2", "ssse3", "sse4_1", "sse4_2", "pclmulqdq", "aes", "avx", "avx2",
                 "bmi1", "bmi2", "sha_ni", "vaes", "avx512f", "avx512bw", "avx512vl",
                 "avx512vbmi"):
        assert (name in have) == (name in flags), name


def _needing(feature: str) -> Instance:
    """SM3's library, declared as an `opt` variant that needs ``feature``."""
    return dataclasses.replace(ngcc.instance("SM3"), variant="opt", cpu_features=(feature,))


def test_a_variant_needing_a_feature_no_cpu_has_is_refused_everywhere(tmp_path):
    impossible = _needing("no_such_feature")
    assert impossible.missing_cpu_features == ("no_such_feature",)
    expected = r"SM3:opt needs the CPU feature no_such_feature, which this CPU lacks"
    with pytest.raises(LibraryError, match=expected):
        ngcc.instance(impossible)
    with pytest.raises(LibraryError, match=expected):
        ngcc.hash(impossible, b"abc")
    with pytest.raises(LibraryError, match=expected):
        ngcc.time_calls(impossible, 64, calls=10)
    with pytest.raises(LibraryError, match=expected):
        ngcc.kat.check(impossible, files="2_12", out_dir=tmp_path)
    with pytest.raises(LibraryError, match=expected):
        ngcc.Campaign([impossible], run_dir=tmp_path / "run", quick=True)
    assert not (tmp_path / "run").exists()


def test_a_builtin_variant_is_refused_by_name_when_the_cpu_lacks_its_features(monkeypatch):
    table = dict(_registry._builtin())
    table["SM3:opt"] = _needing("avx2")
    monkeypatch.setattr(_registry, "_builtin", lambda: table)
    monkeypatch.setattr(_registry, "cpu_features", lambda: frozenset({"aes", "ssse3"}))
    for name in ("SM3:opt", "sm3:OPT"):
        with pytest.raises(LibraryError, match=r"SM3:opt needs the CPU feature avx2, which "
                                               r"this CPU lacks \(cpuid\); use SM3:ref"):
            ngcc.instance(name)
        with pytest.raises(LibraryError, match="avx2"):
            ngcc.hash(name, b"abc")
    assert ngcc.instance("SM3").variant == "ref"  # the portable variant still runs


def test_every_builtin_variant_needing_features_is_refused_without_them(monkeypatch):
    needy = [i for i in ngcc.instances(all_variants=True) if i.cpu_features]
    monkeypatch.setattr(_registry, "cpu_features", lambda: frozenset())
    for inst in needy:
        with pytest.raises(LibraryError, match=r"needs the CPU features? %s"
                           % re.escape(", ".join(inst.cpu_features))):
            ngcc.instance(inst.key)
    for inst in ngcc.instances():
        assert not inst.cpu_features and ngcc.instance(inst.name) is inst


def test_ngcc_list_says_which_variants_this_cpu_cannot_run(monkeypatch, capsys):
    monkeypatch.setattr(_registry, "cpu_features", lambda: frozenset())
    assert main(["list"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    for inst in ngcc.instances(all_variants=True):
        row = rows[inst.name if inst.variant == "ref" else inst.key]
        if inst.cpu_features:
            assert row.endswith("no (lacks %s)" % ",".join(inst.cpu_features)), row
        else:
            assert row.endswith("yes"), row


def _setup_module(monkeypatch):
    """setup.py's functions, without running setup()."""
    import setuptools
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    spec = importlib.util.spec_from_file_location("ngcc_setup", REPO / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_setup_skips_a_variant_whose_flags_the_compiler_rejects(monkeypatch, tmp_path):
    setup = _setup_module(monkeypatch)
    cc = compiler()
    assert setup._unsupported_flags(cc, setup._variant_cflags({}), tmp_path) is None
    reason = setup._unsupported_flags(
        cc, setup._variant_cflags({"cflags": ["-mno-such-extension"]}), tmp_path)
    assert reason and "no-such-extension" in reason


def test_registry_json_records_each_variant_and_what_was_skipped():
    registry = json.loads((_registry.LIB_DIR / "registry.json").read_text())
    assert isinstance(registry["skipped_variants"], list)
    for entry in registry["instances"]:
        assert isinstance(entry["cpu_features"], list), entry["library"]
        assert isinstance(entry["constant_time"], bool), entry["library"]
        assert entry["description"], entry["library"]


_CPU_FEATURES_PROGRAM = r"""
#include <stdio.h>
#include "cpu_features.h"
int main(int argc, char **argv)
{
    char missing[64];
    size_t i, count = ngcc_cpu_missing((const char *const *)argv + 1, (size_t)argc - 1,
                                       missing, sizeof missing);
    printf("%zu %s\n", count, missing);
    for (i = 0; ngcc_cpu_feature_name(i) != NULL; i++)
        if (ngcc_cpu_has(ngcc_cpu_feature_name(i)))
            printf("%s\n", ngcc_cpu_feature_name(i));
    return 0;
}
"""


def test_the_c_feature_check_agrees_with_the_binding(tmp_path):
    """csrc/common/cpu_features.c on its own, as the C trial driver uses it: the features it
    reports are _core.cpu_features(), and the missing list names exactly the absent
    ones, comma-separated (truncated, but still counted, when the buffer is short)."""
    source = tmp_path / "features.c"
    source.write_text(_CPU_FEATURES_PROGRAM)
    program = tmp_path / "features"
    subprocess.run(compiler() + ["-std=c99", "-Wall", "-Wextra", "-Werror", "-I",
                                 str(REPO / "csrc" / "common"), "-o", str(program), str(source),
                                 str(REPO / "csrc" / "common" / "cpu_features.c")], check=True)
    have = _core.cpu_features()
    absent = sorted(f for f in ("avx512f", "sha_ni", "aes", "avx2") if f not in have)
    asked = ["sse2", "no_such_feature", *absent, "x" * 70]
    lines = subprocess.run([str(program), *asked], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    count, _, listed = lines[0].partition(" ")
    assert int(count) == len(asked) - (1 if "sse2" in have else 0)
    assert listed == ",".join((["sse2"] if "sse2" not in have else [])
                              + ["no_such_feature", *absent])
    assert set(lines[1:]) == have


# ------------------------------------------------------------------------------ labels

def _copy(folder: Path, like: str = "SM3", **sidecar) -> Instance:
    """A copy of a built-in library with a sidecar, as ``ngcc build`` would leave it."""
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / ("%s.so" % like)
    library.write_bytes(ngcc.instance(like).library.read_bytes())
    (folder / ("%s.so.json" % like)).write_text(json.dumps(
        {"name": like, "digest_bits": ngcc.instance(like).digest_bits, **sidecar}))
    return ngcc.instance(str(library))


def test_labels_tell_every_library_of_a_run_apart(tmp_path):
    builtin = ngcc.instance("SM3")
    built = _copy(tmp_path / "built")
    perf = _copy(tmp_path / "built" / "perf")
    opt = _copy(tmp_path / "built" / "opt")
    # the built-in instance keeps its bare name wherever it is listed
    assert _registry.run_labels([built, perf, opt, builtin]) == [
        "SM3@built", "SM3@perf", "SM3@opt", "SM3"]
    # alone, still not the built-in's name (issue 36): its folder
    assert _registry.run_labels([built]) == ["SM3@built"]
    # two builds without the built-in: neither reads as the built-in instance
    assert _registry.run_labels([built, perf]) == ["SM3@built", "SM3@perf"]
    same_folder = _copy(tmp_path / "x" / "built")
    assert _registry.run_labels([builtin, built, same_folder]) == ["SM3", "SM3@built",
                                                                   "SM3@x"]
    assert _registry.run_labels([builtin, built], [None, "mine"]) == ["SM3", "mine"]
    labelled = _copy(tmp_path / "l", label="from-sidecar")
    assert labelled.label == "from-sidecar"
    assert _registry.run_labels([labelled, builtin]) == ["from-sidecar", "SM3"]
    # a sidecar that labels its library with a built-in name (a cross-build of the
    # built-ins, .ci/aarch64) is the library's claim: dropped, its folder instead ...
    claims = _copy(tmp_path / "lib", label="SM3")
    assert _registry.run_labels([claims]) == ["SM3@lib"]
    # ... where the user giving that name is refused
    with pytest.raises(ValueError, match="'SM3' is the name of a built-in"):
        _registry.run_labels([built], ["SM3"])


def test_default_label_of_a_variant():
    for inst in ngcc.instances(all_variants=True):
        expected = inst.name if ngcc.instance(inst.name) == inst else "%s@%s" % (
            inst.name, inst.variant)
        assert _registry.default_label(inst) == expected
    assert _registry.default_label(ngcc.instance("SM3")) == "SM3"
    other = dataclasses.replace(ngcc.instance("SM3"), variant="opt")
    assert _registry.default_label(other) == "SM3@opt"
