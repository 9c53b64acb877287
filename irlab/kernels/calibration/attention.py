"""Attention forward (non-causal, flash-attention style: online softmax over key blocks), fp16
in and out, fp32 accumulation; ``q, k, v, o`` are ``[B*H, S, D]``. Compute-bound at long
sequences, a few tens of microseconds at short ones."""
from __future__ import annotations

import math

import triton
import triton.language as tl

from irlab.kernels.spec import KernelError, KernelSpec, Problem, TileConfig


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale, HEAD_DIM: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    head = tl.program_id(1)
    base = head * seq_len * HEAD_DIM
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    scale = sm_scale * 1.4426950408889634   # exp(x) = exp2(x * log2(e))
    for start in range(0, seq_len, BLOCK_N):
        keys = start + offs_n
        k = tl.load(k_ptr + base + keys[None, :] * HEAD_DIM + offs_d[:, None])
        s = tl.dot(q, k) * scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + keys[:, None] * HEAD_DIM + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16))


CONFIGS = {
    "128x64-w4-s2": TileConfig("128x64-w4-s2", {"BLOCK_M": 128, "BLOCK_N": 64}, 4, 2),
    "128x64-w8-s3": TileConfig("128x64-w8-s3", {"BLOCK_M": 128, "BLOCK_N": 64}, 8, 3),
}


def bind(shape, cfg: TileConfig) -> Problem:
    S, D = shape["S"], shape["D"]
    if S % cfg.meta["BLOCK_M"] or S % cfg.meta["BLOCK_N"]:
        raise KernelError(f"attention: S={S} must be a multiple of BLOCK_M and BLOCK_N ({cfg.name})")
    if D not in (16, 32, 64, 128):
        raise KernelError(f"attention: head dimension D={D} must be 16, 32, 64 or 128")
    args = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "seq_len": S,
            "sm_scale": 1 / math.sqrt(D)}
    return Problem(args, {"HEAD_DIM": D, **cfg.meta}, cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    size = (shape["BH"], shape["S"], shape["D"])
    q, k, v = (torch.randn(size, device=device, dtype=torch.float16, generator=g) for _ in range(3))
    return {"q": q, "k": k, "v": v, "o": torch.full_like(q, float("nan"))}


def launch_args(inputs, shape, cfg: TileConfig):
    args = {"q_ptr": inputs["q"], "k_ptr": inputs["k"], "v_ptr": inputs["v"], "o_ptr": inputs["o"],
            "seq_len": shape["S"], "sm_scale": 1 / math.sqrt(shape["D"]), "HEAD_DIM": shape["D"], **cfg.meta}
    return (shape["S"] // cfg.meta["BLOCK_M"], shape["BH"], 1), args


def reference(inputs):
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    return ((q @ k.transpose(1, 2)) / math.sqrt(q.shape[-1])).softmax(dim=-1) @ v


SPEC = KernelSpec(
    name="attention",
    fn=attention_kernel,
    language="triton",
    description="non-causal attention forward, fp16 (online softmax over key blocks)",
    configs=CONFIGS,
    default_config="128x64-w8-s3",
    default_shape={"BH": 32, "S": 1024, "D": 64},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=reference,
    output=lambda inputs: inputs["o"],
    flops=lambda shape: 4.0 * shape["BH"] * shape["S"] ** 2 * shape["D"],
    tolerance={"rel_fro": 1e-2},
)
