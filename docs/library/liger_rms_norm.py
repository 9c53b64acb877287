"""Liger-Kernel's RMSNorm kernels, forward and backward, taken from the installed library as it ships
them, with the KernelSpecs that take them through irlab (README: "A library kernel in the same
five commands").

The kernels are Liger-Kernel's own (https://github.com/linkedin/Liger-Kernel, BSD 2-Clause,
``src/liger_kernel/ops/rms_norm.py``): this file imports them from the installed package
(``pip install liger-kernel==0.8.5``) and holds only their descriptions. The specs are written
against that release's parameters; they are matched by name, so a release that renames one fails
with a message naming it.

What the specs show: the forward writes two outputs, the normalized rows ``Y`` and each row's
``1/rms`` in ``RSTD`` (``outputs=("Y", "RSTD")``, each checked against the reference on its own);
the backward is launched as Liger launches it in place, with ``dX`` written over ``dY``, the tensor
it reads (``dY`` is an output the reference reads, so the correctness gate computes the reference
from a copy of the inputs taken before the launch), and each program's partial sum of ``dW`` as a
second output. Launch arguments are given by name, in any order; the constexprs are left out of
them (bind compiles them in). The configs are what Liger's ``calculate_settings`` picks for rows
of 4096 (BLOCK_SIZE = next power of two, 8 warps) and 16384 (16 warps).
"""
from __future__ import annotations

import triton.language as tl
from liger_kernel.ops.rms_norm import _rms_norm_backward_kernel, _rms_norm_forward_kernel

from irlab import KernelError, KernelSpec, Problem, TileConfig

EPS = 1e-6
NONE = -1          # Liger's _CASTING_MODE_NONE: compute in the inputs' dtype (fp32 here)
PROGRAMS = 32      # the backward's programs (Liger uses the SM count): each sums dW over its rows
CONFIGS = {
    "4096-w8": TileConfig("4096-w8", {"BLOCK_SIZE": 4096}, num_warps=8, num_stages=1),
    "16384-w16": TileConfig("16384-w16", {"BLOCK_SIZE": 16384}, num_warps=16, num_stages=1),
}


def _fits(shape, cfg):
    if cfg.meta["BLOCK_SIZE"] < shape["N"]:
        raise KernelError(f"rms_norm: a row of {shape['N']} does not fit BLOCK_SIZE {cfg.meta['BLOCK_SIZE']}")


def _rows_per_program(shape) -> int:
    return -(-shape["M"] // PROGRAMS)


def bind_forward(shape, cfg):
    _fits(shape, cfg)
    N = shape["N"]
    return Problem({"Y_ptr": "*fp32", "Y_row_stride": N, "X_ptr": "*fp32", "X_row_stride": N, "W_ptr": "*fp32",
                    "W_row_stride": 1, "RSTD_ptr": "*fp32", "RSTD_row_stride": 1, "n_cols": N, "eps": EPS,
                    "offset": 0.0},
                   {**cfg.meta, "casting_mode": NONE, "elementwise_affine": True}, cfg.options())


def bind_backward(shape, cfg):
    _fits(shape, cfg)
    M, N = shape["M"], shape["N"]
    return Problem({"dY_ptr": "*fp32", "dY_row_stride": N, "dX_ptr": "*fp32", "dX_row_stride": N, "X_ptr": "*fp32",
                    "X_row_stride": N, "W_ptr": "*fp32", "W_row_stride": 1, "RSTD_ptr": "*fp32",
                    "RSTD_row_stride": 1, "dW_ptr": "*fp32", "dW_row_stride": N, "n_rows": M, "n_cols": N,
                    "offset": 0.0, "rows_per_program": _rows_per_program(shape)},
                   {**cfg.meta, "X_dtype": tl.float32, "casting_mode": NONE, "elementwise_affine": True,
                    "COMPUTE_DW": True}, cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    M, N = shape["M"], shape["N"]
    x = torch.randn((M, N), device=device, generator=g)
    w = 1 + 0.1 * torch.randn(N, device=device, generator=g)
    dy = torch.randn((M, N), device=device, generator=g)
    rstd = torch.rsqrt(x.pow(2).mean(dim=1) + EPS)          # what the forward leaves for the backward
    return {"X": x, "W": w, "dY": dy, "RSTD": rstd, "Y": torch.empty_like(x),
            "dW": torch.empty((PROGRAMS, N), device=device)}


def launch_forward(inputs, shape, cfg):      # by name, in any order; the constexprs come from bind
    N = shape["N"]
    return (shape["M"],), {"X_ptr": inputs["X"], "W_ptr": inputs["W"], "Y_ptr": inputs["Y"],
                           "RSTD_ptr": inputs["RSTD"], "X_row_stride": N, "W_row_stride": 1, "Y_row_stride": N,
                           "RSTD_row_stride": 1, "n_cols": N, "eps": EPS, "offset": 0.0}


def launch_backward(inputs, shape, cfg):     # dX over dY, as Liger's in-place backward does
    M, N = shape["M"], shape["N"]
    return (PROGRAMS,), {"dY_ptr": inputs["dY"], "dX_ptr": inputs["dY"], "X_ptr": inputs["X"], "W_ptr": inputs["W"],
                         "RSTD_ptr": inputs["RSTD"], "dW_ptr": inputs["dW"], "dY_row_stride": N, "dX_row_stride": N,
                         "X_row_stride": N, "W_row_stride": 1, "RSTD_row_stride": 1, "dW_row_stride": N,
                         "n_rows": M, "n_cols": N, "offset": 0.0, "rows_per_program": _rows_per_program(shape)}


def reference_forward(x):
    rstd = (x["X"].pow(2).mean(dim=1) + EPS).rsqrt()
    return x["X"] * rstd[:, None] * x["W"], rstd


def reference_backward(x):     # sees dY as it was before the kernel overwrote it with dX
    import torch
    X, W, rstd, dY = x["X"], x["W"], x["RSTD"][:, None], x["dY"]
    m = dY * W
    dX = rstd * m - rstd ** 3 * (m * X).sum(dim=1, keepdim=True) * X / X.shape[1]
    per_row = dY * X * rstd
    rows = _rows_per_program({"M": X.shape[0]})
    dW = torch.zeros((PROGRAMS, X.shape[1]), device=X.device)
    for p in range(PROGRAMS):
        dW[p] = per_row[p * rows:(p + 1) * rows].sum(dim=0)
    return {"dY": dX, "dW": dW}


FORWARD = KernelSpec(
    name="liger_rms_norm_fwd", fn=_rms_norm_forward_kernel,
    description="Liger-Kernel's RMSNorm forward (Y and 1/rms)",
    configs=CONFIGS, default_config="4096-w8", default_shape={"M": 4096, "N": 4096},
    bind=bind_forward, make_inputs=make_inputs, launch_args=launch_forward, outputs=("Y", "RSTD"),
    reference=reference_forward, flops=lambda shape: 4.0 * shape["M"] * shape["N"],
)

BACKWARD = KernelSpec(
    name="liger_rms_norm_bwd", fn=_rms_norm_backward_kernel,
    description="Liger-Kernel's RMSNorm backward (dX written over dY in place, dW summed per program)",
    configs=CONFIGS, default_config="4096-w8", default_shape={"M": 4096, "N": 4096},
    bind=bind_backward, make_inputs=make_inputs, launch_args=launch_backward, outputs=("dY", "dW"),
    reference=reference_backward, flops=lambda shape: 10.0 * shape["M"] * shape["N"],
)
