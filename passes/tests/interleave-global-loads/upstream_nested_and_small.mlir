// preset=upstream against the cases Triton 3.6's sinkSecondLoad tests add beyond the tile
// thresholds (docs/results/amd_lit_agreement.md): the GEMM loop nested in another loop (the inner
// loop is scheduled, the outer one left alone), the loads already interleaved with the
// local_loads (Triton 3.6 no longer hoists them first), and a scalar or 1-D first load (left alone:
// both loads must be 2-D).
// RUN: irlab pass 'interleave-global-loads{preset=upstream}' --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass 'interleave-global-loads{preset=upstream}' --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s --check-prefix=NOTE

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // A 256x256x128 GEMM loop inside a loop over output tiles: the inner loop's B goes right before
  // its dot; the outer loop is not a candidate.
  // CHECK-LABEL: tt.func public @tiles_loop
  tt.func public @tiles_loop(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %c: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %tiles: i32, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<256x256xf32, #mma>
    %a_ptrs = tt.splat %a : !tt.ptr<f16> -> tensor<256x128x!tt.ptr<f16>, #blocked>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<128x256x!tt.ptr<f16>, #blocked1>
    %c_ptrs = tt.splat %c : !tt.ptr<f32> -> tensor<256x256x!tt.ptr<f32>, #mma>
    %a_smem = ttg.local_alloc : () -> !ttg.memdesc<256x128xf16, #shared, #smem, mutable>
    %b_smem = ttg.local_alloc : () -> !ttg.memdesc<128x256xf16, #shared1, #smem, mutable>
    // NOTE-DAG: upstream_nested_and_small.mlir:[[# @LINE + 1]]:5: note: no candidate: the loop contains another loop (only innermost loops are scheduled)
    scf.for %t = %c0 to %tiles step %c1  : i32 {
      %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<256x256xf32, #mma>)  : i32 {
        // CHECK: %a_next = tt.load
        // CHECK-NEXT: %a_k = ttg.local_load
        // CHECK-NEXT: %b_k = ttg.local_load
        // CHECK-NEXT: %b_next = tt.load
        // CHECK-NEXT: %d = tt.dot
        // CHECK-NEXT: ttg.local_store %a_next
        // CHECK-NEXT: ttg.local_store %b_next
        %a_next = tt.load %a_ptrs : tensor<256x128x!tt.ptr<f16>, #blocked>
        %a_k = ttg.local_load %a_smem : !ttg.memdesc<256x128xf16, #shared, #smem, mutable> -> tensor<256x128xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
        // NOTE-DAG: upstream_nested_and_small.mlir:[[# @LINE + 1]]:9: remark: sank %b_next = tt.load {{.*}} before %d = tt.dot {{.*}} (upstream schedule)
        %b_next = tt.load %b_ptrs : tensor<128x256x!tt.ptr<f16>, #blocked1>
        %b_k = ttg.local_load %b_smem : !ttg.memdesc<128x256xf16, #shared1, #smem, mutable> -> tensor<128x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
        %d = tt.dot %a_k, %b_k, %acc_k : tensor<256x128xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<128x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x256xf32, #mma>
        ttg.local_store %a_next, %a_smem : tensor<256x128xf16, #blocked> -> !ttg.memdesc<256x128xf16, #shared, #smem, mutable>
        ttg.local_store %b_next, %b_smem : tensor<128x256xf16, #blocked1> -> !ttg.memdesc<128x256xf16, #shared1, #smem, mutable>
        scf.yield %d : tensor<256x256xf32, #mma>
      }
      tt.store %c_ptrs, %acc : tensor<256x256x!tt.ptr<f32>, #mma>
    }
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // The first load is one f16 broadcast over the A tile: not a 2-D load, nothing moves.
  // CHECK-LABEL: tt.func public @scalar_first_load
  tt.func public @scalar_first_load(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %k_tiles: i32) -> tensor<256x256xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<256x256xf32, #mma>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<64x256x!tt.ptr<f16>, #blocked1>
    // NOTE-DAG: upstream_nested_and_small.mlir:[[# @LINE + 1]]:5: note: not moved: Triton 3.6's sinkSecondLoad needs both loads to be 2-D tensors
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<256x256xf32, #mma>)  : i32 {
      // CHECK: %s = tt.load
      // CHECK-NEXT: %s_row = tt.splat
      // CHECK-NEXT: %a_tile = tt.broadcast
      // CHECK-NEXT: %b_next = tt.load
      // CHECK-NEXT: %a_k = ttg.convert_layout
      // CHECK-NEXT: %b_k = ttg.convert_layout
      // CHECK-NEXT: %d = tt.dot
      %s = tt.load %a : !tt.ptr<f16>
      %s_row = tt.splat %s : f16 -> tensor<1x64xf16, #blocked>
      %a_tile = tt.broadcast %s_row : tensor<1x64xf16, #blocked> -> tensor<256x64xf16, #blocked>
      %b_next = tt.load %b_ptrs : tensor<64x256x!tt.ptr<f16>, #blocked1>
      %a_k = ttg.convert_layout %a_tile : tensor<256x64xf16, #blocked> -> tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_k = ttg.convert_layout %b_next : tensor<64x256xf16, #blocked1> -> tensor<64x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_k, %b_k, %acc_k : tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x256xf32, #mma>
      scf.yield %d : tensor<256x256xf32, #mma>
    }
    tt.return %acc : tensor<256x256xf32, #mma>
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 8], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // The first load is a 256-element column broadcast along K: a 1-D load, nothing moves.
  // CHECK-LABEL: tt.func public @column_first_load
  tt.func public @column_first_load(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %k_tiles: i32) -> tensor<256x256xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<256x256xf32, #mma>
    %a_ptrs = tt.splat %a : !tt.ptr<f16> -> tensor<256x!tt.ptr<f16>, #ttg.slice<{dim = 1, parent = #blocked}>>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<64x256x!tt.ptr<f16>, #blocked1>
    // NOTE-DAG: upstream_nested_and_small.mlir:[[# @LINE + 1]]:5: note: not moved: Triton 3.6's sinkSecondLoad needs both loads to be 2-D tensors
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<256x256xf32, #mma>)  : i32 {
      // CHECK: %col = tt.load
      // CHECK-NEXT: %col2 = tt.expand_dims
      // CHECK-NEXT: %a_tile = tt.broadcast
      // CHECK-NEXT: %b_next = tt.load
      // CHECK-NEXT: %a_k = ttg.convert_layout
      // CHECK-NEXT: %b_k = ttg.convert_layout
      // CHECK-NEXT: %d = tt.dot
      %col = tt.load %a_ptrs : tensor<256x!tt.ptr<f16>, #ttg.slice<{dim = 1, parent = #blocked}>>
      %col2 = tt.expand_dims %col {axis = 1 : i32} : tensor<256xf16, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<256x1xf16, #blocked>
      %a_tile = tt.broadcast %col2 : tensor<256x1xf16, #blocked> -> tensor<256x64xf16, #blocked>
      %b_next = tt.load %b_ptrs : tensor<64x256x!tt.ptr<f16>, #blocked1>
      %a_k = ttg.convert_layout %a_tile : tensor<256x64xf16, #blocked> -> tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>
      %b_k = ttg.convert_layout %b_next : tensor<64x256xf16, #blocked1> -> tensor<64x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
      %d = tt.dot %a_k, %b_k, %acc_k : tensor<256x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x256xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<256x256xf32, #mma>
      scf.yield %d : tensor<256x256xf32, #mma>
    }
    tt.return %acc : tensor<256x256xf32, #mma>
  }
}
