"""Elementwise fp32 vector add, ``out = x + y``: memory-bound, from a few microseconds (a few
MiB, as much launch as work) to tens of microseconds."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab.kernels.spec import KernelSpec, Problem, TileConfig


@triton.jit
def vector_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


CONFIGS = {"1024-w4": TileConfig("1024-w4", {"BLOCK": 1024}, 4, 1)}


def bind(shape, cfg: TileConfig) -> Problem:
    return Problem({"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": shape["N"]},
                   dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(shape["N"], device=device, dtype=torch.float32, generator=g)
    y = torch.randn(shape["N"], device=device, dtype=torch.float32, generator=g)
    return {"x": x, "y": y, "out": torch.full_like(x, float("nan"))}


def launch_args(inputs, shape, cfg: TileConfig):
    args = {"x_ptr": inputs["x"], "y_ptr": inputs["y"], "out_ptr": inputs["out"], "n_elements": shape["N"], **cfg.meta}
    return (triton.cdiv(shape["N"], cfg.meta["BLOCK"]), 1, 1), args


SPEC = KernelSpec(
    name="vector_add",
    fn=vector_add_kernel,
    language="triton",
    description="elementwise fp32 add (out = x + y)",
    configs=CONFIGS,
    default_config="1024-w4",
    default_shape={"N": 1 << 24},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=lambda inputs: inputs["x"] + inputs["y"],
    output=lambda inputs: inputs["out"],
    flops=lambda shape: float(shape["N"]),
)
