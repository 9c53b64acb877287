// The TTGIR a gfx942 compile ends with loads through AMD buffer ops (amdg.buffer_load: a base
// pointer and a tensor of offsets). Upstream's pass runs before Triton converts tt.load to them and
// looks at tt.load only; irlab's also widens a buffer load, its offsets, mask and other converted to
// the widened layout like a pointer, so that `irlab pass in-thread-transpose` acts on a compiled
// kernel's TTGIR too (there it compiles to the same LDS accesses, VGPRs and instruction count as
// Triton's own pass: tests/test_pass_in_thread_transpose.py).
// Triton 3.9 writes buffer ops with a contiguity hint and `!tt.ptr<f16> -> tensor<...>`; 3.6 without.
// REQUIRES: triton-3.9
// RUN: irlab pass in-thread-transpose %s | grep -v '^ *//' | filecheck %s

// CHECK-DAG: [[TILE:#blocked[0-9]+]] = #ttg.blocked<{sizePerThread = [2, 8], threadsPerWarp = [4, 16], warpsPerCTA = [8, 1], order = [1, 0]}>
// CHECK-DAG: [[LDS:#shared[0-9]+]] = #ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 16, order = [0, 1]}>
// CHECK-LABEL: tt.func public @buffer_load_operand
// CHECK-DAG: %[[OFFS:.*]] = ttg.convert_layout %offs : tensor<64x128xi32, #blocked> -> tensor<64x128xi32, [[TILE]]>
// CHECK-DAG: %[[MASK:.*]] = ttg.convert_layout %mask : tensor<64x128xi1, #blocked> -> tensor<64x128xi1, [[TILE]]>
// CHECK: %[[B:.*]] = amdg.buffer_load %b_ptr[%[[OFFS]]], %[[MASK]] stride = %stride {contiguity = 8 : i32} : !tt.ptr<f16> -> tensor<64x128xf16, [[TILE]]>
// CHECK: amdg.in_thread_transpose %{{.*}} : tensor<64x128xf16, [[TILE]]> -> tensor<64x128xf16, #linear{{[0-9]*}}>
// CHECK-NEXT: ttg.local_alloc %{{.*}} -> !ttg.memdesc<64x128xf16, [[LDS]], #smem>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [8, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @buffer_load_operand(%a: tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>>, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %offs: tensor<64x128xi32, #blocked>, %mask: tensor<64x128xi1, #blocked>, %stride: i32) {
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %b = amdg.buffer_load %b_ptr[%offs], %mask stride = %stride {contiguity = 8 : i32} : !tt.ptr<f16> -> tensor<64x128xf16, #blocked>
    %b_lds = ttg.local_alloc %b : (tensor<64x128xf16, #blocked>) -> !ttg.memdesc<64x128xf16, #shared, #smem>
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x128xf16, #shared, #smem> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>
    %c = tt.dot %a, %b_op, %zero : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>> -> tensor<128x128xf32, #mma>
    tt.return
  }
}
