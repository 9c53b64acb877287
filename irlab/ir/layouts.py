"""What a distributed layout gives each lane: the longest run of consecutive elements one thread
holds along one dimension.

A vectorized global access can never be wider than that run (times the element size): the
elements of one vector load or store are one thread's registers and must be neighbours in memory.
Triton's backends cap their vector width by it, and on AMD with Triton 3.9 the ``contiguity``
hint on buffer ops records it. irlab uses it twice: the rewriter recomputes such hints when a
rewrite moves a value to another layout (:mod:`irlab.ir.hints`), and the static access-width check
compares every global load and store of the compiled ISA with it.

Only layouts whose register order irlab knows are modelled; for any other (a slice, a dot
operand, WMMA, an MFMA on 64-bit elements, a layout with parameters irlab has not seen) the
answer is ``None``, "not known", and callers must treat that as "no claim".
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeGuard

from .attributes import Layout
from .types import TensorType


@dataclass(frozen=True)
class LaneRun:
    dim: int        # the tensor dimension along which the run goes
    length: int     # consecutive elements one lane holds along it

    def __str__(self):
        return f"{self.length} along dim {self.dim}"


# parameters of an amd_mfma layout that do not change which elements a lane holds in a tile
_MFMA_KNOWN = {"version", "warpsPerCTA", "instrShape", "isTransposed", "tilesPerWarp", "CTAsPerCGA", "CTASplitNum",
               "CTAOrder", "CGALayout", "elementBitWidth"}
_MMA_KNOWN = {"versionMajor", "versionMinor", "warpsPerCTA", "instrShape", "CTAsPerCGA", "CTASplitNum", "CTAOrder",
              "CGALayout"}


def lane_run(t) -> LaneRun | None:
    """The run of consecutive elements each lane holds in tensor type ``t``, or None if irlab
    does not model ``t``'s layout."""
    if not isinstance(t, TensorType) or t.layout is None or not t.shape:
        return None
    run = layout_run(t.layout, len(t.shape))
    if run is None or run.dim >= len(t.shape):
        return None
    extent = t.shape[run.dim]
    if not isinstance(extent, int) or extent <= 0:
        return None
    return LaneRun(run.dim, max(1, min(run.length, extent)))


def widest_lane_run(t) -> LaneRun | None:
    """The longest run of consecutive elements a lane holds along *any* dimension of ``t``: what
    bounds a vector access whose addresses are contiguous along a dimension other than the layout's
    fastest one. Triton picks the vector's dimension from the pointer's contiguity (its axis
    analysis), not from the layout's order: a ``2x1`` tensor whose two rows are neighbours in memory
    is loaded as one 2-element vector when one lane holds both rows. For a blocked layout a lane
    holds ``sizePerThread[d]`` consecutive elements along ``d``, or the whole extent when no other
    thread or warp shares that dimension (its repetitions are then adjacent). Other layouts:
    :func:`lane_run`."""
    base = lane_run(t)
    if base is None or t.layout.kind != "blocked":
        return base
    p, rank = t.layout.params, len(t.shape)
    spt, tpw, wpc = p.get("sizePerThread"), p.get("threadsPerWarp"), p.get("warpsPerCTA")
    if not (_ints(spt, rank) and _ints(tpw, rank) and _ints(wpc, rank)):
        return base
    best = base
    for d, extent in enumerate(t.shape):
        if not isinstance(extent, int) or extent <= 0:
            continue
        alone = tpw[d] * wpc[d] == 1     # this lane holds every element along d
        length = extent if alone else min(spt[d], extent)
        if length > best.length:
            best = LaneRun(d, length)
    return best


def layout_run(layout: Layout, rank: int) -> LaneRun | None:
    """:func:`lane_run` for a layout alone (the tensor's extent not yet applied)."""
    kind, p = layout.kind, layout.params
    if kind == "blocked":
        spt, order = p.get("sizePerThread"), p.get("order")
        if not _ints(spt, rank) or not _ints(order, rank) or sorted(order) != list(range(rank)):
            return None   # (an order that is no permutation of the dimensions: malformed, no claim)
        return LaneRun(order[0], spt[order[0]])
    if kind == "amd_mfma":
        if set(p) - _MFMA_KNOWN or rank != 2 or p.get("elementBitWidth", 32) not in (16, 32):
            return None
        shape = p.get("instrShape") or p.get("instrShape".lower())
        if not isinstance(shape, (list, tuple)) or len(shape) < 2 or tuple(shape[:2]) not in ((32, 32), (16, 16)):
            return None
        # the 32x32 and 16x16 MFMA results give a lane 4 consecutive rows of one column; a
        # transposed layout gives it 4 consecutive columns of one row
        return LaneRun(1 if p.get("isTransposed") else 0, 4)
    if kind == "nvidia_mma":
        if set(p) - _MMA_KNOWN or rank != 2 or p.get("versionMajor") not in (2, 3):
            return None
        # mma.sync and wgmma accumulators: each lane holds pairs of neighbouring columns
        return LaneRun(1, 2)
    if kind == "linear":
        return _linear_run(p.get("register"), rank)
    return None


def _linear_run(bases, rank: int) -> LaneRun | None:
    """A linear layout's run: its first register bases are 1, 2, 4, ... along one dimension."""
    if not isinstance(bases, (list, tuple)):
        return None
    if not bases:
        return LaneRun(rank - 1, 1)
    first = bases[0]
    if not _ints(first, rank) or sorted(first) != [0] * (rank - 1) + [1]:
        return LaneRun(rank - 1, 1)
    dim, length = first.index(1), 1
    for b in bases:
        if not _ints(b, rank) or any(x != 0 for i, x in enumerate(b) if i != dim) or b[dim] != length:
            break
        length *= 2
    return LaneRun(dim, length)


def _ints(v: Any, n: int) -> TypeGuard[list[int] | tuple[int, ...]]:
    """Whether ``v`` is a list or tuple of ``n`` ints (a layout parameter irlab can read)."""
    return isinstance(v, (list, tuple)) and len(v) == n and all(isinstance(x, int) for x in v)


# --- the MFMA accumulator's wide-store layout ---------------------------------------------------

def mfma_store_layout(layout: Layout | None, shape, element) -> tuple[str | None, str]:
    """The ``#ttg.linear`` layout, as text, that Triton 3.9 (``chooseMfmaLikeStoreLayout``) stores
    an MFMA accumulator (``layout``, ``shape``, stored ``element``) from on CDNA4, with ``""``;
    or ``(None, why not)``.

    In a transposed 32x32 (or 16x16) MFMA result a lane holds 4 consecutive columns; exchanging
    two column bits between registers and lanes (columns 4-7 of lanes 32-63 with columns 8-11 of
    lanes 0-31, every 16 columns; for 16x16, bits 2 and 4) gives it 8, a 128-bit store of fp16,
    and the exchange is an in-register ``v_permlane32_swap`` / ``v_permlane16_swap`` (no LDS),
    which Triton's backend emits only for exactly this layout. Its conditions: rank 2, f16/bf16,
    MFMA version 4, transposed, 32x32, or 16x16 with at least 32 columns and one warp along N.
    irlab adds its own: a single CTA, parameters it models, and a tensor the MFMA tile of the
    warps covers (no broadcast) -- elsewhere it makes no claim."""
    if layout is None or layout.kind != "amd_mfma":
        return None, "the value is not in an MFMA layout"
    p = layout.params
    if len(shape) != 2 or not all(isinstance(s, int) and s > 0 and s & (s - 1) == 0 for s in shape):
        return None, "the tensor is not 2-D with power-of-two extents"
    if str(element) not in ("f16", "bf16"):
        return None, f"the stored element type is {element}, not f16 or bf16"
    if set(p) - _MFMA_KNOWN or p.get("elementBitWidth", 32) != 32:
        return None, "the MFMA layout has parameters irlab does not model"
    if p.get("version") != 4:
        return None, f"MFMA version {p.get('version')} (CDNA4's version 4 has the permlane swap)"
    if not p.get("isTransposed"):
        return None, "the MFMA layout is not transposed (a lane holds a column run, not a row run)"
    if any(x != 1 for x in (p.get("CTAsPerCGA") or [1])) or p.get("CGALayout"):
        return None, "more than one CTA"
    instr, warps = p.get("instrShape"), p.get("warpsPerCTA")
    tiles = p.get("tilesPerWarp") or [1, 1]
    if not (_ints(warps, 2) and _ints(tiles, 2) and isinstance(instr, (list, tuple)) and len(instr) >= 2):
        return None, "the MFMA layout's warpsPerCTA, tilesPerWarp or instrShape are not 2-D"
    m_dim, n_dim = instr[0], instr[1]
    big_m, big_n = shape
    if (m_dim, n_dim) == (16, 16):
        if big_n < 32 or warps[1] != 1:
            return None, "a 16x16 MFMA needs at least 32 columns and one warp along N for the lane swap"
    elif (m_dim, n_dim) != (32, 32):
        return None, f"MFMA instruction shape {m_dim}x{n_dim} (only 32x32 and 16x16 have the swap)"
    if big_m % (m_dim * tiles[0] * warps[0]) or big_n % (n_dim * tiles[1] * warps[1]):
        return None, "the warps' MFMA tiles do not cover the tensor exactly (a broadcast layout)"

    # Triton's AMDMfmaEncodingAttr::toLinearLayout for the transposed 4-high output, bases [m, n]
    bases: dict[str, list[list[int]]] = {"register": [], "lane": [], "warp": []}
    size = [1, 1]

    def extend(kind, n, dim):
        while n > 1:
            b = [0, 0]
            b[dim] = size[dim]
            bases[kind].append(b)
            size[dim] *= 2
            n //= 2

    extend("register", 4, 1)
    extend("lane", m_dim, 0)
    extend("lane", 64 // m_dim, 1)
    extend("register", m_dim * n_dim // (64 * 4), 1)
    extend("register", tiles[1], 1)
    extend("warp", warps[1], 1)
    extend("register", big_n // (n_dim * warps[1] * tiles[1]), 1)
    extend("register", tiles[0], 0)
    extend("warp", warps[0], 0)
    extend("register", big_m // size[0], 0)   # combineCtaCgaWithShape: the rest of M in registers
    # exchange column bits 2 and 3 (32x32) or 2 and 4 (16x16)
    hi = 3 if m_dim == 32 else 4

    def swap(n):
        b2, bh = (n >> 2) & 1, (n >> hi) & 1
        return n & ~((1 << 2) | (1 << hi)) | (bh << 2) | (b2 << hi)

    bases = {k: [[m, swap(n)] for m, n in v] for k, v in bases.items()}
    text = ", ".join(f"{k} = [{', '.join(f'[{m}, {n}]' for m, n in v)}]" for k, v in bases.items())
    return f"#ttg.linear<{{{text}, block = []}}>", ""


def is_layout(layout: Layout | None, text: str) -> bool:
    """Whether ``layout`` is the ``#ttg.linear`` layout written ``text`` (by its bases)."""
    if layout is None or layout.kind != "linear":
        return False
    want = {k: [[int(x) for x in b.split(",")] for b in re.findall(r"\[(-?\d+, -?\d+)\]", v)]
            for k, v in re.findall(r"(register|lane|warp) = (\[[^=]*\])", text)}
    return all([list(b) for b in (layout.params.get(k) or [])] == v for k, v in want.items())
