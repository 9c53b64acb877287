"""A config that cannot launch on its target -- a work-group over the target's (or the binary's)
maximum size, more LDS/shared memory or registers than one work-group may have -- is reported as
such by ``irlab report`` (with no occupancy) and pruned with the reason by ``irlab ab`` and ``irlab
search``: one check (``amd_launch_fit`` / ``nvidia_launch_fit``) says it for all of them."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from irlab import report
from irlab.report.occupancy import amd_launch_fit, nvidia_launch_fit


# --- the check, hand-worked ----------------------------------------------------------------------

def test_amd_work_group_size_against_the_hardware_and_the_binary():
    assert amd_launch_fit("gfx942", 16, 64, 0).fits                      # 16 x 64 = 1024 work-items
    fit = amd_launch_fit("gfx942", 32, 64, 0, max_flat_workgroup_size=1024)
    assert not fit and "2048 work-items (32 waves x 64 lanes)" in fit.why() and "max_flat_workgroup_size of 1024" \
        in fit.why()
    assert "hardware's maximum of 1024" in amd_launch_fit("gfx942", 32, 64, 0).why()
    # a binary compiled for at most 256 work-items cannot take 512
    fit = amd_launch_fit("gfx942", 8, 64, 0, max_flat_workgroup_size=256)
    assert not fit and "512 work-items" in fit.why() and "of 256" in fit.why()
    # wave32 (RDNA): 32 waves are 1024 work-items
    assert amd_launch_fit("gfx1100", 32, 64, 0, wavefront_size=32).fits


def test_amd_lds_and_vgprs_per_work_group():
    assert amd_launch_fit("gfx942", 4, 64, 65536).fits
    fit = amd_launch_fit("gfx942", 4, 64, 65537)
    assert not fit and "needs 65537 B of LDS, over the 65536 B a work-group may have on gfx942" == fit.why()
    assert amd_launch_fit("gfx950", 4, 64, 160 * 1024).fits and not amd_launch_fit("gfx950", 4, 64, 160 * 1024 + 1)
    # 16 waves on 4 SIMDs: 4 waves each; 128 VGPRs x 4 = 512 fits, 129 -> 136 x 4 = 544 does not
    assert amd_launch_fit("gfx942", 16, 128, 0).fits
    fit = amd_launch_fit("gfx942", 16, 129, 0)
    assert not fit and "4 waves on each of the 4 SIMDs, 544 VGPRs over the 512" in fit.why()
    # an architecture irlab has no tables for: only the work-group size is checked, and it says so
    fit = amd_launch_fit("gfx1100", 4, 300, 10 ** 6, wavefront_size=32)
    assert fit.fits and fit.unknown


def test_nvidia_threads_shared_memory_and_registers_per_block():
    assert nvidia_launch_fit(90, 32, 64, 0).fits                         # 1024 threads, 64 x 32 x 32 = 65536 registers
    fit = nvidia_launch_fit(90, 64, 16, 0)
    assert not fit and "a block of 2048 threads (64 warps) is over the 1024" in fit.why()
    fit = nvidia_launch_fit(90, 32, 65, 0)          # 65 regs -> 2080 -> 2304 per warp x 32 = 73728
    assert not fit and "32 warps x 2304 registers need 73728 registers, over the 65536" in fit.why()
    assert nvidia_launch_fit(90, 4, 128, 232448).fits
    fit = nvidia_launch_fit(90, 4, 128, 232449)
    assert not fit and fit.why() == "needs 232449 B of shared memory, over the 232448 B a block may have on sm_90"
    assert not nvidia_launch_fit(80, 4, 128, 166913)
    # every limit it exceeds, not just the first
    assert len(nvidia_launch_fit(80, 64, 255, 10 ** 6).over) == 3
    # a capability without shared-memory tables: that limit is not checked, and the answer says so
    fit = nvidia_launch_fit(120, 4, 128, 10 ** 6)
    assert fit.fits and any("shared memory" in u for u in fit.unknown)


# --- irlab report ------------------------------------------------------------------------------

def _report(tmp_path, *args):
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "irlab", "report", *args, "--json", str(out)], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return r.stdout, json.loads(out.read_text())[0]


@pytest.mark.parametrize("target, warps, why", [
    ("hip:gfx942", 32, "a work-group of 2048 work-items (32 waves x 64 lanes) is over the binary's "
                       "max_flat_workgroup_size of 1024"),
    ("cuda:90", 64, "a block of 2048 threads (64 warps) is over the 1024 a block may have"),
])
def test_report_says_a_config_that_cannot_launch_does_not_and_gives_it_no_occupancy(tmp_path, target, warps, why):
    text, data = _report(tmp_path, "--kernel", "softmax", "--target", target, "--num-warps", str(warps))
    assert f"NO: {why}" in text
    assert f"occupancy: does not launch on {target}" in text
    occupancy_rows = ("workgroups/CU", "waves/EU ") if target.startswith("hip") else ("blocks/SM", "warps/SM")
    for row in occupancy_rows:
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(row.strip()))
        assert line.rstrip().endswith(f"does not launch on {target}"), line
    assert data["occupancy"] is None and data["launch"] == {"fits": False, "over": [why], "unknown": []}
    # the same kernel at 4 warps launches and has an occupancy
    text, data = _report(tmp_path, "--kernel", "softmax", "--target", target, "--num-warps", "4")
    assert "launches                               yes" in text and data["occupancy"] and data["launch"]["fits"]


@pytest.mark.parametrize("target, stages, limit", [
    ("cuda:90", 12, "232448 B a block may have on sm_90"),
    ("hip:gfx942", 8, "65536 B a work-group may have on gfx942"),
])
def test_report_on_a_compile_whose_shared_memory_is_over_the_block_limit(target, stages, limit):
    """A deep pipeline of a 128x256x32 tile: Triton's metadata plus the binary's static shared
    memory (an sm_90 cubin's mbarriers) is more than one block may have."""
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    spec = get("gemm_fp16")
    res = compile_kernel(spec, target, config=spec.config("128x256x32-w8").with_options(num_stages=stages))
    rep = report.from_compile(res)
    used = res.metadata["shared"] + rep.resources.get("static_shared", rep.resources.get("lds_static", 0))
    memory = "LDS" if res.target.is_amd else "shared memory"
    assert rep.launch.why() == f"needs {used} B of {memory}, over the {limit}" and rep.occupancy is None
    assert rep.metrics()["launches"] == f"NO: {rep.launch.why()}"


# --- irlab ab / search -------------------------------------------------------------------------

WIDE = '''import dataclasses
from irlab import TileConfig
from irlab.kernels import get

SPEC = dataclasses.replace(get("softmax"), name="softmax_warps", default_config="4096-w8", configs={
    "4096-w8": TileConfig("4096-w8", {"BLOCK_SIZE": 4096}, 8, 1),
    "4096-w32": TileConfig("4096-w32", {"BLOCK_SIZE": 4096}, 32, 1)})
'''


@pytest.mark.parametrize("command", ["ab", "search"])
def test_ab_and_search_prune_a_config_that_cannot_launch_with_the_reason(tmp_path, command):
    (tmp_path / "wide_softmax.py").write_text(WIDE)
    r = subprocess.run([sys.executable, "-m", "irlab", command, "--kernel", "wide_softmax.py", "--variants", "identity",
                        "--configs", "4096-w8,4096-w32", "--target", "hip:gfx942", "--static-only", "--out", "out"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600,
                       env={**os.environ, "IRLAB_CACHE_DIR": str(tmp_path / ".cache")})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    why = ("does not launch on hip:gfx942: a work-group of 2048 work-items (32 waves x 64 lanes) is over the binary's "
           "max_flat_workgroup_size of 1024")
    for variant in ("baseline", "identity"):
        assert f"not timed: 4096-w32 {variant}: pruned: {why}" in r.stdout, r.stdout
    assert "  4096x1000 4096-w8: baseline" in r.stdout
    static = [json.loads(ln) for ln in (tmp_path / "out" / "static.jsonl").read_text().splitlines()]
    wide = [s for s in static if s["config"] == "4096-w32"]
    assert len(wide) == 2 and all(s["status"] == "pruned" and s["reason"] == why and s["occupancy"] is None
                                  for s in wide)
