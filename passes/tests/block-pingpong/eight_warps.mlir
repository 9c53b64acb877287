// The 8-warp schedules: the two halves of a workgroup run out of phase, so the dot is split along
// K and the loop body arranged in memory and MFMA clusters. Two clusters for a 256x128x64 tile
// (the memory cluster ends with s_barrier in Triton 3.6, with a CTA barrier in 3.9.0, as each
// Triton's own pass writes it), four for 256x256x64. Before the loop, a barrier and
// amdg.cond_barrier hold the upper half; after it, the lower half waits.
// RUN: irlab pass block-pingpong --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass block-pingpong --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @two_clusters
  // CHECK:      {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: %[[TID:.+]] = rocdl.workitem.id.x
  // CHECK:      %[[HALF:.+]] = arith.divsi %[[TID]], %{{.+}} : i32
  // CHECK-NEXT: %[[LOWER:.+]] = arith.cmpi eq, %[[HALF]]
  // CHECK-NEXT: %[[UPPER:.+]] = arith.cmpi ne, %[[HALF]]
  // CHECK-NEXT: amdg.cond_barrier %[[UPPER]]
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: %ap1 = tt.addptr
  // CHECK-NEXT: %bp1 = tt.addptr
  // CHECK-NEXT: %[[VA0:.+]] = ttg.memdesc_subslice %a_cur[0, 0] : !ttg.memdesc<256x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<256x32xf16, #shared, #smem, mutable, 256x64>
  // CHECK-NEXT: %[[A0:.+]] = ttg.local_load %[[VA0]] {{.*}} -> tensor<256x32xf16
  // CHECK-NEXT: %[[VB0:.+]] = ttg.memdesc_subslice %b_cur[0, 0] : !ttg.memdesc<64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable, 64x128>
  // CHECK-NEXT: %[[B0:.+]] = ttg.local_load %[[VB0]]
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: %a = tt.load %ap1
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: %[[VA1:.+]] = ttg.memdesc_subslice %a_cur[0, 32]
  // CHECK-NEXT: %[[A1:.+]] = ttg.local_load %[[VA1]]
  // CHECK-NEXT: %[[VB1:.+]] = ttg.memdesc_subslice %b_cur[32, 0]
  // CHECK-NEXT: %[[B1:.+]] = ttg.local_load %[[VB1]]
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: %b = tt.load %bp1
  // CHECK-NEXT: {{rocdl.s.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %[[D0:.+]] = tt.dot %[[A0]], %[[B0]], %acc
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: %a_next = ttg.memdesc_index
  // CHECK-NEXT: ttg.local_store %a, %a_next
  // CHECK-NEXT: %b_next = ttg.memdesc_index
  // CHECK-NEXT: ttg.local_store %b, %b_next
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %[[D1:.+]] = tt.dot %[[A1]], %[[B1]], %[[D0]]
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: scf.yield %[[D1]]
  // CHECK-NEXT: }
  // CHECK-NEXT: amdg.cond_barrier %[[LOWER]]
  // REMARK: eight_warps.mlir:[[# @LINE + 9]]:5: remark: scheduled the loop as two ping-pong clusters (8 warps, tile 256x128x64, 2 stages)
  tt.func public @two_clusters(%a_ptrs: tensor<256x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<256x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32) -> tensor<256x128xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable>
    %a0 = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    %r:5 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %ap = %a_ptrs, %bp = %b_ptrs, %a_cur = %a0, %b_cur = %b0) -> (tensor<256x128xf32, #mma>, tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<64x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<256x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>)  : i32 {
      %ap1 = tt.addptr %ap, %a_step : tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<256x64xi32, #blocked>
      %a = tt.load %ap1 : tensor<256x64x!tt.ptr<f16>, #blocked>
      %bp1 = tt.addptr %bp, %b_step : tensor<64x128x!tt.ptr<f16>, #blocked1>, tensor<64x128xi32, #blocked1>
      %b = tt.load %bp1 : tensor<64x128x!tt.ptr<f16>, #blocked1>
      %a_op = ttg.local_load %a_cur : !ttg.memdesc<256x64xf16, #shared, #smem, mutable> -> tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_op = ttg.local_load %b_cur : !ttg.memdesc<64x128xf16, #shared1, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_op, %b_op, %acc : tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
      %a_next = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
      ttg.local_store %a, %a_next : tensor<256x64xf16, #blocked> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
      %b_next = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
      ttg.local_store %b, %b_next : tensor<64x128xf16, #blocked1> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
      scf.yield %d, %ap1, %bp1, %a_next, %b_next : tensor<256x128xf32, #mma>, tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<64x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<256x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable>
    tt.return %r#0 : tensor<256x128xf32, #mma>
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @four_clusters
  // CHECK:      amdg.cond_barrier
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: %ap1 = tt.addptr
  // CHECK-NEXT: %a = tt.load %ap1
  // CHECK-NEXT: %bp1 = tt.addptr
  // CHECK-NEXT: ttg.memdesc_subslice %a_cur[0, 0] {{.*}} -> !ttg.memdesc<256x16xf16, #shared, #smem, mutable, 256x64>
  // CHECK-NEXT: %[[A0:.+]] = ttg.local_load
  // CHECK-NEXT: ttg.memdesc_subslice %b_cur[0, 0] {{.*}} -> !ttg.memdesc<16x256xf16, #shared1, #smem, mutable, 64x256>
  // CHECK-NEXT: %[[B0:.+]] = ttg.local_load
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %[[D0:.+]] = tt.dot %[[A0]], %[[B0]], %acc
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: %b = tt.load %bp1
  // CHECK-NEXT: ttg.memdesc_subslice %a_cur[0, 16]
  // CHECK-NEXT: %[[A1:.+]] = ttg.local_load
  // CHECK-NEXT: ttg.memdesc_subslice %b_cur[16, 0]
  // CHECK-NEXT: %[[B1:.+]] = ttg.local_load
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %[[D1:.+]] = tt.dot %[[A1]], %[[B1]], %[[D0]]
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: ttg.memdesc_subslice %a_cur[0, 32]
  // CHECK-NEXT: %[[A2:.+]] = ttg.local_load
  // CHECK-NEXT: ttg.memdesc_subslice %b_cur[32, 0]
  // CHECK-NEXT: %[[B2:.+]] = ttg.local_load
  // CHECK-NEXT: ttg.memdesc_subslice %a_cur[0, 48]
  // CHECK-NEXT: %[[A3:.+]] = ttg.local_load
  // CHECK-NEXT: ttg.memdesc_subslice %b_cur[48, 0]
  // CHECK-NEXT: %[[B3:.+]] = ttg.local_load
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %[[D2:.+]] = tt.dot %[[A2]], %[[B2]], %[[D1]]
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: %a_next = ttg.memdesc_index
  // CHECK-NEXT: ttg.local_store %a, %a_next
  // CHECK-NEXT: %b_next = ttg.memdesc_index
  // CHECK-NEXT: ttg.local_store %b, %b_next
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: rocdl.s.setprio 1
  // CHECK-NEXT: %[[D3:.+]] = tt.dot %[[A3]], %[[B3]], %[[D2]]
  // CHECK-NEXT: rocdl.s.setprio 0
  // CHECK-NEXT: {{gpu.barrier|ttg.barrier local}}
  // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
  // CHECK-NEXT: scf.yield %[[D3]]
  // REMARK: eight_warps.mlir:[[# @LINE + 9]]:5: remark: scheduled the loop as four ping-pong clusters (8 warps, tile 256x256x64, 2 stages)
  tt.func public @four_clusters(%a_ptrs: tensor<256x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x256x!tt.ptr<f16>, #blocked1>, %a_step: tensor<256x64xi32, #blocked>, %b_step: tensor<64x256xi32, #blocked1>, %n: i32) -> tensor<256x256xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<256x256xf32, #mma>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x64x256xf16, #shared1, #smem, mutable>
    %a0 = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x256xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x256xf16, #shared1, #smem, mutable>
    %r:5 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %ap = %a_ptrs, %bp = %b_ptrs, %a_cur = %a0, %b_cur = %b0) -> (tensor<256x256xf32, #mma>, tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<64x256x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<256x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x256xf16, #shared1, #smem, mutable>)  : i32 {
      %ap1 = tt.addptr %ap, %a_step : tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<256x64xi32, #blocked>
      %a = tt.load %ap1 : tensor<256x64x!tt.ptr<f16>, #blocked>
      %bp1 = tt.addptr %bp, %b_step : tensor<64x256x!tt.ptr<f16>, #blocked1>, tensor<64x256xi32, #blocked1>
      %b = tt.load %bp1 : tensor<64x256x!tt.ptr<f16>, #blocked1>
      %a_op = ttg.local_load %a_cur : !ttg.memdesc<256x64xf16, #shared, #smem, mutable> -> tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_op = ttg.local_load %b_cur : !ttg.memdesc<64x256xf16, #shared1, #smem, mutable> -> tensor<64x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_op, %b_op, %acc : tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x256xf32, #mma>
      %a_next = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
      ttg.local_store %a, %a_next : tensor<256x64xf16, #blocked> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
      %b_next = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x256xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x256xf16, #shared1, #smem, mutable>
      ttg.local_store %b, %b_next : tensor<64x256xf16, #blocked1> -> !ttg.memdesc<64x256xf16, #shared1, #smem, mutable>
      scf.yield %d, %ap1, %bp1, %a_next, %b_next : tensor<256x256xf32, #mma>, tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<64x256x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<256x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x256xf16, #shared1, #smem, mutable>
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<1x64x256xf16, #shared1, #smem, mutable>
    tt.return %r#0 : tensor<256x256xf32, #mma>
  }
}
