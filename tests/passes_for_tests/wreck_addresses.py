"""A deliberately harmful pass for testing the timing harness on a GPU: it scales the offsets of
the first pointer arithmetic by 2**24, so the kernel reads far outside its buffers and faults."""
from __future__ import annotations

from typing import ClassVar

from irlab.ir import TensorType
from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register


@register
class WreckAddresses(ModulePass):
    name: ClassVar[str] = "wreck-addresses"
    summary: ClassVar[str] = "test pass: make the kernel's first addptr point far out of bounds"

    def run(self, ctx: PassContext) -> None:
        rw = ctx.rewriter
        add = next(o for o in ctx.module.walk() if o.name == "tt.addptr" and isinstance(o.offset.type, TensorType))
        off = add.offset
        t = off.type
        big, scaled = rw.fresh_name("irlab_big", add), rw.fresh_name("irlab_scaled", add)
        rw.insert_before(add, f"%{big} = arith.constant dense<16777216> : {t}\n"
                              f"%{scaled} = arith.muli {off.ref}, %{big} : {t}")
        new = next(o for o in add.parent.ops if o.results and o.results[0].name == scaled)
        rw.replace_all_uses(off, new.result, only=lambda u: u.op is add)
