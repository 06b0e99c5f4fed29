"""Progress of long work, on stderr: a bar on a terminal or in Jupyter, plain lines
otherwise, or nothing.

One reporter for every long task (the campaign's phases, ``ngcc kat``'s files,
``ngcc leak``'s calls). On a terminal it draws a tqdm bar per task; in a Jupyter
kernel a tqdm widget bar where ipywidgets is installed (lines where not); written to a file
or a pipe it prints one plain line per finished item (what, its figure, elapsed time,
ETA) and never a carriage return, so a log stays readable; turned off it prints
nothing. Library code reports through a :class:`Progress` it was given; it never
prints by itself.

    progress = Progress()                       # "auto": bar on a tty, lines otherwise
    with progress.task("measure", total=12.0, items=4) as task:
        task.status("SM3 64 B")                 # what is under way (the bar's postfix)
        task.advance(3.0)                       # work done, in the task's unit
        task.item_done("SM3 64 B", "34.2 ticks/byte")   # a line without a terminal
"""

from __future__ import annotations

import importlib.util
import sys
import time
from types import TracebackType
from typing import Any, Literal, TextIO

from ngcc.base.untrusted import plain

Mode = Literal["auto", "bar", "notebook", "lines", "off"]
MODES = ("auto", "bar", "notebook", "lines", "off")
#: The bar format of every task: ``measure:  40%|████      | 00:12<00:18 SM3 64 B``.
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}{postfix}"


def clock(seconds: float | None) -> str:
    """``0:07``, ``12:30``, ``1:02:03`` (``?`` when unknown)."""
    if seconds is None or seconds != seconds or seconds == float("inf"):
        return "?"
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return "%d:%02d:%02d" % (hours, minutes, secs) if hours else "%d:%02d" % (minutes, secs)


def jupyter_kernel() -> bool:
    """Whether this process is a Jupyter kernel (an IPython shell that talks over ZMQ:
    JupyterLab, Notebook, VS Code); IPython is asked only when it is loaded already."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


def choose_mode(terminal: bool, kernel: bool, widgets: bool) -> Mode:
    """What ``auto`` is: a widget bar in a Jupyter kernel that has ipywidgets (tqdm's
    notebook bar needs it), a text bar on a terminal, else lines (a log, a pipe, a
    kernel without widgets: its stream would show every redraw of a text bar)."""
    if kernel:
        return "notebook" if widgets else "lines"
    return "bar" if terminal else "lines"


class Progress:
    """Where progress goes: ``bar`` (tqdm bars), ``notebook`` (tqdm's Jupyter widget
    bars), ``lines`` (one line per finished item, no ``\\r``), ``off`` (nothing), or
    ``auto`` (:func:`choose_mode`: the widget bar in a Jupyter kernel with ipywidgets,
    ``bar`` when ``stream`` is a terminal, else ``lines``).

    Args:
        mode: one of the four modes.
        stream: where to write (default: ``sys.stderr`` at the time of each write).
    """

    def __init__(self, mode: Mode = "auto", stream: TextIO | None = None):
        if mode not in MODES:
            raise ValueError("progress mode must be %s, got %r" % (", ".join(MODES), mode))
        self._stream = stream
        if mode == "auto":
            isatty = getattr(self.stream, "isatty", None)
            kernel = jupyter_kernel()
            mode = choose_mode(callable(isatty) and bool(isatty()), kernel,
                               kernel and importlib.util.find_spec("ipywidgets") is not None)
        self.mode: Mode = mode

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    @property
    def bars(self) -> bool:
        """Whether tasks draw bars (on a terminal or as Jupyter widgets)."""
        return self.mode in ("bar", "notebook")

    def task(self, name: str, total: float = 0.0, items: int | None = None) -> Task:
        """A task of ``total`` units of work (e.g. estimated seconds) in ``items`` items
        (default: ``total`` items of one unit)."""
        return Task(self, name, total, items)

    def line(self, text: str) -> None:
        """One line of its own (a bar redraws below it); nothing when off."""
        if self.mode == "off":
            return
        text = plain(text)  # a job's error quotes its library
        if self.mode == "bar":
            from tqdm import tqdm

            tqdm.write(text, file=self.stream)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()


def progress_of(value: bool | Progress | None) -> Progress:
    """The reporter for a ``progress=`` argument: a :class:`Progress` as given, ``True``
    for ``auto``, ``False`` or None for ``off``."""
    if isinstance(value, Progress):
        return value
    return Progress("auto" if value else "off")


class Task:
    """One task of a :class:`Progress`; a context manager that closes its bar."""

    def __init__(self, progress: Progress, name: str, total: float, items: int | None):
        self.progress, self.name = progress, name
        self.total = float(total)
        self.items = int(total) if items is None else items
        self.done = 0.0
        self.items_done = 0
        self.started = time.monotonic()
        self._bar: Any = None
        self._closed = False
        self._postfix = ""
        self._show()

    def _show(self) -> None:
        """Draw the bar once the amount of work is known (a bar of nothing is no use)."""
        if self._bar is None and not self._closed and self.progress.bars and self.total > 0:
            if self.progress.mode == "notebook":
                from tqdm.notebook import tqdm  # a widget: no file, its own width
            else:
                from tqdm import tqdm  # imported when a bar is shown: ~30 ms
            self._bar = tqdm(total=self.total, desc=self.name, leave=False,
                             dynamic_ncols=True, file=self.progress.stream,
                             bar_format=BAR_FORMAT)
            if self._postfix:
                self._bar.set_postfix_str(self._postfix)

    def __enter__(self) -> Task:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._closed = True
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def status(self, text: str) -> None:
        """What is under way now: the bar's postfix (nothing in lines)."""
        self._postfix = text
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def set_total(self, total: float) -> None:
        """The amount of work, once it is known."""
        self.total = float(total)
        if self._bar is not None and self._bar.total != self.total:
            self._bar.total = self.total
            self._bar.refresh()
        self._show()

    def advance(self, amount: float) -> None:
        """``amount`` more units done (the total is never passed)."""
        self.update_to(self.done + amount)

    def update_to(self, done: float) -> None:
        """``done`` units done so far."""
        self.done = min(float(done), self.total) if self.total else float(done)
        if self._bar is not None:
            self._bar.n = self.done
            self._bar.refresh()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def eta(self) -> float | None:
        """Seconds left, from the pace so far (None before any work is done)."""
        if self.done <= 0 or not self.total:
            return None
        return self.elapsed() * max(self.total - self.done, 0.0) / self.done

    def item_done(self, what: str, result: str = "") -> None:
        """An item finished: in lines, ``measure 3/32: SM3 64 B  34.2 ticks/byte
        (elapsed 0:12, ETA 1:30)``."""
        self.items_done += 1
        if self.progress.mode != "lines":
            return
        count = "%d/%d" % (self.items_done, self.items) if self.items else str(self.items_done)
        left = self.items_done < self.items
        timing = "elapsed %s%s" % (clock(self.elapsed()),
                                   ", ETA %s" % clock(self.eta()) if left else "")
        self.progress.line("%s %s: %s%s (%s)" % (self.name, count, what,
                                                  "  " + result if result else "", timing))

    def finished(self, result: str) -> None:
        """A task of one item ended: in lines, ``KAT_2_12_Wish512: generated in 0.05 s``;
        closes the bar."""
        self.close()
        if self.progress.mode == "lines":
            self.progress.line("%s: %s" % (self.name, result))
