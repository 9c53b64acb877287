// The analysis names each trip through shared memory and classifies each transpose; it changes
// nothing. The remarks come grouped (trips, converts, transposes), hence CHECK-DAG. Without
// Triton's allocation (ask_triton=false) a convert's way is left undecided.
// RUN: irlab pass lds-transposes %s | diff %s -
// RUN: irlab pass lds-transposes %s 2>&1 >/dev/null | filecheck %s
// RUN: irlab pass 'lds-transposes{ask_triton=false}' %s 2>&1 >/dev/null | filecheck %s --check-prefix=UNDECIDED

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @trips(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %ptrs = tt.splat %p : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>, #blocked>
    %qptrs = tt.splat %q : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>, #blocked1>
    %x = tt.load %ptrs : tensor<32x64x!tt.ptr<f32>, #blocked>
    // CHECK-DAG: round_trip.mlir:[[# @LINE + 1]]:5: remark: [lds-staging] trip #1: global data staged in LDS (pipelined load) and read into registers: %s = ttg.local_alloc -> [%st = ttg.memdesc_trans] -> %y = ttg.local_load
    %s = ttg.local_alloc %x : (tensor<32x64xf32, #blocked>) -> !ttg.memdesc<32x64xf32, #shared, #smem>
    // CHECK-DAG: round_trip.mlir:[[# @LINE + 1]]:5: remark: [transpose] %st = ttg.memdesc_trans order [1, 0]: free view -- permutes shared-memory offsets, no data moves
    %st = ttg.memdesc_trans %s {order = array<i32: 1, 0>} : !ttg.memdesc<32x64xf32, #shared, #smem> -> !ttg.memdesc<64x32xf32, #shared1, #smem>
    %y = ttg.local_load %st : !ttg.memdesc<64x32xf32, #shared1, #smem> -> tensor<64x32xf32, #blocked1>
    tt.store %qptrs, %y : tensor<64x32x!tt.ptr<f32>, #blocked1>
    // CHECK-DAG: round_trip.mlir:[[# @LINE + 1]]:5: remark: [transpose] %r = tt.trans order [1, 0]: free view -- on registers: lowers to nothing
    %r = tt.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    tt.store %qptrs, %r : tensor<64x32x!tt.ptr<f32>, #blocked1>
    %acc = arith.constant dense<1.000000e+00> : tensor<32x64xf32, #mma>
    // CHECK-DAG: round_trip.mlir:[[# @LINE + 2]]:5: remark: [convert-through-lds] %out = ttg.convert_layout #mma -> #blocked: through LDS scratch (Triton allocated it shared memory)
    // UNDECIDED: round_trip.mlir:[[# @LINE + 1]]:5: remark: [convert-undecided] %out = ttg.convert_layout #mma -> #blocked: undecided (Triton was not asked)
    %out = ttg.convert_layout %acc : tensor<32x64xf32, #mma> -> tensor<32x64xf32, #blocked>
    tt.store %ptrs, %out : tensor<32x64x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
