// Redundant patterns are warnings: two register transposes that undo each other (the
// cancel-transposes pass removes them). A module without shared memory or transposes gets a note.
// RUN: irlab pass lds-transposes --split-input-file %s | diff %s -
// RUN: irlab pass lds-transposes --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @twice(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %ptrs = tt.splat %p : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>, #blocked>
    %x = tt.load %ptrs : tensor<32x64x!tt.ptr<f32>, #blocked>
    %t1 = tt.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    // CHECK: redundant.mlir:[[# @LINE + 1]]:5: warning: [cancelling-transposes] %t1 = tt.trans and %t2 = tt.trans cancel; the cancel-transposes pass removes such pairs
    %t2 = tt.trans %t1 {order = array<i32: 1, 0>} : tensor<64x32xf32, #blocked1> -> tensor<32x64xf32, #blocked>
    tt.store %ptrs, %t2 : tensor<32x64x!tt.ptr<f32>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @copy(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %ptrs = tt.splat %p : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #blocked>
    %x = tt.load %ptrs : tensor<512x!tt.ptr<f32>, #blocked>
    tt.store %ptrs, %x : tensor<512x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
// CHECK: note: no shared-memory trips and no transposes in this IR
