"""ngcc's own warnings, wherever Python shows them (a Jupyter session, a script), are one
line without a source line; every other warning keeps Python's format."""

from __future__ import annotations

import subprocess
import sys
import warnings

import ngcc
from ngcc.base import errors as _errors

USER_SESSION = """
import warnings
import ngcc
warnings.warn(ngcc.TrialFlagWarning("trial 3 was preempted: rerun", "preempted"))
warnings.warn(ngcc.MeasurementWarning("the host is busy"))
warnings.warn("their own warning")
"""


def test_a_session_shows_ngccs_warnings_as_one_line_and_others_as_before(tmp_path):
    done = subprocess.run([sys.executable, "-c", USER_SESSION], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=True)
    lines = done.stderr.splitlines()
    assert lines[:2] == ["ngcc: TrialFlagWarning: trial 3 was preempted: rerun",
                         "ngcc: MeasurementWarning: the host is busy"]
    assert lines[2:] == ["<string>:6: UserWarning: their own warning"]


def test_the_format_is_installed_once_and_leaves_other_categories_alone():
    installed = warnings.formatwarning
    _errors.show_measurement_warnings_as_one_line()  # again: no second wrapper
    assert warnings.formatwarning is installed
    formatted = warnings.formatwarning(ngcc.MeasurementWarning("m"), ngcc.MeasurementWarning,
                                       "/x/ngcc/measure/host.py", 12, "warnings.warn(m)")
    assert formatted == "ngcc: MeasurementWarning: m\n"
    other = warnings.formatwarning("u", DeprecationWarning, "/x/user.py", 3, "call()")
    assert other == "/x/user.py:3: DeprecationWarning: u\n  call()\n"
