"""descriptor-loads: feed a GEMM's K loop through TMA (tensor descriptors) instead of cp.async.

Hypothesis (H200/H100, sm_90): the tutorial GEMM loads its A and B tiles with masked pointer
loads, which Triton's pipeliner turns into ``cp.async`` (``LDGSTS.128``): every thread computes
and holds 64-bit addresses and predicates for 12 copies per K step (207 registers at
128x256x64/8 warps), and two CTA-wide barriers per K step order the copies against the wgmmas.
A tensor descriptor load (``tt.descriptor_load``) is pipelined by Triton as one ``UTMALDG`` per
tile signalled through an mbarrier: no per-thread addresses, fewer registers, bulk copies that the
copy engine issues. It is also the only kind of load Hopper's automatic warp specialization
accepts (``loop-attributes{warp_specialize=true}`` with ``num_warps=4``; with pointer loads that
pass asserts in Triton 3.6). Public Triton measurements on H100 put fp16 TMA loads 13% above
pointer loads for the persistent tutorial kernel; whether the non-persistent tutorial kernel gains
is what the timing must show.

What it matches, on TTIR (``Insert("descriptor-loads", stage="ttir", at="end",
cleanup=("canonicalize",))``), in an ``scf.for`` with lower bound 0 and step 1:

    %p0 = tt.addptr(splat(%base), ((start0 + range) % BOUND0) * stride0 + range1)   (any order)
    %x  = tt.load %p, mask(range_k < EXTENT - iv * T), other 0      %p: iter_arg, yielded as
                                                                    tt.addptr(%p, T * stride_k)

The axis the pointer advances along (K) must be masked exactly by ``range < EXTENT - iv*T`` and
start at 0; the other axis must be wrapped (``% BOUND``, the tutorial's ``offs_am % M``), which
gives the descriptor its extent. The load becomes ``tt.descriptor_load`` of
``tt.make_tensor_descriptor %base, [extent0, extent1], [stride0, 1]`` at
``[start0, iv*T]`` (or ``[iv*T, start1]``). The innermost axis must have stride 1; the base must be
16-byte aligned and the row pitch a multiple of 16 bytes (from ``tt.divisibility``).

Why the output is unchanged: along K the mask and TMA's out-of-bounds zero fill agree element by
element. Along the wrapped axis the pointer kernel reloads row ``(start+i) % BOUND`` where TMA
returns zeros for ``start+i >= BOUND``; such a row of A (column of B) reaches only the output
row (column) ``start+i`` of the dot, so the pass requires that the load feeds only operand a (b)
of one ``tt.dot`` in the loop, whose accumulator leaves the loop only through single-use
elementwise ops into a ``tt.store`` whose mask has the conjunct ``start + range < BOUND`` on
that output axis (same SSA values). Anything else is refused with the reason.

``store=true`` also turns that epilogue ``tt.store`` (mask exactly ``(s0+r0 < B0) & (s1+r1 <
B1)``, pointer ``base + (s0+r0)*stride + (s1+r1)``) into ``tt.descriptor_store``: TMA clips
out-of-bounds rows/columns exactly where the mask did.

Each load's tile coordinate is computed inside the loop, next to the load, and the epilogue gets
its own copy of the offset math derived from it (``own_coordinates``, on by default). Hopper
warp specialization (Triton 3.6 and 3.9) splits the tile's rows between two consumer warp groups
by offsetting both the load coordinate and the store's ``make_range``; when the two share one
value, the second group's rows are offset twice and half of C is never written (measured on an
H200; ``benchmarks/device/ws_gemm.py``'s HOISTED kernel shows it without irlab).

The kernel then creates its descriptors on the device, which needs a global scratch buffer at
launch (``triton.set_allocator``); irlab's GPU runner installs one when a kernel asks for it.

Refusals (notes): not TTIR, loop not normalized, a load that is not loop-carried, an unmasked or
differently masked K axis, a non-zero ``other``, an axis with neither wrap nor mask, a non-unit
innermost stride, unknown alignment, a load with other users than one dot, an accumulator that
is reduced, stored atomically, or stored without the bound on the wrapped axis.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from irlab.bridge import compat
from irlab.ir import BlockArgument, Operation, RewriteError, TensorType, describe, is_pure
from irlab.ir.queries import constant_value, is_elementwise
from irlab.pass_api import ModulePass, PassContext, option
from irlab.registry import register

ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "f8E4M3FN": 1, "f8E5M2": 1, "i16": 2, "i32": 4}
EPILOGUE_OPS = ("arith.truncf", "arith.extf", "arith.mulf", "arith.addf", "arith.maxnumf", "arith.maximumf",
                "arith.minnumf", "arith.minimumf", "tt.fp_to_fp")


class Refuse(Exception):
    """Why one load (or store) is left alone; becomes a note at that op."""


# --- uniform values ------------------------------------------------------------------------------
def int_constant(value):
    """The integer a scalar ``arith.constant`` (or a splat integer dense) holds, else None."""
    d = value.defining_op
    if d is None or d.name != "arith.constant":
        return None
    v = constant_value(d)
    v = getattr(v, "splat", v)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def uniform(value):
    """A tensor equal everywhere: ('int', n) for an integer constant, ('val', scalar) for a splat
    of a scalar value; None otherwise. Scalars answer the same way."""
    n = int_constant(value)
    if n is not None:
        return ("int", n)
    d = value.defining_op
    if d is not None and d.name == "tt.splat":
        inner = d.src
        n = int_constant(inner)
        return ("int", n) if n is not None else ("val", inner)
    if not isinstance(value.type, TensorType):
        return ("val", value)
    return None


def strip_broadcast(value):
    d = value.defining_op
    while d is not None and d.name == "tt.broadcast":
        value = d.src
        d = value.defining_op
    return value


# --- pointer decomposition -----------------------------------------------------------------------
@dataclass
class Axis:
    """One axis of a 2-D offset: ``((start + range(n)) [% wrap]) * stride``."""
    axis: int
    n: int
    start: object = None          # scalar Value or None (0)
    wrap: object = None           # scalar Value (the % bound) or None
    scale: int = 1                # constant part of the stride
    stride: list = field(default_factory=list)   # scalar Values multiplying the stride

    @property
    def unit(self) -> bool:
        return self.scale == 1 and not self.stride


def axis_term(value, what: str) -> Axis:
    """Decompose a rank-2 integer tensor that varies along one axis."""
    scale, stride = 1, []
    value = strip_broadcast(value)
    axis = None
    rank2 = isinstance(value.type, TensorType) and value.type.rank == 2
    for _ in range(16):
        d = value.defining_op
        if d is None:
            raise Refuse(f"{what}: {value.ref} is a block argument, not an index expression")
        if d.name == "arith.muli":
            u0, u1 = uniform(d.lhs), uniform(d.rhs)
            if u1 is not None and not _is_scalar(d.lhs):
                u, value = u1, d.lhs
            elif u0 is not None and not _is_scalar(d.rhs):
                u, value = u0, d.rhs
            else:
                raise Refuse(f"{what}: {describe(d)} multiplies two varying tensors")
            if u[0] == "int":
                scale *= u[1]
            else:
                stride.append(u[1])
            value = strip_broadcast(value)
            continue
        if d.name == "tt.expand_dims" and rank2 and axis is None:
            axis = 1 - int(d.attr("axis"))
            value = d.src
            continue
        break
    if axis is None:
        if isinstance(value.type, TensorType) and value.type.rank == 1:
            axis = 0
        else:
            raise Refuse(f"{what}: {value.ref} ({describe(value.defining_op)}) is not an expanded index vector")
    wrap = start = None
    d = value.defining_op
    if d is not None and d.name == "arith.remsi":
        u = uniform(d.rhs)
        if u is None or u[0] != "val":
            raise Refuse(f"{what}: {describe(d)} wraps by something other than a scalar bound")
        wrap, value = u[1], d.lhs
        d = value.defining_op
    if d is not None and d.name == "arith.addi":
        u0, u1 = uniform(d.lhs), uniform(d.rhs)
        if u0 is not None and u0[0] == "val":
            start, value = u0[1], d.rhs
        elif u1 is not None and u1[0] == "val":
            start, value = u1[1], d.lhs
        else:
            raise Refuse(f"{what}: {describe(d)} is not start + range")
        d = value.defining_op
    if d is None or d.name != "tt.make_range" or int(d.attr("start")) != 0:
        raise Refuse(f"{what}: {value.ref} is not tt.make_range from 0")
    return Axis(axis, int(d.attr("end")), start, wrap, scale, stride)


def _is_scalar(value) -> bool:
    return not isinstance(value.type, TensorType)


def offset_terms(value, what: str) -> list[Axis]:
    """Flatten a sum of per-axis index terms."""
    value = strip_broadcast(value)
    d = value.defining_op
    if d is not None and d.name == "arith.addi" and uniform(d.lhs) is None and uniform(d.rhs) is None:
        return offset_terms(d.lhs, what) + offset_terms(d.rhs, what)
    return [axis_term(value, what)]


def pointer_terms(value, what: str):
    """``(base pointer, [Axis, ...])`` of ``addptr(... addptr(splat(base), off) ..., off)``."""
    terms = []
    for _ in range(8):
        value = strip_broadcast(value)
        d = value.defining_op
        if d is None:
            break
        if d.name == "tt.addptr":
            terms += offset_terms(d.offset, what)
            value = d.ptr
            continue
        if d.name == "tt.splat":
            return d.src, terms
        break
    raise Refuse(f"{what}: the pointer is not splat(base) plus index terms")


def two_axes(terms: list[Axis], what: str) -> tuple[Axis, Axis]:
    by_axis = {}
    for t in terms:
        if t.axis in by_axis:
            raise Refuse(f"{what}: two index terms vary along axis {t.axis}")
        by_axis[t.axis] = t
    if set(by_axis) != {0, 1}:
        raise Refuse(f"{what}: the offsets do not cover both axes of the tile")
    return by_axis[0], by_axis[1]


def mask_conjuncts(value) -> list:
    value = strip_broadcast(value)
    d = value.defining_op
    if d is not None and d.name == "arith.andi":
        return mask_conjuncts(d.lhs) + mask_conjuncts(d.rhs)
    return [value]


def cmpi_slt(value, what: str):
    """``(Axis of the lhs, rhs Value)`` of ``arith.cmpi slt, <index term>, splat(rhs)``."""
    d = strip_broadcast(value).defining_op
    if d is None or d.name != "arith.cmpi" or d.predicate != "slt":
        raise Refuse(f"{what}: the mask is not `arith.cmpi slt` of an index against a bound")
    u = uniform(d.rhs)
    if u is None or u[0] != "val":
        raise Refuse(f"{what}: {describe(d)} compares against something other than a scalar bound")
    return axis_term(d.lhs, what), u[1]


def is_zero(value) -> bool:
    d = value.defining_op
    if d is None or d.name != "arith.constant":
        return False
    v = getattr(constant_value(d), "splat", None)
    return v is not None and float(v) == 0.0


# --- the pass ------------------------------------------------------------------------------------
@dataclass
class Plan:
    """One load (or the store) to rewrite."""
    op: Operation
    base: object
    extents: tuple            # (Value, Value)
    stride0: object           # scalar Value or int (elements)
    coords: tuple             # per axis: ('val', Value) | ('int', n) | ('iv', T)
    block: tuple
    elem: str
    slot: int | None = None   # iter_arg index (loads)


@register
@dataclass(frozen=True)
class DescriptorLoads(ModulePass):
    name: ClassVar[str] = "descriptor-loads"
    summary: ClassVar[str] = "TTIR: turn a GEMM K loop's masked pointer loads into TMA descriptor loads (and optionally the epilogue store)"
    stage: ClassVar[str] = "ttir"
    cleanup: ClassVar[tuple] = ("canonicalize",)

    loads: bool = option(True, "rewrite the K loop's A/B loads into tt.descriptor_load")
    store: bool = option(False, "also rewrite the epilogue's masked tt.store into tt.descriptor_store (TMA store)")
    own_coordinates: bool = option(True, "compute each load's tile coordinate in the loop when the kernel also uses "
                                         "that value elsewhere (works around Hopper warp specialization's split "
                                         "of the tile, which offsets a shared value twice)")

    def run(self, ctx: PassContext) -> None:
        m = ctx.module
        if m.num_warps is not None or m.layouts():
            ctx.note("refused: descriptor-loads runs on TTIR (Insert(..., stage='ttir', at='end')); this module "
                     "already has layouts")
            return
        seen = 0
        for fn in m.functions:
            seen += self.run_function(ctx, fn)
        if not seen:
            ctx.note("nothing to do: no tt.load in an scf.for" + (" and no tt.store" if self.store else ""))

    # ---------------------------------------------------------------------------------------------
    def run_function(self, ctx, fn) -> int:
        """Rewrites what it can in ``fn``; returns how many candidate ops it looked at."""
        divis = {name: int(a["tt.divisibility"]) for name, a in fn.argument_attributes().items()
                 if "tt.divisibility" in a}
        loops = [op for op in fn.walk() if op.name == "scf.for"]
        seen = 0
        for loop in loops:
            if self.loads:
                plans = []
                for ld in [o for o in loop.body.ops if o.name == "tt.load"]:
                    seen += 1
                    try:
                        plans.append(self.plan_load(loop, ld, divis))
                    except Refuse as e:
                        ctx.note(f"load left as is: {e}", ld)
                shared: set = set()
                for p in plans:
                    self.rewrite_load(ctx, loop, p, shared)
                if shared:
                    try:
                        self.separate_epilogue(ctx.rewriter, loop, shared)
                    except RewriteError as e:
                        ctx.warning(f"the epilogue's offsets stay shared with the loads' coordinates: {e}", loop)
        if self.store:
            for st in [o for o in fn.walk() if o.name == "tt.store"]:
                seen += 1
                try:
                    plan = self.plan_store(st, divis)
                except Refuse as e:
                    ctx.note(f"store left as is: {e}", st)
                    continue
                self.rewrite_store(ctx, plan)
        return seen

    # ---------------------------------------------------------------------------------------------
    def plan_load(self, loop, ld, divis) -> Plan:
        what = describe(ld)
        rtype = ld.result.type
        if not isinstance(rtype, TensorType) or rtype.rank != 2:
            raise Refuse("only 2-D tile loads become descriptor loads")
        lb, step = int_constant(loop.lower_bound), int_constant(loop.step)
        if lb != 0 or step != 1:
            raise Refuse(f"the loop is not normalized (lower bound {lb}, step {step}; needs 0 and 1)")
        ptr = ld.ptr
        if not isinstance(ptr, BlockArgument) or ptr not in loop.iter_args:
            raise Refuse("the pointer is not loop-carried (a tt.addptr iter_arg of the K loop)")
        slot = loop.iter_args.index(ptr)
        init = loop.init_args[slot]
        yielded = loop.body.ops[-1].values[slot]
        yd = yielded.defining_op
        if yd is None or yd.name != "tt.addptr" or yd.ptr is not ptr:
            raise Refuse("the loop does not advance the pointer by tt.addptr of itself")
        step_u = uniform(yd.offset)
        if step_u is None:
            raise Refuse(f"the pointer advances by a non-uniform offset ({describe(yd)})")
        base, terms = pointer_terms(init, what)
        a0, a1 = two_axes(terms, what)
        if not a1.unit:
            raise Refuse("the innermost axis has a stride other than 1 (TMA needs a contiguous last dimension)")
        if a0.scale != 1 or len(a0.stride) != 1:
            raise Refuse("the outer axis's stride is not one scalar argument")
        if (a0.n, a1.n) != tuple(rtype.shape):
            raise Refuse(f"the index ranges ({a0.n}x{a1.n}) do not span the tile {rtype.shape}")
        stride0 = a0.stride[0]
        # which axis the loop advances along, and by how many elements of that axis (T)
        if step_u[0] == "int":
            k_axis, T = 1, step_u[1]
        else:
            sd = step_u[1].defining_op
            T = None
            if sd is not None and sd.name == "arith.muli":
                for x, y in ((sd.lhs, sd.rhs), (sd.rhs, sd.lhs)):
                    if x is stride0 and int_constant(y) is not None:
                        T = int_constant(y)
            if T is None:
                raise Refuse(f"the per-iteration advance {step_u[1].ref} is not a constant times the row stride")
            k_axis = 0
        k, other = (a1, a0) if k_axis == 1 else (a0, a1)
        if k.start is not None or k.wrap is not None:
            raise Refuse("the K axis has a start offset or a wrap; only range(0, BLOCK_K) is handled")
        # the K axis's extent, from the mask `range_k < EXTENT - iv*T`
        if ld.mask is None:
            raise Refuse("the load has no mask: the extent of the K axis is unknown")
        conj = mask_conjuncts(ld.mask)
        if len(conj) != 1:
            raise Refuse("the mask has several conjuncts; only the K bound is handled")
        lhs, rhs = cmpi_slt(conj[0], what)
        if lhs.axis != k_axis or not lhs.unit or lhs.start is not None or lhs.wrap is not None or lhs.n != k.n:
            raise Refuse("the mask does not bound the K axis's range")
        rd = rhs.defining_op
        extent_k = None
        if rd is not None and rd.name == "arith.subi":
            md = rd.rhs.defining_op
            if md is not None and md.name == "arith.muli":
                for x, y in ((md.lhs, md.rhs), (md.rhs, md.lhs)):
                    if x is loop.induction_var and int_constant(y) == T:
                        extent_k = rd.lhs
        if extent_k is None:
            raise Refuse(f"the K mask bound {rhs.ref} is not EXTENT - iv * {T}")
        if not extent_k.defined_outside(loop):
            raise Refuse("the K extent changes inside the loop")
        if ld.other is not None and not is_zero(ld.other):
            raise Refuse("`other` is not zero (TMA fills out-of-bounds elements with zeros)")
        if other.wrap is None:
            raise Refuse("the non-K axis is neither wrapped (% bound) nor masked: its extent is unknown")
        for v in (other.wrap, other.start):
            if v is not None and not v.defined_outside(loop):
                raise Refuse(f"{v.ref} changes inside the loop")
        elem = str(rtype.element)
        ext = (other.wrap, extent_k) if k_axis == 1 else (extent_k, other.wrap)
        self.check_alignment(base, stride0, elem, divis, ext)
        self.check_wrapped_rows_unobserved(loop, ld, k_axis, other)
        ocoord = ("val", other.start) if other.start is not None else ("int", 0)
        coords = (ocoord, ("iv", T)) if k_axis == 1 else (("iv", T), ocoord)
        return Plan(ld, base, ext, stride0, coords, tuple(rtype.shape), elem, slot)

    def check_alignment(self, base, stride0, elem, divis, extents=()):
        for v in (stride0, *extents):
            if str(v.type) != "i32":
                raise Refuse(f"{v.ref} is {v.type}; descriptors take i32 extents and an i32 row pitch here")
        nbytes = ELEM_BYTES.get(elem)
        if nbytes is None:
            raise Refuse(f"element type {elem} is not handled")
        if not isinstance(base, BlockArgument) or divis.get(base.name, 1) < 16:
            raise Refuse(f"the base pointer {base.ref} is not known to be 16-byte aligned (tt.divisibility)")
        if not (isinstance(stride0, BlockArgument) and divis.get(stride0.name, 1) * nbytes % 16 == 0):
            raise Refuse(f"the row pitch {stride0.ref} is not known to be a multiple of 16 bytes")

    def check_wrapped_rows_unobserved(self, loop, ld, k_axis, other):
        """Rows (columns) past the wrap bound are zeros under TMA and wrapped rows before: the
        accumulator's rows (columns) they feed must never be stored."""
        users = ld.result.users
        if len(users) != 1 or users[0].name != "tt.dot" or users[0].parent is not loop.body:
            raise Refuse("the loaded tile has other users than one tt.dot in the loop")
        dot = users[0]
        operand = "a" if dot.a is ld.result else "b" if dot.b is ld.result else None
        if operand is None or (operand == "a") != (k_axis == 1) or dot.a is dot.b:
            raise Refuse("the tile is not the dot's A operand (K along axis 1) or B operand (K along axis 0)")
        out_axis = 0 if operand == "a" else 1
        acc = dot.c
        if not isinstance(acc, BlockArgument) or acc not in loop.iter_args:
            raise Refuse("the dot's accumulator is not loop-carried")
        slot = loop.iter_args.index(acc)
        if loop.body.ops[-1].values[slot] is not dot.result or dot.result.users != [loop.body.ops[-1]]:
            raise Refuse("the dot's result has other users than the loop's yield")
        if any(u is not dot for u in acc.users):
            raise Refuse("the accumulator is read elsewhere in the loop")
        value = loop.results[slot]
        for _ in range(8):
            users = value.users
            if len(users) != 1:
                raise Refuse(f"the loop's accumulator {value.ref} has {len(users)} users after the loop")
            u = users[0]
            if u.name == "tt.store" and u.value is value:
                break
            if u.name in EPILOGUE_OPS and is_elementwise(u) and all(
                    w is value or uniform(w) is not None for w in u.operands):
                value = u.result
                continue
            raise Refuse(f"the accumulator reaches {describe(u)}, not only elementwise ops and a tt.store")
        else:
            raise Refuse("the accumulator's epilogue chain is too long")
        st = users[0]
        if st.mask is None:
            raise Refuse("the epilogue store has no mask: wrapped rows would be stored")
        for c in mask_conjuncts(st.mask):
            try:
                lhs, rhs = cmpi_slt(c, "store mask")
            except Refuse:
                continue
            if lhs.axis == out_axis and lhs.unit and lhs.wrap is None and lhs.start is other.start \
                    and rhs is other.wrap:
                return
        raise Refuse(f"the epilogue store's mask has no `{other.start.ref if other.start else '0'} + range < "
                     f"{other.wrap.ref}` conjunct on output axis {out_axis}; zero-filled rows could be stored")

    # ---------------------------------------------------------------------------------------------
    def plan_store(self, st, divis) -> Plan:
        what = describe(st)
        vtype = st.value.type
        if not isinstance(vtype, TensorType) or vtype.rank != 2:
            raise Refuse("only 2-D tile stores become descriptor stores")
        if st.enclosing("scf.for") is not None:
            raise Refuse("the store is inside a loop")
        base, terms = pointer_terms(st.ptr, what)
        a0, a1 = two_axes(terms, what)
        if not a1.unit or a0.scale != 1 or len(a0.stride) != 1:
            raise Refuse("the pointer is not base + row * stride + column (contiguous rows)")
        if a0.wrap is not None or a1.wrap is not None:
            raise Refuse("a wrapped store index")
        if (a0.n, a1.n) != tuple(vtype.shape):
            raise Refuse("the index ranges do not span the tile")
        if st.mask is None:
            raise Refuse("the store has no mask: its extents are unknown")
        bounds = {}
        for c in mask_conjuncts(st.mask):
            lhs, rhs = cmpi_slt(c, what)
            ref = a0 if lhs.axis == 0 else a1
            if lhs.axis in bounds or not lhs.unit or lhs.wrap is not None or lhs.start is not ref.start:
                raise Refuse("the mask is not exactly `start + range < bound` on each axis")
            bounds[lhs.axis] = rhs
        if set(bounds) != {0, 1}:
            raise Refuse("the mask does not bound both axes")
        elem = str(vtype.element)
        self.check_alignment(base, a0.stride[0], elem, divis, (bounds[0], bounds[1]))
        coords = tuple(("val", a.start) if a.start is not None else ("int", 0) for a in (a0, a1))
        return Plan(st, base, (bounds[0], bounds[1]), a0.stride[0], coords, tuple(vtype.shape), elem)

    # ---------------------------------------------------------------------------------------------
    def make_descriptor(self, rw, anchor, p: Plan, stem: str):
        pitch = rw.fresh_name(f"{stem}_pitch", anchor)
        one = rw.fresh_name("c1_i64", anchor)
        desc = rw.fresh_name(f"{stem}_desc", anchor)
        tile = f"tensor<{p.block[0]}x{p.block[1]}x{p.elem}>"
        block = compat.tensordesc_block(p.block, p.elem)
        rw.insert_before(anchor, f"%{pitch} = arith.extsi {p.stride0.ref} : i32 to i64\n"
                                 f"%{one} = arith.constant 1 : i64\n"
                                 f"%{desc} = tt.make_tensor_descriptor {p.base.ref}, [{p.extents[0].ref}, "
                                 f"{p.extents[1].ref}], [%{pitch}, %{one}] : <{p.elem}>, <{block}>",
                         reason="TMA descriptor")
        return desc, tile, block

    def coord_refs(self, rw, loop, anchor, p: Plan, shared: set | None = None):
        refs = []
        for kind, v in p.coords:
            if kind == "val":
                refs.append(self.own_coordinate(rw, loop, anchor, v, shared).ref if loop is not None else v.ref)
            elif kind == "int":
                name = rw.fresh_name(f"c{v}_i32", anchor)
                rw.insert_before(loop or anchor, f"%{name} = arith.constant {v} : i32")
                refs.append(f"%{name}")
            else:   # iv * T
                cst = rw.fresh_name(f"c{v}_i32", anchor)
                rw.insert_before(loop, f"%{cst} = arith.constant {v} : i32")
                off = rw.fresh_name("k_off", anchor)
                rw.insert_before(anchor, f"%{off} = arith.muli {loop.induction_var.ref}, %{cst} : i32")
                refs.append(f"%{off}")
        return refs

    def own_coordinate(self, rw, loop, anchor, v, shared: set):
        """The load's tile coordinate as a value of its own, computed in the loop next to the load,
        when it is a scalar arith result from before the loop (the tile's row offset, which also
        starts the epilogue's store addresses). Hopper warp specialization (Triton 3.6 and
        3.9) splits the tile's rows between two consumer warp groups by adding the second group's
        row offset to the descriptor load's coordinate value *and* to the ``make_range`` of the
        store addresses; when both derive from one value, the second group's half of C is stored
        BLOCK_M/2 rows too far (measured on an H200: half of C never written;
        ``benchmarks/device/ws_gemm.py``'s HOISTED kernel shows it without irlab). Recomputing
        the coordinate (one scalar op per K step) keeps the two apart."""
        if not self.own_coordinates:
            return v
        d = v.defining_op
        if d is None or d.regions or len(d.results) != 1 or d.dialect != "arith" \
                or not v.defined_outside(loop) or not _is_scalar(v):
            return v
        shared.add(v)
        return rw.clone(d, before=anchor, reason="the load's coordinate, not shared with the epilogue").result

    def separate_epilogue(self, rw, loop, shared: set) -> None:
        """Give the ops after ``loop`` their own copies of the pure scalar/tensor math before the
        loop that derives from a coordinate the loads now recompute (the store's row and column
        offsets): with only the loop's copy and the epilogue's copy left (the pre-loop one dies with
        the pointer math), neither dominates the other, so Triton's CSE cannot merge them back
        into one shared value."""
        block = loop.parent
        at = block.ops.index(loop)
        before, after = set(block.ops[:at]), block.ops[at + 1:]
        derived: dict = {}

        def derives(op) -> bool:
            if op not in derived:
                derived[op] = False   # cycles cannot occur in a block; this guards recursion
                derived[op] = op in before and not op.regions and is_pure(op) and any(
                    u.value in shared or (u.value.defining_op is not None and derives(u.value.defining_op))
                    for u in op.operand_uses)
            return derived[op]

        mapping: dict = {}
        anchor = [loop]

        def own(value):
            d = value.defining_op
            if value in mapping or d is None or not (value in shared or derives(d)):
                return mapping.get(value, value)
            for u in d.operand_uses:
                own(u.value)
            anchor[0] = rw.clone(d, after=anchor[0], mapping=mapping,
                                 reason="the epilogue's own offsets (not shared with the loads' coordinates)")
            return mapping[value]

        for top in after:
            for op in list(top.walk()):
                for u in list(op.operand_uses):
                    new = own(u.value)
                    if new is not u.value:
                        rw.set_operand(u, new, "the epilogue's own offsets")

    def rewrite_load(self, ctx, loop, p: Plan, shared: set):
        rw = ctx.rewriter
        ld = p.op
        stem = ld.result.name.split("_")[0] if ld.result.name[0].isalpha() else "t"
        try:
            desc, tile, block = self.make_descriptor(rw, loop, p, stem)
            coords = self.coord_refs(rw, loop, ld, p, shared)
            name = rw.fresh_name(f"{stem}_tma", ld)
            new = rw.insert_before(ld, f"%{name} = tt.descriptor_load %{desc}[{', '.join(coords)}] : "
                                       f"!tt.tensordesc<{block}> -> {tile}", reason="TMA load")[0]
            rw.replace_all_uses(ld.result, new.result, reason="TMA load")
            rw.erase(ld, "replaced by a descriptor load")
        except RewriteError as e:
            ctx.warning(f"could not rewrite: {e}", ld)
            return
        # the pointer iter_arg is now dead: yield it unchanged so canonicalize drops it
        ptr = loop.iter_args[p.slot]
        yld = loop.body.ops[-1]
        adv = yld.values[p.slot].defining_op
        if not loop.results[p.slot].users and all(u is adv for u in ptr.users):
            rw.set_operand(yld.operand_use("values", p.slot), ptr, "the pointer is no longer used")
        ctx.remark(f"loads {p.block[0]}x{p.block[1]} {p.elem} tiles through TMA: descriptor over "
                   f"[{p.extents[0].ref}, {p.extents[1].ref}], coordinates "
                   f"[{', '.join(_coord_text(c) for c in p.coords)}]", ld)

    def rewrite_store(self, ctx, p: Plan):
        rw = ctx.rewriter
        st = p.op
        try:
            desc, tile, block = self.make_descriptor(rw, st, p, "c")
            coords = self.coord_refs(rw, None, st, p)
            rw.insert_before(st, f"tt.descriptor_store %{desc}[{', '.join(coords)}], {st.value.ref} : "
                                       f"!tt.tensordesc<{block}>, {tile}", reason="TMA store")
            rw.erase(st, "replaced by a descriptor store")
        except RewriteError as e:
            ctx.warning(f"could not rewrite: {e}", st)
            return
        ctx.remark(f"stores the {p.block[0]}x{p.block[1]} {p.elem} tile through TMA: descriptor over "
                   f"[{p.extents[0].ref}, {p.extents[1].ref}]", st)


def _coord_text(c) -> str:
    kind, v = c
    return v.ref if kind == "val" else str(v) if kind == "int" else f"iv*{v}"
