"""The one form of a time ngcc writes (ngcc/base/clock.py), and that it is written only there."""

from __future__ import annotations

import re

from conftest import REPO

from ngcc.base import clock as _clock
from ngcc.evidence import model as _model


def test_now_is_the_form_the_model_checks():
    now = _clock.utc_now()
    assert re.fullmatch(r"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ", now)
    assert _model._UTC.fullmatch(now)
    assert re.fullmatch(r"20\d{6}T\d{6}Z", _clock.run_id_now())


def test_no_other_module_spells_the_form():
    clock = REPO / "ngcc" / "base" / "clock.py"
    spelled = [str(path) for path in sorted((REPO / "ngcc").rglob("*.py"))
               if path != clock and re.search(r"%H.?%M", path.read_text())]
    assert clock.is_file()
    assert spelled == []
