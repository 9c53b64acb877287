"""The tutorial GEMM on int8 inputs with an int32 accumulator, for the tests: with BLOCK_N = 8 its
B tile is 8 bytes wide, narrower than the 16 bytes a TMA box needs (``descriptor-loads`` must
refuse it); with BLOCK_N = 16 both tiles fit."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def i8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :])
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptr + stride_cm * offs_cm[:, None] + offs_cn[None, :], acc, mask=c_mask)


CONFIGS = {
    "64x8x64-w4": TileConfig("64x8x64-w4", {"BLOCK_M": 64, "BLOCK_N": 8, "BLOCK_K": 64}, 4, 3),
    "64x16x64-w4": TileConfig("64x16x64-w4", {"BLOCK_M": 64, "BLOCK_N": 16, "BLOCK_K": 64}, 4, 3),
}


def bind(shape, cfg: TileConfig) -> Problem:
    M, N, K = shape["M"], shape["N"], shape["K"]
    args = {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "M": M, "N": N, "K": K,
            "stride_am": K, "stride_bk": N, "stride_cm": N}
    return Problem(args, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    M, N, K = shape["M"], shape["N"], shape["K"]
    a = torch.randint(-8, 8, (M, K), device=device, dtype=torch.int8, generator=g)
    b = torch.randint(-8, 8, (K, N), device=device, dtype=torch.int8, generator=g)
    return {"a": a, "b": b, "c": torch.full((M, N), -1, device=device, dtype=torch.int32)}


def launch_args(inputs, shape, cfg: TileConfig):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    meta = cfg.meta
    grid = (triton.cdiv(shape["M"], meta["BLOCK_M"]) * triton.cdiv(shape["N"], meta["BLOCK_N"]), 1, 1)
    return grid, {"a_ptr": a, "b_ptr": b, "c_ptr": c, "M": shape["M"], "N": shape["N"], "K": shape["K"],
                  "stride_am": a.stride(0), "stride_bk": b.stride(0), "stride_cm": c.stride(0), **meta}


def reference(inputs):
    # exact: |sum| <= K * 64 stays far below 2**53
    return (inputs["a"].double() @ inputs["b"].double()).to(inputs["c"].dtype)


SPEC = KernelSpec(
    name="i8_gemm",
    fn=i8_matmul,
    language="triton",
    description="int8 GEMM with an int32 accumulator and masked K loop (tutorial form)",
    configs=CONFIGS,
    default_config="64x16x64-w4",
    default_shape={"M": 512, "N": 512, "K": 512},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=reference,
    output=lambda inputs: inputs["c"],
)
