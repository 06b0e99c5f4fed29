"""The KAT gate's rules, without generating a KAT file (the checker is a fake)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from _fakes import FakeKat

import ngcc
from ngcc.base import files as _files
from ngcc.evidence.model import BuildState
from ngcc.measure import gate as _gate


@pytest.mark.parametrize(("candidate", "verdict", "override", "expected"), [
    ("hash-34", "PASS", False, "pass"),
    ("baseline", "PASS", False, "pass"),
    ("baseline", "NOKAT", False, "baseline"),        # no official KAT for SM3, pseudoXOF
    ("hash-34", "NOKAT", False, "refused"),          # a candidate without a manifest line
    ("hash-34", "MISMATCH", False, "refused"),
    ("hash-34", "MISMATCH", True, "override"),
    ("baseline", "CRASH", False, "refused"),
    ("hash-22", "ERROR", True, "override"),
])
def test_gate(candidate, verdict, override, expected):
    assert _gate.gate(candidate, verdict, override) == expected


def test_check_keeps_what_still_holds_and_checks_the_rest(tmp_path):
    sm3, wchain = ngcc.instance("SM3"), ngcc.instance("WChain-V1-512")
    libraries = {"SM3": sm3, "WChain-V1-512": wchain}
    sha = {label: _files.sha256_file(inst.library) for label, inst in libraries.items()}
    checker = FakeKat({"WChain-V1-512": "ERROR"})
    first = _gate.check(checker, libraries, sha, ["2_12"], tmp_path, None, False, False, None)
    assert checker.checked == ["SM3", "WChain-V1-512"]
    assert [(e.label, e.kat.verdict, e.kat.gate) for e in first.values()] == [
        ("SM3", "NOKAT", "baseline"), ("WChain-V1-512", "ERROR", "refused")]
    assert first["SM3"].kat.log == "kat/baseline/SM3.log"
    assert first["SM3"].kat.log_sha256 == _files.sha256_file(tmp_path / "kat/baseline/SM3.log")
    assert first["SM3"].implementation.description == sm3.description
    stored = BuildState(run_id="r", libraries=tuple(first.values()))
    again = FakeKat()
    second = _gate.check(again, libraries, sha, ["2_12"], tmp_path, stored, False, False, None)
    assert again.checked == ["WChain-V1-512"]        # ERROR is checked again, NOKAT kept
    assert second["SM3"] == first["SM3"] and second["WChain-V1-512"].kat.verdict == "PASS"
    entry = first["SM3"]
    assert _gate.reusable(entry, sm3, sha["SM3"], ["2_12"], tmp_path)
    assert not _gate.reusable(entry, sm3, "0" * 64, ["2_12"], tmp_path)             # other bytes
    assert not _gate.reusable(entry, sm3, sha["SM3"], ["2_12", "2_23"], tmp_path)   # other files
    assert not _gate.reusable(replace(entry, instance="SM3-other"), sm3, sha["SM3"], ["2_12"],
                              tmp_path)
    log = tmp_path / entry.kat.log
    log.write_text("RESULT baseline SM3 PASS\n")                             # a forged log
    assert not _gate.reusable(entry, sm3, sha["SM3"], ["2_12"], tmp_path)
    log.unlink()                                                              # a deleted one
    assert not _gate.reusable(entry, sm3, sha["SM3"], ["2_12"], tmp_path)
    third = FakeKat()
    _gate.check(third, libraries, sha, ["2_12"], tmp_path, stored, False, False, None)
    assert third.checked == ["SM3", "WChain-V1-512"]  # the log is gone: SM3 checked again
    assert log.is_file()


def test_refusal_says_what_to_do(tmp_path):
    sm3 = ngcc.instance("SM3")
    entry = _gate.build_entry(sm3, "SM3", "0" * 64, "CRASH", ["2_12"], tmp_path, False)
    message = _gate.refusal("SM3", entry, tmp_path)
    assert "SM3: KAT verdict CRASH" in message and "--allow-kat-fail" in message
    assert str(tmp_path / "kat/baseline/SM3.log") in message
