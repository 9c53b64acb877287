// A WMMA (RDNA3, wave32) operand B loaded N-fastest: rewritten as for MFMA, with WMMA's swizzle for
// the rotating layout (vec capped at 128 bits: 8 f16; 32 banks; the 16-row instruction). The WMMA
// layout's syntax differs between Triton versions (ctaLayout in 3.9), hence one file per version.
// REQUIRES: triton-3.9
// RUN: irlab pass in-thread-transpose %s | grep -v '^ *//' | filecheck %s
// CHECK-DAG: [[TILE:#blocked[0-9]+]] = #ttg.blocked<{sizePerThread = [4, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: [[LDS:#shared[0-9]+]] = #ttg.amd_rotating_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
// CHECK-LABEL: tt.func public @wmma_operand
// CHECK: tt.load %{{.*}} : tensor<64x64x!tt.ptr<f16>, [[TILE]]>
// CHECK: amdg.in_thread_transpose %{{.*}} : tensor<64x64xf16, [[TILE]]> -> tensor<64x64xf16, #linear>
// CHECK-NEXT: ttg.local_alloc %{{.*}} : (tensor<64x64xf16, #linear>) -> !ttg.memdesc<64x64xf16, [[LDS]], #smem>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_wmma<{version = 1, isTranspose = true, ctaLayout = {warp = [[0, 1], [1, 0]]}}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx1100", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @wmma_operand(%a: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 16}>>, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %b_ptrs = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %b = tt.load %b_ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
    %b_lds = ttg.local_alloc %b : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    %b_op = ttg.local_load %b_lds : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 16}>>
    %c = tt.dot %a, %b_op, %zero : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 16}>> * tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 16}>> -> tensor<64x64xf32, #mma>
    tt.return
  }
}
