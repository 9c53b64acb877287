"""``x += y``: a kernel that writes into one of its inputs, for the correctness gate (the
reference must see ``x`` as it was before the launch). SPEC names the output, LEGACY gives it as
``output=`` (the gate tells it is an input by the memory it shares with one the reference reads);
SMALL_RMS is Liger-Kernel's RMSNorm forward (docs/library) at a size Triton's interpreter runs fast."""
from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

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

_lib = importlib.util.spec_from_file_location(
    "liger_rms_norm", Path(__file__).resolve().parents[2] / "docs" / "library" / "liger_rms_norm.py")
_rms = importlib.util.module_from_spec(_lib)
_lib.loader.exec_module(_rms)
SMALL_RMS = dataclasses.replace(_rms.FORWARD, name="small_rms_norm_fwd", default_shape={"M": 4, "N": 96})
SMALL_RMS_BWD = dataclasses.replace(_rms.BACKWARD, name="small_rms_norm_bwd", default_shape={"M": 4, "N": 96})
