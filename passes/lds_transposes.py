"""lds-transposes: report every shared-memory (LDS) trip and transpose, and the redundant ones.

An analysis pass (it changes nothing): :mod:`irlab.analysis.lds` does the reading AMD's guides do
by hand on the FA-decode int4 IR -- LDS used twice, a transpose a trip could absorb -- for any IR,
with Triton's own shared-memory allocation deciding which converts go through LDS. Findings go to
``data["findings"]`` (JSON) and to remarks and warnings; :func:`irlab.report.findings.render_table`
prints them as a table. The ``cancel-transposes`` pass removes the transpose pairs it reports.
"""
from __future__ import annotations

from typing import ClassVar

from irlab.analysis.lds import analyse
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register

WARNINGS = ("cancelling-transposes", "transpose-then-convert", "absorbable-trip", "in-thread-transposable")


@register
class LdsTransposes(ModulePass):
    name: ClassVar[str] = "lds-transposes"
    runs_on: ClassVar[tuple] = ("ttgir",)
    rewrites: ClassVar[bool] = False
    summary: ClassVar[str] = "report every shared-memory (LDS) trip and transpose, and flag the redundant ones"

    ask_triton: bool = option(True, "decide which converts go through LDS with Triton's shared-memory allocation "
                              "(off: report them as undecided)")

    def run(self, ctx: PassContext) -> None:
        result = analyse(ctx.module, ctx.services if self.ask_triton else None)
        for f in result["findings"]:
            (ctx.warning if f["kind"] in WARNINGS else ctx.remark)(f"[{f['kind']}] {f['detail']}", f.pop("_op", None))
        ctx.data.update(result)
        if not result["findings"]:
            ctx.note("no shared-memory trips and no transposes in this IR")
