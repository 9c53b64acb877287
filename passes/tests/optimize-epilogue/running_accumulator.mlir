// A store inside the loop that carries the accumulator writes a running value, not an epilogue:
// refused by default, rewritten with allow_in_loop=true.
// RUN: irlab pass optimize-epilogue %s | diff %s -
// RUN: irlab pass optimize-epilogue %s --explain 2>&1 >/dev/null | filecheck %s --check-prefix=REFUSED
// RUN: irlab pass 'optimize-epilogue{allow_in_loop=true}' %s | grep -v '^ *//' | filecheck %s --check-prefix=ALLOWED

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @running(%c_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %one = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %ptrs = tt.splat %c_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %last = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      %next = arith.addf %acc, %one : tensor<64x64xf32, #mma>
      // ALLOWED-NOT: ttg.convert_layout
      %out = ttg.convert_layout %next : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
      // REFUSED: running_accumulator.mlir:[[# @LINE + 2]]:7: note: refused: the store writes a running accumulator of the loop it is in
      // ALLOWED: tt.store %{{.*}}, %next : tensor<64x64x!tt.ptr<f32>, #mma>
      tt.store %ptrs, %out : tensor<64x64x!tt.ptr<f32>, #blocked>
      scf.yield %next : tensor<64x64xf32, #mma>
    }
    tt.return
  }
}
