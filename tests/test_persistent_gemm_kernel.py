"""gemm_persistent_tma, the persistent TMA GEMM irlab times ``gemm_fp16``'s persistent-tma variant
against: it cross-compiles for sm_90 on the installed Triton (3.6 and 3.9) with TMA loads and
stores and a flattened tile loop, launches one program per SM (at most one per tile), and takes
gemm_fp16's problem, inputs and reference, so the two kernels' outputs compare."""
from __future__ import annotations

import pytest

from irlab.bridge.compile import compile_kernel
from irlab.kernels import KERNELS, get
from irlab.kernels import persistent_gemm
from irlab.base.targets import Target

SPEC = get("gemm_persistent_tma")
ODD = {"M": 4864, "N": 4096, "K": 4160}   # the third shape of the comparison: K is not a multiple of 128


def test_it_is_a_corpus_kernel_with_gemm_fp16s_problem():
    assert KERNELS["gemm_persistent_tma"] is SPEC and SPEC.timeable and SPEC.library is not None
    gemm = get("gemm_fp16")
    assert SPEC.default_shape == gemm.default_shape and SPEC.shape(ODD) == gemm.shape(ODD)
    assert SPEC.make_inputs is gemm.make_inputs and SPEC.reference is gemm.reference
    assert not SPEC.supports("cuda:80") and SPEC.supports("cuda:90")
    # tutorial 09's kind of space: 128-row tiles, 8 warps, 3-4 stages, with and without a split store
    assert {c.meta["BLOCK_M"] for c in SPEC.configs.values()} == {128}
    assert {c.meta["SPLIT_STORE"] for c in SPEC.configs.values()} == {True, False}
    assert len(SPEC.configs) == len({(tuple(sorted(c.meta.items())), c.num_warps, c.num_stages)
                                     for c in SPEC.configs.values()})


@pytest.mark.parametrize("config", ["128x256x64-w8-s3-split", "128x128x64-w8-s4"])
def test_it_cross_compiles_for_sm90_with_tma_and_a_flattened_tile_loop(config):
    res = compile_kernel(SPEC, Target.parse("cuda:90"), shape=ODD, config=config)
    ttir, ttgir = res.text("ttir"), res.text("ttgir")
    assert "tt.flatten" in ttir and ttir.count("tt.make_tensor_descriptor") == 3
    assert "ttng.async_tma_copy_global_to_local" in ttgir and "ttng.async_tma_copy_local_to_global" in ttgir
    stores = ttgir.count("ttng.async_tma_copy_local_to_global")
    split = SPEC.configs[config].meta["SPLIT_STORE"]
    # the fused loop's epilogue, and the copy of it Triton keeps for a loop that runs no K step
    assert stores == (4 if split else 2)
    assert "ttng.warp_group_dot" in ttgir   # wgmma, from shared memory the TMA filled
    assert res.metadata.get("num_warps") == SPEC.configs[config].num_warps


def test_it_launches_one_program_per_sm_and_at_most_one_per_tile():
    torch = pytest.importorskip("torch")
    cfg = SPEC.config("128x256x64-w8-s3-split")
    shape = SPEC.shape(ODD)
    inputs = SPEC.make_inputs(shape, "cpu", seed=0)
    grid, values = SPEC.launch_call(inputs, shape, cfg, Target.parse("cuda:90"))
    assert grid == (persistent_gemm.DEFAULT_SMS, 1, 1)   # 38 x 16 tiles, more than an H100 has SMs
    assert values[:3] == [inputs["a"], inputs["b"], inputs["c"]] and values[3:6] == [4864, 4096, 4160]
    small = SPEC.shape({"M": 256, "N": 512, "K": 64})
    grid, _ = SPEC.launch_call(SPEC.make_inputs(small, "cpu", seed=0), small, cfg)
    assert grid == (2 * 2, 1, 1)
    with pytest.raises(ValueError, match="row-major"):
        bad = dict(inputs, b=torch.empty((shape["N"], shape["K"]), dtype=torch.float16).t())
        SPEC.launch_args(bad, shape, cfg)
