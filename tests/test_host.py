"""The host check: warnings from synthetic fingerprints, this host's fingerprint, and the
one renderer that ``ngcc check``, ``ngcc info`` and the reports share."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from _fakes import ENVIRONMENT

from ngcc.evidence.model import Counter, Environment
from ngcc.measure import host as _host
from ngcc.measure import locks as _locks
from ngcc.report import host as _host_words

FIXED = replace(ENVIRONMENT, cpu=2, cpu_count=8, smt_siblings=(2,),
                load_average_start=(0.05, 0.1, 0.1),
                counter=Counter(name="rdtsc", frequency_hz=2.1e9, overhead_min=24,
                                overhead_median=26))


def codes(env):
    return [issue.code for issue in _host.host_warnings(env)]


def test_a_fixed_host_has_no_warning():
    assert codes(FIXED) == []


@pytest.mark.parametrize(("change", "code", "quoted"), [
    ({"governor": "powersave"}, "governor", "'powersave'"),
    ({"turbo": True}, "turbo", "no_turbo"),
    ({"smt_siblings": (2, 10)}, "smt", "CPU 10"),
    ({"virtualization": "kvm"}, "virtualization", "(kvm)"),
    ({"load_average_start": (1.73, 1.0, 0.5)}, "load", "1.73"),
    ({"counter": None}, "counter", "unknown"),
])
def test_each_defect_warns_quoting_value_and_remedy(change, code, quoted):
    issues = _host.host_warnings(replace(FIXED, **change))
    assert [issue.code for issue in issues] == [code]
    assert quoted in issues[0].message
    assert any(word in issues[0].message for word in ("remedy", "stop them", "bare metal",
                                                      "rebuild"))


def test_unknown_values_are_not_warnings():
    assert codes(replace(FIXED, governor=None, turbo=None)) == []


def test_parse_cpu_list():
    assert _host.parse_cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert _host.parse_cpu_list("5") == [5]
    assert _host.parse_cpu_list("") == []


def test_this_hosts_fingerprint_is_complete_and_serialisable():
    env = _host.fingerprint()
    assert isinstance(env, Environment)
    assert env.cpu == _locks.default_cpu()
    assert env.cpu in env.smt_siblings
    assert env.counter is not None and env.counter.frequency_hz > 0
    assert Environment.from_json(json.loads(json.dumps(env.to_json(), allow_nan=False))) == env
    rows = dict(_host_words.describe(env))
    assert "CPU %d" % env.cpu in rows["processor"]


def test_one_renderer_in_the_reports_words():
    rows = dict(_host_words.describe(replace(FIXED, cpu_max_mhz=None, governor=None, turbo=None,
                                       memory_mib=None, git_commit="38b161e0a2b4ffff",
                                       git_dirty=True)))
    assert rows["clock"] == "max unknown, governor unknown, turbo unknown, SMT off"
    assert rows["cycle counter"] == ("rdtsc, 2.100 GHz, overhead 24–26 ticks (min–median; "
                                     "recorded, not subtracted)")
    assert rows["memory"] == "—"
    assert rows["virtualization"] == "none detected"
    assert rows["software"].endswith("(git 38b161e0a2b4, uncommitted changes)")
    unknown = dict(_host_words.describe(replace(FIXED, git_commit=None, git_dirty=None)))
    assert unknown["software"].endswith("ngcc 0.1.0, git commit unknown (not a git checkout)")
    assert "None" not in "".join(unknown.values())
    assert "?" not in "".join(rows.values())
    assert _host_words.clock_text(replace(FIXED, cpu_max_mhz=2100.0)) == (
        "max 2.10 GHz, governor performance, turbo off, SMT off")   # the seeds' row


def test_check_command(capsys, monkeypatch):
    from ngcc.cli.main import main
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: FIXED)
    assert main(["check", "--strict"]) == 0
    assert "the host is fixed" in capsys.readouterr().out
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: replace(FIXED, turbo=True))
    assert main(["check"]) == 0
    assert main(["check", "--strict"]) == 1
    assert "warning: turbo/boost is on" in capsys.readouterr().out


def test_info_and_check_describe_the_host_alike(capsys, monkeypatch):
    from ngcc.cli.main import main
    monkeypatch.setattr(_host, "fingerprint", lambda cpu=None: FIXED)
    assert main(["info"]) == 0
    info = capsys.readouterr().out
    assert main(["check"]) == 0
    check = capsys.readouterr().out
    assert check.startswith(info)
    for item, value in _host_words.describe(FIXED):
        assert any(line.split(None, 1)[0] == item.split()[0] and line.rstrip().endswith(value)
                   for line in info.splitlines()), item
