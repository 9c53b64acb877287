// A GEMM epilogue's accumulator conversion sits above the frees of the loop's buffers: it moves
// below the last free before its first user, so its scratch can reuse their shared memory. A
// conversion whose user comes before the frees, and one that would have to cross a scheduling op,
// stay.
// RUN: irlab pass sink-layout-conversions --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass sink-layout-conversions --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=NOTE

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: @epilogue
  // CHECK:      ttg.local_dealloc %a_buf
  // CHECK-NEXT: ttg.local_dealloc %b_buf
  // CHECK-NEXT: %acc = ttg.convert_layout %d
  // CHECK-NEXT: %out = arith.truncf %acc
  tt.func public @epilogue(%d: tensor<128x128xf32, #mma>, %c: tensor<128x128x!tt.ptr<f16>, #blocked>) {
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>
    // NOTE: epilogue.mlir:[[# @LINE + 1]]:5: remark: sank %acc = ttg.convert_layout (line [[# @LINE + 1]]) below ttg.local_dealloc (line [[# @LINE + 3]]) (2 ttg.local_dealloc crossed)
    %acc = ttg.convert_layout %d : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #blocked>
    ttg.local_dealloc %a_buf : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>
    %out = arith.truncf %acc : tensor<128x128xf32, #blocked> to tensor<128x128xf16, #blocked>
    tt.store %c, %out : tensor<128x128x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // The first user comes before the second free: the conversion goes below the first free only.
  // CHECK-LABEL: @user_between
  // CHECK:      ttg.local_dealloc %a_buf
  // CHECK-NEXT: %acc = ttg.convert_layout %d
  // CHECK-NEXT: %out = arith.truncf %acc
  // CHECK-NEXT: ttg.local_dealloc %b_buf
  tt.func public @user_between(%d: tensor<128x128xf32, #mma>, %c: tensor<128x128x!tt.ptr<f16>, #blocked>) {
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>
    %acc = ttg.convert_layout %d : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #blocked>
    ttg.local_dealloc %a_buf : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    %out = arith.truncf %acc : tensor<128x128xf32, #blocked> to tensor<128x128xf16, #blocked>
    ttg.local_dealloc %b_buf : !ttg.memdesc<2x64x128xf16, #shared, #smem, mutable>
    tt.store %c, %out : tensor<128x128x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // A scheduling op between the conversion and the free: the conversion stays above it.
  // CHECK-LABEL: @pinned
  // CHECK:      %acc = ttg.convert_layout %d
  // CHECK-NEXT: rocdl.s.setprio
  // CHECK-NEXT: ttg.local_dealloc %a_buf
  tt.func public @pinned(%d: tensor<128x128xf32, #mma>, %c: tensor<128x128x!tt.ptr<f32>, #blocked>) {
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    // NOTE: epilogue.mlir:[[# @LINE + 1]]:5: note: not moved: %acc = ttg.convert_layout (line [[# @LINE + 1]]) (pure) would cross rocdl.s.setprio (line [[# @LINE + 2]]), which pins the instruction schedule
    %acc = ttg.convert_layout %d : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #blocked>
    rocdl.s.setprio 1
    ttg.local_dealloc %a_buf : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    tt.store %c, %acc : tensor<128x128x!tt.ptr<f32>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: @no_frees
  tt.func public @no_frees(%d: tensor<128x128xf32, #mma>, %c: tensor<128x128x!tt.ptr<f32>, #blocked>) {
    // NOTE: epilogue.mlir:[[# @LINE + 1]]:5: note: nothing to do: no ttg.local_dealloc between it and its first user tt.store (line [[# @LINE + 2]])
    %acc = ttg.convert_layout %d : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #blocked>
    tt.store %c, %acc : tensor<128x128x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
