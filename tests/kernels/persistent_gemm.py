"""A persistent fp16 GEMM for the tests: each program loops over output tiles, and the tile's
epilogue (the store after the K loop) sits inside that tile loop."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab.kernels.shapes import RowMajorGemm, TileConfig


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


NUM_SMS = 132
GEMM = RowMajorGemm(strides=("stride_am", "stride_bk", "stride_cm"))


def launch_args(inputs, shape, cfg: TileConfig):
    _, args = GEMM.launch_args(inputs, shape, cfg, NUM_SMS=NUM_SMS)
    return (NUM_SMS, 1, 1), args


SPEC = GEMM.spec("persistent_gemm", persistent_matmul,
                 {"128x128x64-w8": TileConfig("128x128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 8, 3)},
                 description="persistent fp16 GEMM: a tile loop around the K loop, the epilogue inside the tile loop",
                 bind=lambda shape, cfg: GEMM.bind(shape, cfg, NUM_SMS=NUM_SMS), launch_args=launch_args)
