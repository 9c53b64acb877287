"""Layout-derived hints follow a layout change: the rewriter recomputes ``contiguity`` from the
new layout's run per lane, or drops it where irlab does not know the run, for every way a rewrite
can move an op to another layout (retype, set_encoding, clone with new types, replace_op)."""
from __future__ import annotations

import pytest

from irlab import ir
from irlab.ir import Rewriter
from irlab.ir.layouts import LaneRun, lane_run

HEAD = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#wide = #ttg.blocked<{sizePerThread = [1, 16], threadsPerWarp = [16, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#colmajor = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#mmaT = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = false}>
#wmma = #ttg.amd_wmma<{version = 2, isTranspose = false, warpsPerCTA = [2, 2]}>
#linear = #ttg.linear<{register = [[0, 1], [0, 2], [0, 4], [4, 0]], lane = [[0, 8], [0, 16], [0, 32], [8, 0], [16, 0], [32, 0]], warp = [[1, 0], [2, 0]], block = []}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @k(%p: !tt.ptr<f16>, %o: tensor<64x64xi32, #blocked>, %v: tensor<64x64xf16, #blocked>) {
"""
STORE = "    amdg.buffer_store %v, %p[%o] {contiguity = 8 : i32} : !tt.ptr<f16> -> tensor<64x64xf16, #blocked>\n"
TAIL = "    tt.return\n  }\n}\n"


def _store(attrs: str = "{contiguity = 8 : i32} "):
    m = ir.parse(HEAD + STORE.replace("{contiguity = 8 : i32} ", attrs) + TAIL)
    return m, m.first("amdg.buffer_store")


def _retyped(layout: str, attrs: str = "{contiguity = 8 : i32} "):
    m, st = _store(attrs)
    rw = Rewriter(m)
    rw.retype(st, lambda t: str(t).replace("#blocked", layout) if "#blocked" in str(t) else None)
    return m.first("amdg.buffer_store"), rw


@pytest.mark.parametrize("layout, run", [
    ("#blocked", LaneRun(1, 8)), ("#wide", LaneRun(1, 16)), ("#colmajor", LaneRun(0, 8)),
    ("#mma", LaneRun(1, 4)), ("#mmaT", LaneRun(0, 4)), ("#linear", LaneRun(1, 8)), ("#wmma", None)])
def test_lane_run_of_each_modelled_layout(layout, run):
    m = ir.parse(HEAD + f"    %x = arith.constant dense<0.0> : tensor<64x64xf16, {layout}>\n" + TAIL)
    assert lane_run(m.first("arith.constant").result.type) == run


@pytest.mark.parametrize("order", ["[3, 0]", "[1, 1]", "[-1, 0]"])
def test_a_blocked_layout_whose_order_is_no_permutation_is_not_modelled(order):
    """Found by tests/fuzz_layouts.py's mutation (an unverified pass input): no claim, no IndexError."""
    bad = f"#ttg.blocked<{{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = {order}}}>"
    m = ir.parse(HEAD + f"    %x = arith.constant dense<0.0> : tensor<64x64xf16, {bad}>\n" + TAIL)
    assert lane_run(m.first("arith.constant").result.type) is None


def test_lane_run_is_capped_by_the_tensor_extent():
    m = ir.parse(HEAD + "    %x = arith.constant dense<0.0> : tensor<64x4xf16, #blocked>\n" + TAIL)
    assert lane_run(m.first("arith.constant").result.type) == LaneRun(1, 4)


def test_contiguity_is_lowered_to_the_new_layouts_run():
    st, rw = _retyped("#mma")
    assert st.attributes["contiguity"] == 4
    assert "{contiguity = 4 : i32} : !tt.ptr<f16> -> tensor<64x64xf16, #mma>" in st.text
    assert any(c.kind == "attribute" and "runs of 4 along dim 1" in str(c) for c in rw.changes)


def test_contiguity_is_kept_when_the_new_layout_allows_it():
    st, _ = _retyped("#wide")
    assert st.attributes["contiguity"] == 8


@pytest.mark.parametrize("layout, why", [("#mmaT", "along dim 0"), ("#wmma", "does not model"),
                                         ("#colmajor", "along dim 0")])
def test_contiguity_is_dropped_where_the_run_is_unknown_or_along_another_dim(layout, why):
    st, rw = _retyped(layout)
    assert "contiguity" not in st.attributes
    assert "{" not in st.text.split("amdg.buffer_store", 1)[1]   # the emptied dictionary went too
    assert any(c.kind == "attribute" and why in str(c) for c in rw.changes)
    assert ir.parse(str(st.module)).first("amdg.buffer_store").attributes == {}


def test_other_attributes_stay_when_a_hint_is_dropped():
    st, _ = _retyped("#mmaT", "{cache = 1 : i32, contiguity = 8 : i32} ")
    assert st.attributes == {"cache": 1}
    st, _ = _retyped("#mmaT", "{contiguity = 8 : i32, cache = 1 : i32} ")
    assert st.attributes == {"cache": 1}


def test_an_element_type_change_keeps_the_hint():
    m, st = _store()
    rw = Rewriter(m)
    assert not rw.retype(st, lambda t: None)
    assert st.attributes["contiguity"] == 8


def test_set_encoding_and_clone_with_new_types_recompute_too():
    m, st = _store()
    rw = Rewriter(m)
    rw.set_encoding(st, st.operand_use("value").value.type.layout, "#mma")
    assert m.first("amdg.buffer_store").attributes["contiguity"] == 4
    m, st = _store()
    rw = Rewriter(m)
    copy = rw.clone(st, before=st, new_type=lambda t: str(t).replace("#blocked", "#mmaT")
                    if "#blocked" in str(t) else None)
    assert "contiguity" not in copy.attributes and st.attributes["contiguity"] == 8


def test_replace_op_checks_a_hint_copied_from_the_replaced_op():
    m, st = _store()
    rw = Rewriter(m)
    text = st.text.strip().replace("#blocked", "#mma")
    new = rw.replace_op(st, text)[0]
    assert new.attributes["contiguity"] == 4


def test_an_op_whose_types_take_two_layouts_is_bounded_by_the_shorter_run():
    """Where the types written in an op take two layouts (runs of 4 and of 16 along the same dim),
    one lane's access is contiguous only as far as both allow: the hint becomes 4, the shorter run."""
    from irlab.ir.hints import stale_hints
    m = ir.parse(HEAD + "    %a = arith.constant dense<0.0> : tensor<64x64xf16, #mma>\n"
                 "    %b = arith.constant dense<0> : tensor<64x64xi32, #wide>\n" + STORE + TAIL)
    st = m.first("amdg.buffer_store")
    before = [st.operands[0].type]                       # tensor<64x64xf16, #blocked>: runs of 8
    after = [op.result.type for op in m.walk() if op.name == "arith.constant"]
    changes = stale_hints(st, before, after)
    assert [(c.key, c.new_text) for c in changes] == [("contiguity", "4 : i32")]
