"""Row sums of an fp32 matrix, one program per row looping over the columns: a memory-bound
reduction."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab.kernels.spec import KernelSpec, Problem, TileConfig


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * row_stride + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


CONFIGS = {"1024-w4": TileConfig("1024-w4", {"BLOCK": 1024}, 4, 2)}


def bind(shape, cfg: TileConfig) -> Problem:
    return Problem({"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": shape["N"], "row_stride": shape["N"]},
                   dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn((shape["M"], shape["N"]), device=device, dtype=torch.float32, generator=g)
    return {"x": x, "out": torch.full((shape["M"],), float("nan"), device=device, dtype=torch.float32)}


def launch_args(inputs, shape, cfg: TileConfig):
    x = inputs["x"]
    args = {"x_ptr": x, "out_ptr": inputs["out"], "n_cols": shape["N"], "row_stride": x.stride(0), **cfg.meta}
    return (shape["M"], 1, 1), args


SPEC = KernelSpec(
    name="row_sum",
    fn=row_sum_kernel,
    language="triton",
    description="fp32 row sums (a reduction over the columns)",
    configs=CONFIGS,
    default_config="1024-w4",
    default_shape={"M": 16384, "N": 4096},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=lambda inputs: inputs["x"].sum(dim=1),
    output=lambda inputs: inputs["out"],
    flops=lambda shape: float(shape["M"] * shape["N"]),
)
