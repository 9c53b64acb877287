// Loops the pass leaves alone, with the op that stops the move; the IR is unchanged byte for byte.
// RUN: irlab pass interleave-global-loads --split-input-file %s | diff %s -
// RUN: irlab pass interleave-global-loads --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // A barrier between the load and the local_loads: nothing moves across it.
  tt.func public @gemm_loop(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %c: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %a_ptrs = tt.splat %a : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>, #blocked1>
    %a_smem = ttg.local_alloc : () -> !ttg.memdesc<64x32xf16, #shared, #smem, mutable>
    %b_smem = ttg.local_alloc : () -> !ttg.memdesc<32x64xf16, #shared1, #smem, mutable>
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      %a_next = tt.load %a_ptrs : tensor<64x32x!tt.ptr<f16>, #blocked>
      // CHECK: refused.mlir:[[# @LINE + 1]]:7: note: not moved: %b_next = tt.load (line [[# @LINE + 1]]) (reads global memory) would cross gpu.barrier (line [[# @LINE + 2]]), which synchronizes
      %b_next = tt.load %b_ptrs : tensor<32x64x!tt.ptr<f16>, #blocked1>
      gpu.barrier
      %a_k = ttg.local_load %a_smem : !ttg.memdesc<64x32xf16, #shared, #smem, mutable> -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
      %b_k = ttg.local_load %b_smem : !ttg.memdesc<32x64xf16, #shared1, #smem, mutable> -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>
      %d = tt.dot %a_k, %b_k, %acc_k, inputPrecision = tf32 : tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>> * tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>> -> tensor<64x64xf32, #mma>
      ttg.local_store %a_next, %a_smem : tensor<64x32xf16, #blocked> -> !ttg.memdesc<64x32xf16, #shared, #smem, mutable>
      ttg.local_store %b_next, %b_smem : tensor<32x64xf16, #blocked1> -> !ttg.memdesc<32x64xf16, #shared1, #smem, mutable>
      scf.yield %d : tensor<64x64xf32, #mma>
    }
    %c_ptrs = tt.splat %c : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #mma>
    tt.store %c_ptrs, %acc : tensor<64x64x!tt.ptr<f32>, #mma>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // A volatile load is ordered against every memory access, the shared-memory reads included.
  tt.func public @gemm_loop(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %c: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %a_ptrs = tt.splat %a : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>, #blocked1>
    %a_smem = ttg.local_alloc : () -> !ttg.memdesc<64x32xf16, #shared, #smem, mutable>
    %b_smem = ttg.local_alloc : () -> !ttg.memdesc<32x64xf16, #shared1, #smem, mutable>
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      %a_next = tt.load %a_ptrs : tensor<64x32x!tt.ptr<f16>, #blocked>
      // CHECK: refused.mlir:[[# @LINE + 1]]:7: note: not moved: %b_next = tt.load (line [[# @LINE + 1]]) (reads global memory, synchronizes) would cross %a_k = ttg.local_load (line [[# @LINE + 2]])
      %b_next = tt.load %b_ptrs {isVolatile = true} : tensor<32x64x!tt.ptr<f16>, #blocked1>
      %a_k = ttg.local_load %a_smem : !ttg.memdesc<64x32xf16, #shared, #smem, mutable> -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
      %b_k = ttg.local_load %b_smem : !ttg.memdesc<32x64xf16, #shared1, #smem, mutable> -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>
      %d = tt.dot %a_k, %b_k, %acc_k, inputPrecision = tf32 : tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>> * tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>> -> tensor<64x64xf32, #mma>
      ttg.local_store %a_next, %a_smem : tensor<64x32xf16, #blocked> -> !ttg.memdesc<64x32xf16, #shared, #smem, mutable>
      ttg.local_store %b_next, %b_smem : tensor<32x64xf16, #blocked1> -> !ttg.memdesc<32x64xf16, #shared1, #smem, mutable>
      scf.yield %d : tensor<64x64xf32, #mma>
    }
    %c_ptrs = tt.splat %c : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #mma>
    tt.store %c_ptrs, %acc : tensor<64x64x!tt.ptr<f32>, #mma>
    tt.return
  }
}
