"""descriptor-loads: feed a GEMM's K loop through TMA (tensor descriptors) instead of cp.async.

Why (sm_90): a ``tt.descriptor_load`` (one ``UTMALDG`` per tile, signalled through an mbarrier)
costs fewer registers and barriers than the ``cp.async`` copies of masked pointer loads, and
Hopper's warp specialization needs it; what it changed on the GEMM: ``docs/results/hypotheses.md``.

On TTIR (``Insert("descriptor-loads", stage="ttir", at="end", cleanup=("canonicalize",))``), in an
``scf.for`` from 0 by 1, a load of a loop-carried pointer (terms: :mod:`irlab.analysis.index_expr`)

    %p0 = tt.addptr(splat(%base), ((start0 + range) % BOUND0) * stride0 + range1)   (any order)
    %x  = tt.load %p, mask(range_k < EXTENT - iv * T), other 0      %p yielded as addptr(%p, T * stride_k)

becomes ``tt.descriptor_load`` of ``tt.make_tensor_descriptor %base, [BOUND0, EXTENT], [stride0,
1]`` at ``[start0, iv*T]`` (transposed for B). Along K the mask and TMA's zero fill agree. Along
the wrapped axis the pointer kernel reloads row ``(start+i) % BOUND`` where TMA reads zeros; that
row reaches only output row ``start+i`` of the dot, so the load must feed only operand a (b) of one
``tt.dot`` whose accumulator leaves the loop through single-use elementwise ops into a ``tt.store``
masked by ``start + range < BOUND`` on that axis. ``store=true`` also turns that store (mask
exactly ``(s0+r0 < B0) & (s1+r1 < B1)``) into ``tt.descriptor_store``; ``store_split`` 2 or 4
stores the BM x BN tile as that many BM x BN/n column subtiles (``tt.reshape`` to [BM, 2, W/2],
``tt.trans`` to [BM, W/2, 2], ``tt.split``, halved again for 4), each a TMA store at the tile's
column plus its offset through one descriptor of the subtile's box: the staging buffer in shared
memory shrinks with it (tutorial 09's epilogue subtiling). A subtile past N is clipped by TMA as
the whole tile's columns were; a subtile below TMA's 16-byte inner box is refused.

A fill ``other = -0.0`` is refused unless the epilogue makes every zero one value (``acc + c`` with
a constant ``c`` other than -0.0, ``max(acc, c > 0)``, ``min(acc, c < 0)``): TMA fills with +0.0,
and a product with a filled element is then a zero of the other sign, which can reach C (its
sign, or what a later division or min/max makes of it). Triton 3.6 writes ``other=-0.0`` as +0.0
in TTIR already; 3.9 keeps the sign.

Refused, with the reason: a TMA limit the tile does not meet or the IR does not prove
(:mod:`irlab.analysis.tma`: box sizes, base and row pitch alignment from ``tt.divisibility`` read
as Triton reads it, element types); a cache modifier, eviction policy or ``isVolatile`` a TMA copy
would not carry; a loop that writes global memory or synchronizes (TMA reads through the async
proxy, and irlab does no alias analysis); every shape the match above does not describe.

``own_coordinates`` recomputes each load's coordinate in the loop and gives the epilogue its own
offset math: Hopper warp specialization (3.6, 3.9) offsets both the load coordinate and the
store's ``make_range`` for its second consumer group, so one shared value is offset twice (half of
C unwritten; ``examples/ws_gemm.py`` shows it without irlab). Descriptors are built on the device:
the launch needs ``triton.set_allocator`` (irlab's GPU runner installs one).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from irlab.analysis import divisibility, tma
from irlab.analysis.accumulator import stored_accumulator
from irlab.analysis.index_expr import (Unmatched, float_constant, has_bound, int_constant, is_scalar, is_zero,
                                       tile_address, tile_bounds, tile_walk, walked_extent)
from irlab.ir import Effect, Operation, RewriteError, TensorType, Value, describe, effects
from irlab.ir.queries import derived_from
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register


class Refuse(Exception):
    """Why one load (or store) is left alone; becomes a note at that op."""


@dataclass
class Plan:
    """One load (or the store) to rewrite."""
    op: Operation
    base: Value               # the tensor's base pointer
    extents: tuple            # (Value, Value)
    pitch: Value              # the row stride (scalar, elements)
    coords: tuple             # per axis: ('val', Value) | ('int', n) | ('iv', T)
    block: tuple
    elem: str
    slot: int | None = None   # iter_arg index (loads)


@register
class DescriptorLoads(ModulePass):
    name: ClassVar[str] = "descriptor-loads"
    runs_on: ClassVar[tuple] = ("ttir",)
    summary: ClassVar[str] = "TTIR: turn a GEMM K loop's masked pointer loads into TMA descriptor loads (and optionally the epilogue store)"
    stage: ClassVar[str] = "ttir"
    cleanup: ClassVar[tuple] = ("canonicalize",)

    loads: bool = option(True, "rewrite the K loop's A/B loads into tt.descriptor_load")
    store: bool = option(False, "also rewrite the epilogue's masked tt.store into tt.descriptor_store (TMA store)")
    store_split: int = option(1, "with store: store the tile as this many column subtiles, each its own TMA store "
                                 "of a BM x BN/store_split box (epilogue subtiling, as tutorial 09's EPILOGUE_SUBTILE: "
                                 "a smaller staging buffer in shared memory)", choices=(1, 2, 4))
    own_coordinates: bool = option(True, "compute each load's tile coordinate in the loop when the kernel also uses "
                                         "that value elsewhere (works around Hopper warp specialization's split "
                                         "of the tile, which offsets a shared value twice)")

    def run(self, ctx: PassContext) -> None:
        m = ctx.module
        if ctx.refuse_unless_ttir():
            return
        if not sum(self.run_function(ctx, fn) for fn in m.functions):
            ctx.note("nothing to do: no tt.load in an scf.for" + (" and no tt.store" if self.store else ""))

    def run_function(self, ctx, fn) -> int:
        """Rewrites what it can in ``fn``; returns how many candidate ops it looked at."""
        hints = divisibility.arguments(fn)
        args = {a: hints.get(a.name, divisibility.NONE) for a in fn.regions[0].entry.arguments}
        loops = [op for op in fn.walk() if op.name == "scf.for"]
        seen = 0
        for loop in loops if self.loads else ():
            plans = []
            for ld in [o for o in loop.body.ops if o.name == "tt.load"]:
                seen += 1
                try:
                    plans.append(self.plan_load(loop, ld, args))
                except (Refuse, Unmatched, tma.Violation) as e:
                    ctx.note(f"load left as is: {e}", ld)
            shared: set = set()
            for p in plans:
                self.rewrite(ctx, p, loop, shared)
            if shared:
                try:
                    self.separate_epilogue(ctx.rewriter, loop, shared)
                except RewriteError as e:
                    ctx.warning(f"the epilogue's offsets stay shared with the loads' coordinates: {e}", loop)
        for st in [o for o in fn.walk() if o.name == "tt.store"] if self.store else ():
            seen += 1
            try:
                self.rewrite(ctx, self.plan_store(st, args))
            except (Refuse, Unmatched, tma.Violation) as e:
                ctx.note(f"store left as is: {e}", st)
        return seen

    def plan_load(self, loop, ld, args) -> Plan:
        rtype = ld.result.type
        if not isinstance(rtype, TensorType) or rtype.rank != 2:
            raise Refuse("only 2-D tile loads become descriptor loads")
        tma.check_copy_hints(ld)
        lb, step = int_constant(loop.lower_bound), int_constant(loop.step)
        if lb != 0 or step != 1:
            raise Refuse(f"the loop is not normalized (lower bound {lb}, step {step}; needs 0 and 1)")
        for op in (o for top in loop.body.ops for o in top.walk()):
            if effects(op) & (Effect.WRITE_GLOBAL | Effect.SYNC):
                raise Refuse(f"the loop {effects(op).describe()} at {describe(op)}: TMA reads through the async "
                             f"proxy, and irlab does no alias analysis")
        w = tile_walk(loop, ld.ptr)   # K is the walked axis
        k, other = (w.address.cols, w.address.rows) if w.axis == 1 else (w.address.rows, w.address.cols)
        if k.start is not None or k.wrap is not None:
            raise Refuse("the K axis has a start offset or a wrap; only range(0, BLOCK_K) is handled")
        if ld.mask is None:
            raise Refuse("the load has no mask: the extent of the K axis is unknown")
        extent_k = walked_extent(ld.mask, loop, w)
        if ld.other is not None and not is_zero(ld.other):
            raise Refuse("`other` is not zero (TMA fills out-of-bounds elements with zeros)")
        if other.wrap is None:
            raise Refuse("the non-K axis is neither wrapped (% bound) nor masked: its extent is unknown")
        for v in (other.wrap, other.start):
            if v is not None and not v.defined_outside(loop):
                raise Refuse(f"{v.ref} changes inside the loop")
        ext = (other.wrap, extent_k) if w.axis == 1 else (extent_k, other.wrap)
        check_tma(args, w.address.base, w.pitch, str(rtype.element), ext, rtype.shape)
        # rows (columns) past the wrap bound are zeros under TMA and wrapped rows before: the
        # accumulator's rows (columns) they feed must never be stored
        acc = stored_accumulator(loop, ld.result)
        if (acc.operand == "a") != (w.axis == 1):
            raise Refuse("the tile is not the dot's A operand (K along axis 1) or B operand (K along axis 0)")
        if (fill := float_constant(ld.other) if ld.other is not None else None) is not None and \
                math.copysign(1.0, fill) < 0 and not zero_sign_erased(acc):
            raise Refuse("`other` is -0.0 and TMA fills out-of-bounds elements with +0.0: a product with one of them "
                         "is a zero of the other sign, which can reach the stored accumulator (a zero's sign, and "
                         "what a later division or min/max makes of it); nothing in the epilogue makes every zero +0.0")
        if acc.store.mask is None:
            raise Refuse("the epilogue store has no mask: wrapped rows would be stored")
        if not has_bound(acc.store.mask, 1 - w.axis, other.start, other.wrap):
            raise Refuse(f"the epilogue store's mask has no `{other.start.ref if other.start else '0'} + range < "
                         f"{other.wrap.ref}` conjunct on output axis {1 - w.axis}; zero-filled rows could be stored")
        ocoord = ("val", other.start) if other.start is not None else ("int", 0)
        coords = (ocoord, ("iv", w.step)) if w.axis == 1 else (("iv", w.step), ocoord)
        return Plan(ld, w.address.base, ext, w.pitch, coords, tuple(rtype.shape), str(rtype.element), w.slot)

    def plan_store(self, st, args) -> Plan:
        vtype = st.value.type
        if not isinstance(vtype, TensorType) or vtype.rank != 2:
            raise Refuse("only 2-D tile stores become descriptor stores")
        tma.check_copy_hints(st)
        loop = st.enclosing("scf.for")
        if loop is not None and not (is_tile_loop(loop) and loop.enclosing("scf.for") is None):
            raise Refuse("the store is inside a loop (other than a persistent kernel's loop over tiles)")
        addr = tile_address(st.ptr)
        rows, cols = addr.rows, addr.cols
        if not cols.unit or rows.scale != 1 or len(rows.strides) != 1:
            raise Refuse("the pointer is not base + row * stride + column (contiguous rows)")
        if rows.wrap is not None or cols.wrap is not None:
            raise Refuse("a wrapped store index")
        if st.mask is None:
            raise Refuse("the store has no mask: its extents are unknown")
        ext = tile_bounds(st.mask, addr)
        rows_n, cols_n = vtype.shape
        if cols_n % self.store_split:
            raise Refuse(f"{cols_n} columns do not split into {self.store_split} subtiles")
        block = (rows_n, cols_n // self.store_split)
        check_tma(args, addr.base, rows.strides[0], str(vtype.element), ext, block)
        coords = tuple(("val", a.start) if a.start is not None else ("int", 0) for a in (rows, cols))
        return Plan(st, addr.base, ext, rows.strides[0], coords, block, str(vtype.element))

    def make_descriptor(self, ctx, anchor, p: Plan, stem: str):
        rw = ctx.rewriter
        pitch, one, desc = (rw.fresh_name(n, anchor) for n in (f"{stem}_pitch", "c1_i64", f"{stem}_desc"))
        block = ctx.services.tensordesc_block(p.block, p.elem)
        # one descriptor per program, not per tile: out of the loops over tiles it does not depend on
        while (outer := anchor.parent_op) is not None and is_tile_loop(outer) and \
                all(v.defined_outside(outer) for v in (p.base, p.pitch, *p.extents)):
            anchor = outer
        rw.insert_before(anchor, f"%{pitch} = arith.extsi {p.pitch.ref} : i32 to i64\n"
                                 f"%{one} = arith.constant 1 : i64\n"
                                 f"%{desc} = tt.make_tensor_descriptor {p.base.ref}, [{p.extents[0].ref}, "
                                 f"{p.extents[1].ref}], [%{pitch}, %{one}] : <{p.elem}>, <{block}>",
                         reason="TMA descriptor")
        return desc, f"tensor<{p.block[0]}x{p.block[1]}x{p.elem}>", block

    def coord_refs(self, rw, loop, anchor, p: Plan, shared: set | None = None):
        refs = []
        for kind, v in p.coords:
            if kind == "val":
                if loop is None:
                    refs.append(v.ref)
                    continue
                assert shared is not None   # a load's rewrite (loop given) always passes its shared set
                refs.append(self.own_coordinate(rw, loop, anchor, v, shared).ref)
                continue
            cst = rw.fresh_name(f"c{v}_i32", anchor)
            rw.insert_before(loop or anchor, f"%{cst} = arith.constant {v} : i32")
            if kind == "int":
                refs.append(f"%{cst}")
                continue
            off = rw.fresh_name("k_off", anchor)   # iv * T
            rw.insert_before(anchor, f"%{off} = arith.muli {loop.induction_var.ref}, %{cst} : i32")
            refs.append(f"%{off}")
        return refs

    def own_coordinate(self, rw, loop, anchor, v, shared: set):
        """The load's coordinate as its own value next to the load (see ``own_coordinates``)."""
        d = v.defining_op
        if not self.own_coordinates or d is None or d.regions or len(d.results) != 1 or d.dialect != "arith" \
                or not v.defined_outside(loop) or not is_scalar(v):
            return v
        shared.add(v)
        return rw.clone(d, before=anchor, reason="the load's coordinate, not shared with the epilogue").result

    def separate_epilogue(self, rw, loop, shared: set) -> None:
        """Give the ops after ``loop`` their own copies of the pure pre-loop math derived from a
        coordinate the loads now recompute: with only the loop's and the epilogue's copies left,
        neither dominates the other, so Triton's CSE cannot merge them back into one value."""
        block = loop.parent
        at = block.ops.index(loop)
        mapping: dict[Value, Value] = {}
        derived, anchor = derived_from(shared, block.ops[:at]), [loop]

        def own(value):
            d = value.defining_op
            if value in mapping or d is None or not (value in shared or d in derived):
                return mapping.get(value, value)
            for u in d.operand_uses:
                own(u.value)
            anchor[0] = rw.clone(d, after=anchor[0], mapping=mapping,
                                 reason="the epilogue's own offsets (not shared with the loads' coordinates)")
            return mapping[value]

        for op in (o for top in block.ops[at + 1:] for o in list(top.walk())):
            for u in list(op.operand_uses):
                if (new := own(u.value)) is not u.value:
                    rw.set_operand(u, new, "the epilogue's own offsets")

    def rewrite(self, ctx, p: Plan, loop=None, shared: set | None = None) -> None:
        """Replace the load (``loop`` given) or the epilogue store of ``p`` by its descriptor op."""
        rw, op = ctx.rewriter, p.op
        stem = "c" if loop is None else op.result.name.split("_")[0] if op.result.name[0].isalpha() else "t"
        try:
            desc, tile, block = self.make_descriptor(ctx, loop or op, p, stem)
            refs = self.coord_refs(rw, loop, op, p, shared)
            at = ", ".join(refs)
            if loop is None:
                row, col = refs
                for value, offset in self.subtiles(rw, op, op.value, p):
                    if offset:
                        cst, moved = rw.fresh_name(f"c{offset}_i32", op), rw.fresh_name("col", op)
                        rw.insert_before(op, f"%{cst} = arith.constant {offset} : i32\n"
                                             f"%{moved} = arith.addi {col}, %{cst} : i32", reason="the subtile's column")
                    rw.insert_before(op, f"tt.descriptor_store %{desc}[{row}, {col if not offset else '%' + moved}], "
                                         f"{value} : !tt.tensordesc<{block}>, {tile}", reason="TMA store")
            else:
                new = rw.insert_before(op, f"%{rw.fresh_name(f'{stem}_tma', op)} = tt.descriptor_load %{desc}[{at}] "
                                           f": !tt.tensordesc<{block}> -> {tile}", reason="TMA load")[0]
                rw.replace_all_uses(op.result, new.result, reason="TMA load")
            rw.erase(op, "replaced by a descriptor " + ("store" if loop is None else "load"))
        except RewriteError as e:
            ctx.warning(f"could not rewrite: {e}", op)
            return
        over = f"descriptor over [{p.extents[0].ref}, {p.extents[1].ref}]"
        if loop is None:
            parts = f" as {self.store_split} subtiles of {p.block[0]}x{p.block[1]}" if self.store_split > 1 else ""
            ctx.remark(f"stores the {p.block[0]}x{p.block[1] * self.store_split} {p.elem} tile through TMA{parts}: "
                       f"{over}", op)
            return
        # the pointer iter_arg is now dead: yield it unchanged so canonicalize drops it
        ptr, yld = loop.iter_args[p.slot], loop.body.ops[-1]
        adv = yld.values[p.slot].defining_op
        if not loop.results[p.slot].users and all(u is adv for u in ptr.users):
            rw.set_operand(yld.operand_use("values", p.slot), ptr, "the pointer is no longer used")
        ctx.remark(f"loads {p.block[0]}x{p.block[1]} {p.elem} tiles through TMA: {over}, coordinates "
                   f"[{', '.join(_coord_text(c) for c in p.coords)}]", op)


    def subtiles(self, rw, anchor, value, p: Plan) -> list[tuple[str, int]]:
        """``(value ref, first column)`` of each of the ``store_split`` column subtiles of the stored
        tile, in column order: halves by reshape [BM, 2, W/2] -> trans [BM, W/2, 2] -> split, then
        halves of the halves."""
        parts = [(value.ref, 0, p.block[1] * self.store_split)]
        while parts[0][2] > p.block[1]:
            halves = []
            for ref, first, width in parts:
                half, rows, elem = width // 2, p.block[0], p.elem
                r, t, lo, hi = (rw.fresh_name(n, anchor) for n in ("sub", "sub_t", "sub_lo", "sub_hi"))
                rw.insert_before(anchor, f"%{r} = tt.reshape {ref} : tensor<{rows}x{width}x{elem}> -> "
                                         f"tensor<{rows}x2x{half}x{elem}>\n"
                                         f"%{t} = tt.trans %{r} {{order = array<i32: 0, 2, 1>}} : "
                                         f"tensor<{rows}x2x{half}x{elem}> -> tensor<{rows}x{half}x2x{elem}>\n"
                                         f"%{lo}, %{hi} = tt.split %{t} : tensor<{rows}x{half}x2x{elem}> -> "
                                         f"tensor<{rows}x{half}x{elem}>", reason="epilogue subtiles")
                halves += [(f"%{lo}", first, half), (f"%{hi}", first + half, half)]
            parts = halves
        return [(ref, first) for ref, first, _ in parts]


def zero_sign_erased(acc) -> bool:
    """Whether the accumulator's epilogue makes every zero +0.0 before the store, so that filling
    with +0.0 where the kernel filled with -0.0 cannot show. The fill changes dot products only in
    the sign of zeros (a product with a zero is a zero, or NaN either way; adding a zero leaves a
    non-zero sum as it is); the epilogue's elementwise ops keep "equal up to the sign of zero"
    (a cast, a product with a uniform value, min/max), and ``x + c`` with a constant ``c`` other
    than -0.0, ``max(x, c)`` with ``c > 0`` or ``min(x, c)`` with ``c < 0`` gives the same value for
    +0.0 and -0.0."""
    for op in acc.chain:
        c = next((float_constant(v) for v in op.operands if float_constant(v) is not None), None)
        if c is None or c != c:
            continue
        if op.name == "arith.addf" and not (c == 0.0 and math.copysign(1.0, c) < 0):
            return True
        if op.name in ("arith.maxnumf", "arith.maximumf") and c > 0:
            return True
        if op.name in ("arith.minnumf", "arith.minimumf") and c < 0:
            return True
    return False


def is_tile_loop(op) -> bool:
    """An ``scf.for`` from the program id in steps of the number of programs: a persistent kernel's
    loop over its tiles (what ``persistent-tiles`` writes). Each iteration computes one tile, as one
    program of the tile-per-program kernel did."""
    if op.name != "scf.for":
        return False
    lb, step = op.lower_bound.defining_op, op.step.defining_op
    return lb is not None and lb.name == "tt.get_program_id" and step is not None and \
        step.name == "tt.get_num_programs"


def check_tma(args, base, pitch, elem, extents, shape) -> None:
    for v in (pitch, *extents):
        if str(v.type) != "i32":
            raise Refuse(f"{v.ref} is {v.type}; descriptors take i32 extents and an i32 row pitch here")
    tma.check_descriptor(base, pitch, elem, shape, args)


def _coord_text(c) -> str:
    kind, v = c
    return v.ref if kind == "val" else str(v) if kind == "int" else f"iv*{v}"
