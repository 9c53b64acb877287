// preset=upstream is Triton 3.6's sinkSecondLoad exactly: its threshold is on the two global
// loads' shapes (first >= 128x64, second >= 128 along dim 1), not on the dot's tile, and it needs
// no shared-memory staging -- only one dot, two loads, the second before the dot and first used
// after it.
// RUN: irlab pass 'interleave-global-loads{preset=upstream}' --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass 'interleave-global-loads{preset=upstream}' --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s --check-prefix=NOTE

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // B is loaded N x K (128x64) and transposed in registers: the dot's tile is 128x128x64, but the
  // second load is only 64 along dim 1, so upstream leaves the loop alone.
  // CHECK-LABEL: tt.func public @transposed_b
  tt.func public @transposed_b(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %k_tiles: i32) -> tensor<128x128xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %a_ptrs = tt.splat %a : !tt.ptr<f16> -> tensor<128x64x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<128x64x!tt.ptr<f16>, #blocked>
    %a_smem = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %b_smem = ttg.local_alloc : () -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    // NOTE: upstream_load_shapes.mlir:[[# @LINE + 1]]:5: note: not moved: the loads' tiles 128x64 and 128x64 are below Triton 3.6's sinkSecondLoad threshold
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<128x128xf32, #mma>)  : i32 {
      // CHECK: tt.load
      // CHECK-NEXT: tt.load
      %a_next = tt.load %a_ptrs : tensor<128x64x!tt.ptr<f16>, #blocked>
      %b_next = tt.load %b_ptrs : tensor<128x64x!tt.ptr<f16>, #blocked>
      %a_k = ttg.local_load %a_smem : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_k = ttg.local_load %b_smem : !ttg.memdesc<64x128xf16, #shared1, #smem, mutable> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_k, %b_k, %acc_k : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<128x128xf32, #mma>
      %b_t = tt.trans %b_next {order = array<i32: 1, 0>} : tensor<128x64xf16, #blocked> -> tensor<64x128xf16, #blocked1>
      ttg.local_store %a_next, %a_smem : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
      ttg.local_store %b_t, %b_smem : tensor<64x128xf16, #blocked1> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
      scf.yield %d : tensor<128x128xf32, #mma>
    }
    tt.return %acc : tensor<128x128xf32, #mma>
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // Register-pipelined (no shared memory): the loads are yielded for the next iteration. The
  // talk's preset wants local_loads; upstream's conditions hold, and B goes right before the dot.
  // CHECK-LABEL: tt.func public @register_pipelined
  tt.func public @register_pipelined(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %k_tiles: i32, %a0: tensor<128x64xf16, #blocked>, %b0: tensor<64x128xf16, #blocked>) -> tensor<128x128xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %a_ptrs = tt.splat %a : !tt.ptr<f16> -> tensor<128x64x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>, #blocked>
    %acc:3 = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero, %a_cur = %a0, %b_cur = %b0) -> (tensor<128x128xf32, #mma>, tensor<128x64xf16, #blocked>, tensor<64x128xf16, #blocked>)  : i32 {
      // CHECK: %a_next = tt.load
      // CHECK: ttg.convert_layout
      // CHECK: ttg.convert_layout
      // CHECK-NEXT: %b_next = tt.load
      // CHECK-NEXT: tt.dot
      // NOTE: upstream_load_shapes.mlir:[[# @LINE + 2]]:7: remark: sank %b_next = tt.load {{.*}} before %d = tt.dot {{.*}} (upstream schedule)
      %a_next = tt.load %a_ptrs : tensor<128x64x!tt.ptr<f16>, #blocked>
      %b_next = tt.load %b_ptrs : tensor<64x128x!tt.ptr<f16>, #blocked>
      %a_k = ttg.convert_layout %a_cur : tensor<128x64xf16, #blocked> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_k = ttg.convert_layout %b_cur : tensor<64x128xf16, #blocked> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_k, %b_k, %acc_k : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<128x128xf32, #mma>
      scf.yield %d, %a_next, %b_next : tensor<128x128xf32, #mma>, tensor<128x64xf16, #blocked>, tensor<64x128xf16, #blocked>
    }
    tt.return %acc#0 : tensor<128x128xf32, #mma>
  }
}
