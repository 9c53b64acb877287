"""Tutorial-style fp16 GEMM: masked K loop, GROUP_M program-id swizzle, fp32 accumulator.

This is the GEMM of the source documents' experiments: AMD's stream pipeliner turns its loop into
``tt.load A; tt.load B; local_load A; local_load B; tt.dot; local_store A; local_store B`` on
gfx942, and its epilogue converts the MMA accumulator to a blocked layout before ``tt.store`` on
NVIDIA.
"""
from __future__ import annotations

import triton
import triton.language as tl

from .shapes import RowMajorGemm, TileConfig


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


CONFIGS = {
    "128x128x32-w4": TileConfig("128x128x32-w4", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, 4, 2),
    "128x128x64-w8": TileConfig("128x128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, 8, 2),
    "128x256x32-w8": TileConfig("128x256x32-w8", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 8}, 8, 2),
    "64x64x32-w4": TileConfig("64x64x32-w4", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, 4, 2),
}


# row-major A (M x K), row-major B (K x N), row-major C (M x N), every stride a parameter
GEMM = RowMajorGemm()


def cublas(inputs):
    """The same product by torch.matmul (cuBLAS), into the kernel's output."""
    import torch
    torch.matmul(inputs["a"], inputs["b"], out=inputs["c"])


SPEC = GEMM.spec("gemm_fp16", matmul_kernel, CONFIGS, "128x128x64-w8", library=cublas, library_name="torch.matmul",
                 description="tutorial-style masked fp16 GEMM with GROUP_M swizzle (C = A @ B, fp32 accumulate)")

# the problem's parts, for the kernels that share gemm_fp16's problem (persistent_gemm) and for scripts
bind, make_inputs, launch_args, reference = SPEC.bind, SPEC.make_inputs, SPEC.launch_args, SPEC.reference
