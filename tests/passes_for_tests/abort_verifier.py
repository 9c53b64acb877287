"""A pass whose output Triton's verifier aborts on instead of rejecting: it adds a value in an
``nvidia_mma`` v2 layout with a 3-D ``instrShape`` (which Triton's parser accepts and its layout
code asserts on) and converts it to a blocked layout, before the first function's return. What
``irlab pass`` must turn into a rejected pass, with irlab itself alive."""
from __future__ import annotations

from typing import ClassVar

from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register

MMA_3D = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8, 16]}>"
BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"


@register
class AbortVerifier(ModulePass):
    name: ClassVar[str] = "abort-verifier"
    summary: ClassVar[str] = "test pass: produce IR that makes Triton's verifier abort (a 3-D MMA v2 instrShape)"

    def run(self, ctx: PassContext) -> None:
        ret = next(o for o in ctx.module.walk() if o.name == "tt.return")
        ctx.rewriter.insert_before(
            ret, f"%fz_mma = arith.constant dense<0.000000e+00> : tensor<64x64xf32, {MMA_3D}>\n"
                 f"%fz_blocked = ttg.convert_layout %fz_mma : tensor<64x64xf32, {MMA_3D}> -> "
                 f"tensor<64x64xf32, {BLOCKED}>", reason="a layout Triton aborts on, on purpose")
