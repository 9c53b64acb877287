"""pin-order: put chosen ops of a loop body in a given order, and pin that order through the
AMDGPU scheduler.

    irlab pass 'pin-order{order=global_load:0,local_load,global_load:1,dot}' kernel.ttgir

``order`` lists selectors, comma-separated: a kind (``global_load``, ``local_load``,
``local_store``, ``dot``, ``async_copy``: the op categories of :mod:`irlab.ir.traits`) or a full
op name (``amdg.buffer_load``), optionally
``:k`` for the k-th such op of the loop body (0-based, in the body's order before the pass; -1
is the last); a terminator (``scf.yield``) or an op with regions (``scf.for``, ``scf.if``) is no
selector. A selector without ``:k`` takes every such op, in their order. In every innermost
``scf.for`` where each selector finds its ops, the pass reorders the body so that each
selector's ops come before the next selector's: the selected ops trade places among their own
positions, everything else stays, and the pure ops computing a moved op's operands move up with
it. Then, on AMD targets, it writes ``rocdl.sched.barrier MASK`` after each selector's last op.

What it refuses, naming the ops: an order that would use a value before it is defined (a
selected op above an op with effects that computes its operand, or below its own user), and any
two ops trading places whose effects conflict by the rules of :mod:`irlab.ir.effects` (a
memory op and a write, anything and a barrier, an atomic or a volatile access, anything and an
existing scheduling pin).

What the pins force, and what they do not:

* With ``mask=0`` nothing crosses a pin and each pin ends a scheduling region: the machine
  scheduler keeps the selected ops' instructions in the given order. The price: code on the two
  sides of a pin can no longer overlap (a dot's MFMAs cannot fill the latency of the loads
  pinned before them), and values produced early stay live longer (more VGPRs, lower occupancy).
* A nonzero ``mask`` lets those instruction classes cross (AMDGPU masks: 0x1 ALU, 0x2 VALU,
  0x4 SALU, 0x8 MFMA, 0x10 VMEM, 0x20 VMEM read, 0x40 VMEM write, 0x80 DS, 0x100 DS read,
  0x200 DS write, 0x400 transcendental, 0x800 LDS DMA) and keeps one region: ``mask=0x64F``
  (everything but global and LDS reads) orders the memory instructions and leaves the ALU and
  MFMAs free. The pass writes the mask the way the installed Triton reads it (``0`` in 3.6,
  ``none`` in 3.9).
* Async copies (``async_copy``) come with the ``ttg.async_commit_group`` that uses them and write
  LDS: an order that moves one past its commit group or past a ``local_load`` is refused (irlab
  does no alias analysis, so it cannot tell the pipeline's LDS buffers apart).
* Pins order whole TTGIR ops. They cannot split one op's instructions (a share of a dot's MFMAs
  before a load): that takes a ``rocdl.sched.group.barrier`` sequence with instruction counts
  (interleave-global-loads ``pin=groups``).
* They act on the machine scheduler only: LLVM IR passes before it may still move instructions
  without side effects (address arithmetic), and the ``s_waitcnt`` and ``s_barrier`` the
  backend adds follow from the order rather than being set by it.
* NVIDIA has no such pin (ptxas schedules SASS itself): there the pass reorders the TTGIR and
  warns that nothing is pinned.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Collection

from irlab.analysis import amdgpu_sched as sched
from irlab.ir import Effect, Operation, RewriteError, RewritePattern, describe, effects, is_pure
from irlab.ir.effects import conflict, what_it_does
from irlab.ir.traits import ASYNC_COPY, DOT, GLOBAL_LOAD, LOCAL_LOAD, LOCAL_STORE
from irlab.passkit.pass_api import ModulePass, PassContext, PassError, option
from irlab.passkit.registry import register

KINDS = {t.name: t for t in (GLOBAL_LOAD, LOCAL_LOAD, LOCAL_STORE, DOT, ASYNC_COPY)}
LOOPS = ("scf.for", "scf.while")
ORDERING = Effect.SYNC | Effect.SCHEDULE   # what a refusal names last: the op that orders the others
# ops a selector cannot name: a terminator ends the body and stays last; an op with regions (a
# loop, a branch, a function) is not one of the single ops of an innermost loop body
BRANCHES = ("cf.br", "cf.cond_br", "cf.switch", "llvm.br", "llvm.cond_br", "llvm.switch", "llvm.indirectbr",
            "llvm.resume", "llvm.unreachable", "ub.unreachable")
TERMINATOR_ENDINGS = ("yield", "return", "condition", "terminator", "in_parallel")
REGION_OPS = ("scf.for", "scf.while", "scf.if", "scf.execute_region", "scf.index_switch", "scf.forall",
              "scf.parallel", "scf.reduce", "tt.reduce", "tt.scan", "tt.map_elementwise", "tt.func", "func.func",
              "llvm.func", "gpu.func", "gpu.module", "gpu.launch", "gpu.warp_execute_on_lane_0", "gpu.all_reduce",
              "ttg.warp_specialize", "ttg.warp_specialize.partitions", "ttg.mask", "nvws.warp_group", "module",
              "builtin.module")


def unorderable(name: str) -> str | None:
    """Why ops named ``name`` cannot be put in an order (None if they can)."""
    if name in BRANCHES or name.rsplit(".", 1)[-1].endswith(TERMINATOR_ENDINGS):
        return "a terminator: it ends its block and always stays last"
    if name in REGION_OPS:
        return "an op with regions: pin-order orders the single ops of an innermost loop body"
    return None


@dataclass(frozen=True)
class Selector:
    """One entry of ``order``: the ops of a kind (or an op name), or the ``index``-th of them."""
    text: str
    names: Collection[str]   # a kind's Trait, or the one op name
    index: int | None

    @classmethod
    def parse(cls, text: str) -> "Selector":
        kind, _, idx = text.strip().partition(":")
        names: Collection[str]
        if kind in KINDS:
            names = KINDS[kind]
        elif "." in kind:
            why = unorderable(kind)
            if why is not None:
                raise ValueError(f"order: {kind!r} is {why}")
            names = (kind,)
        else:
            raise ValueError(f"order: unknown selector {text.strip()!r}; a kind ({', '.join(KINDS)}) or an op name "
                             "(amdg.buffer_load), with an optional :k")
        try:
            index = int(idx) if idx else None
        except ValueError:
            raise ValueError(f"order: {text.strip()!r}: the index after ':' must be an integer") from None
        return cls(text.strip(), names, index)

    def select(self, body) -> list[Operation]:
        ops = [o for o in body.ops if o.name in self.names]
        if self.index is None:
            return ops
        return [ops[self.index]] if -len(ops) <= self.index < len(ops) else []


def parse_order(text: str) -> tuple[Selector, ...]:
    parts = [p for p in text.split(",") if p.strip()]
    if len(parts) < 2:
        raise ValueError("order needs at least two selectors, e.g. order=global_load:0,local_load,global_load:1,dot")
    return tuple(Selector.parse(p) for p in parts)


def _operands(op: Operation):
    """Every value ``op`` and the ops nested in it use."""
    for inner in op.walk():
        yield from inner.operands


def plan(body, groups: list[list[Operation]]) -> tuple[list[Operation], list[Operation]]:
    """The body's new order: the selected ops, in group order, take the positions the selected
    ops held; the pure producers of a moved-up op's operands move up right before it. Returns
    (order, carried producers); RewriteError says why an order cannot be had."""
    ops = list(body.ops)
    wanted = [op for g in groups for op in g]
    slots = sorted(ops.index(op) for op in wanted)
    order = list(ops)
    for slot, op in zip(slots, wanted):
        order[slot] = op
    carried: list[Operation] = []
    changed = True
    while changed:
        changed = False
        pos = {id(o): i for i, o in enumerate(order)}
        for op in order:
            late = _late_producers(op, body, pos)
            if not late:
                continue
            stuck = next((p for p in late if not is_pure(p) or p in wanted), None)
            if stuck is not None:
                why = "" if stuck in wanted else f" and which cannot move up with it ({effects(stuck).describe()})"
                raise RewriteError(f"{describe(op)} uses a value of {describe(stuck)}, which the order puts after "
                                   f"it{why}")
            for p in late:
                order.remove(p)
            at = order.index(op)
            order[at:at] = sorted(late, key=ops.index)
            carried += [p for p in late if p not in carried]
            changed = True
            break
    return order, carried


def _late_producers(op: Operation, body, pos: dict) -> list[Operation]:
    """The ops of ``body`` that ``op`` depends on (transitively, within the body) and that
    ``pos`` places after it."""
    late, todo, seen = [], [op], {id(op)}
    while todo:
        cur = todo.pop()
        for v in _operands(cur):
            d = v.defining_op
            if d is None or d.parent is not body or id(d) in seen:
                continue
            seen.add(id(d))
            if pos[id(d)] > pos[id(op)]:
                late.append(d)
                todo.append(d)
    return late


def check_order(old: list[Operation], new: list[Operation], moving=()) -> str | None:
    """Why ``new`` may not replace ``old``: a value used before its definition, or two ops with
    conflicting effects trading places (named with the op of ``moving`` first or, when both or
    neither move, with the one that synchronizes or pins last). None if safe."""
    pos = {id(o): i for i, o in enumerate(new)}
    for op in new:
        for v in _operands(op):
            d = v.defining_op
            if d is not None and id(d) in pos and d is not op and pos[id(d)] > pos[id(op)]:
                return f"{describe(op)} would come before {describe(d)}, which defines {v.ref}"
    for i, a in enumerate(old):
        ea = effects(a)
        for b in old[i + 1:]:
            if pos[id(b)] < pos[id(a)]:
                eb = effects(b)
                if conflict(ea, eb):
                    mover, other = (b, a) if b in moving and a not in moving else (a, b)
                    if (mover in moving) == (other in moving) and effects(mover) & ORDERING \
                            and not effects(other) & ORDERING:
                        mover, other = other, mover
                    return (f"{describe(mover)} ({effects(mover).describe()}) would cross {describe(other)}, "
                            f"which {what_it_does(other)}")
    return None


@dataclass
class PinLoopOrder(RewritePattern):
    """In an innermost loop where every selector finds its ops, put them in order and pin it."""
    opts: "PinOrder"
    ctx: PassContext
    ops: ClassVar[tuple[str, ...]] = ("scf.for",)
    done: set = field(default_factory=set)   # loops already ordered: indices refer to the body before

    def match_and_rewrite(self, loop: Operation, rw) -> None:
        if id(loop) in self.done:
            return None
        body = loop.body
        assert body is not None   # an scf.for always has its body region
        if any(x.name in LOOPS for x in loop.walk() if x is not loop):
            return rw.notify_match_failure(loop, "not an innermost loop (it contains another loop)")
        groups = [s.select(body) for s in self.opts.selectors]
        missing = [s for s, g in zip(self.opts.selectors, groups) if not g]
        if missing:
            s = missing[0]
            have = sum(o.name in s.names for o in body.ops)
            return rw.notify_match_failure(loop, f"not reordered: no op matches {s.text!r} in this loop body "
                                                 f"(it has {have} op(s) of that kind)")
        flat = [op for g in groups for op in g]
        twice = next((op for op in flat if flat.count(op) > 1), None)
        if twice is not None:
            return rw.notify_match_failure(twice, f"not reordered: {describe(twice)} is chosen by two selectors")
        old = list(body.ops)
        try:
            new, carried = plan(body, groups)
        except RewriteError as e:
            return rw.notify_match_failure(loop, f"refused: {e}")
        why = check_order(old, new, moving=flat + carried)
        if why is not None:
            return rw.notify_match_failure(loop, f"refused: {why}")
        self.done.add(id(loop))
        try:
            moved = self.realize(body, new, rw)
        except RewriteError as e:   # check_order and the rewriter apply the same rules: a bug if reached
            raise PassError(f"pin-order: the rewriter refused a move the order check allowed: {e}") from None
        pins = self.pin(body, groups, rw) if self.opts.pin != "none" else 0
        if not moved and not pins:
            return rw.notify_match_failure(loop, "nothing to do: the body is in that order"
                                                 + (" and pinned" if self.opts.pin != "none" else ""))
        said = ", ".join(f"{s.text} ({describe(g[0]) if len(g) == 1 else f'{len(g)} ops'})"
                         for s, g in zip(self.opts.selectors, groups))
        extra = f", {len(carried)} producer(s) moved up with them" if carried else ""
        pinned = f"; {pins} rocdl.sched.barrier {self.opts.mask} pin(s)" if pins else ""
        self.ctx.remark(f"ordered {said}: {moved} op(s) moved{extra}{pinned}", loop)

    @staticmethod
    def realize(body, new: list[Operation], rw) -> int:
        """Move ops until the body reads ``new``: each op moves up, crossing only ops that the
        order puts after it (the pairs :func:`check_order` allowed)."""
        moved = 0
        for k, op in enumerate(new):
            if body.ops[k] is not op:
                rw.move_before(op, body.ops[k], reason="pin-order")
                moved += 1
        return moved

    def pin(self, body, groups, rw) -> int:
        if not sched.pins_apply(self.ctx):
            if not any(d.severity == "warning" for d in self.ctx.diagnostics):
                self.ctx.warning(f"nothing pinned: scheduling pins are AMDGPU's; the module is for "
                                 f"{self.ctx.module.target or 'an unknown target'}, whose assembler schedules "
                                 "freely (the TTGIR order is all this pass sets there)")
            return 0
        added = 0
        for g in groups[:-1]:
            last = max(g, key=body.index)
            nxt = body.ops[body.index(last) + 1]
            if not sched.is_pin(nxt, self.opts.mask):
                pin = sched.sched_barrier(self.opts.mask, keywords=self.ctx.services.sched_masks_are_keywords())
                rw.insert_after(last, pin, reason="pin-order")
                added += 1
        return added


@register
class PinOrder(ModulePass):
    name: ClassVar[str] = "pin-order"
    runs_on: ClassVar[tuple] = ("ttgir",)
    summary: ClassVar[str] = "order chosen ops of a loop body and pin the order through the AMDGPU scheduler"

    order: str = option("", "selectors in the wanted order, e.g. global_load:0,local_load,global_load:1,dot "
                        f"(kinds: {', '.join(KINDS)}, or an op name; :k picks the k-th)")
    pin: str = option("sched-barrier", "sched-barrier: a rocdl.sched.barrier after each selector's ops (AMD); "
                      "none: reorder the TTGIR only", ("sched-barrier", "none"))
    mask: int = option(0, "instruction classes allowed across the pins (AMDGPU sched_barrier mask; 0: nothing, "
                       "and each pin ends a scheduling region)")
    if TYPE_CHECKING:   # set by __post_init__, not an option: declared here for the checker only
        selectors: tuple[Selector, ...]

    def __post_init__(self):
        object.__setattr__(self, "selectors", parse_order(self.order))
        if not 0 <= self.mask <= sched.ALL_MASK_BITS:
            raise ValueError(f"mask must be between 0 and {sched.ALL_MASK_BITS:#x}, not {self.mask:#x}")

    def run(self, ctx: PassContext) -> None:
        if not ctx.module.find("scf.for"):
            ctx.note("no candidate loop: the module has no scf.for")
            return
        ctx.apply_patterns(PinLoopOrder(self, ctx))
