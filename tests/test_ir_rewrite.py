"""Rewrites keep the IR valid or refuse with the reason; untouched lines stay byte-identical;
rewritten IR is accepted by Triton and compiles to a binary on every target."""
from __future__ import annotations

import difflib

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel, recompile
from irlab.ir import RewriteError, Rewriter
from irlab.kernels import KERNELS
from irlab.base.targets import DEFAULT_TARGETS


def _changed_lines(a: str, b: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0):
        if line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:])
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
    return removed, added


@pytest.fixture(scope="module")
def gluon_text():
    return compile_kernel(KERNELS["gluon_gemm_prefetch"], "cuda:80").text("ttgir")


def _loop_ops(m):
    body = m.first("scf.for").regions[0].entry
    by = lambda name: [o for o in body.ops if o.name == name]  # noqa: E731
    return body, by


def test_move_changes_only_the_moved_line(gluon_text):
    m = ir.parse(gluon_text)
    body, by = _loop_ops(m)
    second_load, last_local_load = by("tt.load")[1], by("ttg.local_load")[-1]
    rw = Rewriter(m)
    rw.move_after(second_load, last_local_load)
    out = str(m)
    removed, added = _changed_lines(gluon_text, out)
    assert removed == added == [second_load.original_text.join(["", ""]) and removed[0]]
    assert second_load.original_text in removed[0]
    names = [o.name for o in body.ops]
    assert names.index("tt.load", names.index("ttg.local_load")) > names.index("ttg.local_load")
    assert [c.kind for c in rw.changes] == ["moved"]
    # the new order is visible through the model, and prints the same after a re-parse
    assert str(ir.parse(out)) == out


def test_move_refuses_to_break_dominance(gluon_text):
    m = ir.parse(gluon_text)
    body, by = _loop_ops(m)
    dot = by("tt.dot")[0]
    ll = by("ttg.local_load")[0]
    rw = Rewriter(m)
    with pytest.raises(RewriteError, match="used by .*tt.dot.*would come before it"):
        rw.move_after(ll, dot)
    load = by("tt.load")[0]
    addptr = load.operands[0].defining_op
    assert addptr.parent is body
    with pytest.raises(RewriteError, match="uses %.*defined by .*tt.addptr.*would come after it"):
        rw.move_before(load, addptr)
    # out of the loop: its pointer is defined in the loop, and a load may not change blocks anyway
    with pytest.raises(RewriteError, match="uses %a_ptrs.*which would come after it"):
        rw.move_before(load, m.first("tt.get_program_id"))
    with pytest.raises(RewriteError, match="terminator"):
        rw.move_after(load, body.ops[-1])
    assert rw.changes == [] and str(m) == gluon_text


def test_erase_refuses_while_used_and_removes_uses(gluon_text):
    m = ir.parse(gluon_text)
    body, by = _loop_ops(m)
    load = by("tt.load")[0]
    rw = Rewriter(m)
    with pytest.raises(RewriteError, match="still used by .*ttg.local_store"):
        rw.erase(load)
    # erase the store first, then the load is unused and can go
    store = load.result.users[0]
    ptr = load.operands[0]
    n_ptr_uses = len(ptr.uses)
    rw.erase(store)
    rw.erase(load)
    assert len(ptr.uses) == n_ptr_uses - 1
    removed, added = _changed_lines(gluon_text, str(m))
    assert added == [] and len(removed) == 2


def test_insert_from_text_binds_to_visible_values_and_checks_names(gluon_text):
    m = ir.parse(gluon_text)
    pid = m.first("tt.get_program_id")
    rw = Rewriter(m)
    name = pid.result.name
    new = rw.insert_after(pid, f"%irlab_one = arith.constant 1 : i32\n"
                               f"%irlab_pid1 = arith.addi %{name}, %irlab_one : i32")
    assert [o.name for o in new] == ["arith.constant", "arith.addi"]
    assert new[1].operands[0] is pid.result and new[1].operands[1] is new[0].result
    assert pid.result.users[-1] is new[1]
    out = str(m)
    removed, added = _changed_lines(gluon_text, out)
    assert removed == [] and [a.strip() for a in added] == [
        "%irlab_one = arith.constant 1 : i32", f"%irlab_pid1 = arith.addi %{name}, %irlab_one : i32"]
    # indentation follows the anchor
    indent = pid.lead.rsplit("\n", 1)[1]
    assert all(a.startswith(indent) and not a.startswith(indent + " ") for a in added)
    with pytest.raises(RewriteError, match="not defined before the insertion point"):
        rw.insert_before(pid, "%x9 = arith.addi %irlab_pid1, %irlab_pid1 : i32")
    with pytest.raises(RewriteError, match="already defines"):
        rw.insert_after(pid, f"%{name} = arith.constant 3 : i32")
    with pytest.raises(RewriteError, match="does not define"):
        rw.insert_after(pid, "%q = arith.constant dense<0> : tensor<4xi32, #nosuchlayout>")
    assert rw.fresh_name(name) != name and rw.fresh_name("brand_new") == "brand_new"


def test_replace_all_uses_checks_types_and_dominance(gluon_text):
    m = ir.parse(gluon_text)
    pid = m.first("tt.get_program_id")
    rw = Rewriter(m)
    users_before = list(pid.result.uses)
    zero, same = rw.insert_after(pid, f"%irlab_z = arith.constant 0 : i32\n"
                                      f"%irlab_same = arith.addi %{pid.result.name}, %irlab_z : i32")
    n = rw.replace_all_uses(pid.result, same.result, only=lambda u: u.op is not same)
    assert n == len(users_before) and all(u.value is same.result for u in users_before)
    out = str(m)
    for u in users_before:
        assert f"%{pid.result.name}" not in u.op.text.split("=", 1)[1].split(":")[0] or u.op is same
    with pytest.raises(RewriteError, match="types differ"):
        rw.replace_all_uses(same.result, m.first("tt.make_range").result)
    ret = m.first("tt.return")
    late, = rw.insert_before(ret, "%irlab_late = arith.constant 0 : i32")
    with pytest.raises(RewriteError, match="not defined before that use"):
        rw.replace_all_uses(zero.result, late.result)
    assert str(ir.parse(out)) == out


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_rewritten_ir_is_accepted_by_triton_and_compiles(target):
    base = compile_kernel(KERNELS["gemm_fp16"], target)
    text = base.text("ttgir")
    m = ir.parse(text)
    fn = m.functions[0]
    body = fn.regions[0].entry
    pid = m.first("tt.get_program_id")
    rw = Rewriter(m)
    # insert, replace uses, move and erase, all in one module
    z, same = rw.insert_after(pid, f"%irlab_z = arith.constant 0 : i32\n"
                                   f"%irlab_pid = arith.addi %{pid.result.name}, %irlab_z : i32")
    rw.replace_all_uses(pid.result, same.result, only=lambda u: u.op is not same)
    consts = [o for o in body.ops if o.name == "arith.constant"]
    rw.move_before(consts[-1], body.ops[0])
    dead, = rw.insert_after(same, "%irlab_dead = arith.muli %irlab_pid, %irlab_pid : i32")
    rw.erase(dead)
    out = str(m)
    assert out != text
    res = recompile(out, target=target, produced_by="test rewrite")
    assert len(res.binary) > 1000
    # a pure re-ordering of a constant and an add of zero leave the kernel's work unchanged
    assert res.metadata["shared"] == base.metadata["shared"]


def test_triton_rejects_bad_rewrite_with_a_clear_error(tmp_path):
    base = compile_kernel(KERNELS["softmax"], "cuda:80")
    m = ir.parse(base.text("ttgir"))
    load = m.first("tt.load")
    rw = Rewriter(m)
    # change the loaded type behind the model's back: Triton's verifier must catch it
    rw.replace_op(load, load.text.replace("tensor<1024x!tt.ptr<f32>", "tensor<1024x!tt.ptr<f16>", 1),
                  allow_type_change=True)
    from irlab.bridge.pipeline import VerifierError
    with pytest.raises(VerifierError) as info:
        recompile(str(m), target="cuda:80", produced_by="my-broken-pass", work_dir=tmp_path)
    err = info.value
    assert err.pass_name == "my-broken-pass"
    assert "my-broken-pass" in str(err) and str(tmp_path) in err.ir_path
    assert (tmp_path / "input.ttgir").read_text() == str(m)
    assert err.detail


CHAIN = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>
module {
tt.func @f(%acc: tensor<4x8xf32, #mma>, %x: f32, %p: tensor<4x8x!tt.ptr<f32>, #blocked>) {
  %cvt = ttg.convert_layout %acc : tensor<4x8xf32, #mma> -> tensor<4x8xf32, #blocked>
  %s = tt.splat %x : f32 -> tensor<4x8xf32, #blocked>
  %m = arith.mulf %cvt, %s : tensor<4x8xf32, #blocked>
  %n = math.absf %m : tensor<4x8xf32, #blocked>
  tt.store %p, %n : tensor<4x8x!tt.ptr<f32>, #blocked>
  tt.return
}
}
"""


def _to_mma(t):
    enc = getattr(t, "encoding_text", None)
    return str(t).replace("#blocked", "#mma") if enc == "#blocked" else None


def test_retype_chain_moves_the_chain_onto_the_new_value_and_clones_its_splats():
    m = ir.parse(CHAIN)
    cvt, mul, absf = m.first("ttg.convert_layout"), m.first("arith.mulf"), m.first("math.absf")
    rw = Rewriter(m)
    end = rw.retype_chain([mul, absf], cvt.result, cvt.src, _to_mma, "moved", "the splat, moved")
    assert end is absf.result
    removed, added = _changed_lines(CHAIN, str(m))
    assert removed == ["  %m = arith.mulf %cvt, %s : tensor<4x8xf32, #blocked>",
                       "  %n = math.absf %m : tensor<4x8xf32, #blocked>"]
    assert added == ["  %s_c = tt.splat %x : f32 -> tensor<4x8xf32, #mma>",
                     "  %m = arith.mulf %acc, %s_c : tensor<4x8xf32, #mma>",
                     "  %n = math.absf %m : tensor<4x8xf32, #mma>"]
    # the store, not part of the chain, is the caller's: still in the old layout, reading the chain's end
    assert m.first("tt.store").operands[1] is end
    kinds = [(c.kind, c.detail.endswith("(the splat, moved)"), c.detail.endswith("(moved)"))
             for c in rw.changes if c.kind in ("inserted", "retyped")]
    assert kinds == [("inserted", True, False), ("retyped", False, True), ("retyped", False, True)]
    assert rw.retype_chain([], cvt.result, cvt.src, _to_mma) is cvt.src


ALIASED = """#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#other = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func @f(%x: tensor<128xf32, #blocked>, %p: !tt.ptr<f32>) {
    %a = arith.addf %x, %x : tensor<128xf32, #blocked>
    %b = arith.addf %x, %x : tensor<128xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>
    %o = ttg.convert_layout %x : tensor<128xf32, #blocked> -> tensor<128xf32, #other>
    %c = arith.addf %a, %a : tensor<128xf32, #blocked>
    %q = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #blocked>
    %r = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32, 1>, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>
    tt.return
  }
}
"""


def test_types_are_compared_by_meaning_not_by_how_they_are_written():
    """The same layout through its alias and written inline is the same type: replace_all_uses and
    replace_op accept it; another layout is still another type."""
    from irlab.ir.types import same_type
    m = ir.parse(ALIASED)
    a, b, c = m.find("arith.addf")
    other = m.first("ttg.convert_layout")
    q, r = m.find("tt.splat")
    assert str(a.result.type) != str(b.result.type) and same_type(a.result.type, b.result.type)
    assert same_type(q.result.type, r.result.type)          # pointee and address space too
    assert not same_type(a.result.type, other.result.type)
    assert not same_type(a.result.type, q.result.type) and not same_type(a.result.type, None)
    rw = Rewriter(m)
    assert rw.replace_all_uses(a.result, b.result) == 2 and c.operands == [b.result, b.result]
    with pytest.raises(RewriteError, match="types differ"):
        rw.replace_all_uses(b.result, other.result)
    new = rw.replace_op(q, "%q2 = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #ttg.blocked<{sizePerThread = "
                           "[1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>")
    assert new[0].name == "tt.splat"


def test_same_layout_is_part_of_the_pass_api():
    from irlab.ir.attributes import same_layout
    from irlab.ir.types import same_type
    from irlab.passkit import pass_api
    assert pass_api.same_layout is same_layout and pass_api.same_type is same_type
    assert ir.same_layout is same_layout and ir.same_type is same_type
