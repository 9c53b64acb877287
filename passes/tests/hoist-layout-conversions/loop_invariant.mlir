// A dot operand converted in every iteration from a tensor computed before the loop: the
// conversion moves right after the op computing it (out of both loops when they nest). Left in
// place: a source computed in the loop, a source that is a block argument, and conversions to
// layouts that are not dot operands.
// RUN: irlab pass hoist-layout-conversions --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass hoist-layout-conversions --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=NOTE

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#a_op = #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>
#b_op = #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: @attention_like
  // CHECK:      %q16 = arith.truncf %q
  // CHECK-NEXT: %q_op = ttg.convert_layout %q16
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: %d = tt.dot %q_op
  tt.func public @attention_like(%q: tensor<64x64xf32, #blocked>, %k: tensor<64x64xf16, #b_op>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %q16 = arith.truncf %q : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc2 = %acc) -> (tensor<64x64xf32, #mma>)  : i32 {
        // NOTE: loop_invariant.mlir:[[# @LINE + 1]]:9: remark: hoisted %q_op = ttg.convert_layout (line [[# @LINE + 1]]) out of 2 loops (%s = scf.for (line [[# @LINE - 1]]) and its enclosing ones) to right after %q16 = arith.truncf (line [[# @LINE - 3]]): the dot operand is converted once
        %q_op = ttg.convert_layout %q16 : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #a_op>
        %d = tt.dot %q_op, %k, %acc2 : tensor<64x64xf16, #a_op> * tensor<64x64xf16, #b_op> -> tensor<64x64xf32, #mma>
        scf.yield %d : tensor<64x64xf32, #mma>
      }
      scf.yield %s : tensor<64x64xf32, #mma>
    }
    tt.return %r : tensor<64x64xf32, #mma>
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#a_op = #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>
#b_op = #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: @stays
  // CHECK:      scf.for
  // CHECK-NEXT: %x16 = arith.truncf
  // CHECK-NEXT: %x_op = ttg.convert_layout %x16
  // CHECK-NEXT: %y_op = ttg.convert_layout %y
  // CHECK-NEXT: %z = ttg.convert_layout %w
  tt.func public @stays(%x: tensor<64x64xf32, #blocked>, %y: tensor<64x64xf16, #blocked>, %w: tensor<64x64xf32, #mma>, %k: tensor<64x64xf16, #b_op>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      %x16 = arith.truncf %x : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
      // NOTE: loop_invariant.mlir:[[# @LINE + 1]]:7: note: not hoisted: its source is computed in the loop, by %x16 = arith.truncf (line [[# @LINE - 1]])
      %x_op = ttg.convert_layout %x16 : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #a_op>
      // NOTE: loop_invariant.mlir:[[# @LINE + 1]]:7: note: not hoisted: its source %y is a block argument (no op to move after)
      %y_op = ttg.convert_layout %y : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #a_op>
      // NOTE-NOT: line [[# @LINE + 1]]
      %z = ttg.convert_layout %w : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
      %d = tt.dot %x_op, %k, %acc : tensor<64x64xf16, #a_op> * tensor<64x64xf16, #b_op> -> tensor<64x64xf32, #mma>
      %e = tt.dot %y_op, %k, %d : tensor<64x64xf16, #a_op> * tensor<64x64xf16, #b_op> -> tensor<64x64xf32, #mma>
      %z2 = ttg.convert_layout %z : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #mma>
      %f = arith.addf %e, %z2 : tensor<64x64xf32, #mma>
      scf.yield %f : tensor<64x64xf32, #mma>
    }
    tt.return %r : tensor<64x64xf32, #mma>
  }
}
