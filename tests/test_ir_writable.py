"""A writable IR model: named operands, cloning, moves across blocks, retyping and attributes
through the model (span edits, re-read in place), defined_outside, and the rewrite driver that
reports the net change."""
from __future__ import annotations

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel
from irlab.bridge.services import TritonServices
from irlab.ir import PatternRewriter, RewriteError, RewritePattern, apply_patterns
from irlab.kernels import KERNELS

LOOP = """#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked2 = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32, ttg.target = "cuda:90"} {
  tt.func public @k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<512xf32, #blocked>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<512xf32, #blocked>)  : i32 {
      %p = tt.splat %x : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #blocked>
      %v = tt.load %p : tensor<512x!tt.ptr<f32>, #blocked>
      %q = arith.divsi %n, %c1 : i32
      %s = arith.addf %acc, %v : tensor<512xf32, #blocked>
      scf.yield %s : tensor<512xf32, #blocked>
    }
    %p2 = tt.splat %x : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #blocked>
    tt.store %p2, %r : tensor<512x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
"""


def verified(m) -> None:
    rejected = TritonServices().verify(str(m), "test.ttgir")
    assert rejected is None, str(rejected)


def test_named_operands_of_the_ops_passes_touch():
    m = ir.parse(LOOP)
    loop, store, load = m.first("scf.for"), m.first("tt.store"), m.first("tt.load")
    assert loop.lower_bound.ref == "%c0" and loop.upper_bound.ref == "%n" and loop.step.ref == "%c1"
    assert [v.ref for v in loop.init_args] == ["%zero"] and [a.ref for a in loop.iter_args] == ["%acc"]
    assert loop.induction_var.ref == "%i" and loop.yield_op.name == "scf.yield"
    assert store.ptr.ref == "%p2" and store.value.ref == "%r" and store.mask is None
    assert load.ptr.ref == "%p" and load.mask is None and load.other is None
    with pytest.raises(AttributeError, match="no attribute or named operand 'mask2'.*ptr, value, mask"):
        store.mask2  # noqa: B018
    text = compile_kernel(KERNELS["gemm_fp16"], "hip:gfx942").text("ttgir", locations=False)
    bl = ir.parse(text).first("amdg.buffer_load")
    assert bl.ptr.ref.startswith("%arg") and bl.offsets is not None and bl.mask is not None
    dot = ir.parse(text).first("tt.dot")
    assert dot.a.type.layout.op_idx == 0 and dot.b.type.layout.op_idx == 1 and dot.c.type.layout.is_mma


def test_vocabulary_result_index_and_group_index():
    m = ir.parse("%a:2 = tt.split %x : tensor<4x2xf32> -> tensor<4xf32>\n%b = arith.addf %a#1, %a#0 : tensor<4xf32>\n")
    add = m.ops[1]
    assert [(v.index, v.group_index) for v in add.operands] == [(1, 1), (0, 0)]
    assert [u.index for u in add.operand_uses] == [0, 1] and add.lhs is add.operands[0]


def test_defined_outside():
    m = ir.parse(LOOP)
    loop = m.first("scf.for")
    splat, load = loop.body.ops[0], loop.body.ops[1]
    assert splat.operands[0].defined_outside(loop) and not splat.result.defined_outside(loop)
    assert not loop.iter_args[0].defined_outside(loop) and loop.result.defined_outside(loop)
    assert load.result.defined_outside(loop.regions[0]) is False


def test_hoisting_a_pure_op_out_of_the_loop_and_refusals():
    m = ir.parse(LOOP)
    loop = m.first("scf.for")
    splat, load, div = loop.body.ops[0], loop.body.ops[1], loop.body.ops[2]
    rw = ir.Rewriter(m)
    assert rw.move_before(splat, loop)
    assert splat.parent is loop.parent and splat.lead == loop.lead
    verified(m)
    with pytest.raises(RewriteError, match="only pure ops move between blocks"):
        rw.move_before(load, loop)
    with pytest.raises(RewriteError, match="may trap"):
        rw.move_before(div, loop)   # a division may trap: not executed where it did not run before
    with pytest.raises(RewriteError, match="is nested inside"):
        rw.move_before(loop, loop.body.ops[0])
    assert [c.kind for c in rw.changes] == ["moved"]


def test_clone_with_new_names_and_a_value_map():
    m = ir.parse(LOOP)
    rw = ir.Rewriter(m)
    store = m.first("tt.store")
    p2 = store.ptr.defining_op
    mapping = {}
    clone = rw.clone(p2, before=store, mapping=mapping)
    assert clone.result.name != "p2" and mapping[p2.result] is clone.result
    rw.set_operand(store.operand_uses[0], clone.result)
    assert store.ptr is clone.result and not p2.result.uses
    rw.erase(p2)
    verified(m)


def test_retype_and_set_encoding_go_through_the_model():
    m = ir.parse(LOOP)
    rw = ir.Rewriter(m)
    store = m.first("tt.store")
    p2 = store.ptr.defining_op
    blocked, line = p2.result.type.layout, p2.line
    assert rw.set_encoding(p2, blocked, "#blocked2")
    assert p2.result.type.layout.alias == "blocked2" and p2.line == line   # re-read in place, same line
    assert "#blocked2" in str(m).splitlines()[line - 1] and str(m).count("\n") == LOOP.count("\n")
    # the same layout written inline is the same layout
    inline = ("#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>")
    assert rw.set_encoding(p2, m.layouts()["blocked2"], inline) and inline in p2.text
    assert not rw.set_encoding(p2, m.layouts()["blocked"], "#blocked2")   # nothing in #blocked any more


def test_set_attribute_edits_and_adds():
    m = ir.parse(LOOP)
    rw = ir.Rewriter(m)
    load = m.first("tt.load")
    rw.set_attribute(load, "isVolatile", "true")
    assert load.attr("isVolatile") is True and "{isVolatile = true}" in load.text
    rw.set_attribute(load, "isVolatile", "false")
    assert load.attr("isVolatile") is False
    verified(m)


class _Swap(RewritePattern):
    """Moves the splat after the load's neighbour and back: two patterns that undo each other."""
    ops = ("tt.splat",)

    def __init__(self, direction):
        self.direction = direction

    def match_and_rewrite(self, op, rw):
        block = op.parent
        if op.enclosing("scf.for") is None:
            return rw.notify_match_failure(op, "not in a loop")
        nxt = block.ops[block.index(op) + 1]
        if self.direction == "down" and nxt.name == "arith.divsi":
            rw.move_after(op, nxt)


def test_driver_reports_the_net_change_and_declines():
    m = ir.parse(LOOP)
    res = apply_patterns(m, [_Swap("down")])
    assert not res.changed and res.rewrites == 0 and str(m) == LOOP
    assert [reason for _, _, reason in res.declines] == ["not in a loop"]

    class Down(RewritePattern):
        ops = ("tt.load",)

        def match_and_rewrite(self, op, rw):
            nxt = op.parent.ops[op.parent.index(op) + 1]
            if nxt.name == "arith.divsi" and not getattr(self, "done", False):
                self.done = True
                rw.move_after(op, nxt)

    class Up(RewritePattern):
        ops = ("tt.load",)

        def match_and_rewrite(self, op, rw):
            prev = op.parent.ops[op.parent.index(op) - 1]
            if prev.name == "arith.divsi":
                rw.move_before(op, prev)

    m = ir.parse(LOOP)
    res = apply_patterns(m, [Down(), Up()])
    assert res.rewrites == 2 and not res.changed and res.cancelled and res.changes == [] and str(m) == LOOP


def test_driver_stops_patterns_that_never_settle():
    class PingPong(RewritePattern):
        ops = ("tt.load",)

        def match_and_rewrite(self, op, rw):
            block = op.parent
            i = block.index(op)
            other = block.ops[i + 1] if block.ops[i + 1].name == "arith.divsi" else block.ops[i - 1]
            (rw.move_after if other is block.ops[i + 1] else rw.move_before)(op, other)

    m = ir.parse(LOOP)
    with pytest.raises(RewriteError, match="no fixpoint.*PingPong"):
        apply_patterns(m, [PingPong()], PatternRewriter(m), max_rewrites=20)


def test_predicates_argument_attributes_and_variadic_operand_slots():
    """What passes read without regexes: a comparison's predicate, a function's argument
    attributes, and the n-th slot of a variadic operand (to replace one yielded value)."""
    text = """module {
  tt.func public @f(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 8 : i32}, %k: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0, %b = %c1) -> (i32, i32)  : i32 {
      %lt = arith.cmpi slt, %a, %k : i32
      %s = arith.addi %a, %b : i32
      scf.yield %s, %s : i32, i32
    }
    tt.return
  }
}
"""
    m = ir.parse(text)
    assert m.first("arith.cmpi").predicate == "slt" and m.first("arith.addi").predicate is None
    assert m.first("tt.func").argument_attributes() == {"p": {"tt.divisibility": 16}, "n": {"tt.divisibility": 8}}
    loop = m.first("scf.for")
    yld = loop.body.ops[-1]
    second = yld.operand_use("values", 1)
    assert second is not None and second is not yld.operand_use("values", 0) and yld.operand_use("values", 2) is None
    rw = ir.Rewriter(m)
    rw.set_operand(second, loop.iter_args[1], "keep b")
    assert "scf.yield %s, %b : i32, i32" in str(m)


class _HalfWay(RewritePattern):
    """Moves the splat, retypes the divsi's attributes, inserts and clones ops, repoints a use --
    then asks for a move the rewriter refuses (the load above the splat it uses)."""
    ops = ("tt.load",)

    def __init__(self, ctx=None):
        self.ctx = ctx

    def match_and_rewrite(self, load, rw):
        body = load.parent
        splat, div = body.ops[0], body.ops[2]
        rw.move_after(div, splat)
        rw.set_attribute(div, "irlab.mark", "1 : i32")
        rw.insert_before(load, "%extra = arith.addi %n, %n : i32")
        copy = rw.clone(splat, before=load)
        rw.set_operand(load.operand_use("ptr"), copy.result)
        rw.erase(splat)
        if self.ctx is not None:
            self.ctx.remark("half-way there", load)
        rw.move_before(load, copy)   # the load uses the copy: refused


def test_driver_undoes_an_application_the_rewriter_refuses_half_way():
    m = ir.parse(LOOP)
    ops = list(m.walk())
    lines = [(op.line, op.column) for op in ops]
    load = m.first("tt.load")
    res = apply_patterns(m, [_HalfWay()])
    assert str(m) == LOOP and not res.changed and res.rewrites == 0 and res.changes == []
    # the same objects, in their places, with their lines and uses
    assert list(m.walk()) == ops and [(op.line, op.column) for op in ops] == lines
    assert load.ptr is m.first("tt.splat").result and load.ptr.users == [load]
    assert [u.op.name for u in m.first("scf.for").lower_bound.uses] == ["scf.for"]
    [(pattern, op, reason)] = res.declines
    assert pattern == "_HalfWay" and op is load
    assert reason.startswith("not rewritten: cannot move %v = tt.load (line 10) before %p_c = tt.splat")
    assert "(its 6 earlier change(s) here were undone)" in reason
    # the restored module takes later rewrites like one never touched
    rw = ir.Rewriter(m)
    rw.move_after(m.first("arith.divsi"), m.first("tt.splat"))
    assert str(m) == LOOP.replace("      %v = tt.load %p : tensor<512x!tt.ptr<f32>, #blocked>\n"
                                  "      %q = arith.divsi %n, %c1 : i32\n",
                                  "      %q = arith.divsi %n, %c1 : i32\n"
                                  "      %v = tt.load %p : tensor<512x!tt.ptr<f32>, #blocked>\n")
    verified(m)


def test_a_pass_reports_the_undone_application_as_a_note_without_its_remarks():
    from irlab.passkit.pass_api import ModulePass

    class HalfWayPass(ModulePass):
        name = "half-way"

        def run(self, ctx):
            ctx.apply_patterns(_HalfWay(ctx))

    m = ir.parse(LOOP)
    res = HalfWayPass().apply(m)
    assert not res.changed and str(m) == LOOP
    assert [(d.severity, d.line) for d in res.diagnostics] == [("note", 10)]
    assert "cannot move %v = tt.load (line 10)" in res.diagnostics[0].message


def test_a_refusal_outside_the_driver_is_a_pass_error_and_leaves_the_module():
    from irlab.passkit.pass_api import ModulePass, PassError

    class Direct(ModulePass):
        name = "direct"

        def run(self, ctx):
            rw = ctx.rewriter
            rw.set_attribute(ctx.module.first("tt.load"), "isVolatile", "true")
            rw.erase(ctx.module.first("tt.splat"))   # still used: refused

    m = ir.parse(LOOP)
    with pytest.raises(PassError, match="pass 'direct' stopped: cannot erase %p = tt.splat .*left as it was given"):
        Direct().apply(m)
    assert str(m) == LOOP and "isVolatile" not in m.first("tt.load").text


def test_a_refused_replacement_leaves_no_uses_behind():
    m = ir.parse(LOOP)
    rw = ir.Rewriter(m)
    div = m.first("arith.divsi")
    n = m.first("tt.func").regions[0].entry.arguments[1]
    users = [u.op for u in n.uses]
    with pytest.raises(RewriteError, match="must define 1 result") as refused:
        rw.replace_op(div, "arith.addi %n, %n : i32")
    assert refused.value.op is div   # the error carries the op it refused, as well as the reason
    with pytest.raises(RewriteError, match="changes the type of %q"):
        rw.replace_op(div, "%q2 = arith.addf %n, %n : f32")
    with pytest.raises(RewriteError, match="must define the same results"):
        rw._rebuild(div, "%q, %q3 = arith.divsi %n, %c1 : i32")
    assert [u.op for u in n.uses] == users and str(m) == LOOP
