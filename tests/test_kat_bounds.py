"""What ``ngcc kat`` reads of the KAT files it is given (issue 45): a file over
``katfile.MAX_KAT_BYTES`` is refused unread, a symbolic link in an ``--official``
folder is refused by name (as in an archive) and never opened, and neither stops the
check of the other files."""

from __future__ import annotations

import shutil

import ngcc
import ngcc.kat
from ngcc.cli.main import main

SECRET = "SECRET-FIRST-LINE-4242"


def _sm3_official(tmp_path, kind="2_23"):
    """A folder holding the official (here: generated) KAT file of SM3, which has no
    manifest line, so the folder's file is its reference."""
    [made] = ngcc.kat.check("SM3", files=kind, out_dir=tmp_path / "made", keep=True,
                            progress=False)
    folder = tmp_path / "official"
    folder.mkdir()
    shutil.copy(made.files[0].path, folder / made.files[0].name)
    return folder, folder / made.files[0].name


def test_an_official_file_of_1_gib_is_an_error_naming_it_and_the_cap(tmp_path, capsys):
    folder, path = _sm3_official(tmp_path)
    path.unlink()
    with path.open("wb") as handle:
        handle.truncate(2**30)  # sparse: no disk used
    status = main(["kat", "SM3", "--files", "2_12,2_23", "--official", str(folder),
                   "--out", str(tmp_path / "out"), "--no-progress"])
    assert status == 1
    [result] = ngcc.kat.check("SM3", out_dir=tmp_path / "again", progress=False,
                              official_dir=folder)
    by_kind = {f.kind: f for f in result.files}
    assert by_kind["2_12"].verdict == "NOKAT"  # the other file is still checked
    assert by_kind["2_23"].verdict == "ERROR"
    assert by_kind["2_23"].detail == (
        "the KAT file %s is 1073741824 bytes, more than ngcc reads of a KAT file "
        "(268435456 bytes, 256 MiB; the largest official one is about 200 MB): not read"
        % path)
    assert "more than ngcc reads of a KAT file" in capsys.readouterr().out
    assert not list((tmp_path / "again").rglob("*.txt")), "the generated file is removed"


def test_a_linked_official_file_is_refused_by_name_and_never_opened(tmp_path):
    folder, path = _sm3_official(tmp_path)
    secret = tmp_path / "id_rsa"
    secret.write_text(SECRET + "\nsecond line\n")
    path.unlink()
    path.symlink_to(secret)
    [result] = ngcc.kat.check("SM3", files="2_23", out_dir=tmp_path / "out", progress=False,
                              official_dir=folder)
    [file] = result.files
    assert file.verdict == "ERROR"
    assert file.detail.startswith("the official KAT file %s is a symbolic link (or lies under "
                                  "one, %s) to %s: not read" % (path, path, secret))
    assert SECRET not in result.log.read_text()


def test_an_official_folder_linked_inside_is_refused_too(tmp_path):
    folder, path = _sm3_official(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    path.rename(outside / path.name)
    (folder / "SM3").symlink_to(outside)  # DIR/<folder>/KAT_*.txt through a link
    [result] = ngcc.kat.check("SM3", files="2_23", out_dir=tmp_path / "out", progress=False,
                              official_dir=folder)
    assert result.files[0].verdict == "ERROR"
    assert "lies under one, %s)" % (folder / "SM3") in result.files[0].detail


def test_the_official_folder_itself_may_be_a_link_the_user_named(tmp_path):
    folder, _ = _sm3_official(tmp_path)
    named = tmp_path / "named"
    named.symlink_to(folder)
    [result] = ngcc.kat.check("SM3", files="2_23", out_dir=tmp_path / "out", progress=False,
                              official_dir=named)
    assert result.files[0].verdict == "PASS", result.files[0].detail
    assert result.files[0].basis == "official files"


def test_a_linked_official_copy_beside_a_manifest_line_leaves_the_verdict(tmp_path):
    """Where a manifest line decides, the link is refused in the detail, the verdict
    stands."""
    inst = next(i for i in ngcc.instances() if i.name == "Wish512")
    folder = tmp_path / "official"
    folder.mkdir()
    secret = tmp_path / "id_rsa"
    secret.write_text(SECRET + "\n")
    (folder / "KAT_2_23_Wish512.txt").symlink_to(secret)
    [result] = ngcc.kat.check(inst, files="2_23", out_dir=tmp_path / "out", progress=False,
                              official_dir=folder)
    [file] = result.files
    assert file.verdict == "PASS" and file.basis == "shipped manifest"
    assert "is a symbolic link (or lies under one" in file.detail
    assert SECRET not in result.log.read_text()
