"""Fused row-wise softmax (one program per row, the whole row in registers).

A corpus kernel with no dot: reductions, ``tt.reduce`` regions and exp, so the IR model and the
passes meet IR that is not a GEMM (and the passes must say there is nothing for them to do).
"""
from __future__ import annotations

import triton
import triton.language as tl

from .spec import KernelSpec, Problem, TileConfig


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_row_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + offs, num / den, mask=mask)


CONFIGS = {
    "1024-w4": TileConfig("1024-w4", {"BLOCK_SIZE": 1024}, 4, 1),
    "4096-w8": TileConfig("4096-w8", {"BLOCK_SIZE": 4096}, 8, 1),
}


def bind(shape, cfg: TileConfig) -> Problem:
    if cfg.meta["BLOCK_SIZE"] < shape["N"]:
        raise ValueError(f"softmax row of {shape['N']} does not fit BLOCK_SIZE {cfg.meta['BLOCK_SIZE']}")
    args = {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": shape["N"], "out_row_stride": shape["N"],
            "n_cols": shape["N"]}
    return Problem(args, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn((shape["M"], shape["N"]), device=device, dtype=torch.float32, generator=g)
    return {"x": x, "y": torch.full_like(x, float("nan"))}


def launch_args(inputs, shape, cfg: TileConfig):
    x, y = inputs["x"], inputs["y"]
    args = {"out_ptr": y, "in_ptr": x, "in_row_stride": x.stride(0), "out_row_stride": y.stride(0),
            "n_cols": x.shape[1], **cfg.meta}
    return (x.shape[0], 1, 1), args


SPEC = KernelSpec(
    name="softmax",
    fn=softmax_kernel,
    language="triton",
    description="fused row-wise fp32 softmax",
    configs=CONFIGS,
    default_config="1024-w4",
    default_shape={"M": 4096, "N": 1000},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=lambda inputs: inputs["x"].softmax(dim=-1),
    output=lambda inputs: inputs["y"],
    flops=lambda shape: 5.0 * shape["M"] * shape["N"],
    tolerance={"rel_fro": 1e-5},
)
