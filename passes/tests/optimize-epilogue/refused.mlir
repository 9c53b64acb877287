// Epilogues the pass leaves alone, each with the reason at the op that stops it, and the IR
// unchanged byte for byte.
// RUN: irlab pass optimize-epilogue --split-input-file %s | diff %s -
// RUN: irlab pass optimize-epilogue --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // A split-K epilogue adds its partial sum with an atomic.
  tt.func public @split_k(%c_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %ptrs = tt.splat %c_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %out = ttg.convert_layout %acc : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: the MMA accumulator is stored with an atomic (split-K / stream-K epilogue)
    %old = tt.atomic_rmw fadd, relaxed, gpu, %ptrs, %out : (tensor<64x64x!tt.ptr<f32>, #blocked>, tensor<64x64xf32, #blocked>) -> tensor<64x64xf32, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // A bias add combines the accumulator with a tensor in the blocked layout.
  tt.func public @bias(%c_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %bias_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %ptrs = tt.splat %c_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %bias_ptrs = tt.splat %bias_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %bias = tt.load %bias_ptrs : tensor<64x64x!tt.ptr<f32>, #blocked>
    %out = ttg.convert_layout %acc : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    %sum = arith.addf %out, %bias : tensor<64x64xf32, #blocked>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: on the way to the store, %sum = arith.addf (line [[# @LINE - 1]]) combines the accumulator with %bias
    tt.store %ptrs, %sum : tensor<64x64x!tt.ptr<f32>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // The converted value is stored twice: the second store would still need the blocked layout.
  tt.func public @two_stores(%c_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %d_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %ptrs = tt.splat %c_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %ptrs2 = tt.splat %d_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: %out = ttg.convert_layout (line [[# @LINE + 1]]) has 2 users
    %out = ttg.convert_layout %acc : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    tt.store %ptrs, %out : tensor<64x64x!tt.ptr<f32>, #blocked>
    tt.store %ptrs2, %out : tensor<64x64x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
