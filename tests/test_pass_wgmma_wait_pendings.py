"""wgmma-wait-pendings: lowering the K loop's wgmma wait reaches the SASS; raising it is refused."""
from __future__ import annotations

import re
from pathlib import Path

import triton

from irlab import ir, report
from irlab.bridge.compile import compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.kernels.spec import TileConfig
from irlab.kernels import KERNELS
from irlab.passkit.registry import make_pass
from irlab.passkit.variant import Insert, Variant

BEST = TileConfig("128x256x64-w8-s3", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, 8, 3)


def notes(res):
    return " | ".join(d.message for d in res.diagnostics)


def test_pendings_zero_reaches_the_sass():
    v = Variant("wait0", (Insert("wgmma-wait-pendings", at="end", options={"pendings": 0}),))
    res = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST, variant=v)
    waits = [o for o in res.module("ttgir").walk() if o.name == "ttng.warp_group_dot_wait"]
    assert [w.attr("pendings") for w in waits] == [0, 0]
    sass = report.static.sass_text(res.asm["cubin"], res.tools)
    loop = report.from_compile(res).loop
    assert "WARPGROUP.DEPBAR.LE gsb0, 0x0" in sass and "gsb0, 0x1" not in sass
    assert "4 x HGMMA" in loop["schedule_text"]


def test_raising_pendings_is_refused_and_outside_loops_is_left_alone():
    text = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST).text("ttgir", locations=False)
    m = ir.parse(text)
    res = run_pass(make_pass("wgmma-wait-pendings", {"pendings": 2}), m)
    assert not res.changed and "would let the next copies overwrite" in notes(res)
    m = ir.parse(text)
    res = run_pass(make_pass("wgmma-wait-pendings", {"pendings": 1}), m)
    assert not res.changed and "already has pendings = 1" in notes(res)
    sm80 = compile_kernel(KERNELS["gemm_fp16"], "cuda:80").text("ttgir", locations=False)
    res = run_pass(make_pass("wgmma-wait-pendings", {}), ir.parse(sm80))
    assert not res.changed and "no ttng.warp_group_dot_wait inside a loop" in notes(res)


def golden_sm90_gemm() -> str:
    """The sm_90 GEMM's TTGIR of the installed Triton, from the goldens: a pipelined wgmma loop with
    a wait of pendings 1 in it and the drain (pendings 0) after it."""
    root = Path(__file__).resolve().parent.parent / "golden" / f"triton-{triton.__version__}"
    return (root / "gemm_fp16" / "cuda-90" / "baseline.ttgir").read_text()


def test_each_wait_is_judged_on_its_own_and_the_drain_is_left_alone():
    """A second wait in the loop that Triton left at 0: asking for 1 must not raise it (only the
    wait already at 1 matches); asking for 0 lowers the one at 1 and leaves the drain after the
    loop as it was."""
    text = golden_sm90_gemm()
    in_loop = re.search(r"( *)(%\d+):3 = ttng.warp_group_dot_wait [^\n]*\{pendings = 1 : i32\}[^\n]*\n", text)
    assert in_loop and text.count("{pendings = 1 : i32}") == 1 and text.count("{pendings = 0 : i32}") == 1
    second = f"{in_loop.group(1)}%w2 = ttng.warp_group_dot_wait {in_loop.group(2)}#0 {{pendings = 0 : i32}} : " \
             "tensor<128x128xf32, #mma>\n"
    text = text.replace(in_loop.group(0), in_loop.group(0) + second)
    m = ir.parse(text)
    res = run_pass(make_pass("wgmma-wait-pendings", {"pendings": 1}), m)
    assert not res.changed and str(m) == text
    loop_line = text[:in_loop.start()].count("\n") + 1
    assert [(d.line, d.message.split(":")[0]) for d in res.diagnostics] == [
        (loop_line, f"{in_loop.group(2)}#0, ... = ttng.warp_group_dot_wait (line {loop_line}) already has pendings = 1"),
        (loop_line + 1, "refused")]   # and nothing about the drain after the loop
    assert "raising pendings 0 -> 1" in res.diagnostics[1].message
    m = ir.parse(text)
    res = run_pass(make_pass("wgmma-wait-pendings", {"pendings": 0}), m)
    assert res.changed and res.verified
    assert str(m) == text.replace(in_loop.group(0), in_loop.group(0).replace("{pendings = 1 : i32}",
                                                                             "{pendings = 0 : i32}"))
