// The one-cluster schedule (4 warps; each SIMD runs warps of two workgroups): the first
// local_load, s_setprio 1, load A, sched_barrier 0, the second local_load, s_setprio 0, load B,
// then the dot between sched_barrier 1 and s_setprio 1/0. The loads take their address math
// along. The barrier masks are written as the installed Triton spells them (3.6: 0 and 1, 3.9:
// none and non_mem_non_sideeffect).
// RUN: irlab pass block-pingpong --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass block-pingpong --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @one_cluster
  // CHECK:      %ap1 = tt.addptr
  // CHECK-NEXT: %bp1 = tt.addptr
  // CHECK-NEXT: %a_op = ttg.local_load %a_cur
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %a = tt.load %ap1
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: %b_op = ttg.local_load %b_cur
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: %b = tt.load %bp1
  // CHECK-NEXT: rocdl.sched.barrier {{1|non_mem_non_sideeffect}}
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %d = tt.dot %a_op, %b_op, %acc
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: %a_next = ttg.memdesc_index
  // CHECK-NOT: amdg.cond_barrier
  // REMARK: one_cluster.mlir:[[# @LINE + 9]]:5: remark: scheduled the loop as one ping-pong cluster (4 warps, tile 128x128x64, 2 stages)
  tt.func public @one_cluster(%a_ptrs: tensor<128x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<128x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32) -> tensor<128x128xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable>
    %a0 = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    %r:5 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %ap = %a_ptrs, %bp = %b_ptrs, %a_cur = %a0, %b_cur = %b0) -> (tensor<128x128xf32, #mma>, tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<64x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>)  : i32 {
      %ap1 = tt.addptr %ap, %a_step : tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<128x64xi32, #blocked>
      %a = tt.load %ap1 : tensor<128x64x!tt.ptr<f16>, #blocked>
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

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @scaled_operand_k32
  // CHECK:      %a_op = ttg.local_load %a_cur
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %a = tt.load %ap1
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: %b_op = ttg.local_load %b_cur
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: %b = tt.load %bp1
  // CHECK-NEXT: %a_neg = arith.negf %a_op
  // CHECK-NEXT: rocdl.sched.barrier {{1|non_mem_non_sideeffect}}
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %d = tt.dot %a_neg, %b_op, %acc
  tt.func public @scaled_operand_k32(%a_ptrs: tensor<128x32x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<32x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<128x32xi32, #blocked>, %b_step: tensor<32x128xi32, #blocked1>, %n: i32) -> tensor<128x128xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<1x128x32xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x32x128xf16, #shared1, #smem, mutable>
    %a0 = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x128x32xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x32x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    %r:5 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %ap = %a_ptrs, %bp = %b_ptrs, %a_cur = %a0, %b_cur = %b0) -> (tensor<128x128xf32, #mma>, tensor<128x32x!tt.ptr<f16>, #blocked>, tensor<32x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<128x32xf16, #shared, #smem, mutable>, !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>)  : i32 {
      %ap1 = tt.addptr %ap, %a_step : tensor<128x32x!tt.ptr<f16>, #blocked>, tensor<128x32xi32, #blocked>
      %a = tt.load %ap1 : tensor<128x32x!tt.ptr<f16>, #blocked>
      %bp1 = tt.addptr %bp, %b_step : tensor<32x128x!tt.ptr<f16>, #blocked1>, tensor<32x128xi32, #blocked1>
      %b = tt.load %bp1 : tensor<32x128x!tt.ptr<f16>, #blocked1>
      %a_op = ttg.local_load %a_cur : !ttg.memdesc<128x32xf16, #shared, #smem, mutable> -> tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_op = ttg.local_load %b_cur : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %a_neg = arith.negf %a_op : tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_neg, %b_op, %acc : tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<128x128xf32, #mma>
      %a_next = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x128x32xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
      ttg.local_store %a, %a_next : tensor<128x32xf16, #blocked> -> !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
      %b_next = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x32x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
      ttg.local_store %b, %b_next : tensor<32x128xf16, #blocked1> -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
      scf.yield %d, %ap1, %bp1, %a_next, %b_next : tensor<128x128xf32, #mma>, tensor<128x32x!tt.ptr<f16>, #blocked>, tensor<32x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<128x32xf16, #shared, #smem, mutable>, !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<1x128x32xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<1x32x128xf16, #shared1, #smem, mutable>
    tt.return %r#0 : tensor<128x128xf32, #mma>
  }
}
