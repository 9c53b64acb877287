// Raising the wait depth could race (refused); setting the depth the loop already has changes
// nothing. The IR is unchanged byte for byte either way.
// RUN: irlab pass 'wgmma-wait-pendings{pendings=2}' %s | diff %s -
// RUN: irlab pass 'wgmma-wait-pendings{pendings=2}' %s --explain 2>&1 >/dev/null | filecheck %s --check-prefix=RAISE
// RUN: irlab pass 'wgmma-wait-pendings{pendings=1}' %s | diff %s -
// RUN: irlab pass 'wgmma-wait-pendings{pendings=1}' %s --explain 2>&1 >/dev/null | filecheck %s --check-prefix=SAME

#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @wgmma_loop(%c: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %b = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      %d = ttng.warp_group_dot %a, %b, %acc_k {inputPrecision = 0 : i32, isAsync = true} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf32, #mma>
      // RAISE: refused.mlir:[[# @LINE + 2]]:7: note: refused: raising pendings 1 -> 2 would let the next copies overwrite a tile a wgmma may still read
      // SAME: refused.mlir:[[# @LINE + 1]]:7: note: %w{{.*}} = ttng.warp_group_dot_wait (line [[# @LINE + 1]]) already has pendings = 1
      %w:3 = ttng.warp_group_dot_wait %d, %a, %b {pendings = 1 : i32} : tensor<64x64xf32, #mma>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      scf.yield %w#0 : tensor<64x64xf32, #mma>
    }
    %last = ttng.warp_group_dot_wait %acc {pendings = 0 : i32} : tensor<64x64xf32, #mma>
    %ptrs = tt.splat %c : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #mma>
    tt.store %ptrs, %last : tensor<64x64x!tt.ptr<f32>, #mma>
    tt.return
  }
}
