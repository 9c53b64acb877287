"""Kernels in the form torch.compile (Inductor, torch 2.13) generates them, one per family, each
under Inductor's own runtime decorator (``triton_heuristics.pointwise`` / ``reduction`` /
``persistent_reduction`` / ``template``), which builds a ``CachingAutotuner`` that compiles its
configs, times them through Inductor's benchmarker and launches through Inductor's own launcher.
Written by hand after Inductor's output (a machine without a GPU cannot make Inductor generate
CUDA kernels); the capture recorded on a GPU (tests/data/captures) holds the real ones.

Importing this module needs torch.
"""
from __future__ import annotations

import triton
import triton.language as tl
from torch._inductor.runtime import triton_heuristics, triton_helpers
from torch._inductor.runtime.hints import DeviceProperties, ReductionHint
from torch._inductor.runtime.triton_helpers import math as tl_math

H100 = DeviceProperties(type="cuda", index=0, multi_processor_count=132, cc=90, major=9,
                        regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, warp_size=32)
ALIGNED = [["tt.divisibility", 16]]


def _meta(signature: dict, aligned: tuple) -> dict:
    return {"signature": signature, "device": H100, "constants": {},
            "configs": [{(i,): ALIGNED for i in aligned}]}


def _inductor(name: str, **more) -> dict:
    return {"kernel_name": name, "mutated_arg_names": [], "backend_hash": "0" * 64, "autotune_local_cache": False,
            "autotune_remote_cache": None, "force_disable_caches": True, **more}


@triton_heuristics.pointwise(
    size_hints={"x": 16384}, filename=__file__,
    triton_meta=_meta({"in_ptr0": "*fp16", "in_ptr1": "*fp16", "out_ptr0": "*fp16", "xnumel": "i32",
                       "XBLOCK": "constexpr"}, (0, 1, 2, 3)),
    inductor_meta=_inductor("triton_poi_fused_add_relu_0", grid_type="Grid1D", num_load=2, num_reduction=0,
                            autotune_pointwise=True, max_autotune_pointwise=True),
    min_elem_per_thread=0)
@triton.jit
def triton_poi_fused_add_relu_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (x0), xmask).to(tl.float32)
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0, tl.int32)
    tmp4 = triton_helpers.maximum(tmp3, tmp2)
    tl.store(out_ptr0 + (x0), tmp4, xmask)


@triton_heuristics.reduction(
    size_hints={"x": 64, "r0_": 4096}, reduction_hint=ReductionHint.INNER, filename=__file__,
    triton_meta=_meta({"in_ptr0": "*fp16", "out_ptr0": "*fp32", "xnumel": "i32", "r0_numel": "i32",
                       "XBLOCK": "constexpr", "R0_BLOCK": "constexpr"}, (0, 1, 2, 3)),
    inductor_meta=_inductor("triton_red_fused_sum_1", grid_type="Grid1D", num_load=1, num_reduction=1))
@triton.jit
def triton_red_fused_sum_1(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 4096 * x0), r0_mask & xmask, eviction_policy="evict_first",
                       other=0.0).to(tl.float32)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(r0_mask & xmask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tl.store(out_ptr0 + (x0), tmp2, xmask)


@triton_heuristics.persistent_reduction(
    size_hints={"x": 64, "r0_": 128}, reduction_hint=ReductionHint.INNER, filename=__file__,
    triton_meta=_meta({"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32", "r0_numel": "i32",
                       "XBLOCK": "constexpr"}, (0, 1, 2, 3)),
    inductor_meta=_inductor("triton_per_fused__softmax_2", grid_type="Grid1D", num_load=1, num_reduction=2,
                            no_x_dim=False))
@triton.jit
def triton_per_fused__softmax_2(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr):
    r0_numel = 128
    R0_BLOCK: tl.constexpr = 128
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 128 * x0), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, float("-inf"))
    tmp4 = triton_helpers.max2(tmp3, 1)[:, None]
    tmp5 = tmp0 - tmp4
    tmp6 = tl_math.exp(tmp5)
    tmp7 = tl.broadcast_to(tmp6, [XBLOCK, R0_BLOCK])
    tmp9 = tl.where(xmask, tmp7, 0)
    tmp10 = tl.sum(tmp9, 1)[:, None]
    tmp11 = tmp6 / tmp10
    tl.store(out_ptr0 + (r0_1 + 128 * x0), tmp11, xmask)


@triton_heuristics.template(
    num_stages=3, num_warps=4, filename=__file__,
    triton_meta=_meta({"arg_A": "*fp16", "arg_B": "*fp16", "out_ptr0": "*fp16"}, (0, 1, 2)),
    inductor_meta=_inductor("triton_tem_fused_mm_3", **triton_heuristics.FixedGrid.setup_grid_as_args()))
@triton.jit
def triton_tem_fused_mm_3(arg_A, arg_B, out_ptr0):
    GROUP_M: tl.constexpr = 8
    EVEN_K: tl.constexpr = True
    ALLOW_TF32: tl.constexpr = False
    ACC_TYPE: tl.constexpr = tl.float32
    BLOCK_M: tl.constexpr = 128
    BLOCK_N: tl.constexpr = 128
    BLOCK_K: tl.constexpr = 64
    A = arg_A
    B = arg_B
    M = 1024
    N = 1024
    K = 1024
    stride_am = 1024
    stride_ak = 1
    stride_bk = 1024
    stride_bn = 1
    # based on triton.ops.matmul
    pid = tl.program_id(0)
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    grid_n = (N + BLOCK_N - 1) // BLOCK_N
    # re-order program ID for better L2 performance
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // (group_size)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_TYPE)
    for k_idx in range(0, tl.cdiv(K, BLOCK_K)):
        a_k_idx_vals = k_idx * BLOCK_K + rk[None, :]
        b_k_idx_vals = k_idx * BLOCK_K + rk[:, None]
        idx_m = ram[:, None]
        idx_n = a_k_idx_vals
        a = tl.load(A + (idx_n + 1024 * idx_m))
        idx_m = b_k_idx_vals
        idx_n = rbn[None, :]
        b = tl.load(B + (idx_n + 1024 * idx_m))
        acc += tl.dot(a, b, allow_tf32=ALLOW_TF32, out_dtype=ACC_TYPE)
    # rematerialize rm and rn to save registers
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    idx_m = rm[:, None]
    idx_n = rn[None, :]
    mask = (idx_m < M) & (idx_n < N)
    xindex = idx_n + 1024 * idx_m
    tl.store(out_ptr0 + (tl.broadcast_to(xindex, acc.shape)), acc, mask)


FAMILIES = {"pointwise": triton_poi_fused_add_relu_0, "reduction": triton_red_fused_sum_1,
            "persistent_reduction": triton_per_fused__softmax_2, "template": triton_tem_fused_mm_3}
