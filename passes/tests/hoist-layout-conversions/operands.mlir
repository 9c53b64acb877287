// More loop-invariant dot operands, one module each: both operands of one dot; an operand loaded
// before the loop (the conversion, pure, moves right after the load); one conversion feeding two
// dots; the B operand of a K loop that also converts a loop-carried value (which stays).
// RUN: irlab pass hoist-layout-conversions --split-input-file %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass hoist-layout-conversions --explain --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=NOTE

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#a_op = #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>
#b_op = #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: @both_operands
  // CHECK:      %a16 = arith.truncf %a
  // CHECK-NEXT: %a_op = ttg.convert_layout %a16
  // CHECK-NEXT: %b16 = arith.truncf %b
  // CHECK-NEXT: %b_op = ttg.convert_layout %b16
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: %d = tt.dot %a_op, %b_op
  tt.func public @both_operands(%a: tensor<64x64xf32, #blocked>, %b: tensor<64x64xf32, #blocked>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %a16 = arith.truncf %a : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    %b16 = arith.truncf %b : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      // NOTE-DAG: operands.mlir:[[# @LINE + 1]]:7: remark: hoisted %a_op = ttg.convert_layout (line [[# @LINE + 1]]) out of %r = scf.for (line [[# @LINE - 1]]) to right after %a16 = arith.truncf (line [[# @LINE - 3]]): the dot operand is converted once
      %a_op = ttg.convert_layout %a16 : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #a_op>
      // NOTE-DAG: operands.mlir:[[# @LINE + 1]]:7: remark: hoisted %b_op = ttg.convert_layout (line [[# @LINE + 1]]) out of %r = scf.for (line [[# @LINE - 3]]) to right after %b16 = arith.truncf (line [[# @LINE - 4]]): the dot operand is converted once
      %b_op = ttg.convert_layout %b16 : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #b_op>
      %d = tt.dot %a_op, %b_op, %acc : tensor<64x64xf16, #a_op> * tensor<64x64xf16, #b_op> -> tensor<64x64xf32, #mma>
      scf.yield %d : tensor<64x64xf32, #mma>
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
  // CHECK-LABEL: @loaded_before_the_loop
  // CHECK:      %q = tt.load %ptrs
  // CHECK-NEXT: %q_op = ttg.convert_layout %q
  // CHECK-NEXT: tt.store
  // CHECK-NEXT: scf.for
  tt.func public @loaded_before_the_loop(%ptrs: tensor<64x64x!tt.ptr<f16>, #blocked>, %out: tensor<64x64x!tt.ptr<f16>, #blocked>, %v: tensor<64x64xf16, #blocked>, %k: tensor<64x64xf16, #b_op>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %q = tt.load %ptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.store %out, %v : tensor<64x64x!tt.ptr<f16>, #blocked>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      // NOTE: operands.mlir:[[# @LINE + 1]]:7: remark: hoisted %q_op = ttg.convert_layout (line [[# @LINE + 1]]) out of %r = scf.for (line [[# @LINE - 1]]) to right after %q = tt.load (line [[# @LINE - 3]]): the dot operand is converted once
      %q_op = ttg.convert_layout %q : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #a_op>
      %d = tt.dot %q_op, %k, %acc : tensor<64x64xf16, #a_op> * tensor<64x64xf16, #b_op> -> tensor<64x64xf32, #mma>
      scf.yield %d : tensor<64x64xf32, #mma>
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
  // CHECK-LABEL: @two_dots
  // CHECK:      %q16 = arith.truncf
  // CHECK-NEXT: %q_op = ttg.convert_layout %q16
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: %d1 = tt.dot %q_op, %k1
  // CHECK-NEXT: %d2 = tt.dot %q_op, %k2
  tt.func public @two_dots(%q: tensor<64x64xf32, #blocked>, %k1: tensor<64x64xf16, #b_op>, %k2: tensor<64x64xf16, #b_op>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %q16 = arith.truncf %q : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>)  : i32 {
      // NOTE: operands.mlir:[[# @LINE + 1]]:7: remark: hoisted %q_op = ttg.convert_layout (line [[# @LINE + 1]]) out of %r = scf.for (line [[# @LINE - 1]]) to right after %q16 = arith.truncf (line [[# @LINE - 2]]): the dot operand is converted once
      %q_op = ttg.convert_layout %q16 : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #a_op>
      %d1 = tt.dot %q_op, %k1, %acc : tensor<64x64xf16, #a_op> * tensor<64x64xf16, #b_op> -> tensor<64x64xf32, #mma>
      %d2 = tt.dot %q_op, %k2, %d1 : tensor<64x64xf16, #a_op> * tensor<64x64xf16, #b_op> -> tensor<64x64xf32, #mma>
      scf.yield %d2 : tensor<64x64xf32, #mma>
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
  // CHECK-LABEL: @b_operand_beside_a_carried_one
  // CHECK:      %w16 = arith.truncf %w
  // CHECK-NEXT: %w_op = ttg.convert_layout %w16
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: %x_op = ttg.convert_layout %x
  // CHECK-NEXT: %d = tt.dot %x_op, %w_op
  tt.func public @b_operand_beside_a_carried_one(%x0: tensor<64x64xf16, #blocked>, %w: tensor<64x64xf32, #blocked>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %w16 = arith.truncf %w : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %x = %x0) -> (tensor<64x64xf32, #mma>, tensor<64x64xf16, #blocked>)  : i32 {
      // NOTE-DAG: operands.mlir:[[# @LINE + 1]]:7: note: not hoisted: its source %x is a block argument (no op to move after)
      %x_op = ttg.convert_layout %x : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #a_op>
      // NOTE-DAG: operands.mlir:[[# @LINE + 1]]:7: remark: hoisted %w_op = ttg.convert_layout (line [[# @LINE + 1]]) out of %r#0, ... = scf.for (line [[# @LINE - 3]]) to right after %w16 = arith.truncf (line [[# @LINE - 4]]): the dot operand is converted once
      %w_op = ttg.convert_layout %w16 : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #b_op>
      %d = tt.dot %x_op, %w_op, %acc : tensor<64x64xf16, #a_op> * tensor<64x64xf16, #b_op> -> tensor<64x64xf32, #mma>
      %x1 = arith.addf %x, %x : tensor<64x64xf16, #blocked>
      scf.yield %d, %x1 : tensor<64x64xf32, #mma>, tensor<64x64xf16, #blocked>
    }
    tt.return %r#0 : tensor<64x64xf32, #mma>
  }
}
