"""Layer-norm forward over the rows of an fp16 matrix (fp32 statistics, fp16 weight and bias),
one program per row with the whole row in registers: the memory-bound norm of a transformer."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab.kernels.shapes import RowWise, TileConfig, generator, random_matrix, unwritten

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


ROWS = RowWise("layer_norm", {"x_ptr": ("x", "fp16"), "w_ptr": ("w", "fp16"), "b_ptr": ("b", "fp16"),
                              "y_ptr": ("y", "fp16")}, output="y",
               row_strides={"row_stride": "x"}, whole_row="BLOCK", scalars={"eps": EPS})


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = generator(device, seed)
    N = shape["N"]
    x = random_matrix(shape["M"], N, "fp16", device, g)
    w = (1 + 0.1 * torch.randn(N, device=device, dtype=torch.float32, generator=g)).half()
    b = (0.1 * torch.randn(N, device=device, dtype=torch.float32, generator=g)).half()
    return {"x": x, "w": w, "b": b, "y": unwritten(x.shape, "fp16", device)}


def reference(inputs):
    import torch
    x = inputs["x"]
    return torch.nn.functional.layer_norm(x, (x.shape[1],), inputs["w"], inputs["b"], EPS)


SPEC = ROWS.spec(layer_norm_kernel, CONFIGS, "4096-w8", description="layer-norm forward over fp16 rows (fp32 statistics)",
                 default_shape={"M": 8192, "N": 4096}, make_inputs=make_inputs, reference=reference,
                 flops=lambda shape: 8.0 * shape["M"] * shape["N"])
