"""Every page of the fixture runs, rendered to HTML, holds no placeholder character: none
of the private-use areas (the HTML renderer's own markers are U+E000 and U+E001) and no
U+25AF ``▯``, which is how a browser shows a character its fonts lack."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _fakerun import make_run

from ngcc.evidence.run import Run, load_run
from ngcc.report import export as _export
from ngcc.report import pages as _report
from ngcc.report import write as _write

DATA = Path(__file__).resolve().parent / "data"
PNG = b"\x89PNG\r\n\x1a\n stand-in for a plot"
PLACEHOLDER = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff\u25af]")
"""The private-use areas (BMP, planes 15 and 16) and ``▯``."""


def _fake(tmp_path: Path, **kwargs: object) -> Run:
    return load_run(make_run(tmp_path / "run", calls=20, **kwargs))  # type: ignore[arg-type]


FIXTURE_RUNS = {
    "fake": lambda tmp: _fake(tmp),
    "fake-odd-labels": lambda tmp: _fake(tmp, labels={"Pavelor-512": "Pavelor-512@perf",
                                                      "Pavelor-1024": "Pavelor-1024.ext"}),
    "run-quick": lambda tmp: load_run(DATA / "run-quick"),
    "run-quick-schema1": lambda tmp: load_run(DATA / "run-quick-schema1"),
}


def html_report(run: Run) -> dict[str, str]:
    """Every page of ``run`` as HTML, with a stand-in PNG for each plot the pages link (so
    each figure and its caption is rendered), and the Markdown beside it."""
    images = {f"{stem}.png": PNG for stem in _report.plot_stems(run)}
    return _write.report_files(run, ("markdown", "html"), plots=True, images=images)


def placeholders(text: str) -> list[str]:
    """Each placeholder character of ``text`` with a little of its context."""
    return [repr(text[max(0, m.start() - 30):m.end() + 30]) for m in PLACEHOLDER.finditer(text)]


@pytest.mark.parametrize("name", list(FIXTURE_RUNS))
def test_no_page_holds_a_placeholder_character(name: str, tmp_path: Path) -> None:
    files = html_report(FIXTURE_RUNS[name](tmp_path))
    html = [page for page in files if page.endswith(".html")]
    assert len(html) == len([page for page in files if page.endswith(".md")]) >= 4
    for page, text in files.items():
        assert placeholders(text) == [], page


def test_figure_captions_are_their_links_text(tmp_path: Path) -> None:
    """A distribution's figure is captioned with the words of the link that points at it:
    the instance as code and the length (they once showed the renderer's markers,
    ``▯0▯ 32 B``)."""
    files = html_report(FIXTURE_RUNS["fake"](tmp_path))
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", files["hash-22.html"])
    assert captions == ["<code>Pavelor-512</code> 32 B", "<code>Pavelor-1024</code> 32 B"]


def test_code_in_an_image_description_is_its_text() -> None:
    text = _export.html_page("![plot of `x<y`](p.png) and [`a` b](p.png)\n",
                             {"p.png": PNG})
    assert '<img alt="plot of x&lt;y" src="data:image/png;base64,' in text
    assert "<figcaption><code>a</code> b</figcaption>" in text
    assert placeholders(text) == []


def test_the_pattern_finds_every_placeholder() -> None:
    for character in ("\ue000", "\ue001", "\uf8ff", "\U000f0000", "\U0010fffd", "▯"):
        assert placeholders(f"a{character}b"), repr(character)
    assert placeholders("µs × ⚠ – ± — … 10⁶ ≥ · →") == []


def test_a_wide_table_breaks_its_figures_before_the_interval_and_scrolls_in_the_page():
    page = _export.html_page("| instance | median (95 % CI) |\n|---|---|\n"
                             "| SM3 | 1930 k (1789 k – 2054 k), loop 2023 |\n", {})
    cell = re.search(r'<td class="num">(.*?)</td>', page).group(1)
    # the only breaks: before the interval and before the loop figure
    assert cell == "1930\u00a0k (1789\u00a0k\u00a0–\u00a02054\u00a0k), loop\u00a02023"
    table_rule = re.search(r"table\{([^}]*)\}", page).group(1)
    assert "overflow-x:auto" in table_rule and "max-width:100%" in table_rule
    assert "nowrap" not in re.search(r"td\.num\{([^}]*)\}", page).group(1)
