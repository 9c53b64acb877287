"""interleave-global-loads: the instruction schedule of AMD's "Triton on AMD GPUs" talk.

In a stream-pipelined GEMM loop (``tt.load A; tt.load B; local_load A; local_load B; tt.dot;
local_store A; local_store B``) every global load is issued at once and the memory system
congests. The talk sinks the *second* global load below the ``local_load``s, so the loads go out
in two groups around the LDS reads, keeping the loads in the order of their ``local_store`` uses.

The pass moves a load only down its own loop body and only through the rewriter, which refuses a
move that would cross an op whose effects conflict (a barrier, a store, an atomic, a call, an op
it does not know) or break a dependence; the note names that op. Presets:

* ``talk`` (default): sink load #1 after the last ``local_load`` feeding the dot.
* ``upstream``: the conditions of AMD's own sinkSecondLoad (Triton 3.6's ReorderInstructions):
  exactly two global loads and one dot in the loop, an M and N tile of at least 128 and a K tile
  of at least 64, the second load placed immediately before the dot.

On AMD the new TTGIR order alone does not reach the AMDGCN (the backend's scheduler rebuilds the
loop; on gfx942 the assembly is identical to the un-interleaved one). ``pin`` keeps it there:
``barriers`` (``rocdl.sched.barrier 0`` around the sunk load: the TTGIR order verbatim, in three
scheduling regions) or ``groups`` (a ``rocdl.sched.group.barrier`` sequence after the dot, sized
from the layouts: the talk's AMDGCN); see :func:`irlab.analysis.amdgpu_sched.pin_sunk_load`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from irlab.analysis import amdgpu_sched as sched
from irlab.ir import Operation, RewriteError, RewritePattern, TensorType, describe
from irlab.ir.traits import DOT, GLOBAL_LOAD, LAYOUT_CONVERSION, LOCAL_LOAD, LOCAL_STORE, SCHEDULE_PIN
from irlab.pass_api import ModulePass, PassContext, option
from irlab.registry import register


def staged_loads(body) -> list[Operation]:
    """The body's global loads whose value reaches a ``ttg.local_store`` in it (directly or through
    layout-only ops), in the order of those stores."""
    staged = []
    for ld in (o for o in body.ops if o.name in GLOBAL_LOAD):
        frontier = [ld.result]
        for _ in range(4):
            users = [u for v in frontier for u in v.users if u.parent is body]
            store = next((u for u in users if u.name in LOCAL_STORE), None)
            if store is not None:
                staged.append((body.index(store), ld))
                break
            frontier = [u.result for u in users if u.name in LAYOUT_CONVERSION]
    return [ld for _, ld in sorted(staged, key=lambda p: p[0])]


@dataclass
class SinkStagedLoad(RewritePattern):
    """In an innermost loop with one dot fed by local_loads, sink the chosen staged global load."""
    opts: "InterleaveGlobalLoads"
    ctx: PassContext
    ops: ClassVar[tuple[str, ...]] = ("scf.for",)

    def match_and_rewrite(self, loop: Operation, rw) -> None:
        o, body = self.opts, loop.body
        if any(x.name in ("scf.for", "scf.while") for x in loop.walk() if x is not loop):
            return rw.notify_match_failure(loop, "no candidate: the loop contains another loop "
                                                 "(only innermost loops are scheduled)")
        dots = [x for x in body.ops if x.name in DOT]
        loads = [x for x in body.ops if x.name in GLOBAL_LOAD]
        if not dots or not loads:
            what = "dot" if not dots else "register-staged global load (async copies go straight to shared memory)"
            return rw.notify_match_failure(loop, f"no candidate: the loop body has no {what}")
        if len(dots) > 1 and not o.allow_multi_dot:
            return rw.notify_match_failure(loop, f"not moved: the loop has {len(dots)} dots (allow_multi_dot=true)")
        dot = dots[-1]
        feeding = [x for x in body.ops if x.name in LOCAL_LOAD and any(u in dots for u in x.result.users)]
        staged = staged_loads(body)
        if not feeding or not staged:
            return rw.notify_match_failure(loop, "no candidate: not a stream-pipelined loop (the dot is not fed by "
                                                 "local_loads, or no global load is staged through local_store)")
        if [body.index(x) for x in staged] != sorted(body.index(x) for x in staged):
            return rw.notify_match_failure(loop, "not moved: the global loads are not in the order of their "
                                                 "local_store uses; the pass does not swap global loads")
        a, b = dot.a.type, dot.b.type
        if isinstance(a, TensorType) and isinstance(b, TensorType):
            m, k, n = a.shape[0], a.shape[1], b.shape[1]
            if min(m, n) < o.min_non_k or k < o.min_k:
                return rw.notify_match_failure(loop, f"not moved: tile M={m} N={n} K={k} is below the threshold "
                                                     f"(min_non_k={o.min_non_k}, min_k={o.min_k})")
        if o.preset == "upstream" and (len(loads) != 2 or len(dots) != 1):
            return rw.notify_match_failure(loop, f"not moved: upstream's conditions need exactly two global loads "
                                                 f"and one dot, the loop has {len(loads)} and {len(dots)}")
        if o.load >= len(staged):
            return rw.notify_match_failure(loop, f"not moved: the loop stages {len(staged)} global load(s); "
                                                 f"there is no load #{o.load} (0-based)")
        load = staged[o.load]
        if o.preset == "upstream" and any(body.index(u) < body.index(dot) for u in load.result.users):
            return rw.notify_match_failure(load, "not moved: the load is used before the dot (upstream's condition)")
        before_dot = o.placement == "before-dot" or o.preset == "upstream"
        anchor = dot if before_dot else feeding[-1]
        if self.in_place(body, load, anchor, before_dot):
            amd = sched.is_amd(self.ctx.module)
            if o.pin != "none" and amd and not sched.is_pinned(body, load, dot, o.pin):
                return sched.pin_sunk_load(self.ctx, rw, body, load, dot, o.pin, o.mfma_before)
            if o.pin != "none" and not amd:
                sched.warn_not_amd(self.ctx, load, f"pin={o.pin}")
            where = f"sits right before {describe(dot)}" if before_dot else f"already comes after {describe(anchor)}"
            pins = f", pinned ({o.pin})" if o.pin != "none" and amd else ""
            return rw.notify_match_failure(load, f"nothing to do: the load {where}{pins}")
        between = body.ops[body.index(load) + 1:body.index(anchor) + (0 if before_dot else 1)]
        other = next((x for x in between if x.name in GLOBAL_LOAD), None)
        if other is not None:
            return rw.notify_match_failure(load, f"not moved: it would swap with {describe(other)}; global loads "
                                                 "keep the order of their local_store uses")
        t = load.result.type
        if not o.allow_small_loads and (not isinstance(t, TensorType) or t.rank < 2):
            return rw.notify_match_failure(load, "not moved: it loads a scalar or 1-D tensor (allow_small_loads=true)")
        try:
            (rw.move_before if before_dot else rw.move_after)(load, anchor, reason=f"{o.preset} schedule")
        except RewriteError as e:
            return rw.notify_match_failure(load, f"not moved: {str(e).split(': ', 1)[1]}")
        self.ctx.remark(f"sank {describe(load)} {'before' if before_dot else 'after'} {describe(anchor)} "
                        f"({o.preset} schedule)", load)
        if o.pin != "none":
            sched.pin_sunk_load(self.ctx, rw, body, load, dot, o.pin, o.mfma_before)

    @staticmethod
    def in_place(body, load, anchor, before_dot: bool) -> bool:
        """Whether the load already sits where the schedule wants it (pins in between do not count)."""
        if before_dot:
            between = body.ops[body.index(load) + 1:body.index(anchor)]
            return body.index(load) < body.index(anchor) and all(x.name in SCHEDULE_PIN for x in between)
        return body.index(load) > body.index(anchor)


PRESETS = ("talk", "upstream")
PINS = ("none", "barriers", "groups")


@register
@dataclass(frozen=True)
class InterleaveGlobalLoads(ModulePass):
    name: ClassVar[str] = "interleave-global-loads"
    summary: ClassVar[str] = "sink the second global load of a pipelined GEMM loop below its local_loads (the talk's schedule)"

    preset: str = option("talk", "talk: after the local_loads; upstream: AMD's sinkSecondLoad conditions "
                         "(2 loads, 1 dot, M,N >= 128, K >= 64, just before the dot)", PRESETS)
    placement: str = option("after-local-loads", "where the load goes (preset talk)", ("after-local-loads", "before-dot"))
    load: int = option(1, "which staged global load to sink, 0-based in the order of their local_store uses")
    min_non_k: int = option(0, "leave loops alone whose dot's M or N tile is smaller (preset upstream: 128)")
    min_k: int = option(0, "leave loops alone whose dot's K tile is smaller (preset upstream: 64)")
    allow_multi_dot: bool = option(False, "also act on loops with more than one dot")
    allow_small_loads: bool = option(False, "also move scalar and 1-D loads")
    pin: str = option("none", "keep the order in the AMDGCN (AMD): barriers (rocdl.sched.barrier 0 around the "
                      "sunk load) or groups (rocdl.sched.group.barrier: the talk's AMDGCN)", PINS)
    mfma_before: float = option(0.75, "pin=groups: share of the dot's MFMAs issued before the sunk load "
                                "(the talk's slide: 98 of 128)")

    def __post_init__(self):
        if not 0.0 <= self.mfma_before <= 1.0:
            raise ValueError(f"mfma_before must be between 0 and 1, not {self.mfma_before}")
        if self.preset == "upstream":
            object.__setattr__(self, "min_non_k", max(self.min_non_k, 128))
            object.__setattr__(self, "min_k", max(self.min_k, 64))

    def run(self, ctx: PassContext) -> None:
        if not ctx.module.find("scf.for"):
            ctx.note("no candidate loop: the module has no scf.for")
            return
        ctx.apply_patterns(SinkStagedLoad(self, ctx))
