"""Fused row-wise softmax (one program per row, the whole row in registers).

A corpus kernel with no dot: reductions, ``tt.reduce`` regions and exp, so the IR model and the
passes meet IR that is not a GEMM (and the passes must say there is nothing for them to do).
"""
from __future__ import annotations

import triton
import triton.language as tl

from .shapes import RowWise, TileConfig, generator, random_matrix, unwritten


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


ROWS = RowWise("softmax", {"out_ptr": ("y", "fp32"), "in_ptr": ("x", "fp32")}, output="y",
               row_strides={"in_row_stride": "x", "out_row_stride": "y"}, whole_row="BLOCK_SIZE")
bind, launch_args = ROWS.bind, ROWS.launch_args


def make_inputs(shape, device="cuda", seed=0):
    x = random_matrix(shape["M"], shape["N"], "fp32", device, generator(device, seed))
    return {"x": x, "y": unwritten(x.shape, "fp32", device)}


SPEC = ROWS.spec(softmax_kernel, CONFIGS, "1024-w4", description="fused row-wise fp32 softmax",
                 default_shape={"M": 4096, "N": 1000}, make_inputs=make_inputs,
                 reference=lambda inputs: inputs["x"].softmax(dim=-1),
                 flops=lambda shape: 5.0 * shape["M"] * shape["N"], tolerance={"rel_fro": 1e-5})
