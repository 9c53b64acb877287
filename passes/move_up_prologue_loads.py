"""move-up-prologue-loads: issue a software pipeline's prologue loads as early as their block allows.

AMD's stream pipeliner peels the first iterations' global loads into the loop's prologue and marks
them (``amd.pipeliner_part = "prologue"``). Issued early, they overlap everything the prologue does
before the loop (address math, shared-memory allocation, the other operand's load); issued where
the pipeliner left them, they wait for it. Upstream Triton's MoveUpPrologueLoads (3.9's AMD
``make_ttgir``, the successor of the prologue hoisting of 3.6's ReorderInstructions) moves each
marked load, with the address and mask computation it needs, to the earliest point of its block.

This pass does the same with irlab's effect model. A load moves up, carrying the ops of its
block that compute its operands, to right after the last of:

* the op that defines its address (the pointer tensor; a buffer load's base and offsets): the
  address computation stays where it is, as upstream keeps it;
* a loop (``scf.for``, ``scf.while``): a prologue load never moves above an earlier loop;
* an op the load may not cross: a barrier, an atomic, a write to global memory, a call or an op
  irlab does not know, a scheduling pin (:mod:`irlab.ir.effects`). Shared-memory ops do not stop
  it: global and shared memory are different memories
  (:func:`irlab.ir.effects.separate_memories`), so a load moves above ``ttg.local_alloc`` and
  ``ttg.local_store``.

Loads are taken last to first, so moved loads keep their order. It leaves alone, saying why, a
volatile load, a load whose operands come from an op with effects (only pure address and mask
math moves with it), and a load that already sits as early as it can. ``select=staged`` also
takes unmarked prologue loads, for IR where the mark is gone (after buffer-op conversion): a
global load outside loops whose value a ``ttg.local_store`` or ``ttg.local_alloc`` of its block
stages into shared memory before a loop of that block.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from irlab.ir import Operation, RewritePattern, describe, effects, is_pure
from irlab.ir.effects import conflict, separate_memories, what_it_does
from irlab.ir.queries import backward_slice
from irlab.ir.traits import GLOBAL_LOAD, LAYOUT_CONVERSION, LOCAL_STORE
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register

MARK = "amd.pipeliner_part"
LOOPS = ("scf.for", "scf.while")
FUNCTIONS = ("tt.func", "func.func")
SELECT = ("marked", "staged")


def is_marked(load: Operation) -> bool:
    """Whether the stream pipeliner marked ``load`` as part of a peeled stage."""
    return load.attr(MARK) is not None


def is_staged_prologue_load(load: Operation) -> bool:
    """A global load outside loops whose value its block stores into shared memory (directly or
    through layout conversions) and which a loop of that block follows: a pipeline's prologue load
    in IR that lost the pipeliner's mark."""
    if load.enclosing(LOOPS) is not None or load.parent is None:
        return False
    block = load.parent
    after = block.ops[block.index(load) + 1:]
    if not any(o.name in LOOPS for o in after):
        return False
    frontier = [load.result]
    for _ in range(4):
        users = [u for v in frontier for u in v.users if u.parent is block]
        if any(u.name in LOCAL_STORE or u.name == "ttg.local_alloc" for u in users):
            return True
        frontier = [u.result for u in users if u.name in LAYOUT_CONVERSION]
    return False


def address_operands(load: Operation) -> list:
    """The values a load's address is made of: its pointers, or a buffer load's base and offsets."""
    named = load.named_operands()
    return [named[k] for k in ("ptr", "offsets") if named.get(k) is not None]


def boundary(load: Operation, moving: set) -> tuple[int, str]:
    """Index of the last op before ``load`` in its block that the load must stay below (-1: the
    block's start), and what that op is."""
    block = load.parent
    assert block is not None   # a load of a function's body sits in a block
    address = {id(v) for v in address_operands(load)}
    mine = effects(load)
    at, why = -1, ""
    for i, o in enumerate(block.ops[:block.index(load)]):
        if any(id(r) in address for r in o.results):
            at, why = i, f"{describe(o)}, which computes its address"
        elif o.name in LOOPS:
            at, why = i, f"the loop {describe(o)}"
        elif id(o) not in moving and conflict(mine, effects(o)) and not separate_memories(load, o):
            at, why = i, f"{describe(o)}, which {what_it_does(o)}"
    return at, why


@dataclass
class MoveUpLoads(RewritePattern):
    """In one function, move every selected load up, last to first."""
    opts: "MoveUpPrologueLoads"
    ctx: PassContext
    ops: ClassVar[tuple[str, ...]] = FUNCTIONS
    done: set = field(default_factory=set)

    def match_and_rewrite(self, func: Operation, rw) -> None:
        if id(func) in self.done:
            return None
        self.done.add(id(func))
        pick = is_marked if self.opts.select == "marked" else (lambda o: is_marked(o) or is_staged_prologue_load(o))
        loads = [o for o in func.walk() if o.name in GLOBAL_LOAD and pick(o)]
        if not loads:
            what = f"carries {MARK}" if self.opts.select == "marked" else "is a prologue load"
            hint = (" (the stream pipeliner's mark is gone once loads become buffer ops: run this pass where "
                    "Triton runs its own, or select=staged)") if self.opts.select == "marked" else ""
            return rw.notify_match_failure(func, f"no candidate: no global load in this function {what}{hint}")
        for load in reversed(loads):
            self.move_up(load, rw)

    def move_up(self, load: Operation, rw) -> None:
        if load.attr("isVolatile") is True:
            return self.ctx.note(f"not moved: {describe(load)} is volatile (it orders itself against other "
                                 "threads' memory accesses)", load)
        block = load.parent
        assert block is not None   # a load found inside the function sits in one of its blocks
        feeding = backward_slice(load, block)
        impure = next((o for o in feeding if not is_pure(o)), None)
        start, why = boundary(load, {id(o) for o in feeding} if impure is None else set())
        movers = [o for o in feeding if block.index(o) > start] + [load]
        stuck = next((o for o in movers[:-1] if not is_pure(o)), None)
        if stuck is not None:
            return self.ctx.note(f"not moved: {describe(load)} uses a value of {describe(stuck)}, which "
                                 f"{what_it_does(stuck)} (only pure address and mask computation moves with "
                                 "a load)", load)
        if block.ops[start + 1:start + 1 + len(movers)] == movers:
            where = f"right after {why}" if why else "at the start of its block"
            return self.ctx.note(f"nothing to do: {describe(load)} already sits {where}", load)
        anchor = block.ops[start] if start >= 0 else None
        for op in movers:
            if anchor is None:
                rw.move_before(op, block.ops[0], reason="prologue load moved up", across_memories=True)
            else:
                rw.move_after(op, anchor, reason="prologue load moved up", across_memories=True)
            anchor = op
        carried = f", with {len(movers) - 1} op(s) of its address and mask computation" if len(movers) > 1 else ""
        where = f"right after {why}" if why else "the start of its block"
        self.ctx.remark(f"moved {describe(load)} up to {where}{carried}", load)


@register
class MoveUpPrologueLoads(ModulePass):
    name: ClassVar[str] = "move-up-prologue-loads"
    summary: ClassVar[str] = ("move a pipeline's prologue loads (with their address and mask math) as early as "
                              "their block allows (upstream AMD's MoveUpPrologueLoads)")

    select: str = option("marked", f"marked: loads carrying {MARK} (the stream pipeliner's mark), as upstream; "
                         "staged: also unmarked global loads staged into shared memory before a loop", SELECT)

    def run(self, ctx: PassContext) -> None:
        if not any(o.name in GLOBAL_LOAD for o in ctx.module.walk()):
            ctx.note("no candidate: the module has no global load")
            return
        ctx.apply_patterns(MoveUpLoads(self, ctx))
