// select=staged: IR whose loads lost the pipeliner's mark (buffer-op conversion drops it). A load
// outside loops whose value is stored into shared memory before a loop of its block is a prologue
// load; a load used otherwise is not.
// RUN: irlab pass move-up-prologue-loads %s --option select=staged | grep -v '^ *//' | filecheck %s
// RUN: irlab pass move-up-prologue-loads --explain %s --option select=staged 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: @staged
  // CHECK:      %x = tt.load %p
  // CHECK:      %buf = ttg.local_alloc
  // CHECK-NEXT: %y = tt.load %q
  tt.func public @staged(%p: tensor<128x64x!tt.ptr<f16>, #blocked>, %q: tensor<128x64x!tt.ptr<f16>, #blocked>, %n: i32) -> tensor<128x64xf16, #blocked> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %buf = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    // REMARK-NOT: %y = tt.load
    %y = tt.load %q : tensor<128x64x!tt.ptr<f16>, #blocked>
    // REMARK: staged.mlir:[[# @LINE + 1]]:5: remark: moved %x = tt.load (line [[# @LINE + 1]]) up to the start of its block
    %x = tt.load %p : tensor<128x64x!tt.ptr<f16>, #blocked>
    ttg.local_store %x, %buf : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    scf.for %k = %c0 to %n step %c1  : i32 {
    }
    tt.return %y : tensor<128x64xf16, #blocked>
  }
}
