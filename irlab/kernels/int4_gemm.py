"""GEMM with int4 weights dequantized to fp16 in the kernel, transposed with ``tl.trans`` before ``tl.dot``.

The weights are stored N-major the way quantized checkpoints usually are: ``W[n, k]`` packed eight
4-bit values to an int32 along K, with one fp16 scale per output column. The kernel unpacks with
shifts and masks, subtracts the zero point 8, scales, and transposes the ``BLOCK_N x BLOCK_K`` tile
to feed ``tl.dot`` -- the same shape of IR as the documents' FA-decode int4 snippet, whose layout
conversions and transposes go through LDS.
"""
from __future__ import annotations

import triton
import triton.language as tl

from .shapes import Problem, TileConfig, gemm_grid, gemm_spec, generator, random_matrix, unwritten


@triton.jit
def int4_matmul_kernel(a_ptr, w_ptr, scale_ptr, c_ptr, M, N, K,
                       stride_am, stride_wn, stride_cm,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    # eight nibbles per int32 word: column k reads word k // 8, bits 4 * (k % 8)
    w_ptrs = w_ptr + offs_n[:, None] * stride_wn + (offs_k[None, :] // 8)
    shifts = (offs_k[None, :] % 8) * 4
    scale = tl.load(scale_ptr + offs_n)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):   # noqa: B007 (the kernel's source, and so its IR, stays as written)
        a = tl.load(a_ptrs)
        packed = tl.load(w_ptrs)
        nibbles = (packed >> shifts) & 0xF
        w = (nibbles.to(tl.float16) - 8.0) * scale[:, None]
        acc = tl.dot(a, tl.trans(w), acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K // 8
    c = acc.to(tl.float16)

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


CONFIGS = {
    "64x64x64-w4": TileConfig("64x64x64-w4", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, 4, 2),
    "128x128x64-w8": TileConfig("128x128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 8, 2),
}


def bind(shape, cfg: TileConfig) -> Problem:
    M, N, K = shape["M"], shape["N"], shape["K"]
    if K % cfg.meta["BLOCK_K"]:
        raise ValueError(f"int4_gemm needs K ({K}) to be a multiple of BLOCK_K ({cfg.meta['BLOCK_K']})")
    args = {"a_ptr": "*fp16", "w_ptr": "*i32", "scale_ptr": "*fp16", "c_ptr": "*fp16", "M": M, "N": N, "K": K,
            "stride_am": K, "stride_wn": K // 8, "stride_cm": N}
    return Problem(args, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = generator(device, seed)
    M, N, K = shape["M"], shape["N"], shape["K"]
    a = random_matrix(M, K, "fp16", device, g)
    nib = torch.randint(0, 16, (N, K), device=device, dtype=torch.int32, generator=g)
    shifts = (torch.arange(K, device=device, dtype=torch.int64) % 8) * 4
    w = (nib.to(torch.int64) << shifts).view(N, K // 8, 8).sum(dim=-1)
    w = torch.where(w >= 2**31, w - 2**32, w).to(torch.int32)  # reinterpret as signed 32-bit words
    scale = (torch.rand((N,), device=device, generator=g) * 0.05 + 0.01).to(torch.float16)
    return {"a": a, "w": w.contiguous(), "nib": nib, "scale": scale, "c": unwritten((M, N), "fp16", device)}


def launch_args(inputs, shape, cfg: TileConfig):
    a, w, scale, c = inputs["a"], inputs["w"], inputs["scale"], inputs["c"]
    args = {"a_ptr": a, "w_ptr": w, "scale_ptr": scale, "c_ptr": c, "M": shape["M"], "N": shape["N"], "K": shape["K"],
            "stride_am": a.stride(0), "stride_wn": w.stride(0), "stride_cm": c.stride(0), **cfg.meta}
    return gemm_grid(shape, cfg.meta), args


def reference(inputs):
    w = (inputs["nib"].to(inputs["a"].dtype) - 8.0) * inputs["scale"][:, None]
    return inputs["a"] @ w.t()


SPEC = gemm_spec("int4_gemm", int4_matmul_kernel, CONFIGS, "64x64x64-w4",
                 default_shape={"M": 1024, "N": 1024, "K": 1024},
                 description="fp16 x int4 GEMM: nibbles unpacked to fp16, scaled, tl.trans'd into tl.dot",
                 bind=bind, make_inputs=make_inputs, launch_args=launch_args, reference=reference)
