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

from dataclasses import dataclass

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


def layout_run(layout: Layout, rank: int) -> LaneRun | None:
    """:func:`lane_run` for a layout alone (the tensor's extent not yet applied)."""
    kind, p = layout.kind, layout.params
    if kind == "blocked":
        spt, order = p.get("sizePerThread"), p.get("order")
        if not _ints(spt, rank) or not _ints(order, rank):
            return None
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


def _ints(v, n: int) -> bool:
    return isinstance(v, (list, tuple)) and len(v) == n and all(isinstance(x, int) for x in v)
