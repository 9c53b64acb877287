"""hoist-layout-conversions: convert a loop-invariant dot operand once, before the loop.

A ``ttg.convert_layout`` to a dot-operand layout inside a loop whose source is computed outside
it converts the same tensor on every iteration (in fused attention: Q, loaded once and multiplied
in every K/V step). Upstream Triton's HoistLayoutConversions (AMD ``make_ttgir`` of 3.6 and 3.9)
moves such a conversion right after the op that defines its source, so the operand is converted
once and kept in registers.

This pass does the same through irlab's rewriter: the conversion moves right after its source's
defining op when that op lies outside the innermost loop around the conversion. A conversion is
pure and cannot trap, so running it where the loop might have run zero times is safe; the
rewriter checks dominance and that nothing it crosses pins the schedule. Left alone, saying why:
conversions to other layouts, sources defined in the loop, and sources that are block arguments
(a function argument or a loop's iteration value: there is no op to move after, as upstream).
The price is register pressure: the converted operand stays live across the loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from irlab.ir import Operation, RewriteError, RewritePattern, TensorType, describe
from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register

CONVERT = "ttg.convert_layout"
LOOP = "scf.for"


def is_dot_operand_convert(op: Operation) -> bool:
    """A ``ttg.convert_layout`` whose result is in a dot-operand layout."""
    t = op.result.type if op.name == CONVERT and len(op.results) == 1 else None
    lay = t.layout if isinstance(t, TensorType) else None
    return lay is not None and lay.kind == "dot_op"


@dataclass
class HoistDotOperandConvert(RewritePattern):
    ctx: PassContext
    ops: ClassVar[tuple[str, ...]] = (CONVERT,)

    def match_and_rewrite(self, cvt: Operation, rw) -> None:
        if not is_dot_operand_convert(cvt):
            return None   # not a dot operand: nothing this pass is about
        loop = cvt.enclosing(LOOP)
        if loop is None:
            return rw.notify_match_failure(cvt, "nothing to do: the conversion is not inside a loop")
        src = cvt.operands[0]
        producer = src.defining_op
        if producer is None:
            return rw.notify_match_failure(cvt, f"not hoisted: its source {src.ref} is a block argument (no op to "
                                                "move after)")
        if loop.is_ancestor_of(producer):
            return rw.notify_match_failure(cvt, f"not hoisted: its source is computed in the loop, by "
                                                f"{describe(producer)}")
        left = [a for a in cvt.ancestors() if a.name == LOOP and not a.is_ancestor_of(producer)]
        try:
            rw.move_after(cvt, producer, reason="loop-invariant dot operand")
        except RewriteError as e:
            return rw.notify_match_failure(cvt, f"not hoisted: {str(e).split(': ', 1)[1]}")
        out_of = describe(loop) if len(left) == 1 else f"{len(left)} loops ({describe(loop)} and its enclosing ones)"
        self.ctx.remark(f"hoisted {describe(cvt)} out of {out_of} to right after {describe(producer)}: the dot "
                        "operand is converted once", cvt)


@register
class HoistLayoutConversions(ModulePass):
    name: ClassVar[str] = "hoist-layout-conversions"
    summary: ClassVar[str] = ("move a dot-operand ttg.convert_layout of a loop-invariant tensor out of the loop "
                              "(upstream AMD's HoistLayoutConversions)")

    def run(self, ctx: PassContext) -> None:
        if not any(is_dot_operand_convert(o) and o.enclosing(LOOP) is not None for o in ctx.module.walk()):
            ctx.note(f"no candidate: no {CONVERT} to a dot-operand layout inside a loop")
            return
        ctx.apply_patterns(HoistDotOperandConvert(ctx))
