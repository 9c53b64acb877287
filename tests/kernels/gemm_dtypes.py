"""A masked GEMM over every element type a Triton dot takes: fp16, bf16, fp32 (IEEE products),
int8 (int32 accumulate and output) and fp8 e4m3 (fp16 output). The differential test runs every
rewriting pass on it at shapes with tile remainders in M, N and K, one dtype at a time
(``dtype=`` in the shape)."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def gemm_any(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
             INT_ACC: tl.constexpr, IEEE: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    if INT_ACC:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        if INT_ACC:
            acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        elif IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :], c, mask=mask)


# dtype -> (input pointer type, output pointer type)
TYPES = {"fp16": ("*fp16", "*fp16"), "bf16": ("*bf16", "*bf16"), "fp32": ("*fp32", "*fp32"),
         "i8": ("*i8", "*i32"), "fp8e4nv": ("*fp8e4nv", "*fp16")}


def bind(shape, cfg: TileConfig) -> Problem:
    M, N, K = shape["M"], shape["N"], shape["K"]
    src, dst = TYPES[shape.get("dtype", "fp16")]
    args = {"a_ptr": src, "b_ptr": src, "c_ptr": dst, "M": M, "N": N, "K": K,
            "stride_am": K, "stride_bk": N, "stride_cm": N}
    return Problem(args, {**cfg.meta, "INT_ACC": shape.get("dtype") == "i8", "IEEE": shape.get("dtype") == "fp32"},
                   cfg.options())


def _torch_types(dtype):
    import torch
    return {"fp16": (torch.float16, torch.float16), "bf16": (torch.bfloat16, torch.bfloat16),
            "fp32": (torch.float32, torch.float32), "i8": (torch.int8, torch.int32),
            "fp8e4nv": (torch.float8_e4m3fn, torch.float16)}[dtype]


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    M, N, K = shape["M"], shape["N"], shape["K"]
    src, dst = _torch_types(shape.get("dtype", "fp16"))
    if src == torch.int8:
        a = torch.randint(-8, 8, (M, K), device=device, dtype=torch.int8, generator=g)
        b = torch.randint(-8, 8, (K, N), device=device, dtype=torch.int8, generator=g)
        c = torch.full((M, N), -(2 ** 31), device=device, dtype=dst)
    else:
        a = torch.randn((M, K), device=device, dtype=torch.float32, generator=g).to(src)
        b = torch.randn((K, N), device=device, dtype=torch.float32, generator=g).to(src)
        c = torch.full((M, N), float("nan"), device=device, dtype=dst)
    return {"a": a, "b": b, "c": c}


def launch_args(inputs, shape, cfg: TileConfig):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    meta = cfg.meta
    grid = (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), 1, 1)
    return grid, {"a_ptr": a, "b_ptr": b, "c_ptr": c, "M": M, "N": N, "K": K, "stride_am": a.stride(0),
                  "stride_bk": b.stride(0), "stride_cm": c.stride(0), **meta,
                  "INT_ACC": shape.get("dtype") == "i8", "IEEE": shape.get("dtype") == "fp32"}


def reference(inputs):
    return inputs["a"].float() @ inputs["b"].float()


SPEC = KernelSpec(
    name="gemm_dtypes",
    fn=gemm_any,
    language="triton",
    description="masked GEMM over fp16, bf16, fp32, int8 and fp8 e4m3 (dtype= in the shape)",
    configs={"64x64x32-w4": TileConfig("64x64x32-w4", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, 4, 3),
             "128x128x64-w8": TileConfig("128x128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64,
                                                           "GROUP_M": 8}, 8, 3)},
    default_config="128x128x64-w8",
    default_shape={"M": 1024, "N": 1024, "K": 1024},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=reference,
    output=lambda inputs: inputs["c"],
    flops=lambda shape: 2.0 * shape["M"] * shape["N"] * shape["K"],
    dtypes=("fp16", "bf16", "fp32", "i8", "fp8e4nv"),
    # int8 is exact; fp8 inputs are exact in fp32, the fp16 output rounds
    tolerance={},
)
