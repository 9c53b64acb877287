"""cancel-transposes: remove transpose pairs that undo each other.

``trans(trans(x))`` with orders that compose to the identity is ``x``; so is a pair separated by
elementwise ops whose other operands are splat constants (``trans(mulf(trans(x), %cst))`` is
``mulf(x, %cst')``, the constant re-typed to the untransposed shape). The ops between are moved
to the untransposed shape in place; the transposes are erased once unused. Pairs with a broadcast
between them, or whose first transpose has other users, are left alone with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from irlab.analysis.lds import cancelling_pair, ref
from irlab.ir import RewritePattern, TensorType
from irlab.ir.traits import BROADCAST, TRANSPOSE
from irlab.ir.types import tensor_text
from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register


@dataclass
class CancelPair(RewritePattern):
    ctx: PassContext
    ops: ClassVar[tuple[str, ...]] = tuple(TRANSPOSE)

    def match_and_rewrite(self, t2, rw) -> None:
        hit = cancelling_pair(t2)
        if hit is None:
            return None
        t1, chain = hit
        if any(op.name in BROADCAST for op in chain):
            return rw.notify_match_failure(t2, f"not removed: {ref(t1)} and {ref(t2)} cancel, but a broadcast between "
                                               "them would change shape")
        if chain and len(t1.result.uses) != 1:
            return rw.notify_match_failure(t2, f"not removed: {ref(t1)} has other users")
        src, moved = t1.src, t1.result.type
        if chain and not (isinstance(src.type, TensorType) and isinstance(moved, TensorType)):
            return rw.notify_match_failure(t2, "not removed: the pair does not transpose tensors")

        def untransposed(t):   # the chain's types: transposed shape and layout -> the source's
            if isinstance(t, TensorType) and t.shape == moved.shape and t.encoding_text == moved.encoding_text:
                return tensor_text(src.type.shape, t.element, src.type.encoding_text)
            return None

        final = str(src.type) if not chain else untransposed(chain[-1].result.type)
        if final != str(t2.result.type) or not all(untransposed(op.result.type) for op in chain):
            return rw.notify_match_failure(t2, f"not removed: {ref(t1)} and {ref(t2)} cancel, but the types around "
                                               f"them do not line up ({final} vs {t2.result.type})")
        current = rw.retype_chain(chain, t1.result, src, untransposed, "the transposes around it cancel",
                                  "the splat constant in the untransposed shape")
        rw.replace_all_uses(t2.result, current, reason="the transposes cancel")
        rw.erase(t2, "cancelling transpose")
        if not t1.result.uses:
            rw.erase(t1, "cancelling transpose")
        self.ctx.remark(f"removed {ref(t1)} and {ref(t2)}" + (f" across {len(chain)} op(s)" if chain else ""), t2)


@register
class CancelTransposes(ModulePass):
    name: ClassVar[str] = "cancel-transposes"
    summary: ClassVar[str] = "remove transpose pairs that cancel (also across elementwise ops with splat operands)"

    def run(self, ctx: PassContext) -> None:
        if not any(op.name in TRANSPOSE for op in ctx.module.walk()):
            ctx.note("no transposes in this IR")
            return
        result = ctx.apply_patterns(CancelPair(ctx))
        if not result.changed and not ctx.diagnostics:
            ctx.note("no transpose pair cancels")
