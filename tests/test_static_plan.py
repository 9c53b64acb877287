"""``irlab ab`` / ``irlab search`` with ``--static-only``: what a GPU run would time (the screening
cells: shape, config, entries), what was pruned and why -- on the console, in README.md and in
summary.json -- from the same cells the screen would run."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("command", ["ab", "search"])
def test_static_only_lists_the_cells_a_gpu_run_would_time_and_what_is_pruned(tmp_path, command):
    # on sm_80, 128x256x64 at 5 stages needs more shared memory than a block may have: pruned;
    # identity compiles to the baseline's binary: not timed
    r = subprocess.run([sys.executable, "-m", "irlab", command, "--kernel", "gemm_fp16", "--variants",
                        "optimize-epilogue,identity", "--shapes", "2048x2048x2048", "--stages", "5", "--configs",
                        "128x256x64-w8,64x128x32-w4", "--target", "cuda:80", "--static-only", "--out", "out"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600,
                       env={**os.environ, "IRLAB_CACHE_DIR": str(tmp_path / ".cache")})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "would screen 1 cell(s)" in out, out
    assert "  2048x2048x2048 64x128x32-w4-s5: baseline, optimize-epilogue\n" in out, out
    for variant in ("baseline", "optimize-epilogue", "identity"):
        assert (f"not timed: 128x256x64-w8-s5 {variant}: pruned: does not launch on cuda:80: needs 196608 B of shared "
                "memory, over the 166912 B a block may have on sm_80") in out, out
    assert "not timed: 64x128x32-w4-s5 identity: same binary as baseline: no change" in out, out
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "## What a GPU run would time" in readme
    assert "| 2048x2048x2048 | 64x128x32-w4-s5 | baseline, optimize-epilogue |" in readme
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["would_time"] == [{"shape": "2048x2048x2048", "config": "64x128x32-w4-s5",
                                      "entries": ["baseline", "optimize-epilogue"]}]
    assert len([x for x in summary["not_timed"] if x["status"] == "pruned"]) == 3


def test_the_plan_is_the_screen_s_own_cells():
    """would_time reads the cells screen() runs: one builder, so the list cannot drift from the run."""
    from irlab.kernels import get
    from irlab.timing.search import Search, _key
    from irlab.base.targets import Target
    from irlab.kernels.tile_configs import config_space
    from irlab.passkit.variant import Variant
    spec = get("gemm_fp16")
    configs = config_space(spec, (3,), ["128x128x64-w8", "64x128x32-w4"])
    variants = [Variant.baseline(), Variant.baseline().then(name="other")]
    s = Search("gemm_fp16", Target.parse("cuda:90"), [{"M": 64, "N": 64, "K": 64}], configs, variants, "unused")
    static = [{"key": _key(c, v), "status": "ok" if (c is configs[0] or v.name == "baseline") else "pruned"}
              for c in configs for v in variants]
    assert s.would_time(static) == [
        {"shape": "64x64x64", "config": configs[0].name, "entries": ["baseline", "other"]},
        {"shape": "64x64x64", "config": configs[1].name, "entries": ["baseline"]}]
    assert [c.config for c in s.screen_cells(static)] == [configs[0].name, configs[1].name]
