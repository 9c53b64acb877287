"""The op families passes work with, declared with types so that an editor completes and a type
checker checks what an op has:

    from irlab.ir import ops

    for store in ops.Store.find(module):        # list[ops.Store]
        store.ptr, store.value, store.mask      # Value, Value, Value | None
    if isinstance(op, ops.For):                 # narrows op to ops.For
        op.lower_bound, op.init_args, op.induction_var, op.yield_op
    if (load := ops.Load.match(op)) is not None:
        load.cache, load.is_volatile

A family is a subclass of :class:`~irlab.ir.model.Operation` that declares the named operands
(:mod:`irlab.ir.operands`), region values and attributes of its ops. It is never built and wraps
nothing: ``isinstance(op, ops.Store)`` is true of the parsed ``tt.store`` op itself (its name is one
of the family's ``names``), and :meth:`Family.match` / :meth:`Family.find` give back the ops
themselves. So the rewriter, identity (``op is anchor``) and every older access -- ``op.ptr``,
``op.named_operands()``, ``op.attr("axis")`` -- work unchanged on the same objects; a family only
says, in Python's types, what is there. ``tests/test_ir_ops.py`` checks that each declared name is
what the op gives at run time.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .model import Block, BlockArgument, Module, Operation, Value
from .operands import ARITH_BINARY, ARITH_UNARY

if TYPE_CHECKING:
    from .attributes import Layout

F = TypeVar("F", bound="Family")


class _FamilyMeta(type):
    """``isinstance(op, Family)``: the op's name is one of the family's (no op is of a family's class)."""

    names: tuple[str, ...]   # set by each class made with this metaclass (:class:`Family` and its families)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Operation) and obj.name in cls.names

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"{cls.__name__} is a family of ops, not an op to build: find its ops with "
                        f"{cls.__name__}.find(module), create ops with irlab.ir.opbuilder.OpBuilder")


class Family(Operation, metaclass=_FamilyMeta):
    """Base of the op families: ``names`` are the op names of the family (today's spelling)."""

    __slots__ = ()
    names: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def match(cls: type[F], op: Operation | None) -> F | None:
        """``op`` itself, typed as this family, if it is one of its ops; else None."""
        return op if isinstance(op, cls) else None   # type: ignore[return-value]

    @classmethod
    def find(cls: type[F], where: Module | Operation) -> list[F]:
        """Every op of this family in a module (or inside an op, itself included), in textual order."""
        return [op for op in where.walk() if isinstance(op, cls)]   # type: ignore[misc]


# --- memory --------------------------------------------------------------------------------------

class Load(Family):
    """``%v = tt.load %ptr[, %mask[, %other]]``"""
    names = ("tt.load",)
    ptr: Value
    mask: Value | None
    other: Value | None
    cache: str              # none, ca, cg, ...
    evict: str              # evict_normal, evict_first, evict_last
    is_volatile: bool


class Store(Family):
    """``tt.store %ptr, %value[, %mask]``"""
    names = ("tt.store",)
    ptr: Value
    value: Value
    mask: Value | None
    cache: str
    evict: str


class AtomicRMW(Family):
    """``%old = tt.atomic_rmw kind, sem, scope, %ptr, %value[, %mask]`` (the kind: ``op.predicate``)"""
    names = ("tt.atomic_rmw",)
    ptr: Value
    value: Value
    mask: Value | None


class DescriptorLoad(Family):
    """``%v = tt.descriptor_load %desc[%i, %j]``"""
    names = ("tt.descriptor_load",)
    desc: Value
    indices: list[Value]


class DescriptorStore(Family):
    """``tt.descriptor_store %desc[%i, %j], %src``"""
    names = ("tt.descriptor_store",)
    desc: Value
    indices: list[Value]
    src: Value


class BufferLoad(Family):
    """``%v = amdg.buffer_load %ptr[%offsets][, %mask[, %other]] [stride = %s]``"""
    names = ("amdg.buffer_load",)
    ptr: Value
    offsets: Value
    mask: Value | None
    other: Value | None
    stride: Value | None


class BufferStore(Family):
    """``amdg.buffer_store %value, %ptr[%offsets][, %mask] [stride = %s]``"""
    names = ("amdg.buffer_store",)
    value: Value
    ptr: Value
    offsets: Value
    mask: Value | None
    stride: Value | None


class BufferLoadToLocal(Family):
    """``amdg.buffer_load_to_local %ptr[%offsets] [mask = %m] [other = %o] [stride = %s] into %dst``"""
    names = ("amdg.buffer_load_to_local",)
    ptr: Value
    offsets: Value
    dst: Value
    mask: Value | None
    other: Value | None
    stride: Value | None


class AsyncCopy(Family):
    """``%t = ttg.async_copy_global_to_local %src, %dst mask %m other %o``"""
    names = ("ttg.async_copy_global_to_local",)
    src: Value
    dst: Value
    mask: Value | None
    other: Value | None


class AsyncTMACopy(Family):
    """``ttng.async_tma_copy_global_to_local %desc[%coords] %dst, %barrier, %pred``"""
    names = ("ttng.async_tma_copy_global_to_local",)
    desc: Value
    coords: list[Value]
    dst: Value
    barrier: Value
    pred: Value | None


class LocalAlloc(Family):
    """``%m = ttg.local_alloc [%src]`` (a shared-memory buffer, filled from ``src`` if given)"""
    names = ("ttg.local_alloc",)
    src: Value | None
    layout: Layout | None   # the shared layout of the buffer


class LocalLoad(Family):
    """``%v = ttg.local_load %src[, %token]``"""
    names = ("ttg.local_load",)
    src: Value
    token: Value | None


class LocalStore(Family):
    """``ttg.local_store %value, %dst``"""
    names = ("ttg.local_store",)
    value: Value
    dst: Value


class LocalDealloc(Family):
    """``ttg.local_dealloc %src``"""
    names = ("ttg.local_dealloc",)
    src: Value


class MemDescIndex(Family):
    """``%m = ttg.memdesc_index %src[%index]``"""
    names = ("ttg.memdesc_index",)
    src: Value
    index: Value


# --- compute -------------------------------------------------------------------------------------

class Dot(Family):
    """``%d = tt.dot %a, %b, %c`` (``c`` the accumulator)"""
    names = ("tt.dot",)
    a: Value
    b: Value
    c: Value


class WarpGroupDot(Family):
    """``%d = ttng.warp_group_dot %a, %b, %c[, %use_c]`` (Hopper's wgmma)"""
    names = ("ttng.warp_group_dot",)
    a: Value
    b: Value
    c: Value
    use_c: Value | None


class ConvertLayout(Family):
    """``%v = ttg.convert_layout %src : T1 -> T2``"""
    names = ("ttg.convert_layout",)
    src: Value
    src_layout: Layout | None
    dst_layout: Layout | None


class Trans(Family):
    """``%v = tt.trans %src {order = array<i32: ...>}``"""
    names = ("tt.trans",)
    src: Value
    order: list[int]


class Splat(Family):
    """``%v = tt.splat %src : T -> tensor<...>``"""
    names = ("tt.splat",)
    src: Value


class Broadcast(Family):
    """``%v = tt.broadcast %src : tensor<1x...> -> tensor<N x...>``"""
    names = ("tt.broadcast",)
    src: Value


class ExpandDims(Family):
    """``%v = tt.expand_dims %src {axis = k : i32}``"""
    names = ("tt.expand_dims",)
    src: Value
    axis: int


class Reshape(Family):
    """``%v = tt.reshape %src``"""
    names = ("tt.reshape",)
    src: Value


class MakeRange(Family):
    """``%r = tt.make_range {end = N : i32, start = M : i32}`` (``op.start`` and ``op.end`` are
    where the op's text starts and ends: the range is ``range_start`` .. ``range_end``)"""
    names = ("tt.make_range",)
    range_start: int
    range_end: int


class AddPtr(Family):
    """``%p = tt.addptr %ptr, %offset``"""
    names = ("tt.addptr",)
    ptr: Value
    offset: Value


class GetProgramId(Family):
    """``%pid = tt.get_program_id x``"""
    names = ("tt.get_program_id",)
    axis: str               # x, y or z


class GetNumPrograms(Family):
    """``%n = tt.get_num_programs x``"""
    names = ("tt.get_num_programs",)
    axis: str


class Constant(Family):
    """``%c = arith.constant 0 : i32`` / ``dense<0.0> : tensor<...>`` (``value``: an int, a float, a
    bool or a :class:`~irlab.ir.attributes.Dense`)"""
    names = ("arith.constant",)
    value: Any


class Binary(Family):
    """``%r = arith.addi %lhs, %rhs`` and the other two-operand arith ops"""
    names = tuple(f"arith.{n}" for n in ARITH_BINARY)
    lhs: Value
    rhs: Value


class Cast(Family):
    """``%r = arith.extsi %src : i32 to i64`` and the other one-operand arith ops"""
    names = tuple(f"arith.{n}" for n in ARITH_UNARY)
    src: Value


class Compare(Family):
    """``%c = arith.cmpi slt, %lhs, %rhs`` (the predicate: ``op.predicate``)"""
    names = ("arith.cmpi", "arith.cmpf")
    lhs: Value
    rhs: Value


class Select(Family):
    """``%r = arith.select %condition, %true_value, %false_value``"""
    names = ("arith.select",)
    condition: Value
    true_value: Value
    false_value: Value


# --- control flow --------------------------------------------------------------------------------

class For(Family):
    """``%r = scf.for %iv = %lower_bound to %upper_bound step %step iter_args(%a = %init) -> (...)``"""
    names = ("scf.for",)
    lower_bound: Value
    upper_bound: Value
    step: Value
    init_args: list[Value]
    induction_var: BlockArgument
    iter_args: list[BlockArgument]
    yield_op: Operation     # the body's scf.yield
    num_stages: int | None  # tt.num_stages, where the kernel or a pass set it


class Yield(Family):
    """``scf.yield %v, ...``"""
    names = ("scf.yield",)
    values: list[Value]


class If(Family):
    """``%r = scf.if %condition { ... } else { ... }``"""
    names = ("scf.if",)
    condition: Value
    then_block: Block | None
    else_block: Block | None


class Return(Family):
    """``tt.return [%v, ...]``"""
    names = ("tt.return",)
    values: list[Value]


class Func(Family):
    """``tt.func @name(%arg0: type, ...) { ... }``"""
    names = ("tt.func",)
    arguments: list[BlockArgument]


FAMILIES: tuple[type[Family], ...] = tuple(
    f for f in list(globals().values()) if isinstance(f, type) and issubclass(f, Family) and f is not Family)

__all__ = ["FAMILIES", "Family"] + [f.__name__ for f in FAMILIES]
