"""The GEMM candidates experiment's timed part on a CPU (the fake runner): one cell per shape,
every candidate against Triton's best config with cuBLAS beside it, and a candidate whose output
is wrong is reported as not timed with the reason."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from helpers import compile_or_xfail_warp_specialization

from lab import gemm_candidates as gc

FAKE = str(Path(__file__).parent / "fakes" / "fake_runner.py") + ":FakeRunner"


def test_every_candidate_is_reported_against_the_best_config(tmp_path, monkeypatch):
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"times": {"baseline": 1.0, "tma-ws": 0.9, "torch.matmul": 0.95},
                                                  "wrong": ["tma-loads"]}))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    args = argparse.Namespace(method="graph", rounds=11, launches=3, resume=False)
    lines = gc.timed_part([{"M": 64, "N": 64, "K": 64}, {"M": 32, "N": 64, "K": 64}], "tma-ws,tma-loads", args,
                          tmp_path, runner=FAKE)
    rows = {tuple(c.strip() for c in ln.strip("|").split("|")[:2]): ln for ln in lines if ln.startswith("| 64x64x64")}
    assert "+11." in rows[("64x64x64", "tma-ws")] and "**" in rows[("64x64x64", "tma-ws")]
    assert "128x256x64-w4-s3" in rows[("64x64x64", "tma-ws")]
    assert "not timed: wrong" in rows[("64x64x64", "tma-loads")]
    assert "+5." in rows[("64x64x64", "torch.matmul (cuBLAS)")]
    assert sum(1 for ln in lines if ln.startswith("| 32x64x64 | tma-ws |")) == 1


# --- on a GPU: every persistent candidate against the baseline where tiles have remainders -------

# 1040x1008x1072: remainders on every axis for every candidate's tile (TMA loads and store still
# allowed); 4160x4000x1072: more tiles than SMs, so each program loops over several
REMAINDER_SHAPES = [(1040, 1008, 1072), (4160, 4000, 1072)]
PERSISTENT = [c for c in gc.EXTRA if c.variant.launch is not None]


def test_the_persistent_candidates_are_all_persistent_variants():
    assert len(PERSISTENT) >= 9 and all(c.variant.launch.grid == "persistent" for c in PERSISTENT)


@pytest.mark.gpu
@pytest.mark.parametrize("mnk", REMAINDER_SHAPES, ids=["x".join(map(str, s)) for s in REMAINDER_SHAPES])
@pytest.mark.parametrize("cand", PERSISTENT, ids=lambda c: c.label)
def test_every_persistent_candidate_matches_the_baseline_on_the_gpu(cand, mnk):
    """What lab.gemm_candidates times is first checked at the seed shapes (no remainder at
    128x256); here each candidate's own tile config runs where the last tiles are partial and the
    programs loop, C initialised to NaN so that an unwritten element shows."""
    import torch
    from irlab.kernels import KERNELS
    from irlab.base.targets import Target
    from irlab.timing.gpu import install_scratch_allocator
    from irlab.passkit.variant import is_persistent
    install_scratch_allocator(torch)
    target = Target.parse(f"cuda:{''.join(map(str, torch.cuda.get_device_capability()))}")
    if target.arch != "90":
        pytest.skip("the persistent candidates are Hopper (sm_90) variants")
    gemm, shape = KERNELS["gemm_fp16"], dict(zip("MNK", mnk))
    outs = {}
    for label, variant in (("baseline", gc.BASELINE), (cand.label, cand.variant)):
        res = compile_or_xfail_warp_specialization(gemm, target, variant, shape=shape, config=cand.config)
        inputs = gemm.make_inputs(shape, "cuda", seed=5)
        grid, values = gemm.launch_call(inputs, shape, cand.config, target)
        res.compiled[res.launch_grid(grid, args=values)](*values)
        torch.cuda.synchronize()
        outs[label] = inputs["c"].float()
        if variant is cand.variant:
            assert is_persistent(res.asm["ttir"]) and "tt.descriptor_store" in res.asm["ttir"]
            ref = gemm.reference(inputs).float()
    assert not torch.isnan(outs[cand.label]).any(), "the candidate left elements of C unwritten"
    torch.testing.assert_close(outs[cand.label], outs["baseline"], rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(outs[cand.label], ref, rtol=1e-2, atol=1e-1)
