"""A persistent fp16 GEMM for the tests: each program loops over output tiles, and the tile's
epilogue (the store after the K loop) sits inside that tile loop."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, NUM_SMS: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * num_pid_n
    for tile in range(pid, num_tiles, NUM_SMS):
        pid_m = tile // num_pid_n
        pid_n = tile % num_pid_n
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            kk = k * BLOCK_K + offs_k
            a = tl.load(a_ptr + (offs_m % M)[:, None] * stride_am + kk[None, :], mask=kk[None, :] < K, other=0.0)
            b = tl.load(b_ptr + kk[:, None] * stride_bk + (offs_n % N)[None, :], mask=kk[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        c = acc.to(tl.float16)
        mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], c, mask=mask)


def bind(shape, cfg: TileConfig) -> Problem:
    M, N, K = shape["M"], shape["N"], shape["K"]
    args = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": M, "N": N, "K": K,
            "stride_am": K, "stride_bk": N, "stride_cm": N}
    return Problem(args, {"NUM_SMS": 132, **cfg.meta}, cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    M, N, K = shape["M"], shape["N"], shape["K"]
    return {"a": torch.randn((M, K), device=device, dtype=torch.float16, generator=g),
            "b": torch.randn((K, N), device=device, dtype=torch.float16, generator=g),
            "c": torch.full((M, N), float("nan"), device=device, dtype=torch.float16)}


def launch_args(inputs, shape, cfg: TileConfig):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    return (132, 1, 1), {"a_ptr": a, "b_ptr": b, "c_ptr": c, "M": shape["M"], "N": shape["N"], "K": shape["K"],
                         "stride_am": a.stride(0), "stride_bk": b.stride(0), "stride_cm": c.stride(0),
                         "NUM_SMS": 132, **cfg.meta}


SPEC = KernelSpec(
    name="persistent_gemm",
    fn=persistent_matmul,
    language="triton",
    description="persistent fp16 GEMM: a tile loop around the K loop, the epilogue inside the tile loop",
    configs={"128x128x64-w8": TileConfig("128x128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 8, 3)},
    default_config="128x128x64-w8",
    default_shape={"M": 4096, "N": 4096, "K": 4096},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=lambda inputs: inputs["a"] @ inputs["b"],
    output=lambda inputs: inputs["c"],
    flops=lambda shape: 2.0 * shape["M"] * shape["N"] * shape["K"],
)
