"""Every trip through shared memory (LDS), every transpose, and the redundant ones.

AMD's guides walk through the FA-decode int4 IR by hand: the dequantized values are "stored in
shared memory for the transpose operation", "loaded from LDS to register again", and after a few
elementwise ops "stored in LDS again" -- LDS used twice. :func:`analyse` does that reading for
any IR:

* Every shared-memory trip, per buffer: a register value written (``ttg.local_alloc %v``,
  ``ttg.local_store``) and read back (``ttg.local_load``), through any views (``memdesc_index``,
  ``memdesc_trans``, buffers carried by ``scf.for``, ``scf.if`` and ``scf.while``); global data staged into LDS (async copies, pipelined
  ``local_store`` of a load); LDS buffers read directly by an MMA; and every ``convert_layout``
  that goes through LDS -- which Triton decides: its own shared-memory allocation runs on a copy
  of the module and the converts that got scratch space are the ones. In the old syntax
  (``#triton_gpu`` shared-encoded tensors) a convert to or from a shared encoding *is* an LDS
  write or read.
* Every dot operand read from LDS across K (``lds-non-k-contiguous``): the shared layout's fastest
  dimension is not the operand's K, so the read into the MMA operand layout transposes.
* Every dot operand whose global data is written to LDS across K where an in-register transpose
  before the write removes the crossing (``in-thread-transposable``): the global load's blocked
  layout is not K-fastest, and upstream's InThreadTranspose (irlab's ``in-thread-transpose``)
  would rewrite it -- decided from the write's register layout, as upstream decides, not from the
  shared layout the read sees (:mod:`irlab.analysis.in_thread_transpose`).
* Every transpose, classified: ``tt.trans`` on registers and ``memdesc_trans`` are free views; a
  shared-to-shared ``tt.trans`` only changes addresses; a convert between blocked layouts of
  different order moves data.
* Redundant patterns: transpose pairs that cancel (separated only by elementwise or broadcast
  ops), a transpose immediately converted again, and two LDS trips on one value chain where one
  carries a transpose the other trip could absorb.

Findings are plain dicts (JSON); ``op`` entries keep a reference to the op under ``_op``.
"""
from __future__ import annotations

from irlab.analysis.in_thread_transpose import operand_writes
from irlab.ir import BlockArgument, MemDescType, Operation, OpResult, TensorType
from irlab.ir.queries import is_elementwise, is_splat
from irlab.ir.traits import (ASYNC_COPY, BROADCAST, DOT, GLOBAL_LOAD, LAYOUT_CONVERSION, LOCAL_LOAD, LOCAL_STORE,
                             SHARED_VIEW, TRANSPOSE)

CONVERT = "ttg.convert_layout"


def is_shared_tensor(t) -> bool:
    """A tensor with a shared encoding: the old syntax's way of saying 'this lives in LDS'."""
    return isinstance(t, TensorType) and t.layout is not None and t.layout.is_shared


def order(op: Operation):
    o = op.attr("order")
    return list(o) if isinstance(o, list) else None


def cancels(o1, o2) -> bool:
    if o1 is None or o2 is None or len(o1) != len(o2):
        return False
    return [o1[i] for i in o2] == list(range(len(o1)))


def ref(op: Operation) -> str:
    """``%269 = triton_gpu.convert_layout``: the op as the text writes it."""
    res = op.results[0].ref if op.results else ""
    return f"{res + ' = ' if res else ''}{op.spelling}"


def _finding(kind: str, op: Operation, detail: str, **extra) -> dict:
    return {"kind": kind, "op": ref(op), "line": op.line, "location": op.location(), "detail": detail,
            "_op": op, **extra}


def scratch_converts(module, services) -> tuple[set | None, str]:
    """Ids of the converts Triton's shared-memory allocation gives scratch space, or (None, why)."""
    if module.fragment:
        return None, "a fragment of ops cannot be handed to Triton's allocator"
    if not module.target:
        return None, "the module names no ttg.target"
    converts = [op for op in module.walk() if op.name == CONVERT]
    if not converts:
        return set(), ""
    from irlab import ir
    try:
        annotated = services.allocate_shared_memory(str(module), module.target)
    except Exception as e:   # the service says what Triton reported
        return None, str(e)[:300]
    copies = [op for op in ir.parse(annotated, "<allocated copy>").walk() if op.name == CONVERT]
    if len(copies) != len(converts):
        return None, "the allocated copy does not line up with the module"
    return {id(o) for o, c in zip(converts, copies) if "allocation.offset" in c.attributes}, ""


def analyse(module, services=None) -> dict:
    """``{"findings": [...], "summary": {kind: n}, "lds_decided_by": text}`` for ``module``;
    without ``services`` (Triton), which converts go through LDS is left undecided."""
    scratch, why = scratch_converts(module, services) if services is not None else (None, "Triton was not asked")
    findings: list[dict] = []
    trips = _trips(module, scratch, why, findings)
    _transposes(module, scratch, findings)
    findings += cancelling_pairs(module)
    _absorbable(trips, findings)
    findings += transposable_writes(module)
    for i, f in enumerate(findings, 1):
        f["id"] = i
    return {"findings": findings,
            "summary": {k: sum(1 for f in findings if f["kind"] == k) for k in dict.fromkeys(f["kind"] for f in findings)},
            "lds_decided_by": "Triton's shared-memory allocation" if scratch is not None else f"layout kinds only ({why})"}


# --------------------------------------------------------------------------------------------------
# shared-memory trips

def buffer_root(v, depth=0):
    """The allocation a memory-descriptor value points into (through views and values carried by
    ``scf.for``, ``scf.if`` and ``scf.while``); None where there is none, or more than one."""
    roots = buffer_roots(v)
    return roots[0] if len(roots) == 1 else None


def _last(block):
    return block.ops[-1] if block is not None and block.ops else None


def _at(values, i):
    values = list(values or [])
    return values[i] if 0 <= i < len(values) else None


def _nth(op, i):
    return _at(op.operands, i) if op is not None else None


def buffer_roots(v, seen=None) -> list:
    """Every allocation a memory-descriptor value may point into: through shared views, loop-carried
    values (``scf.for`` inits and yields), ``scf.if`` results (each branch's yield) and ``scf.while``
    values (inits and the ``do`` region's yields into the condition region; the condition's
    forwarded values into the ``do`` region and the results)."""
    seen = set() if seen is None else seen
    if v is None or id(v) in seen or len(seen) > 256:
        return []
    seen.add(id(v))
    out: list = []

    def add(*values):
        for x in values:
            for r in buffer_roots(x, seen):
                if all(r is not y for y in out):
                    out.append(r)

    if isinstance(v, OpResult):
        op = v.op
        if op.name == "ttg.local_alloc":
            return [op]
        if op.name in SHARED_VIEW:
            add(op.src)
        elif op.name == "scf.for":
            add(_at(op.init_args, v.index), _nth(_last(op.body), v.index))
        elif op.name == "scf.if":
            for r in op.regions:
                add(_nth(_last(r.entry), v.index))
        elif op.name == "scf.while" and op.regions:
            add(_nth(_last(op.regions[0].entry), v.index + 1))   # scf.condition(%c) %forwarded...
    elif isinstance(v, BlockArgument):
        owner = v.block.parent_op
        if owner is not None and owner.name == "scf.for" and v.index >= 1:
            add(_at(owner.init_args, v.index - 1), _nth(_last(owner.body), v.index - 1))
        elif owner is not None and owner.name == "scf.while" and len(owner.regions) == 2:
            before, after = owner.regions[0].entry, owner.regions[1].entry
            if v.block is before:
                add(_nth(owner, v.index), _nth(_last(after), v.index))
            elif v.block is after:
                add(_nth(_last(before), v.index + 1))
    return out


def _origin(v) -> str:
    """Where a value written to LDS comes from: global (a load, maybe through staging ops) or registers."""
    for _ in range(6):
        if not isinstance(v, OpResult):
            break
        if v.op.name in GLOBAL_LOAD:
            return "global"
        if v.op.name not in LAYOUT_CONVERSION:
            break
        v = v.op.operands[0]
    return "register"


def _views(v, out):
    while isinstance(v, OpResult) and v.op.name in SHARED_VIEW:
        if v.op not in out:
            out.append(v.op)
        v = v.op.operands[0]


def _trips(module, scratch, why, findings) -> list[dict]:
    trips: list[dict] = []
    buffers: dict = {}

    def buffer(root) -> dict:
        return buffers.setdefault(id(root), {"root": root, "writes": [], "reads": [], "views": [], "mma": []})

    ops = list(module.walk())
    for op in ops:
        n = op.name
        if n == "ttg.local_alloc":
            entry = buffer(op)
            if op.operands:
                entry["writes"].append(op)
        elif n in LOCAL_STORE or n in ASYNC_COPY:
            for root in buffer_roots(op.dst):
                buffer(root)["writes"].append(op)
        elif n in LOCAL_LOAD or n in DOT:
            for v in (op.operands[:1] if n in LOCAL_LOAD else op.operands[:2]):
                if isinstance(v.type, MemDescType):
                    for root in buffer_roots(v):
                        entry = buffer(root)
                        entry["reads" if n in LOCAL_LOAD else "mma"].append(op)
                        _views(v, entry["views"])
    for entry in buffers.values():
        writes, reads, mma = entry["writes"], entry["reads"], entry["mma"]
        if not writes or not (reads or mma):
            continue
        origins = {("global" if w.name in ASYNC_COPY else _origin(w.operands[0])) for w in writes}
        transposes = [v for v in entry["views"] if v.name == "ttg.memdesc_trans"]
        if mma and not reads:
            kind, what = "lds-operand", "read directly by the MMA from shared memory"
        elif origins == {"register"}:
            kind, what = "lds-round-trip", "a register value written to LDS and read back into registers"
        else:
            kind, what = "lds-staging", "global data staged in LDS (pipelined load) and read into registers"
        trips.append(_trip(kind, what, writes, reads + mma, transposes,
                           str(entry["root"].result.type) if entry["root"].results else ""))
    # old syntax: convert_layout to a shared-encoded tensor (write), shared views, convert back (read)
    for op in ops:
        if op.name != CONVERT or not op.results:
            continue
        if is_shared_tensor(op.result.type) and not is_shared_tensor(op.src.type):
            reads = []
            views: list[Operation] = []
            _old_syntax_reads(op.result, reads, views)
            if reads:
                trips.append(_trip("lds-round-trip", "a register value converted into shared memory and back (old "
                                   "syntax: a convert to a #shared encoding is an LDS write)", [op], reads, views,
                                   str(op.result.type)))
    for n, t in enumerate(trips, 1):
        t["trip"] = n
        findings.append(_finding(t["kind"], t["_writes"][0], f"trip #{n}: {t['detail']}", trip=n))
        for r in t["_reads"]:
            across_k = non_k_contiguous(r)
            if across_k:
                findings.append(_finding("lds-non-k-contiguous", r, f"trip #{n}: {ref(r)} {across_k}", trip=n))
    for op in ops:   # converts through LDS scratch (decided by Triton)
        if op.name != CONVERT or not op.results:
            continue
        src, dst = op.src.type, op.result.type
        if is_shared_tensor(src) or is_shared_tensor(dst):
            continue   # old-syntax LDS write/read, reported as a trip
        if scratch is None:
            kind, decided = "convert-undecided", f"undecided ({why})"
        elif id(op) in scratch:
            kind, decided = "convert-through-lds", "through LDS scratch (Triton allocated it shared memory)"
        else:
            continue   # register-only or warp-shuffle conversion: no LDS
        findings.append(_finding(kind, op, f"{ref(op)} {_layout_text(src)} -> {_layout_text(dst)}: {decided}"))
    return trips


def non_k_contiguous(read: Operation) -> str | None:
    """Why a ``local_load`` into a dot operand reads across K, or None: the shared layout it reads
    (after any ``memdesc_trans``) has a fastest dimension other than the operand's K (A: dim 1, B:
    dim 0), so each lane's K-run is strided in LDS -- a transposing read (``ds_read_b64_tr`` on
    gfx950, ``ldmatrix.trans`` on NVIDIA) or narrow reads. None where the shared layout has no
    ``order`` irlab reads (padded, linear) or the load is no dot operand."""
    if read.name not in LOCAL_LOAD or not read.results or not read.operands:
        return None
    dst, src = read.result.type, read.operands[0].type
    lay = dst.layout if isinstance(dst, TensorType) else None
    if not isinstance(dst, TensorType) or lay is None or lay.kind != "dot_op" or not isinstance(src, MemDescType) \
            or src.layout is None:
        return None
    rank, op_idx = len(dst.shape), lay.get("opIdx")
    order = src.layout.params.get("order")
    if op_idx not in (0, 1) or rank < 2 or not isinstance(order, (list, tuple)) or len(order) != rank:
        return None
    k = rank - 1 if op_idx == 0 else rank - 2
    if order[0] == k:
        return None
    name = "A" if op_idx == 0 else "B"
    return (f"reads dot operand {name} (opIdx {op_idx}) from a shared layout of order {list(order)}: its fastest "
            f"dimension is {order[0]}, not K (dim {k}) -- a non-K-contiguous operand, read with a transposing LDS "
            "read or narrow reads")


def _trip(kind, what, writes, reads, transposes, buffer_text) -> dict:
    t = {"kind": kind, "write": [ref(w) for w in writes], "read": [ref(r) for r in reads],
         "through": [ref(v) for v in transposes], "buffer": buffer_text,
         "_writes": writes, "_reads": reads, "_transposes": transposes}
    t["detail"] = (f"{what}: {', '.join(t['write'])} -> " + (f"[{', '.join(t['through'])}] -> " if transposes else "")
                   + f"{', '.join(t['read'])}" + (f" (buffer {buffer_text})" if buffer_text else ""))
    return t


def _old_syntax_reads(v, reads, views, depth=0):
    if depth > 8:
        return
    for u in v.uses:
        op = u.op
        if op.name == "tt.trans" and is_shared_tensor(op.result.type):
            views.append(op)
            _old_syntax_reads(op.result, reads, views, depth + 1)
        elif op.name == CONVERT and not is_shared_tensor(op.result.type):
            reads.append(op)


def transposable_writes(module) -> list[dict]:
    """An ``in-thread-transposable`` finding per dot operand (per group of LDS writes) whose LDS
    write in-thread transpose removes: the same operands upstream's pass rewrites."""
    out = []
    for e in operand_writes(module):
        if not e["applies"]:
            continue
        read, writes, loads = e["op"], e["writes"], e["loads"]
        lay = loads[0].result.type.layout
        out.append(_finding("in-thread-transposable", writes[0] if writes else read,
                            f"operand {e['operand']} (read by {ref(read)}) is loaded from global memory with its "
                            f"fastest dimension {lay.order[0]} (not K) and written to LDS by "
                            f"{', '.join(ref(w) for w in writes)}: an LDS access across K that in-thread "
                            "transpose removes (a K x M/N tile a lane, transposed in registers, written "
                            "K-contiguous; the in-thread-transpose pass)",
                            operand=e["operand"], op_idx=e["op_idx"]))
    return out


# --------------------------------------------------------------------------------------------------
# transposes

def _transposes(module, scratch, findings):
    for op in module.walk():
        n = op.name
        if n == "tt.trans" and op.results:
            shared = is_shared_tensor(op.src.type)
            why = ("shared-to-shared: only the addresses change (old syntax)" if shared else
                   "on registers: lowers to nothing, the result layout is the permuted source layout")
            findings.append(_finding("transpose", op, f"{ref(op)} order {_order_text(op)}: free view -- {why}",
                                     classification="free view"))
            users = op.result.users
            # on registers, a convert right after the transpose moves the data the transpose avoided moving
            if len(users) == 1 and users[0].name == CONVERT and not shared and not is_shared_tensor(users[0].result.type):
                findings.append(_finding("transpose-then-convert", op, f"{ref(op)} is immediately converted by "
                                         f"{ref(users[0])}: the data moves in the convert; the transpose could be "
                                         "folded into it"))
        elif n == "ttg.memdesc_trans":
            findings.append(_finding("transpose", op, f"{ref(op)} order {_order_text(op)}: free view -- permutes "
                                     "shared-memory offsets, no data moves", classification="free view"))
        elif op.name == CONVERT and op.results:
            s, d = getattr(op.src.type, "layout", None), getattr(op.result.type, "layout", None)
            if s is not None and d is not None and s.kind == d.kind == "blocked" and s.order and d.order \
                    and s.order != d.order:
                where = "through LDS" if scratch is not None and id(op) in scratch else (
                    "in registers/shuffles" if scratch is not None else "LDS use undecided")
                findings.append(_finding("transpose", op, f"{ref(op)} changes layout order {s.order} -> {d.order}: a "
                                         f"data-moving transpose ({where})", classification="data movement"))


def cancelling_pair(t2: Operation):
    """(first transpose, elementwise/broadcast ops between them) if ``t2`` undoes an earlier
    transpose of the same kind, else None."""
    chain: list[Operation] = []
    v = t2.operands[0] if t2.operands else None
    while isinstance(v, OpResult) and len(chain) < 8:
        op = v.op
        if op.name == t2.name:
            return (op, list(reversed(chain))) if cancels(order(op), order(t2)) else None
        if (is_elementwise(op) or op.name in BROADCAST) and len(op.result.uses) == 1:
            tensors = [x for x in op.operands if isinstance(x.type, TensorType) and not is_splat(x)]
            if len(tensors) != 1:
                return None
            chain.append(op)
            v = tensors[0]
            continue
        return None
    return None


def cancelling_pairs(module) -> list[dict]:
    out = []
    for t2 in [op for op in module.walk() if op.name in TRANSPOSE and op.parent is not None]:
        hit = cancelling_pair(t2)
        if hit is None:
            continue
        t1, chain = hit
        between = f" across {len(chain)} elementwise/broadcast op(s)" if chain else ""
        out.append(_finding("cancelling-transposes", t2, f"{ref(t1)} and {ref(t2)} cancel{between}; the "
                            "cancel-transposes pass removes such pairs"))
    return out


def _absorbable(trips, findings):
    """Two LDS trips on one value chain, joined only by elementwise/broadcast ops (or, in a fragment,
    following each other in program order), one of them carrying a transpose."""
    for a in trips:
        for b in trips:
            if a is b or not a["_reads"] or not b["_writes"] or not (a["_transposes"] or b["_transposes"]):
                continue
            link = _linked(a["_reads"], b["_writes"])
            if link is None:
                continue
            which, other = (a, b) if a["_transposes"] else (b, a)
            t = which["_transposes"][0]
            findings.append(_finding("absorbable-trip", t, f"trips #{a['trip']} and #{b['trip']} are on one value "
                                     f"chain ({link}); the transpose {ref(t)} in trip #{which['trip']} could be done by "
                                     f"trip #{other['trip']}'s write and read, saving a trip through LDS",
                                     trips=[a["trip"], b["trip"]]))


def _linked(reads, writes) -> str | None:
    targets = {id(w) for w in writes}
    for r in reads:
        if not r.results:
            continue
        frontier, seen, steps = [r.result], set(), 0
        while frontier and steps < 64:
            v = frontier.pop()
            steps += 1
            for u in v.uses:
                if id(u.op) in targets:
                    return "joined by elementwise ops"
                if (is_elementwise(u.op) or u.op.name in BROADCAST or u.op.name == CONVERT) and u.op.results \
                        and id(u.op) not in seen:
                    seen.add(id(u.op))
                    frontier.append(u.op.result)
    # a fragment hides the values in between; fall back to program order (same block, or top level)
    r0, w0 = reads[-1], writes[0]
    m = r0.module
    if m is None or not m.fragment or r0.parent is not w0.parent:
        return None
    ops = r0.parent.ops if r0.parent is not None else m.ops
    if ops.index(r0) < ops.index(w0):
        return "one follows the other in program order; the values between are defined outside this fragment"
    return None


def _order_text(op: Operation) -> str:
    o = order(op)
    if o is not None:
        return str(o)
    t = op.operands[0].type if op.operands else None
    return "[1, 0] (implicit: the old tt.trans swapped the two dims)" if getattr(t, "rank", 0) == 2 else "?"


def _layout_text(t) -> str:
    """A tensor's encoding as written; any other type (a memdesc, which only a convert Triton's
    verifier rejects has) in full."""
    if isinstance(t, TensorType):
        return t.encoding_text or str(t)
    return str(t)
