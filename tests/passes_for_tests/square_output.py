"""A deliberately wrong pass for testing the correctness gate: the stored value is squared."""
from __future__ import annotations

from typing import ClassVar

from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register


@register
class SquareOutput(ModulePass):
    name: ClassVar[str] = "square-output"
    summary: ClassVar[str] = "test pass: store the square of what the kernel computed"

    def run(self, ctx: PassContext) -> None:
        rw = ctx.rewriter
        st = ctx.module.first("tt.store")
        if st is None:
            return
        v = st.value
        name = rw.fresh_name("irlab_sq", st)
        sq, = rw.insert_before(st, f"%{name} = arith.mulf {v.ref}, {v.ref} : {v.type}")
        rw.replace_all_uses(v, sq.result, only=lambda u: u.op is st)
