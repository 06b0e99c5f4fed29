"""One settings schema behind every entry point: each setting's default, quick default,
choices, help and flag written once (``campaign/schema``, beside the fields of
``campaign/settings``), the settings checked however they are made, and the command
line built from the schema (``cli/options``)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

import ngcc
from ngcc.base.errors import SettingError, UnknownSettingError
from ngcc.campaign import schema as _schema
from ngcc.campaign import settings as _settings
from ngcc.campaign.settings import CampaignSettings
from ngcc.cli import campaign as _cli_campaign
from ngcc.cli import main as _cli
from ngcc.cli import options as _options
from ngcc.cli import summary as _summary
from ngcc.measure import leak_measurement as _leak

#: The numbers of options that are no setting, by option: the constant each states.
CONSTANTS = {"--wide": _summary.WIDTH, "--leak-length": _leak.DEFAULT_LENGTH}
#: The options several commands share, each written once (``cli/options``).
SHARED = ("--cpu", "--label", "--out", "--run-dir", "--quick", "--lengths", "--kat-files",
          "--trials")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = _cli.build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize(("given", "setting"), [
    ({"trials": -1}, "trials"), ({"trials": 1.5}, "trials"), ({"trials": True}, "trials"),
    ({"trial_target": float("inf")}, "trial_target"), ({"op_budget": 0}, "op_budget"),
    ({"lengths": (0,)}, "lengths"), ({"statistic": "mode"}, "statistic"),
    ({"order": "random"}, "order"), ({"kat_files": ("2_99",)}, "kat_files"),
    ({"max_trials": 2}, "max_trials"), ({"leak_calls": 0}, "leak_calls"),
    ({"wait": -1}, "wait"), ({"target_ci": "5"}, "target_ci")])
def test_the_settings_are_checked_however_they_are_made(given, setting, tmp_path):
    """Directly, by ``make`` and by ``Campaign``'s keywords alike: a ValueError that is an
    ngcc error, naming the setting."""
    for make in (CampaignSettings, CampaignSettings.make,
                 lambda **kw: ngcc.Campaign(["SM3"], run_dir=tmp_path / "run", **kw)):
        with pytest.raises(SettingError, match=r"^%s\b|\b%s\b" % (setting, setting)) as refused:
            make(**given)
        assert isinstance(refused.value, ValueError) and refused.value.setting == setting


def test_a_wrong_keyword_is_one_line_naming_the_nearest_setting():
    with pytest.raises(UnknownSettingError) as refused:
        ngcc.Campaign(["SM3"], length=[32])
    assert str(refused.value) == "no campaign setting 'length' (did you mean lengths?)"
    assert isinstance(refused.value, TypeError)
    with pytest.raises(UnknownSettingError, match=r"^no campaign setting 'zzz' \(see "):
        CampaignSettings.make(zzz=1)


def test_make_resolves_the_quick_defaults_from_the_schema():
    quick, plain = CampaignSettings.make(quick=True), CampaignSettings.make()
    for name in ("trials", "trial_target", "op_budget"):
        spec = _schema.spec(CampaignSettings, name)
        assert getattr(quick, name) == spec.quick != getattr(plain, name)
        assert getattr(plain, name) == _schema.default(CampaignSettings, name)
    assert quick.max_trials == quick.trials and plain.max_trials == plain.trials
    assert CampaignSettings.make(target_ci=5).max_trials == dict(
        _schema.spec(CampaignSettings, "max_trials").facts)["cap"]


def test_one_run_directory_default(monkeypatch):
    monkeypatch.setattr(_settings, "run_id_now", lambda: "20260101T000000Z")
    expected = Path("runs") / "20260101T000000Z"
    args = _cli.build_parser().parse_args(["campaign", "SM3"])
    assert CampaignSettings().run_dir == CampaignSettings.make().run_dir == expected
    assert _cli_campaign._settings(args).run_dir == expected
    evaluate = _cli.build_parser().parse_args(["evaluate", "archive"])
    assert CampaignSettings.make(**_options.settings_of(evaluate)).run_dir == expected


def test_the_command_line_settings_are_the_schema_defaults():
    args = _cli.build_parser().parse_args(["campaign", "SM3", "--run-dir", "r"])
    made = _cli_campaign._settings(args)
    for name in _schema.fields(CampaignSettings):
        if name not in ("run_dir", "command", "labels"):
            assert getattr(made, name) == _schema.default(CampaignSettings, name), name


@pytest.mark.parametrize("command", ["campaign", "evaluate"])
def test_the_parsers_options_are_the_schemas(command):
    """Every setting option of ``campaign`` and ``evaluate``: the schema's flag, choices
    and help, word for word."""
    parser = _subparsers()[command]
    found = 0
    for action in parser._actions:
        if action.dest in _schema.fields(CampaignSettings) and action.option_strings \
                and action.dest not in ("wait", "labels"):
            spec = _schema.spec(CampaignSettings, action.dest)
            assert action.option_strings == [spec.flag]
            assert action.help == _schema.help_of(CampaignSettings, action.dest).replace(
                "%", "%%")
            assert tuple(action.choices or ()) == spec.choices
            found += 1
    assert found >= (20 if command == "campaign" else 6)


def _numbers(text: str) -> set[float]:
    """The numbers a text states: ``0.02``, ``900``, ``95``; not those inside a name
    (``2_12``, ``x86``, ``cpu=1``, ``KAT_*``)."""
    return {float(n) for n in re.findall(r"(?<![\w.=^/-])\d+(?:\.\d+)?(?![\w.])", text)}


def _schema_numbers(name: str) -> set[float]:
    spec = _schema.spec(CampaignSettings, name)
    values = [_schema.default(CampaignSettings, name), spec.quick, *spec.choices,
              *(value for _, value in spec.facts),
              *(_schema.spec(CampaignSettings, n).quick for n in _schema.fields(
                  CampaignSettings))]
    return _numbers(" ".join(_schema.shown(v) for v in values if v is not None))


def test_no_help_states_a_number_the_schema_does_not_give():
    """The help of every option of ``campaign`` and ``evaluate``, and of every shared
    option of any command: each number it states is its setting's (default, quick
    default, choices, the facts it names) or, for an option that is no setting, the
    option's own default."""
    checked = 0
    for command, parser in _subparsers().items():
        for action in parser._actions:
            if not action.help or not (command in ("campaign", "evaluate") or set(
                    action.option_strings) & set(SHARED)):
                continue
            allowed = _numbers(" ".join(str(v) for v in (
                action.default, action.const, *(CONSTANTS.get(o) for o in action.option_strings))
                if isinstance(v, (int, float))))
            if action.dest in _schema.fields(CampaignSettings):
                allowed |= _schema_numbers(action.dest)
            stated = _numbers(action.help % {"default": action.default}
                              if "%(default)" in action.help else action.help)
            assert stated <= allowed, (command, action.option_strings, stated - allowed)
            checked += 1
    assert checked > 40


def test_the_shared_options_are_written_once():
    """``--cpu``, ``--label``, ``--out``, ... are added by ``cli/options`` only."""
    cli = Path(_cli.__file__).parent
    for path in sorted(cli.glob("*.py")):
        text = path.read_text()
        for option in SHARED:
            assert 'add_argument("%s"' % option not in text or path.name == "options.py", (
                path.name, option)


def test_trials_zero_names_the_option(capsys):
    assert _cli.main(["campaign", "SM3", "--trials", "0"]) == 2
    err = capsys.readouterr().err
    assert "--trials" in err and "positive whole number" in err and len(err.splitlines()) == 1


def test_a_settings_docstring_is_the_schemas():
    for name in _schema.fields(CampaignSettings):
        assert "    %s: %s" % (name, _schema.help_of(CampaignSettings, name)) \
            in CampaignSettings.__doc__
