"""A masked GEMM over every element type a Triton dot takes: fp16, bf16, fp32 (IEEE products),
int8 (int32 accumulate and output) and fp8 e4m3 (fp16 output). The differential test runs every
rewriting pass on it at shapes with tile remainders in M, N and K, one dtype at a time
(``dtype=`` in the shape)."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab.kernels.shapes import RowMajorGemm, TileConfig, gemm_spec


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


# dtype -> (input element type, output element type)
TYPES = {"fp16": ("fp16", "fp16"), "bf16": ("bf16", "bf16"), "fp32": ("fp32", "fp32"), "i8": ("i8", "i32"),
         "fp8e4nv": ("fp8e4nv", "fp16")}


def _gemm(shape) -> RowMajorGemm:
    """The row-major GEMM of the shape's dtype; the kernel takes only the row strides."""
    src, dst = TYPES[shape.get("dtype", "fp16")]
    return RowMajorGemm(strides=("stride_am", "stride_bk", "stride_cm"), a=src, b=src, c=dst)


def _flags(shape) -> dict:
    return {"INT_ACC": shape.get("dtype") == "i8", "IEEE": shape.get("dtype") == "fp32"}


SPEC = gemm_spec(
    "gemm_dtypes", gemm_any,
    {"64x64x32-w4": TileConfig("64x64x32-w4", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, 4, 3),
     "128x128x64-w8": TileConfig("128x128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, 8, 3)},
    "128x128x64-w8", default_shape={"M": 1024, "N": 1024, "K": 1024},
    description="masked GEMM over fp16, bf16, fp32, int8 and fp8 e4m3 (dtype= in the shape)",
    bind=lambda shape, cfg: _gemm(shape).bind(shape, cfg, **_flags(shape)),
    make_inputs=lambda shape, device="cuda", seed=0: _gemm(shape).make_inputs(shape, device, seed),
    launch_args=lambda inputs, shape, cfg: _gemm(shape).launch_args(inputs, shape, cfg, **_flags(shape)),
    reference=lambda inputs: inputs["a"].float() @ inputs["b"].float(),
    dtypes=("fp16", "bf16", "fp32", "i8", "fp8e4nv"),
    # int8 is exact; fp8 inputs are exact in fp32, the fp16 output rounds
    tolerance={},
)
