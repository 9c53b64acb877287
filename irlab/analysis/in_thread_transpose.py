"""Where a dot operand's global data is written to LDS across K, and whether an in-register
transpose before the write (AMD's in-thread transpose) can remove the transposing LDS access.

A GEMM operand loaded from global memory along its non-K dimension (B of a row-major ``A @ B``,
or A stored column-major) arrives in registers with its fastest dimension M or N: each lane
holds a run of consecutive M/N elements. The MFMA reads its operand K-contiguous, so somewhere
the data crosses from one order to the other. Without help it crosses in LDS: a shared layout in
the load's order is read across K (narrow or transposing ``ds_read``), or a K-ordered layout is
written across K (narrow ``ds_write``). Upstream Triton's ``TritonAMDGPUInThreadTranspose``
(on gfx942 by default since 3.6) removes the crossing: it widens each lane's tile along K in the
load's blocked layout (``sizePerThread[K] = min(K / (lanes_K * warps_K), 64 / element bits)``),
transposes that tile inside each lane's registers (``amdg.in_thread_transpose``, whose result is
a linear layout) and writes LDS K-contiguous through an ``amd_rotating_shared`` layout whose
swizzle is the one Triton picks for the operand's MFMA.

:func:`find_operand` follows one dot-operand ``local_load`` back through its LDS buffers the
way upstream does -- every buffer reachable through views (``memdesc_index``) and values carried
by ``scf.for``, ``scf.if`` and ``scf.while``, every write into them, and the global loads those
writes store -- and says whether the pattern holds, and if not, why. The same conditions as
upstream: an MFMA (or WMMA) dot operand; no direct-to-LDS copy into the buffers; every write's
register layout blocked and not K-fastest; at least one ``tt.load`` behind the writes, all of
one 2-D type with room for at least two elements per lane along K. Where upstream looks at
``tt.load`` only (it runs before Triton's buffer-op conversion), irlab also widens an
``amdg.buffer_load`` (its offsets, mask and other converted like a pointer), so that the pass
acts on the TTGIR a compile ends with as well. irlab adds its own: a
single CTA, every buffer in a ``swizzled_shared`` layout (upstream retypes only those and would
leave a padded buffer as it was), views it follows (``memdesc_index``) and element types whose
width it knows; anything else is refused, with the op and the reason.

:func:`plan` computes what the rewrite writes: the widened blocked layout (Triton's blocked
builder: lanes and warps spread from the fastest dimension), the transposed linear layout
(``InThreadTransposeOp::deduceOutputLayout``: the blocked layout's linear bases with the
register tile's order swapped) and the rotating shared layout (``composeSharedLayoutForOperand``
of the MFMA: ``vec = kWidth``, ``perPhase = max(1, banks * 32 / bits / K)``, ``maxPhase =
max(min(16 / perPhase, K / vec), 1)``, with 64 banks on CDNA4; of the WMMA: ``vec`` capped at
128 bits, 32 banks, the instruction's 16 rows in place of 16). All layout arithmetic is done
here in Python; Triton's verifier checks the result when the rewritten IR is handed back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from irlab.ir import BlockArgument, MemDescType, Operation, OpResult, TensorType
from irlab.ir.attributes import same_layout
from irlab.ir.traits import ASYNC_COPY, GLOBAL_LOAD, LOCAL_LOAD, SHARED_VIEW

VIEW = "ttg.memdesc_index"   # the one shared-memory view the network follows (a slot of a multi-buffer)
DS_BITS = 64        # upstream widens a lane's K run to one ds_write_b64


class Refused(Exception):
    """The pattern does not hold (or irlab cannot prove it): ``op`` is where, ``reason`` why."""

    def __init__(self, op: Operation | None, reason: str):
        super().__init__(reason)
        self.op, self.reason = op, reason


@dataclass
class Operand:
    """One dot operand's LDS network, as upstream's pass finds it from a ``local_load``."""
    root: Operation                      # the dot-operand local_load
    op_idx: int                          # 0: A, 1: B
    k_dim: int                           # the operand's K dimension (A: 1, B: 0)
    writes: list[Operation] = field(default_factory=list)    # local_alloc / local_store (with data)
    buffers: list = field(default_factory=list)              # every memdesc value of the network
    ops: list[Operation] = field(default_factory=list)       # every op of the network
    loads: list[Operation] = field(default_factory=list)     # the tt.loads the writes store

    @property
    def name(self) -> str:
        return "A" if self.op_idx == 0 else "B"


@dataclass(frozen=True)
class Plan:
    """What the rewrite writes for one operand (layouts as text, inline)."""
    operand: Operand
    blocked: str          # the loads' new blocked layout
    linear: str           # the in-register transpose's result layout
    shared: str           # the buffers' new rotating shared layout
    k_per_lane: int       # elements a lane now holds along K


# --------------------------------------------------------------------------------------------------
# finding the network

def _dot_layout(load: Operation):
    t = load.result.type if load.results else None
    lay = t.layout if isinstance(t, TensorType) else None
    if lay is None or lay.kind != "dot_op" or lay.get("opIdx") not in (0, 1):
        raise Refused(None, "not a dot operand")
    return lay


def network(load: Operation) -> Operand:
    """The LDS network behind dot-operand read ``load`` -- its buffers, writes and reads -- with no
    check of whether in-thread transpose applies; raises :class:`Refused` where the walk cannot
    follow it (or ``load`` reads no dot operand: ``op`` None)."""
    op_idx = _dot_layout(load).get("opIdx")
    operand = Operand(load, op_idx, 1 if op_idx == 0 else 0)
    _walk_network(operand)
    return operand


def find_operand(load: Operation) -> Operand:
    """The LDS network behind dot-operand read ``load`` where in-thread transpose applies; raises
    :class:`Refused` otherwise (``op`` None: not a dot operand at all -- nothing to say)."""
    parent = _dot_layout(load).parent
    if parent is None or parent.kind not in ("amd_mfma", "amd_wmma"):
        raise Refused(None, "not an AMD matrix-core operand")
    try:
        operand = network(load)
        writes = [w for w in operand.writes if w.operands]
        if writes and all(_transposed(w) for w in writes):
            raise Refused(None, "already rewritten: every write is fed by amdg.in_thread_transpose")
        if not operand.writes:
            raise Refused(load, "not rewritten: no local_alloc or local_store writes the buffers this local_load "
                                "reads")
        for w in writes:
            _check_write(operand, w)
    except Refused as r:
        if r.op is not None and r.op.name in ("tt.func", "func.func"):
            raise Refused(load, r.reason) from None   # say it at the read, not at the function's first line
        raise
    if not operand.loads:
        raise Refused(load, f"not rewritten: no global load feeds the LDS writes of operand {operand.name} "
                            "(in-thread transpose widens a global load's layout; data computed in registers is left "
                            "alone, as upstream does)")
    first = operand.loads[0].result.type
    if not isinstance(first, TensorType) or first.rank != 2 or first.layout is None:
        raise Refused(operand.loads[0], "not rewritten: the global load is not a 2-D tensor in a layout")
    for other in operand.loads[1:]:
        t = other.result.type
        if not (isinstance(t, TensorType) and t.shape == first.shape and str(t.element) == str(first.element)
                and same_layout(t.layout, first.layout)):
            raise Refused(other, f"not rewritten: the global loads of operand {operand.name} differ in type "
                                 f"({first} and {other.result.type}); one new layout cannot fit both")
    if k_room(first, operand.k_dim) < 2:
        raise Refused(operand.loads[0], f"not rewritten: operand {operand.name}'s K = {first.shape[operand.k_dim]} "
                                        "leaves a lane fewer than 2 elements along K after the load's lanes and "
                                        "warps take their share (nothing to transpose in registers)")
    for v in operand.buffers:
        enc = v.type.layout if isinstance(v.type, MemDescType) else None
        if enc is None or enc.kind != "swizzled_shared":
            what = enc.kind if enc is not None else "no layout irlab reads"
            raise Refused(_op_of(v) or load, f"not rewritten: a buffer of operand {operand.name} ({v.ref}) is in "
                                             f"{what}, not swizzled_shared")
    return operand


def _check_write(operand: Operand, w: Operation) -> None:
    data = w.operands[0]
    t = data.type
    lay = t.layout if isinstance(t, TensorType) else None
    if lay is None or lay.kind != "blocked":
        what = lay.kind if lay is not None else "no layout"
        raise Refused(w, f"not rewritten: {w.name} writes operand {operand.name} from a {what} layout (in-thread "
                         "transpose starts from a blocked layout)")
    order = lay.get("order")
    if not isinstance(order, (list, tuple)) or len(order) != 2:
        raise Refused(w, "not rewritten: the written value is not 2-D")
    if order[0] == operand.k_dim:
        raise Refused(w, f"not rewritten: operand {operand.name} is written K-contiguous already (its layout's "
                         f"fastest dimension is {order[0]}, K): no transpose to remove")
    if any(x != 1 for x in (lay.get("CTAsPerCGA") or [1])):
        raise Refused(w, "not rewritten: the layout spans more than one CTA")
    for v in _defs(data, set()):
        op = v.defining_op if isinstance(v, OpResult) else None
        if op is not None and op.name in GLOBAL_LOAD and op not in operand.loads:
            operand.loads.append(op)


def _transposed(write: Operation) -> bool:
    d = write.operands[0].defining_op if write.operands else None
    return d is not None and d.name == "amdg.in_thread_transpose"


def _op_of(v):
    return v.defining_op if isinstance(v, OpResult) else None


def _walk_network(operand: Operand) -> None:
    """Breadth-first over the ops that touch the buffers ``operand.root`` reads (upstream's
    ``findReachableSMemOps``): backward from each op's buffer operand to the allocations and
    views that define it, forward from each allocation or view to its users, through control
    flow both ways."""
    seen_ops: set = set()
    seen_back: set = set()
    seen_fwd: set = set()
    step = [operand.root]
    while step:
        nxt = []
        for op in step:
            if id(op) in seen_ops:
                continue
            seen_ops.add(id(op))
            operand.ops.append(op)
            src = out = None
            if op.name == "ttg.local_alloc":
                operand.writes.append(op)
                out = op.result
            elif op.name == "ttg.local_store":
                operand.writes.append(op)
                src = op.dst
            elif op.name == VIEW:
                src, out = op.src, op.result
            elif op.name == "ttg.local_dealloc" or op.name in LOCAL_LOAD:
                src = op.operands[0]
            elif op.name in ASYNC_COPY:
                raise Refused(op, f"not rewritten: operand {operand.name}'s buffer is filled by {op.name}, a copy "
                                  "straight from global memory into LDS: the data never passes through registers")
            else:
                raise Refused(op, f"not rewritten: {op.name} uses operand {operand.name}'s buffer; irlab knows "
                                  "local_alloc, local_store, memdesc_index, local_load and local_dealloc")
            if src is not None:
                for v in _defs(src, seen_back):
                    _add_buffer(operand, v)
                    d = _op_of(v)
                    if d is not None and d.name in ("ttg.local_alloc", VIEW):
                        nxt.append(d)
                    elif d is not None and d.name in SHARED_VIEW:
                        raise Refused(op, f"not rewritten: operand {operand.name} is read through {d.name}, a view "
                                          "in-thread transpose does not follow (only memdesc_index)")
            if out is not None:
                _add_buffer(operand, out)
                users, carried = _uses(out, seen_fwd)
                for v in carried:
                    _add_buffer(operand, v)
                nxt += users
        step = nxt


def _add_buffer(operand: Operand, v) -> None:
    if all(v is not b for b in operand.buffers):
        operand.buffers.append(v)


def _defs(v, seen: set) -> list:
    """Every value ``v`` may be, through control flow (upstream's ``traverseCFForValueDefs``): the
    values defined by ordinary ops, and the loop and branch values on the way. Refused at a
    function argument or control flow irlab does not follow."""
    if id(v) in seen:
        return []
    seen.add(id(v))
    if isinstance(v, OpResult):
        op = v.op
        if op.name == "scf.for":
            return _defs(_yielded(op.body, v.index), seen) + _defs(op.init_args[v.index], seen) + [v]
        if op.name == "scf.if":
            out = []
            for r in op.regions:
                out += _defs(_yielded(r.entry, v.index), seen)
            return out + [v]
        if op.name == "scf.while":
            cond = _last(op.regions[0].entry) if op.regions else None
            return _defs(_at(cond.operands, v.index + 1) if cond is not None else None, seen) + [v]
        if op.regions:
            raise Refused(op, f"not rewritten: a buffer comes out of {op.name}, control flow irlab does not follow")
        return [v]
    if isinstance(v, BlockArgument):
        owner = v.block.parent_op
        if owner is None or owner.name in ("tt.func", "func.func"):
            raise Refused(owner, f"not rewritten: {v.ref} is a function argument; the data flow cannot be followed")
        if owner.name == "scf.for":
            if v.index == 0:
                return [v]
            k = v.index - 1
            return _defs(_yielded(owner.body, k), seen) + _defs(_at(owner.init_args, k), seen) + [v]
        if owner.name == "scf.while" and len(owner.regions) == 2:
            if v.block is owner.regions[0].entry:
                return (_defs(_at(owner.operands, v.index), seen)
                        + _defs(_yielded(owner.regions[1].entry, v.index), seen) + [v])
            cond = _last(owner.regions[0].entry)
            return _defs(_at(cond.operands, v.index + 1) if cond is not None else None, seen) + [v]
        raise Refused(owner, f"not rewritten: {v.ref} is an argument of {owner.name}, control flow irlab does not "
                             "follow")
    if v is None:
        return []
    raise Refused(None, f"not rewritten: {v.ref} is defined outside the module")


def _uses(v, seen: set) -> tuple[list, list]:
    """(ops that use ``v``, control-flow values it flows into), through control flow (upstream's
    ``traverseCFForValueUses``). Refused where the buffer leaves the function or enters control
    flow irlab does not follow."""
    if id(v) in seen:
        return [], []
    seen.add(id(v))
    ops, carried = [], []

    def follow(x):
        o, c = _uses(x, seen)
        ops.extend(o)
        carried.append(x)
        carried.extend(c)

    for u in v.uses:
        user = u.op
        if user.name in ("tt.return", "func.return"):
            raise Refused(user, "not rewritten: the buffer is returned from the function")
        if user.name == "scf.yield":
            k = [i for i, x in enumerate(user.operands) if x is v]
            parent = user.parent_op
            for i in k:
                if parent is not None and parent.name in ("scf.for", "scf.if"):
                    follow(parent.results[i])
                if parent is not None and parent.name == "scf.for":
                    follow(parent.body.arguments[i + 1])
                elif parent is not None and parent.name == "scf.while":
                    follow(parent.regions[0].entry.arguments[i])
                elif parent is None or parent.name != "scf.if":
                    raise Refused(user, f"not rewritten: the buffer is yielded from {parent.name if parent else '?'}, "
                                        "control flow irlab does not follow")
            continue
        if user.name == "scf.for":
            for i, x in enumerate(user.init_args):
                if x is v:
                    follow(user.body.arguments[i + 1])
            continue
        if user.name == "scf.while":
            for i, x in enumerate(user.operands):
                if x is v:
                    follow(user.regions[0].entry.arguments[i])
            continue
        if user.name == "scf.condition":
            loop = user.parent_op
            for i, x in enumerate(user.operands[1:]):
                if x is v:
                    follow(loop.regions[1].entry.arguments[i])
                    follow(loop.results[i])
            continue
        if user.dialect == "scf" or user.regions:
            raise Refused(user, f"not rewritten: the buffer is used by {user.name}, control flow irlab does not follow")
        if user not in ops:
            ops.append(user)
    return ops, carried


def _yielded(block, i):
    term = _last(block)
    return _at(term.operands, i) if term is not None else None


def _last(block):
    return block.ops[-1] if block is not None and block.ops else None


def _at(values, i):
    values = list(values or [])
    return values[i] if 0 <= i < len(values) else None


# --------------------------------------------------------------------------------------------------
# layouts

def k_room(t: TensorType, k_dim: int) -> int:
    """Elements a lane can hold along K once the layout's lanes and warps along K have their share
    (upstream's ``getMaxSizePerThread``); 0 for a layout that is not blocked."""
    lay = t.layout
    if lay is None or lay.kind != "blocked":
        return 0
    tpw, wpc = lay.get("threadsPerWarp"), lay.get("warpsPerCTA")
    return max(1, t.shape[k_dim] // (tpw[k_dim] * wpc[k_dim]))


def element_bits(element) -> int | None:
    """Bits of a scalar element type (``bf16`` 16, ``f8E4M3FN`` 8), or None (a pointer, an
    unknown type)."""
    bits = getattr(element, "bitwidth", None)
    return bits if isinstance(bits, int) and bits > 0 else None


def build_blocked(shape, size_per_thread, order, num_warps: int, lanes: int) -> tuple[list, list]:
    """(threadsPerWarp, warpsPerCTA) Triton's blocked-layout builder gives ``shape`` (one CTA):
    from the fastest dimension on, each takes as many lanes, then warps, as it has tiles left;
    the slowest takes the rest."""
    rank = len(size_per_thread)
    tpw, wpc = [0] * rank, [0] * rank
    rem_lanes, rem_threads, rem_warps = lanes, num_warps * lanes, num_warps
    prev_lanes = prev_warps = 1
    for d in range(rank - 1):
        i = order[d]
        per_cta = min(max(rem_threads, 1), max(1, shape[i] // size_per_thread[i]))
        tpw[i] = min(max(per_cta, 1), rem_lanes)
        wpc[i] = min(max(per_cta // tpw[i], 1), rem_warps)
        rem_warps //= wpc[i]
        rem_lanes //= tpw[i]
        rem_threads //= per_cta
        prev_lanes *= tpw[i]
        prev_warps *= wpc[i]
    tpw[order[-1]] = lanes // prev_lanes
    wpc[order[-1]] = num_warps // prev_warps
    return tpw, wpc


def blocked_bases(shape, spt, tpw, wpc, order) -> dict[str, list]:
    """The linear layout of a blocked layout over ``shape`` (one CTA), as Triton builds it:
    register, lane and warp bases along the fastest dimension first; repeats of the tile become
    further register bases; bases beyond the tensor's extent become zero (broadcast)."""
    rank = len(shape)
    size = [1] * rank
    bases: dict[str, list] = {"register": [], "lane": [], "warp": []}

    def extend(kind, n, dim):
        while n > 1:
            b = [0] * rank
            b[dim] = size[dim]
            bases[kind].append(b)
            size[dim] *= 2
            n //= 2

    for kind, counts in (("register", spt), ("lane", tpw), ("warp", wpc)):
        for d in order:
            extend(kind, counts[d], d)
    for d in order:                          # the tensor is larger than the tile: repeat in registers
        if shape[d] > size[d]:
            extend("register", shape[d] // size[d], d)
    for kind in bases:                       # the tile is larger than the tensor: broadcast
        bases[kind] = [[x if x < shape[i] else 0 for i, x in enumerate(b)] for b in bases[kind]]
    return bases


def transposed_bases(shape, spt, tpw, wpc, order) -> dict[str, list]:
    """``amdg.in_thread_transpose``'s result layout for a blocked source: the source's bases with
    the per-lane register tile enumerated in the swapped order (upstream's ``deduceOutputLayout``)."""
    bases = blocked_bases(shape, spt, tpw, wpc, order)
    rank = len(shape)
    tile = [min(spt[i], shape[i]) for i in range(rank)]
    swapped = list(order)
    swapped[-2], swapped[-1] = swapped[-1], swapped[-2]
    regs, size = [], [1] * rank
    for d in swapped:
        n = tile[d]
        while n > 1:
            b = [0] * rank
            b[d] = size[d]
            regs.append(b)
            size[d] *= 2
            n //= 2
    in_tile = (_prod(spt)).bit_length() - 1
    out = [list(b) for b in bases["register"]]
    for i, b in enumerate(regs):
        out[i] = b
    for i in range(len(regs), in_tile):
        out[i] = [0] * rank
    bases["register"] = out
    return bases


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def linear_text(bases: dict[str, list]) -> str:
    parts = ", ".join(f"{k} = [{', '.join('[' + ', '.join(map(str, b)) + ']' for b in bases[k])}]"
                      for k in ("register", "lane", "warp"))
    return f"#ttg.linear<{{{parts}, block = []}}>"


def blocked_text(spt, tpw, wpc, order) -> str:
    def ints(xs):
        return "[" + ", ".join(map(str, xs)) + "]"
    return (f"#ttg.blocked<{{sizePerThread = {ints(spt)}, threadsPerWarp = {ints(tpw)}, warpsPerCTA = {ints(wpc)}, "
            f"order = {ints(order)}}}>")


def rotating_shared(operand: Operand) -> str:
    """The ``amd_rotating_shared`` layout upstream writes the operand's LDS in: K-fastest, with
    the swizzle Triton's MFMA chooses for a K-contiguous operand."""
    t = operand.root.result.type
    lay = t.layout if isinstance(t, TensorType) else None
    mma = lay.parent if lay is not None else None
    # find_operand returned ``operand``: its read is a tensor in a dot_op layout over an AMD MMA layout
    assert isinstance(t, TensorType) and lay is not None and mma is not None
    bits = element_bits(t.element)
    order = [1, 0] if operand.op_idx == 0 else [0, 1]
    k_width = lay.get("kWidth")
    if not isinstance(k_width, int) or k_width <= 0:
        raise Refused(operand.root, "not rewritten: the dot operand's layout gives no kWidth")
    if bits is None:
        raise Refused(operand.root, f"not rewritten: irlab does not know the width of {t.element}")
    inner = t.shape[order[0]]
    instr = mma.get("instrShape") or []
    if mma.kind == "amd_wmma":
        # WMMA: ds_read of at most 128 bits, 32 banks, rows of the 16-row instruction at a time
        vec = min(k_width * bits, 128) // bits
        per_phase = max(1, (32 * 32 // bits) // inner)
        rows = instr[0] if instr else 16
        max_phase = max(min(rows // per_phase, inner // vec), 1)
    else:
        vec = k_width
        banks = 64 if mma.get("version") == 4 else 32   # CDNA4 has twice the LDS banks
        per_phase = max(1, (banks * 32 // bits) // inner)
        max_phase = max(min(16 // per_phase, inner // vec), 1)
        if instr and instr[0] == 4:
            max_phase = 4
    return f"#ttg.amd_rotating_shared<{{vec = {vec}, perPhase = {per_phase}, maxPhase = {max_phase}, order = " \
           f"[{order[0]}, {order[1]}]}}>"


def plan(operand: Operand) -> Plan:
    """The layouts the rewrite of ``operand`` writes (raises :class:`Refused` where irlab cannot
    compute one)."""
    t = operand.loads[0].result.type
    lay = t.layout if isinstance(t, TensorType) else None
    # find_operand returned ``operand``: its first global load is a 2-D tensor in a layout
    assert isinstance(t, TensorType) and lay is not None
    bits = element_bits(t.element)
    if bits is None:
        raise Refused(operand.loads[0], f"not rewritten: irlab does not know the width of {t.element}")
    spt, order = list(lay.get("sizePerThread")), list(lay.get("order"))
    tpw, wpc = lay.get("threadsPerWarp"), lay.get("warpsPerCTA")
    k = operand.k_dim
    spt[k] = min(k_room(t, k), max(1, DS_BITS // bits))
    new_tpw, new_wpc = build_blocked(t.shape, spt, order, _prod(wpc), _prod(tpw))
    return Plan(operand, blocked_text(spt, new_tpw, new_wpc, order),
                linear_text(transposed_bases(t.shape, spt, new_tpw, new_wpc, order)),
                rotating_shared(operand), spt[k])


def operand_writes(module) -> list[dict]:
    """Every LDS write of a dot operand's global data, one entry per operand read
    (``local_load``): which operand, the write ops, whether in-thread transpose applies and why
    not -- for reports (``lds-transposes``) and comparisons with upstream."""
    out, done = [], set()
    for op in module.walk():
        if op.name != "ttg.local_load" or not op.results:
            continue
        try:
            operand = find_operand(op)
            plan(operand)
            entry = {"op": op, "operand": operand.name, "op_idx": operand.op_idx, "applies": True, "why": "",
                     "writes": operand.writes, "loads": operand.loads}
        except Refused as r:
            if r.op is None:
                continue
            t = op.result.type
            idx = t.layout.get("opIdx")
            entry = {"op": op, "operand": "A" if idx == 0 else "B", "op_idx": idx, "applies": False,
                     "why": r.reason, "at": r.op, "writes": [], "loads": []}
        key = (entry["op_idx"], tuple(id(w) for w in entry["writes"]))
        if entry["applies"] and key in done:
            continue
        done.add(key)
        out.append(entry)
    return out
