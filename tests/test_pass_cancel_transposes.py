"""cancel-transposes on inputs that tempt it: a pair around a barrier and a store, a pair of
shared-memory views around a write to that memory, a chain op reading the transposed value twice,
and one combining it with another transposed tensor. Each gets the exact right output or a
refusal that leaves the module as it was."""
from __future__ import annotations

from irlab import ir
from irlab.bridge.pass_runner import run_pass
from irlab.passkit.registry import make_pass

HEAD = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%p: tensor<32x64x!tt.ptr<f32>, #blocked>, %q: tensor<64x32x!tt.ptr<f32>, #blocked1>) {
"""
TAIL = "    tt.return\n  }\n}\n"


def apply(body):
    text = HEAD + body + TAIL
    m = ir.parse(text)
    return text, m, run_pass(make_pass("cancel-transposes"), m)


def notes(res):
    return " | ".join(d.message for d in res.diagnostics)


def test_a_pair_around_a_barrier_and_a_store_cancels_and_leaves_them_in_place():
    body = """    %x = tt.load %p : tensor<32x64x!tt.ptr<f32>, #blocked>
    %t1 = tt.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    %two = arith.constant dense<2.000000e+00> : tensor<64x32xf32, #blocked1>
    gpu.barrier
    %m = arith.mulf %t1, %two : tensor<64x32xf32, #blocked1>
    tt.store %q, %two : tensor<64x32x!tt.ptr<f32>, #blocked1>
    %t2 = tt.trans %m {order = array<i32: 1, 0>} : tensor<64x32xf32, #blocked1> -> tensor<32x64xf32, #blocked>
    tt.store %p, %t2 : tensor<32x64x!tt.ptr<f32>, #blocked>
"""
    text, m, res = apply(body)
    assert res.changed and res.verified, notes(res)
    assert str(m) == HEAD + """    %x = tt.load %p : tensor<32x64x!tt.ptr<f32>, #blocked>
    %two = arith.constant dense<2.000000e+00> : tensor<64x32xf32, #blocked1>
    gpu.barrier
    %two_c = arith.constant dense<2.000000e+00> : tensor<32x64xf32, #blocked>
    %m = arith.mulf %x, %two_c : tensor<32x64xf32, #blocked>
    tt.store %q, %two : tensor<64x32x!tt.ptr<f32>, #blocked1>
    tt.store %p, %m : tensor<32x64x!tt.ptr<f32>, #blocked>
""" + TAIL


def test_views_of_shared_memory_cancel_across_a_write_to_it():
    """Two memdesc_trans views that undo each other read the memory the local_store between them
    writes: the load reads the original view, after the store, as before."""
    body = """    %x = tt.load %p : tensor<32x64x!tt.ptr<f32>, #blocked>
    %s = ttg.local_alloc : () -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
    %a = ttg.memdesc_trans %s {order = array<i32: 1, 0>} : !ttg.memdesc<32x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<64x32xf32, #shared1, #smem, mutable>
    ttg.local_store %x, %s : tensor<32x64xf32, #blocked> -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
    %b = ttg.memdesc_trans %a {order = array<i32: 1, 0>} : !ttg.memdesc<64x32xf32, #shared1, #smem, mutable> -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
    %y = ttg.local_load %b : !ttg.memdesc<32x64xf32, #shared, #smem, mutable> -> tensor<32x64xf32, #blocked>
    tt.store %p, %y : tensor<32x64x!tt.ptr<f32>, #blocked>
"""
    text, m, res = apply(body)
    assert res.changed and res.verified, notes(res)
    assert str(m) == HEAD + """    %x = tt.load %p : tensor<32x64x!tt.ptr<f32>, #blocked>
    %s = ttg.local_alloc : () -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
    ttg.local_store %x, %s : tensor<32x64xf32, #blocked> -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
    %y = ttg.local_load %s : !ttg.memdesc<32x64xf32, #shared, #smem, mutable> -> tensor<32x64xf32, #blocked>
    tt.store %p, %y : tensor<32x64x!tt.ptr<f32>, #blocked>
""" + TAIL


def test_a_chain_op_combining_the_transposed_value_with_another_tensor_is_left_alone():
    """``addf(trans(x), y)`` with ``y`` loaded in the transposed layout: cancelling the pair would
    need ``y`` transposed too. Left as it was."""
    body = """    %x = tt.load %p : tensor<32x64x!tt.ptr<f32>, #blocked>
    %t1 = tt.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    %y = tt.load %q : tensor<64x32x!tt.ptr<f32>, #blocked1>
    %m = arith.addf %t1, %y : tensor<64x32xf32, #blocked1>
    %t2 = tt.trans %m {order = array<i32: 1, 0>} : tensor<64x32xf32, #blocked1> -> tensor<32x64xf32, #blocked>
    tt.store %p, %t2 : tensor<32x64x!tt.ptr<f32>, #blocked>
"""
    text, m, res = apply(body)
    assert not res.changed and str(m) == text and "no transpose pair cancels" in notes(res)


def test_a_chain_op_reading_the_transposed_value_twice_is_left_alone():
    body = """    %x = tt.load %p : tensor<32x64x!tt.ptr<f32>, #blocked>
    %t1 = tt.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    %m = arith.mulf %t1, %t1 : tensor<64x32xf32, #blocked1>
    %t2 = tt.trans %m {order = array<i32: 1, 0>} : tensor<64x32xf32, #blocked1> -> tensor<32x64xf32, #blocked>
    tt.store %p, %t2 : tensor<32x64x!tt.ptr<f32>, #blocked>
"""
    text, m, res = apply(body)
    assert not res.changed and str(m) == text and "no transpose pair cancels" in notes(res)
