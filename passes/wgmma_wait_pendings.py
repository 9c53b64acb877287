"""wgmma-wait-pendings: how many wgmma groups a K loop leaves in flight at its wait.

Triton's Hopper pipeliner issues the loop's ``ttng.warp_group_dot`` asynchronously and follows it
with ``ttng.warp_group_dot_wait {pendings = P}``: at most P wgmma groups (of this warp group) may
still be running after it. In the tutorial GEMM (3 stages, loads issued 2 K steps ahead) P is 1.

Hypothesis space, and why the pass only ever lowers P:

* The copies a K step issues overwrite the shared-memory slot that the wgmma of
  ``S - D`` steps earlier read (S buffers, prefetch distance D). They are issued after the wait,
  so the wait must have retired that wgmma: ``P <= S - D``. Triton picks P = S - D (1 for S=3,
  D=2): raising P would let a copy overwrite a tile a wgmma may still be reading (a race), so the
  pass refuses any P above the one Triton chose -- it cannot prove the ring deeper than that.
* Lowering P (to 0) is always safe -- the wait only waits longer -- and is the experiment: it
  serializes each K step's wgmmas with the next step's copies and barrier. Expected: slower (the
  tensor cores idle while the warps pass the barrier and issue the next copies); it quantifies what
  the asynchronous wgmma is worth on this kernel.
* Waits outside loops (the drain before the epilogue, pendings 0) are left alone.

Run at the end of TTGIR: ``Insert("wgmma-wait-pendings", at="end", options={"pendings": 0})``.
"""
from __future__ import annotations

from typing import ClassVar

from irlab.ir import describe
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register


@register
class WgmmaWaitPendings(ModulePass):
    name: ClassVar[str] = "wgmma-wait-pendings"
    runs_on: ClassVar[tuple] = ("ttgir",)
    summary: ClassVar[str] = "lower warp_group_dot_wait {pendings} in K loops (raising it could race; refused)"

    pendings: int = option(0, "the pendings to set (at most what Triton chose)")

    def __post_init__(self):
        if self.pendings < 0:
            raise ValueError("pendings must be >= 0")

    def run(self, ctx: PassContext) -> None:
        waits = [op for op in ctx.module.walk() if op.name == "ttng.warp_group_dot_wait"]
        in_loops = [w for w in waits if w.enclosing("scf.for") is not None]
        if not in_loops:
            ctx.note("no ttng.warp_group_dot_wait inside a loop (not a pipelined wgmma loop, or not TTGIR for sm_90)")
            return
        for w in in_loops:
            have = w.attr("pendings")
            if have is None:
                ctx.note(f"{describe(w)} has no pendings attribute", w)
                continue
            if self.pendings == have:
                ctx.note(f"{describe(w)} already has pendings = {have}", w)
                continue
            if self.pendings > have:
                ctx.note(f"refused: raising pendings {have} -> {self.pendings} would let the next copies overwrite a "
                         f"tile a wgmma may still read (Triton chose {have} = buffers - prefetch distance)", w)
                continue
            ctx.rewriter.set_attribute(w, "pendings", f"{self.pendings} : i32", reason="wgmma wait depth")
            ctx.remark(f"pendings {have} -> {self.pendings} on {describe(w)}", w)
