"""A pass that kills the compile process on purpose, the way an assertion in LLVM or MLIR does
(SIGABRT): what a sweep must survive. With ``warps`` set, only modules of that many warps."""
from __future__ import annotations

import os
import sys
from typing import ClassVar

from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register


@register
class AbortCompile(ModulePass):
    name: ClassVar[str] = "abort-compile"
    summary: ClassVar[str] = "test pass: abort the compile process (SIGABRT), like a failed LLVM assertion"
    warps: int = option(0, "abort only for modules of this many warps (0: always)")

    def run(self, ctx: PassContext) -> None:
        warps = ctx.module.ops[0].attr("ttg.num-warps")
        if self.warps and warps != self.warps:
            ctx.note(f"{warps} warps: not aborting")
            return
        sys.stderr.write("abort-compile: Assertion `on purpose' failed.\n")
        sys.stderr.flush()
        os.abort()
