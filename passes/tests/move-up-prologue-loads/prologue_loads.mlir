// A pipelined GEMM's prologue as the stream pipeliner leaves it: the buffers allocated, then the
// first K tile's loads, each with its mask computed right before it. Both loads move above the
// allocations, with their masks, in their order; the pointers stay where they are computed. Loads
// are taken last to first (the second carries the shared %k_left up first, the first carries it
// further).
// RUN: irlab pass move-up-prologue-loads %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass move-up-prologue-loads --explain %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @prologue
  // CHECK:      %a_ptrs = tt.addptr
  // CHECK-NEXT: %k_left = arith.cmpi sgt
  // CHECK-NEXT: %a_mask = tt.splat %k_left
  // CHECK-NEXT: %a0 = tt.load %a_ptrs, %a_mask
  // CHECK-NEXT: %b_ptrs = tt.addptr
  // CHECK-NEXT: %b_mask = tt.splat %k_left
  // CHECK-NEXT: %b0 = tt.load %b_ptrs, %b_mask
  // CHECK-NEXT: %a_buf = ttg.local_alloc
  // CHECK-NEXT: %b_buf = ttg.local_alloc
  // CHECK-NEXT: %a_slot = ttg.memdesc_index
  // CHECK-NEXT: ttg.local_store %a0, %a_slot
  tt.func public @prologue(%a: tensor<128x64x!tt.ptr<f16>, #blocked>, %b: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_off: tensor<128x64xi32, #blocked>, %b_off: tensor<64x128xi32, #blocked1>, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a_ptrs = tt.addptr %a, %a_off : tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<128x64xi32, #blocked>
    %b_ptrs = tt.addptr %b, %b_off : tensor<64x128x!tt.ptr<f16>, #blocked1>, tensor<64x128xi32, #blocked1>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable>
    %b_buf = ttg.local_alloc : () -> !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable>
    %k_left = arith.cmpi sgt, %k_tiles, %c0 : i32
    %a_mask = tt.splat %k_left : i1 -> tensor<128x64xi1, #blocked>
    // REMARK-DAG: prologue_loads.mlir:[[# @LINE + 1]]:5: remark: moved %a0 = tt.load (line [[# @LINE + 1]]) up to right after %a_ptrs = tt.addptr (line [[# @LINE - 6]]), which computes its address, with 2 op(s) of its address and mask computation
    %a0 = tt.load %a_ptrs, %a_mask {amd.pipeliner_part = "prologue"} : tensor<128x64x!tt.ptr<f16>, #blocked>
    %b_mask = tt.splat %k_left : i1 -> tensor<64x128xi1, #blocked1>
    // REMARK-DAG: prologue_loads.mlir:[[# @LINE + 1]]:5: remark: moved %b0 = tt.load (line [[# @LINE + 1]]) up to right after %b_ptrs = tt.addptr (line [[# @LINE - 8]]), which computes its address, with 2 op(s) of its address and mask computation
    %b0 = tt.load %b_ptrs, %b_mask {amd.pipeliner_part = "prologue"} : tensor<64x128x!tt.ptr<f16>, #blocked1>
    %a_slot = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    ttg.local_store %a0, %a_slot : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %b_slot = ttg.memdesc_index %b_buf[%c0] : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    ttg.local_store %b0, %b_slot : tensor<64x128xf16, #blocked1> -> !ttg.memdesc<64x128xf16, #shared1, #smem, mutable>
    scf.for %k = %c0 to %k_tiles step %c1  : i32 {
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<1x128x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %b_buf : !ttg.memdesc<1x64x128xf16, #shared1, #smem, mutable>
    tt.return
  }
}
