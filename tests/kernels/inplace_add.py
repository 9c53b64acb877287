"""``x += y``: a kernel that writes into one of its inputs, for the correctness gate (the
reference must see ``x`` as it was before the launch). SPEC names the output, LEGACY gives it as
``output=`` (the gate tells it is an input by the memory it shares with one the reference reads);
SMALL_RMS normalizes rows and writes each row's 1/rms beside them (two outputs); SMALL_RMS_BWD
writes its dX over dY, which it reads, and a per-row dW (two outputs, one of them in place): the
shapes of docs/library/liger_rms_norm.py at a size Triton's interpreter runs fast."""
from __future__ import annotations

import dataclasses

import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def add_into(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def bind(shape, cfg):
    return Problem({"x_ptr": "*fp32", "y_ptr": "*fp32", "n": shape["N"]}, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    return {"x": torch.randn(shape["N"], device=device, generator=g),
            "y": torch.randn(shape["N"], device=device, generator=g)}


def launch_args(inputs, shape, cfg):
    return (triton.cdiv(shape["N"], cfg.meta["BLOCK"]),), {"y_ptr": inputs["y"], "n": shape["N"], "x_ptr": inputs["x"]}


CONFIGS = {"128": TileConfig("128", {"BLOCK": 128})}
SPEC = KernelSpec(name="add_into", fn=add_into, configs=CONFIGS, default_shape={"N": 300}, bind=bind,
                  make_inputs=make_inputs, launch_args=launch_args, outputs=("x",),
                  reference=lambda inp: inp["x"] + inp["y"])
LEGACY = dataclasses.replace(SPEC, name="add_into_legacy", outputs=(), output=lambda inp: inp["x"])

EPS = 1e-6


@triton.jit
def norm_rows(X_ptr, Y_ptr, r_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X_ptr + row * N + offs, mask=mask, other=0.0)
    r = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + 1e-6)
    tl.store(Y_ptr + row * N + offs, x * r, mask=mask)
    tl.store(r_ptr + row, r)


@triton.jit
def norm_rows_backward(dY_ptr, X_ptr, r_ptr, dW_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    dy = tl.load(dY_ptr + row * N + offs, mask=mask, other=0.0)
    x = tl.load(X_ptr + row * N + offs, mask=mask, other=0.0)
    r = tl.load(r_ptr + row)
    tl.store(dW_ptr + row * N + offs, dy * x * r, mask=mask)
    tl.store(dY_ptr + row * N + offs, dy * r, mask=mask)      # dX over dY


def _rows_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    M, N = shape["M"], shape["N"]
    x = torch.randn((M, N), device=device, generator=g)
    return {"X": x, "dY": torch.randn((M, N), device=device, generator=g), "Y": torch.empty_like(x),
            "r": torch.rsqrt(x.pow(2).mean(dim=1) + EPS), "dW": torch.empty_like(x)}


def _rows_bind(*pointers):
    return lambda shape, cfg: Problem({**{p: "*fp32" for p in pointers}, "N": shape["N"]}, dict(cfg.meta),
                                      cfg.options())


ROWS = {"128": TileConfig("128", {"BLOCK": 128})}
SMALL_RMS = KernelSpec(
    name="small_rms_norm_fwd", fn=norm_rows, configs=ROWS, default_shape={"M": 4, "N": 96},
    bind=_rows_bind("X_ptr", "Y_ptr", "r_ptr"), make_inputs=_rows_inputs, outputs=("Y", "r"),
    launch_args=lambda inp, shape, cfg: ((shape["M"],), {"Y_ptr": inp["Y"], "r_ptr": inp["r"], "X_ptr": inp["X"],
                                                          "N": shape["N"]}),
    reference=lambda inp: (inp["X"] * (inp["X"].pow(2).mean(dim=1) + EPS).rsqrt()[:, None],
                           (inp["X"].pow(2).mean(dim=1) + EPS).rsqrt()))
SMALL_RMS_BWD = KernelSpec(
    name="small_rms_norm_bwd", fn=norm_rows_backward, configs=ROWS, default_shape={"M": 4, "N": 96},
    bind=_rows_bind("dY_ptr", "X_ptr", "r_ptr", "dW_ptr"), make_inputs=_rows_inputs, outputs=("dY", "dW"),
    launch_args=lambda inp, shape, cfg: ((shape["M"],), {"dY_ptr": inp["dY"], "X_ptr": inp["X"], "r_ptr": inp["r"],
                                                          "dW_ptr": inp["dW"], "N": shape["N"]}),
    reference=lambda inp: {"dY": inp["dY"] * inp["r"][:, None], "dW": inp["dY"] * inp["X"] * inp["r"][:, None]})
