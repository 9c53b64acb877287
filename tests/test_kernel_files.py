"""A user's own kernel through every static command: a kernel file named as path/file.py[:NAME]
and, registered by name, a folder on IRLAB_KERNEL_PATH (the walkthrough's bias + ReLU GEMM, copied
to a folder of its own; cross-compiled, no GPU)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WALKTHROUGH = Path(__file__).resolve().parent.parent / "docs" / "walkthrough" / "bias_relu_gemm.py"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("userproj")
    (root / "kernels").mkdir()
    shutil.copy(WALKTHROUGH, root / "kernels" / "my_gemm.py")
    return root


def irlab(project, *args, env=None):
    r = subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=project,
                       env={**os.environ, **(env or {})})
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    return r


@pytest.mark.parametrize("target", ["cuda:90", "hip:gfx942"])
def test_compile_a_kernel_file_for_two_targets(project, target):
    r = irlab(project, "compile", "--kernel", "kernels/my_gemm.py:SPEC", "--target", target, "--out", f"out-{target[:3]}")
    assert r.returncode == 0, r.stderr
    isa = "amdgcn" if target.startswith("hip") else "ptx"
    assert (project / f"out-{target[:3]}" / f"matmul_bias_relu.{isa}").exists()


def test_report_vs_a_variant(project):
    r = irlab(project, "report", "--kernel", "kernels/my_gemm.py", "--target", "cuda:90", "--vs", "optimize-epilogue")
    assert r.returncode == 0, r.stderr
    assert "optimize-epilogue" in r.stdout and "registers" in r.stdout


def test_pipeline_snapshots_and_which_pass(project):
    kernel = "kernels/my_gemm.py"
    r = irlab(project, "pipeline", "show", "--kernel", kernel, "--target", "hip:gfx942", "--stage", "ttgir", "--json")
    assert r.returncode == 0, r.stderr
    passes = json.loads(r.stdout)
    assert any("accelerate_matmul" in json.dumps(p) for p in (passes if isinstance(passes, list) else [passes]))
    r = irlab(project, "snapshots", "take", "--kernel", kernel, "--target", "cuda:90", "--out", "snaps")
    assert r.returncode == 0, r.stderr
    assert len(list((project / "snaps").rglob("*.mlir"))) > 10
    r = irlab(project, "which-pass", "--kernel", kernel, "--target", "cuda:90", "--introduced", "ttng.warp_group_dot")
    assert r.returncode == 0, r.stderr
    assert "accelerate_matmul" in r.stdout


def test_a_folder_on_irlab_kernel_path_registers_its_specs_by_name(project):
    env = {"IRLAB_KERNEL_PATH": str(project / "kernels")}
    r = irlab(project, "kernels", env=env)
    assert r.returncode == 0 and "bias_relu_gemm" in r.stdout, r.stderr
    r = irlab(project, "compile", "--kernel", "bias_relu_gemm", "--target", "cuda:80", env=env)
    assert r.returncode == 0, r.stderr
    r = irlab(project, "search", "--kernel", "bias_relu_gemm", "--target", "cuda:90", "--variants", "optimize-epilogue",
              "--configs", "128x128x64-w8", "--stages", "3", "--static-only", "--out", "search", "--jobs", "1", env=env)
    assert r.returncode == 0, r.stderr
    assert "candidates passed static pruning" in r.stderr + r.stdout
