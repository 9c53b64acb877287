"""interleave-global-loads: the instruction schedule of AMD's "Triton on AMD GPUs" talk.

In a stream-pipelined GEMM loop (``tt.load A; tt.load B; local_load A; local_load B; tt.dot;
local_store A; local_store B``) every global load is issued at once and the memory system
congests. The talk sinks the *second* global load below the ``local_load``s, so the loads go out
in two groups around the LDS reads, keeping the loads in the order of their ``local_store`` uses.

The pass moves a load only down its own loop body and only through the rewriter, which refuses a
move that would cross an op whose effects conflict (a barrier, a store, an atomic, a call, an op
it does not know) or break a dependence; the note names that op. Presets:

* ``talk`` (default): sink load #1 after the last ``local_load`` feeding the dot.
* ``upstream``: exactly the conditions of AMD's own sinkSecondLoad in Triton 3.6's TritonAMDGPU
  ReorderInstructions (3.9 removed it): an innermost loop with exactly one dot and exactly two
  global loads in its body; both loads 2-D, the first (in body order) at least 128 x 64, the
  second at least 128 along dim 1 (the load shapes, not the dot's: a transposed operand counts
  as loaded); the second load before the dot and its first user after it; the second load then
  placed immediately before the dot. The other options (``load``, ``placement``, ``min_*``,
  ``allow_*``) do not apply to it; irlab's rewriter still refuses a move across a conflicting op.

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
from irlab.ir.rewrite import ancestor_in_block
from irlab.ir.traits import DOT, GLOBAL_LOAD, LAYOUT_CONVERSION, LOCAL_LOAD, LOCAL_STORE, SCHEDULE_PIN
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register


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
        assert body is not None   # an scf.for always has its body region
        if any(x.name in ("scf.for", "scf.while") for x in loop.walk() if x is not loop):
            return rw.notify_match_failure(loop, "no candidate: the loop contains another loop "
                                                 "(only innermost loops are scheduled)")
        if o.preset == "upstream":
            return self.upstream(loop, rw)
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
        if o.load >= len(staged):
            return rw.notify_match_failure(loop, f"not moved: the loop stages {len(staged)} global load(s); "
                                                 f"there is no load #{o.load} (0-based)")
        load = staged[o.load]
        before_dot = o.placement == "before-dot"
        return self.sink(body, load, dot, dot if before_dot else feeding[-1], before_dot, rw)

    def upstream(self, loop: Operation, rw) -> None:
        """Triton 3.6's sinkSecondLoad (TritonAMDGPU ReorderInstructions; 3.9 removed it), condition
        for condition: in an innermost loop with exactly one dot, exactly two global loads in the
        loop body, both 2-D tensors, the first (in body order) at least 128 x 64 (dims 0, 1), the
        second at least 128 along dim 1; the second before the dot and its first user after it.
        Then the second moves right before the dot. (Upstream ran before buffer-op conversion, so it
        counted ``tt.load``s; at the end of the pipeline irlab counts ``amdg.buffer_load``s too.)"""
        body = loop.body
        assert body is not None   # an scf.for always has its body region
        dots = [x for x in loop.walk() if x.name in DOT]
        loads = [x for x in body.ops if x.name in GLOBAL_LOAD]
        if len(dots) != 1 or len(loads) != 2:
            return rw.notify_match_failure(loop, f"not moved: Triton 3.6's sinkSecondLoad needs exactly one dot and two "
                                                 f"global loads in the loop, it has {len(dots)} and {len(loads)}")
        dot = dots[0]
        ta, tb = (x.result.type for x in loads)
        if not (isinstance(ta, TensorType) and ta.rank == 2 and isinstance(tb, TensorType) and tb.rank == 2):
            return rw.notify_match_failure(loop, "not moved: Triton 3.6's sinkSecondLoad needs both loads to be 2-D "
                                                 "tensors")
        if not (ta.shape[0] >= 128 and ta.shape[1] >= 64 and tb.shape[1] >= 128):
            return rw.notify_match_failure(loop, f"not moved: the loads' tiles {ta.shape[0]}x{ta.shape[1]} and "
                                                 f"{tb.shape[0]}x{tb.shape[1]} are below Triton 3.6's sinkSecondLoad "
                                                 "threshold (first load >= 128x64, second load >= 128 along dim 1)")
        load = loads[1]
        if dot.parent is not body or body.index(load) > body.index(dot):
            return rw.notify_match_failure(load, "not moved: the second global load does not come before the dot "
                                                 "in the loop body (Triton 3.6's condition)")
        users = sorted({body.index(a) for u in load.result.users if (a := ancestor_in_block(u, body)) is not None})
        if users and users[0] < body.index(dot):
            return rw.notify_match_failure(load, "not moved: the load's first user comes before the dot "
                                                 "(Triton 3.6's condition)")
        return self.sink(body, load, dot, dot, True, rw)

    def sink(self, body, load, dot, anchor, before_dot: bool, rw) -> None:
        o = self.opts
        if self.in_place(body, load, anchor, before_dot):
            pinnable = sched.pins_apply(self.ctx)
            if o.pin != "none" and pinnable and not sched.is_pinned(body, load, dot, o.pin):
                return sched.pin_sunk_load(self.ctx, rw, body, load, dot, o.pin, o.mfma_before)
            if o.pin != "none" and not pinnable:
                sched.warn_not_amd(self.ctx, load, f"pin={o.pin}")
            where = f"sits right before {describe(dot)}" if before_dot else f"already comes after {describe(anchor)}"
            pins = f", pinned ({o.pin})" if o.pin != "none" and pinnable else ""
            return rw.notify_match_failure(load, f"nothing to do: the load {where}{pins}")
        between = body.ops[body.index(load) + 1:body.index(anchor) + (0 if before_dot else 1)]
        other = next((x for x in between if x.name in GLOBAL_LOAD), None)
        if other is not None:
            return rw.notify_match_failure(load, f"not moved: it would swap with {describe(other)}; global loads "
                                                 "keep the order of their local_store uses")
        t = load.result.type
        if o.preset != "upstream" and not o.allow_small_loads and (not isinstance(t, TensorType) or t.rank < 2):
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
class InterleaveGlobalLoads(ModulePass):
    name: ClassVar[str] = "interleave-global-loads"
    runs_on: ClassVar[tuple] = ("ttgir",)
    summary: ClassVar[str] = "sink the second global load of a pipelined GEMM loop below its local_loads (the talk's schedule)"

    preset: str = option("talk", "talk: after the local_loads; upstream: Triton 3.6's sinkSecondLoad, exactly (1 dot, "
                         "2 global loads, first load >= 128x64, second >= 128 along dim 1, just before the dot)",
                         PRESETS)
    placement: str = option("after-local-loads", "where the load goes (preset talk)", ("after-local-loads", "before-dot"))
    load: int = option(1, "which staged global load to sink, 0-based in the order of their local_store uses")
    min_non_k: int = option(0, "leave loops alone whose dot's M or N tile is smaller (preset talk)")
    min_k: int = option(0, "leave loops alone whose dot's K tile is smaller (preset talk)")
    allow_multi_dot: bool = option(False, "also act on loops with more than one dot")
    allow_small_loads: bool = option(False, "also move scalar and 1-D loads")
    pin: str = option("none", "keep the order in the AMDGCN (AMD): barriers (rocdl.sched.barrier 0 around the "
                      "sunk load) or groups (rocdl.sched.group.barrier: the talk's AMDGCN)", PINS)
    mfma_before: float = option(0.75, "pin=groups: share of the dot's MFMAs issued before the sunk load "
                                "(the talk's slide: 98 of 128)")

    def __post_init__(self):
        if not 0.0 <= self.mfma_before <= 1.0:
            raise ValueError(f"mfma_before must be between 0 and 1, not {self.mfma_before}")

    def run(self, ctx: PassContext) -> None:
        if not ctx.module.find("scf.for"):
            ctx.note("no candidate loop: the module has no scf.for")
            return
        ctx.apply_patterns(SinkStagedLoad(self, ctx))
