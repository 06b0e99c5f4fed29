"""The host check: warnings from synthetic fingerprints, and this host's fingerprint."""

from __future__ import annotations

import json

import pytest

from ngcc import _host

FIXED = {
    "cpu": 2, "cpu_count": 8, "governor": "performance", "turbo": False,
    "smt_siblings": [2], "virtualization": None, "load_average_start": [0.05, 0.1, 0.1],
    "counter": {"name": "rdtsc", "frequency_hz": 2.1e9, "overhead_min": 24,
                "overhead_median": 26},
}


def codes(env):
    return [issue.code for issue in _host.host_warnings(env)]


def test_a_fixed_host_has_no_warning():
    assert codes(FIXED) == []


@pytest.mark.parametrize(("change", "code", "quoted"), [
    ({"governor": "powersave"}, "governor", "'powersave'"),
    ({"turbo": True}, "turbo", "no_turbo"),
    ({"smt_siblings": [2, 10]}, "smt", "CPU 10"),
    ({"virtualization": "kvm"}, "virtualization", "(kvm)"),
    ({"load_average_start": [1.73, 1.0, 0.5]}, "load", "1.73"),
    ({"counter": None}, "counter", "unknown"),
])
def test_each_defect_warns_quoting_value_and_remedy(change, code, quoted):
    issues = _host.host_warnings({**FIXED, **change})
    assert [issue.code for issue in issues] == [code]
    assert quoted in issues[0].message
    assert any(word in issues[0].message for word in ("remedy", "stop them", "bare metal",
                                                      "rebuild"))


def test_unknown_values_are_not_warnings():
    assert codes({**FIXED, "governor": None, "turbo": None}) == []


def test_parse_cpu_list():
    assert _host.parse_cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert _host.parse_cpu_list("5") == [5]
    assert _host.parse_cpu_list("") == []


def test_this_hosts_fingerprint_is_complete_and_serialisable():
    env = _host.fingerprint()
    assert env["cpu"] == _host.default_cpu()
    for key in ("cpu_model", "machine", "cpu_count", "cpu_max_mhz", "governor", "turbo",
                "smt_siblings", "virtualization", "perf_event_paranoid", "memory_mib",
                "counter", "load_average_start", "kernel", "os", "compiler", "python",
                "numpy", "ngcc_version", "git_commit", "git_dirty"):
        assert key in env
    assert env["cpu"] in env["smt_siblings"]
    assert env["counter"]["frequency_hz"] > 0
    json.dumps(env, allow_nan=False)
    rows = dict(_host.describe(env))
    assert "CPU %d" % env["cpu"] in rows["processor"]


def test_check_command(capsys, monkeypatch):
    from ngcc._cli import main
    real = _host.fingerprint
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: {**real(cpu), **FIXED})
    assert main(["check", "--strict"]) == 0
    assert "the host is fixed" in capsys.readouterr().out
    monkeypatch.setattr(_host, "fingerprint",
                        lambda cpu=None: {**real(cpu), **FIXED, "turbo": True})
    assert main(["check"]) == 0
    assert main(["check", "--strict"]) == 1
    assert "warning: turbo/boost is on" in capsys.readouterr().out
