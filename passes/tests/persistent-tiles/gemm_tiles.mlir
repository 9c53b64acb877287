// TTIR of the tutorial GEMM (64x64x32 tiles, GROUP_M=8 swizzle), as Triton 3.9 writes it: the tile
// count is cdiv(M, 64) * cdiv(N, 64) from the kernel's own num_pid_m and num_pid_n (%2, %4); the
// swizzle, the K loop and the masked epilogue store move into the loop over tiles and read its
// induction variable where they read the program id.
// RUN: irlab pass persistent-tiles %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass persistent-tiles %s | irlab pass 'descriptor-loads{store=true}' - | grep -v '^ *//' | filecheck %s --check-prefix=TMA

// CHECK: %[[PID:.*]] = tt.get_program_id x : i32
// CHECK-NEXT: %1 = arith.addi %arg3, %c63_i32
// CHECK-NEXT: %[[TM:.*]] = arith.divsi %1, %c64_i32
// CHECK-NEXT: %3 = arith.addi %arg4, %c63_i32
// CHECK-NEXT: %[[TN:.*]] = arith.divsi %3, %c64_i32
// CHECK-NEXT: %[[GROUP:.*]] = arith.muli %[[TN]], %c8_i32
// CHECK-NEXT: tt.make_range {end = 64
// CHECK-NOT: tt.load
// CHECK: %[[NPROG:.*]] = tt.get_num_programs x : i32
// CHECK-NEXT: %[[TILES:.*]] = arith.muli %[[TM]], %[[TN]] : i32
// CHECK-NEXT: scf.for %[[TILE:.*]] = %[[PID]] to %[[TILES]] step %[[NPROG]]  : i32 {
// CHECK-NEXT: arith.divsi %[[TILE]], %[[GROUP]]
// CHECK-NOT: %[[PID]]
// CHECK: arith.remsi %[[TILE]], %[[GROUP]]
// CHECK: scf.for
// CHECK: tt.dot
// CHECK: tt.store
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } {irlab.persistent_tiles, irlab.tile_count = "cdiv(arg3, 64) * cdiv(arg4, 64)"}
// CHECK-NEXT: tt.return

// the descriptors are built once, before the loop over tiles; loads and store use them inside it
// TMA-COUNT-3: tt.make_tensor_descriptor
// TMA: scf.for %{{.*}} = %0 to
// TMA-NOT: tt.make_tensor_descriptor
// TMA: tt.descriptor_load
// TMA: tt.descriptor_load
// TMA: tt.descriptor_store
// TMA: } {irlab.persistent_tiles, irlab.tile_count = "cdiv(arg3, 64) * cdiv(arg4, 64)"}

module {
  tt.func public @matmul_kernel(%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg3: i32 {tt.divisibility = 16 : i32}, %arg4: i32 {tt.divisibility = 16 : i32}, %arg5: i32 {tt.divisibility = 16 : i32}, %arg6: i32 {tt.divisibility = 16 : i32}, %arg7: i32 {tt.divisibility = 16 : i32}, %arg8: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c31_i32 = arith.constant 31 : i32
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %c63_i32 = arith.constant 63 : i32
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<64x32xf16>
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

