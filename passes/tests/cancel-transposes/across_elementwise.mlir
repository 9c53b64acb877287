// trans(mulf(trans(x), splat)) is mulf(x, splat'): both transposes go, the multiply and its
// constant move to the untransposed shape.
// RUN: irlab pass cancel-transposes %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass cancel-transposes %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @scale
  tt.func public @scale(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %ptrs = tt.splat %p : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>, #blocked>
    // CHECK: %x = tt.load
    %x = tt.load %ptrs : tensor<32x64x!tt.ptr<f32>, #blocked>
    // CHECK-NOT: tt.trans
    %t1 = tt.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    %two = arith.constant dense<2.000000e+00> : tensor<64x32xf32, #blocked1>
    // CHECK: %two_c = arith.constant dense<2.000000e+00> : tensor<32x64xf32, #blocked>
    // CHECK-NEXT: %m = arith.mulf %x, %two_c : tensor<32x64xf32, #blocked>
    %m = arith.mulf %t1, %two : tensor<64x32xf32, #blocked1>
    // REMARK: across_elementwise.mlir:[[# @LINE + 1]]:5: remark: removed %t1 = tt.trans and %t2 = tt.trans across 1 op(s)
    %t2 = tt.trans %m {order = array<i32: 1, 0>} : tensor<64x32xf32, #blocked1> -> tensor<32x64xf32, #blocked>
    // CHECK-NOT: tt.trans
    // CHECK: tt.store %ptrs, %m : tensor<32x64x!tt.ptr<f32>, #blocked>
    tt.store %ptrs, %t2 : tensor<32x64x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
