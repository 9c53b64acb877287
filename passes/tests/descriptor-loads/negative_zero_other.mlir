// A masked K load with `other = -0.0`: TMA fills the elements past K with +0.0, and a product with
// one of them is a zero of the other sign, which reaches C unless the epilogue makes every zero
// +0.0. descriptor-loads leaves such a load alone (B's load, whose fill is +0.0, still becomes a
// TMA load). Triton 3.6 writes `other=-0.0` as dense<0.000000e+00> (the sign is gone before irlab
// sees it); 3.9 keeps it, as here.
// RUN: irlab pass descriptor-loads --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s

module {
  // Triton 3.9's TTIR of tests/kernels/negative_zero_gemm.py (64x64x32): A's fill is -0.0, B's +0.0.
  tt.func public @matmul_negzero(%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg3: i32 {tt.divisibility = 16 : i32}, %arg4: i32 {tt.divisibility = 16 : i32}, %arg5: i32 {tt.divisibility = 16 : i32}, %arg6: i32 {tt.divisibility = 16 : i32}, %arg7: i32 {tt.divisibility = 16 : i32}, %arg8: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c31_i32 = arith.constant 31 : i32
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %c63_i32 = arith.constant 63 : i32
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
    %cst_1 = arith.constant dense<-0.000000e+00> : tensor<64x32xf16>
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst_2 = arith.constant dense<32> : tensor<64x32xi32>
    %c32_i32 = arith.constant 32 : i32
    %c64_i32 = arith.constant 64 : i32
    %c8_i32 = arith.constant 8 : i32
    %0 = tt.get_program_id x : i32
    %1 = arith.addi %arg3, %c63_i32 : i32
    %2 = arith.divsi %1, %c64_i32 : i32
    %3 = arith.addi %arg4, %c63_i32 : i32
    %4 = arith.divsi %3, %c64_i32 : i32
    %5 = arith.muli %4, %c8_i32 : i32
    %6 = arith.divsi %0, %5 : i32
    %7 = arith.muli %6, %c8_i32 : i32
    %8 = arith.subi %2, %7 : i32
    %9 = arith.minsi %8, %c8_i32 : i32
    %10 = arith.remsi %0, %5 : i32
    %11 = arith.remsi %10, %9 : i32
    %12 = arith.addi %7, %11 : i32
    %13 = arith.divsi %10, %9 : i32
    %14 = arith.muli %12, %c64_i32 : i32
    %15 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %16 = tt.splat %14 : i32 -> tensor<64xi32>
    %17 = arith.addi %16, %15 : tensor<64xi32>
    %18 = tt.splat %arg3 : i32 -> tensor<64xi32>
    %19 = arith.remsi %17, %18 : tensor<64xi32>
    %20 = arith.muli %13, %c64_i32 : i32
    %21 = tt.splat %20 : i32 -> tensor<64xi32>
    %22 = arith.addi %21, %15 : tensor<64xi32>
    %23 = tt.splat %arg4 : i32 -> tensor<64xi32>
    %24 = arith.remsi %22, %23 : tensor<64xi32>
    %25 = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %26 = tt.expand_dims %19 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %27 = tt.splat %arg6 : i32 -> tensor<64x1xi32>
    %28 = arith.muli %26, %27 : tensor<64x1xi32>
    %29 = tt.expand_dims %25 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %30 = tt.broadcast %28 : tensor<64x1xi32> -> tensor<64x32xi32>
    %31 = tt.broadcast %29 : tensor<1x32xi32> -> tensor<64x32xi32>
    %32 = arith.addi %30, %31 : tensor<64x32xi32>
    %33 = tt.splat %arg0 : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>>
    %34 = tt.addptr %33, %32 : tensor<64x32x!tt.ptr<f16>>, tensor<64x32xi32>
    %35 = tt.expand_dims %25 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %36 = tt.splat %arg7 : i32 -> tensor<32x1xi32>
    %37 = arith.muli %35, %36 : tensor<32x1xi32>
    %38 = tt.expand_dims %24 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %39 = tt.broadcast %37 : tensor<32x1xi32> -> tensor<32x64xi32>
    %40 = tt.broadcast %38 : tensor<1x64xi32> -> tensor<32x64xi32>
    %41 = arith.addi %39, %40 : tensor<32x64xi32>
    %42 = tt.splat %arg1 : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
    %43 = tt.addptr %42, %41 : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
    %44 = arith.addi %arg5, %c31_i32 : i32
    %45 = arith.divsi %44, %c32_i32 : i32
    %46:3 = scf.for %arg9 = %c0_i32 to %45 step %c1_i32 iter_args(%arg10 = %34, %arg11 = %43, %arg12 = %cst) -> (tensor<64x32x!tt.ptr<f16>>, tensor<32x64x!tt.ptr<f16>>, tensor<64x64xf32>)  : i32 {
      %64 = arith.muli %arg9, %c32_i32 : i32
      %65 = arith.subi %arg5, %64 : i32
      %66 = tt.splat %65 : i32 -> tensor<1x32xi32>
      %67 = arith.cmpi slt, %29, %66 : tensor<1x32xi32>
      %68 = tt.broadcast %67 : tensor<1x32xi1> -> tensor<64x32xi1>
      // CHECK: negative_zero_other.mlir:[[# @LINE + 1]]:7: note: load left as is: `other` is -0.0 and TMA fills out-of-bounds elements with +0.0
      %69 = tt.load %arg10, %68, %cst_1 : tensor<64x32x!tt.ptr<f16>>
      %70 = tt.splat %65 : i32 -> tensor<32x1xi32>
      %71 = arith.cmpi slt, %35, %70 : tensor<32x1xi32>
      %72 = tt.broadcast %71 : tensor<32x1xi1> -> tensor<32x64xi1>
      // CHECK: negative_zero_other.mlir:[[# @LINE + 1]]:7: remark: loads 32x64 f16 tiles through TMA
      %73 = tt.load %arg11, %72, %cst_0 : tensor<32x64x!tt.ptr<f16>>
      %74 = tt.dot %69, %73, %arg12, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %75 = tt.addptr %arg10, %cst_2 : tensor<64x32x!tt.ptr<f16>>, tensor<64x32xi32>
      %76 = arith.muli %arg7, %c32_i32 : i32
      %77 = tt.splat %76 : i32 -> tensor<32x64xi32>
      %78 = tt.addptr %arg11, %77 : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
      scf.yield %75, %78, %74 : tensor<64x32x!tt.ptr<f16>>, tensor<32x64x!tt.ptr<f16>>, tensor<64x64xf32>
    }
    %47 = arith.truncf %46#2 : tensor<64x64xf32> to tensor<64x64xf16>
    %48 = tt.expand_dims %17 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %49 = tt.splat %arg8 : i32 -> tensor<64x1xi32>
    %50 = arith.muli %49, %48 : tensor<64x1xi32>
    %51 = tt.splat %arg2 : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>>
    %52 = tt.addptr %51, %50 : tensor<64x1x!tt.ptr<f16>>, tensor<64x1xi32>
    %53 = tt.expand_dims %22 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %54 = tt.broadcast %52 : tensor<64x1x!tt.ptr<f16>> -> tensor<64x64x!tt.ptr<f16>>
    %55 = tt.broadcast %53 : tensor<1x64xi32> -> tensor<64x64xi32>
    %56 = tt.addptr %54, %55 : tensor<64x64x!tt.ptr<f16>>, tensor<64x64xi32>
    %57 = tt.splat %arg3 : i32 -> tensor<64x1xi32>
    %58 = arith.cmpi slt, %48, %57 : tensor<64x1xi32>
    %59 = tt.splat %arg4 : i32 -> tensor<1x64xi32>
    %60 = arith.cmpi slt, %53, %59 : tensor<1x64xi32>
    %61 = tt.broadcast %58 : tensor<64x1xi1> -> tensor<64x64xi1>
    %62 = tt.broadcast %60 : tensor<1x64xi1> -> tensor<64x64xi1>
    %63 = arith.andi %61, %62 : tensor<64x64xi1>
    tt.store %56, %47, %63 : tensor<64x64x!tt.ptr<f16>>
    tt.return
  }
}

// -----

module {
  // The same with `acc + 1.0` before the store: a zero of either sign becomes 1.0, so A's -0.0 fill cannot show.
  tt.func public @matmul_negzero(%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg3: i32 {tt.divisibility = 16 : i32}, %arg4: i32 {tt.divisibility = 16 : i32}, %arg5: i32 {tt.divisibility = 16 : i32}, %arg6: i32 {tt.divisibility = 16 : i32}, %arg7: i32 {tt.divisibility = 16 : i32}, %arg8: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c31_i32 = arith.constant 31 : i32
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %c63_i32 = arith.constant 63 : i32
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
    %cst_1 = arith.constant dense<-0.000000e+00> : tensor<64x32xf16>
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst_2 = arith.constant dense<32> : tensor<64x32xi32>
    %c32_i32 = arith.constant 32 : i32
    %c64_i32 = arith.constant 64 : i32
    %c8_i32 = arith.constant 8 : i32
    %0 = tt.get_program_id x : i32
    %1 = arith.addi %arg3, %c63_i32 : i32
    %2 = arith.divsi %1, %c64_i32 : i32
    %3 = arith.addi %arg4, %c63_i32 : i32
    %4 = arith.divsi %3, %c64_i32 : i32
    %5 = arith.muli %4, %c8_i32 : i32
    %6 = arith.divsi %0, %5 : i32
    %7 = arith.muli %6, %c8_i32 : i32
    %8 = arith.subi %2, %7 : i32
    %9 = arith.minsi %8, %c8_i32 : i32
    %10 = arith.remsi %0, %5 : i32
    %11 = arith.remsi %10, %9 : i32
    %12 = arith.addi %7, %11 : i32
    %13 = arith.divsi %10, %9 : i32
    %14 = arith.muli %12, %c64_i32 : i32
    %15 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %16 = tt.splat %14 : i32 -> tensor<64xi32>
    %17 = arith.addi %16, %15 : tensor<64xi32>
    %18 = tt.splat %arg3 : i32 -> tensor<64xi32>
    %19 = arith.remsi %17, %18 : tensor<64xi32>
    %20 = arith.muli %13, %c64_i32 : i32
    %21 = tt.splat %20 : i32 -> tensor<64xi32>
    %22 = arith.addi %21, %15 : tensor<64xi32>
    %23 = tt.splat %arg4 : i32 -> tensor<64xi32>
    %24 = arith.remsi %22, %23 : tensor<64xi32>
    %25 = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %26 = tt.expand_dims %19 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %27 = tt.splat %arg6 : i32 -> tensor<64x1xi32>
    %28 = arith.muli %26, %27 : tensor<64x1xi32>
    %29 = tt.expand_dims %25 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %30 = tt.broadcast %28 : tensor<64x1xi32> -> tensor<64x32xi32>
    %31 = tt.broadcast %29 : tensor<1x32xi32> -> tensor<64x32xi32>
    %32 = arith.addi %30, %31 : tensor<64x32xi32>
    %33 = tt.splat %arg0 : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>>
    %34 = tt.addptr %33, %32 : tensor<64x32x!tt.ptr<f16>>, tensor<64x32xi32>
    %35 = tt.expand_dims %25 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %36 = tt.splat %arg7 : i32 -> tensor<32x1xi32>
    %37 = arith.muli %35, %36 : tensor<32x1xi32>
    %38 = tt.expand_dims %24 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %39 = tt.broadcast %37 : tensor<32x1xi32> -> tensor<32x64xi32>
    %40 = tt.broadcast %38 : tensor<1x64xi32> -> tensor<32x64xi32>
    %41 = arith.addi %39, %40 : tensor<32x64xi32>
    %42 = tt.splat %arg1 : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
    %43 = tt.addptr %42, %41 : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
    %44 = arith.addi %arg5, %c31_i32 : i32
    %45 = arith.divsi %44, %c32_i32 : i32
    %46:3 = scf.for %arg9 = %c0_i32 to %45 step %c1_i32 iter_args(%arg10 = %34, %arg11 = %43, %arg12 = %cst) -> (tensor<64x32x!tt.ptr<f16>>, tensor<32x64x!tt.ptr<f16>>, tensor<64x64xf32>)  : i32 {
      %64 = arith.muli %arg9, %c32_i32 : i32
      %65 = arith.subi %arg5, %64 : i32
      %66 = tt.splat %65 : i32 -> tensor<1x32xi32>
      %67 = arith.cmpi slt, %29, %66 : tensor<1x32xi32>
      %68 = tt.broadcast %67 : tensor<1x32xi1> -> tensor<64x32xi1>
      // CHECK: negative_zero_other.mlir:[[# @LINE + 1]]:7: remark: loads 64x32 f16 tiles through TMA
      %69 = tt.load %arg10, %68, %cst_1 : tensor<64x32x!tt.ptr<f16>>
      %70 = tt.splat %65 : i32 -> tensor<32x1xi32>
      %71 = arith.cmpi slt, %35, %70 : tensor<32x1xi32>
      %72 = tt.broadcast %71 : tensor<32x1xi1> -> tensor<32x64xi1>
      %73 = tt.load %arg11, %72, %cst_0 : tensor<32x64x!tt.ptr<f16>>
      %74 = tt.dot %69, %73, %arg12, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %75 = tt.addptr %arg10, %cst_2 : tensor<64x32x!tt.ptr<f16>>, tensor<64x32xi32>
      %76 = arith.muli %arg7, %c32_i32 : i32
      %77 = tt.splat %76 : i32 -> tensor<32x64xi32>
      %78 = tt.addptr %arg11, %77 : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
      scf.yield %75, %78, %74 : tensor<64x32x!tt.ptr<f16>>, tensor<32x64x!tt.ptr<f16>>, tensor<64x64xf32>
    }
    %fill = arith.constant 1.000000e+00 : f32
    %fills = tt.splat %fill : f32 -> tensor<64x64xf32>
    %plus = arith.addf %46#2, %fills : tensor<64x64xf32>
    %47 = arith.truncf %plus : tensor<64x64xf32> to tensor<64x64xf16>
    %48 = tt.expand_dims %17 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %49 = tt.splat %arg8 : i32 -> tensor<64x1xi32>
    %50 = arith.muli %49, %48 : tensor<64x1xi32>
    %51 = tt.splat %arg2 : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>>
    %52 = tt.addptr %51, %50 : tensor<64x1x!tt.ptr<f16>>, tensor<64x1xi32>
    %53 = tt.expand_dims %22 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %54 = tt.broadcast %52 : tensor<64x1x!tt.ptr<f16>> -> tensor<64x64x!tt.ptr<f16>>
    %55 = tt.broadcast %53 : tensor<1x64xi32> -> tensor<64x64xi32>
    %56 = tt.addptr %54, %55 : tensor<64x64x!tt.ptr<f16>>, tensor<64x64xi32>
    %57 = tt.splat %arg3 : i32 -> tensor<64x1xi32>
    %58 = arith.cmpi slt, %48, %57 : tensor<64x1xi32>
    %59 = tt.splat %arg4 : i32 -> tensor<1x64xi32>
    %60 = arith.cmpi slt, %53, %59 : tensor<1x64xi32>
    %61 = tt.broadcast %58 : tensor<64x1xi1> -> tensor<64x64xi1>
    %62 = tt.broadcast %60 : tensor<1x64xi1> -> tensor<64x64xi1>
    %63 = arith.andi %61, %62 : tensor<64x64xi1>
    tt.store %56, %47, %63 : tensor<64x64x!tt.ptr<f16>>
    tt.return
  }
}

// -----

module {
  // With `acc + -0.0` instead: -0.0 + -0.0 is -0.0 and +0.0 + -0.0 is +0.0, the sign still shows.
  tt.func public @matmul_negzero(%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg3: i32 {tt.divisibility = 16 : i32}, %arg4: i32 {tt.divisibility = 16 : i32}, %arg5: i32 {tt.divisibility = 16 : i32}, %arg6: i32 {tt.divisibility = 16 : i32}, %arg7: i32 {tt.divisibility = 16 : i32}, %arg8: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c31_i32 = arith.constant 31 : i32
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %c63_i32 = arith.constant 63 : i32
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
    %cst_1 = arith.constant dense<-0.000000e+00> : tensor<64x32xf16>
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst_2 = arith.constant dense<32> : tensor<64x32xi32>
    %c32_i32 = arith.constant 32 : i32
    %c64_i32 = arith.constant 64 : i32
    %c8_i32 = arith.constant 8 : i32
    %0 = tt.get_program_id x : i32
    %1 = arith.addi %arg3, %c63_i32 : i32
    %2 = arith.divsi %1, %c64_i32 : i32
    %3 = arith.addi %arg4, %c63_i32 : i32
    %4 = arith.divsi %3, %c64_i32 : i32
    %5 = arith.muli %4, %c8_i32 : i32
    %6 = arith.divsi %0, %5 : i32
    %7 = arith.muli %6, %c8_i32 : i32
    %8 = arith.subi %2, %7 : i32
    %9 = arith.minsi %8, %c8_i32 : i32
    %10 = arith.remsi %0, %5 : i32
    %11 = arith.remsi %10, %9 : i32
    %12 = arith.addi %7, %11 : i32
    %13 = arith.divsi %10, %9 : i32
    %14 = arith.muli %12, %c64_i32 : i32
    %15 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %16 = tt.splat %14 : i32 -> tensor<64xi32>
    %17 = arith.addi %16, %15 : tensor<64xi32>
    %18 = tt.splat %arg3 : i32 -> tensor<64xi32>
    %19 = arith.remsi %17, %18 : tensor<64xi32>
    %20 = arith.muli %13, %c64_i32 : i32
    %21 = tt.splat %20 : i32 -> tensor<64xi32>
    %22 = arith.addi %21, %15 : tensor<64xi32>
    %23 = tt.splat %arg4 : i32 -> tensor<64xi32>
    %24 = arith.remsi %22, %23 : tensor<64xi32>
    %25 = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %26 = tt.expand_dims %19 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %27 = tt.splat %arg6 : i32 -> tensor<64x1xi32>
    %28 = arith.muli %26, %27 : tensor<64x1xi32>
    %29 = tt.expand_dims %25 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %30 = tt.broadcast %28 : tensor<64x1xi32> -> tensor<64x32xi32>
    %31 = tt.broadcast %29 : tensor<1x32xi32> -> tensor<64x32xi32>
    %32 = arith.addi %30, %31 : tensor<64x32xi32>
    %33 = tt.splat %arg0 : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>>
    %34 = tt.addptr %33, %32 : tensor<64x32x!tt.ptr<f16>>, tensor<64x32xi32>
    %35 = tt.expand_dims %25 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %36 = tt.splat %arg7 : i32 -> tensor<32x1xi32>
    %37 = arith.muli %35, %36 : tensor<32x1xi32>
    %38 = tt.expand_dims %24 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %39 = tt.broadcast %37 : tensor<32x1xi32> -> tensor<32x64xi32>
    %40 = tt.broadcast %38 : tensor<1x64xi32> -> tensor<32x64xi32>
    %41 = arith.addi %39, %40 : tensor<32x64xi32>
    %42 = tt.splat %arg1 : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
    %43 = tt.addptr %42, %41 : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
    %44 = arith.addi %arg5, %c31_i32 : i32
    %45 = arith.divsi %44, %c32_i32 : i32
    %46:3 = scf.for %arg9 = %c0_i32 to %45 step %c1_i32 iter_args(%arg10 = %34, %arg11 = %43, %arg12 = %cst) -> (tensor<64x32x!tt.ptr<f16>>, tensor<32x64x!tt.ptr<f16>>, tensor<64x64xf32>)  : i32 {
      %64 = arith.muli %arg9, %c32_i32 : i32
      %65 = arith.subi %arg5, %64 : i32
      %66 = tt.splat %65 : i32 -> tensor<1x32xi32>
      %67 = arith.cmpi slt, %29, %66 : tensor<1x32xi32>
      %68 = tt.broadcast %67 : tensor<1x32xi1> -> tensor<64x32xi1>
      // CHECK: negative_zero_other.mlir:[[# @LINE + 1]]:7: note: load left as is: `other` is -0.0
      %69 = tt.load %arg10, %68, %cst_1 : tensor<64x32x!tt.ptr<f16>>
      %70 = tt.splat %65 : i32 -> tensor<32x1xi32>
      %71 = arith.cmpi slt, %35, %70 : tensor<32x1xi32>
      %72 = tt.broadcast %71 : tensor<32x1xi1> -> tensor<32x64xi1>
      %73 = tt.load %arg11, %72, %cst_0 : tensor<32x64x!tt.ptr<f16>>
      %74 = tt.dot %69, %73, %arg12, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %75 = tt.addptr %arg10, %cst_2 : tensor<64x32x!tt.ptr<f16>>, tensor<64x32xi32>
      %76 = arith.muli %arg7, %c32_i32 : i32
      %77 = tt.splat %76 : i32 -> tensor<32x64xi32>
      %78 = tt.addptr %arg11, %77 : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
      scf.yield %75, %78, %74 : tensor<64x32x!tt.ptr<f16>>, tensor<32x64x!tt.ptr<f16>>, tensor<64x64xf32>
    }
    %fill = arith.constant -0.000000e+00 : f32
    %fills = tt.splat %fill : f32 -> tensor<64x64xf32>
    %plus = arith.addf %46#2, %fills : tensor<64x64xf32>
    %47 = arith.truncf %plus : tensor<64x64xf32> to tensor<64x64xf16>
    %48 = tt.expand_dims %17 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %49 = tt.splat %arg8 : i32 -> tensor<64x1xi32>
    %50 = arith.muli %49, %48 : tensor<64x1xi32>
    %51 = tt.splat %arg2 : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>>
    %52 = tt.addptr %51, %50 : tensor<64x1x!tt.ptr<f16>>, tensor<64x1xi32>
    %53 = tt.expand_dims %22 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %54 = tt.broadcast %52 : tensor<64x1x!tt.ptr<f16>> -> tensor<64x64x!tt.ptr<f16>>
    %55 = tt.broadcast %53 : tensor<1x64xi32> -> tensor<64x64xi32>
    %56 = tt.addptr %54, %55 : tensor<64x64x!tt.ptr<f16>>, tensor<64x64xi32>
    %57 = tt.splat %arg3 : i32 -> tensor<64x1xi32>
    %58 = arith.cmpi slt, %48, %57 : tensor<64x1xi32>
    %59 = tt.splat %arg4 : i32 -> tensor<1x64xi32>
    %60 = arith.cmpi slt, %53, %59 : tensor<1x64xi32>
    %61 = tt.broadcast %58 : tensor<64x1xi1> -> tensor<64x64xi1>
    %62 = tt.broadcast %60 : tensor<1x64xi1> -> tensor<64x64xi1>
    %63 = arith.andi %61, %62 : tensor<64x64xi1>
    tt.store %56, %47, %63 : tensor<64x64x!tt.ptr<f16>>
    tt.return
  }
}
