"""loop-attributes: tl.range hints put on a K loop from outside, and the rewriter's edit of an
attribute dictionary written after an op's region."""
from __future__ import annotations

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel, recompile
from irlab.bridge.pass_runner import run_pass
from irlab.kernels import KERNELS
from irlab.passkit.registry import make_pass


@pytest.fixture(scope="module")
def ttir():
    return compile_kernel(KERNELS["gemm_fp16"], "cuda:90").text("ttir", locations=False)


def apply(text, **options):
    m = ir.parse(text)
    return m, run_pass(make_pass("loop-attributes", options), m)


def notes(res):
    return " | ".join(d.message for d in res.diagnostics)


def test_sets_hints_on_the_k_loop(ttir):
    m, res = apply(ttir, warp_specialize=True, num_stages=4, disallow_acc_multi_buffer=True)
    assert res.changed and res.verified
    attrs = m.first("scf.for").attributes
    assert attrs["tt.warp_specialize"] is True and attrs["tt.num_stages"] == 4
    assert attrs["tt.disallow_acc_multi_buffer"] is True
    assert "} {tt.warp_specialize, tt.num_stages = 4 : i32, tt.disallow_acc_multi_buffer}" in str(m)
    # a second run finds them set and says so; overwrite replaces a different value
    m2, res2 = apply(str(m), num_stages=4)
    assert not res2.changed and "already set" in notes(res2)
    m3, res3 = apply(str(m), num_stages=2)
    assert not res3.changed and "overwrite=true" in notes(res3)
    m4, res4 = apply(str(m), num_stages=2, overwrite=True)
    assert res4.changed and m4.first("scf.for").attributes["tt.num_stages"] == 2


def test_the_loop_hint_reaches_triton(ttir):
    """tt.num_stages on the loop overrides the launch option's depth: 2 buffers instead of 3."""
    m, res = apply(ttir, num_stages=2)
    out = recompile(str(m), "cuda:90", stage="ttir", options={"num_warps": 4, "num_stages": 3})
    assert "!ttg.memdesc<2x" in out.asm["ttgir"] and "!ttg.memdesc<3x" not in out.asm["ttgir"]


def test_says_why_when_there_is_nothing_to_do(ttir):
    m, res = apply(ttir)
    assert not res.changed and "no hint asked for" in notes(res)
    soft = compile_kernel(KERNELS["softmax"], "cuda:90").text("ttir", locations=False)
    m, res = apply(soft, warp_specialize=True)
    assert not res.changed and "no scf.for contains a dot" in notes(res)


def test_rewriter_edits_the_dictionary_after_a_region(ttir):
    m = ir.parse(ttir)
    loop = m.first("scf.for")
    rw = ir.Rewriter(m)
    rw.set_attribute(loop, "tt.flatten", "unit")
    rw.set_attribute(loop, "tt.num_stages", "3 : i32")
    rw.set_attribute(loop, "tt.num_stages", "5 : i32")      # replaces its own earlier addition
    assert loop.attributes == {"tt.flatten": True, "tt.num_stages": 5}     # the model says what prints
    again = ir.parse(str(m))
    assert again.first("scf.for").attributes == {"tt.flatten": True, "tt.num_stages": 5}
    # an existing dictionary gains entries and has existing ones replaced
    loop2 = again.first("scf.for")
    rw2 = ir.Rewriter(again)
    rw2.set_attribute(loop2, "tt.num_stages", "2 : i32")
    rw2.set_attribute(loop2, "tt.warp_specialize", "unit")
    rw2.set_attribute(loop2, "tt.loop_unroll_factor", "1 : i32")
    assert loop2.attributes == ir.parse(str(again)).first("scf.for").attributes == {
        "tt.flatten": True, "tt.num_stages": 2, "tt.warp_specialize": True, "tt.loop_unroll_factor": 1}
    assert [c.kind for c in rw2.changes] == ["attribute"] * 3
    # the body is untouched
    assert [o.name for o in loop2.body.ops] == [o.name for o in m.first("scf.for").body.ops]


# a K loop whose attribute dictionary holds a string that looks like another dictionary
BRACES = """module {
  tt.func public @k(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %p: tensor<16x16x!tt.ptr<f32>>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<16x16xf32>)  : i32 {
      %d = tt.dot %a, %b, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
      scf.yield %d : tensor<16x16xf32>
    } {irlab.note = "not a dict: } {tt.num_stages = 9 : i32}", tt.num_stages = 3 : i32}
    tt.store %p, %r : tensor<16x16x!tt.ptr<f32>>
    tt.return
  }
}
"""


def test_a_string_that_looks_like_a_hint_is_not_read_or_edited_as_one():
    m, res = apply(BRACES, num_stages=9)
    assert not res.changed and str(m) == BRACES
    assert "tt.num_stages is already 3 on %r = scf.for (line 6); left as is (overwrite=true)" in notes(res), notes(res)
    m, res = apply(BRACES, num_stages=2, overwrite=True, warp_specialize=True)
    assert res.changed and res.verified
    assert str(m) == BRACES.replace('tt.num_stages = 3 : i32}', 'tt.num_stages = 2 : i32, tt.warp_specialize}')


@pytest.fixture(scope="module")
def persistent_ttir():
    """The tutorial GEMM's TTIR made persistent: a loop over tiles around the K loop."""
    from irlab.passkit.variant import Insert, Variant
    v = Variant("p", (Insert("persistent-tiles", stage="ttir", at="end"),))
    return compile_kernel(KERNELS["gemm_fp16"], "cuda:90", variant=v).text("ttir", locations=False)


def test_only_the_k_loop_of_a_persistent_kernel_gets_the_hints(persistent_ttir):
    m, res = apply(persistent_ttir, warp_specialize=True, num_stages=2)
    assert res.changed and res.verified, notes(res)
    tile, k = [o for o in m.walk() if o.name == "scf.for"]
    assert tile.attr("irlab.persistent_tiles") is True and k.enclosing("scf.for") is tile
    assert k.attributes.get("tt.warp_specialize") is True and k.attributes.get("tt.num_stages") == 2
    assert "tt.warp_specialize" not in tile.attributes and "tt.num_stages" not in tile.attributes
    assert "holds a K loop: left alone (loops=all" in notes(res)


def test_loops_all_puts_the_hints_on_every_loop_around_a_dot(persistent_ttir):
    m, res = apply(persistent_ttir, warp_specialize=True, loops="all")
    assert res.changed and res.verified, notes(res)
    assert all(o.attributes.get("tt.warp_specialize") is True for o in m.walk() if o.name == "scf.for")
    with pytest.raises(Exception, match="loops must be one of k, all"):
        make_pass("loop-attributes", {"loops": "tiles"})


def test_a_dot_under_an_if_in_the_loop_makes_it_a_k_loop():
    text = """module {
  tt.func public @f(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %n: i32, %p: i1) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<16x16xf32>)  : i32 {
      %d = scf.if %p -> (tensor<16x16xf32>) {
        %e = tt.dot %a, %b, %acc, inputPrecision = tf32 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
        scf.yield %e : tensor<16x16xf32>
      } else {
        scf.yield %acc : tensor<16x16xf32>
      }
      scf.yield %d : tensor<16x16xf32>
    }
    tt.return
  }
}
"""
    m, res = apply(text, num_stages=3)
    assert res.changed and m.first("scf.for").attributes.get("tt.num_stages") == 3, notes(res)
