// lds-transposes against Triton's in-thread-transpose tests (-tritonamdgpu-in-thread-transpose;
// docs/results/amd_lit_agreement.md). Upstream rewrites a dot operand whose *global load* is not
// K-contiguous (its blocked layout's fastest dimension is not K): each thread loads a few rows,
// transposes them in registers and writes LDS K-contiguously. irlab's lds-non-k-contiguous finding
// looks at the other end of the same trip: the *shared layout* the local_load reads, whose fastest
// dimension is not K. The two agree where the shared layout has the load's order (as the stream
// pipeliner gives it); upstream's tests often give both operands one shared order, and there they
// differ. Each module is one upstream case, with irlab's own IR.
// RUN: irlab pass 'lds-transposes{ask_triton=false}' --split-input-file %s | diff %s -
// RUN: irlab pass 'lds-transposes{ask_triton=false}' --split-input-file %s 2>&1 >/dev/null | filecheck %s

// Both operands loaded across K (A M-fastest, B N-fastest): upstream transposes both in registers.
#blocked = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [0, 1]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [4, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]}>
#shared1 = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // One shared order for both (upstream's input): B's LDS is already K-fastest, the transpose is
  // in the write, which irlab does not classify.
  tt.func public @strided_loads_one_shared_order(%pa: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}) -> tensor<256x128xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %a_ptrs = tt.splat %pa : !tt.ptr<f16> -> tensor<256x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a = tt.load %a_ptrs : tensor<256x32x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a_lds = ttg.local_alloc %a : (tensor<256x32xf16, #blocked>) -> !ttg.memdesc<256x32xf16, #shared, #smem>
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %a_op = ttg.local_load reads dot operand A
    %a_op = ttg.local_load %a_lds : !ttg.memdesc<256x32xf16, #shared, #smem> -> tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    %b_lds = ttg.local_alloc %b : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared, #smem>
    // CHECK-NOT: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous]
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<32x128xf16, #shared, #smem> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %d = tt.dot %a_op, %b_op, %zero : tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
    tt.return %d : tensor<256x128xf32, #mma>
  }
  // The shared layouts in the loads' order: irlab names both reads, as upstream rewrites both.
  tt.func public @strided_loads_shared_follows_load(%pa: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}) -> tensor<256x128xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %a_ptrs = tt.splat %pa : !tt.ptr<f16> -> tensor<256x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a = tt.load %a_ptrs : tensor<256x32x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a_lds = ttg.local_alloc %a : (tensor<256x32xf16, #blocked>) -> !ttg.memdesc<256x32xf16, #shared, #smem>
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %a_op = ttg.local_load reads dot operand A
    %a_op = ttg.local_load %a_lds : !ttg.memdesc<256x32xf16, #shared, #smem> -> tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    %b_lds = ttg.local_alloc %b : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared1, #smem>
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_op = ttg.local_load reads dot operand B
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<32x128xf16, #shared1, #smem> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %d = tt.dot %a_op, %b_op, %zero : tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
    tt.return %d : tensor<256x128xf32, #mma>
  }
}

// -----

// Both operands loaded K-fastest: upstream leaves them alone.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 4], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 16], warpsPerCTA = [1, 8], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [4, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]}>
#shared1 = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // Upstream's input writes A's K-fastest registers into an M-fastest shared layout: irlab names
  // A's read (a strided LDS read that in-thread transpose does not address).
  tt.func public @contiguous_loads_one_shared_order(%pa: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}) -> tensor<256x128xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %a_ptrs = tt.splat %pa : !tt.ptr<f16> -> tensor<256x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a = tt.load %a_ptrs : tensor<256x32x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a_lds = ttg.local_alloc %a : (tensor<256x32xf16, #blocked>) -> !ttg.memdesc<256x32xf16, #shared, #smem>
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %a_op = ttg.local_load reads dot operand A
    %a_op = ttg.local_load %a_lds : !ttg.memdesc<256x32xf16, #shared, #smem> -> tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    %b_lds = ttg.local_alloc %b : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared, #smem>
    // CHECK-NOT: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous]
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<32x128xf16, #shared, #smem> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %d = tt.dot %a_op, %b_op, %zero : tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
    tt.return %d : tensor<256x128xf32, #mma>
  }
  // The shared layouts in the loads' order: no finding, as upstream does nothing.
  tt.func public @contiguous_loads_shared_follows_load(%pa: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}) -> tensor<256x128xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %a_ptrs = tt.splat %pa : !tt.ptr<f16> -> tensor<256x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a = tt.load %a_ptrs : tensor<256x32x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a_lds = ttg.local_alloc %a : (tensor<256x32xf16, #blocked>) -> !ttg.memdesc<256x32xf16, #shared1, #smem>
    // CHECK-NOT: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous]
    %a_op = ttg.local_load %a_lds : !ttg.memdesc<256x32xf16, #shared1, #smem> -> tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    %b_lds = ttg.local_alloc %b : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared, #smem>
    // CHECK-NOT: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous]
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<32x128xf16, #shared, #smem> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %d = tt.dot %a_op, %b_op, %zero : tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
    tt.return %d : tensor<256x128xf32, #mma>
  }
}

// -----

// Strided loads, but the warps split K (8 warps over K = 32): too few K elements per thread to
// transpose in registers, so upstream leaves them alone. irlab names both reads: the finding says
// the read transposes, not whether in-thread transpose could remove it.
#blocked = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [16, 4], warpsPerCTA = [1, 8], order = [0, 1]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [8, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [4, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]}>
#shared1 = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @strided_loads_k_split_over_warps(%pa: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}) -> tensor<256x128xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %a_ptrs = tt.splat %pa : !tt.ptr<f16> -> tensor<256x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a = tt.load %a_ptrs : tensor<256x32x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a_lds = ttg.local_alloc %a : (tensor<256x32xf16, #blocked>) -> !ttg.memdesc<256x32xf16, #shared, #smem>
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %a_op = ttg.local_load reads dot operand A
    %a_op = ttg.local_load %a_lds : !ttg.memdesc<256x32xf16, #shared, #smem> -> tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    %b_lds = ttg.local_alloc %b : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared1, #smem>
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_op = ttg.local_load reads dot operand B
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<32x128xf16, #shared1, #smem> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %d = tt.dot %a_op, %b_op, %zero : tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
    tt.return %d : tensor<256x128xf32, #mma>
  }
}

// -----

// A pipelined 64x64x64 loop (one warp): A loaded K-fastest, B N-fastest, each shared layout in its
// load's order (upstream's input too). Upstream rewrites B's loads, in the prologue and in the
// loop; irlab names B's reads, in the loop and after it, and not A's.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [1, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [1, 1], instrShape = [16, 16, 16], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 16, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @pipelined_loop(%pa: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %k_tiles: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %a_ptrs = tt.splat %pa : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %a_lds = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %b_lds = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %a0 = tt.load %a_ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
    %b0 = tt.load %b_ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
    ttg.local_store %a0, %a_lds : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttg.local_store %b0, %b_lds : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      %a_next = tt.load %a_ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
      // CHECK-NOT: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:7: remark: [lds-non-k-contiguous]
      %a_k = ttg.local_load %a_lds : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_next = tt.load %b_ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
      // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:7: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_k = ttg.local_load reads dot operand B
      %b_k = ttg.local_load %b_lds : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_k, %b_k, %acc_k : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x64xf32, #mma>
      ttg.local_store %a_next, %a_lds : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      ttg.local_store %b_next, %b_lds : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      scf.yield %d : tensor<64x64xf32, #mma>
    }
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_last = ttg.local_load reads dot operand B
    %b_last = ttg.local_load %b_lds : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %a_last = ttg.local_load %a_lds : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    %out = tt.dot %a_last, %b_last, %acc : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x64xf32, #mma>
    tt.return %out : tensor<64x64xf32, #mma>
  }
}

// -----

// B loaded N-fastest inside scf.if: staged and read in each branch, or staged in a nested if and
// read after it (upstream's control-flow cases). Here B's shared layout has the load's order, so
// irlab names every read; upstream's inputs give B a K-fastest shared layout, where irlab names
// none (the transpose is in the write).
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [4, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared1 = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @read_in_each_branch(%a_op: tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %cond: i1) -> tensor<256x128xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %b_op = scf.if %cond -> (tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>) {
      %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
      %b_lds = ttg.local_alloc %b : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared1, #smem>
      // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:7: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_then = ttg.local_load reads dot operand B
      %b_then = ttg.local_load %b_lds : !ttg.memdesc<32x128xf16, #shared1, #smem> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      scf.yield %b_then : tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    } else {
      %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
      %b_lds = ttg.local_alloc %b : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared1, #smem>
      // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:7: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_else = ttg.local_load reads dot operand B
      %b_else = ttg.local_load %b_lds : !ttg.memdesc<32x128xf16, #shared1, #smem> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      scf.yield %b_else : tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    }
    %d = tt.dot %a_op, %b_op, %zero : tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
    tt.return %d : tensor<256x128xf32, #mma>
  }
  tt.func public @staged_in_nested_if(%a_op: tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %cond: i1) -> tensor<256x128xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %buf = scf.if %cond -> (!ttg.memdesc<32x128xf16, #shared1, #smem>) {
      %b_or_zero = scf.if %cond -> (tensor<32x128xf16, #blocked1>) {
        %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
        scf.yield %b : tensor<32x128xf16, #blocked1>
      } else {
        %z = arith.constant dense<0.000000e+00> : tensor<32x128xf16, #blocked1>
        scf.yield %z : tensor<32x128xf16, #blocked1>
      }
      %lds_then = ttg.local_alloc %b_or_zero : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared1, #smem>
      scf.yield %lds_then : !ttg.memdesc<32x128xf16, #shared1, #smem>
    } else {
      %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
      %lds_else = ttg.local_alloc %b : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared1, #smem>
      scf.yield %lds_else : !ttg.memdesc<32x128xf16, #shared1, #smem>
    }
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_op = ttg.local_load reads dot operand B
    %b_op = ttg.local_load %buf : !ttg.memdesc<32x128xf16, #shared1, #smem> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %d = tt.dot %a_op, %b_op, %zero : tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
    tt.return %d : tensor<256x128xf32, #mma>
  }
}

// -----

// A shared buffer carried by scf.for and scf.while (written before and read inside, or written
// inside and read after), and one chosen by scf.if and written after it (upstream's data-flow
// regression cases). B is loaded N-fastest into a shared layout of the load's order: irlab follows
// each buffer through the loop or if and names the read; upstream rewrites each write.
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [4, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared1 = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @for_carries_buffer(%pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %b0 = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
    %lds = ttg.local_alloc %b0 : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    %last = scf.for %i = %c0 to %n step %c1 iter_args(%cur = %lds) -> (!ttg.memdesc<32x128xf16, #shared1, #smem, mutable>)  : i32 {
      %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
      // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:7: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_in = ttg.local_load reads dot operand B
      %b_in = ttg.local_load %cur : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      ttg.local_store %b, %cur : tensor<32x128xf16, #blocked1> -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
      scf.yield %cur : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    }
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_after = ttg.local_load reads dot operand B
    %b_after = ttg.local_load %last : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    tt.return
  }
  tt.func public @while_carries_buffer(%pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %go: i1) {
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %b0 = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
    %lds = ttg.local_alloc %b0 : (tensor<32x128xf16, #blocked1>) -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    %res = scf.while (%cur = %lds) : (!ttg.memdesc<32x128xf16, #shared1, #smem, mutable>) -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable> {
      scf.condition(%go) %cur : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    } do {
    ^bb0(%body_buf: !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>):
      %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
      // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:7: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_in = ttg.local_load reads dot operand B
      %b_in = ttg.local_load %body_buf : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      ttg.local_store %b, %body_buf : tensor<32x128xf16, #blocked1> -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
      scf.yield %body_buf : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    }
    %b1 = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
    ttg.local_store %b1, %res : tensor<32x128xf16, #blocked1> -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_after = ttg.local_load reads dot operand B
    %b_after = ttg.local_load %res : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    tt.return
  }
  tt.func public @if_chooses_buffer(%pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %cond: i1) {
    %buf = scf.if %cond -> (!ttg.memdesc<32x128xf16, #shared1, #smem, mutable>) {
      %x = ttg.local_alloc : () -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
      scf.yield %x : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    } else {
      %y = ttg.local_alloc : () -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
      scf.yield %y : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    }
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %b = tt.load %b_ptrs : tensor<32x128x!tt.ptr<f16>, #blocked1>
    ttg.local_store %b, %buf : tensor<32x128xf16, #blocked1> -> !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %b_op = ttg.local_load reads dot operand B
    %b_op = ttg.local_load %buf : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    tt.return
  }
}

// -----

// Direct-to-LDS copies (async_copy_global_to_local) never pass through registers, so upstream's
// in-thread transpose leaves them alone. A is copied into an M-fastest shared layout: irlab names
// its read (a strided read that in-thread transpose cannot remove); B's shared layout is K-fastest.
#blocked = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [0, 1]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [4, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @direct_to_lds(%pa: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %pb: !tt.ptr<f16> {tt.divisibility = 16 : i32}) -> tensor<256x128xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x128xf32, #mma>
    %a_ptrs = tt.splat %pa : !tt.ptr<f16> -> tensor<256x32x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %pb : !tt.ptr<f16> -> tensor<32x128x!tt.ptr<f16>, #blocked1>
    %a_lds = ttg.local_alloc : () -> !ttg.memdesc<256x32xf16, #shared, #smem, mutable>
    %b_lds = ttg.local_alloc : () -> !ttg.memdesc<32x128xf16, #shared, #smem, mutable>
    %ta = ttg.async_copy_global_to_local %a_ptrs, %a_lds : tensor<256x32x!tt.ptr<f16>, #blocked> -> <256x32xf16, #shared, #smem, mutable>
    %tb = ttg.async_copy_global_to_local %b_ptrs, %b_lds : tensor<32x128x!tt.ptr<f16>, #blocked1> -> <32x128xf16, #shared, #smem, mutable>
    // CHECK: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous] trip #{{[0-9]+}}: %a_op = ttg.local_load reads dot operand A
    %a_op = ttg.local_load %a_lds : !ttg.memdesc<256x32xf16, #shared, #smem, mutable> -> tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    // CHECK-NOT: in_thread_transpose_cases.mlir:[[# @LINE + 1]]:5: remark: [lds-non-k-contiguous]
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<32x128xf16, #shared, #smem, mutable> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %d = tt.dot %a_op, %b_op, %zero : tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x128xf32, #mma>
    tt.return %d : tensor<256x128xf32, #mma>
  }
}
