"""optimize-epilogue: stores from the MMA layout where it is safe, refusals with reasons elsewhere."""
from __future__ import annotations

import re

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel, recompile
from irlab.kernels import KERNELS
from irlab.registry import make_pass
from irlab.variants import AMD_NO_EPILOGUE, get_variant
from tests.kernels import persistent_gemm

CVT = "    %91 = ttg.convert_layout %74 : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #blocked>\n"
STORE = "    tt.store %83, %91, %90 : tensor<128x128x!tt.ptr<f16>, #blocked>\n"


@pytest.fixture(scope="module")
def sm80():
    text = compile_kernel(KERNELS["gemm_fp16"], "cuda:80").text("ttgir", locations=False)
    shape = (re.sub(r"%\d+", "%N", CVT), re.sub(r"%\d+", "%N", STORE))
    assert all(line in re.sub(r"%\d+", "%N", text) for line in shape), "the sm_80 GEMM epilogue changed shape"
    if CVT not in text or STORE not in text:
        pytest.skip("the edits below name the SSA values Triton 3.6 prints for the sm_80 epilogue (%91, %83, "
                    "%90); this Triton numbers the same epilogue differently")
    return text


def apply(text, **options):
    m = ir.parse(text)
    return m, make_pass("optimize-epilogue", options).apply(m)


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
    text = sm80.replace(STORE, STORE.replace("tt.store", "%dup = arith.addf %91, %91 : tensor<128x128xf16, "
                                             "#blocked>\n    tt.store"))
    m, res = apply(text)
    assert not res.changed and "has 2 users" in notes(res)


def test_refuses_a_chain_op_used_elsewhere(sm80):
    chain = ("    %neg = arith.negf %91 : tensor<128x128xf16, #blocked>\n"
             "    %other = arith.addf %neg, %neg : tensor<128x128xf16, #blocked>\n")
    text = sm80.replace(STORE, chain + STORE.replace("%83, %91,", "%83, %neg,"))
    m, res = apply(text)
    assert not res.changed and "%neg = arith.negf (line 146) has 2 users" in notes(res)


def test_retypes_an_activation_chain_with_a_splat_constant(sm80):
    relu = ("    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf16, #blocked>\n"
            "    %relu = arith.maximumf %91, %zero : tensor<128x128xf16, #blocked>\n")
    text = sm80.replace(STORE, relu + STORE.replace("%83, %91,", "%83, %relu,"))
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
    m0 = ir.parse(sm80)
    blocked = m0.first("tt.store").ptr.type.encoding_text
    inline = m0.layouts()[blocked.lstrip("#")].text
    lines = sm80.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "tt.expand_dims" in line and i > sm80[:sm80.index(CVT)].count("\n") - 20)
    text = "".join(lines[:start] + [line.replace(blocked + ">", inline + ">") for line in lines[start:]])
    assert inline in text
    m, res = apply(text)
    assert res.changed and res.verified, notes(res)
    store = m.first("tt.store")
    assert store.value.type.layout.is_mma and store.ptr.type.layout.is_mma and store.mask.type.layout.is_mma


def test_a_bias_in_the_blocked_layout_is_named(sm80):
    bias = ("    %bias = tt.load %83 : tensor<128x128x!tt.ptr<f16>, #blocked>\n"
            "    %bsum = arith.addf %91, %bias : tensor<128x128xf16, #blocked>\n")
    text = sm80.replace(STORE, bias + STORE.replace("%83, %91,", "%83, %bsum,"))
    m, res = apply(text)
    assert not res.changed and str(m) == text
    assert "%bsum = arith.addf (line 147) combines the accumulator with %bias" in notes(res), notes(res)


@pytest.mark.parametrize("target", ["cuda:90", "hip:gfx942"])
def test_persistent_gemm_epilogue_inside_the_tile_loop(target):
    variant = AMD_NO_EPILOGUE if target.startswith("hip") else None
    text = compile_kernel(persistent_gemm.SPEC, target, variant=variant).text("ttgir", locations=False)
    m, res = apply(text)
    assert res.changed and res.verified, notes(res)
    store = m.first(("tt.store", "amdg.buffer_store"))
    assert store.enclosing("scf.for") is not None and store.value.type.layout.is_mma
