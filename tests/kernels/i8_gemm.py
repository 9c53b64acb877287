"""The tutorial GEMM on int8 inputs with an int32 accumulator, for the tests: with BLOCK_N = 8 its
B tile is 8 bytes wide, narrower than the 16 bytes a TMA box needs (``descriptor-loads`` must
refuse it); with BLOCK_N = 16 both tiles fit."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab.kernels.shapes import RowMajorGemm, TileConfig


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


# int8 A and B, int32 C, every matrix row-major; the kernel takes only the row strides
GEMM = RowMajorGemm(strides=("stride_am", "stride_bk", "stride_cm"), a="i8", b="i8", c="i32")


def reference(inputs):
    # exact: |sum| <= K * 64 stays far below 2**53
    return (inputs["a"].double() @ inputs["b"].double()).to(inputs["c"].dtype)


SPEC = GEMM.spec("i8_gemm", i8_matmul, CONFIGS, "64x16x64-w4", default_shape={"M": 512, "N": 512, "K": 512},
                 description="int8 GEMM with an int32 accumulator and masked K loop (tutorial form)",
                 reference=reference, flops=None)
