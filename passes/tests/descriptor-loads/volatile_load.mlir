// A volatile load stays a pointer load (no TMA copy is volatile), and it orders the loop's other
// memory accesses, so the B load stays too. The IR is unchanged byte for byte.
// RUN: irlab pass descriptor-loads %s | diff %s -
// RUN: irlab pass descriptor-loads %s --explain 2>&1 >/dev/null | filecheck %s

module {
  tt.func public @matmul_kernel(%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg3: i32 {tt.divisibility = 16 : i32}, %arg4: i32 {tt.divisibility = 16 : i32}, %arg5: i32 {tt.divisibility = 16 : i32}, %arg6: i32 {tt.divisibility = 16 : i32}, %arg7: i32 {tt.divisibility = 16 : i32}, %arg8: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c63_i32 = arith.constant 63 : i32
    %cst = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<64x128xf16>
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf16>
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst_2 = arith.constant dense<64> : tensor<128x64xi32>
    %c64_i32 = arith.constant 64 : i32
    %c128_i32 = arith.constant 128 : i32
    %12 = tt.get_program_id x : i32
    %13 = tt.get_program_id y : i32
    %14 = arith.muli %12, %c128_i32 : i32
    %15 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %16 = tt.splat %14 : i32 -> tensor<128xi32>
    %17 = arith.addi %16, %15 : tensor<128xi32>
    %18 = tt.splat %arg3 : i32 -> tensor<128xi32>
    %19 = arith.remsi %17, %18 : tensor<128xi32>
    %20 = arith.muli %13, %c128_i32 : i32
    %21 = tt.splat %20 : i32 -> tensor<128xi32>
    %22 = arith.addi %21, %15 : tensor<128xi32>
    %23 = tt.splat %arg4 : i32 -> tensor<128xi32>
    %24 = arith.remsi %22, %23 : tensor<128xi32>
    %25 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %26 = tt.expand_dims %19 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    %27 = tt.splat %arg6 : i32 -> tensor<128x1xi32>
    %28 = arith.muli %26, %27 : tensor<128x1xi32>
    %29 = tt.expand_dims %25 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %30 = tt.broadcast %28 : tensor<128x1xi32> -> tensor<128x64xi32>
    %31 = tt.broadcast %29 : tensor<1x64xi32> -> tensor<128x64xi32>
    %32 = arith.addi %30, %31 : tensor<128x64xi32>
    %33 = tt.splat %arg0 : !tt.ptr<f16> -> tensor<128x64x!tt.ptr<f16>>
    %34 = tt.addptr %33, %32 : tensor<128x64x!tt.ptr<f16>>, tensor<128x64xi32>
    %35 = tt.expand_dims %25 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %36 = tt.splat %arg7 : i32 -> tensor<64x1xi32>
    %37 = arith.muli %35, %36 : tensor<64x1xi32>
    %38 = tt.expand_dims %24 {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
    %39 = tt.broadcast %37 : tensor<64x1xi32> -> tensor<64x128xi32>
    %40 = tt.broadcast %38 : tensor<1x128xi32> -> tensor<64x128xi32>
    %41 = arith.addi %39, %40 : tensor<64x128xi32>
    %42 = tt.splat %arg1 : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>>
    %43 = tt.addptr %42, %41 : tensor<64x128x!tt.ptr<f16>>, tensor<64x128xi32>
    %44 = arith.addi %arg5, %c63_i32 : i32
    %45 = arith.divsi %44, %c64_i32 : i32
    %46:3 = scf.for %arg9 = %c0_i32 to %45 step %c1_i32 iter_args(%arg10 = %34, %arg11 = %43, %arg12 = %cst) -> (tensor<128x64x!tt.ptr<f16>>, tensor<64x128x!tt.ptr<f16>>, tensor<128x128xf32>)  : i32 {
      %64 = arith.muli %arg9, %c64_i32 : i32
      %65 = arith.subi %arg5, %64 : i32
      %66 = tt.splat %65 : i32 -> tensor<1x64xi32>
      %67 = arith.cmpi slt, %29, %66 : tensor<1x64xi32>
      %68 = tt.broadcast %67 : tensor<1x64xi1> -> tensor<128x64xi1>
      // CHECK: volatile_load.mlir:[[# @LINE + 1]]:7: note: load left as is: the load asks for isVolatile; a TMA copy would not carry it exactly
      %69 = tt.load %arg10, %68, %cst_1 {isVolatile = true} : tensor<128x64x!tt.ptr<f16>>
      %70 = tt.splat %65 : i32 -> tensor<64x1xi32>
      %71 = arith.cmpi slt, %35, %70 : tensor<64x1xi32>
      %72 = tt.broadcast %71 : tensor<64x1xi1> -> tensor<64x128xi1>
      // CHECK: volatile_load.mlir:[[# @LINE + 1]]:7: note: load left as is: the loop reads global memory, synchronizes at %69 = tt.load (line [[# @LINE - 4]])
      %73 = tt.load %arg11, %72, %cst_0 : tensor<64x128x!tt.ptr<f16>>
      %74 = tt.dot %69, %73, %arg12, inputPrecision = tf32 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      %75 = tt.addptr %arg10, %cst_2 : tensor<128x64x!tt.ptr<f16>>, tensor<128x64xi32>
      %76 = arith.muli %arg7, %c64_i32 : i32
      %77 = tt.splat %76 : i32 -> tensor<64x128xi32>
      %78 = tt.addptr %arg11, %77 : tensor<64x128x!tt.ptr<f16>>, tensor<64x128xi32>
      scf.yield %75, %78, %74 : tensor<128x64x!tt.ptr<f16>>, tensor<64x128x!tt.ptr<f16>>, tensor<128x128xf32>
    }
    %47 = arith.truncf %46#2 : tensor<128x128xf32> to tensor<128x128xf16>
    %48 = tt.expand_dims %17 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    %49 = tt.splat %arg8 : i32 -> tensor<128x1xi32>
    %50 = arith.muli %49, %48 : tensor<128x1xi32>
    %51 = tt.splat %arg2 : !tt.ptr<f16> -> tensor<128x1x!tt.ptr<f16>>
    %52 = tt.addptr %51, %50 : tensor<128x1x!tt.ptr<f16>>, tensor<128x1xi32>
    %53 = tt.expand_dims %22 {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
    %54 = tt.broadcast %52 : tensor<128x1x!tt.ptr<f16>> -> tensor<128x128x!tt.ptr<f16>>
    %55 = tt.broadcast %53 : tensor<1x128xi32> -> tensor<128x128xi32>
    %56 = tt.addptr %54, %55 : tensor<128x128x!tt.ptr<f16>>, tensor<128x128xi32>
    %57 = tt.splat %arg3 : i32 -> tensor<128x1xi32>
    %58 = arith.cmpi slt, %48, %57 : tensor<128x1xi32>
    %59 = tt.splat %arg4 : i32 -> tensor<1x128xi32>
    %60 = arith.cmpi slt, %53, %59 : tensor<1x128xi32>
    %61 = tt.broadcast %58 : tensor<128x1xi1> -> tensor<128x128xi1>
    %62 = tt.broadcast %60 : tensor<1x128xi1> -> tensor<128x128xi1>
    %63 = arith.andi %61, %62 : tensor<128x128xi1>
    tt.store %56, %47, %63 : tensor<128x128x!tt.ptr<f16>>
    tt.return
  }
}
