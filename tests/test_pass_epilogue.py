"""optimize-epilogue: stores from the MMA layout where it is safe, refusals with reasons elsewhere."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel, recompile
from irlab.bridge.pass_runner import run_pass
from irlab.kernels import KERNELS
from irlab.passkit.registry import make_pass
from irlab.bridge.named_variants import AMD_NO_EPILOGUE, get_variant
from tests.kernels import persistent_gemm

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

# the shape of the sm_80 GEMM epilogue's last two lines, whatever numbers Triton gives its SSA values
CVT_SHAPE = "%N = ttg.convert_layout %N : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #blocked>"
STORE_SHAPE = "tt.store %N, %N, %N : tensor<128x128x!tt.ptr<f16>, #blocked>"


@dataclass(frozen=True)
class Epilogue:
    """The sm_80 GEMM's epilogue, found by structure: the tt.store after the K loop whose value is a
    ttg.convert_layout out of the MMA layout of the loop's (truncated) accumulator."""
    text: str     # the module's TTGIR
    store: str    # the store's line, as printed (with its indent and newline)
    line: int     # its 1-based line number
    ptr: str      # the SSA names the store uses (%83, %91, %90 on Triton 3.6)
    value: str
    mask: str
    first_address_line: int  # 1-based line of the first op of the store's address and mask math

    def before_store(self, ops: str, value: str | None = None) -> str:
        """The module with ``ops`` inserted just before the store, which then stores ``value``."""
        store = self.store
        if value is not None:
            store = store.replace(f" {self.ptr}, {self.value}, ", f" {self.ptr}, {value}, ")
            assert store.count(f" {self.ptr}, {value}, ") == 1 and store != self.store
        lines = self.text.splitlines(keepends=True)
        assert lines[self.line - 1] == self.store
        return "".join(lines[:self.line - 1] + [ops, store] + lines[self.line:])


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the one line of ``text`` that holds ``needle``."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def find_epilogue(text: str) -> Epilogue:
    m = ir.parse(text)
    stores = m.find(("tt.store", "amdg.buffer_store", "tt.atomic_rmw", "tt.atomic_cas"))
    assert [s.name for s in stores] == ["tt.store"], "the sm_80 GEMM epilogue changed shape: its stores"
    st = stores[0]
    cvt = st.value.defining_op
    assert cvt is not None and cvt.name == "ttg.convert_layout", "the stored value is no longer a convert_layout"
    assert cvt.src.type.layout.is_mma and cvt.result.type.layout.kind == "blocked", cvt.text
    assert cvt.result.users == [st], "the convert has users other than the store"
    # ... of the accumulator the K loop returns, truncated after the loop; the store follows the loop
    trunc = cvt.src.defining_op
    assert trunc is not None and trunc.name == "arith.truncf", "the converted value is not the truncated accumulator"
    acc = trunc.operands[0]
    loop = acc.defining_op
    assert loop is not None and loop.name == "scf.for" and st.enclosing("scf.for") is None
    assert loop.block is st.block and loop.is_before_in_block(st)
    assert loop.body.ops[-1].values[acc.index].defining_op.name == "tt.dot", "the loop's result is not the dot's"
    assert re.sub(r"%\d+", "%N", cvt.text) == CVT_SHAPE, "the sm_80 GEMM epilogue changed shape: " + cvt.text
    assert re.sub(r"%\d+", "%N", st.text) == STORE_SHAPE, "the sm_80 GEMM epilogue changed shape: " + st.text
    assert st.mask is not None

    # the store's address and mask math: what its pointer and mask are computed from after the loop
    after, seen, todo = st.block.ops[st.block.index(loop) + 1:], set(), [st.ptr, st.mask]
    while todo:
        op = todo.pop().defining_op
        if op is not None and op in after and id(op) not in seen:
            seen.add(id(op))
            todo.extend(op.operands)
    address = [op for op in after if id(op) in seen]
    assert address and address[0].name == "tt.expand_dims", [op.text for op in address[:1]]

    store_line = text.splitlines(keepends=True)[st.line - 1]
    assert store_line.strip() == st.text.strip()
    return Epilogue(text, store_line, st.line, st.ptr.ref, st.value.ref, st.mask.ref, address[0].line)


@pytest.fixture(scope="module")
def sm80() -> Epilogue:
    return find_epilogue(compile_kernel(KERNELS["gemm_fp16"], "cuda:80").text("ttgir", locations=False))


def apply(text, verify=True, **options):
    m = ir.parse(text)
    return m, run_pass(make_pass("optimize-epilogue", options), m, verify=verify)


def notes(res):
    return " | ".join(d.message for d in res.diagnostics)


def epilogue_converts(m):
    return [o for o in m.walk() if o.name == "ttg.convert_layout" and o.enclosing("scf.for") is None]


@pytest.mark.parametrize("kernel,target", [("gemm_fp16", "cuda:80"), ("gemm_fp16", "cuda:90"),
                                           ("gluon_gemm_prefetch", "cuda:80"), ("int4_gemm", "cuda:90"),
                                           ("gemm_fp16", "hip:gfx942")])
def test_stores_straight_from_the_mma_layout(kernel, target):
    variant = AMD_NO_EPILOGUE if target.startswith("hip") else None
    text = compile_kernel(KERNELS[kernel], target, variant=variant).text("ttgir", locations=False)
    m, res = apply(text)
    assert res.changed, notes(res)
    assert not epilogue_converts(m)
    store = m.first(("tt.store", "amdg.buffer_store"))
    assert store.operand_types[1 if store.name == "tt.store" else 0].layout.is_mma
    assert any(d.severity == "remark" and "stores from" in d.message for d in res.diagnostics)
    # the rewritten IR compiles on to a binary, and the full variant (with Triton's cleanup) leaves
    # no convert in the epilogue either
    assert recompile(str(m), target=target, produced_by="optimize-epilogue").binary
    full = compile_kernel(KERNELS[kernel], target, variant=get_variant("optimize-epilogue", target))
    assert not epilogue_converts(full.module("ttgir", locations=False))


def test_refuses_atomic_epilogues_split_k():
    for target in ("cuda:80", "hip:gfx942"):
        text = compile_kernel(KERNELS["gemm_splitk"], target).text("ttgir", locations=False)
        m, res = apply(text)
        assert not res.changed and str(m) == text
        assert "atomic (split-K / stream-K epilogue)" in notes(res)


def test_refuses_a_convert_with_more_than_one_use(sm80):
    text = sm80.before_store(f"    %dup = arith.addf {sm80.value}, {sm80.value} : tensor<128x128xf16, #blocked>\n")
    m, res = apply(text)
    assert not res.changed and "has 2 users" in notes(res)


def test_refuses_a_chain_op_used_elsewhere(sm80):
    chain = (f"    %neg = arith.negf {sm80.value} : tensor<128x128xf16, #blocked>\n"
             "    %other = arith.addf %neg, %neg : tensor<128x128xf16, #blocked>\n")
    text = sm80.before_store(chain, value="%neg")
    line = line_of(text, "%neg = arith.negf")   # line 146 on Triton 3.6
    m, res = apply(text)
    assert not res.changed and f"%neg = arith.negf (line {line}) has 2 users" in notes(res), notes(res)


def test_retypes_an_activation_chain_with_a_splat_constant(sm80):
    relu = ("    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf16, #blocked>\n"
            f"    %relu = arith.maximumf {sm80.value}, %zero : tensor<128x128xf16, #blocked>\n")
    text = sm80.before_store(relu, value="%relu")
    m, res = apply(text)
    assert res.changed, notes(res)
    relu_op = m.first("arith.maximumf")
    assert relu_op.result.type.layout.is_mma and all(t.layout.is_mma for t in relu_op.operand_types)
    assert not epilogue_converts(m)
    assert recompile(str(m), target="cuda:80").binary


def test_stores_inside_a_loop_need_allow_in_loop():
    text = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:80"} {
  tt.func @k(%p: tensor<32x32x!tt.ptr<f32>, #blocked>, %init: tensor<32x32xf32, #mma>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<32x32xf32, #mma>)  : i32 {
      %c = ttg.convert_layout %acc : tensor<32x32xf32, #mma> -> tensor<32x32xf32, #blocked>
      tt.store %p, %c : tensor<32x32x!tt.ptr<f32>, #blocked>
      %next = arith.addf %acc, %acc : tensor<32x32xf32, #mma>
      scf.yield %next : tensor<32x32xf32, #mma>
    }
    tt.return
  }
}
"""
    m, res = apply(text)
    assert not res.changed and "a running accumulator of the loop it is in" in notes(res)
    m, res = apply(text, allow_in_loop=True)
    assert res.changed and "ttg.convert_layout %acc" not in str(m) and res.verified


def test_kernels_without_an_mma_epilogue_say_so():
    text = compile_kernel(KERNELS["softmax"], "cuda:90").text("ttgir", locations=False)
    m, res = apply(text)
    assert not res.changed and "no store's value comes from a convert_layout out of an MMA layout" in notes(res)
    # on gfx942 Triton's own optimize_epilogue already stores from the MMA layout: nothing left to do
    text = compile_kernel(KERNELS["gemm_fp16"], "hip:gfx942").text("ttgir", locations=False)
    m, res = apply(text)
    assert not res.changed and str(m) == text


def test_without_rematerialization_it_converts_the_address():
    text = compile_kernel(KERNELS["gemm_fp16"], "cuda:80").text("ttgir", locations=False)
    m, res = apply(text, rematerialize=False)
    assert res.changed
    cvts = epilogue_converts(m)
    assert len(cvts) == 2 and all(c.result.type.layout.is_mma for c in cvts)  # pointers and mask


def test_an_inline_blocked_layout_is_the_same_layout(sm80):
    """The epilogue's blocked layout written inline in every type instead of through its alias: the
    store's pointer and mask must move to the MMA layout with its value (Triton verifies it)."""
    m0 = ir.parse(sm80.text)
    blocked = m0.first("tt.store").ptr.type.encoding_text
    inline = m0.layouts()[blocked.lstrip("#")].text
    lines = sm80.text.splitlines(keepends=True)
    start = sm80.first_address_line - 1   # from the first op of the store's address math on
    text = "".join(lines[:start] + [line.replace(blocked + ">", inline + ">") for line in lines[start:]])
    assert inline in text
    m, res = apply(text)
    assert res.changed and res.verified, notes(res)
    store = m.first("tt.store")
    assert store.value.type.layout.is_mma and store.ptr.type.layout.is_mma and store.mask.type.layout.is_mma


def test_a_bias_in_the_blocked_layout_is_named(sm80):
    bias = (f"    %bias = tt.load {sm80.ptr} : tensor<128x128x!tt.ptr<f16>, #blocked>\n"
            f"    %bsum = arith.addf {sm80.value}, %bias : tensor<128x128xf16, #blocked>\n")
    text = sm80.before_store(bias, value="%bsum")
    line = line_of(text, "%bsum = arith.addf")   # line 147 on Triton 3.6
    m, res = apply(text)
    assert not res.changed and str(m) == text
    assert f"%bsum = arith.addf (line {line}) combines the accumulator with %bias" in notes(res), notes(res)


@pytest.mark.parametrize("target", ["cuda:90", "hip:gfx942"])
def test_persistent_gemm_epilogue_inside_the_tile_loop(target):
    variant = AMD_NO_EPILOGUE if target.startswith("hip") else None
    text = compile_kernel(persistent_gemm.SPEC, target, variant=variant).text("ttgir", locations=False)
    m, res = apply(text)
    assert res.changed and res.verified, notes(res)
    store = m.first(("tt.store", "amdg.buffer_store"))
    assert store.enclosing("scf.for") is not None and store.value.type.layout.is_mma


# --- inputs that tempt the pass into an unsafe rewrite: each gets the exact right output or a refusal

def test_a_chain_op_using_the_accumulator_twice_uses_the_mma_value_twice(sm80):
    """``mulf %v, %v`` between the convert and the store: both operands move to the MMA-layout
    value. The output is the plain epilogue's rewrite with the square stored instead."""
    acc = ir.parse(sm80.text).first("tt.store").value.defining_op.src.ref
    square = f"    %sq = arith.mulf {sm80.value}, {sm80.value} : tensor<128x128xf16, #blocked>\n"
    m, res = apply(sm80.before_store(square, value="%sq"))
    assert res.changed and res.verified, notes(res)
    square_mma = f"    %sq = arith.mulf {acc}, {acc} : tensor<128x128xf16, #mma>\n"
    assert str(m).count(square_mma) == 1
    # without that line, and storing the accumulator itself, it is the plain epilogue's rewrite
    plain, _ = apply(sm80.text)
    assert str(m).replace(square_mma, "").replace(f", %sq, ", f", {acc}, ") == str(plain)
    sq = next(o for o in m.walk() if o.results and o.results[0].name == "sq")
    assert sq.is_before_in_block(m.first("tt.store"))
    assert any("and 1 elementwise op(s)" in d.message for d in res.diagnostics)


def test_a_store_to_the_same_address_between_keeps_its_place_and_layout(sm80):
    """A store of zeros to the epilogue's own addresses between the convert and the store: the
    epilogue store moves to the MMA layout where it is, after the other store, which is untouched
    (and keeps the address math it shares)."""
    zeros = ("    %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf16, #blocked>\n"
             f"    tt.store {sm80.ptr}, %zeros, {sm80.mask} : tensor<128x128x!tt.ptr<f16>, #blocked>\n")
    text = sm80.before_store(zeros)
    m, res = apply(text)
    assert res.changed and res.verified, notes(res)
    stores = m.find("tt.store")
    assert [s.text for s in stores[:1]] == [zeros.splitlines()[1].strip()]
    assert stores[0].is_before_in_block(stores[1]) and stores[1].value.type.layout.is_mma
    assert stores[1].ptr is not stores[0].ptr and stores[1].ptr.type.layout.is_mma


def test_a_mask_read_by_a_volatile_load_is_converted_not_loaded_again(sm80):
    """The store's mask comes from a volatile load: recomputing the address math in the MMA layout
    must not clone that load (a second volatile access); its value is converted instead."""
    flags = (f"    %flags = tt.load {sm80.ptr} {{isVolatile = true}} : tensor<128x128x!tt.ptr<f16>, #blocked>\n"
             "    %fzero = arith.constant dense<0.000000e+00> : tensor<128x128xf16, #blocked>\n"
             "    %fmask = arith.cmpf one, %flags, %fzero : tensor<128x128xf16, #blocked>\n")
    text = sm80.before_store(flags).replace(f"{sm80.value}, {sm80.mask} :", f"{sm80.value}, %fmask :")
    m, res = apply(text)
    assert res.changed and res.verified, notes(res)
    loads = [o for o in m.walk() if o.name == "tt.load" and o.enclosing("scf.for") is None]
    assert [o.text for o in loads] == [flags.splitlines()[0].strip()]
    mask = m.first("tt.store").mask.defining_op
    assert mask.name == "arith.cmpf" and mask.result.type.layout.is_mma   # recomputed from the converted value
    [converted] = [o for o in epilogue_converts(m) if o.src is loads[0].result]
    assert converted.result.type.layout.is_mma


def test_a_contiguity_hint_of_the_blocked_layout_is_recomputed_for_the_mma_one():
    """Triton 3.9 on gfx942 writes ``contiguity = 8`` on the buffer_store of the blocked value (8
    consecutive f16 per lane); the MFMA layout gives 4. Storing from it with the old hint would
    write two 4-element runs as one 128-bit vector."""
    text = (GOLDEN / "triton-3.9.0/gemm_fp16/hip-gfx942/no-optimize-epilogue.ttgir").read_text()
    before = ir.parse(text).first("amdg.buffer_store")
    assert before.attr("contiguity") == 8 and before.operand_types[0].layout.kind == "blocked"
    m, res = apply(text, verify=False)
    assert res.changed, notes(res)
    store = m.first("amdg.buffer_store")
    acc = store.value.ref
    assert store.text == (f"amdg.buffer_store {acc}, %arg2[{store.offsets.ref}], {store.mask.ref} {{contiguity = 4 : i32}}"
                          " : !tt.ptr<f16> -> tensor<128x128xf16, #mma>")
    assert any(c.kind == "attribute" and "contiguity = 4" in c.detail and "recomputed" in c.detail for c in res.changes)
