"""Index expressions of tile loads and stores, as typed terms.

Triton's front end writes a 2-D tile access as a splat of a base pointer plus one index term per
axis, ``(start + tl.arange(0, n)) [% wrap]``, expanded to its axis of the tile and multiplied by
constants and scalar strides; the terms are summed in any order, through broadcasts. Masks are
conjunctions of ``index < bound``; a loop walks a tile by carrying the pointer and adding a
uniform step each iteration. The recognizers here return those pieces as frozen dataclasses or
raise :class:`Unmatched` saying what they found instead. Nothing here rewrites; passes decide
what the terms allow (``descriptor-loads`` turns them into TMA descriptors).
"""
from __future__ import annotations

from dataclasses import dataclass

from irlab.ir import BlockArgument, TensorType, Value, describe
from irlab.ir.queries import constant_value

_MAX_DEPTH = 16   # ops walked back from one value before giving up (front-end chains are short)


class Unmatched(Exception):
    """The expression is not of the recognized form; the message says what was found."""


@dataclass(frozen=True)
class Const:
    """An integer constant (a scalar ``arith.constant`` or a splat ``dense<n>``)."""
    value: int


@dataclass(frozen=True)
class Scalar:
    """A scalar SSA value, or a tensor that is a ``tt.splat`` of it."""
    value: Value


Uniform = Const | Scalar


@dataclass(frozen=True)
class AxisTerm:
    """``((start + range(size)) [% wrap]) * scale * strides[0] * ...`` varying along ``axis``."""
    axis: int
    size: int
    start: Value | None = None      # scalar; None means 0
    wrap: Value | None = None       # scalar bound of ``% wrap``; None when not wrapped
    scale: int = 1                  # constant factor
    strides: tuple = ()             # scalar Values multiplying the index

    @property
    def unit(self) -> bool:
        """Stride 1: consecutive indices are consecutive elements."""
        return self.scale == 1 and not self.strides

    @property
    def plain(self) -> bool:
        """``start + range(size)`` with stride 1 and no wrap."""
        return self.unit and self.wrap is None


@dataclass(frozen=True)
class TileAddress:
    """``splat(base) + rows + cols`` of a 2-D tile: ``rows`` varies along axis 0, ``cols`` along 1."""
    base: Value
    rows: AxisTerm
    cols: AxisTerm


@dataclass(frozen=True)
class Bound:
    """``arith.cmpi slt, index, splat(limit)``."""
    index: AxisTerm
    limit: Value


@dataclass(frozen=True)
class TileWalk:
    """A tile a loop loads through a carried pointer (iter_arg ``slot``), moving it ``step``
    elements along ``axis`` per iteration; its rows are ``pitch`` elements apart, its columns
    contiguous."""
    slot: int
    address: TileAddress    # of the pointer the loop starts from
    pitch: Value
    axis: int
    step: int


@dataclass(frozen=True)
class LoopPointer:
    """A pointer carried by an ``scf.for`` in iter_arg ``slot``, yielded as ``tt.addptr(ptr, step)``."""
    slot: int
    init: Value
    step: Uniform


# --- uniform values --------------------------------------------------------------------------------
def int_constant(value: Value) -> int | None:
    """The integer a scalar ``arith.constant`` (or a splat integer ``dense``) holds, else None."""
    d = value.defining_op
    if d is None or d.name != "arith.constant":
        return None
    v = constant_value(d)
    v = getattr(v, "splat", v)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def is_scalar(value: Value) -> bool:
    return not isinstance(value.type, TensorType)


def uniform(value: Value) -> Uniform | None:
    """What ``value`` is everywhere, when it is one value everywhere; scalars answer too."""
    n = int_constant(value)
    if n is not None:
        return Const(n)
    d = value.defining_op
    if d is not None and d.name == "tt.splat":
        n = int_constant(d.src)
        return Const(n) if n is not None else Scalar(d.src)
    return Scalar(value) if is_scalar(value) else None


def is_zero(value: Value) -> bool:
    """A splat constant 0 (integer or float)."""
    d = value.defining_op
    if d is None or d.name != "arith.constant":
        return False
    v = getattr(constant_value(d), "splat", None)
    return v is not None and float(v) == 0.0


def float_constant(value: Value) -> float | None:
    """The float a splat constant holds (``dense<-0.000000e+00>``, or ``tt.splat`` of a scalar
    ``arith.constant``), its sign kept; None for anything else."""
    t = value.type
    elem = t.element if isinstance(t, TensorType) else t
    if not getattr(elem, "is_float", False):
        return None
    d = value.defining_op
    if d is not None and d.name == "tt.splat":
        value, d = d.src, d.src.defining_op
    if d is None or d.name != "arith.constant":
        return None
    v = constant_value(d)
    v = getattr(v, "splat", v)
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        return float(v)
    except ValueError:
        return None


def strip_broadcast(value: Value) -> Value:
    d = value.defining_op
    while d is not None and d.name == "tt.broadcast":
        value = d.src
        d = value.defining_op
    return value


# --- index terms -----------------------------------------------------------------------------------
def axis_term(value: Value) -> AxisTerm:
    """Decompose an integer tensor that varies along one axis (rank 1, or rank 2 via expand_dims)."""
    scale, strides = 1, []
    value = strip_broadcast(value)
    axis = None
    rank2 = isinstance(value.type, TensorType) and value.type.rank == 2
    for _ in range(_MAX_DEPTH):
        d = value.defining_op
        if d is None:
            raise Unmatched(f"{value.ref} is a block argument, not an index expression")
        if d.name == "arith.muli":
            if (u := uniform(d.rhs)) is not None and not is_scalar(d.lhs):
                value = d.lhs
            elif (u := uniform(d.lhs)) is not None and not is_scalar(d.rhs):
                value = d.rhs
            else:
                raise Unmatched(f"{describe(d)} multiplies two varying tensors")
            if isinstance(u, Const):
                scale *= u.value
            else:
                strides.append(u.value)
            value = strip_broadcast(value)
            continue
        if d.name == "tt.expand_dims" and rank2 and axis is None:
            axis = 1 - int(d.attr("axis"))
            value = d.src
            continue
        break
    if axis is None:
        if not (isinstance(value.type, TensorType) and value.type.rank == 1):
            # the walk can stop at a block argument when it runs out of depth
            producer = value.defining_op
            what = describe(producer) if producer is not None else "a block argument"
            raise Unmatched(f"{value.ref} ({what}) is not an expanded index vector")
        axis = 0
    wrap = start = None
    d = value.defining_op
    if d is not None and d.name == "arith.remsi":
        u = uniform(d.rhs)
        if not isinstance(u, Scalar):
            raise Unmatched(f"{describe(d)} wraps by something other than a scalar bound")
        wrap, value = u.value, d.lhs
        d = value.defining_op
    if d is not None and d.name == "arith.addi":
        if isinstance(u := uniform(d.lhs), Scalar):
            start, value = u.value, d.rhs
        elif isinstance(u := uniform(d.rhs), Scalar):
            start, value = u.value, d.lhs
        else:
            raise Unmatched(f"{describe(d)} is not start + range")
        d = value.defining_op
    if d is None or d.name != "tt.make_range" or int(d.attr("start")) != 0:
        raise Unmatched(f"{value.ref} is not tt.make_range from 0")
    return AxisTerm(axis, int(d.attr("end")), start, wrap, scale, tuple(strides))


def offset_terms(value: Value) -> list[AxisTerm]:
    """Flatten a sum of per-axis index terms."""
    value = strip_broadcast(value)
    d = value.defining_op
    if d is not None and d.name == "arith.addi" and uniform(d.lhs) is None and uniform(d.rhs) is None:
        return offset_terms(d.lhs) + offset_terms(d.rhs)
    return [axis_term(value)]


def pointer_terms(value: Value) -> tuple[Value, list[AxisTerm]]:
    """``(base, terms)`` of ``addptr(... addptr(splat(base), offsets) ..., offsets)``."""
    terms = []
    for _ in range(_MAX_DEPTH):
        value = strip_broadcast(value)
        d = value.defining_op
        if d is None:
            break
        if d.name == "tt.addptr":
            terms += offset_terms(d.offset)
            value = d.ptr
            continue
        if d.name == "tt.splat":
            return d.src, terms
        break
    raise Unmatched("the pointer is not splat(base) plus index terms")


def tile_address(value: Value) -> TileAddress:
    """The 2-D tile address ``value`` computes: one index term per axis, spanning the tile."""
    base, terms = pointer_terms(value)
    by_axis: dict[int, AxisTerm] = {}
    for t in terms:
        if t.axis in by_axis:
            raise Unmatched(f"two index terms vary along axis {t.axis}")
        by_axis[t.axis] = t
    if set(by_axis) != {0, 1}:
        raise Unmatched("the offsets do not cover both axes of the tile")
    rows, cols = by_axis[0], by_axis[1]
    shape = tuple(value.type.shape) if isinstance(value.type, TensorType) else ()
    if (rows.size, cols.size) != shape:
        raise Unmatched(f"the index ranges ({rows.size}x{cols.size}) do not span the tile {list(shape)}")
    return TileAddress(base, rows, cols)


# --- masks -----------------------------------------------------------------------------------------
def conjuncts(mask: Value) -> list[Value]:
    """The operands of a tree of ``arith.andi`` (through broadcasts)."""
    mask = strip_broadcast(mask)
    d = mask.defining_op
    if d is not None and d.name == "arith.andi":
        return conjuncts(d.lhs) + conjuncts(d.rhs)
    return [mask]


def bound(cond: Value) -> Bound:
    """``index < limit`` of ``arith.cmpi slt, <index term>, splat(limit)``."""
    d = strip_broadcast(cond).defining_op
    if d is None or d.name != "arith.cmpi" or d.predicate != "slt":
        raise Unmatched("the mask is not `arith.cmpi slt` of an index against a bound")
    u = uniform(d.rhs)
    if not isinstance(u, Scalar):
        raise Unmatched(f"{describe(d)} compares against something other than a scalar bound")
    return Bound(axis_term(d.lhs), u.value)


# --- loops -----------------------------------------------------------------------------------------
def loop_pointer(loop, ptr: Value) -> LoopPointer:
    """``ptr`` as an iter_arg of ``loop`` that the loop advances by a uniform ``tt.addptr``."""
    if not isinstance(ptr, BlockArgument) or ptr not in loop.iter_args:
        raise Unmatched("the pointer is not loop-carried (a tt.addptr iter_arg of the loop)")
    slot = loop.iter_args.index(ptr)
    yd = loop.body.ops[-1].values[slot].defining_op
    if yd is None or yd.name != "tt.addptr" or yd.ptr is not ptr:
        raise Unmatched("the loop does not advance the pointer by tt.addptr of itself")
    step = uniform(yd.offset)
    if step is None:
        raise Unmatched(f"the pointer advances by a non-uniform offset ({describe(yd)})")
    return LoopPointer(slot, loop.init_args[slot], step)


def multiple_of(value: Value, factor: Value) -> int | None:
    """``c`` when ``value`` is ``arith.muli`` of ``factor`` and the constant ``c`` (either order)."""
    d = value.defining_op
    if d is None or d.name != "arith.muli":
        return None
    for x, y in ((d.lhs, d.rhs), (d.rhs, d.lhs)):
        if x is factor and (c := int_constant(y)) is not None:
            return c
    return None


def minus_multiple(value: Value, factor: Value) -> tuple[Value, int] | None:
    """``(e, c)`` when ``value`` is ``e - factor * c`` (``arith.subi`` of an ``arith.muli``)."""
    d = value.defining_op
    if d is None or d.name != "arith.subi":
        return None
    c = multiple_of(d.rhs, factor)
    return (d.lhs, c) if c is not None else None


def tile_walk(loop, ptr: Value) -> TileWalk:
    """How ``loop`` walks the tile ``ptr`` points at: ``addptr(ptr, step)`` each iteration, with
    ``step`` a constant (along the contiguous columns) or a constant times the row pitch (rows)."""
    lp = loop_pointer(loop, ptr)
    addr = tile_address(lp.init)
    if not addr.cols.unit:
        raise Unmatched("the innermost axis has a stride other than 1 (not contiguous)")
    if addr.rows.scale != 1 or len(addr.rows.strides) != 1:
        raise Unmatched("the outer axis's stride is not one scalar value")
    pitch = addr.rows.strides[0]
    if isinstance(lp.step, Const):
        return TileWalk(lp.slot, addr, pitch, 1, lp.step.value)
    step = multiple_of(lp.step.value, pitch)
    if step is None:
        raise Unmatched(f"the per-iteration advance {lp.step.value.ref} is not a constant times the row stride")
    return TileWalk(lp.slot, addr, pitch, 0, step)


def walked_extent(mask: Value, loop, walk: TileWalk) -> Value:
    """``E`` of a mask that is exactly ``range < E - iv * step`` on the walked axis (``E`` from
    before the loop): the tile's extent along that axis."""
    conj = conjuncts(mask)
    if len(conj) != 1:
        raise Unmatched("the mask has several conjuncts; only the bound of the walked axis is handled")
    b = bound(conj[0])
    size = (walk.address.rows, walk.address.cols)[walk.axis].size
    if b.index.axis != walk.axis or not b.index.plain or b.index.start is not None or b.index.size != size:
        raise Unmatched("the mask does not bound the walked axis's range")
    found = minus_multiple(b.limit, loop.induction_var)
    if found is None or found[1] != walk.step:
        raise Unmatched(f"the mask bound {b.limit.ref} is not EXTENT - iv * {walk.step}")
    extent = found[0]
    if not extent.defined_outside(loop):
        raise Unmatched("the extent changes inside the loop")
    return extent


def tile_bounds(mask: Value, address: TileAddress) -> tuple[Value, Value]:
    """``(B0, B1)`` of a mask that is exactly ``(s0 + r0 < B0) & (s1 + r1 < B1)`` over the tile at
    ``address`` (the same start values, stride-1 ranges)."""
    bounds: dict[int, Value] = {}
    for c in conjuncts(mask):
        b = bound(c)
        if b.index.axis in bounds or not b.index.plain or \
                b.index.start is not (address.rows, address.cols)[b.index.axis].start:
            raise Unmatched("the mask is not exactly `start + range < bound` on each axis")
        bounds[b.index.axis] = b.limit
    if set(bounds) != {0, 1}:
        raise Unmatched("the mask does not bound both axes")
    return bounds[0], bounds[1]


def has_bound(mask: Value, axis: int, start: Value | None, limit: Value) -> bool:
    """Whether one conjunct of ``mask`` is exactly ``start + range < limit`` along ``axis``."""
    for c in conjuncts(mask):
        try:
            b = bound(c)
        except Unmatched:
            continue
        if b.index.axis == axis and b.index.plain and b.index.start is start and b.limit is limit:
            return True
    return False
