"""The op builder (:mod:`irlab.ir.opbuilder`): every op it writes is in the syntax Triton prints,
with the result types the op implies, goes in through the rewriter (recorded with its reason) and
is accepted by the installed Triton's parser and verifier."""
from __future__ import annotations

import pytest

from irlab import ir
from irlab.ir import RewriteError, ops
from irlab.ir.opbuilder import OpBuilder, string_attr
from irlab.passkit.pass_api import PassContext

EMPTY = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
    tt.return
  }
}
"""


def built():
    m = ir.parse(EMPTY, filename="k.ttgir")
    ctx = PassContext(m, "test")
    b = ctx.builder(before=m.first("tt.return"), reason="built")
    n = m.functions[0].arguments[1]
    p = m.functions[0].arguments[0]
    v = {}
    v["pid"] = b.get_program_id("x")
    v["np"] = b.get_num_programs("y", name="num_programs")
    v["c64"] = b.constant(64, "i32")
    v["c0"] = b.constant(0, "i32")
    v["c1"] = b.constant(1, "i32")
    v["half"] = b.constant(0.5, "f32")
    v["yes"] = b.constant(True, "i1")
    v["zeros"] = b.constant(0.0, "tensor<64x64xf32, #blocked>")
    v["start"] = b.muli(v["pid"], v["c64"], name="start")
    v["end"] = b.addi(v["start"], v["c64"])
    v["q"] = b.divsi(v["end"], v["c64"])
    v["r"] = b.remsi(v["end"], v["c64"])
    v["wide"] = b.cast("extsi", v["start"], "i64")
    v["lt"] = b.cmpi("slt", v["start"], n)
    v["sel"] = b.select(v["lt"], v["start"], v["end"])
    v["rows"] = b.make_range(0, 64, "#ttg.slice<{dim = 1, parent = #blocked}>", name="rows")
    v["rows2"] = b.expand_dims(v["rows"], 1)
    v["tile"] = b.broadcast(v["rows2"], "tensor<64x64xi32, #blocked>")
    v["starts"] = b.splat(v["start"], "tensor<64x64xi32, #blocked>")
    v["sum"] = b.addi(v["tile"], v["starts"])
    v["mask"] = b.cmpi("slt", v["tile"], v["starts"])
    v["pick"] = b.select(v["mask"], v["tile"], v["starts"])
    v["moved"] = b.convert_layout(v["sum"], m.layouts()["blocked1"])
    v["ptrs"] = b.splat(p, "tensor<64x64x!tt.ptr<f32>, #blocked>")
    loop = b.for_(v["c0"], n, v["c1"], iter_args=[v["zeros"]], iv_name="k",
                  attributes={"tt.num_stages": "2 : i32", "tt.flatten": True, "tt.warp_specialize": False,
                              "irlab.note": string_attr('a "quoted" note')})
    inner = b.inside(loop)
    acc = inner.addf(loop.iter_args[0], loop.iter_args[0], name="twice")
    b.set_yield(loop, [acc])
    plain = b.for_(v["c0"], n, v["c1"])
    return m, ctx, v, loop, plain


def test_the_built_ops_are_written_as_triton_prints_them():
    m, ctx, v, loop, plain = built()
    text = str(m)
    for line in ["%pid = tt.get_program_id x : i32", "%num_programs = tt.get_num_programs y : i32",
                 "%c64_i32 = arith.constant 64 : i32", "%cst = arith.constant 5.000000e-01 : f32",
                 "%true = arith.constant true", "arith.constant dense<0.000000e+00> : tensor<64x64xf32, #blocked>",
                 "%start = arith.muli %pid, %c64_i32 : i32", "%extsi = arith.extsi %start : i32 to i64",
                 "%cmp = arith.cmpi slt, %start, %n : i32", "%sel = arith.select %cmp, %start, %addi : i32",
                 "%rows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, "
                 "parent = #blocked}>>",
                 "tt.expand_dims %rows {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> "
                 "tensor<64x1xi32, #blocked>",
                 "tt.broadcast %expanded : tensor<64x1xi32, #blocked> -> tensor<64x64xi32, #blocked>",
                 "tt.splat %start : i32 -> tensor<64x64xi32, #blocked>",
                 "arith.select %cmp_0, %broadcast, %splat : tensor<64x64xi1, #blocked>, tensor<64x64xi32, #blocked>",
                 "ttg.convert_layout %addi_0 : tensor<64x64xi32, #blocked> -> tensor<64x64xi32, #blocked1>",
                 "%loop = scf.for %k = %c0_i32 to %n step %c1_i32 iter_args(%cst_0_iter = %cst_0) -> "
                 "(tensor<64x64xf32, #blocked>)  : i32 {",
                 "%twice = arith.addf %cst_0_iter, %cst_0_iter : tensor<64x64xf32, #blocked>",
                 "scf.yield %twice : tensor<64x64xf32, #blocked>",
                 '} {tt.num_stages = 2 : i32, tt.flatten, irlab.note = "a \\"quoted\\" note"}',
                 "scf.for %iv = %c0_i32 to %n step %c1_i32  : i32 {"]:
        assert line in text, (line, text)
    # what was built is the model's: types known, typed families, every op recorded with its reason
    assert str(v["rows2"].type) == "tensor<64x1xi32, #blocked>" and str(v["lt"].type) == "i1"
    assert isinstance(loop, ops.For) and loop.num_stages == 2 and loop.init_args == [v["zeros"]]
    assert str(m).count("scf.yield") == 2 and plain.yield_op.values == []
    assert {c.detail.split(" (")[-1] for c in ctx.rewriter.changes if c.kind == "inserted"} == {"built)"}
    assert ir.parse(text).first("scf.for").attr("tt.flatten") is not None   # it prints what parses back


def test_triton_accepts_what_the_builder_wrote():
    from irlab.bridge.services import TritonServices
    m, *_ = built()
    verdict = TritonServices().verify(str(m), "built.ttgir")
    assert verdict is None, verdict.messages


def test_what_the_builder_cannot_imply_it_refuses_with_the_reason():
    m = ir.parse(EMPTY)
    b = OpBuilder(ir.Rewriter(m), m.first("tt.return"))
    rows = b.make_range(0, 64, "#blocked1")   # not a slice: expand_dims cannot tell the result's layout
    with pytest.raises(RewriteError, match="no slice along 0"):
        b.expand_dims(rows, 0)
    with pytest.raises(RewriteError, match="predicate 'less'"):
        b.cmpi("less", rows, rows)
    with pytest.raises(RewriteError, match="0 <= start < end"):
        b.make_range(8, 8)
    with pytest.raises(RewriteError, match="a bool constant is i1"):
        b.constant(True, "i32")
    with pytest.raises(RewriteError, match="axis is x, y or z"):
        b.get_program_id("w")
