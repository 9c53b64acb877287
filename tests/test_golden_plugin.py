"""The golden pytest plugin and CLI, tried on a scratch golden folder: missing, created, matching,
mismatching (diff + .obtained), updated, FileCheck properties, the version set compared with,
and Triton drift."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import triton

SET = f"triton-{triton.__version__}"

IR_A = """module {
  tt.func @k() {
    %0 = arith.constant 1 : i32
    tt.return
  }
}
"""
IR_B = IR_A.replace("arith.constant 1", "arith.constant 2")

TEST_FILE = textwrap.dedent('''
    import os
    def test_k(golden):
        golden.check("kern/cuda-90/baseline.ttgir", open(os.environ["IRLAB_TEST_IR"]).read())
''')


@pytest.fixture
def scratch(pytester, tmp_path):
    pytester.makepyfile(test_scratch=TEST_FILE)
    root = tmp_path / "golden"
    ir_file = tmp_path / "produced.ttgir"
    ir_file.write_text(IR_A)
    pytester._monkeypatch.setenv("IRLAB_TEST_IR", str(ir_file))
    return root, ir_file


def _run(pytester, root, *args):
    return pytester.runpytest_subprocess(f"--golden-root={root}", "-q", *args)


def test_missing_then_created_then_matching(pytester, scratch):
    root, ir_file = scratch
    r = _run(pytester, root)
    r.assert_outcomes(failed=1)
    # this test with the same root; no `irlab golden` command: the project lists no such case
    r.stdout.fnmatch_lines([f"*no golden file*create it with: pytest test_scratch.py::test_k --golden-root {root} "
                            "--update-golden"])
    r = _run(pytester, root, "--update-golden")
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["*golden files written*", "created: kern/cuda-90/baseline.ttgir"])
    assert (root / SET / "kern/cuda-90/baseline.ttgir").read_text() == IR_A
    manifest = json.loads((root / SET / "kern/manifest.json").read_text())
    assert manifest["files"]["cuda-90/baseline.ttgir"]["triton"] == triton.__version__
    r = _run(pytester, root)
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines([f"irlab golden: comparing with the goldens of Triton {triton.__version__} (*{SET})"])
    r = _run(pytester, root, "--update-golden")
    r.stdout.fnmatch_lines(["*every golden file already matched; nothing written*"])


def test_mismatch_shows_a_diff_and_writes_obtained(pytester, scratch):
    root, ir_file = scratch
    _run(pytester, root, "--update-golden")
    ir_file.write_text(IR_B)
    r = _run(pytester, root)
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*produced IR differs from*", "*-    %0 = arith.constant 1 : i32*",
                            "*+    %0 = arith.constant 2 : i32*"])
    obtained = root / SET / "kern/cuda-90/baseline.ttgir.obtained"
    assert obtained.read_text() == IR_B
    r = _run(pytester, root, "--update-golden")
    r.stdout.fnmatch_lines(["updated: kern/cuda-90/baseline.ttgir"])
    assert not obtained.exists()


def test_diff_is_capped(pytester, scratch):
    root, ir_file = scratch
    big = IR_A.replace("    tt.return", "".join(f"    %v{i} = arith.constant {i} : i32\n" for i in range(400))
                       + "    tt.return")
    ir_file.write_text(big)
    _run(pytester, root, "--update-golden")
    ir_file.write_text(big.replace(": i32", ": i64"))
    r = _run(pytester, root)
    r.stdout.fnmatch_lines(["*more diff lines (see the .obtained file)*"])


def test_filecheck_properties_are_shared_by_versions_and_enforced(pytester, scratch):
    root, ir_file = scratch
    _run(pytester, root, "--update-golden")
    prop = root / "properties/kern/cuda-90/baseline.ttgir.check"
    prop.parent.mkdir(parents=True)
    checks = "// the constant is 1\n// CHECK-LABEL: tt.func @k\n// CHECK: arith.constant 1\n// CHECK-NOT: arith.addi\n"
    prop.write_text(checks)
    r = _run(pytester, root)
    r.assert_outcomes(passed=1)
    ir_file.write_text(IR_B)
    r = _run(pytester, root)
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*a FileCheck property of*baseline.ttgir.check no longer holds*"])
    _run(pytester, root, "--update-golden")
    assert prop.read_text() == checks                      # updates never touch the properties
    # a version without its own set still answers to the properties
    (root / SET).rename(root / "triton-3.5.0")
    r = _run(pytester, root)
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*a FileCheck property of*no longer holds*"])


def test_without_its_own_set_triton_drift_is_said_once_and_not_a_regression(pytester, scratch):
    root, ir_file = scratch
    _run(pytester, root, "--update-golden")
    (root / SET).rename(root / "triton-3.5.0")          # goldens recorded by an older Triton only
    ir_file.write_text(IR_B)
    r = _run(pytester, root)
    r.stdout.fnmatch_lines([f"irlab golden: no goldens for Triton {triton.__version__} yet; comparing with "
                            "Triton 3.5.0's*drift*"])
    r.assert_outcomes(xfailed=1)
    # recording this version's set puts it beside the old one, and the check uses it
    r = _run(pytester, root, "--update-golden")
    r.stdout.fnmatch_lines(["created: kern/cuda-90/baseline.ttgir"])
    assert (root / SET / "kern/cuda-90/baseline.ttgir").read_text() == IR_B
    assert (root / "triton-3.5.0/kern/cuda-90/baseline.ttgir").read_text() == IR_A
    _run(pytester, root).assert_outcomes(passed=1)


def test_cli_check_and_update_exit_codes(tmp_path):
    root = tmp_path / "golden"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "irlab", "golden", *args, "--root", str(root)],
                              capture_output=True, text=True)
    only = "softmax/cuda-80/baseline.ttgir"
    r = cli("check", "--only", only)
    assert r.returncode == 1 and "MISSING" in r.stdout and f"irlab golden update --only '{only}'" in r.stdout
    assert f"comparing with the goldens of Triton {triton.__version__}" in r.stdout
    r = cli("update", "--only", only)
    assert r.returncode == 0 and f"created: {only}" in r.stdout
    assert cli("check", "--only", only).returncode == 0
    g = root / SET / only
    g.write_text(g.read_text().replace("tt.return", "tt.return // edited"))
    r = cli("check", "--only", only)
    assert r.returncode == 1 and "MISMATCH" in r.stdout and (root / SET / (only + ".obtained")).exists()
    # only another version's set: differences are drift, exit code 3
    (root / SET).rename(root / "triton-3.5.0")
    r = cli("check", "--only", only)
    assert r.returncode == 3 and "1 drift" in r.stdout
    assert cli("check", "--only", "nothing-like-this").returncode == 2
