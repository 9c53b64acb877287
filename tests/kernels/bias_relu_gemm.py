"""An fp16 GEMM with a bias + ReLU epilogue, as a user would write it: the bias is a tensor
loaded in the blocked layout and added to the accumulator after its convert."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def matmul_bias_relu(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = pid // num_pid_n, pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k * BLOCK_K + offs_k)[None, :])
        b = tl.load(b_ptr + (k * BLOCK_K + offs_k)[:, None] * stride_bk + offs_n[None, :])
        acc = tl.dot(a, b, acc)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    c = tl.maximum(acc + bias[None, :].to(tl.float32), 0.0).to(tl.float16)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], c, mask=mask)


def bind(shape, cfg: TileConfig) -> Problem:
    M, N, K = shape["M"], shape["N"], shape["K"]
    args = {"a_ptr": "*fp16", "b_ptr": "*fp16", "bias_ptr": "*fp16", "c_ptr": "*fp16", "M": M, "N": N, "K": K,
            "stride_am": K, "stride_bk": N, "stride_cm": N}
    return Problem(args, dict(cfg.meta), cfg.options())


SPEC = KernelSpec(
    name="bias_relu_gemm",
    fn=matmul_bias_relu,
    language="triton",
    description="fp16 GEMM with a bias + ReLU epilogue",
    configs={"128x128x64-w8": TileConfig("128x128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 8, 3)},
    default_config="128x128x64-w8",
    default_shape={"M": 4096, "N": 4096, "K": 4096},
    bind=bind,
)
