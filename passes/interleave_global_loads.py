"""interleave-global-loads: the instruction schedule of AMD's "Triton on AMD GPUs" talk.

In a stream-pipelined GEMM loop (``tt.load A; tt.load B; local_load A; local_load B; tt.dot;
local_store A; local_store B``) every global load is issued at once and the memory system
congests. The talk sinks the *second* global load below the ``local_load``s, so the loads go
out in two groups around the LDS reads; it keeps the loads in the order of their
``local_store`` uses and does not sink both (the backend would push them too close to the
stores). AMD measured 2-22% on MI300X.

The pass only moves a load down within its loop body, and only when nothing it could be
reordered against sits in between: no barrier or scheduling barrier, no store or atomic, no op
with regions, no op that uses the load, and no other global load (two global loads never swap).
Loops with more than one dot, and scalar or 1-D loads, are left alone unless an option says
otherwise. Every loop gets a remark (moved) or a note (why not).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from irlab.ir import Operation, TensorType
from irlab.ir.rewrite import describe
from irlab.opinfo import (ASYNC_COPIES, ATOMICS, BARRIERS, DOTS, GLOBAL_LOADS, LOCAL_LOADS, STAGING, STORES,
                          base_name)
from irlab.pass_api import ModulePass, PassContext, option
from irlab.registry import register

PLACEMENTS = ("after-local-loads", "before-dot")


@register
@dataclass(frozen=True)
class InterleaveGlobalLoads(ModulePass):
    name: ClassVar[str] = "interleave-global-loads"
    summary: ClassVar[str] = "sink the second global load of a pipelined GEMM loop below its local_loads (the talk's schedule)"

    placement: str = option("after-local-loads", "where the load goes: after the last local_load feeding the "
                            "dot (the talk's schedule) or immediately before the dot", PLACEMENTS)
    loads: tuple[int, ...] = option((1,), "which of the loop's staged global loads to sink, 0-based in the "
                                    "order of their local_store uses (default 1: the second), e.g. 1:2")
    min_non_k: int = option(0, "leave loops alone whose dot's M or N tile is smaller than this "
                            "(AMD's own pass used 128)")
    min_k: int = option(0, "leave loops alone whose dot's K tile is smaller than this (AMD's own pass used 64)")
    allow_multi_dot: bool = option(False, "also act on loops with more than one dot")
    allow_small_loads: bool = option(False, "also move scalar and 1-D loads")

    def run(self, ctx: PassContext) -> None:
        loops = ctx.module.find("scf.for")
        if not loops:
            ctx.note("no candidate loop: the module has no scf.for")
            return
        for loop in loops:
            self.run_loop(ctx, loop)

    # ------------------------------------------------------------------------------------------
    def run_loop(self, ctx: PassContext, loop: Operation) -> None:
        line = loop.line
        where = f"loop at line {line}"
        if not loop.regions or not loop.regions[0].blocks:
            return
        body = loop.regions[0].blocks[0]
        ops = body.ops
        if any(o.name == "scf.for" for o in loop.walk() if o is not loop):
            ctx.note(f"no candidate loop: {where} contains another loop (only innermost loops are scheduled)", loop)
            return
        loads = [o for o in ops if o.name in GLOBAL_LOADS]
        if not loads:
            if any(o.name in ASYNC_COPIES for o in ops):
                ctx.note(f"no candidate loop: {where} loads through asynchronous copies straight into shared "
                         "memory (ttg.async_copy_global_to_local); the schedule is about register-staged loads", loop)
            else:
                ctx.note(f"no candidate loop: {where} has no global loads in its body", loop)
            return
        dots = [o for o in ops if o.name in DOTS]
        if not dots:
            ctx.note(f"no candidate loop: {where} has no dot", loop)
            return
        if len(dots) > 1 and not self.allow_multi_dot:
            ctx.note(f"not moved: {where} has {len(dots)} dots (allow_multi_dot=true to act anyway)", loop)
            return
        dot = dots[-1]
        feeding = [o for o in ops if base_name(o) in LOCAL_LOADS and o.results
                   and any(u.op in dots for u in o.results[0].uses)]
        if not feeding:
            ctx.note(f"no candidate loop: {where}: the dot's operands do not come from ttg.local_load in this loop "
                     "(not a stream-pipelined loop)", loop)
            return
        staged = self._staged_loads(loads, body)
        if not staged:
            ctx.note(f"no candidate loop: {where}: no global load is staged into shared memory through "
                     "ttg.local_store", loop)
            return
        order = [ld for ld, _ in staged]
        if [body.index(ld) for ld in order] != sorted(body.index(ld) for ld in order):
            ctx.note(f"not moved: {where}: the global loads are not in the order of their local_store uses; "
                     "the pass does not swap global loads", loop)
            return
        # tile-size thresholds, from the dot's operand shapes
        a_t, b_t = dot.operand_types[0], dot.operand_types[1]
        if isinstance(a_t, TensorType) and isinstance(b_t, TensorType) and (self.min_non_k or self.min_k):
            m, k, n = a_t.shape[0], a_t.shape[1], b_t.shape[1]
            if min(m, n) < self.min_non_k or k < self.min_k:
                ctx.note(f"not moved: {where}: tile M={m} N={n} K={k} is below the threshold "
                         f"(min_non_k={self.min_non_k}, min_k={self.min_k})", loop)
                return
        anchor = feeding[-1] if self.placement == "after-local-loads" else dot
        for pos in sorted(set(self.loads)):
            if pos >= len(order):
                ctx.note(f"not moved: {where} stages {len(order)} global load(s); there is no load #{pos} "
                         f"(0-based) to sink", loop)
                continue
            self._sink(ctx, body, order[pos], anchor, dot, where, moved_before=[order[i] for i in sorted(self.loads)
                                                                                 if i < pos and i < len(order)])

    def _staged_loads(self, loads, body):
        """(load, local_store) pairs for loads whose value reaches a local_store in this block,
        directly or through layout-only ops (amdg.in_thread_transpose, convert_layout)."""
        out = []
        for ld in loads:
            frontier, store = [ld.results[0]] if ld.results else [], None
            for _ in range(4):
                nxt = []
                for v in frontier:
                    for u in v.users:
                        if u.parent is not body:
                            continue
                        if base_name(u) == "ttg.local_store" and store is None:
                            store = u
                        elif u.name in STAGING and u.results:
                            nxt.append(u.results[0])
                if store is not None or not nxt:
                    break
                frontier = nxt
            if store is not None:
                out.append((ld, store))
        out.sort(key=lambda pair: body.index(pair[1]))
        return out

    def _sink(self, ctx, body, load, anchor, dot, where, moved_before):
        if body.index(load) > body.index(anchor):
            ctx.note(f"nothing to do: {describe(load)} already comes after {describe(anchor)} in {where}", load)
            return
        t = load.result.type
        if not self.allow_small_loads and (not isinstance(t, TensorType) or t.rank < 2):
            ctx.note(f"not moved: {describe(load)} loads a {'scalar' if not isinstance(t, TensorType) else '1-D tensor'}"
                     " (allow_small_loads=true to move it)", load)
            return
        # the anchor of the move: after the anchor (or, before the dot, directly before it), after any
        # load this pass already sank there, so sunk loads keep their order
        between = body.ops[body.index(load) + 1: body.index(anchor) + (1 if anchor is not dot else 0)]
        for op in between:
            if op.name in GLOBAL_LOADS and op not in moved_before:
                ctx.note(f"not moved: sinking {describe(load)} would swap it with {describe(op)}; global loads keep "
                         "the order of their local_store uses", load)
                return
            why = self._blocks(op, load)
            if why:
                ctx.note(f"not moved: {describe(load)} would cross {describe(op)}, {why}", load)
                return
        after = anchor is not dot
        side = "after" if after else "before"
        target = anchor
        if after:
            # after the anchor and after loads already sunk there
            i = body.index(anchor)
            while i + 1 < len(body.ops) and body.ops[i + 1] in moved_before:
                i += 1
            target = body.ops[i]
        why = ctx.rewriter.check_move(load, target, after=after)
        if why:
            ctx.note(f"not moved: {why}", load)
            return
        move = ctx.rewriter.move_after if after else ctx.rewriter.move_before
        if not move(load, target, reason=f"{self.placement} in {where}"):
            ctx.note(f"nothing to do: {describe(load)} already sits {side} {describe(target)} in {where}", load)
            return
        ctx.remark(f"sank {describe(load)} {side} {describe(target)} ({self.placement}) in {where}", load)

    @staticmethod
    def _blocks(op: Operation, load: Operation) -> str | None:
        if op.name in BARRIERS:
            return "a barrier"
        if op.name in STORES:
            return "a store"
        if op.name in ATOMICS:
            return "an atomic"
        if op.regions:
            return "an op with regions (its effects are not analyzed)"
        if any(u.op is op for r in load.results for u in r.uses):
            return "which uses the load"
        return None
