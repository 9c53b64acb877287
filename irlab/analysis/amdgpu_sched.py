"""AMDGPU scheduling pins written in TTGIR, and the machine-instruction counts they need.

Triton's TTGIR order does not survive on AMD by itself: the AMDGPU backend's machine scheduler
reorders a loop body again (an interleaved global load on gfx942 compiles to the same AMDGCN as
the un-interleaved one). Two ROCDL ops reach that scheduler, and Triton 3.6-3.9 accept both in
TTGIR and carry them to the assembly (``; sched_barrier``, ``; sched_group_barrier``):

* ``rocdl.sched.barrier MASK`` -- no instruction crosses it except the classes set in MASK. With
  mask 0 it also ends a scheduling region (LLVM's ``SIInstrInfo::isSchedulingBoundary``), so
  the scheduler cannot overlap the code on its two sides at all.
* ``rocdl.sched.group.barrier MASK, SIZE, SYNCID`` -- a sequence of these, placed after the code
  they order, asks the scheduler for SIZE instructions of class MASK, then the next group, and
  so on, inside one region. That can split one TTGIR op (a dot's MFMAs) between groups, but the
  sizes are machine-instruction counts, which TTGIR does not state: :func:`vmem_reads`,
  :func:`mfmas` and :func:`ds_reads_bound` derive them from the layouts.

The mask is spelled differently across Triton versions: an integer in 3.6's ROCDL dialect
(``rocdl.sched.barrier 0``, ``rocdl.sched.group.barrier 256, 16, 0``), a ``SchedGroupMask``
keyword set in 3.9's (``rocdl.sched.barrier none``, ``rocdl.sched.group.barrier ds_read, 16,
0``, ``valu|mfma_wmma``). :func:`mask_text` writes either; a pass asks its services which one the installed Triton's parser
reads (``ctx.services.sched_masks_are_keywords()``).
"""
from __future__ import annotations

import math

from irlab.ir import Operation, TensorType, describe
from irlab.ir.traits import GLOBAL_LOAD

# llvm.amdgcn.sched_barrier / sched_group_barrier masks (LLVM AMDGPUUsage)
MASKS = {"alu": 0x1, "valu": 0x2, "salu": 0x4, "mfma": 0x8, "vmem": 0x10, "vmem_read": 0x20, "vmem_write": 0x40,
         "ds": 0x80, "ds_read": 0x100, "ds_write": 0x200, "trans": 0x400, "ldsdma": 0x800}
ALL_MASK_BITS = sum(MASKS.values())
# the same bits as keywords of MLIR's ROCDL SchedGroupMask (Triton 3.9)
KEYWORDS = {0x1: "non_mem_non_sideeffect", 0x2: "valu", 0x4: "salu", 0x8: "mfma_wmma", 0x10: "all_vmem",
            0x20: "vmem_read", 0x40: "vmem_write", 0x80: "all_ds", 0x100: "ds_read", 0x200: "ds_write",
            0x400: "transcendental", 0x800: "ldsdma"}


def mask_text(mask: int, keywords: bool) -> str:
    """``mask`` as the installed Triton's parser reads it: ``1615``, or with ``keywords``
    (``ctx.services.sched_masks_are_keywords()``)
    ``non_mem_non_sideeffect|valu|salu|mfma_wmma|vmem_write|ds_write|transcendental``."""
    if not keywords:
        return str(mask)
    if mask == 0:
        return "none"
    return "|".join(word for bit, word in KEYWORDS.items() if mask & bit)


def pins_apply(ctx) -> bool:
    """Whether scheduling pins reach the assembly of the target the pass's module is compiled for
    (``ctx.target``'s facts: AMDGPU's do; another assembler schedules freely)."""
    target = ctx.target
    return target is not None and target.facts.sched_pins


def sched_barrier(mask: int = 0, *, keywords: bool) -> str:
    return f"rocdl.sched.barrier {mask_text(mask, keywords)}"


def group_barrier(mask: int, size: int, sync_id: int = 0, *, keywords: bool) -> str:
    """The op as Triton prints it (3.6 writes the mask in decimal: 0x100, DS reads, as 256)."""
    return f"rocdl.sched.group.barrier {mask_text(mask, keywords)}, {size}, {sync_id}"


def is_pin(op: Operation | None, mask: int | None = None) -> bool:
    """Whether ``op`` is a ``rocdl.sched.barrier`` (with ``mask``, if given)."""
    if op is None or op.name != "rocdl.sched.barrier":
        return False
    return mask is None or barrier_mask(op) == mask


def barrier_mask(op: Operation) -> int | None:
    """The mask written on a ``rocdl.sched.barrier`` or ``rocdl.sched.group.barrier`` (its first
    operand) in either spelling (``0``, ``none``, ``valu|mfma_wmma``, ``all``); None if it cannot be
    read."""
    words = op.text.split(None, 1)
    if len(words) < 2:
        return None
    written = words[1].split("loc(")[0].split("{")[0].split(",")[0].strip()
    try:
        return int(written, 0)
    except ValueError:
        pass
    bits = {word: bit for bit, word in KEYWORDS.items()} | {"none": 0, "all": ALL_MASK_BITS}
    parts = [p.strip() for p in written.split("|")]
    return sum(bits[p] for p in parts) if all(p in bits for p in parts) else None


def _bits(element) -> int | None:
    return getattr(element, "bitwidth", None)


def elements_per_thread(t: TensorType) -> int | None:
    """Elements each thread holds of a tensor in a blocked layout (None for other layouts)."""
    lay = t.layout
    if lay is None or lay.kind != "blocked":
        return None
    spt, tpw, wpc = lay.get("sizePerThread"), lay.get("threadsPerWarp"), lay.get("warpsPerCTA")
    if not (spt and tpw and wpc) or not all(isinstance(d, int) for d in t.shape):
        return None
    n = 1
    for size, s, th, w in zip(t.shape, spt, tpw, wpc):
        n *= s * max(1, math.ceil(size / (s * th * w)))
    return n


def vmem_reads(load: Operation) -> int | None:
    """How many buffer/global load instructions a register-staged global load becomes: each
    thread's elements in vectors of its contiguous run along the fastest dimension, at most 128
    bits (``dwordx4``). None where the layout does not say (not blocked, unknown element)."""
    t = load.result.type if load.results else None
    if not isinstance(t, TensorType):
        return None
    per_thread, bits, lay = elements_per_thread(t), _bits(t.element), t.layout
    order = lay.get("order") if lay is not None else None
    if lay is None or per_thread is None or not bits or not order:
        return None
    fastest = order[0]
    run = min(lay.get("sizePerThread")[fastest], t.shape[fastest])
    vec = max(1, min(run, 128 // bits))
    return math.ceil(per_thread / vec)


def _mfma_tile(dot: Operation):
    """(instrShape M, N, K, warpsPerCTA) of the MFMA layout a dot accumulates in, or None."""
    t = dot.result.type if dot.results else None
    lay = t.layout if isinstance(t, TensorType) else None
    if lay is None or lay.kind != "amd_mfma":
        return None
    shape, warps = lay.get("instrShape"), lay.get("warpsPerCTA")
    if not shape or len(shape) < 3 or not warps:
        return None
    return shape[0], shape[1], shape[2], warps


def mfmas(dot: Operation) -> int | None:
    """MFMA instructions one wave issues for a ``tt.dot`` in an ``amd_mfma`` layout: its M x N x K
    tile in instruction tiles, divided over the warps (a warp whose share is smaller than one
    instruction tile still issues one)."""
    tile = _mfma_tile(dot)
    a, c = dot.a.type, dot.result.type
    if tile is None or not isinstance(a, TensorType) or not isinstance(c, TensorType) or len(c.shape) != 2:
        return None
    (im, in_, ik, (wm, wn)), (m, n), k = tile, c.shape, a.shape[-1]
    return max(1, math.ceil(m / (im * wm))) * max(1, math.ceil(n / (in_ * wn))) * math.ceil(k / ik)


def ds_reads_bound(dot: Operation) -> int | None:
    """An upper bound on the LDS reads one wave issues for a dot's two operands: one per element
    of each operand a wave needs (every ``ds_read`` moves at least one). Used as the size of a
    DS-read group that must take all of them."""
    tile = _mfma_tile(dot)
    a, b = dot.a.type, dot.b.type
    if tile is None or not isinstance(a, TensorType) or not isinstance(b, TensorType):
        return None
    im, in_, _ik, (wm, wn) = tile
    (m, k), n = a.shape, b.shape[-1]
    lanes = 64
    rows = max(im, math.ceil(m / wm))
    cols = max(in_, math.ceil(n / wn))
    return math.ceil(rows * k / lanes) + math.ceil(k * cols / lanes)


# ------------------------------------------------------------------------------------------------
# pinning a sunk global load (interleave-global-loads' ``pin`` option)

def is_pinned(body, load: Operation, dot: Operation, mode: str) -> bool:
    """Whether ``load`` (mode ``barriers``) or ``dot`` (mode ``groups``) already carries its pins."""
    if mode == "barriers":
        i = body.index(load)
        return i > 0 and is_pin(body.ops[i - 1], 0) and i + 1 < len(body.ops) and is_pin(body.ops[i + 1], 0)
    j = body.index(dot)
    return j + 1 < len(body.ops) and body.ops[j + 1].name == "rocdl.sched.group.barrier"


def warn_not_amd(ctx, op: Operation, what: str) -> None:
    """One warning per run: scheduling pins are AMDGPU ops, and this module is for another target."""
    message = (f"not pinned: {what} writes AMDGPU scheduling barriers; the module is for "
               f"{ctx.module.target or 'an unknown target'} (its assembler schedules freely)")
    if not any(d.message == message for d in ctx.diagnostics):
        ctx.warning(message, op)


def pin_sunk_load(ctx, rw, body, load: Operation, dot: Operation, mode: str, mfma_before: float) -> None:
    """Keep a sunk global load where it is through the AMDGPU scheduler, or say why not.

    * ``barriers``: ``rocdl.sched.barrier 0`` right before and after the load. Nothing crosses
      them, so the AMDGCN follows the TTGIR order verbatim, but the loop body becomes three
      scheduling regions and the dot's MFMAs, all in the last one, no longer overlap the LDS reads.
    * ``groups``: a ``rocdl.sched.group.barrier`` sequence after the dot, in one region: the loads
      before the sunk one, the LDS reads, ``mfma_before`` of the dot's MFMAs, the sunk load, the
      other MFMAs -- the talk's AMDGCN (``4 x global_load / s_barrier / 24 x ds_read / 98 x v_mfma /
      4 x global_load / ...``). The sizes are estimated from the layouts; the remark states them.
    """
    if not pins_apply(ctx):
        return warn_not_amd(ctx, load, f"pin={mode}")
    keywords = ctx.services.sched_masks_are_keywords()
    if mode == "barriers":
        i = body.index(load)
        if not (i > 0 and is_pin(body.ops[i - 1], 0)):
            rw.insert_before(load, sched_barrier(0, keywords=keywords), reason="pin the sunk load")
        if not is_pin(body.ops[body.index(load) + 1], 0):
            rw.insert_after(load, sched_barrier(0, keywords=keywords), reason="pin the sunk load")
        ctx.remark(f"pinned {describe(load)} with rocdl.sched.barrier 0 before and after it: nothing "
                   "crosses them (each also ends a scheduling region)", load)
        return
    earlier = [x for x in body.ops[:body.index(load)] if x.name in GLOBAL_LOAD]
    counts = [vmem_reads(x) for x in earlier + [load]]
    known = [c for c in counts if c is not None]
    n_mfma, n_ds = mfmas(dot), ds_reads_bound(dot)
    if len(known) < len(counts) or n_mfma is None or n_ds is None:
        unknown = [describe(x) for x, c in zip(earlier + [load], counts) if c is None] + \
            ([describe(dot)] if n_mfma is None or n_ds is None else [])
        ctx.warning(f"not pinned: cannot estimate the machine instructions of {', '.join(unknown)} (a "
                    "blocked global load and an amd_mfma dot are needed for the group sizes)", load)
        return
    first, sunk = sum(known[:-1]), known[-1]
    before = round(mfma_before * n_mfma)
    groups = [("vmem_read", first, "the loads before it")] if first else []
    groups += [("ds_read", n_ds, "every LDS read: an upper bound")]
    groups += [("mfma", before, f"{before} of {n_mfma} MFMAs")] if before else []
    groups += [("vmem_read", sunk, describe(load))]
    groups += [("mfma", n_mfma - before, "the other MFMAs")] if n_mfma - before else []
    rw.insert_after(dot, "\n".join(group_barrier(MASKS[k], n, keywords=keywords) for k, n, _ in groups), reason="pin the talk's schedule")
    said = ", ".join(f"{n} x {k} ({why})" for k, n, why in groups)
    ctx.remark(f"pinned the schedule with {len(groups)} rocdl.sched.group.barrier after {describe(dot)}: "
               f"{said}; counts estimated from the layouts", dot)
