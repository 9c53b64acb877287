"""A ``.obtained`` file beside a golden exists only while the golden fails: a check that matches
again and an update both remove the one a failed check left, so no stale file suggests a
difference that is gone."""
from __future__ import annotations

import subprocess
import sys

import triton

SET = f"triton-{triton.__version__}"
ONLY = "softmax/cuda-80/baseline.ttgir"


def test_a_check_that_matches_again_removes_the_stale_obtained_file(tmp_path):
    root = tmp_path / "golden"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "irlab", "golden", *args, "--only", ONLY, "--root", str(root)],
                              capture_output=True, text=True, timeout=600)

    assert cli("update").returncode == 0
    golden = root / SET / ONLY
    obtained = golden.with_name(golden.name + ".obtained")
    good = golden.read_text()
    golden.write_text(good.replace("tt.return", "tt.return // edited"))
    r = cli("check")
    assert r.returncode == 1 and obtained.exists(), r.stdout
    golden.write_text(good)   # the golden is right again: the next check passes and cleans up
    r = cli("check")
    assert r.returncode == 0, r.stdout
    assert not obtained.exists(), "a check that matched left the .obtained file of an earlier mismatch"
    golden.write_text(good.replace("tt.return", "tt.return // edited"))
    assert cli("check").returncode == 1 and obtained.exists()
    assert cli("update").returncode == 0
    assert not obtained.exists(), "golden update left the .obtained file of an earlier mismatch"
