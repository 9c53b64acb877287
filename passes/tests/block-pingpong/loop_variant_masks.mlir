// loop_variant_masks=allow: a load masked by the K bound is scheduled as Triton 3.6 schedules it
// (3.9 and upstream main refuse it).
// RUN: irlab pass block-pingpong %s --option loop_variant_masks=allow | grep -v '^ *//' | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @masked_k
  // CHECK:      %live = arith.cmpi slt, %k, %n
  // CHECK-NEXT: %a_mask = tt.splat %live
  // CHECK-NEXT: %bp1 = tt.addptr
  // CHECK-NEXT: %a_op = ttg.local_load %a_cur
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %a = tt.load %ap1, %a_mask
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: %b_op = ttg.local_load %b_cur
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: %b = tt.load %bp1
  tt.func public @masked_k(%a_ptrs: tensor<128x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<128x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32) -> tensor<128x128xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable>
    %a0 = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    %r:5 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %ap = %a_ptrs, %bp = %b_ptrs, %a_cur = %a0, %b_cur = %b0) -> (tensor<128x128xf32, #mma>, tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<64x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>)  : i32 {
      %ap1 = tt.addptr %ap, %a_step : tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<128x64xi32, #blocked>
      %live = arith.cmpi slt, %k, %n : i32
      %a_mask = tt.splat %live : i1 -> tensor<128x64xi1, #blocked>
      %a = tt.load %ap1, %a_mask : tensor<128x64x!tt.ptr<f16>, #blocked>
      %bp1 = tt.addptr %bp, %b_step : tensor<64x128x!tt.ptr<f16>, #blocked1>, tensor<64x128xi32, #blocked1>
      %b = tt.load %bp1 : tensor<64x128x!tt.ptr<f16>, #blocked1>
      %a_op = ttg.local_load %a_cur : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_op = ttg.local_load %b_cur : !ttg.memdesc<64x128xf16, #shared1, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_op, %b_op, %acc : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<128x128xf32, #mma>
      %a_next = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
      ttg.local_store %a, %a_next : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
      %b_next = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
      ttg.local_store %b, %b_next : tensor<64x128xf16, #blocked1> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
      scf.yield %d, %ap1, %bp1, %a_next, %b_next : tensor<128x128xf32, #mma>, tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<64x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable>
    tt.return %r#0 : tensor<128x128xf32, #mma>
  }
}
