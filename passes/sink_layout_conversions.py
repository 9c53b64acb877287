"""sink-layout-conversions: move a layout conversion below the shared-memory frees that follow it.

A ``ttg.convert_layout`` that goes through shared memory gets a scratch buffer from Triton's
shared-memory allocation, which packs buffers by liveness: scratch that is live while the loop's
pipeline buffers are still allocated adds to the kernel's LDS, and LDS decides how many workgroups
fit on a CU. Moved below the ``ttg.local_dealloc`` of those buffers, the conversion reuses their
space. Upstream Triton's SinkLayoutConversions (3.9's AMD ``make_ttgir``; 3.6 did the same inside
ReorderInstructions) moves every conversion after the last ``ttg.local_dealloc`` that lies between
it and its first user in its block.

This pass does the same through irlab's rewriter. A conversion is pure, so it crosses any op but a
scheduling pin; the rewriter refuses a move across a pin, and the note names it. A conversion with
no ``local_dealloc`` before its first user is left alone, saying so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from irlab.ir import Operation, RewriteError, RewritePattern, describe
from irlab.ir.rewrite import ancestor_in_block
from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register

CONVERT = "ttg.convert_layout"
DEALLOC = "ttg.local_dealloc"


def first_user_in_block(op: Operation) -> Operation | None:
    """The earliest op of ``op``'s block that uses its result, itself or through an op nested in it."""
    block = op.parent
    assert block is not None, f"{op.name} is in no block"   # ops of a function body all sit in a block
    users = [a for u in op.result.users if (a := ancestor_in_block(u, block)) is not None]
    return min(users, key=block.index) if users else None


@dataclass
class SinkBelowDeallocs(RewritePattern):
    ctx: PassContext
    ops: ClassVar[tuple[str, ...]] = (CONVERT,)

    def match_and_rewrite(self, cvt: Operation, rw) -> None:
        block = cvt.parent
        assert block is not None, f"{cvt.name} is in no block"   # a conversion sits in a function body
        user = first_user_in_block(cvt)
        end = block.index(user) if user is not None else len(block.ops)
        frees = [o for o in block.ops[block.index(cvt) + 1:end] if o.name == DEALLOC]
        if not frees:
            where = f"its first user {describe(user)}" if user is not None else "the end of its block"
            return rw.notify_match_failure(cvt, f"nothing to do: no {DEALLOC} between it and {where}")
        try:
            rw.move_after(cvt, frees[-1], reason="below the shared-memory frees")
        except RewriteError as e:
            return rw.notify_match_failure(cvt, f"not moved: {str(e).split(': ', 1)[1]}")
        self.ctx.remark(f"sank {describe(cvt)} below {describe(frees[-1])} ({len(frees)} {DEALLOC} crossed): its "
                        "scratch buffer can reuse the freed shared memory", cvt)


@register
class SinkLayoutConversions(ModulePass):
    name: ClassVar[str] = "sink-layout-conversions"
    summary: ClassVar[str] = ("move each ttg.convert_layout below the ttg.local_deallocs before its first user "
                              "(upstream AMD's SinkLayoutConversions)")

    def run(self, ctx: PassContext) -> None:
        if not ctx.module.find(CONVERT):
            ctx.note(f"no candidate: the module has no {CONVERT}")
            return
        ctx.apply_patterns(SinkBelowDeallocs(ctx))
