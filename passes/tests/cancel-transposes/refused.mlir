// Pairs that cancel on paper but not here; the IR is unchanged byte for byte.
// RUN: irlab pass cancel-transposes --split-input-file %s | diff %s -
// RUN: irlab pass cancel-transposes --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // The first transpose is also stored as it is: it has to stay.
  tt.func public @other_user(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %ptrs = tt.splat %p : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>, #blocked>
    %qptrs = tt.splat %q : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>, #blocked1>
    %x = tt.load %ptrs : tensor<32x64x!tt.ptr<f32>, #blocked>
    %t1 = tt.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    tt.store %qptrs, %t1 : tensor<64x32x!tt.ptr<f32>, #blocked1>
    %two = arith.constant dense<2.000000e+00> : tensor<64x32xf32, #blocked1>
    %m = arith.mulf %t1, %two : tensor<64x32xf32, #blocked1>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: not removed: %t1 = tt.trans has other users
    %t2 = tt.trans %m {order = array<i32: 1, 0>} : tensor<64x32xf32, #blocked1> -> tensor<32x64xf32, #blocked>
    tt.store %ptrs, %t2 : tensor<32x64x!tt.ptr<f32>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // addf(trans(x), y) with y loaded in the transposed layout: cancelling would need y transposed too.
  tt.func public @other_tensor(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %ptrs = tt.splat %p : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>, #blocked>
    %qptrs = tt.splat %q : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>, #blocked1>
    %x = tt.load %ptrs : tensor<32x64x!tt.ptr<f32>, #blocked>
    %t1 = tt.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    %y = tt.load %qptrs : tensor<64x32x!tt.ptr<f32>, #blocked1>
    %m = arith.addf %t1, %y : tensor<64x32xf32, #blocked1>
    %t2 = tt.trans %m {order = array<i32: 1, 0>} : tensor<64x32xf32, #blocked1> -> tensor<32x64xf32, #blocked>
    tt.store %ptrs, %t2 : tensor<32x64x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
// CHECK: note: no transpose pair cancels
