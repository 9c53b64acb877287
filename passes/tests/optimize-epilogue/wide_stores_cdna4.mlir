// CDNA4 (MFMA version 4, transposed, f16/bf16): the accumulator is stored from the linear layout
// that gives a lane 8 consecutive columns (Triton 3.9's chooseMfmaLikeStoreLayout: column bits 2
// and 3 of the 32x32 layout exchanged, 2 and 4 of the 16x16 one), through an in-register
// convert_layout; elsewhere it is stored from the MFMA layout and the remark says why. The linear
// layout is a module alias (#linear), as Triton prints it. The store's address is built in the
// linear layout; with address=via-mma it is built in the MFMA layout and converted to the linear
// one (#mma -> #linear), as upstream's pass does (VIA).
// RUN: irlab pass optimize-epilogue --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass optimize-epilogue --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: irlab pass 'optimize-epilogue{store_layout=mma}' --split-input-file %s | grep -v '^ *//' | filecheck %s --check-prefix=MMA
// RUN: irlab pass 'optimize-epilogue{address=via-mma}' --split-input-file %s | grep -v '^ *//' | filecheck %s --check-prefix=VIA

// MMA-NOT: #ttg.linear
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 4], instrShape = [32, 32, 16], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx950", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK: [[LIN32:#linear[0-9]*]] = #ttg.linear<{register = {{\[}}[0, 1], [0, 2], [0, 4], [0, 16], [64, 0]], lane = {{\[}}[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 8]], warp = {{\[}}[0, 32], [0, 64], [32, 0]], block = []}>
  // CHECK-LABEL: tt.func public @mfma32
  tt.func public @mfma32(%c_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %acc = arith.constant dense<1.000000e+00> : tensor<128x128xf32, #mma>
    %acc16 = arith.truncf %acc : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
    %cols = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %cols2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<128xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x128xi32, #blocked>
    %offs = tt.broadcast %cols2 : tensor<1x128xi32, #blocked> -> tensor<128x128xi32, #blocked>
    %base = tt.splat %c_ptr : !tt.ptr<f16> -> tensor<128x128x!tt.ptr<f16>, #blocked>
    %ptrs = tt.addptr %base, %offs : tensor<128x128x!tt.ptr<f16>, #blocked>, tensor<128x128xi32, #blocked>
    %out = ttg.convert_layout %acc16 : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #blocked>
    // CHECK: tt.make_range {{.*}} : tensor<128xi32, #ttg.slice<{dim = 0, parent = [[LIN32]]}>>
    // CHECK-NOT: tensor<128x128x!tt.ptr<f16>, #mma>
    // CHECK: %[[X:.*]] = ttg.convert_layout %acc16 : tensor<128x128xf16, #mma> -> tensor<128x128xf16, [[LIN32]]>
    // CHECK-NEXT: tt.store %{{.*}}, %[[X]] : tensor<128x128x!tt.ptr<f16>, [[LIN32]]>
    // VIA: tt.make_range {{.*}} : tensor<128xi32, #ttg.slice<{dim = 0, parent = #mma}>>
    // VIA: %[[P:.*]] = ttg.convert_layout %{{.*}} : tensor<128x128x!tt.ptr<f16>, #mma> -> tensor<128x128x!tt.ptr<f16>, #linear>
    // VIA: %[[X:.*]] = ttg.convert_layout %acc16 : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #linear>
    // VIA-NEXT: tt.store %[[P]], %[[X]] : tensor<128x128x!tt.ptr<f16>, #linear>
    // MMA: tt.store %{{.*}}, %acc16 : tensor<128x128x!tt.ptr<f16>, #mma>
    // REMARK: wide_stores_cdna4.mlir:[[# @LINE + 1]]:5: remark: stores from #mma {{.*}} through an in-register exchange to Triton's wide-store linear layout (8 consecutive columns a lane) now
    tt.store %ptrs, %out : tensor<128x128x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 4, warpsPerCTA = [4, 1], instrShape = [16, 16, 32], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx950", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK: [[LIN16:#linear[0-9]*]] = #ttg.linear<{register = {{\[}}[0, 1], [0, 2], [0, 4], [0, 32]], lane = {{\[}}[1, 0], [2, 0], [4, 0], [8, 0], [0, 16], [0, 8]], warp = {{\[}}[16, 0], [32, 0]], block = []}>
  // CHECK-LABEL: tt.func public @mfma16
  tt.func public @mfma16(%c_ptr: !tt.ptr<bf16> {tt.divisibility = 16 : i32}) {
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %acc16 = arith.truncf %acc : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
    %ptrs = tt.splat %c_ptr : !tt.ptr<bf16> -> tensor<64x64x!tt.ptr<bf16>, #blocked>
    %out = ttg.convert_layout %acc16 : tensor<64x64xbf16, #mma> -> tensor<64x64xbf16, #blocked>
    // CHECK: tt.store %{{.*}}, %{{.*}} : tensor<64x64x!tt.ptr<bf16>, [[LIN16]]>
    tt.store %ptrs, %out : tensor<64x64x!tt.ptr<bf16>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [16, 16, 32], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx950", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @mfma16_two_warps_along_n
  tt.func public @mfma16_two_warps_along_n(%c_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf16, #mma>
    %ptrs = tt.splat %c_ptr : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %out = ttg.convert_layout %acc : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    // CHECK: tt.store %{{.*}}, %acc : tensor<64x64x!tt.ptr<f16>, #mma>
    // REMARK: remark: stores from #mma {{.*}} now: {{.*}}; no wide-store layout: a 16x16 MFMA needs at least 32 columns and one warp along N for the lane swap
    tt.store %ptrs, %out : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 4], instrShape = [32, 32, 16], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx950", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @f32_output
  tt.func public @f32_output(%c_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %acc = arith.constant dense<1.000000e+00> : tensor<128x128xf32, #mma>
    %ptrs = tt.splat %c_ptr : !tt.ptr<f32> -> tensor<128x128x!tt.ptr<f32>, #blocked>
    %out = ttg.convert_layout %acc : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #blocked>
    // CHECK: tt.store %{{.*}}, %acc : tensor<128x128x!tt.ptr<f32>, #mma>
    // REMARK: no wide-store layout: the stored element type is f32, not f16 or bf16
    tt.store %ptrs, %out : tensor<128x128x!tt.ptr<f32>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @cdna3
  tt.func public @cdna3(%c_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %acc = arith.constant dense<1.000000e+00> : tensor<128x128xf16, #mma>
    %ptrs = tt.splat %c_ptr : !tt.ptr<f16> -> tensor<128x128x!tt.ptr<f16>, #blocked>
    %out = ttg.convert_layout %acc : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #blocked>
    // CHECK: tt.store %{{.*}}, %acc : tensor<128x128x!tt.ptr<f16>, #mma>
    // REMARK: no wide-store layout: MFMA version 3 (CDNA4's version 4 has the permlane swap)
    tt.store %ptrs, %out : tensor<128x128x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 4], warpsPerCTA = [4, 1], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 4, warpsPerCTA = [4, 1], instrShape = [32, 32, 16], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx950", "ttg.threads-per-warp" = 64 : i32} {
  // The f32 accumulator is converted, then truncated: the wide layout is chosen for the stored
  // f16 value, and the exchange converts the truncated value (one remark, no second rewrite).
  // CHECK: [[LINT:#linear[0-9]*]] = #ttg.linear<{register = {{\[}}[0, 1], [0, 2], [0, 4], [0, 16], [0, 32], [0, 64]], lane = {{\[}}[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 8]], warp = {{\[}}[32, 0], [64, 0]], block = []}>
  // CHECK-LABEL: tt.func public @truncf_after_the_convert
  tt.func public @truncf_after_the_convert(%c_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %acc = arith.constant dense<1.000000e+00> : tensor<128x128xf32, #mma>
    %out = ttg.convert_layout %acc : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #blocked>
    // CHECK: %[[T:.*]] = arith.truncf %acc : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
    %t = arith.truncf %out : tensor<128x128xf32, #blocked> to tensor<128x128xf16, #blocked>
    %ptrs = tt.splat %c_ptr : !tt.ptr<f16> -> tensor<128x128x!tt.ptr<f16>, #blocked>
    // CHECK: ttg.convert_layout %[[T]] : tensor<128x128xf16, #mma> -> tensor<128x128xf16, [[LINT]]>
    // REMARK: wide_stores_cdna4.mlir:[[# @LINE + 2]]:5: remark: stores from #mma {{.*}} through an in-register exchange {{.*}}, and 1 elementwise op(s)
    // REMARK-NOT: no wide-store layout: the stored element type is f32
    tt.store %ptrs, %t : tensor<128x128x!tt.ptr<f16>, #blocked>
    tt.return
  }
}
