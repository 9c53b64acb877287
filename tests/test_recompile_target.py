"""``irlab recompile`` takes the target from the TTGIR's own ``ttg.target``: ``--target`` is
optional there, one that contradicts the file is refused in one line before Triton sees the IR,
and IR that makes Triton's backend abort (here: Hopper wgmma ops in a module relabelled sm_80) is
one line naming the crash, not a silent SIGABRT of irlab itself."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import triton

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / f"triton-{triton.__version__}"


def irlab(cwd, *args):
    return subprocess.run([sys.executable, "-m", "irlab", "recompile", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300, env={**os.environ, "IRLAB_CACHE_DIR": str(cwd / ".cache")})


def test_the_target_comes_from_the_file(tmp_path):
    r = irlab(tmp_path, str(GOLDEN / "softmax" / "hip-gfx942" / "baseline.ttgir"), "--out", "out")
    assert r.returncode == 0, r.stderr
    assert '"target": "hip:gfx942"' in r.stdout
    assert (tmp_path / "out" / "softmax_kernel.hsaco").is_file()


def test_a_target_that_contradicts_the_file_is_refused_before_triton_sees_it(tmp_path):
    r = irlab(tmp_path, "--target", "cuda:90", str(GOLDEN / "softmax" / "hip-gfx942" / "baseline.ttgir"))
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"irlab: error: {GOLDEN / 'softmax' / 'hip-gfx942' / 'baseline.ttgir'} is TTGIR made for hip:gfx942 (its "
        "ttg.target), not cuda:90: recompile it for hip:gfx942 (leave out --target), or compile the kernel again "
        "for cuda:90"]
    assert not (tmp_path / ".cache").exists()   # nothing compiled, no rejected IR saved


def test_ttir_names_no_target_and_needs_one(tmp_path):
    ttir = GOLDEN / "softmax" / "cuda-90" / "baseline.ttir"
    r = irlab(tmp_path, str(ttir))
    assert r.returncode == 2 and "names no target" in r.stderr and "give --target" in r.stderr, r.stderr
    r = irlab(tmp_path, str(ttir), "--target", "cuda:80")
    assert r.returncode == 0 and '"target": "cuda:80"' in r.stdout, r.stderr


def test_ir_that_crashes_the_backend_is_one_line(tmp_path):
    """wgmma (sm_90 only) in a module that says sm_80: Triton's lowering aborts the process."""
    text = (GOLDEN / "gemm_fp16" / "cuda-90" / "baseline.ttgir").read_text()
    assert 'ttg.target = "cuda:90"' in text and "warp_group_dot" in text
    (tmp_path / "relabelled.ttgir").write_text(text.replace('ttg.target = "cuda:90"', 'ttg.target = "cuda:80"'))
    r = irlab(tmp_path, "relabelled.ttgir")
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("relabelled.ttgir: error: Triton aborted while compiling this IR "
                                                   "for cuda:80 (SIG"), r.stderr[-2000:]
    assert "LLVM ERROR" in lines[0]   # Triton's own last word, not only the signal


def test_ir_whose_verification_aborts_is_one_line(tmp_path):
    """An MMA v2 layout with a 3-D instrShape: Triton's parser accepts it, its layout code asserts
    while verifying the module."""
    text = (GOLDEN / "gemm_fp16" / "cuda-80" / "baseline.ttgir").read_text()
    assert "instrShape = [16, 8]}" in text
    (tmp_path / "mma3d.ttgir").write_text(text.replace("instrShape = [16, 8]}", "instrShape = [16, 8, 16]}"))
    r = irlab(tmp_path, "mma3d.ttgir")
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    [line] = r.stderr.strip().splitlines()
    assert re.fullmatch(r"mma3d\.ttgir: error: Triton aborted while verifying this IR \(SIGABRT\): Assertion "
                        r"`tileShape\.size\(\) == rank' failed \(LinearLayoutConversions\.cpp:\d+, in "
                        r"mlir::triton::gpu::nvidiaMmaTile\)", line), line
