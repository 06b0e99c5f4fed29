"""The ``ngcc`` console script (``ngcc_script.py``): Ctrl-C while the package imports."""

from __future__ import annotations

import builtins
import subprocess
import sys

import ngcc_script


def test_ctrl_c_while_the_package_imports_is_one_line_and_exit_130(monkeypatch, capsys):
    real_import = builtins.__import__

    def interrupted(name, *args, **kwargs):
        if name == "ngcc.cli.main":
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    assert ngcc_script.main() == 130
    assert capsys.readouterr().err == "ngcc: interrupted while starting; nothing was done\n"


def test_the_script_runs_the_command_line(tmp_path):
    done = subprocess.run([sys.executable, ngcc_script.__file__, "list", "--candidates"],
                          capture_output=True, text=True, timeout=120, check=False,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hash-35" in done.stdout and "Wish" in done.stdout
