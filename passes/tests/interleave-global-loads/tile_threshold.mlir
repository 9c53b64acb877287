// Triton 3.6's sinkSecondLoad conditions (preset=upstream) leave loads under 128x64 (first) and
// 128 along dim 1 (second) alone.
// RUN: irlab pass 'interleave-global-loads{preset=upstream}' %s | diff %s -
// RUN: irlab pass 'interleave-global-loads{preset=upstream}' %s --explain 2>&1 >/dev/null | filecheck %s
// The threshold is an option of the default preset too:
// RUN: irlab pass 'interleave-global-loads{min_k=64}' %s --explain 2>&1 >/dev/null | filecheck %s --check-prefix=MIN-K
// MIN-K: note: not moved: tile M=64 N=64 K=32 is below the threshold (min_non_k=0, min_k=64)

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @gemm_loop(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %c: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %a_ptrs = tt.splat %a : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>, #blocked1>
    %a_smem = ttg.local_alloc : () -> !ttg.memdesc<64x32xf16, #shared, #smem, mutable>
    %b_smem = ttg.local_alloc : () -> !ttg.memdesc<32x64xf16, #shared1, #smem, mutable>
    // CHECK: tile_threshold.mlir:[[# @LINE + 1]]:5: note: not moved: the loads' tiles 64x32 and 32x64 are below Triton 3.6's sinkSecondLoad threshold (first load >= 128x64, second load >= 128 along dim 1)
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      %a_next = tt.load %a_ptrs : tensor<64x32x!tt.ptr<f16>, #blocked>
      %b_next = tt.load %b_ptrs : tensor<32x64x!tt.ptr<f16>, #blocked1>
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
