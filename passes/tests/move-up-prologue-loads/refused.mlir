// Prologue loads that stay, each with the op or the reason that keeps it, and one that moves only
// as far as a store: the loads never cross a barrier, an atomic, a global store, a call, a
// scheduling pin or a loop, and a load whose address comes from another load stays.
// RUN: irlab pass move-up-prologue-loads --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass move-up-prologue-loads --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=NOTE

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: @volatile_load
  // CHECK: ttg.local_alloc
  // CHECK-NEXT: %x = tt.load
  tt.func public @volatile_load(%p: tensor<128x64x!tt.ptr<f16>, #blocked>) {
    %buf = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    // NOTE: refused.mlir:[[# @LINE + 1]]:5: note: not moved: %x = tt.load (line [[# @LINE + 1]]) is volatile
    %x = tt.load %p {amd.pipeliner_part = "prologue", isVolatile = true} : tensor<128x64x!tt.ptr<f16>, #blocked>
    ttg.local_store %x, %buf : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // The offsets come from a load (a pointer chase): only pure address math moves with a load.
  // CHECK-LABEL: @offsets_from_a_load
  // CHECK: ttg.local_alloc
  // CHECK-NEXT: %off = tt.load
  // CHECK-NEXT: %q = tt.addptr
  // CHECK-NEXT: %x = tt.load %q
  tt.func public @offsets_from_a_load(%p: tensor<128x64x!tt.ptr<f16>, #blocked>, %offp: tensor<128x64x!tt.ptr<i32>, #blocked>) {
    %buf = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %off = tt.load %offp : tensor<128x64x!tt.ptr<i32>, #blocked>
    %q = tt.addptr %p, %off : tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<128x64xi32, #blocked>
    // NOTE: refused.mlir:[[# @LINE + 1]]:5: note: nothing to do: %x = tt.load (line [[# @LINE + 1]]) already sits right after %q = tt.addptr (line [[# @LINE - 1]]), which computes its address
    %x = tt.load %q {amd.pipeliner_part = "prologue"} : tensor<128x64x!tt.ptr<f16>, #blocked>
    ttg.local_store %x, %buf : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // The mask is computed from a value another load brought in: that load has effects and stays,
  // and so does this one.
  // CHECK-LABEL: @mask_from_a_load
  // CHECK: ttg.local_alloc
  // CHECK-NEXT: %n = tt.load
  // CHECK-NEXT: %live = arith.cmpi
  // CHECK-NEXT: %m = tt.splat
  // CHECK-NEXT: %x = tt.load
  tt.func public @mask_from_a_load(%p: tensor<128x64x!tt.ptr<f16>, #blocked>, %np: !tt.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %buf = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %n = tt.load %np : !tt.ptr<i32>
    %live = arith.cmpi sgt, %n, %c0 : i32
    %m = tt.splat %live : i1 -> tensor<128x64xi1, #blocked>
    // NOTE: refused.mlir:[[# @LINE + 1]]:5: note: not moved: %x = tt.load (line [[# @LINE + 1]]) uses a value of %n = tt.load (line [[# @LINE - 3]]), which reads global memory (only pure address and mask computation moves with a load)
    %x = tt.load %p, %m {amd.pipeliner_part = "prologue"} : tensor<128x64x!tt.ptr<f16>, #blocked>
    ttg.local_store %x, %buf : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // A store to global memory and a scheduling op (s_setprio) stop the load; the allocation after
  // them does not.
  // CHECK-LABEL: @stops
  // CHECK: tt.store
  // CHECK-NEXT: rocdl.s.setprio
  // CHECK-NEXT: %x = tt.load
  // CHECK-NEXT: ttg.local_alloc
  tt.func public @stops(%p: tensor<128x64x!tt.ptr<f16>, #blocked>, %v: tensor<128x64xf16, #blocked>) {
    tt.store %p, %v : tensor<128x64x!tt.ptr<f16>, #blocked>
    rocdl.s.setprio 1
    %buf = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    // NOTE: refused.mlir:[[# @LINE + 1]]:5: remark: moved %x = tt.load (line [[# @LINE + 1]]) up to right after rocdl.s.setprio (line [[# @LINE - 2]]), which pins the instruction schedule
    %x = tt.load %p {amd.pipeliner_part = "prologue"} : tensor<128x64x!tt.ptr<f16>, #blocked>
    ttg.local_store %x, %buf : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // Without the pipeliner's mark nothing is a prologue load (select=staged would look further).
  // NOTE: refused.mlir:[[# @LINE + 1]]:3: note: no candidate: no global load in this function carries amd.pipeliner_part
  tt.func public @unmarked(%p: tensor<128x64x!tt.ptr<f16>, #blocked>) -> tensor<128x64xf16, #blocked> {
    %x = tt.load %p : tensor<128x64x!tt.ptr<f16>, #blocked>
    tt.return %x : tensor<128x64xf16, #blocked>
  }
}
