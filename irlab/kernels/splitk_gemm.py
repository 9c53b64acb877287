"""Split-K fp16 GEMM whose epilogue accumulates into fp32 C with ``tl.atomic_add``.

The source documents' caveat kernel: OPTIMIZE_EPILOGUE only applies to ``tt.store``; split-K and
stream-K epilogues end in an atomic, and the epilogue pass must refuse them.
"""
from __future__ import annotations

import triton
import triton.language as tl

from .shapes import RowMajorGemm, TileConfig


@triton.jit
def splitk_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                         stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_left = K - k * BLOCK_K * SPLIT_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * SPLIT_K * stride_ak
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.atomic_add(c_ptrs, acc, mask=c_mask)


CONFIGS = {
    "128x128x32-s4-w4": TileConfig("128x128x32-s4-w4",
                                   {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "SPLIT_K": 4}, 4, 2),
    "64x64x64-s8-w4": TileConfig("64x64x64-s8-w4",
                                 {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "SPLIT_K": 8}, 4, 2),
}


# row-major A and B in fp16, C in fp32: the atomics accumulate into it, so it starts at zero
GEMM = RowMajorGemm(c="fp32")


def make_inputs(shape, device="cuda", seed=0):
    inputs = GEMM.make_inputs(shape, device, seed)
    inputs["c"].zero_()
    return inputs


def launch_args(inputs, shape, cfg: TileConfig):
    """SPLIT_K programs along the grid's second axis per output tile, adding into a zeroed C."""
    inputs["c"].zero_()
    grid, args = GEMM.launch_args(inputs, shape, cfg)
    return (grid[0], cfg.meta["SPLIT_K"], 1), args


SPEC = GEMM.spec("gemm_splitk", splitk_matmul_kernel, CONFIGS, "128x128x32-s4-w4",
                 description="split-K fp16 GEMM, fp32 epilogue through tl.atomic_add",
                 default_shape={"M": 1024, "N": 1024, "K": 8192}, make_inputs=make_inputs, launch_args=launch_args,
                 reference=lambda inputs: (inputs["a"].float() @ inputs["b"].float()), tolerance={"rel_fro": 1e-5})
