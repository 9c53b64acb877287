"""The tutorial GEMM written by hand the way the `tma-ws` candidate rewrites it: A and B through
in-kernel TMA descriptors, the K loop a `tl.range(..., warp_specialize=True)`, the epilogue a plain
masked store. It answers whether a wrong output of `tma-ws` on the H200 comes from irlab's passes
or from Triton's Hopper warp specialization itself (the same kernel, with no irlab pass in it).

    irlab ab --kernel examples/ws_gemm.py --variants cancel-transposes --configs ws-w4,ws-w8
"""
import dataclasses

import triton
import triton.language as tl

from irlab.kernels.gemm import cublas
from irlab.kernels.shapes import RowMajorGemm, TileConfig


@triton.jit
def matmul_tma_ws(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m, num_pid_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * num_pid_n)
    first_m = group * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * num_pid_n)) % size_m
    pid_n = (pid % (GROUP_M * num_pid_n)) // size_m
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c = acc.to(tl.float16)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], c, mask=mask)


@triton.jit
def matmul_tma_ws_hoisted(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """matmul_tma_ws with the tile's row and column offsets computed once, before the loop, and used
    by both the descriptor loads and the store's addresses -- the TTIR shape irlab's
    descriptor-loads pass gives the tutorial kernel (its offsets feed both)."""
    pid = tl.program_id(0)
    num_pid_m, num_pid_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * num_pid_n)
    first_m = group * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * num_pid_n)) % size_m
    pid_n = (pid % (GROUP_M * num_pid_n)) // size_m
    row0, col0 = pid_m * BLOCK_M, pid_n * BLOCK_N
    offs_m = row0 + tl.arange(0, BLOCK_M)
    offs_n = col0 + tl.arange(0, BLOCK_N)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        a = a_desc.load([row0, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, col0])
        acc = tl.dot(a, b, acc)
    c = acc.to(tl.float16)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], c, mask=mask)


# row-major A, B and C; the kernel takes only their row strides
GEMM = RowMajorGemm(strides=("stride_am", "stride_bk", "stride_cm"))
META = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}
CONFIGS = {"ws-w4": TileConfig("ws-w4", dict(META), 4, 3), "ws-w8": TileConfig("ws-w8", dict(META), 8, 3)}
SPEC = GEMM.spec("tma_ws_gemm", matmul_tma_ws, CONFIGS, "ws-w4", library=cublas, library_name="torch.matmul (cuBLAS)",
                 description="fp16 GEMM, TMA descriptor loads, warp-specialized K loop (hand-written tma-ws)")

# the same GEMM, offsets computed once before the loop (irlab ab --kernel examples/ws_gemm.py:HOISTED)
HOISTED = dataclasses.replace(SPEC, name="tma_ws_gemm_hoisted", fn=matmul_tma_ws_hoisted,
                              description="tma_ws_gemm with the tile offsets computed once, before the loop")
