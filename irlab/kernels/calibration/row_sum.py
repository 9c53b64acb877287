"""Row sums of an fp32 matrix, one program per row looping over the columns: a memory-bound
reduction."""
from __future__ import annotations

import triton
import triton.language as tl

from irlab.kernels.shapes import RowWise, TileConfig, generator, random_matrix, unwritten


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * row_stride + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


CONFIGS = {"1024-w4": TileConfig("1024-w4", {"BLOCK": 1024}, 4, 2)}


ROWS = RowWise("row_sum", {"x_ptr": ("x", "fp32"), "out_ptr": ("out", "fp32")}, output="out",
               row_strides={"row_stride": "x"})


def make_inputs(shape, device="cuda", seed=0):
    x = random_matrix(shape["M"], shape["N"], "fp32", device, generator(device, seed))
    return {"x": x, "out": unwritten((shape["M"],), "fp32", device)}


SPEC = ROWS.spec(row_sum_kernel, CONFIGS, "1024-w4", description="fp32 row sums (a reduction over the columns)",
                 default_shape={"M": 16384, "N": 4096}, make_inputs=make_inputs,
                 reference=lambda inputs: inputs["x"].sum(dim=1), flops=lambda shape: float(shape["M"] * shape["N"]))
