"""``ngcc.base.progress``: a bar on a terminal, plain lines without one, nothing when off."""

from __future__ import annotations

import io
import sys
import types

import pytest

from ngcc.base import progress as _progress
from ngcc.base.progress import Progress, choose_mode, clock, jupyter_kernel, progress_of


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_a_terminal_one_line_per_item_and_no_carriage_return():
    stream = io.StringIO()
    progress = Progress(stream=stream)
    assert progress.mode == "lines"
    with progress.task("measure", total=10.0, items=2) as task:
        task.status("SM3 64 B")                 # no line for what is under way
        task.advance(4.0)
        task.item_done("SM3 64 B", "34.2 ticks/byte")
        task.advance(6.0)
        task.item_done("SM3 1024 B", "21.3 ticks/byte")
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("measure 1/2: SM3 64 B  34.2 ticks/byte (elapsed 0:00, ETA ")
    assert lines[1] == "measure 2/2: SM3 1024 B  21.3 ticks/byte (elapsed 0:00)"
    assert len(lines) == 2 and "\r" not in stream.getvalue()


def test_a_task_of_one_item_says_how_it_ended():
    stream = io.StringIO()
    with Progress("lines", stream).task("KAT_2_12_SM3") as task:
        task.set_total(100)
        task.update_to(100)
        task.finished("generated in 0.05 s")
    assert stream.getvalue() == "KAT_2_12_SM3: generated in 0.05 s\n"


def test_on_a_terminal_a_bar_and_off_nothing():
    terminal = _Terminal()
    progress = Progress(stream=terminal)
    assert progress.mode == "bar"
    with progress.task("calibrate", total=2) as task:
        task.status("SM3 32 B")
        task.advance(1)
        task.item_done("SM3 32 B")           # a bar shows it; no extra line
    assert "calibrate:" in terminal.getvalue() and "%|" in terminal.getvalue()
    assert "calibrate 1/2" not in terminal.getvalue()
    quiet = io.StringIO()
    with Progress("off", quiet).task("measure", total=1) as task:
        task.advance(1)
        task.item_done("SM3 32 B", "x")
        task.finished("done")
    Progress("off", quiet).line("hello")
    assert quiet.getvalue() == ""


def test_a_bar_waits_until_the_amount_of_work_is_known():
    terminal = _Terminal()
    with Progress("bar", terminal).task("KAT_2_12_SM3") as task:
        assert terminal.getvalue() == ""          # total 0: no bar of nothing
        task.set_total(10)
        task.update_to(5)
    assert "KAT_2_12_SM3:" in terminal.getvalue()


def test_eta_from_the_pace_so_far(monkeypatch):
    now = [100.0]
    monkeypatch.setattr("ngcc.base.progress.time.monotonic", lambda: now[0])
    task = Progress("off").task("measure", total=100.0)
    assert task.eta() is None
    now[0] += 30.0
    task.advance(25.0)
    assert task.eta() == pytest.approx(90.0)
    task.advance(1000.0)                          # never past the total
    assert task.done == 100.0 and task.eta() == 0.0


def test_clock_and_modes():
    assert [clock(s) for s in (0, 7.4, 750, 3723, None)] == ["0:00", "0:07", "12:30",
                                                              "1:02:03", "?"]
    assert progress_of(False).mode == "off" and progress_of(None).mode == "off"
    mine = Progress("lines")
    assert progress_of(mine) is mine
    with pytest.raises(ValueError, match="progress mode"):
        Progress("loud")  # type: ignore[arg-type]


def test_auto_chooses_a_widget_in_jupyter_with_ipywidgets_and_lines_without():
    assert choose_mode(terminal=False, kernel=True, widgets=True) == "notebook"
    assert choose_mode(terminal=False, kernel=True, widgets=False) == "lines"
    assert choose_mode(terminal=True, kernel=True, widgets=False) == "lines"
    assert choose_mode(terminal=True, kernel=False, widgets=False) == "bar"
    assert choose_mode(terminal=False, kernel=False, widgets=True) == "lines"


class ZMQInteractiveShell:  # what a Jupyter kernel's get_ipython() returns
    pass


class TerminalInteractiveShell:  # plain IPython in a terminal
    pass


def _ipython(monkeypatch, shell) -> None:
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))


def test_a_jupyter_kernel_is_told_from_ipython_in_a_terminal(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert not jupyter_kernel()                     # IPython not loaded: not asked
    _ipython(monkeypatch, TerminalInteractiveShell())
    assert not jupyter_kernel()
    _ipython(monkeypatch, None)
    assert not jupyter_kernel()
    _ipython(monkeypatch, ZMQInteractiveShell())
    assert jupyter_kernel()


@pytest.mark.parametrize("widgets", [True, False])
def test_in_a_kernel_auto_draws_tqdms_widget_or_prints_lines(monkeypatch, widgets):
    _ipython(monkeypatch, ZMQInteractiveShell())
    monkeypatch.setattr(_progress.importlib.util, "find_spec",
                        lambda name: object() if widgets and name == "ipywidgets" else None)
    made = []

    class Widget:  # stands for tqdm.notebook.tqdm, which needs a live kernel
        def __init__(self, **options):
            made.append(options)
            self.total, self.n = options["total"], 0

        def refresh(self) -> None: ...
        def close(self) -> None: ...
        def set_postfix_str(self, text: str) -> None: ...

    monkeypatch.setattr("tqdm.notebook.tqdm", Widget)
    stream = io.StringIO()
    progress = Progress(stream=stream)
    with progress.task("measure", total=2, items=2) as task:
        task.advance(1)
        task.item_done("SM3 32 B", "34.2 ticks/byte")
    assert progress.mode == ("notebook" if widgets else "lines")
    assert [m["desc"] for m in made] == (["measure"] if widgets else [])
    assert (stream.getvalue() == "") == widgets      # lines only without the widget
