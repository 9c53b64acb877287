"""Liger-Kernel's RMSNorm kernels, forward and backward, as the library wrote them, with the
KernelSpecs that take them through irlab (README: "A library kernel in the same five commands").

The two ``@triton.jit`` functions below are copied unchanged from
https://github.com/linkedin/Liger-Kernel/blob/05dd1f98099cc732eb1ee66fff67b10285a25c0d/src/liger_kernel/ops/rms_norm.py
(Liger-Kernel, commit 05dd1f98099cc732eb1ee66fff67b10285a25c0d), under its BSD 2-Clause license:

    BSD 2-CLAUSE LICENSE
    Copyright 2024 LinkedIn Corporation
    All Rights Reserved.
    Redistribution and use in source and binary forms, with or
    without modification, are permitted provided that the following
    conditions are met:
    1. Redistributions of source code must retain the above copyright
    notice, this list of conditions and the following disclaimer.
    2. Redistributions in binary form must reproduce the above
    copyright notice, this list of conditions and the following
    disclaimer in the documentation and/or other materials provided
    with the distribution.
    THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS
    "AS IS" AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT
    LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR
    A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT
    HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL,
    SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT
    LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
    DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
    THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
    (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
    OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.

What the specs show: the forward writes two outputs, the normalized rows ``Y`` and each row's
``1/rms`` in ``r`` (``outputs=("Y", "r")``, each checked against the reference on its own); the
backward writes ``dX`` into ``dY``, the tensor it reads (an in-place kernel: ``dY`` is an output
the reference reads, so the correctness gate computes the reference from a copy of the inputs
taken before the launch). Launch arguments are given by name, in any order; the constexpr
``BLOCK_SIZE`` is left out of them (bind compiles it in). The configs are what Liger's
``calculate_settings`` picks for rows of 4096 (BLOCK_SIZE = next power of two, 8 warps) and
16384 (16 warps).
"""
from __future__ import annotations

import triton
import triton.language as tl

from irlab import KernelError, KernelSpec, Problem, TileConfig


# --- Liger-Kernel, src/liger_kernel/ops/rms_norm.py @ 05dd1f98 (BSD 2-Clause, see above) ------------
@triton.jit
def _rms_norm_forward(
    Y_ptr,
    Y_row_stride,
    X_ptr,
    X_row_stride,
    W_ptr,
    W_row_stride,
    r_ptr,
    r_row_stride,
    n_cols,
    eps,
    offset,
    BLOCK_SIZE: tl.constexpr,
):
    """
    y_i = (x_i / (RMS)) * wi, RMS = sqrt(sum(x_i^2) / N)

    Reference:
    1. https://triton-lang.org/main/getting-started/tutorials/05-layer-norm.html
    2. https://github.com/unslothai/unsloth/blob/fd753fed99ed5f10ef8a9b7139588d9de9ddecfb/unsloth/kernels/rms_layernorm.py#L22
    3. https://arxiv.org/pdf/1910.07467
    """

    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y_ptr += row_idx * Y_row_stride
    X_ptr += row_idx * X_row_stride
    r_ptr += row_idx * r_row_stride

    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)

    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    inv_rms = tl.math.rsqrt(mean_square + eps)

    # We can save time by caching rms with minimal memory overhead
    # because rms is much smaller compared to X_row, as rms is for each row.
    # However, on the computation side, it can save 4 operations (*, sum, /, sqrt).
    tl.store(r_ptr, inv_rms)

    Y_row = X_row * inv_rms * (offset + W_row)

    tl.store(Y_ptr + col_offsets, Y_row, mask=mask)


@triton.jit
def _rms_norm_backward(
    dY_ptr,
    dY_row_stride,
    X_ptr,
    X_row_stride,
    W_ptr,
    W_row_stride,
    r_ptr,
    r_row_stride,
    dW_ptr,
    dW_row_stride,
    n_cols,
    eps,
    offset,
    BLOCK_SIZE: tl.constexpr,
):
    """
    dx = (1 / RMS) * [dy * w  - (1 / N) * (1 / RMS^2) * ((dy * w) dot x) * x]. * means element-wise multiplication, whileas dot means dot product
    dw = sum(dy * (x / RMS)). summation over BxT dimension
    """

    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    dY_ptr += row_idx * dY_row_stride
    X_ptr += row_idx * X_row_stride
    r_ptr += row_idx * r_row_stride
    dW_ptr += row_idx * dW_row_stride

    dY_row = tl.load(dY_ptr + col_offsets, mask=mask, other=0)
    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)

    # Get cached rms
    inv_rms_row = tl.load(r_ptr)

    W_row = W_row + offset
    dX_row = (inv_rms_row) * (
        dY_row * W_row
        - (1 / n_cols)
        * inv_rms_row
        * inv_rms_row
        * tl.sum(dY_row * W_row * X_row, axis=0)
        * X_row
    )
    tl.store(dY_ptr + col_offsets, dX_row, mask=mask)

    # calculate the gradient of W
    dW_row = dY_row * X_row * inv_rms_row
    tl.store(dW_ptr + col_offsets, dW_row, mask=mask)
# --- end of Liger-Kernel's code ------------------------------------------------------------------


EPS = 1e-6
CONFIGS = {
    "4096-w8": TileConfig("4096-w8", {"BLOCK_SIZE": 4096}, num_warps=8, num_stages=1),
    "16384-w16": TileConfig("16384-w16", {"BLOCK_SIZE": 16384}, num_warps=16, num_stages=1),
}


def _fits(shape, cfg):
    if cfg.meta["BLOCK_SIZE"] < shape["N"]:
        raise KernelError(f"rms_norm: a row of {shape['N']} does not fit BLOCK_SIZE {cfg.meta['BLOCK_SIZE']}")


def bind_forward(shape, cfg):
    _fits(shape, cfg)
    N = shape["N"]
    return Problem({"Y_ptr": "*fp32", "Y_row_stride": N, "X_ptr": "*fp32", "X_row_stride": N, "W_ptr": "*fp32",
                    "W_row_stride": 1, "r_ptr": "*fp32", "r_row_stride": 1, "n_cols": N, "eps": EPS, "offset": 0.0},
                   dict(cfg.meta), cfg.options())


def bind_backward(shape, cfg):
    _fits(shape, cfg)
    N = shape["N"]
    return Problem({"dY_ptr": "*fp32", "dY_row_stride": N, "X_ptr": "*fp32", "X_row_stride": N, "W_ptr": "*fp32",
                    "W_row_stride": 1, "r_ptr": "*fp32", "r_row_stride": 1, "dW_ptr": "*fp32", "dW_row_stride": N,
                    "n_cols": N, "eps": EPS, "offset": 0.0}, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    M, N = shape["M"], shape["N"]
    x = torch.randn((M, N), device=device, generator=g)
    w = 1 + 0.1 * torch.randn(N, device=device, generator=g)
    dy = torch.randn((M, N), device=device, generator=g)
    r = torch.rsqrt(x.pow(2).mean(dim=1) + EPS)          # what the forward leaves for the backward
    return {"X": x, "W": w, "dY": dy, "r": r, "Y": torch.empty_like(x), "dW": torch.empty_like(x)}


def launch_forward(inputs, shape, cfg):      # by name, in any order; BLOCK_SIZE comes from bind
    return (shape["M"],), {"X_ptr": inputs["X"], "W_ptr": inputs["W"], "Y_ptr": inputs["Y"], "r_ptr": inputs["r"],
                           "X_row_stride": shape["N"], "W_row_stride": 1, "Y_row_stride": shape["N"],
                           "r_row_stride": 1, "n_cols": shape["N"], "eps": EPS, "offset": 0.0}


def launch_backward(inputs, shape, cfg):
    return (shape["M"],), {"dY_ptr": inputs["dY"], "X_ptr": inputs["X"], "W_ptr": inputs["W"], "r_ptr": inputs["r"],
                           "dW_ptr": inputs["dW"], "dY_row_stride": shape["N"], "X_row_stride": shape["N"],
                           "W_row_stride": 1, "r_row_stride": 1, "dW_row_stride": shape["N"], "n_cols": shape["N"],
                           "eps": EPS, "offset": 0.0}


def reference_forward(x):
    r = (x["X"].pow(2).mean(dim=1) + EPS).rsqrt()
    return x["X"] * r[:, None] * x["W"], r


def reference_backward(x):     # sees dY as it was before the kernel overwrote it with dX
    X, W, r, dY = x["X"], x["W"], x["r"][:, None], x["dY"]
    dX = r * (dY * W - r * r * (dY * W * X).sum(dim=1, keepdim=True) * X / X.shape[1])
    return {"dY": dX, "dW": dY * X * r}


FORWARD = KernelSpec(
    name="liger_rms_norm_fwd", fn=_rms_norm_forward, description="Liger-Kernel's RMSNorm forward (Y and 1/rms)",
    configs=CONFIGS, default_config="4096-w8", default_shape={"M": 4096, "N": 4096},
    bind=bind_forward, make_inputs=make_inputs, launch_args=launch_forward, outputs=("Y", "r"),
    reference=reference_forward, flops=lambda shape: 4.0 * shape["M"] * shape["N"],
)

BACKWARD = KernelSpec(
    name="liger_rms_norm_bwd", fn=_rms_norm_backward,
    description="Liger-Kernel's RMSNorm backward (dX written into dY in place, per-row dW)",
    configs=CONFIGS, default_config="4096-w8", default_shape={"M": 4096, "N": 4096},
    bind=bind_backward, make_inputs=make_inputs, launch_args=launch_backward, outputs=("dY", "dW"),
    reference=reference_backward, flops=lambda shape: 10.0 * shape["M"] * shape["N"],
)
