// A prologue where one operand goes to shared memory by async copy (gfx950's direct-to-LDS
// loads) and the other through registers (int4_gemm's packed weights on gfx950): the marked
// register load moves above the other operand's async copy and its ttg.async_commit_group. Both
// only read global memory; the copy writes shared memory, which the load does not touch; the
// commit group closes the group of async copies issued before it, and a load into registers joins
// no group (irlab.ir.effects.separate_memories). In the second function a ttg.async_wait stands
// between them: irlab counts it as synchronizing and does not cross it (Triton 3.9's pass, which
// stops only at barriers, atomics and loops, moves the load above it).
// RUN: irlab pass move-up-prologue-loads %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass move-up-prologue-loads --explain %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx950", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @async_copy_prologue
  // CHECK:      %b_ptrs = tt.addptr
  // CHECK-NEXT: %k_left = arith.cmpi sgt
  // CHECK-NEXT: %b_mask = tt.splat %k_left
  // CHECK-NEXT: %b0 = tt.load %b_ptrs, %b_mask
  // CHECK-NEXT: %a_buf = ttg.local_alloc
  // CHECK-NEXT: %a_slot = ttg.memdesc_index
  // CHECK-NEXT: %a_mask = tt.splat %k_left
  // CHECK-NEXT: %a_copy = ttg.async_copy_global_to_local %a_ptrs, %a_slot mask %a_mask
  // CHECK-NEXT: %a_group = ttg.async_commit_group
  // CHECK-NEXT: scf.for
  tt.func public @async_copy_prologue(%a: tensor<128x64x!tt.ptr<f16>, #blocked>, %b: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_off: tensor<128x64xi32, #blocked>, %b_off: tensor<64x128xi32, #blocked1>, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a_ptrs = tt.addptr %a, %a_off : tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<128x64xi32, #blocked>
    %b_ptrs = tt.addptr %b, %b_off : tensor<64x128x!tt.ptr<f16>, #blocked1>, tensor<64x128xi32, #blocked1>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    %k_left = arith.cmpi sgt, %k_tiles, %c0 : i32
    %a_slot = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %a_mask = tt.splat %k_left : i1 -> tensor<128x64xi1, #blocked>
    %a_copy = ttg.async_copy_global_to_local %a_ptrs, %a_slot mask %a_mask : tensor<128x64x!tt.ptr<f16>, #blocked> -> <128x64xf16, #shared, #smem, mutable>
    %a_group = ttg.async_commit_group tokens %a_copy
    %b_mask = tt.splat %k_left : i1 -> tensor<64x128xi1, #blocked1>
    // REMARK-DAG: async_copies.mlir:[[# @LINE + 1]]:5: remark: moved %b0 = tt.load (line [[# @LINE + 1]]) up to right after %b_ptrs = tt.addptr (line [[# @LINE - 8]]), which computes its address, with 2 op(s) of its address and mask computation
    %b0 = tt.load %b_ptrs, %b_mask {amd.pipeliner_part = "prologue"} : tensor<64x128x!tt.ptr<f16>, #blocked1>
    scf.for %k = %c0 to %k_tiles step %c1  : i32 {
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    tt.return
  }

  // CHECK-LABEL: tt.func public @stops_at_async_wait
  // CHECK:      %a_group = ttg.async_commit_group
  // CHECK-NEXT: %a_ready = ttg.async_wait %a_group
  // CHECK-NEXT: %b_mask = tt.splat %k_left
  // CHECK-NEXT: %b0 = tt.load %b_ptrs, %b_mask
  tt.func public @stops_at_async_wait(%a: tensor<128x64x!tt.ptr<f16>, #blocked>, %b: tensor<64x128x!tt.ptr<f16>, #blocked1>, %a_off: tensor<128x64xi32, #blocked>, %b_off: tensor<64x128xi32, #blocked1>, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a_ptrs = tt.addptr %a, %a_off : tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<128x64xi32, #blocked>
    %b_ptrs = tt.addptr %b, %b_off : tensor<64x128x!tt.ptr<f16>, #blocked1>, tensor<64x128xi32, #blocked1>
    %a_buf = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    %k_left = arith.cmpi sgt, %k_tiles, %c0 : i32
    %a_slot = ttg.memdesc_index %a_buf[%c0] : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %a_mask = tt.splat %k_left : i1 -> tensor<128x64xi1, #blocked>
    %a_copy = ttg.async_copy_global_to_local %a_ptrs, %a_slot mask %a_mask : tensor<128x64x!tt.ptr<f16>, #blocked> -> <128x64xf16, #shared, #smem, mutable>
    %a_group = ttg.async_commit_group tokens %a_copy
    %a_ready = ttg.async_wait %a_group {num = 0 : i32}
    %b_mask = tt.splat %k_left : i1 -> tensor<64x128xi1, #blocked1>
    // REMARK-DAG: async_copies.mlir:[[# @LINE + 1]]:5: note: nothing to do: %b0 = tt.load (line [[# @LINE + 1]]) already sits right after %a_ready = ttg.async_wait (line [[# @LINE - 2]]), which synchronizes
    %b0 = tt.load %b_ptrs, %b_mask {amd.pipeliner_part = "prologue"} : tensor<64x128x!tt.ptr<f16>, #blocked1>
    scf.for %k = %c0 to %k_tiles step %c1  : i32 {
    }
    ttg.local_dealloc %a_buf : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    tt.return
  }
}
