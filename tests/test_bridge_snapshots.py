"""Per-pass snapshots and the "which pass introduced it" query."""
from __future__ import annotations

import json
import subprocess
import sys

from irlab.bridge import snapshots as snap
from irlab.bridge.compile import compile_kernel
from irlab.kernels import KERNELS


def test_snapshots_are_written_after_every_pass(tmp_path):
    res = compile_kernel(KERNELS["gemm_fp16"], "hip:gfx942", snapshot_dir=tmp_path)
    snap.write_index(tmp_path, res.snapshots, {"kernel": res.kernel})
    ttgir = [s for s in res.snapshots if s.stage == "ttgir"]
    n_passes = len([c for c in res.pipeline if c.stage == "ttgir"])
    assert len(ttgir) == n_passes + 1  # the stage's input, then one file per pass
    assert ttgir[0].pass_name == "input" and (tmp_path / "ttgir" / "000-input.mlir").exists()
    index = json.loads((tmp_path / "index.json").read_text())
    assert len(index["snapshots"]) == len(res.snapshots)


def test_which_pass_introduced_buffer_loads_on_gfx942(tmp_path):
    res = compile_kernel(KERNELS["gemm_fp16"], "hip:gfx942", snapshot_dir=tmp_path)
    snap.write_index(tmp_path, res.snapshots, {})
    steps = snap.timeline(tmp_path, r"^amdg\.buffer_load$")
    before, after = snap.first_change(steps, "introduced")
    assert after.pass_name == "amd.ttgpuir.convert_to_buffer_ops" and before.count == 0 and after.count > 0
    # the pipeliner multiplies tt.loads (prologue, loop), and buffer-op conversion removes the last
    steps = snap.timeline(tmp_path, r"^tt\.load$", stage="ttgir")
    assert snap.first_change(steps, "introduced")[1].pass_name == "amd.ttgpuir.pipeline"
    last = snap.changes(steps)[-1]
    assert last[1].pass_name == "amd.ttgpuir.convert_to_buffer_ops" and last[1].count == 0
    # the software pipeliner is what first puts ttg.local_load into the kernel
    steps = snap.timeline(tmp_path, r"ttg\.local_load")
    assert snap.first_change(steps, "introduced")[1].pass_name == "amd.ttgpuir.pipeline"


def test_which_pass_cli(tmp_path):
    r = subprocess.run([sys.executable, "-m", "irlab", "which-pass", "--target", "cuda:90", "--introduced",
                        "ttng.warp_group_dot"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("ttgir pass #") and \
        "ttgpuir.accelerate_matmul first introduced ops matching 'ttng.warp_group_dot': 0 -> 1" in r.stdout.splitlines()[0]
    r = subprocess.run([sys.executable, "-m", "irlab", "which-pass", "--target", "cuda:90", "--introduced",
                        "no_such_op_anywhere"], capture_output=True, text=True)
    assert r.returncode == 1 and "no pass introduced" in r.stdout
