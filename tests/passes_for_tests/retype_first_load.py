"""A deliberately broken pass for tests: changes the pointer type of the first load's operand
without changing its producer, so Triton's verifier must reject the result."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from irlab.pass_api import ModulePass, PassContext
from irlab.registry import register


@register
@dataclass(frozen=True)
class RetypeFirstLoad(ModulePass):
    name: ClassVar[str] = "retype-first-load"
    summary: ClassVar[str] = "test pass: produce IR that Triton's verifier rejects"

    def run(self, ctx: PassContext) -> None:
        load = ctx.module.first("tt.load")
        text = load.text.replace("!tt.ptr<f32>", "!tt.ptr<f16>", 1)
        ctx.rewriter.replace_op(load, text, reason="break the types on purpose", allow_type_change=True)
