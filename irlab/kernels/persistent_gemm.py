"""Persistent fp16 GEMM with TMA loads and stores: irlab's own reference for the ``persistent-tma``
variant of ``gemm_fp16``.

The kernel has the structure of Triton's tutorial 09 (the facts, not its text): a grid of one
program per SM (``min(#SMs, tiles)``), each program walking the output tiles ``pid, pid + #programs,
...`` in the same GROUP_M order as ``gemm_fp16``, its A and B tiles loaded through TMA descriptors
and its C tile stored through one (optionally in two halves of BLOCK_N / 2, "epilogue subtiling",
which halves the shared memory the store stages through). The tile loop carries ``flatten=True``
so that Triton's loop fusion runs the next tile's loads under the last tile's epilogue.

The descriptors are built on the device (``tl.make_tensor_descriptor``): that compiles and runs
the same on Triton 3.6 and 3.9 with plain pointer arguments (a cross-compile needs no descriptor
types in the signature) and is what ``persistent-tma`` writes too; the GPU runner gives Triton the
scratch allocator it needs (:func:`irlab.timing.gpu.install_scratch_allocator`).

Problem, inputs, reference and library call are ``gemm_fp16``'s (row-major A: MxK, B: KxN, C:
MxN), so the two kernels' outputs are the same tensor and ``irlab ab --reference
gemm_persistent_tma`` can time this one beside ``gemm_fp16``'s variants. The step of the tile loop
is the number of programs launched, not a constant: any grid computes every tile once, so the
launch (``launch_args``, sized by the device's SM count) decides how persistent it is.
"""
from __future__ import annotations

import triton
import triton.language as tl

from .shapes import RowMajorGemm, TileConfig
from . import gemm

# the SM count a launch on a tensor that is not on a CUDA device sizes its grid with (the checks
# that run launch_args on CPU tensors): an H100 SXM's and an H200's
DEFAULT_SMS = 132


@triton.jit
def _tile_coords(tile, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """(row, column) of output tile ``tile`` in GROUP_M order: GROUP_M tile rows side by side, so
    programs working at the same time share their A rows and B columns in L2."""
    per_group = GROUP_M * tiles_n
    first_m = (tile // per_group) * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile % per_group) % rows, (tile % per_group) // rows


@triton.jit
def persistent_tma_gemm(a_ptr, b_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr, SPLIT_STORE: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    if SPLIT_STORE:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N // 2])
    else:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])

    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0), flatten=True):
        tm, tn = _tile_coords(tile, tiles_m, tiles_n, GROUP_M)
        row = tm * BLOCK_M
        col = tn * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(k_steps):   # TMA fills the part of a box past K with zeros: no mask
            acc = tl.dot(a_desc.load([row, kk * BLOCK_K]), b_desc.load([kk * BLOCK_K, col]), acc)
        if SPLIT_STORE:   # two BLOCK_M x BLOCK_N/2 stores: half the shared memory staging the store
            left, right = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
            c_desc.store([row, col], left.to(tl.float16))
            c_desc.store([row, col + BLOCK_N // 2], right.to(tl.float16))
        else:
            c_desc.store([row, col], acc.to(tl.float16))   # TMA drops what falls past M or N


def _config(m: int, n: int, k: int, warps: int, stages: int, split: bool) -> TileConfig:
    name = f"{m}x{n}x{k}-w{warps}-s{stages}" + ("-split" if split else "")
    return TileConfig(name, {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "SPLIT_STORE": split},
                      warps, stages)


# tutorial 09's kind of space on Hopper: 128-row tiles, 8 warps, 3-4 stages, with and without the
# split store (shared memory rules out 128x256x64 at 4 stages with a whole-tile store)
CONFIGS = {c.name: c for c in (_config(128, 128, 64, 8, 3, False), _config(128, 128, 64, 8, 3, True),
                               _config(128, 128, 64, 8, 4, False), _config(128, 128, 64, 8, 4, True),
                               _config(128, 256, 64, 8, 3, False), _config(128, 256, 64, 8, 3, True),
                               _config(128, 256, 64, 8, 4, True))}


# gemm_fp16's problem; the descriptors assume row-major A, B and C, so the kernel takes no strides
GEMM = RowMajorGemm(strides=())


def sm_count(tensor) -> int:
    """The SM count of the device ``tensor`` lives on (DEFAULT_SMS off a CUDA device)."""
    if getattr(tensor.device, "type", "cpu") != "cuda":
        return DEFAULT_SMS
    import torch
    return int(torch.cuda.get_device_properties(tensor.device).multi_processor_count)


def launch_args(inputs, shape, cfg: TileConfig):
    """One program per SM, at most one per tile: the kernel loops over the tiles itself."""
    (tiles, _, _), args = GEMM.launch_args(inputs, shape, cfg)
    return (min(sm_count(inputs["a"]), tiles), 1, 1), args


SPEC = GEMM.spec(
    "gemm_persistent_tma", persistent_tma_gemm, CONFIGS, "128x256x64-w8-s3-split", launch_args=launch_args,
    description="persistent fp16 GEMM, TMA loads and stores, one program per SM (tutorial 09's structure; "
                "gemm_fp16's problem and inputs)",
    # TMA descriptors exist from Hopper on (Triton lowers them for sm_90 and later only)
    unsupported={"cuda:80": "TMA descriptors need Hopper (sm_90) or later",
                 "hip:gfx942": "a TMA (Hopper) kernel", "hip:gfx950": "a TMA (Hopper) kernel"},
    make_inputs=gemm.make_inputs, reference=gemm.reference, library=gemm.cublas, library_name="torch.matmul")
