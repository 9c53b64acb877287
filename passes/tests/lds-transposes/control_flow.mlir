// Buffers are followed through scf.if results (each branch's yield) and scf.while values (inits,
// the do region's yields, the condition's forwarded values), so a write and a read on either side
// are one trip. A dot operand read from a shared layout whose fastest dimension is not K is named
// lds-non-k-contiguous.
// RUN: irlab pass 'lds-transposes{ask_triton=false}' %s | diff %s -
// RUN: irlab pass 'lds-transposes{ask_triton=false}' %s 2>&1 >/dev/null | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @through_if(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %c: i1) -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> {
    %ptrs = tt.splat %p : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %x = tt.load %ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
    %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %b = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %buf = scf.if %c -> (!ttg.memdesc<64x64xf16, #shared, #smem, mutable>) {
      scf.yield %a : !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    } else {
      scf.yield %a : !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    }
    // CHECK-DAG: control_flow.mlir:[[# @LINE + 1]]:5: remark: [lds-staging] trip #1: global data staged in LDS (pipelined load) and read into registers: ttg.local_store -> %y = ttg.local_load
    ttg.local_store %x, %buf : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %y = ttg.local_load %a : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    tt.return %y : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
  }

  tt.func public @through_while(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32) -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %ptrs = tt.splat %p : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared1, #smem, mutable>
    %r:2 = scf.while (%i = %c0, %buf = %a) : (i32, !ttg.memdesc<64x64xf16, #shared1, #smem, mutable>) -> (i32, !ttg.memdesc<64x64xf16, #shared1, #smem, mutable>) {
      %go = arith.cmpi slt, %i, %n : i32
      scf.condition(%go) %i, %buf : i32, !ttg.memdesc<64x64xf16, #shared1, #smem, mutable>
    } do {
    ^bb0(%j: i32, %cur: !ttg.memdesc<64x64xf16, #shared1, #smem, mutable>):
      %x = tt.load %ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
      // CHECK-DAG: control_flow.mlir:[[# @LINE + 1]]:7: remark: [lds-staging] trip #2: global data staged in LDS (pipelined load) and read into registers: ttg.local_store -> %y = ttg.local_load
      ttg.local_store %x, %cur : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared1, #smem, mutable>
      %next = arith.addi %j, %c1 : i32
      scf.yield %next, %cur : i32, !ttg.memdesc<64x64xf16, #shared1, #smem, mutable>
    }
    // B's K is dim 0; #shared1 (order [0, 1]) is K-contiguous for it
    // CHECK-NOT: [lds-non-k-contiguous] trip #2
    %y = ttg.local_load %r#1 : !ttg.memdesc<64x64xf16, #shared1, #smem, mutable> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    tt.return %y : tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
  }

  tt.func public @b_read_across_k(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}) -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> {
    %ptrs = tt.splat %p : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %x = tt.load %ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
    %s = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    // CHECK-DAG: control_flow.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #3: %y = ttg.local_load reads dot operand B (opIdx 1) from a shared layout of order [1, 0]: its fastest dimension is 1, not K (dim 0)
    %y = ttg.local_load %s : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    tt.return %y : tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
  }
}
