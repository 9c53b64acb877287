"""Small kernels about the launch contract of a tile-per-program kernel, for persistent-tiles: one
that keeps it (one program per output tile, each doing its tile's work and nothing else) and
kernels whose programs do work outside their tiles (programs launched past the tile count that
write another buffer, a program id read along y, ``tl.num_programs``, an early return). A loop
over tiles ``for tile = pid to num_tiles step num_programs`` would drop what their extra programs
do, so persistent-tiles must refuse them. Each is a ``KernelSpec``: their TTIR is what the
FileCheck tests in ``passes/tests/persistent-tiles/`` hold, and the GPU test launches them with
their own grids.

The kernels that break the contract copy ``x`` into ``y`` over tiles of ``BLOCK`` and are launched
on ``cdiv(n, BLOCK) + EXTRA`` programs; what their extra programs do is zero ``z`` (made full of
sevens, so that the zeros show)."""
from __future__ import annotations

import dataclasses

import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig

EXTRA = 3   # programs launched past the tile count by the kernels that give them work


@triton.jit
def tile_copy_2d(x_ptr, y_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 GROUP_M: tl.constexpr):
    """y = x over BLOCK_M x BLOCK_N tiles, one program per tile, GROUP_M-swizzled as the tutorial
    GEMM's output tiles are: the contract kept."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs = offs_m[:, None] * stride_m + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def copy_or_fill(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    """Programs past the tile count fill z with zeros, one tile of z each."""
    pid = tl.program_id(0)
    num_tiles = tl.cdiv(n, BLOCK)
    if pid < num_tiles:
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    else:
        zoffs = (pid - num_tiles) * BLOCK + tl.arange(0, BLOCK)
        tl.store(z_ptr + zoffs, tl.zeros([BLOCK], dtype=tl.float32), mask=zoffs < n)


@triton.jit
def copy_and_clear(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    """Without a branch: every program copies its tile, and the programs past the tile count
    (where the copy's mask is empty) zero z, selected by a mask keyed to the program id."""
    pid = tl.program_id(0)
    num_tiles = tl.cdiv(n, BLOCK)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    zoffs = (pid - num_tiles) * BLOCK + tl.arange(0, BLOCK)
    tl.store(z_ptr + zoffs, tl.zeros([BLOCK], dtype=tl.float32), mask=(zoffs >= 0) & (zoffs < n))


@triton.jit
def copy_grid_2d(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    """A second grid axis: programs (pid, 0) copy x's tile into y, programs (pid, 1) zero z's."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if tl.program_id(1) == 0:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    else:
        tl.store(z_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=mask)


@triton.jit
def copy_num_programs(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    """Programs past the tile count, as many as the launch has, zero z: the tile count read from
    the kernel, the extra programs from tl.num_programs."""
    pid = tl.program_id(0)
    num_tiles = tl.cdiv(n, BLOCK)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    extra = tl.num_programs(0) - num_tiles
    zoffs = (pid - num_tiles) * BLOCK + tl.arange(0, BLOCK)
    keep = (zoffs >= 0) & (zoffs < extra * BLOCK) & (zoffs < n)
    tl.store(z_ptr + zoffs, tl.zeros([BLOCK], dtype=tl.float32), mask=keep)


@triton.jit
def copy_early_return(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    """Programs past the tile count zero z's first tile and return early; the others copy."""
    pid = tl.program_id(0)
    num_tiles = tl.cdiv(n, BLOCK)
    if pid >= num_tiles:
        r = tl.arange(0, BLOCK)
        tl.store(z_ptr + r, tl.zeros([BLOCK], dtype=tl.float32), mask=r < n)
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


# --- the contract kept: a 2-D tiled copy ------------------------------------------------------------

def _bind_2d(shape, cfg):
    return Problem({"x_ptr": "*fp32", "y_ptr": "*fp32", "M": shape["M"], "N": shape["N"], "stride_m": shape["N"]},
                   dict(cfg.meta), cfg.options())


def _inputs_2d(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    return {"x": torch.randn((shape["M"], shape["N"]), device=device, generator=g),
            "y": torch.full((shape["M"], shape["N"]), float("nan"), device=device)}


def _launch_2d(inputs, shape, cfg):
    meta = cfg.meta
    grid = (triton.cdiv(shape["M"], meta["BLOCK_M"]) * triton.cdiv(shape["N"], meta["BLOCK_N"]), 1, 1)
    return grid, {"x_ptr": inputs["x"], "y_ptr": inputs["y"], "M": shape["M"], "N": shape["N"],
                  "stride_m": inputs["x"].stride(0)}


KEEPS = KernelSpec(
    name="tile_copy_2d", fn=tile_copy_2d,
    configs={"32x64": TileConfig("32x64", {"BLOCK_M": 32, "BLOCK_N": 64, "GROUP_M": 4}, 4, 1)},
    default_shape={"M": 1000, "N": 784}, bind=_bind_2d, make_inputs=_inputs_2d, launch_args=_launch_2d,
    outputs=("y",), reference=lambda inp: inp["x"])


# --- the contract broken: 1-D copies whose extra programs zero z ------------------------------------

def _bind(shape, cfg):
    return Problem({"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "n": shape["N"]}, dict(cfg.meta),
                   cfg.options())


def _inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    n = shape["N"]
    return {"x": torch.randn(n, device=device, generator=g), "y": torch.full((n,), float("nan"), device=device),
            "z": torch.full((n,), 7.0, device=device)}


def _launch(extra, axes=1):
    def launch_args(inputs, shape, cfg):
        grid = (triton.cdiv(shape["N"], cfg.meta["BLOCK"]) + extra, axes, 1)
        return grid, {"x_ptr": inputs["x"], "y_ptr": inputs["y"], "z_ptr": inputs["z"], "n": shape["N"]}
    return launch_args


_COPY = KernelSpec(name="copy", fn=copy_or_fill, configs={"256": TileConfig("256", {"BLOCK": 256}, 4, 1)},
                   default_shape={"N": 1000}, bind=_bind, make_inputs=_inputs, launch_args=_launch(EXTRA),
                   outputs=("y", "z"))
BREAKS = {
    "copy_or_fill": dataclasses.replace(_COPY, name="copy_or_fill"),
    "copy_and_clear": dataclasses.replace(_COPY, name="copy_and_clear", fn=copy_and_clear),
    "copy_grid_2d": dataclasses.replace(_COPY, name="copy_grid_2d", fn=copy_grid_2d, launch_args=_launch(0, axes=2)),
    "copy_num_programs": dataclasses.replace(_COPY, name="copy_num_programs", fn=copy_num_programs),
    "copy_early_return": dataclasses.replace(_COPY, name="copy_early_return", fn=copy_early_return),
}
