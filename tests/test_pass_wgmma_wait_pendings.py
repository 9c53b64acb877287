"""wgmma-wait-pendings: lowering the K loop's wgmma wait reaches the SASS; raising it is refused."""
from __future__ import annotations

from irlab import ir, report
from irlab.bridge.compile import compile_kernel
from irlab.kernel_spec import TileConfig
from irlab.kernels import KERNELS
from irlab.registry import make_pass
from irlab.variant import Insert, Variant

BEST = TileConfig("128x256x64-w8-s3", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, 8, 3)


def notes(res):
    return " | ".join(d.message for d in res.diagnostics)


def test_pendings_zero_reaches_the_sass():
    v = Variant("wait0", (Insert("wgmma-wait-pendings", at="end", options={"pendings": 0}),))
    res = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST, variant=v)
    waits = [o for o in res.module("ttgir").walk() if o.name == "ttng.warp_group_dot_wait"]
    assert [w.attr("pendings") for w in waits] == [0, 0]
    sass = report.static.sass_text(res.asm["cubin"])
    loop = report.from_compile(res).loop
    assert "WARPGROUP.DEPBAR.LE gsb0, 0x0" in sass and "gsb0, 0x1" not in sass
    assert "4 x HGMMA" in loop["schedule_text"]


def test_raising_pendings_is_refused_and_outside_loops_is_left_alone():
    text = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST).text("ttgir", locations=False)
    m = ir.parse(text)
    res = make_pass("wgmma-wait-pendings", {"pendings": 2}).apply(m)
    assert not res.changed and "would let the next copies overwrite" in notes(res)
    m = ir.parse(text)
    res = make_pass("wgmma-wait-pendings", {"pendings": 1}).apply(m)
    assert not res.changed and "already has pendings = 1" in notes(res)
    sm80 = compile_kernel(KERNELS["gemm_fp16"], "cuda:80").text("ttgir", locations=False)
    res = make_pass("wgmma-wait-pendings", {}).apply(ir.parse(sm80))
    assert not res.changed and "no ttng.warp_group_dot_wait inside a loop" in notes(res)
