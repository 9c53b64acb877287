"""A deliberately broken pass for tests: changes the pointee type of the first splatted pointer
(f32 <-> f16) without changing its users, so Triton's verifier must reject the result."""
from __future__ import annotations

from typing import ClassVar

from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register


@register
class RetypeFirstLoad(ModulePass):
    name: ClassVar[str] = "retype-first-load"
    summary: ClassVar[str] = "test pass: produce IR that Triton's verifier rejects"

    def run(self, ctx: PassContext) -> None:
        splat = next(o for o in ctx.module.walk() if o.name == "tt.splat" and "!tt.ptr<" in o.text)
        text = splat.text
        head, _, ty = text.rpartition("-> ")
        ty = ty.replace("!tt.ptr<f32>", "!tt.ptr<TMP>").replace("!tt.ptr<f16>", "!tt.ptr<f32>") \
            .replace("!tt.ptr<TMP>", "!tt.ptr<f16>")
        ctx.rewriter.replace_op(splat, head + "-> " + ty, reason="break the types on purpose", allow_type_change=True)
