// Own inputs in the shape of upstream's optimize-epilogue lit cases (not copies of them), with
// CHECK lines that must hold on the output of Triton's own pass (run through the installed wheel)
// and on irlab's with address=via-mma alike (tests/test_amd_lit_agreement.py).

// CHECK-LABEL: @truncf_mfma_v3
// CHECK-NOT: ttg.convert_layout %{{.*}} : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
// CHECK: tt.store %{{.*}}, %{{.*}} : tensor<64x64x!tt.ptr<f16>, #mma>
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 8], warpsPerCTA = [2, 2], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @truncf_mfma_v3(%out: !tt.ptr<f16>) {
    %acc = arith.constant dense<2.000000e+00> : tensor<64x64xf32, #mma>
    %cvt = ttg.convert_layout %acc : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    %half = arith.truncf %cvt : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    %ptrs = tt.splat %out : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.store %ptrs, %half : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

// CHECK-LABEL: @masked_exp_chain
// CHECK-NOT: ttg.convert_layout %{{.*}} : tensor<32x64xf32, #mma> -> tensor<32x64xf32, #blocked>
// CHECK: tt.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x64x!tt.ptr<f32>, #mma>
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 4], warpsPerCTA = [1, 1], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 2, warpsPerCTA = [1, 1], instrShape = [32, 32, 8], isTransposed = false}>
module attributes {"ttg.num-warps" = 1 : i32, "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @masked_exp_chain(%out: !tt.ptr<f32>, %mask: tensor<32x64xi1, #blocked>) {
    %acc = arith.constant dense<1.000000e+00> : tensor<32x64xf32, #mma>
    %cvt = ttg.convert_layout %acc : tensor<32x64xf32, #mma> -> tensor<32x64xf32, #blocked>
    %e = math.exp2 %cvt : tensor<32x64xf32, #blocked>
    %ptrs = tt.splat %out : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>, #blocked>
    tt.store %ptrs, %e, %mask : tensor<32x64x!tt.ptr<f32>, #blocked>
    tt.return
  }
}

// -----

// CDNA4, 32x32 transposed, bf16: stored from the wide-store linear layout, pointer converted from #mma.
// CHECK{LITERAL}: #linear = #ttg.linear<{register = [[0, 1], [0, 2], [0, 4], [0, 16], [0, 64], [64, 0]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 8]], warp = [[0, 32], [32, 0]], block = []}>
// CHECK-LABEL: @cdna4_bf16_wide
// CHECK-DAG: %[[PTR:.+]] = ttg.convert_layout %{{.*}} : tensor<128x128x!tt.ptr<bf16>, #mma> -> tensor<128x128x!tt.ptr<bf16>, #linear>
// CHECK-DAG: %[[VAL:.+]] = ttg.convert_layout %{{.*}} : tensor<128x128xbf16, #mma> -> tensor<128x128xbf16, #linear>
// CHECK: tt.store %[[PTR]], %[[VAL]] : tensor<128x128x!tt.ptr<bf16>, #linear>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [32, 32, 16], isTransposed = true}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @cdna4_bf16_wide(%out: !tt.ptr<bf16>) {
    %acc = arith.constant dense<3.000000e+00> : tensor<128x128xf32, #mma>
    %cvt = ttg.convert_layout %acc : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #blocked>
    %half = arith.truncf %cvt : tensor<128x128xf32, #blocked> to tensor<128x128xbf16, #blocked>
    %ptrs = tt.splat %out : !tt.ptr<bf16> -> tensor<128x128x!tt.ptr<bf16>, #blocked>
    tt.store %ptrs, %half : tensor<128x128x!tt.ptr<bf16>, #blocked>
    tt.return
  }
}

// -----

// CDNA4, 16x16 with one warp along N: the 16x16 wide-store layout (column bits 2 and 4 exchanged).
// CHECK-LABEL: @cdna4_mfma16_wide
// CHECK: %[[PTR:.+]] = ttg.convert_layout %{{.*}} : tensor<64x64x!tt.ptr<f16>, #mma> -> tensor<64x64x!tt.ptr<f16>, #linear>
// CHECK: tt.store %[[PTR]], %{{.*}} : tensor<64x64x!tt.ptr<f16>, #linear>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 4, warpsPerCTA = [4, 1], instrShape = [16, 16, 32], isTransposed = true}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @cdna4_mfma16_wide(%out: !tt.ptr<f16>) {
    %acc = arith.constant dense<3.000000e+00> : tensor<64x64xf16, #mma>
    %cvt = ttg.convert_layout %acc : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    %ptrs = tt.splat %out : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.store %ptrs, %cvt : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

// CDNA4, 16x16 with two warps along N: no wide-store layout, stored from #mma.
// CHECK-LABEL: @cdna4_mfma16_two_warps_along_n
// CHECK-NOT: #linear
// CHECK: tt.store %{{.*}}, %{{.*}} : tensor<64x64x!tt.ptr<f16>, #mma>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [16, 16, 32], isTransposed = true}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @cdna4_mfma16_two_warps_along_n(%out: !tt.ptr<f16>) {
    %acc = arith.constant dense<3.000000e+00> : tensor<64x64xf16, #mma>
    %cvt = ttg.convert_layout %acc : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    %ptrs = tt.splat %out : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.store %ptrs, %cvt : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.return
  }
}
