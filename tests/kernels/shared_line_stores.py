"""Kernels whose global stores of different layouts share a source line, for the access-width
check: the accumulator of a 64x64x64 ``tl.dot`` (an MFMA layout on AMD, 4 consecutive fp16 per lane;
converted to a blocked layout on NVIDIA), a loaded 64x64 fp16 tile (8 consecutive fp16 per lane,
16-byte stores) and a 128-element fp16 vector (one element per lane). ``one_line`` writes the
three stores on one line, ``one_helper`` in one inlined ``@triton.jit`` helper called once,
``in_loop`` on one line inside a loop over row blocks."""
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def one_line(a_ptr, b_ptr, c_ptr, d_ptr, v_ptr, w_ptr, N: tl.constexpr, BLOCK: tl.constexpr, VEC: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    tile = rows[:, None] * N + cols[None, :]
    a = tl.load(a_ptr + tile)
    b = tl.load(b_ptr + tile)
    acc = tl.dot(a, b).to(tl.float16)
    v = tl.load(v_ptr + tl.arange(0, VEC))
    tl.store(c_ptr + tile, acc); tl.store(d_ptr + tile, b); tl.store(w_ptr + tl.arange(0, VEC), v)  # noqa: E702


@triton.jit
def _epilogue(c_ptr, acc, d_ptr, b, w_ptr, v, tile, VEC: tl.constexpr):
    tl.store(c_ptr + tile, acc)
    tl.store(d_ptr + tile, b)
    tl.store(w_ptr + tl.arange(0, VEC), v)


@triton.jit
def one_helper(a_ptr, b_ptr, c_ptr, d_ptr, v_ptr, w_ptr, N: tl.constexpr, BLOCK: tl.constexpr, VEC: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    tile = rows[:, None] * N + cols[None, :]
    a = tl.load(a_ptr + tile)
    b = tl.load(b_ptr + tile)
    acc = tl.dot(a, b).to(tl.float16)
    v = tl.load(v_ptr + tl.arange(0, VEC))
    _epilogue(c_ptr, acc, d_ptr, b, w_ptr, v, tile, VEC)


@triton.jit
def in_loop(a_ptr, b_ptr, c_ptr, d_ptr, v_ptr, w_ptr, N: tl.constexpr, BLOCK: tl.constexpr, VEC: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    b = tl.load(b_ptr + rows[:, None] * N + cols[None, :])
    for i in range(0, N // BLOCK):
        tile = (i * BLOCK + rows[:, None]) * N + cols[None, :]
        a = tl.load(a_ptr + tile)
        acc = tl.dot(a, b).to(tl.float16)
        v = tl.load(v_ptr + i * VEC + tl.arange(0, VEC))
        tl.store(c_ptr + tile, acc); tl.store(d_ptr + tile, a); tl.store(w_ptr + i * VEC + tl.arange(0, VEC), v)  # noqa: E702


KERNELS = {"one_line": one_line, "one_helper": one_helper, "in_loop": in_loop}
ARGS = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "d_ptr": "*fp16", "v_ptr": "*fp16", "w_ptr": "*fp16"}
CONSTEXPRS = {"N": 256, "BLOCK": 64, "VEC": 128}
