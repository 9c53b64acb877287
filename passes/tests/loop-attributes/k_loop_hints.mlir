// tl.range hints written from outside the kernel: on the loop that holds the dot, not on the
// other loop.
// RUN: irlab pass 'loop-attributes{warp_specialize=true,num_stages=3}' %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass 'loop-attributes{warp_specialize=true}' %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

module {
  // CHECK-LABEL: tt.func public @gemm_loop
  tt.func public @gemm_loop(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %c: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %a_ptrs = tt.splat %a : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
    // REMARK: k_loop_hints.mlir:[[# @LINE + 1]]:5: remark: tt.warp_specialize on %acc = scf.for
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<64x64xf32>)  : i32 {
      %a_k = tt.load %a_ptrs : tensor<64x32x!tt.ptr<f16>>
      %b_k = tt.load %b_ptrs : tensor<32x64x!tt.ptr<f16>>
      %d = tt.dot %a_k, %b_k, %acc_k, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    // CHECK: } {tt.warp_specialize, tt.num_stages = 3 : i32}
    }
    %c_ptrs = tt.splat %c : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    // a loop without a dot keeps no hint
    // CHECK: scf.for
    // CHECK-NOT: tt.warp_specialize
    scf.for %i = %c0 to %k_tiles step %c1  : i32 {
      tt.store %c_ptrs, %acc : tensor<64x64x!tt.ptr<f32>>
    }
    tt.return
  }
}
