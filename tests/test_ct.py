"""``ngcc ct``: memcheck's XML made sites, the evidence checked, the verdicts earned.

The fast tests build the XML and the stacks here; the end-to-end ones (valgrind) run
the fixture folders of tests/fixtures/ct/ and tests/fixtures/leaky/ and check that
each site is the line the fixture's comment marks as its leak, and no other.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from _testlib import compiler

from ngcc.base.errors import CorruptRecordError
from ngcc.campaign.settings import CampaignSettings
from ngcc.cli.main import main
from ngcc.evidence import ct_evidence as ev
from ngcc.library.registry import instance, sanitized_build
from ngcc.measure import ct_measurement as ct
from ngcc.stats import ct_statistics as st

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
LIBRARY = Path("/lib/twin.so")


def _frame(obj: str, fn: str, directory: str, file: str, line: int) -> str:
    return ("<frame><ip>0x1</ip><obj>%s</obj><fn>%s</fn><dir>%s</dir><file>%s</file>"
            "<line>%d</line></frame>" % (obj, fn, directory, file, line))


def _error(kind: str, what: str, *frames: str) -> str:
    return "<error><unique>0x0</unique><tid>1</tid><kind>%s</kind><what>%s</what><stack>%s" \
           "</stack></error>" % (kind, what, "".join(frames))


def _marker(bits: int) -> str:
    """The client message the driver's ct mode writes before the child of ``bits``."""
    return "<clientmsg><tid>1</tid><text>ngcc-ct length %d\n</text></clientmsg>" % bits


def _document(*parts: str) -> str:
    return ('<?xml version="1.0"?>\n<valgrindoutput>\n<protocolversion>4</protocolversion>'
            "<protocoltool>memcheck</protocoltool>%s</valgrindoutput>\n" % "".join(parts))


# ------------------------------------------------------------------ memcheck's XML

def test_an_xml_stream_of_several_documents_is_read_whole():
    source = "/src/a.c"
    first = _document(_error("UninitCondition", "Conditional jump",
                             _frame(str(LIBRARY), "f", "/src", "a.c", 3)))
    second = _document(_error("UninitValue", "Use of uninitialised value of size 8",
                              _frame("/usr/lib/libc.so.6", "memcpy", "", "", 0),
                              _frame(str(LIBRARY), "g", "/src", "a.c", 9)),
                       "<fatal_signal><signame>SIGSEGV</signame><stack>%s</stack>"
                       "</fatal_signal>" % _frame(str(LIBRARY), "g", "/src", "a.c", 10))
    output = st.parse_xml(first + second)
    assert [(r.kind, r.stack[-1].function) for r in output.reports] == \
        [("UninitCondition", "f"), ("UninitValue", "g")]
    assert output.reports[1].stack[0].path is None  # libc's frame names no file
    assert str(output.reports[0].stack[0].path) == source
    assert [(s.name, s.stack[0].line) for s in output.fatal] == [("SIGSEGV", 10)]


def test_text_that_is_not_memchecks_xml_is_refused():
    with pytest.raises(st.MemcheckOutputError, match="cannot be read"):
        st.parse_xml("==1== Conditional jump or move depends on uninitialised value(s)\n<")
    with pytest.raises(st.MemcheckOutputError, match="no XML"):
        st.parse_xml("")


def _source(folder: Path) -> Path:
    (folder / "sub").mkdir(parents=True)
    (folder / "a.c").write_text("".join("line %d;\n" % n for n in range(1, 21)))
    (folder / "sub" / "b.c").write_text("  int x = table[m[0]];   \n")
    return folder


def test_sites_are_the_first_frames_in_the_submission_kept_once_per_line(tmp_path):
    folder = _source(tmp_path / "src")
    library = tmp_path / "twin.so"
    in_lib = lambda fn, file, line: _frame(str(library), fn, str(folder), file, line)  # noqa: E731
    harness = _error("SyscallParam", "Syscall param mount(type)",
                     _frame("/usr/lib/libc.so.6", "mount", "./misc/../sysdeps/unix",
                            "syscall-template.S", 117),
                     _frame("/ngcc-driver", "main", "", "", 0))
    header = _frame(str(library), "_mm_aesenc", "/usr/lib/gcc/include", "wmmintrin.h", 5)
    stream = _document(
        harness,
        _marker(8),
        _error("UninitValue", "Use of size 8", in_lib("sbox", "sub/b.c", 1)),
        _error("UninitCondition", "Conditional jump", header, in_lib("f", "a.c", 12)),
        _marker(16),
        _error("UninitCondition", "Conditional jump", in_lib("f", "a.c", 12)),
        _error("SyscallParam", "Syscall param write(buf)", in_lib("f", "a.c", 4)))
    reports = st.parse_xml(stream).reports
    assert [r.bits for r in reports] == [None, 8, 8, 16, 16]
    found = st.sites(reports, library, folder)
    assert [(s.file, s.line, s.function, s.kind, s.lengths) for s in found] == [
        ("a.c", 4, "f", "other", 1), ("a.c", 12, "f", "branch", 2),
        ("sub/b.c", 1, "sbox", "address", 1)]
    assert [s.quote for s in found] == ["line 4;", "line 12;", "int x = table[m[0]];"]
    assert st.verdict(found) == ev.LEAKS and st.verdict(()) == ev.CONSTANT_TIME


def test_a_frame_of_another_object_or_outside_the_folder_is_no_site(tmp_path):
    folder = _source(tmp_path / "src")
    outside = tmp_path / "other.c"
    outside.write_text("x\n")
    stack = st.parse_xml(_document(_error(
        "UninitValue", "v", _frame("/elsewhere.so", "f", str(folder), "a.c", 2),
        _frame(str(tmp_path / "twin.so"), "g", str(tmp_path), "other.c", 1),
        _frame(str(tmp_path / "twin.so"), "h", str(folder), "../other.c", 1)))).reports[0].stack
    assert st.site_frame(stack, tmp_path / "twin.so", folder) is None


# ------------------------------------------------------------------ the evidence

def _evidence(**changes) -> ev.CtEvidence:
    fields = dict(instance="CtPlain-256", label="plain", candidate="external",
                  variant="external", library="/x/plain", verdict=ev.LEAKS,
                  sites=(ev.CtSite("a.c", 3, "f", "branch", "if (m[0])", 2, "Conditional"),
                         ev.CtSite("a.c", 7, "g", "address", "t[m[1]]", 1, "Use")),
                  lengths=(0, 8, 16), twin=ev.CtTwin("/x/plain", ("-O2", "-g"), "a" * 64, None),
                  valgrind=ev.CtValgrind("valgrind-3.19.0", ("--tool=memcheck",)),
                  isolation="namespaces")
    fields.update(changes)
    return ev.CtEvidence(**fields)


def test_evidence_reads_back_as_written(tmp_path):
    path = ev.write_evidence(_evidence(), tmp_path / "run" / ev.CT_DIR)
    assert path == tmp_path / "run" / "ct" / "external" / "plain__ct.json"
    back = ev.read_evidence(path)
    assert back.sites == _evidence().sites and back.created and back.ngcc_version
    assert back.summary() == "leaks (2 sites in 2 functions)"
    assert [r["relpath"] for r in ev.run_evidence(tmp_path / "run")] == \
        ["ct/external/plain__ct.json"]


@pytest.mark.parametrize("changes, field", [
    (dict(sites=()), "sites"),                                        # leaks without a site
    (dict(verdict=ev.CONSTANT_TIME), "sites"),                        # a verdict sites deny
    (dict(verdict=ev.NOT_ANALYSED, sites=()), "reason"),              # no reason given
    (dict(sites=(ev.CtSite("b.c", 1, "f", "branch", "", 1, ""),
                 ev.CtSite("a.c", 1, "f", "branch", "", 1, ""))), "sites"),  # unsorted
    (dict(sites=(ev.CtSite("../a.c", 1, "f", "branch", "", 1, ""),)), "file"),
    (dict(sites=(ev.CtSite("a.c", 1, "f", "timing", "", 1, ""),)), "kind"),
    (dict(sites=(ev.CtSite("a.c", 1, "f", "branch", "", 4, ""),)), "sites"),  # 4 of 3 lengths
    (dict(twin=ev.CtTwin("/x", ("-O2",), "a" * 64, None)), "cflags"),  # a twin without -g
])
def test_unsound_evidence_is_refused_naming_the_field(tmp_path, changes, field):
    path = ev.write_evidence(_evidence(**changes), tmp_path)
    with pytest.raises(CorruptRecordError, match=field):
        ev.read_evidence(path)


def test_a_file_of_another_schema_is_refused(tmp_path):
    path = tmp_path / "x__ct.json"
    path.write_text(json.dumps({"schema": "ngcc.leak/1"}))
    with pytest.raises(CorruptRecordError, match=r"not an ngcc\.ct/1 file"):
        ev.read_evidence(path)


# ------------------------------------------------------------------ no analysis, said why

def test_without_valgrind_the_verdict_is_not_analysed(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    evidence = ct.constant_time(FIXTURES / "ct" / "constant_time", label="plain")
    assert (evidence.verdict, evidence.reason, evidence.sites) == \
        (ev.NOT_ANALYSED, "valgrind is not installed (apt-get install valgrind)", ())


def test_a_library_with_no_known_sources_is_not_analysed(tmp_path):
    from _testlib import build_library

    library = build_library(tmp_path, "Bare-256", (
        "__attribute__((visibility(\"default\"))) int CryptHash(int d, const unsigned char *m,"
        " unsigned long long n, unsigned char *o) { (void)d; (void)m; (void)n; (void)o; "
        "return 0; }\n"))
    inst = instance(library)
    evidence = ct.constant_time(inst, label="bare", valgrind=["true"])
    assert evidence.verdict == ev.NOT_ANALYSED
    assert evidence.reason.startswith("no debug twin: ") and "submission folder" in \
        evidence.reason


def test_the_lengths_reach_every_path():
    assert ct.LENGTHS[0] == 0 and 8 in ct.LENGTHS
    assert [b for b in ct.LENGTHS if b % 8] and max(ct.LENGTHS) >= 8 * 2 * 288


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils' objdump")
def test_an_instruction_valgrind_cannot_decode_is_named():
    codes = ["0xC4", "0xE2", "0x75", "0xDC", "0x05", "0xF3", "0x0E", "0x00", "0x00"]
    named = ct.name_instruction(codes)
    assert named.startswith("vaesenc ") and named.endswith("(bytes c4 e2 75 dc 05 f3 0e 00 00)")


def test_an_unknown_name_is_a_usage_error(capsys):
    assert main(["ct", "NoSuchHash-512"]) == 2
    assert "NoSuchHash-512" in capsys.readouterr().err


# ------------------------------------------------------------------ under valgrind

@pytest.fixture(scope="module")
def valgrind() -> None:
    """Skips without valgrind and its memcheck.h (fails in CI)."""
    if shutil.which("valgrind") is None or not Path("/usr/include/valgrind/memcheck.h").is_file():
        message = "valgrind and its memcheck.h are needed (apt-get install valgrind)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    if sanitized_build():
        pytest.skip("the driver is built with ASan (NGCC_SANITIZE=1): valgrind cannot run it")
    compiler()


def _marked_lines(folder: Path, marker: str) -> list[tuple[str, int]]:
    """The (file, line) of every line of the folder's C sources holding ``marker``."""
    return [(path.name, number) for path in sorted(folder.glob("*.c"))
            for number, line in enumerate(path.read_text().splitlines(), 1) if marker in line]


@pytest.mark.e2e
@pytest.mark.parametrize("folder, kind, marker", [
    (FIXTURES / "leaky" / "table_sbox", ev.ADDRESS, "= SBOX[state[i % sizeof state] ^ byte]"),
    (FIXTURES / "leaky" / "early_exit", ev.BRANCH, "the leak: stop at the first zero byte"),
])
def test_a_leaking_fixture_gives_its_leaking_line_and_no_other(valgrind, folder, kind, marker):
    evidence = ct.constant_time(folder, label=folder.name)
    assert evidence.verdict == ev.LEAKS, evidence.summary()
    assert [(s.file, s.line, s.kind) for s in evidence.sites] == \
        [(file, line, kind) for file, line in _marked_lines(folder, marker)]
    assert evidence.sites[0].lengths == len([b for b in evidence.lengths if b > 0])
    assert evidence.lengths == ct.LENGTHS and "-g" in evidence.twin.cflags


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["constant_time", "length_branch"])
def test_a_constant_time_fixture_has_no_site(valgrind, name):
    evidence = ct.constant_time(FIXTURES / "ct" / name, label=name)
    assert (evidence.verdict, evidence.sites, evidence.lengths) == \
        (ev.CONSTANT_TIME, (), ct.LENGTHS), evidence.summary()


@pytest.mark.e2e
def test_an_instruction_valgrind_cannot_decode_is_no_verdict(valgrind):
    folder = FIXTURES / "ct" / "undecodable"
    evidence = ct.constant_time(folder, label="undecodable")
    assert evidence.verdict == ev.NOT_ANALYSED and evidence.sites == ()
    assert evidence.reason.startswith("an instruction valgrind cannot decode: vaesenc ")
    (file, line), = _marked_lines(folder, "_mm256_aesenc_epi128(state, key)")
    assert evidence.reason.endswith("in vaes_round (%s:%d)" % (file, line))


@pytest.mark.e2e
def test_a_crash_under_valgrind_is_no_verdict(valgrind):
    folder = FIXTURES / "ct" / "valgrind_crash"
    evidence = ct.constant_time(folder, label="crash")
    (file, line), = _marked_lines(folder, "*(volatile int *)0 = 1;")
    assert evidence.verdict == ev.NOT_ANALYSED and evidence.sites == ()
    assert evidence.reason.startswith("it crashed under valgrind at 0 bits in CryptHash "
                                      "(%s:%d): " % (file, line)), evidence.reason
    assert "SIGSEGV" in evidence.reason


@pytest.mark.e2e
def test_the_command_writes_evidence_and_exits_1_on_a_leak(valgrind, tmp_path, capsys):
    status = main(["ct", str(FIXTURES / "ct" / "constant_time"),
                   str(FIXTURES / "leaky" / "early_exit"), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 1
    assert "constant_time  constant-time" in out and "early_exit  leaks (1 site in 1 function)" \
        in out
    verdicts = {r["label"]: r["verdict"] for r in
                (ev.read_evidence(p).to_json() for p in sorted(tmp_path.glob("*/*.json")))}
    assert verdicts == {"constant_time": ev.CONSTANT_TIME, "early_exit": ev.LEAKS}


# ------------------------------------------------------------------ on the pages

@pytest.fixture
def ct_run(tmp_path):
    """A fake run with constant-time evidence for hash-22: one library that leaks, one
    constant-time, one not analysed."""
    from _fakerun import make_run

    run_dir = make_run(tmp_path / "run")
    out = run_dir / ev.CT_DIR
    leaking = _evidence(label="Pavelor-512", instance="Pavelor-512", candidate="hash-22",
                        variant="ref")
    ev.write_evidence(leaking, out)
    ev.write_evidence(_evidence(label="Pavelor-768", instance="Pavelor-768",
                                candidate="hash-22", variant="ref", sites=(),
                                verdict=ev.CONSTANT_TIME), out)
    ev.write_evidence(_evidence(label="Pavelor-1024", instance="Pavelor-1024",
                                candidate="hash-22", variant="ref", sites=(), lengths=(),
                                twin=None, verdict=ev.NOT_ANALYSED,
                                reason="valgrind is not installed"), out)
    return run_dir


def test_the_candidate_page_has_a_constant_time_section(ct_run):
    from ngcc.evidence.run import load_run
    from ngcc.report.pages import candidate_page

    run = load_run(ct_run)
    page = candidate_page(run, "hash-22")
    section = page.split("## Constant time (beyond the guide's structure)")[1].split("\n## ")[0]
    assert "| `Pavelor-512` | leaks (2 sites in 2 functions) | [`a.c:3`](#ct-Pavelor-512-1) " \
        "branch, [`a.c:7`](#ct-Pavelor-512-2) address |" in section
    assert "| `Pavelor-768` | constant-time | — |" in section or \
        "| `Pavelor-768` | constant-time |" in section
    assert "not analysed: `valgrind is not installed`" in section
    assert '- <a id="ct-Pavelor-512-1"></a>`Pavelor-512` `a.c:3` (branch, in `f`): ' \
        "`if (m[0])`" in section
    assert "operands" in section and "`ngcc leak`" in section
    assert "Constant time" not in candidate_page(run, "hash-34")


def test_the_run_gives_the_sites_as_a_frame(ct_run):
    from ngcc.evidence.run import load_run

    frame = load_run(ct_run).constant_time
    assert list(frame["label"]) == ["Pavelor-1024", "Pavelor-512", "Pavelor-512",
                                    "Pavelor-768"]
    assert list(frame["line"].dropna()) == [3, 7]
    assert set(frame["verdict"]) == {ev.LEAKS, ev.CONSTANT_TIME, ev.NOT_ANALYSED}


def test_validate_finds_an_unsound_constant_time_file(ct_run):
    import ngcc

    path = ct_run / "ct" / "hash-22" / "Pavelor-768__ct.json"
    data = json.loads(path.read_text())
    data["verdict"] = ev.LEAKS  # a verdict its sites deny
    path.write_text(json.dumps(data))
    found = [str(d) for d in ngcc.validate(ct_run).differences]
    assert any(d.startswith("ct/hash-22/Pavelor-768__ct.json: sites must hold a site") for d
               in found), found


def _field_cells(page: str, column: str) -> dict[str, str]:
    """The field summary's ``column`` by instance (the label of its cell, without ⚠), a
    link's text for a link."""
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")]
            for line in page.splitlines() if line.startswith("| ")]
    header = rows[0]
    return {row[header.index("instance")].split()[0].strip("`"):
            re.sub(r"^\[(.*)\]\(.*\)$", r"\1", row[header.index(column)]) for row in rows[1:]}


def test_the_field_summary_and_the_exports_give_each_librarys_verdict(ct_run, tmp_path):
    import io

    import pandas as pd

    import ngcc
    from ngcc.evidence.run import load_run
    from ngcc.report.write import write_report

    run = load_run(ct_run)
    written = {p.name: p for p in write_report(run, plots=False, formats=(
        "markdown", "html", "csv", "json"))}
    field = written["field.md"].read_text()
    assert _field_cells(field, "constant time") == {
        "Pavelor-512": "leaks (2 sites in 2 functions)", "Pavelor-1024": "not analysed",
        "pseudoXOF-512": "—"}  # the last was not analysed: no evidence
    assert "| [leaks (2 sites in 2 functions)](hash-22.md#constant-time-beyond-the-guides-" \
        "structure) |" in field  # each verdict links to its candidate's section
    html = {name: written[name].read_text() for name in ("field.html", "hash-22.html")}
    assert '<a href="hash-22.html#constant-time-beyond-the-guides-structure">leaks' in \
        html["field.html"]
    assert '<h2 id="constant-time-beyond-the-guides-structure">' in html["hash-22.html"]
    assert '<a href="#ct-Pavelor-512-2"><code>a.c:7</code></a> address' in html["hash-22.html"]
    assert '<li><a id="ct-Pavelor-512-2"></a><code>Pavelor-512</code>' in html["hash-22.html"]
    csv = pd.read_csv(io.StringIO(written["statistics.csv"].read_text()))
    by_label = csv.groupby("label")["constant_time"].first().to_dict()
    assert by_label["Pavelor-512"] == ev.LEAKS and by_label["Pavelor-1024"] == ev.NOT_ANALYSED
    assert pd.isna(by_label["pseudoXOF-512"])
    rows = json.loads(written["statistics.json"].read_text())
    assert {r["label"]: r["constant_time"] for r in rows} == {
        "Pavelor-512": ev.LEAKS, "Pavelor-1024": ev.NOT_ANALYSED, "pseudoXOF-512": None}
    assert ngcc.validate(ct_run).differences == []  # the column regenerates as written


def test_a_run_without_constant_time_evidence_has_no_such_column(tmp_path):
    from _fakerun import make_run

    from ngcc.evidence.run import load_run
    from ngcc.report.write import report_files

    files = report_files(load_run(make_run(tmp_path / "run")), ("markdown", "csv", "json"))
    assert "constant time" not in files["field.md"]
    assert "constant_time" not in files["statistics.csv"].splitlines()[0]
    assert all("constant_time" not in row for row in json.loads(files["statistics.json"]))


# ------------------------------------------------------------------ in ngcc evaluate

@pytest.mark.e2e
def test_evaluate_writes_the_constant_time_section_with_the_leaking_lines(valgrind, tmp_path,
                                                                          monkeypatch):
    """The Done-when of issue 42: an archive of the fixtures, evaluated (real builds,
    fake trials), each candidate page with the fixtures' leaking lines and no others,
    each library's verdict in the field summary's column."""
    from _fakes import FakeKat, FakeRunner, fixed_host

    from ngcc.app import evaluate as _evaluate

    folders = {"Leaky Table": FIXTURES / "leaky" / "table_sbox",
               "Leaky Exit": FIXTURES / "leaky" / "early_exit",
               "Plain": FIXTURES / "ct" / "constant_time"}
    archive = tmp_path / "archive"
    for submission, folder in folders.items():
        shutil.copytree(folder, archive / submission / "Reference_Implementation" / folder.name)
    fixed_host(monkeypatch)
    result = _evaluate.evaluate([archive], tmp_path / "run", runner=FakeRunner(),
                                kat_checker=FakeKat(), plots=False, progress=False,
                                settings=CampaignSettings.make(
                                    quick=True, lengths=[64], kat_files=["2_23"]))
    records = {r["label"]: r for r in result.run.analysis_evidence("ct")}
    assert {label: r["verdict"] for label, r in records.items()} == {
        "LeakyTable-256@ref": ev.LEAKS, "LeakyExit-256@ref": ev.LEAKS,
        "CtPlain-256@ref": ev.CONSTANT_TIME}
    pages = "".join(p.read_text() for p in (tmp_path / "run" / "report").glob("*.md"))
    sites = [(r["label"], s["file"], s["line"], s["kind"]) for r in records.values()
             for s in r["sites"]]
    expected = [("LeakyTable-256@ref", f, n, ev.ADDRESS) for f, n in _marked_lines(
        folders["Leaky Table"], "= SBOX[state[i % sizeof state] ^ byte]")] + [
        ("LeakyExit-256@ref", f, n, ev.BRANCH) for f, n in _marked_lines(
            folders["Leaky Exit"], "the leak: stop at the first zero byte")]
    assert sorted(sites) == sorted(expected)
    for label, file, line, kind in expected:
        assert '- <a id="ct-%s-1"></a>`%s` `%s:%d` (%s, in `CryptHash`)' % (
            label, label, file, line, kind) in pages
    assert pages.count("## Constant time (beyond the guide's structure)") >= 1
    field = (tmp_path / "run" / "report" / "field.md").read_text()
    assert _field_cells(field, "constant time") == {  # one marked line each
        "LeakyTable-256@ref": "leaks (1 site in 1 function)",
        "LeakyExit-256@ref": "leaks (1 site in 1 function)", "CtPlain-256@ref": ev.CONSTANT_TIME}


def test_the_dry_run_gives_the_constant_time_steps_cost_unless_skipped(tmp_path, capsys,
                                                                       monkeypatch):
    from _fakes import FakeRunner, still_dry_run

    from ngcc.app.dryrun import plan_lines

    still_dry_run(monkeypatch)  # what the plan states of the host, between the two plans
    archive = tmp_path / "archive"
    for name in ("constant_time", "length_branch"):
        shutil.copytree(FIXTURES / "ct" / name, archive / name / "Reference_Implementation" / name)
    with_ct, without = (plan_lines([archive], ct=ct, runner=FakeRunner()) for ct in (True, False))
    assert [line for line in with_ct if line not in without] == [
        "constant time (ngcc ct): each library's -g debug twin under valgrind memcheck, about "
        "10 s a library (2: about 20 s); --no-ct skips it"]
    assert main(["evaluate", str(archive), "--dry-run", "--no-ct"]) == 0
    assert "constant time" not in capsys.readouterr().out


@pytest.mark.e2e
def test_a_library_ngcc_build_made_is_twinned_from_its_recorded_sources(valgrind, tmp_path):
    import ngcc

    folder = FIXTURES / "leaky" / "early_exit"
    built = ngcc.build(folder, out_dir=tmp_path / "built", flags="-O1 -std=c99")
    evidence = ct.constant_time(built.instance, label="exit")
    assert evidence.verdict == ev.LEAKS and evidence.twin.same_digests is True
    assert evidence.twin.cflags[:2] == ("-O1", "-std=c99") and "-g" in evidence.twin.cflags
    assert [(s.file, s.line) for s in evidence.sites] == \
        _marked_lines(folder, "the leak: stop at the first zero byte")
