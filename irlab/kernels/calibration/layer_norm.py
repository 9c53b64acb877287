"""Layer-norm forward over the rows of an fp16 matrix (fp32 statistics, fp16 weight and bias),
one program per row with the whole row in registers: the memory-bound norm of a transformer."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab.kernels.spec import KernelError, KernelSpec, Problem, TileConfig

EPS = 1e-5


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, row_stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * row_stride + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * row_stride + offs, (d * rstd * w + b).to(tl.float16), mask=mask)


CONFIGS = {
    "1024-w4": TileConfig("1024-w4", {"BLOCK": 1024}, 4, 1),
    "4096-w8": TileConfig("4096-w8", {"BLOCK": 4096}, 8, 1),
}


def bind(shape, cfg: TileConfig) -> Problem:
    if cfg.meta["BLOCK"] < shape["N"]:
        raise KernelError(f"layer_norm: a row of {shape['N']} does not fit BLOCK {cfg.meta['BLOCK']}")
    args = {"x_ptr": "*fp16", "w_ptr": "*fp16", "b_ptr": "*fp16", "y_ptr": "*fp16", "row_stride": shape["N"],
            "n_cols": shape["N"], "eps": EPS}
    return Problem(args, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    M, N = shape["M"], shape["N"]
    x = torch.randn((M, N), device=device, dtype=torch.float16, generator=g)
    w = (1 + 0.1 * torch.randn(N, device=device, dtype=torch.float32, generator=g)).half()
    b = (0.1 * torch.randn(N, device=device, dtype=torch.float32, generator=g)).half()
    return {"x": x, "w": w, "b": b, "y": torch.full_like(x, float("nan"))}


def launch_args(inputs, shape, cfg: TileConfig):
    x = inputs["x"]
    args = {"x_ptr": x, "w_ptr": inputs["w"], "b_ptr": inputs["b"], "y_ptr": inputs["y"], "row_stride": x.stride(0),
            "n_cols": shape["N"], "eps": EPS, **cfg.meta}
    return (shape["M"], 1, 1), args


def reference(inputs):
    import torch
    x = inputs["x"]
    return torch.nn.functional.layer_norm(x, (x.shape[1],), inputs["w"], inputs["b"], EPS)


SPEC = KernelSpec(
    name="layer_norm",
    fn=layer_norm_kernel,
    language="triton",
    description="layer-norm forward over fp16 rows (fp32 statistics)",
    configs=CONFIGS,
    default_config="4096-w8",
    default_shape={"M": 8192, "N": 4096},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=reference,
    output=lambda inputs: inputs["y"],
    flops=lambda shape: 8.0 * shape["M"] * shape["N"],
)
