"""identity: parse the IR into irlab's model and print it back, unchanged.

Inserted into a pipeline with ``reparse="always"``, it sends Triton's own printed IR back through
Triton's parser: the check that a module survives Triton's printer-to-parser round trip (which is
not always faithful) and that irlab's model reprints it byte for byte.
"""
from __future__ import annotations

from typing import ClassVar

from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register


@register
class Identity(ModulePass):
    name: ClassVar[str] = "identity"
    rewrites: ClassVar[bool] = False
    summary: ClassVar[str] = "parse and reprint the IR unchanged (round-trip check)"

    def run(self, ctx: PassContext) -> None:
        n = sum(1 for _ in ctx.module.walk())
        ctx.data["ops"] = n
        ctx.note(f"left all {n} ops unchanged (identity pass)")
