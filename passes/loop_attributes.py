"""loop-attributes: put Triton's per-loop scheduling hints on a kernel's K loop from outside.

``tl.range(..., num_stages=, warp_specialize=, disallow_acc_multi_buffer=, flatten=)`` writes
attributes on the ``scf.for`` (``tt.num_stages``, ``tt.warp_specialize``,
``tt.disallow_acc_multi_buffer``, ``tt.flatten``) that Triton's pipeliner, its loop fusion and
its warp specialization read. A kernel written with a plain ``range`` has none; this pass adds them
to the K loops -- each ``scf.for`` that contains a dot and no loop that contains one (the
innermost loop over K; a dot in an ``scf.if`` of the loop counts) -- so a variant can try them
without editing the kernel. A loop around a K loop (a persistent kernel's loop over tiles, which
``persistent-tiles`` writes) is left alone unless ``loops=all``: the hints are for the loop Triton
pipelines and warp-specializes over K, and the tile loop has options of its own in
``persistent-tiles`` (``flatten``, ``warp_specialize``). Run it at the end of TTIR
(``Insert("loop-attributes", stage="ttir", at="end", options={...})``) or at the start of TTGIR:
the passes that read the hints run later in TTGIR.

Hypotheses it serves:

* ``warp_specialize=true``: Hopper automatic warp specialization (Triton 3.6
  ``nvidia.hopper.hopper_warpspec``): a producer warp group issues the TMA loads, two consumer
  warp groups split the tile and run the wgmmas, synchronized by mbarriers instead of CTA-wide
  barriers. Triton 3.6 acts on it for ``num_warps=4`` only (the consumers become 2 x 4 warps plus a
  producer: 12 warps) and only with descriptor (TMA) loads -- with the tutorial's pointer loads
  the pass asserts in WSLowerToken -- so it is paired with ``descriptor-loads``.
* ``num_stages=N``: the loop's own pipeline depth (the same as the launch option for this kernel).
* ``disallow_acc_multi_buffer=true``: keep one accumulator buffer (matters with warp specialization).

It changes no semantics: these are scheduling hints. Refusals: no loop with a dot; a hint that is
already set to another value is overwritten only with ``overwrite=true``. Each loop around a K
loop that ``loops=k`` leaves alone gets a note saying so.
"""
from __future__ import annotations

from typing import ClassVar, Optional

from irlab.ir import describe
from irlab.ir.traits import DOT
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register

@register
class LoopAttributes(ModulePass):
    name: ClassVar[str] = "loop-attributes"
    runs_on: ClassVar[tuple] = ("ttir", "ttgir")
    summary: ClassVar[str] = ("set tl.range hints (warp_specialize, num_stages, ...) on the K loops (the innermost "
                              "scf.for around each dot; loops=all: every loop that contains a dot)")
    stage: ClassVar[str] = "ttir"

    warp_specialize: bool = option(False, "add tt.warp_specialize (automatic warp specialization)")
    num_stages: Optional[int] = option(None, "set tt.num_stages on the loop")
    disallow_acc_multi_buffer: bool = option(False, "add tt.disallow_acc_multi_buffer")
    flatten: bool = option(False, "add tt.flatten (fuse the loop nest starting at this loop)")
    overwrite: bool = option(False, "replace a hint the kernel already set to another value")
    loops: str = option("k", "which loops get the hints: k, the K loops (an scf.for holding a dot and no loop that "
                             "holds one); all, every scf.for that holds a dot (a persistent kernel's tile loop too)",
                        choices=("k", "all"))

    def __post_init__(self):
        if self.num_stages is not None and self.num_stages < 1:
            raise ValueError("num_stages must be at least 1")

    def wanted(self) -> dict[str, tuple[str, bool | int]]:
        """``{attribute: (its text, the value loop.attributes reads back)}`` for the hints asked for."""
        out: dict[str, tuple[str, bool | int]] = {}
        if self.warp_specialize:
            out["tt.warp_specialize"] = ("unit", True)
        if self.num_stages is not None:
            out["tt.num_stages"] = (f"{self.num_stages} : i32", self.num_stages)
        if self.disallow_acc_multi_buffer:
            out["tt.disallow_acc_multi_buffer"] = ("unit", True)
        if self.flatten:
            out["tt.flatten"] = ("unit", True)
        return out

    def run(self, ctx: PassContext) -> None:
        wanted = self.wanted()
        if not wanted:
            ctx.note("no hint asked for (options: warp_specialize, num_stages, disallow_acc_multi_buffer, flatten)")
            return
        with_dot = [op for op in ctx.module.walk() if op.name == "scf.for" and _holds_dot(op)]
        if not with_dot:
            ctx.note("no scf.for contains a dot: nothing to annotate")
            return
        loops = with_dot
        if self.loops == "k":
            loops = [op for op in with_dot
                     if not any(_holds_dot(o) for o in op.walk() if o is not op and o.name in _LOOPS)]
            for outer in (op for op in with_dot if op not in loops):
                ctx.note(f"{describe(outer)} holds a K loop: left alone (loops=all puts the hints on it too)", outer)
        for loop in loops:
            have = loop.attributes
            for key, (text, value) in wanted.items():
                if key in have and have[key] == value:
                    ctx.note(f"{key} is already set on {describe(loop)}", loop)
                    continue
                if key in have and not self.overwrite:
                    ctx.note(f"{key} is already {have[key]!r} on {describe(loop)}; left as is (overwrite=true)", loop)
                    continue
                ctx.rewriter.set_attribute(loop, key, text, reason="loop hint")
                ctx.remark(f"{key}{'' if text == 'unit' else ' = ' + text} on {describe(loop)}", loop)


# ops whose bodies run repeatedly: a dot inside one of them is that loop's, not the enclosing loop's
_LOOPS = ("scf.for", "scf.while")


def _holds_dot(op) -> bool:
    return any(o.name in DOT for o in op.walk() if o is not op)
