"""Bad input of the audit's smaller items: each is a precise exception from the API and
one ``ngcc: error:`` line from the command line, never a traceback or a silent plan."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _fakerun import make_run

import ngcc
from ngcc.base.errors import (
    BuildError,
    ForeignRunDirError,
    NoRecordError,
    ReportError,
    SettingError,
)
from ngcc.campaign.campaign import Campaign
from ngcc.evidence.run import load_run

REPO = Path(__file__).resolve().parents[1]


def _one_line(*args: str, **kwargs) -> str:
    done = subprocess.run([sys.executable, "-m", "ngcc", *args], capture_output=True,
                          text=True, timeout=120, **kwargs)
    assert done.returncode in (1, 2), (done.returncode, done.stderr)
    assert done.stderr.startswith("ngcc: error: ") and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


@pytest.mark.parametrize("flag", ["--trial-target", "--op-budget", "--target-ci",
                                  "--kat-timeout", "--trial-timeout"])
def test_an_infinite_setting_is_refused_by_its_name(flag, tmp_path):
    message = _one_line("campaign", "SM3", "--quick", flag, "inf", "--dry-run",
                        "--run-dir", str(tmp_path / "run"))
    assert "finite number" in message and "inf" in message  # usage: exit 2
    assert flag in message or flag[2:].replace("-", "_") in message
    assert "plan." not in message


@pytest.mark.parametrize("lengths", [[1.5], [True], [1 << 40]])
def test_lengths_that_are_no_byte_count_are_refused(lengths):
    with pytest.raises(SettingError, match="lengths must be positive whole numbers of bytes"):
        Campaign(["SM3"], lengths=lengths)


def test_a_numpy_length_is_a_length():
    assert Campaign(["SM3"], lengths=[np.int64(64)]).settings.lengths == (64,)


def test_fewer_max_trials_than_trials_is_refused():
    with pytest.raises(ValueError, match=r"max_trials \(2\) is fewer than the 5 trials"):
        Campaign(["SM3"], trials=5, max_trials=2, target_ci=5)


def test_a_dangling_symlink_run_dir_is_named(tmp_path):
    link = tmp_path / "run"
    link.symlink_to(tmp_path / "missing")
    with pytest.raises(ForeignRunDirError, match=r"symbolic link to .*missing, which does not"):
        Campaign(["SM3"], run_dir=link)


def test_hash_arguments_of_the_wrong_kind():
    with pytest.raises(TypeError, match="not bytes"):
        ngcc.hash(b"SM3", b"abc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="contiguous"):
        ngcc.hash("SM3", memoryview(b"abcdef")[::2])
    assert ngcc.hash("SM3", b"abc", bits=np.int64(8)) == ngcc.hash("SM3", b"a")


def test_run_api_errors_are_ngccs(tmp_path):
    run = load_run(make_run(tmp_path / "run"))
    with pytest.raises(NoRecordError, match="no record for Nope at 32 bytes") as caught:
        run.record("Nope", 32)
    assert isinstance(caught.value, KeyError)
    with pytest.raises(ForeignRunDirError):
        run.compare(str(tmp_path / "nowhere"))
    with pytest.raises(TypeError, match="compare with a Run or a run directory"):
        run.compare(5)  # type: ignore[arg-type]
    (tmp_path / "file").write_text("")
    with pytest.raises(ReportError, match="is a file, not a folder"):
        run.report(tmp_path / "file")


def test_build_refuses_outputs_and_links_outside_its_folder(tmp_path):
    folder = tmp_path / "sub"
    shutil.copytree(REPO / "tests" / "fixtures" / "leaky" / "early_exit", folder)
    with pytest.raises(TypeError, match="flags must be"):
        ngcc.build(folder, flags=5)  # type: ignore[arg-type]
    with pytest.raises(BuildError, match="may not name an output file"):
        ngcc.build(folder, out_dir=tmp_path / "out", extra_cflags="-o %s" % (tmp_path / "x.so"))
    assert not (tmp_path / "x.so").exists()
    (tmp_path / "outside.c").write_text("int outside;\n")
    (folder / "outside.c").symlink_to(tmp_path / "outside.c")
    with pytest.raises(BuildError, match=r"symbolic link to .*outside the folder"):
        ngcc.build(folder, out_dir=tmp_path / "out")


def test_kat_with_a_missing_official_folder_is_refused(tmp_path):
    message = _one_line("kat", "SM3", "--official", str(tmp_path / "nodir"), "--files", "2_12")
    assert "is not a folder" in message


def test_hashing_beyond_the_memory_limit_is_one_line(tmp_path):
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31));"
              "from ngcc.cli.main import main; sys.exit(main(['hash', 'SM3', '/dev/zero']))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "out of memory" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_library_changed_since_its_build_is_warned_about(tmp_path):
    from ngcc.base.errors import MeasurementWarning

    built = ngcc.build(REPO / "tests" / "fixtures" / "leaky" / "early_exit",
                       out_dir=tmp_path / "out")
    library = built.instance.library
    library.write_bytes(library.read_bytes() + b"\0")  # still loadable, other bytes
    with pytest.warns(MeasurementWarning, match="is not the .* its sidecar"):
        ngcc.instance(str(library))


def test_a_full_disk_is_named_before_the_linkers_status():
    from ngcc.library import cc as _cc

    text = _cc.shorten("/usr/bin/ld: final link failed: No space left on device\n"
                       "collect2: error: ld returned 1 exit status")
    assert text.startswith("/usr/bin/ld: final link failed: No space left on device")
