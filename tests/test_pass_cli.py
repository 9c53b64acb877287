"""`irlab passes` and `irlab pass NAME FILE`: IR on stdout, diagnostics on stderr."""
from __future__ import annotations

import subprocess
import sys

import pytest

from irlab.bridge.compile import compile_kernel
from irlab.kernels import KERNELS


def run(*args, input=None):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, input=input)


@pytest.fixture(scope="module")
def two_modules(tmp_path_factory):
    d = tmp_path_factory.mktemp("split")
    a = compile_kernel(KERNELS["softmax"], "cuda:80").text("ttgir", locations=False)
    b = compile_kernel(KERNELS["softmax"], "hip:gfx942").text("ttgir", locations=False)
    path = d / "two.ttgir"
    path.write_text(a + "// -----\n" + b)
    return path, a, b


def test_passes_lists_registered_passes():
    r = run("passes")
    assert r.returncode == 0
    assert "identity: parse and reprint the IR unchanged" in r.stdout


def test_pass_on_a_file_and_on_stdin(two_modules):
    path, a, b = two_modules
    single = path.parent / "one.ttgir"
    single.write_text(a)
    r = run("pass", "identity", str(single))
    assert r.returncode == 0 and r.stdout == a
    assert "note: left all" in r.stderr
    r = run("pass", "identity", "-", input=a)
    assert r.returncode == 0 and r.stdout == a


def test_split_input_file(two_modules):
    path, a, b = two_modules
    r = run("pass", "identity", str(path), "--split-input-file")
    assert r.returncode == 0, r.stderr
    assert r.stdout == a + "// -----\n" + b
    assert r.stderr.count("note: left all") == 2


def test_split_input_errors_point_into_the_whole_file(two_modules, tmp_path):
    path, a, b = two_modules
    bad = tmp_path / "bad.ttgir"
    broken = b.replace("tt.return", "tt.return $", 1)
    bad.write_text(a + "// -----\n" + broken)
    r = run("pass", "identity", str(bad), "--split-input-file")
    assert r.returncode == 2
    line = a.count("\n") + 1 + broken[:broken.index("$")].count("\n") + 1
    assert f"{bad}:{line}:" in r.stderr


def test_unknown_pass_or_option_is_a_usage_error(two_modules):
    path, a, _ = two_modules
    r = run("pass", "no-such-pass", str(path))
    assert r.returncode == 2 and "no pass named 'no-such-pass'" in r.stderr
    r = run("pass", "identity", str(path), "--option", "bogus=1")
    assert r.returncode == 2 and "has no option 'bogus'" in r.stderr
