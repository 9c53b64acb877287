// Dot operands in-thread transpose leaves alone, each with the reason at the op where the pattern
// breaks, and the IR unchanged byte for byte. The first seven are refused by upstream's pass too
// (the same input through Triton's own pass comes back unchanged); the last is irlab's own caution.
// RUN: irlab pass in-thread-transpose --split-input-file %s | diff %s -
// RUN: irlab pass in-thread-transpose --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s

// Both operands loaded K-fastest (A row-major, B column-major): the LDS write is already K-contiguous.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 16, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 16, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @k_contiguous_already(%a_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %a_ptrs = tt.splat %a_ptr : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked1>
    %a = tt.load %a_ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<64x64x!tt.ptr<f16>, #blocked1>
    // CHECK: in_thread_transpose_refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: operand A is written K-contiguous already (its layout's fastest dimension is 1, K): no tra
    %a_lds = ttg.local_alloc %a : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    // CHECK: in_thread_transpose_refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: operand B is written K-contiguous already (its layout's fastest dimension is 0, K): no tra
    %b_lds = ttg.local_alloc %b : (tensor<64x64xf16, #blocked1>) -> !ttg.memdesc<64x64xf16, #shared1, #smem>
    %a_op = ttg.local_load %a_lds : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x64xf16, #shared1, #smem> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a_op, %b_op, %zero : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x64xf32, #mma>
    tt.return
  }
}

// -----

// K = 16 with 4 lanes and 4 warps along it: one element a lane, nothing to transpose in registers.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [16, 16, 16], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @k_too_short(%a: tensor<64x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x32xf32, #mma>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<16x32x!tt.ptr<f16>, #blocked>
    // CHECK: in_thread_transpose_refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: operand B's K = 16 leaves a lane fewer than 2 elements along K after the load's lanes and
    %b = tt.load %b_ptrs : tensor<16x32x!tt.ptr<f16>, #blocked>
    %b_lds = ttg.local_alloc %b : (tensor<16x32xf16, #blocked>) -> !ttg.memdesc<16x32xf16, #shared, #smem>
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<16x32xf16, #shared, #smem> -> tensor<16x32xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a, %b_op, %zero : tensor<64x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<16x32xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x32xf32, #mma>
    tt.return
  }
}

// -----

// An async copy writes LDS straight from global memory: the data never passes through registers.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @direct_to_lds(%a: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32, #mma>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>, #blocked>
    %b_lds = ttg.local_alloc : () -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
    // CHECK: in_thread_transpose_refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: operand B's buffer is filled by ttg.async_copy_global_to_local, a copy straight from globa
    %copy = ttg.async_copy_global_to_local %b_ptrs, %b_lds : tensor<64x128x!tt.ptr<f16>, #blocked> -> <64x128xf16, #shared, #smem, mutable>
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a, %b_op, %zero : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x128xf32, #mma>
    tt.return
  }
}

// -----

// The value written to LDS is computed from the load (a scale): no global load feeds the write itself.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @computed_not_loaded(%a: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %scale: f16) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32, #mma>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<64x128x!tt.ptr<f16>, #blocked>
    %s = tt.splat %scale : f16 -> tensor<64x128xf16, #blocked>
    %scaled = arith.mulf %b, %s : tensor<64x128xf16, #blocked>
    %b_lds = ttg.local_alloc %scaled : (tensor<64x128xf16, #blocked>) -> !ttg.memdesc<64x128xf16, #shared, #smem>
    // CHECK: in_thread_transpose_refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: no global load feeds the LDS writes of operand B (in-thread transpose widens a global
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x128xf16, #shared, #smem> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a, %b_op, %zero : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x128xf32, #mma>
    tt.return
  }
}

// -----

// Two writes of one buffer from loads in different layouts: one widened layout cannot fit both.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @loads_of_two_layouts(%a: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32, #mma>
    %p0 = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>, #blocked>
    %p1 = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>, #blocked1>
    %b0 = tt.load %p0 : tensor<64x128x!tt.ptr<f16>, #blocked>
    // CHECK: in_thread_transpose_refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: the global loads of operand B differ in type (tensor<64x128xf16, #blocked> and tensor<64x1
    %b1 = tt.load %p1 : tensor<64x128x!tt.ptr<f16>, #blocked1>
    %b_lds = ttg.local_alloc %b0 : (tensor<64x128xf16, #blocked>) -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
    ttg.local_store %b1, %b_lds : tensor<64x128xf16, #blocked1> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a, %b_op, %zero : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x128xf32, #mma>
    tt.return
  }
}

// -----

// The buffer is a function argument: its other writers cannot be seen.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @buffer_from_the_caller(%a: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b_lds: !ttg.memdesc<64x128xf16, #shared, #smem, mutable>) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32, #mma>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<64x128x!tt.ptr<f16>, #blocked>
    ttg.local_store %b, %b_lds : tensor<64x128xf16, #blocked> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
    // CHECK: in_thread_transpose_refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: %b_lds is a function argument; the data flow cannot be followed
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a, %b_op, %zero : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x128xf32, #mma>
    tt.return
  }
}

// -----

// The operand is read through memdesc_trans views, which neither pass follows.
#blocked = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [16, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @read_through_a_transposed_view(%b: tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>, %a_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %a_ptrs = tt.splat %a_ptr : !tt.ptr<f16> -> tensor<128x64x!tt.ptr<f16>, #blocked>
    %a = tt.load %a_ptrs : tensor<128x64x!tt.ptr<f16>, #blocked>
    %a_lds = ttg.local_alloc %a : (tensor<128x64xf16, #blocked>) -> !ttg.memdesc<128x64xf16, #shared, #smem>
    %at = ttg.memdesc_trans %a_lds {order = array<i32: 1, 0>} : !ttg.memdesc<128x64xf16, #shared, #smem> -> !ttg.memdesc<64x128xf16, #shared1, #smem>
    %att = ttg.memdesc_trans %at {order = array<i32: 1, 0>} : !ttg.memdesc<64x128xf16, #shared1, #smem> -> !ttg.memdesc<128x64xf16, #shared, #smem>
    // CHECK: in_thread_transpose_refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: operand A is read through ttg.memdesc_trans, a view in-thread transpose does not follow (o
    %a_op = ttg.local_load %att : !ttg.memdesc<128x64xf16, #shared, #smem> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a_op, %b, %zero : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<128x128xf32, #mma>
    tt.return
  }
}

// -----

// A padded shared layout: upstream's pass would widen the load and transpose in registers but keep
// the padded buffer (it retypes swizzled buffers only); irlab rewrites only buffers it can move whole.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.padded_shared<[128:+8] {order = [1, 0], shape = [64, 128]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @padded_buffer(%a: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32, #mma>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<64x128x!tt.ptr<f16>, #blocked>
    // CHECK: in_thread_transpose_refused.mlir:[[# @LINE + 1]]:5: note: not rewritten: a buffer of operand B (%b_lds) is in padded_shared, not swizzled_shared
    %b_lds = ttg.local_alloc %b : (tensor<64x128xf16, #blocked>) -> !ttg.memdesc<64x128xf16, #shared, #smem>
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x128xf16, #shared, #smem> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a, %b_op, %zero : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<64x128xf32, #mma>
    tt.return
  }
}
