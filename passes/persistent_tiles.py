"""persistent-tiles: turn a tile-per-program kernel into a persistent one that loops over its tiles.

Why: Triton's tutorial-09 persistent GEMM -- a grid of one program per SM, each looping over
output tiles -- is compared with the best config of the tutorial-03 GEMM (one program per tile).
Part of its difference is TMA (``descriptor-loads``), part may be the persistence itself: no block
scheduling per tile, descriptors built once per program (``descriptor-loads`` builds them before a
loop over tiles), with ``flatten`` the next tile's loads overlapping the last one's epilogue. This
pass does the persistence, on TTIR, automatically. Measured results: ``docs/results/persistent_tma/``.

**What it matches.** One ``tt.func`` whose body is one block ending in ``tt.return`` with no
value, holding exactly one ``tt.get_program_id x`` (at the top level), where

* the output tiles are the ``tt.store``\\ s: each store's pointer is ``splat(base) + one index
  term per axis`` (:mod:`irlab.analysis.index_expr`); an axis whose start depends on the program
  id has the start ``c * T`` (``T`` the tile's size along it, ``c`` anything), no wrap, and a
  mask conjunct ``start + range(T) < B`` with ``B`` independent of the program id; every store
  starts its tile at the same ``c * T`` (one tile per program);
* the kernel itself computes ``cdiv(B, T)`` (``(B + T-1) / T``, as ``tl.cdiv`` writes it) for
  each such axis -- tutorial 03's ``num_pid_m``/``num_pid_n`` -- and every store names the same
  ones. The number of tiles is their product, ``cdiv(M, BM) * cdiv(N, BN)``; a floor-divided
  count (``(B + anything else) / T``) would skip the last, partial tile and is not accepted;
* **the program id picks the tile and does nothing else** (:mod:`irlab.analysis.program_id`):
  every op that reads a value computed from it is index, address or data computation, or a load
  or store (its pointer, value, mask); the only decisions such a value reaches are the tiles'
  bounds ``c * T + range(T) < B`` above (conjoined into masks and select conditions). No branch,
  loop bound, other compare (``pid < num_tiles``, ``offs >= 0``), widened mask (``arith.ori``)
  or mask used as data is keyed to it: each of those is work that some programs do and others do
  not -- typically programs launched past the tile count that zero another buffer -- which a loop
  over the tiles would never run.

**What it does.** Ops that are pure, have no regions and do not depend on the program id stay
where they are (constants, splats, ``make_range``, ``num_pid_m``...); every other op after it --
the per-tile work, including each op with an effect -- moves, in order, into::

    %num_programs = tt.get_num_programs x : i32
    %num_tiles = arith.muli %num_pid_m, %num_pid_n : i32
    scf.for %tile = %pid to %num_tiles step %num_programs : i32 {
      ... the per-tile work, with %tile wherever it used %pid ...
    } {irlab.persistent_tiles, irlab.tile_count = "cdiv(arg3, 128) * cdiv(arg4, 128)"}

Masks at tile remainders are computed from the tile's coordinates inside the loop, so they follow
the tile. The loop covers tiles ``0 .. num_tiles-1`` whatever grid it is launched with: with
``num_tiles`` programs each program runs one tile (the old kernel exactly); with fewer, each runs
several. ``irlab.persistent_tiles`` marks the loop so that a launcher can see, in the compiled
TTIR, that the kernel was transformed, and ``irlab.tile_count`` says how the tile count follows
from the kernel's arguments (``argN``: the N-th argument of the TTIR function), so that the
launch can check its grid (:func:`irlab.passkit.variant.launch_grid`); a tile count whose bounds are not
computed from the arguments by ``+ - * /`` is refused.

**The launch contract.** The new kernel does what the old one did exactly when the old one was
launched on ``(num_tiles, 1, 1)`` programs: with more, the old kernel's extra programs ran (the
pass refuses the kernels whose extra programs visibly do work, but cannot see through every tile
mapping: the GROUP_M swizzle of an extra program divides by a group size of zero or less); with
fewer, it left tiles unwritten that the loop writes; programs along y or z repeated work the loop
does once. A variant declares ``Launch(grid="persistent")`` (:class:`irlab.passkit.variant.Launch`;
naming the pass on its own, ``--variant persistent-tiles``, adds it): every irlab launcher then
gives the grid it computed and its argument values to :func:`irlab.passkit.variant.launch_grid`, which
raises unless the grid is ``(tile count, 1, 1)`` for those values, and launches
``(min(#SMs, num_tiles), 1, 1)`` programs (:func:`irlab.passkit.variant.persistent_grid`) -- only when
the compiled kernel carries the marker (a refused kernel keeps its own grid). A launcher outside
irlab (a program under ``irlab run``, ``jit_variant``) keeps its own grid, which irlab cannot
check: the kernel is still the old one when that grid is one program per tile.

**What it refuses** (a note names the reason at the op; the IR is unchanged): a module with
layouts (run it on TTIR) or with several functions; a function of several blocks (an early
``return`` is one), a ``tt.return`` elsewhere than at the end of its body or with a value; no
program id, several, one inside a region, or one along y or z (a 2-D or 3-D grid);
``tt.get_num_programs`` (its value would change); a use of the program id beyond picking the
tile (above); an op that synchronizes, may do anything (calls, prints, asserts, unknown ops) or
writes global memory other than by ``tt.store`` (atomics, ``tt.descriptor_store``: run this pass
before ``descriptor-loads``); a store whose pointer does not move with the program id, whose base
or strides do, or whose form the match above does not describe; stores at different tile
coordinates; a tile count the kernel does not compute or that is not computed from its
arguments; a loop already started at the program id (a kernel that is persistent already).

Options (what ``tl.range(..., flatten=, warp_specialize=)`` writes): ``flatten`` puts
``tt.flatten`` on the tile loop. Triton 3.6 and 3.9 run ``fuse_nested_loops`` for sm_80/sm_90 and
for sm_100 on, before pipelining; it fuses a nest whose outer loop is so marked into one loop the
pipeliner can overlap across tiles (cross-compiled for cuda:90 the TTGIR holds the fused loop and
the cubin changes). ``warp_specialize`` puts ``tt.warp_specialize`` on it (tutorial 09 does, for
Blackwell); cross-compiled for cuda:90 (3.6 and 3.9, with descriptor-loads) the cubin is unchanged
at num_warps=8, and at num_warps=4 Hopper warp specialization acts on the tile loop (12 warps).

The variant ``persistent-tma`` is this pass, then ``descriptor-loads{store=true}``; on
``gemm_splitk`` (atomics), ``softmax`` (a row per program) and ``int4_gemm`` (no tile count in the
kernel) the pass refuses and the grid stays; Gluon kernels have no TTIR stage and are not touched.
Its correctness on a GPU is checked by ``tests/test_persistent_tiles.py -m gpu`` and ``irlab
verify``; what it gains, by ``irlab ab`` (``docs/results/persistent_tma/``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from irlab.analysis.index_expr import Unmatched, bound, conjuncts, int_constant, pointer_terms
from irlab.analysis.program_id import KeyedWork, program_id_slice
from irlab.ir import BlockArgument, Effect, Operation, RewriteError, TensorType, Value, describe, effects
from irlab.ir.effects import own_effects, what_it_does
from irlab.ir.opbuilder import string_attr
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register
from irlab.passkit.variant import PERSISTENT_MARKER as MARKER
from irlab.passkit.variant import TILE_COUNT_ATTR


class Refuse(Exception):
    """Why the kernel is left as it is; ``op`` is where the note points."""

    def __init__(self, message: str, op: Operation | None = None):
        super().__init__(message)
        self.op = op


@dataclass
class Plan:
    pid: Operation
    ret: Operation
    moved: list            # the top-level ops that go into the loop, in order
    factors: list          # cdiv values whose product is the tile count
    why: str               # the tile count in words, for the remark
    count: str             # the tile count from the kernel's arguments, for the launch to check its grid


@register
class PersistentTiles(ModulePass):
    name: ClassVar[str] = "persistent-tiles"
    runs_on: ClassVar[tuple] = ("ttir",)
    summary: ClassVar[str] = ("TTIR: loop a tile-per-program kernel over its tiles (for tile = pid to num_tiles step "
                              "num_programs); launched with grid (min(#SMs, programs), 1, 1) by Launch(grid='persistent')")
    stage: ClassVar[str] = "ttir"
    launch: ClassVar[str] = "persistent"

    flatten: bool = option(False, "put tt.flatten on the tile loop (Triton fuses it with the K loop before pipelining)")
    warp_specialize: bool = option(False, "put tt.warp_specialize on the tile loop")

    def run(self, ctx: PassContext) -> None:
        m = ctx.module
        if ctx.refuse_unless_ttir():
            return
        funcs = m.functions
        if len(funcs) != 1:
            ctx.note(f"refused: the module has {len(funcs)} functions; only a single-kernel module is handled")
            return
        try:
            plan = self.plan(funcs[0])
        except Refuse as e:
            ctx.note(f"refused: {e}", e.op)
            return
        try:
            self.rewrite(ctx, plan)
        except RewriteError as e:
            ctx.warning(f"could not rewrite: {e}", plan.pid)
            return
        ctx.remark(f"the per-tile work now loops over tiles {plan.pid.result.ref} .. {plan.why} - 1 in steps of "
                   "tt.get_num_programs x; launch it with grid (min(#SMs, programs), 1, 1) "
                   "(Launch(grid='persistent'))", plan.pid)

    # --- matching --------------------------------------------------------------------------------
    def plan(self, fn: Operation) -> Plan:
        region = fn.regions[0]
        if len(region.blocks) != 1:
            early = [b.ops[-1] for b in region.blocks[:-1] if b.ops and b.ops[-1].name == "tt.return"]
            if early:
                raise Refuse(f"the kernel returns early, at {describe(early[0])}: some programs end before the "
                             "others' work, and a return inside a loop over tiles would end every later tile too",
                             early[0])
            raise Refuse("the function has several blocks (unstructured control flow)", fn)
        block = region.entry
        assert block is not None   # the region has exactly one block (checked above)
        ret = block.ops[-1] if block.ops else None
        if ret is None or ret.name != "tt.return" or ret.operands:
            raise Refuse("the function body does not end in a tt.return without a value", ret or fn)
        pids = []
        for op in fn.walk():
            if op is fn:
                continue
            if op.name == "tt.return" and op is not ret:
                raise Refuse("a tt.return inside the body: the work after the program id is not one straight tile", op)
            if op.name == "tt.get_num_programs":
                raise Refuse("the kernel reads tt.get_num_programs, whose value the persistent launch changes", op)
            if op.name == "tt.get_program_id":
                pids.append(op)
            e = own_effects(op)
            # the type: ignores below: after `e == Effect.ALL` mypy narrows a Flag to its other named
            # members, leaving out the combined values (python/mypy#21937)
            if e == Effect.ALL or Effect.SYNC in e or Effect.SCHEDULE in e:  # type: ignore[operator]
                raise Refuse(f"{describe(op)} {what_it_does(op)}: a loop over tiles would change what it orders or "
                             "how often it runs", op)
            if Effect.WRITE_GLOBAL in e and op.name != "tt.store":  # type: ignore[operator]
                raise Refuse(f"{describe(op)} writes global memory other than by tt.store (a descriptor store: run "
                             "persistent-tiles before descriptor-loads)", op)
            if e & (Effect.READ_SHARED | Effect.WRITE_SHARED):  # type: ignore[operator]
                raise Refuse(f"{describe(op)} {what_it_does(op)}", op)
        if not pids:
            raise Refuse("the kernel reads no program id: there is no tile per program", fn)
        for p in pids:
            if _axis(p) != "x":
                raise Refuse(f"the program id is read along {_axis(p)}; only a 1-D grid (axis x) is handled: "
                             "programs along y and z would do work a loop over the x tiles never does", p)
        if len(pids) > 1:
            raise Refuse(f"the kernel reads the program id {len(pids)} times; only one tt.get_program_id x is handled",
                         pids[1])
        pid = pids[0]
        if pid.parent is not block:
            raise Refuse("the program id is read inside a region", pid)
        for op in fn.walk():
            if op.name == "scf.for" and op.lower_bound is pid.result:
                raise Refuse("a loop already starts at the program id: the kernel is persistent already", op)
        try:
            uses = program_id_slice(fn, pid.result)
        except KeyedWork as e:
            raise Refuse(f"{e}: work keyed to the program id beyond picking its tile", e.op) from None
        moved = self.per_tile_ops(block, pid, ret)
        stores = [o for o in fn.walk() if o.name == "tt.store"]
        if not stores:
            raise Refuse("the kernel stores nothing: no output tile to count", fn)
        hoisted = [o for o in block.ops if o not in moved and o is not ret]
        counts = []
        for st in stores:
            counts.append(self.tile_count(st, pid.result, hoisted))
        first = counts[0]
        for st, c in zip(stores[1:], counts[1:]):
            if [f for f, _ in c] != [f for f, _ in first]:
                raise Refuse("the stores do not agree on the number of tiles "
                             f"({_product(first)} vs {_product(c)})", st)
        factors = [f for f, _ in first]
        for cmp in uses.compares:
            self.tile_bound(cmp, pid.result, factors, hoisted)
        self.same_tiles(stores, pid.result)
        return Plan(pid, ret, moved, factors, _product(first), self.launch_count(first, fn))

    def same_tiles(self, stores: list, pid: Value) -> None:
        """Every store writes the tile at the same coordinates: the starts that move with the program
        id are one value per axis (a store at other coordinates, ``(pid - num_tiles) * T`` say, is
        work of programs other than the tile's)."""
        starts = [{t.axis: t.start for t in pointer_terms(st.ptr)[1] if t.start is not None and
                   _depends_on(t.start, pid)} for st in stores]
        for st, s in zip(stores[1:], starts[1:]):
            for axis, v in s.items():
                if starts[0].get(axis) is not v:
                    other = starts[0].get(axis)
                    raise Refuse(f"the stores write tiles at different coordinates along axis {axis} ({v.ref} vs "
                                 f"{other.ref if other is not None else 'none'}): not one tile per program", st)

    def tile_bound(self, cmp: Operation, pid: Value, factors: list, hoisted: list) -> None:
        """A compare of a value computed from the program id must be a tile's bound ``c * T +
        range(T) < B`` whose ``cdiv(B, T)`` is one of the tile counts: it tells the tile's own
        elements from those past the tensor's edge, and nothing else."""
        why = (f"{describe(cmp)} compares a value computed from the program id and is not a tile's bound "
               "`c * T + range(T) < B` with cdiv(B, T) among the tile counts: a decision keyed to the program id "
               "beyond picking its tile")
        try:
            b = bound(cmp.result)
        except Unmatched:
            raise Refuse(why, cmp) from None
        t = b.index
        if not t.plain or t.start is None or _depends_on(b.limit, pid) or _times_constant(t.start) != t.size:
            raise Refuse(why, cmp)
        if _find_cdiv(b.limit, t.size, hoisted) not in factors:
            raise Refuse(why, cmp)

    def launch_count(self, factors: list, fn: Operation) -> str:
        """The tile count as an expression of the kernel's arguments (``cdiv(arg3, 128) *
        cdiv(arg4, 128)``): what a launch compares its grid with (:func:`irlab.passkit.variant.launch_grid`)."""
        parts = []
        for cdiv, _ in factors:
            add = cdiv.defining_op.lhs.defining_op
            size = int_constant(cdiv.defining_op.rhs)
            assert size is not None   # _find_cdiv matched this divisor to the tile's size
            limit = add.lhs if int_constant(add.rhs) == size - 1 else add.rhs
            text = _argument_expr(limit, fn)
            if text is None:
                raise Refuse(f"the tile count's bound {limit.ref} is not computed from the kernel's arguments: a "
                             "launch could not check that its grid is the tile count", cdiv.defining_op)
            parts.append(f"cdiv({text}, {size})")
        return " * ".join(parts)

    def per_tile_ops(self, block, pid: Operation, ret: Operation) -> list:
        """The top-level ops that go into the loop: every op with an effect or a region, and every op
        that computes from the program id or from such an op (through its nested regions too)."""
        moved: list = []
        inside = set()
        for op in block.ops:
            if op is pid or op is ret:
                continue
            uses = {u.value for o in op.walk() for u in o.operand_uses}
            depends = any(v is pid.result or (v.defining_op is not None and v.defining_op in inside)
                          for v in uses)
            if op.regions or effects(op) != Effect.NONE or depends:
                moved.append(op)
                inside.add(op)
        if not moved:
            raise Refuse("nothing after the program id does any work", pid)
        return moved

    def tile_count(self, st: Operation, pid: Value, hoisted: list) -> list:
        """``[(cdiv value, "cdiv(B, T)"), ...]`` for the axes of the store's tile that move with the
        program id (in axis order)."""
        ptype = st.ptr.type
        if not isinstance(ptype, TensorType) or ptype.rank not in (1, 2):
            raise Refuse("the store is not a 1-D or 2-D tile of pointers", st)
        try:
            base, terms = pointer_terms(st.ptr)
        except Unmatched as e:
            raise Refuse(f"the store's pointer is not a tile address: {e}", st) from None
        if _depends_on(base, pid):
            raise Refuse(f"the store's base pointer {base.ref} moves with the program id (not a tile of a "
                         "program-independent tensor): the tile count is not derivable", st)
        by_axis = {}
        for t in terms:
            if t.axis in by_axis:
                raise Refuse(f"two index terms vary along axis {t.axis} of the store", st)
            by_axis[t.axis] = t
        if sorted(by_axis) != list(range(ptype.rank)) or \
                tuple(by_axis[a].size for a in sorted(by_axis)) != tuple(ptype.shape):
            raise Refuse("the store's index ranges do not span its tile", st)
        factors = []
        for axis in sorted(by_axis):
            t = by_axis[axis]
            if any(_depends_on(s, pid) for s in t.strides):
                raise Refuse(f"a stride of axis {axis} of the store moves with the program id", st)
            if t.start is None or not _depends_on(t.start, pid):
                continue
            if t.wrap is not None:
                raise Refuse(f"the store's index along axis {axis} wraps (% {t.wrap.ref})", st)
            if _times_constant(t.start) != t.size:
                raise Refuse(f"the store's tile start {t.start.ref} along axis {axis} is not a multiple of the tile "
                             f"size {t.size} (c * {t.size})", st)
            limit = self.mask_bound(st, axis, t)
            if _depends_on(limit, pid):
                raise Refuse(f"the mask bound {limit.ref} moves with the program id", st)
            cdiv = _find_cdiv(limit, t.size, hoisted)
            if cdiv is None:
                raise Refuse(f"the kernel does not compute cdiv({limit.ref}, {t.size}) (({limit.ref} + {t.size - 1}) "
                             f"/ {t.size}), the number of tiles along axis {axis}: the tile count is not derivable "
                             "in the kernel", st)
            factors.append((cdiv, f"cdiv({limit.ref}, {t.size})"))
        if not factors:
            raise Refuse("the store's tile does not move with the program id (not a per-tile store)", st)
        return factors

    def mask_bound(self, st: Operation, axis: int, term) -> Value:
        if st.mask is None:
            raise Refuse(f"the store has no mask: the extent along axis {axis} (and the tile count) is unknown", st)
        for c in conjuncts(st.mask):
            try:
                b = bound(c)
            except Unmatched:
                continue
            if b.index.axis == axis and b.index.plain and b.index.start is term.start and b.index.size == term.size:
                return b.limit
        raise Refuse(f"the store's mask has no `{term.start.ref} + range({term.size}) < bound` conjunct on axis "
                     f"{axis}", st)

    # --- rewriting -------------------------------------------------------------------------------
    def rewrite(self, ctx: PassContext, p: Plan) -> Operation:
        rw = ctx.rewriter
        b = ctx.builder(before=p.ret)
        nprog = b.get_num_programs("x", name="num_programs", reason="the persistent grid's size")
        tiles = p.factors[0]
        for f in p.factors[1:]:
            tiles = b.muli(tiles, f, name="num_tiles", reason="the number of tiles")
        attrs: dict[str, str | bool] = {MARKER: True, TILE_COUNT_ATTR: string_attr(p.count),
                                        "tt.flatten": self.flatten, "tt.warp_specialize": self.warp_specialize}
        loop = b.for_(p.pid.result, tiles, nprog, attributes=attrs, iv_name="tile", reason="the loop over tiles")
        anchor = loop.yield_op
        for op in reversed(p.moved):
            rw.move_into(op, anchor, reason="per-tile work")
            anchor = op
        for u in list(p.pid.result.uses):
            if u.op is not loop and loop.is_ancestor_of(u.op):
                rw.set_operand(u, loop.induction_var, "the tile this iteration computes")
        return loop


def _axis(op: Operation) -> str:
    m = re.search(r"tt\.get_program_id\s+(\w+)", op.text)
    return m.group(1) if m else "?"


def _depends_on(value: Value, root: Value, _seen: set | None = None) -> bool:
    """Whether ``value`` may be computed from ``root``: through its defining op (and the ops in its
    regions); a region's argument (an induction variable, a loop-carried value) through every
    operand of the op that owns the region and of the ops inside it."""
    seen = _seen if _seen is not None else set()
    if value is root:
        return True
    if value in seen:
        return False
    seen.add(value)
    if isinstance(value, BlockArgument):
        owner = value.owner_block.parent_op if value.owner_block is not None else None
        if owner is None or owner.name == "tt.func":
            return False
        return any(_depends_on(u.value, root, seen) for o in owner.walk() for u in o.operand_uses)
    d = value.defining_op
    if d is None:
        return False
    return any(_depends_on(u.value, root, seen) for o in d.walk() for u in o.operand_uses)


def _times_constant(value: Value) -> int | None:
    """``c`` when ``value`` is ``arith.muli`` of something and the constant ``c``."""
    d = value.defining_op
    if d is None or d.name != "arith.muli":
        return None
    for x in (d.rhs, d.lhs):
        if (c := int_constant(x)) is not None:
            return c
    return None


def _find_cdiv(limit: Value, size: int, ops: list) -> Value | None:
    """A scalar ``arith.divsi(arith.addi(limit, size-1), size)`` among ``ops``."""
    for op in ops:
        if op.name != "arith.divsi" or int_constant(op.rhs) != size:
            continue
        d = op.lhs.defining_op
        if d is None or d.name != "arith.addi" or d not in ops:
            continue
        if (d.lhs is limit and int_constant(d.rhs) == size - 1) or (d.rhs is limit and int_constant(d.lhs) == size - 1):
            return op.result
    return None


_ARG_OPS = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*"}


def _argument_expr(value: Value, fn: Operation, depth: int = 0) -> str | None:
    """``value`` as an expression of the function's arguments (``argN``) and integer constants, in
    the forms :func:`irlab.passkit.variant.tile_count` evaluates; None when it is computed otherwise."""
    if depth > 16:
        return None
    if isinstance(value, BlockArgument):
        entry = fn.regions[0].entry
        assert entry is not None   # the plan accepted a function body of one block
        args = entry.arguments
        return f"arg{args.index(value)}" if value in args else None
    if (c := int_constant(value)) is not None:
        return str(c)
    d = value.defining_op
    if d is None:
        return None
    if d.name in ("arith.extsi", "arith.index_cast"):
        return _argument_expr(d.src, fn, depth + 1)
    if d.name in _ARG_OPS or d.name == "arith.divsi":
        a, b = _argument_expr(d.lhs, fn, depth + 1), _argument_expr(d.rhs, fn, depth + 1)
        if a is None or b is None:
            return None
        return f"div({a}, {b})" if d.name == "arith.divsi" else f"({a} {_ARG_OPS[d.name]} {b})"
    return None


def _product(factors) -> str:
    return " * ".join(text for _, text in factors)
