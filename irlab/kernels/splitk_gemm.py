"""Split-K fp16 GEMM whose epilogue accumulates into fp32 C with ``tl.atomic_add``.

The source documents' caveat kernel: OPTIMIZE_EPILOGUE only applies to ``tt.store``; split-K and
stream-K epilogues end in an atomic, and the epilogue pass must refuse them.
"""
from __future__ import annotations

import triton
import triton.language as tl

from .spec import KernelSpec, Problem, TileConfig


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


def bind(shape, cfg: TileConfig) -> Problem:
    M, N, K = shape["M"], shape["N"], shape["K"]
    args = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": M, "N": N, "K": K,
            "stride_am": K, "stride_ak": 1, "stride_bk": N, "stride_bn": 1, "stride_cm": N, "stride_cn": 1}
    return Problem(args, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    M, N, K = shape["M"], shape["N"], shape["K"]
    a = torch.randn((M, K), device=device, dtype=torch.float16, generator=g)
    b = torch.randn((K, N), device=device, dtype=torch.float16, generator=g)
    c = torch.zeros((M, N), device=device, dtype=torch.float32)  # atomics accumulate into it
    return {"a": a, "b": b, "c": c}


def launch_args(inputs, shape, cfg: TileConfig):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    meta = cfg.meta
    c.zero_()
    grid = (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), meta["SPLIT_K"], 1)
    args = {"a_ptr": a, "b_ptr": b, "c_ptr": c, "M": M, "N": N, "K": K,
            "stride_am": a.stride(0), "stride_ak": a.stride(1), "stride_bk": b.stride(0),
            "stride_bn": b.stride(1), "stride_cm": c.stride(0), "stride_cn": c.stride(1), **meta}
    return grid, args


SPEC = KernelSpec(
    name="gemm_splitk",
    fn=splitk_matmul_kernel,
    language="triton",
    description="split-K fp16 GEMM, fp32 epilogue through tl.atomic_add",
    configs=CONFIGS,
    default_config="128x128x32-s4-w4",
    default_shape={"M": 1024, "N": 1024, "K": 8192},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=lambda inputs: (inputs["a"].float() @ inputs["b"].float()),
    output=lambda inputs: inputs["c"],
    flops=lambda shape: 2.0 * shape["M"] * shape["N"] * shape["K"],
    tolerance={"rel_fro": 1e-5},
)
