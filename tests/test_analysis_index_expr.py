"""irlab.analysis.index_expr: the typed terms of tile addresses, masks and loop walks, on a small
hand-written TTIR loop (tests/data/tile_loop.ttir, which Triton's parser and verifier accept), and
what each recognizer says when the form is not the one it reads."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from irlab import ir
from irlab.analysis import index_expr as ix

TEXT = (Path(__file__).parent / "data" / "tile_loop.ttir").read_text()


def parsed(text=TEXT):
    m = ir.parse(text)
    return m, m.first("scf.for"), m.first("tt.load"), m.first("tt.store")


def arg(m, name):
    return next(a for a in m.functions[0].regions[0].entry.arguments if a.name == name)


def edited(old, new):
    assert old in TEXT, old
    return parsed(TEXT.replace(old, new, 1))


def test_tile_address_reads_the_wrapped_rows_and_contiguous_columns():
    m, loop, _, _ = parsed()
    a = ix.tile_address(loop.init_args[0])
    assert a.base is arg(m, "base")
    assert a.rows == ix.AxisTerm(0, 64, arg(m, "start"), arg(m, "M"), 1, (arg(m, "stride"),))
    assert a.cols == ix.AxisTerm(1, 32) and a.cols.plain and not a.rows.unit


def test_tile_walk_and_the_walked_extent():
    m, loop, ld, _ = parsed()
    w = ix.tile_walk(loop, ld.ptr)
    assert (w.slot, w.axis, w.step, w.pitch) == (0, 1, 32, arg(m, "stride"))
    assert ix.walked_extent(ld.mask, loop, w) is arg(m, "K")


def test_the_store_mask_bounds_both_axes():
    m, _, _, st = parsed()
    a = ix.tile_address(st.ptr)
    assert a.rows.wrap is None and a.rows.start is arg(m, "start")
    assert ix.tile_bounds(st.mask, a) == (arg(m, "M"), arg(m, "K"))
    assert ix.has_bound(st.mask, 0, arg(m, "start"), arg(m, "M"))
    assert not ix.has_bound(st.mask, 0, None, arg(m, "M"))          # another start
    assert not ix.has_bound(st.mask, 1, arg(m, "start"), arg(m, "M"))  # another axis


def test_uniform_values_are_typed():
    m, loop, ld, _ = parsed()
    yld = loop.body.ops[-1]
    step = yld.values[0].defining_op.offset
    assert ix.uniform(step) == ix.Const(32)
    assert ix.uniform(arg(m, "K")) == ix.Scalar(arg(m, "K"))
    assert ix.uniform(ld.mask) is None
    kk = next(o for o in loop.body.ops if o.name == "arith.muli").result
    assert ix.multiple_of(kk, loop.induction_var) == 32
    assert ix.minus_multiple(next(o for o in loop.body.ops if o.name == "arith.subi").result,
                             loop.induction_var) == (arg(m, "K"), 32)


@pytest.mark.parametrize("old, new, message", [
    # the columns scaled by a constant: not contiguous
    ("%off = arith.addi %rob, %ceb", "%ceb2 = arith.muli %ceb, %c32 : tensor<64x32xi32>\n"
     "    %off = arith.addi %rob, %ceb2", "innermost axis has a stride other than 1"),
    # both terms along axis 0
    ("%off = arith.addi %rob, %ceb", "%eb = tt.broadcast %e : tensor<64x1xi32> -> tensor<64x32xi32>\n"
     "    %off = arith.addi %rob, %eb", "two index terms vary along axis 0"),
    # a product of two varying tensors
    ("%ro = arith.muli %e, %st", "%ro = arith.muli %e, %e", "multiplies two varying tensors"),
    # the pointer advances by a varying offset
    ("%next = tt.addptr %pp, %c32", "%next = tt.addptr %pp, %off", "non-uniform offset"),
    # the mask bound is K - iv * 16, not K - iv * 32
    ("%kk = arith.muli %iv, %c32_i32", "%kk = arith.muli %iv, %c8", "is not EXTENT - iv * 32"),
    # the mask compares with sle
    ("%mk = arith.cmpi slt, %ce, %lims", "%mk = arith.cmpi sle, %ce, %lims", "not `arith.cmpi slt`"),
])
def test_unmatched_forms_say_what_they_found(old, new, message):
    m, loop, ld, _ = edited(old, new)
    with pytest.raises(ix.Unmatched, match=re.escape(message)):
        w = ix.tile_walk(loop, ld.ptr)
        ix.walked_extent(ld.mask, loop, w)


def test_a_loop_that_does_not_carry_the_pointer():
    m, loop, ld, _ = parsed()
    with pytest.raises(ix.Unmatched, match="not loop-carried"):
        ix.loop_pointer(loop, loop.init_args[0])


def test_an_index_walk_that_runs_out_of_depth_at_a_block_argument_says_so():
    """A chain of constant multiplies as long as the walk's depth, over a 2-D block argument:
    the walk stops at the argument, which has no defining op to describe."""
    muls = "\n".join(f"    %v{i + 1} = arith.muli %v{i}, %c2 : tensor<64x32xi32>" for i in range(ix._MAX_DEPTH))
    m = ir.parse(f"module {{\n  tt.func public @f(%v0: tensor<64x32xi32>) {{\n"
                 f"    %c2 = arith.constant dense<2> : tensor<64x32xi32>\n{muls}\n    tt.return\n  }}\n}}\n")
    last = [op for op in m.walk() if op.name == "arith.muli"][-1]
    with pytest.raises(ix.Unmatched, match=re.escape("%v0 (a block argument) is not an expanded index vector")):
        ix.axis_term(last.result)
