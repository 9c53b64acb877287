// Epilogues whose store names the blocked layout inside a type that is not a tensor: a block
// pointer (`!tt.ptr<tensor<..., #blocked>>`, from tt.make_tensor_ptr, stored with boundaryCheck).
// Moving the value chain to the MMA layout would leave the pointer's tensor type in the blocked
// layout and Triton's verifier would reject the store; the pass refuses at the store, and the IR
// comes back byte for byte. Block pointers exist in Triton 3.6 only (3.9 has no tt.make_tensor_ptr).
// REQUIRES: triton-3.6
// RUN: irlab pass optimize-epilogue --split-input-file %s | diff %s -
// RUN: irlab pass optimize-epilogue --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // The store's block pointer made right before it.
  tt.func public @make_tensor_ptr(%c: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %m: i64, %n: i64, %sm: i64) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %acc16 = arith.truncf %acc : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
    %out = ttg.convert_layout %acc16 : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    %p = tt.make_tensor_ptr %c, [%m, %n], [%sm, %c1], [%c0, %c0] {order = array<i32: 1, 0>} : <tensor<64x64xf16, #blocked>>
    // CHECK: block_pointers_refused.mlir:[[# @LINE + 1]]:5: note: refused: %p is a block pointer, !tt.ptr<tensor<64x64xf16, #blocked>> (tt.make_tensor_ptr; a store with boundaryCheck)
    tt.store %p, %out {boundaryCheck = array<i32: 0, 1>} : !tt.ptr<tensor<64x64xf16, #blocked>>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // A block pointer advanced by tt.advance after a loop over output tiles; the accumulator goes
  // through an elementwise op on its way to the store.
  tt.func public @advanced(%c: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %m: i64, %n: i64, %sm: i64, %row: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %out = ttg.convert_layout %acc : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    %out16 = arith.truncf %out : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    %p = tt.make_tensor_ptr %c, [%m, %n], [%sm, %c1], [%c0, %c0] {order = array<i32: 1, 0>} : <tensor<64x64xf16, #blocked>>
    %q = tt.advance %p, [%row, %c0] : <tensor<64x64xf16, #blocked>>
    // CHECK: block_pointers_refused.mlir:[[# @LINE + 1]]:5: note: refused: %q is a block pointer, !tt.ptr<tensor<64x64xf16, #blocked>>
    tt.store %q, %out16 {boundaryCheck = array<i32: 0>} : !tt.ptr<tensor<64x64xf16, #blocked>>
    tt.return
  }
}

// -----

!tile_ptr = !tt.ptr<tensor<64x64xf32, #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // A block pointer handed in as an argument, its type written through a type alias with the
  // layout inline: the layout is recognised by meaning, not by its alias name.
  tt.func public @argument(%p: !tile_ptr) {
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %out = ttg.convert_layout %acc : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    // CHECK: block_pointers_refused.mlir:[[# @LINE + 1]]:5: note: refused: %p is a block pointer
    tt.store %p, %out : !tile_ptr
    tt.return
  }
}
