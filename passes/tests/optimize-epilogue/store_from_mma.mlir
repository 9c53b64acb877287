// The accumulator is stored from its MMA layout: the convert_layout to #blocked goes, and the
// store's pointer and mask math is recomputed in #mma.
// RUN: irlab pass optimize-epilogue %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass optimize-epilogue %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @epilogue
  tt.func public @epilogue(%c_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %m: i32) {
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %acc16 = arith.truncf %acc : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
    %rows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %rows2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
    %cols = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %cols2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x64xi32, #blocked>
    %c64 = arith.constant dense<64> : tensor<64x1xi32, #blocked>
    %row_off = arith.muli %rows2, %c64 : tensor<64x1xi32, #blocked>
    %base = tt.splat %c_ptr : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>, #blocked>
    %row_ptr = tt.addptr %base, %row_off : tensor<64x1x!tt.ptr<f16>, #blocked>, tensor<64x1xi32, #blocked>
    %row_ptrs = tt.broadcast %row_ptr : tensor<64x1x!tt.ptr<f16>, #blocked> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %col_offs = tt.broadcast %cols2 : tensor<1x64xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %ptrs = tt.addptr %row_ptrs, %col_offs : tensor<64x64x!tt.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
    %m_splat = tt.splat %m : i32 -> tensor<64x1xi32, #blocked>
    %in_m = arith.cmpi slt, %rows2, %m_splat : tensor<64x1xi32, #blocked>
    %mask = tt.broadcast %in_m : tensor<64x1xi1, #blocked> -> tensor<64x64xi1, #blocked>
    // CHECK-NOT: ttg.convert_layout
    %out = ttg.convert_layout %acc16 : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    // REMARK: store_from_mma.mlir:[[# @LINE + 2]]:5: remark: stores from #mma {{.*}} now: removed %out = ttg.convert_layout
    // CHECK: tt.store %{{.*}}, %acc16, %{{.*}} : tensor<64x64x!tt.ptr<f16>, #mma>
    tt.store %ptrs, %out, %mask : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.return
  }
}
