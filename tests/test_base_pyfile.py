"""Loading a user's Python file (irlab.base.pyfile): a file Python cannot load as source is the
caller's own error, one line, never an AttributeError from inside the import machinery."""
from __future__ import annotations

import pytest

from irlab.base.pyfile import exec_file


class FileError(Exception):
    pass


def test_a_file_without_a_python_suffix_is_the_callers_error(tmp_path):
    path = tmp_path / "kernel.txt"
    path.write_text("X = 1\n")
    with pytest.raises(FileError, match=r"cannot load kernel file .*kernel\.txt: not a Python source file"):
        exec_file(path, "irlab_test_not_python", "kernel file", FileError)


def test_a_python_file_runs_as_the_named_module(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text("X = 41 + 1\n")
    assert exec_file(path, "irlab_test_python_file", "kernel file", FileError).X == 42
