"""A flash-attention forward (one head per program column, online softmax over key blocks, two
dots per iteration) in fp16 and bf16, for the differential test: the epilogue divides the
accumulator by a per-row tensor, the K/V loads are masked at the sequence's end."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, SEQ, stride_h, stride_s, scale,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    head = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = head * stride_h
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=offs_m[:, None] < SEQ, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start in range(0, SEQ, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + base + offs_n[None, :] * stride_s + offs_d[:, None], mask=offs_n[None, :] < SEQ,
                     other=0.0)
        s = tl.dot(q, kt) * scale
        s = tl.where(offs_n[None, :] < SEQ, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + offs_n[:, None] * stride_s + offs_d[None, :], mask=offs_n[:, None] < SEQ,
                    other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], out.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < SEQ)


def bind(shape, cfg: TileConfig) -> Problem:
    t = "*" + shape.get("dtype", "fp16")
    S, D = shape["S"], shape["D"]
    if D < 16 or D & (D - 1):
        raise ValueError(f"attention needs a head dimension D that is a power of two >= 16, not {D}")
    args = {"q_ptr": t, "k_ptr": t, "v_ptr": t, "o_ptr": t, "SEQ": S, "stride_h": S * D, "stride_s": D,
            "scale": D ** -0.5}
    return Problem(args, {**cfg.meta, "HEAD_DIM": D}, cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[shape.get("dtype", "fp16")]
    H, S, D = shape["H"], shape["S"], shape["D"]
    q, k, v = (torch.randn((H, S, D), device=device, dtype=torch.float32, generator=g).to(dt) for _ in range(3))
    return {"q": q, "k": k, "v": v, "o": torch.full((H, S, D), float("nan"), device=device, dtype=dt)}


def launch_args(inputs, shape, cfg: TileConfig):
    q = inputs["q"]
    H, S, D = shape["H"], shape["S"], shape["D"]
    grid = (triton.cdiv(S, cfg.meta["BLOCK_M"]), H, 1)
    return grid, {"q_ptr": q, "k_ptr": inputs["k"], "v_ptr": inputs["v"], "o_ptr": inputs["o"], "SEQ": S,
                  "stride_h": q.stride(0), "stride_s": q.stride(1), "scale": D ** -0.5, "HEAD_DIM": D, **cfg.meta}


def reference(inputs):
    import torch
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    s = (q @ k.transpose(1, 2)) * q.shape[-1] ** -0.5
    return torch.softmax(s, dim=-1) @ v


SPEC = KernelSpec(
    name="attention",
    fn=attn_fwd,
    language="triton",
    description="flash-attention forward, online softmax, fp16/bf16 (dtype= in the shape)",
    configs={"64x64-w4": TileConfig("64x64-w4", {"BLOCK_M": 64, "BLOCK_N": 64}, 4, 2),
             "128x64-w8": TileConfig("128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 64}, 8, 2)},
    default_config="128x64-w8",
    default_shape={"H": 4, "S": 1024, "D": 64},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=reference,
    output=lambda inputs: inputs["o"],
    flops=lambda shape: 4.0 * shape["H"] * shape["S"] * shape["S"] * shape["D"],
    dtypes=("fp16", "bf16"),
    tolerance={"rel_fro": 1e-2},
)
