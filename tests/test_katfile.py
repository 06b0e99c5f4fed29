"""Reading KAT files and manifests (ngcc/library/katfile.py): the canonical digest of every
official file equals its manifest line; first differences are named precisely."""

from __future__ import annotations

import hashlib
import os
import tracemalloc

import pytest
from conftest import KAT_DATA, KAT_KINDS, OFFICIAL_INSTANCES, raw_sha256

from ngcc.base.errors import KatError
from ngcc.library import katfile
from ngcc.library.katfile import (
    MAX_KAT_BYTES,
    canonical_sha256,
    canonical_text,
    first_difference,
    parse_kat_file,
    parse_kat_text,
    read_manifest,
    same_bytes,
)
from ngcc.library.registry import manifest_path

CANDIDATES = ("hash-22", "hash-34", "hash-35")


def test_every_official_file_matches_its_manifest_line(official_kat):
    """All 28 official files: canonical digest = manifest line, raw digest = raw.sha256."""
    checked = 0
    for name, candidate in OFFICIAL_INSTANCES.items():
        manifest = read_manifest(manifest_path(candidate))
        for kind in KAT_KINDS:
            path = official_kat.file(name, kind)
            entry = manifest["%s/%s" % (name, path.name)]
            data = path.read_bytes()
            assert canonical_sha256(data, entry.mode) == entry.sha256, path
            assert hashlib.sha256(data).hexdigest() == raw_sha256(candidate)[
                "%s/%s" % (name, path.name)], path
            checked += 1
    assert checked == 28


def test_manifests_and_raw_digests_name_the_same_files():
    """The shipped manifests list four files of every instance; raw.sha256 the same ones,
    and the repository holds each of them except the large KAT_2_12."""
    for candidate in CANDIDATES:
        listed = set(read_manifest(manifest_path(candidate)))
        names = [n for n, c in OFFICIAL_INSTANCES.items() if c == candidate]
        assert listed == {"%s/KAT_%s_%s.txt" % (n, k, n) for n in names for k in KAT_KINDS}
        assert set(raw_sha256(candidate)) == listed
        in_repo = {p.relative_to(KAT_DATA / candidate).as_posix()
                   for p in (KAT_DATA / candidate).glob("*/KAT_*.txt")}
        assert in_repo == {p for p in listed if "KAT_2_12_" not in p}


def test_canonical_text_rules():
    raw = b"Msg_Len = 0\r\nMsg = \r\n\r\nDst_Len = 8 \t\nDst = AB\n\n"
    assert canonical_text(raw) == b"Msg_Len = 0\nMsg =\nDst_Len = 8\nDst = AB\n"
    assert canonical_text(raw, "nolen") == b"Msg =\nDst = AB\n"
    with pytest.raises(ValueError, match="unknown manifest mode"):
        canonical_text(raw, "loose")


def test_raw_sha256_is_not_the_manifest_digest(official_kat):
    data = official_kat.file("Wish512", "2_23").read_bytes()
    assert hashlib.sha256(data).hexdigest() != canonical_sha256(data)


def test_read_manifest(tmp_path):
    digest = "ab" * 32
    good = tmp_path / "good.sha256"
    good.write_text("%s strict X/KAT_2_12_X.txt\n\n%s nolen X/KAT_Loop_X.txt\n"
                    % (digest, digest.upper()))
    entries = read_manifest(good)
    assert entries["X/KAT_2_12_X.txt"].mode == "strict"
    assert entries["X/KAT_Loop_X.txt"].sha256 == digest
    assert read_manifest(tmp_path / "absent.sha256") == {}
    bad = tmp_path / "bad.sha256"
    bad.write_text("%s strict X/a.txt\nnot a manifest line\n" % digest)
    with pytest.raises(ValueError, match="line 2"):
        read_manifest(bad)


def _record(length: int, digest: str) -> str:
    return "Msg_Len = %d\nMsg = %s\nDst_Len = 8\nDst = %s\n\n" % (length, "00" * length, digest)


def test_first_difference_names_record_line_and_msg_len():
    official = "".join(_record(n, "AA") for n in range(5)).encode()
    wrong = "".join(_record(n, "AB" if n == 3 else "AA") for n in range(5)).encode()
    assert first_difference(official, official) is None
    assert first_difference(wrong, official) == "record 3 (line 16, Msg_Len = 3): Dst differs"


def test_first_difference_of_a_short_file():
    official = "".join(_record(n, "AA") for n in range(5)).encode()
    short = "".join(_record(n, "AA") for n in range(3)).encode()
    assert first_difference(short, official) == (
        "record 3 (line 16, Msg_Len = 3) is missing from the generated file "
        "(3 records generated, 5 official)")


def test_first_difference_of_an_official_file(official_kat):
    path = official_kat.file("Pavelor-512", "2_12")
    official = path.read_bytes()
    records = parse_kat_text(official.decode())
    assert len(records) == 4097 and records[1000].line == 5001
    digest = records[1000].fields["Dst"]
    changed = official.replace(digest.encode(), ("0" if digest[0] != "0" else "1").encode()
                               + digest[1:].encode())
    assert first_difference(changed, official) == (
        "record 1000 (line 5001, Msg_Len = 1000): Dst differs")


# ------------------------------------------------- files read a line at a time, capped

def test_a_file_over_the_cap_is_refused_by_its_size_unread(tmp_path):
    """A 1 GiB KAT file (sparse: no disk used) is refused before a byte is read."""
    huge = tmp_path / "KAT_2_12_X.txt"
    with huge.open("wb") as handle:
        handle.truncate(2**30)
    small = tmp_path / "small.txt"
    small.write_bytes(_record(1, "AA").encode())
    for call in (lambda: canonical_sha256(huge), lambda: first_difference(small, huge),
                 lambda: first_difference(huge, small), lambda: same_bytes(small, huge)):
        with pytest.raises(KatError, match=r"%s is 1073741824 bytes, more than ngcc reads "
                           r"of a KAT file \(268435456 bytes, 256 MiB" % huge):
            call()
    assert MAX_KAT_BYTES == 256 * 2**20


def test_files_give_what_their_bytes_give(official_kat, tmp_path):
    path = official_kat.file("Pavelor-512", "2_12")
    official = path.read_bytes()
    assert canonical_sha256(path) == canonical_sha256(official)
    assert canonical_sha256(path, "nolen") == canonical_sha256(official, "nolen")
    assert parse_kat_file(path) == parse_kat_text(official.decode())
    changed = tmp_path / "changed.txt"
    changed.write_bytes(official.replace(b"Dst = ", b"Dst = 0", 1))
    assert first_difference(changed, path) == first_difference(changed.read_bytes(), official)
    assert first_difference(changed, path) == "record 0 (line 1, Msg_Len = 0): Dst differs"
    assert first_difference(path, path) is None
    assert same_bytes(path, path) and not same_bytes(changed, path)


def test_a_line_over_the_line_cap_is_refused_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(katfile, "MAX_LINE_BYTES", 64)
    path = tmp_path / "long.txt"
    path.write_bytes(b"Msg_Len = 8\nMsg = " + b"A" * 64 + b"\n")
    with pytest.raises(KatError, match=r"long.txt: line 2 is longer than 64 bytes"):
        canonical_sha256(path)
    path.write_bytes(b"Msg_Len = 8\nMsg = " + b"A" * 58 + b"\n")  # 64 bytes and its LF
    assert canonical_sha256(path) == canonical_sha256(path.read_bytes())


def test_a_file_is_compared_in_memory_that_does_not_grow_with_it(tmp_path):
    """Both passes of first_difference read an 8 MiB file to its end (the generated
    file is its first record) holding a line or a record at a time, not the file."""
    record = _record(100, "AA").encode()
    official = tmp_path / "official.txt"
    official.write_bytes(record * (8 * 2**20 // len(record)))
    generated = tmp_path / "generated.txt"
    generated.write_bytes(record)
    tracemalloc.start()
    try:
        where = first_difference(generated, official)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    count = 8 * 2**20 // len(record)
    assert where == ("record 1 (line 6, Msg_Len = 100) is missing from the generated file "
                     "(1 records generated, %d official)" % count)
    assert peak < 2**20, peak  # the file is 8 MiB


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "KAT_2_12_X.txt"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file") as raised:
        canonical_sha256(fifo)
    assert raised.value.filename == str(fifo)
