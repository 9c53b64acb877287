// Dot operands loaded across K, rewritten the way upstream's InThreadTranspose rewrites them: the
// global load in a blocked layout widened along K, its value transposed in each lane's registers
// (amdg.in_thread_transpose) right before the LDS write, and every buffer of the operand in an
// amd_rotating_shared layout, K-contiguous, with the MFMA's swizzle. The layouts are new module
// aliases, as Triton prints them. Each case was also run through Triton's own pass (3.6.0 and
// 3.9.0): the outputs are identical once both are printed by Triton (tests/test_amd_lit_agreement.py).
// RUN: irlab pass in-thread-transpose --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass in-thread-transpose --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// A loaded M-fastest and B loaded N-fastest: both widened to 4 f16 a lane along K (64-bit LDS writes).
// CHECK-DAG: [[A_TILE:#blocked[0-9]+]] = #ttg.blocked<{sizePerThread = [8, 4], threadsPerWarp = [16, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
// CHECK-DAG: [[A_LIN:#linear[0-9]*]] = #ttg.linear<{register = {{\[}}[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]], lane = {{\[}}[8, 0], [16, 0], [32, 0], [64, 0], [0, 4], [0, 8]], warp = {{\[}}[0, 16], [0, 32]], block = []}>
// CHECK-DAG: [[A_LDS:#shared[0-9]+]] = #ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 16, order = [1, 0]}>
// CHECK-DAG: [[B_TILE:#blocked[0-9]+]] = #ttg.blocked<{sizePerThread = [4, 8], threadsPerWarp = [4, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: [[B_LIN:#linear[0-9]*]] = #ttg.linear<{register = {{\[}}[1, 0], [2, 0], [0, 1], [0, 2], [0, 4]], lane = {{\[}}[0, 8], [0, 16], [0, 32], [0, 64], [4, 0], [8, 0]], warp = {{\[}}[16, 0], [32, 0]], block = []}>
// CHECK-DAG: [[B_LDS:#shared[0-9]+]] = #ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 16, order = [0, 1]}>
// CHECK-LABEL: tt.func public @both_operands_across_k
// CHECK: %[[AP:.*]] = ttg.convert_layout %a_ptrs : tensor<128x64x!tt.ptr<f16>, #blocked> -> tensor<128x64x!tt.ptr<f16>, [[A_TILE]]>
// CHECK-NEXT: %[[A:.*]] = tt.load %[[AP]] : tensor<128x64x!tt.ptr<f16>, [[A_TILE]]>
// CHECK-NEXT: %[[A_OLD:.*]] = ttg.convert_layout %[[A]] : tensor<128x64xf16, [[A_TILE]]> -> tensor<128x64xf16, #blocked>
// CHECK: %[[A_T:.*]] = ttg.convert_layout %[[A_OLD]] : tensor<128x64xf16, #blocked> -> tensor<128x64xf16, [[A_TILE]]>
// CHECK-NEXT: %[[A_TR:.*]] = amdg.in_thread_transpose %[[A_T]] : tensor<128x64xf16, [[A_TILE]]> -> tensor<128x64xf16, [[A_LIN]]>
// CHECK-NEXT: %[[A_BUF:.*]] = ttg.local_alloc %[[A_TR]] : (tensor<128x64xf16, [[A_LIN]]>) -> !ttg.memdesc<128x64xf16, [[A_LDS]], #smem>
// CHECK: amdg.in_thread_transpose %{{.*}} : tensor<64x128xf16, [[B_TILE]]> -> tensor<64x128xf16, [[B_LIN]]>
// CHECK-NEXT: %[[B_BUF:.*]] = ttg.local_alloc %{{.*}} : (tensor<64x128xf16, [[B_LIN]]>) -> !ttg.memdesc<64x128xf16, [[B_LDS]], #smem>
// CHECK: ttg.local_load %[[A_BUF]] : !ttg.memdesc<128x64xf16, [[A_LDS]], #smem> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
// CHECK: ttg.local_load %[[B_BUF]] : !ttg.memdesc<64x128xf16, [[B_LDS]], #smem> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
// REMARK: in_thread_transpose_rewrites.mlir:[[# @LINE + 17]]:5: remark: operand A written to LDS K-contiguous: 1 global load(s) widened to 4 elements a lane along K
// REMARK: in_thread_transpose_rewrites.mlir:[[# @LINE + 17]]:5: remark: operand B written to LDS K-contiguous: 1 global load(s) widened to 4 elements a lane along K
#blocked = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [16, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [16, 16, 16], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @both_operands_across_k(%a_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %a_ptrs = tt.splat %a_ptr : !tt.ptr<f16> -> tensor<128x64x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>, #blocked1>
    %a = tt.load %a_ptrs : tensor<128x64x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<64x128x!tt.ptr<f16>, #blocked1>
    %a_lds = ttg.local_alloc %a : (tensor<128x64xf16, #blocked>) -> !ttg.memdesc<128x64xf16, #shared, #smem>
    %b_lds = ttg.local_alloc %b : (tensor<64x128xf16, #blocked1>) -> !ttg.memdesc<64x128xf16, #shared1, #smem>
    %a_op = ttg.local_load %a_lds : !ttg.memdesc<128x64xf16, #shared, #smem> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x128xf16, #shared1, #smem> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a_op, %b_op, %zero : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<128x128xf32, #mma>
    tt.return
  }
}

// -----

// The stream pipeliner's shape: a prologue store and a loop-carried slot of a multi-buffer; B's
// loads (with mask and other) widened inside and outside the loop, A (K-fastest) left alone.
// CHECK-DAG: [[TILE:#blocked[0-9]+]] = #ttg.blocked<{sizePerThread = [4, 8], threadsPerWarp = [2, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: [[LIN:#linear[0-9]*]] = #ttg.linear<{register = {{\[}}[1, 0], [2, 0], [0, 1], [0, 2], [0, 4]], lane = {{\[}}[0, 8], [0, 16], [0, 32], [0, 64], [0, 128], [4, 0]], warp = {{\[}}[8, 0], [16, 0]], block = []}>
// CHECK-DAG: [[LDS:#shared[0-9]+]] = #ttg.amd_rotating_shared<{vec = 4, perPhase = 2, maxPhase = 8, order = [0, 1]}>
// CHECK-LABEL: tt.func public @pipelined_k_loop
// CHECK: %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x32x256xf16, [[LDS]], #smem, mutable>
// CHECK: tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x256x!tt.ptr<f16>, [[TILE]]>
// CHECK: %b_slot = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x32x256xf16, [[LDS]], #smem, mutable> -> !ttg.memdesc<32x256xf16, [[LDS]], #smem, mutable>
// CHECK: ttg.local_store %{{.*}}, %b_slot : tensor<32x256xf16, [[LIN]]> -> !ttg.memdesc<32x256xf16, [[LDS]], #smem, mutable>
// CHECK: scf.for {{.*}} -> (tensor<128x256xf32, #mma>, !ttg.memdesc<128x32xf16, #shared, #smem, mutable>, !ttg.memdesc<32x256xf16, [[LDS]], #smem, mutable>)
// CHECK: tt.load %a_ptrs : tensor<128x32x!tt.ptr<f16>, #blocked>
// CHECK: tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x256x!tt.ptr<f16>, [[TILE]]>
// CHECK: ttg.local_load %b_cur : !ttg.memdesc<32x256xf16, [[LDS]], #smem, mutable>
// CHECK: ttg.local_store %a1, %a_next : tensor<128x32xf16, #blocked> -> !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
// CHECK: amdg.in_thread_transpose
// CHECK-NEXT: ttg.local_store %{{.*}}, %b_next : tensor<32x256xf16, [[LIN]]> -> !ttg.memdesc<32x256xf16, [[LDS]], #smem, mutable>
// CHECK-NEXT: scf.yield %next, %a_next, %b_next : tensor<128x256xf32, #mma>, !ttg.memdesc<128x32xf16, #shared, #smem, mutable>, !ttg.memdesc<32x256xf16, [[LDS]], #smem, mutable>
// CHECK: ttg.local_dealloc %b_buf : !ttg.memdesc<1x32x256xf16, [[LDS]], #smem, mutable>
// REMARK: remark: operand B written to LDS K-contiguous: 2 global load(s) widened to 4 elements a lane along K
// REMARK: note: not rewritten: operand A is written K-contiguous already
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 16, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @pipelined_k_loop(%a_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32, %k_tiles: i32, %k_mask: tensor<32x256xi1, #blocked1>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<128x256xf32, #mma>
    %other = arith.constant dense<0.000000e+00> : tensor<32x256xf16, #blocked1>
    %a_ptrs = tt.splat %a_ptr : !tt.ptr<f16> -> tensor<128x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<32x256x!tt.ptr<f16>, #blocked1>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<1x128x32xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x32x256xf16, #shared1, #smem, mutable>
    %a0 = tt.load %a_ptrs : tensor<128x32x!tt.ptr<f16>, #blocked>
    %b0 = tt.load %b_ptrs, %k_mask, %other : tensor<32x256x!tt.ptr<f16>, #blocked1>
    %a_slot = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x128x32xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
    ttg.local_store %a0, %a_slot : tensor<128x32xf16, #blocked> -> !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
    %b_slot = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x32x256xf16, #shared1, #smem, mutable> -> !ttg.memdesc<32x256xf16, #shared1, #smem, mutable>
    ttg.local_store %b0, %b_slot : tensor<32x256xf16, #blocked1> -> !ttg.memdesc<32x256xf16, #shared1, #smem, mutable>
    %last = arith.subi %k_tiles, %c1 : i32
    %acc:3 = scf.for %k = %c0 to %last step %c1 iter_args(%sum = %zero, %a_cur = %a_slot, %b_cur = %b_slot) -> (tensor<128x256xf32, #mma>, !ttg.memdesc<128x32xf16, #shared, #smem, mutable>, !ttg.memdesc<32x256xf16, #shared1, #smem, mutable>) : i32 {
      %a1 = tt.load %a_ptrs : tensor<128x32x!tt.ptr<f16>, #blocked>
      %b1 = tt.load %b_ptrs, %k_mask, %other : tensor<32x256x!tt.ptr<f16>, #blocked1>
      %a_op = ttg.local_load %a_cur : !ttg.memdesc<128x32xf16, #shared, #smem, mutable> -> tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_op = ttg.local_load %b_cur : !ttg.memdesc<32x256xf16, #shared1, #smem, mutable> -> tensor<32x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %next = tt.dot %a_op, %b_op, %sum : tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<128x256xf32, #mma>
      %a_next = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x128x32xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
      ttg.local_store %a1, %a_next : tensor<128x32xf16, #blocked> -> !ttg.memdesc<128x32xf16, #shared, #smem, mutable>
      %b_next = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x32x256xf16, #shared1, #smem, mutable> -> !ttg.memdesc<32x256xf16, #shared1, #smem, mutable>
      ttg.local_store %b1, %b_next : tensor<32x256xf16, #blocked1> -> !ttg.memdesc<32x256xf16, #shared1, #smem, mutable>
      scf.yield %next, %a_next, %b_next : tensor<128x256xf32, #mma>, !ttg.memdesc<128x32xf16, #shared, #smem, mutable>, !ttg.memdesc<32x256xf16, #shared1, #smem, mutable>
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<1x128x32xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<1x32x256xf16, #shared1, #smem, mutable>
    tt.return
  }
}

// -----

// CDNA4 (MFMA version 4): 64 LDS banks, so the same K = 64 gives perPhase 2; bf16 with kWidth 8.
// The load has room for only 2 elements a lane along K (K = 64 over 4 lanes x 8 warps).
// CHECK-DAG: [[TILE:#blocked[0-9]+]] = #ttg.blocked<{sizePerThread = [2, 8], threadsPerWarp = [2, 32], warpsPerCTA = [8, 1], order = [1, 0]}>
// CHECK-DAG: [[LIN:#linear[0-9]*]] = #ttg.linear<{register = {{\[}}[1, 0], [0, 1], [0, 2], [0, 4], [32, 0]], lane = {{\[}}[0, 8], [0, 16], [0, 32], [0, 64], [0, 128], [2, 0]], warp = {{\[}}[4, 0], [8, 0], [16, 0]], block = []}>
// CHECK-DAG: [[LDS:#shared[0-9]+]] = #ttg.amd_rotating_shared<{vec = 8, perPhase = 2, maxPhase = 8, order = [0, 1]}>
// CHECK-LABEL: tt.func public @cdna4_bf16
// CHECK: tt.load %{{.*}} : tensor<64x256x!tt.ptr<bf16>, [[TILE]]>
// CHECK: amdg.in_thread_transpose %{{.*}} : tensor<64x256xbf16, [[TILE]]> -> tensor<64x256xbf16, [[LIN]]>
// CHECK-NEXT: ttg.local_alloc %{{.*}} : (tensor<64x256xbf16, [[LIN]]>) -> !ttg.memdesc<64x256xbf16, [[LDS]], #smem>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [8, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 4], instrShape = [32, 32, 16], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 16, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx950", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @cdna4_bf16(%a: tensor<256x64xbf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 8}>>, %b_ptr: !tt.ptr<bf16> {tt.divisibility = 16 : i32}) {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x256xf32, #mma>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<bf16> -> tensor<64x256x!tt.ptr<bf16>, #blocked>
    %b = tt.load %b_ptrs : tensor<64x256x!tt.ptr<bf16>, #blocked>
    %b_lds = ttg.local_alloc %b : (tensor<64x256xbf16, #blocked>) -> !ttg.memdesc<64x256xbf16, #shared, #smem>
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x256xbf16, #shared, #smem> -> tensor<64x256xbf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 8}>>
    %c = tt.dot %a, %b_op, %zero : tensor<256x64xbf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 8}>> * tensor<64x256xbf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 8}>> -> tensor<256x256xf32, #mma>
    tt.return
  }
}

// -----

// f32: a 64-bit LDS write holds 2 elements, so K per lane is 2 whatever room the load has.
// CHECK-DAG: [[TILE:#blocked[0-9]+]] = #ttg.blocked<{sizePerThread = [4, 2], threadsPerWarp = [16, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
// CHECK-DAG: [[LIN:#linear[0-9]*]] = #ttg.linear<{register = {{\[}}[0, 1], [1, 0], [2, 0], [0, 32]], lane = {{\[}}[4, 0], [8, 0], [16, 0], [32, 0], [0, 2], [0, 4]], warp = {{\[}}[0, 8], [0, 16]], block = []}>
// CHECK-DAG: [[LDS:#shared[0-9]+]] = #ttg.amd_rotating_shared<{vec = 1, perPhase = 1, maxPhase = 16, order = [1, 0]}>
// CHECK-LABEL: tt.func public @f32_operand
// CHECK: tt.load %{{.*}} : tensor<64x64x!tt.ptr<f32>, [[TILE]]>
// CHECK: amdg.in_thread_transpose %{{.*}} : tensor<64x64xf32, [[TILE]]> -> tensor<64x64xf32, [[LIN]]>
// CHECK-NEXT: ttg.local_alloc %{{.*}} : (tensor<64x64xf32, [[LIN]]>) -> !ttg.memdesc<64x64xf32, [[LDS]], #smem>
// REMARK: remark: operand A written to LDS K-contiguous: 1 global load(s) widened to 2 elements a lane along K
#blocked = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 2], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @f32_operand(%a_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %b: tensor<64x64xf32, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 1}>>) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %a_ptrs = tt.splat %a_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %a = tt.load %a_ptrs : tensor<64x64x!tt.ptr<f32>, #blocked>
    %a_lds = ttg.local_alloc %a : (tensor<64x64xf32, #blocked>) -> !ttg.memdesc<64x64xf32, #shared, #smem>
    %a_op = ttg.local_load %a_lds : !ttg.memdesc<64x64xf32, #shared, #smem> -> tensor<64x64xf32, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 1}>>
    %c = tt.dot %a_op, %b, %zero : tensor<64x64xf32, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 1}>> * tensor<64x64xf32, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 1}>> -> tensor<64x64xf32, #mma>
    tt.return
  }
}

// -----

// fp8 (8 elements a 64-bit write), written into a buffer an scf.if chooses: both branches'
// allocations and the if's result take the rotating layout.
// CHECK-DAG: [[TILE:#blocked[0-9]+]] = #ttg.blocked<{sizePerThread = [4, 16], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: [[LDS:#shared[0-9]+]] = #ttg.amd_rotating_shared<{vec = 8, perPhase = 1, maxPhase = 16, order = [0, 1]}>
// CHECK-LABEL: tt.func public @fp8_in_branches
// CHECK: %buf = scf.if %flag -> (!ttg.memdesc<128x128xf8E4M3FNUZ, [[LDS]], #smem, mutable>) {
// CHECK-NEXT: ttg.local_alloc : () -> !ttg.memdesc<128x128xf8E4M3FNUZ, [[LDS]], #smem, mutable>
// CHECK-NEXT: scf.yield %one : !ttg.memdesc<128x128xf8E4M3FNUZ, [[LDS]], #smem, mutable>
// CHECK: ttg.local_alloc : () -> !ttg.memdesc<128x128xf8E4M3FNUZ, [[LDS]], #smem, mutable>
// CHECK-NEXT: scf.yield %other : !ttg.memdesc<128x128xf8E4M3FNUZ, [[LDS]], #smem, mutable>
// CHECK: tt.load %{{.*}} : tensor<128x128x!tt.ptr<f8E4M3FNUZ>, [[TILE]]>
// CHECK: amdg.in_thread_transpose
// CHECK-NEXT: ttg.local_store %{{.*}}, %buf : tensor<128x128xf8E4M3FNUZ, #linear{{[0-9]*}}> -> !ttg.memdesc<128x128xf8E4M3FNUZ, [[LDS]], #smem, mutable>
// CHECK-NEXT: ttg.local_load %buf : !ttg.memdesc<128x128xf8E4M3FNUZ, [[LDS]], #smem, mutable>
// REMARK: remark: operand B written to LDS K-contiguous: 1 global load(s) widened to 4 elements a lane along K ({{.*}}), 1 LDS write(s) transposed in registers first ({{.*}}), 3 buffer value(s)
#blocked = #ttg.blocked<{sizePerThread = [1, 16], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [16, 16, 32], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @fp8_in_branches(%a: tensor<64x128xf8E4M3FNUZ, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 8}>>, %b_ptr: !tt.ptr<f8E4M3FNUZ> {tt.divisibility = 16 : i32}, %flag: i1) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32, #mma>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f8E4M3FNUZ> -> tensor<128x128x!tt.ptr<f8E4M3FNUZ>, #blocked>
    %buf = scf.if %flag -> (!ttg.memdesc<128x128xf8E4M3FNUZ, #shared, #smem, mutable>) {
      %one = ttg.local_alloc : () -> !ttg.memdesc<128x128xf8E4M3FNUZ, #shared, #smem, mutable>
      scf.yield %one : !ttg.memdesc<128x128xf8E4M3FNUZ, #shared, #smem, mutable>
    } else {
      %other = ttg.local_alloc : () -> !ttg.memdesc<128x128xf8E4M3FNUZ, #shared, #smem, mutable>
      scf.yield %other : !ttg.memdesc<128x128xf8E4M3FNUZ, #shared, #smem, mutable>
    }
    %b = tt.load %b_ptrs : tensor<128x128x!tt.ptr<f8E4M3FNUZ>, #blocked>
    ttg.local_store %b, %buf : tensor<128x128xf8E4M3FNUZ, #blocked> -> !ttg.memdesc<128x128xf8E4M3FNUZ, #shared, #smem, mutable>
    %b_op = ttg.local_load %buf : !ttg.memdesc<128x128xf8E4M3FNUZ, #shared, #smem, mutable> -> tensor<128x128xf8E4M3FNUZ, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 8}>>
    %c = tt.dot %a, %b_op, %zero : tensor<64x128xf8E4M3FNUZ, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 8}>> * tensor<128x128xf8E4M3FNUZ, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 8}>> -> tensor<64x128xf32, #mma>
    tt.return
  }
}

// -----

// A buffer carried by scf.while: its inputs, the 'before' block's argument, the 'do' block's
// argument (in the block header), the results, and the terminators that forward it.
// CHECK-DAG: [[LDS:#shared[0-9]+]] = #ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 16, order = [0, 1]}>
// CHECK-LABEL: tt.func public @while_loop
// CHECK: %first = ttg.local_alloc %{{.*}} -> !ttg.memdesc<64x128xf16, [[LDS]], #smem, mutable>
// CHECK-NEXT: scf.while (%buf = %first, %acc = %zero) : (!ttg.memdesc<64x128xf16, [[LDS]], #smem, mutable>, tensor<64x128xf32, #mma>) -> (!ttg.memdesc<64x128xf16, [[LDS]], #smem, mutable>, tensor<64x128xf32, #mma>) {
// CHECK-NEXT: scf.condition(%go) %buf, %acc : !ttg.memdesc<64x128xf16, [[LDS]], #smem, mutable>, tensor<64x128xf32, #mma>
// CHECK: ^bb0(%cur: !ttg.memdesc<64x128xf16, [[LDS]], #smem, mutable>, %sum: tensor<64x128xf32, #mma>):
// CHECK: amdg.in_thread_transpose
// CHECK-NEXT: ttg.local_store %{{.*}}, %cur : tensor<64x128xf16, #linear{{[0-9]*}}> -> !ttg.memdesc<64x128xf16, [[LDS]], #smem, mutable>
// CHECK-NEXT: scf.yield %cur, %next : !ttg.memdesc<64x128xf16, [[LDS]], #smem, mutable>, tensor<64x128xf32, #mma>
// CHECK: ttg.local_dealloc %res#0 : !ttg.memdesc<64x128xf16, [[LDS]], #smem, mutable>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @while_loop(%a: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %go: i1) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32, #mma>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>, #blocked>
    %b0 = tt.load %b_ptrs : tensor<64x128x!tt.ptr<f16>, #blocked>
    %first = ttg.local_alloc %b0 : (tensor<64x128xf16, #blocked>) -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
    %res:2 = scf.while (%buf = %first, %acc = %zero) : (!ttg.memdesc<64x128xf16, #shared, #smem, mutable>, tensor<64x128xf32, #mma>) -> (!ttg.memdesc<64x128xf16, #shared, #smem, mutable>, tensor<64x128xf32, #mma>) {
      scf.condition(%go) %buf, %acc : !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, tensor<64x128xf32, #mma>
    } do {
    ^bb0(%cur: !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, %sum: tensor<64x128xf32, #mma>):
      %b_op = ttg.local_load %cur : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %next = tt.dot %a, %b_op, %sum : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x128xf32, #mma>
      %b1 = tt.load %b_ptrs : tensor<64x128x!tt.ptr<f16>, #blocked>
      ttg.local_store %b1, %cur : tensor<64x128xf16, #blocked> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
      scf.yield %cur, %next : !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, tensor<64x128xf32, #mma>
    }
    ttg.local_dealloc %res#0 : !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
    tt.return
  }
}
