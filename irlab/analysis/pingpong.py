"""What AMD's block ping-pong schedule needs to know about a GEMM loop, read from TTGIR.

The ping-pong schedule (upstream Triton's BlockPingpong; irlab's ``block-pingpong`` pass) runs two
warps on each SIMD out of phase: while one issues a cluster of memory operations, the other issues
a cluster of MFMAs. It is written for one shape of loop: a stream-pipelined GEMM step with one
dot, whose two operands are read from shared memory (``ttg.local_load`` of a buffer carried by the
loop), written there by ``ttg.local_store`` of a value a global load brought in. Everything here
finds those ops and measures the tile; the pass decides and rewrites.

Facts from upstream (Triton 3.6 and 3.9, read from BlockPingpong.cpp and its lit tests, checked
by running the installed Triton's pass): the dot's memory ops are found by following each operand
back to the closest ``local_load`` (across the loop's back edge), the ``memdesc_index`` that gives
the buffer, the ``local_store`` into that view, and the closest global load of the stored value.
Memory ops of the loop that feed no dot must not exist (a persistent GEMM's epilogue ``scf.if``
may hold some in its then-branch). The tile size is M x N x K x bits of A's element; 8-warp
schedules slice the dot along K.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from irlab.ir import BlockArgument, Operation, TensorType
from irlab.ir.traits import ASYNC_COPY, GLOBAL_LOAD, LOCAL_LOAD, LOCAL_STORE

# tile sizes (M x N x K x bits of A's element) where upstream's schedules apply
MIN_TILE = 262144          # 32 x 128 x 64 x 16
SMALL_TILE = 16777216      # 128 x 128 x 64 x 16: the largest for one cluster (4 warps)
MEDIUM_TILE = 33554432     # two clusters (8 warps), exactly this size
LARGE_TILE = 67108864      # 256 x 256 x 64 x 16 and up: four clusters (8 warps)

DOT_OP = "tt.dot"               # the plain dot (the DOT trait also holds the scaled and warp-group ones)
SCALED_DOT_OP = "tt.dot_scaled"
INDEX = "ttg.memdesc_index"


@dataclass
class LoopOps:
    """The ops of one loop (nested ones included) that the schedule moves or counts."""
    loop: Operation
    global_loads: list = field(default_factory=list)
    async_copies: list = field(default_factory=list)
    local_loads: list = field(default_factory=list)    # only those reading a buffer the loop carries
    local_stores: list = field(default_factory=list)
    dots: list = field(default_factory=list)
    scaled_dots: list = field(default_factory=list)


def carried_buffer(loop: Operation, local_load: Operation) -> bool:
    """Whether ``local_load`` reads a buffer the loop carries (a block argument of its body with
    an initial value): a software-pipelined read."""
    src = local_load.operands[0] if local_load.operands else None
    return isinstance(src, BlockArgument) and src.block is loop.body and src.index >= 1


def collect(loop: Operation) -> LoopOps:
    found = LoopOps(loop)
    for op in loop.walk():
        if op is loop:
            continue
        if op.name in GLOBAL_LOAD:
            found.global_loads.append(op)
        elif op.name in ASYNC_COPY:
            found.async_copies.append(op)
        elif op.name in LOCAL_LOAD and carried_buffer(loop, op):
            found.local_loads.append(op)
        elif op.name in LOCAL_STORE:
            found.local_stores.append(op)
        elif op.name == DOT_OP:
            found.dots.append(op)
        elif op.name == SCALED_DOT_OP:
            found.scaled_dots.append(op)
    return found


def closest(value, names, seen=None) -> list:
    """The ops named ``names`` closest to ``value`` along every path of its definition: through
    the ops that compute it, and from a block argument of a loop body to the value the loop's
    yield passes back in its place."""
    seen = seen if seen is not None else set()
    out: list[Operation] = []
    if isinstance(value, BlockArgument):
        block, owner = value.block, value.block.parent_op
        term = block.ops[-1] if block.ops else None
        if owner is None or term is None or term.name != "scf.yield" or (owner.name == "scf.for" and value.index == 0):
            return out
        index = value.index - 1 if owner.name == "scf.for" else value.index
        if index < len(term.operands):
            out += closest(term.operands[index], names, seen)
        return out
    op = value.defining_op
    if op is None or id(op) in seen:
        return out
    seen.add(id(op))
    if op.name in names:
        return [op]
    for v in op.operands:
        out += closest(v, names, seen)
    return out


@dataclass
class DotMemory:
    """The memory ops that feed one dot."""
    local_loads: list
    local_stores: list
    global_loads: list


def dot_memory(dot: Operation) -> DotMemory:
    lloads = _unique(closest(dot.a, LOCAL_LOAD.ops) + closest(dot.b, LOCAL_LOAD.ops))
    views = _unique([v for ll in lloads for v in closest(ll.operands[0], (INDEX,))])
    stores = _unique([u for v in views for u in v.result.users if u.name in LOCAL_STORE])
    gloads = _unique([g for s in stores for g in closest(s.operands[0], GLOBAL_LOAD.ops)])
    return DotMemory(lloads, stores, gloads)


def _unique(ops: list) -> list:
    seen, out = set(), []
    for o in ops:
        if id(o) not in seen:
            seen.add(id(o))
            out.append(o)
    return out


def is_persistent_gemm(body) -> bool:
    """Upstream's shape of a persistent GEMM's loop body: an ``scf.if`` on an equality before the one
    dot and another after it (a tile's first and last K step)."""
    seen_if = seen_dot = False
    for op in body.ops:
        if op.name == "scf.if":
            if seen_if:
                return False
            cond = op.operands[0].defining_op if op.operands else None
            if cond is None or cond.name != "arith.cmpi" or cond.predicate != "eq":
                return False
            seen_if = True
        elif op.name == DOT_OP:
            if seen_dot or not seen_if:
                return False
            seen_dot, seen_if = True, False
    return seen_if and seen_dot


def non_dot_count(loop: Operation, ops: list, names, assume_not_taken: bool) -> tuple[int, Operation | None]:
    """How many of ``ops`` (memory ops that feed no dot) one iteration runs, as upstream estimates it:
    one for each op directly in the loop, the larger branch of an ``scf.if`` (its else branch for
    a persistent GEMM, whose branches run once per tile), one for any other parent. Also the
    first op counted."""
    count, first, parents = 0, None, set()
    for op in ops:
        parent = op.parent_op
        if parent is loop:
            n = 1
        elif id(parent) in parents:
            continue
        else:
            parents.add(id(parent))
            if parent.name == "scf.if":
                branches = [sum(o.name in names for o in r.entry.ops) if r.entry else 0 for r in parent.regions]
                then, other = branches[0], (branches[1] if len(branches) > 1 else 0)
                n = other if assume_not_taken else max(then, other)
            else:
                n = 1
        if n and first is None:
            first = op
        count += n
    return count, first


def loop_variant(value, loop: Operation) -> BlockArgument | None:
    """The block argument of ``loop``'s body (its induction variable or an iteration value) that
    ``value`` is computed from inside the loop, or None: a loop-invariant value."""
    todo, seen = [value], set()
    while todo:
        v = todo.pop()
        if isinstance(v, BlockArgument):
            if v.block is loop.body:
                return v
            continue
        op = v.defining_op
        if op is None or id(op) in seen or not loop.is_ancestor_of(op):
            continue
        seen.add(id(op))
        todo.extend(op.operands)
    return None


@dataclass(frozen=True)
class Tile:
    m: int
    n: int
    k: int
    bits: int
    k_width: int | None
    instr: tuple

    @property
    def size(self) -> int:
        return self.m * self.n * self.k * self.bits


def tile_of(dot: Operation) -> Tile | str:
    """The dot's tile and MFMA parameters, or why they cannot be read (not an MFMA dot)."""
    a, c = dot.a.type, dot.result.type
    if not (isinstance(a, TensorType) and isinstance(c, TensorType) and a.rank == 2 and c.rank == 2):
        return "the dot is not a 2-D tensor dot"
    lay = a.layout
    parent = lay.parent if lay is not None and lay.kind == "dot_op" else None
    if lay is None or parent is None or parent.kind != "amd_mfma":
        return f"not an MFMA dot (its A operand's layout is {a.encoding_text or 'none'})"
    bits = getattr(a.element, "bitwidth", None)
    if not bits:
        return f"the A operand's element type {a.element} has no known width"
    instr = tuple(parent.get("instrShape") or ())
    return Tile(c.shape[0], c.shape[1], a.shape[1], bits, lay.get("kWidth"), instr[:2])
