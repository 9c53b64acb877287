// Loops the schedule leaves alone, each with the condition it fails (upstream's, and irlab's order
// check); the IR is unchanged byte for byte.
// RUN: irlab pass block-pingpong --split-input-file %s | diff %s -
// RUN: irlab pass block-pingpong --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // A mask computed from the induction variable (the K bound of a masked GEMM).
  // CHECK: refused.mlir:[[# @LINE + 9]]:5: note: not scheduled: the mask of %a = tt.load (line [[# @LINE + 13]]) changes from one iteration to the next (it is computed from %k); upstream refuses such loads since Triton 3.9 (loop_variant_masks=allow schedules them, as 3.6 did)
  tt.func public @loop_variant_mask(%a_ptrs: tensor<128x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<128x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32) -> tensor<128x128xf32, #mma> {
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

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK: refused.mlir:[[# @LINE + 9]]:5: note: not scheduled: 4 warps and a 32x32x8 at 16 bits (131072) tile; one cluster takes 262144 to 16777216
  tt.func public @tile_too_small(%a_ptrs: tensor<32x8x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<8x32x!tt.ptr<f16>, #blocked1>, %a_step: tensor<32x8xi32, #blocked>, %b_step: tensor<8x32xi32, #blocked1>, %n: i32) -> tensor<32x32xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #mma>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<1x32x8xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x8x32xf16, #shared1, #smem, mutable>
    %a0 = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x32x8xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x8xf16, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x8x32xf16, #shared1, #smem, mutable> -> !ttg.memdesc<8x32xf16, #shared1, #smem, mutable>
    %r:5 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %ap = %a_ptrs, %bp = %b_ptrs, %a_cur = %a0, %b_cur = %b0) -> (tensor<32x32xf32, #mma>, tensor<32x8x!tt.ptr<f16>, #blocked>, tensor<8x32x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<32x8xf16, #shared, #smem, mutable>, !ttg.memdesc<8x32xf16, #shared1, #smem, mutable>)  : i32 {
      %ap1 = tt.addptr %ap, %a_step : tensor<32x8x!tt.ptr<f16>, #blocked>, tensor<32x8xi32, #blocked>
      %a = tt.load %ap1 : tensor<32x8x!tt.ptr<f16>, #blocked>
      %bp1 = tt.addptr %bp, %b_step : tensor<8x32x!tt.ptr<f16>, #blocked1>, tensor<8x32xi32, #blocked1>
      %b = tt.load %bp1 : tensor<8x32x!tt.ptr<f16>, #blocked1>
      %a_op = ttg.local_load %a_cur : !ttg.memdesc<32x8xf16, #shared, #smem, mutable> -> tensor<32x8xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_op = ttg.local_load %b_cur : !ttg.memdesc<8x32xf16, #shared1, #smem, mutable> -> tensor<8x32xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_op, %b_op, %acc : tensor<32x8xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<8x32xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<32x32xf32, #mma>
      %a_next = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x32x8xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x8xf16, #shared, #smem, mutable>
      ttg.local_store %a, %a_next : tensor<32x8xf16, #blocked> -> !ttg.memdesc<32x8xf16, #shared, #smem, mutable>
      %b_next = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x8x32xf16, #shared1, #smem, mutable> -> !ttg.memdesc<8x32xf16, #shared1, #smem, mutable>
      ttg.local_store %b, %b_next : tensor<8x32xf16, #blocked1> -> !ttg.memdesc<8x32xf16, #shared1, #smem, mutable>
      scf.yield %d, %ap1, %bp1, %a_next, %b_next : tensor<32x32xf32, #mma>, tensor<32x8x!tt.ptr<f16>, #blocked>, tensor<8x32x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<32x8xf16, #shared, #smem, mutable>, !ttg.memdesc<8x32xf16, #shared1, #smem, mutable>
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<1x32x8xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<1x8x32xf16, #shared1, #smem, mutable>
    tt.return %r#0 : tensor<32x32xf32, #mma>
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
  // CHECK: refused.mlir:[[# @LINE + 9]]:5: note: not scheduled: 8 warps need 2 pipeline stages, the loop has 3
  tt.func public @three_stages(%a_ptrs: tensor<256x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<256x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32) -> tensor<256x128xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<2x256x64xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<2x64x128xf16, #shared1, #smem, mutable>
    %a0 = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<2x256x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<2x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    %r:5 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %ap = %a_ptrs, %bp = %b_ptrs, %a_cur = %a0, %b_cur = %b0) -> (tensor<256x128xf32, #mma>, tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<64x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<256x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>)  : i32 {
      %ap1 = tt.addptr %ap, %a_step : tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<256x64xi32, #blocked>
      %a = tt.load %ap1 : tensor<256x64x!tt.ptr<f16>, #blocked>
      %bp1 = tt.addptr %bp, %b_step : tensor<64x128x!tt.ptr<f16>, #blocked1>, tensor<64x128xi32, #blocked1>
      %b = tt.load %bp1 : tensor<64x128x!tt.ptr<f16>, #blocked1>
      %a_op = ttg.local_load %a_cur : !ttg.memdesc<256x64xf16, #shared, #smem, mutable> -> tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_op = ttg.local_load %b_cur : !ttg.memdesc<64x128xf16, #shared1, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_op, %b_op, %acc : tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
      %a_next = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<2x256x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
      ttg.local_store %a, %a_next : tensor<256x64xf16, #blocked> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
      %b_next = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<2x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
      ttg.local_store %b, %b_next : tensor<64x128xf16, #blocked1> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
      scf.yield %d, %ap1, %bp1, %a_next, %b_next : tensor<256x128xf32, #mma>, tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<64x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<256x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<2x256x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<2x64x128xf16, #shared1, #smem, mutable>
    tt.return %r#0 : tensor<256x128xf32, #mma>
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.blocked<{sizePerThread = [4, 4], threadsPerWarp = [8, 8], warpsPerCTA = [2, 2], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK: refused.mlir:[[# @LINE + 9]]:5: note: not scheduled: not an MFMA dot (its A operand's layout is #ttg.dot_op<{opIdx = 0, parent = #mma}>)
  tt.func public @fma_dot(%a_ptrs: tensor<128x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<128x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32) -> tensor<128x128xf32, #mma> {
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
      %a_op = ttg.local_load %a_cur : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma}>>
      %b_op = ttg.local_load %b_cur : !ttg.memdesc<64x128xf16, #shared1, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma}>>
      %d = tt.dot %a_op, %b_op, %acc : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma}>> -> tensor<128x128xf32, #mma>
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
  // CHECK: refused.mlir:[[# @LINE + 9]]:5: note: the loop is already scheduled: it has rocdl.s.setprio (line [[# @LINE + 17]])
  tt.func public @already_scheduled(%a_ptrs: tensor<128x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<128x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32) -> tensor<128x128xf32, #mma> {
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
      rocdl.s.setprio 0
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
  // CHECK: refused.mlir:[[# @LINE + 9]]:5: note: not scheduled: ttg.local_store (line [[# @LINE + 17]]) is a local_store that feeds no dot (the schedule counts on the dot's memory ops alone)
  tt.func public @extra_local_store(%a_ptrs: tensor<128x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<128x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32, %spill: !ttg.memdesc<128x128xf32, #shared, #smem, mutable>) -> tensor<128x128xf32, #mma> {
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
      ttg.local_store %d, %spill : tensor<128x128xf32, #mma> -> !ttg.memdesc<128x128xf32, #shared, #smem, mutable>
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

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK: refused.mlir:[[# @LINE + 9]]:5: note: not scheduled: the dot's operand %b_neg does not come straight from a local_load
  tt.func public @cast_operand(%a_ptrs: tensor<256x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<256x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32) -> tensor<256x128xf32, #mma> {
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
      %b_neg = arith.negf %b_op : tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_op, %b_neg, %acc : tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
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
  // CHECK: refused.mlir:[[# @LINE + 9]]:5: note: not rewritten: ttg.local_store (line [[# @LINE + 34]]) (writes shared memory) would cross %out = scf.if (line [[# @LINE + 24]]) (reads shared memory, writes shared memory)
  tt.func public @persistent_epilogue_in_lds(%a_ptrs: tensor<256x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<256x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32, %bias: tensor<256x128xf32, #mma>) -> tensor<256x128xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable>
    %a0 = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
    %b0 = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    %r:5 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %ap = %a_ptrs, %bp = %b_ptrs, %a_cur = %a0, %b_cur = %b0) -> (tensor<256x128xf32, #mma>, tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<64x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<256x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>)  : i32 {
      %ap1 = tt.addptr %ap, %a_step : tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<256x64xi32, #blocked>
      %first = arith.cmpi eq, %k, %c0 : i32
      %kk = scf.if %first -> (i32) {
        scf.yield %c0 : i32
      } else {
        scf.yield %k : i32
      }
      %a = tt.load %ap1 : tensor<256x64x!tt.ptr<f16>, #blocked>
      %bp1 = tt.addptr %bp, %b_step : tensor<64x128x!tt.ptr<f16>, #blocked1>, tensor<64x128xi32, #blocked1>
      %b = tt.load %bp1 : tensor<64x128x!tt.ptr<f16>, #blocked1>
      %a_op = ttg.local_load %a_cur : !ttg.memdesc<256x64xf16, #shared, #smem, mutable> -> tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_op = ttg.local_load %b_cur : !ttg.memdesc<64x128xf16, #shared1, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_op, %b_op, %acc : tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
      %last = arith.cmpi eq, %kk, %c1 : i32
      %out = scf.if %last -> (tensor<256x128xf32, #mma>) {
        %tmp = ttg.local_alloc : () -> !ttg.memdesc<256x128xf32, #shared, #smem, mutable>
        ttg.local_store %bias, %tmp : tensor<256x128xf32, #mma> -> !ttg.memdesc<256x128xf32, #shared, #smem, mutable>
        %bias2 = ttg.local_load %tmp : !ttg.memdesc<256x128xf32, #shared, #smem, mutable> -> tensor<256x128xf32, #mma>
        %sum = arith.addf %d, %bias2 : tensor<256x128xf32, #mma>
        scf.yield %sum : tensor<256x128xf32, #mma>
      } else {
        scf.yield %d : tensor<256x128xf32, #mma>
      }
      %a_next = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
      ttg.local_store %a, %a_next : tensor<256x64xf16, #blocked> -> !ttg.memdesc<256x64xf16, #shared, #smem, mutable>
      %b_next = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
      ttg.local_store %b, %b_next : tensor<64x128xf16, #blocked1> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
      scf.yield %out, %ap1, %bp1, %a_next, %b_next : tensor<256x128xf32, #mma>, tensor<256x64x!tt.ptr<f16>, #blocked>, tensor<64x128x!tt.ptr<f16>, #blocked1>, !ttg.memdesc<256x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<1x256x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable>
    tt.return %r#0 : tensor<256x128xf32, #mma>
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
// CHECK: note: not scheduled: the ping-pong schedule is AMDGPU's (s_setprio, sched barriers); the module is for cuda:90
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @nvidia(%a_ptrs: tensor<128x64x!tt.ptr<f16>, #blocked>, %b_ptrs: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_step: tensor<128x64xi32, #blocked>, %b_step: tensor<64x128xi32, #blocked1>, %n: i32) -> tensor<128x128xf32, #mma> {
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
