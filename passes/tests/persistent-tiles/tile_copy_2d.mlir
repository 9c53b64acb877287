// A kernel that keeps the launch contract, as Triton writes it: the TTIR that Triton 3.6.0 and 3.9.0
// both produce (cross-compiled for cuda:90, 32x64 tiles, GROUP_M = 4) for tile_copy_2d of
// tests/kernels/launch_contract.py. The program id only picks the tile (the GROUP_M swizzle, the
// tile's offsets and its bounds `offs < M`, `offs < N`), so its work moves into a loop over the
// tiles cdiv(M, 32) * cdiv(N, 64), and the loop says, for the launch to check its grid, how the
// tile count follows from the kernel's arguments (arg2 is M, arg3 is N).
// tests/test_persistent_tiles.py checks that this module is still what Triton writes.
// RUN: irlab pass persistent-tiles %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass persistent-tiles %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// REMARK: tile_copy_2d.mlir:[[# @LINE + 24]]:5: remark: the per-tile work now loops over tiles %0 .. cdiv(%arg2, 32) * cdiv(%arg3, 64) - 1
// CHECK: %[[PID:.*]] = tt.get_program_id x : i32
// CHECK-NEXT: %1 = arith.addi %arg2, %c31_i32
// CHECK-NEXT: %[[TM:.*]] = arith.divsi %1, %c32_i32
// CHECK-NEXT: %3 = arith.addi %arg3, %c63_i32
// CHECK-NEXT: %[[TN:.*]] = arith.divsi %3, %c64_i32
// CHECK-NOT: tt.load
// CHECK: %[[NPROG:.*]] = tt.get_num_programs x : i32
// CHECK-NEXT: %[[TILES:.*]] = arith.muli %[[TM]], %[[TN]] : i32
// CHECK-NEXT: scf.for %[[TILE:.*]] = %[[PID]] to %[[TILES]] step %[[NPROG]]  : i32 {
// CHECK-NOT: %[[PID]]
// CHECK: tt.load
// CHECK-NEXT: tt.store
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } {irlab.persistent_tiles, irlab.tile_count = "cdiv(arg2, 32) * cdiv(arg3, 64)"}
// CHECK-NEXT: tt.return

module {
  tt.func public @tile_copy_2d(%arg0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg2: i32, %arg3: i32 {tt.divisibility = 16 : i32}, %arg4: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c63_i32 = arith.constant 63 : i32
    %c31_i32 = arith.constant 31 : i32
    %c64_i32 = arith.constant 64 : i32
    %c32_i32 = arith.constant 32 : i32
    %c4_i32 = arith.constant 4 : i32
    %0 = tt.get_program_id x : i32
    %1 = arith.addi %arg2, %c31_i32 : i32
    %2 = arith.divsi %1, %c32_i32 : i32
    %3 = arith.addi %arg3, %c63_i32 : i32
    %4 = arith.divsi %3, %c64_i32 : i32
    %5 = arith.muli %4, %c4_i32 : i32
    %6 = arith.divsi %0, %5 : i32
    %7 = arith.muli %6, %c4_i32 : i32
    %8 = arith.subi %2, %7 : i32
    %9 = arith.minsi %8, %c4_i32 : i32
    %10 = arith.remsi %0, %5 : i32
    %11 = arith.remsi %10, %9 : i32
    %12 = arith.addi %7, %11 : i32
    %13 = arith.divsi %10, %9 : i32
    %14 = arith.muli %12, %c32_i32 : i32
    %15 = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %16 = tt.splat %14 : i32 -> tensor<32xi32>
    %17 = arith.addi %16, %15 : tensor<32xi32>
    %18 = arith.muli %13, %c64_i32 : i32
    %19 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %20 = tt.splat %18 : i32 -> tensor<64xi32>
    %21 = arith.addi %20, %19 : tensor<64xi32>
    %22 = tt.expand_dims %17 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %23 = tt.splat %arg4 : i32 -> tensor<32x1xi32>
    %24 = arith.muli %22, %23 : tensor<32x1xi32>
    %25 = tt.expand_dims %21 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %26 = tt.broadcast %24 : tensor<32x1xi32> -> tensor<32x64xi32>
    %27 = tt.broadcast %25 : tensor<1x64xi32> -> tensor<32x64xi32>
    %28 = arith.addi %26, %27 : tensor<32x64xi32>
    %29 = tt.splat %arg2 : i32 -> tensor<32x1xi32>
    %30 = arith.cmpi slt, %22, %29 : tensor<32x1xi32>
    %31 = tt.splat %arg3 : i32 -> tensor<1x64xi32>
    %32 = arith.cmpi slt, %25, %31 : tensor<1x64xi32>
    %33 = tt.broadcast %30 : tensor<32x1xi1> -> tensor<32x64xi1>
    %34 = tt.broadcast %32 : tensor<1x64xi1> -> tensor<32x64xi1>
    %35 = arith.andi %33, %34 : tensor<32x64xi1>
    %36 = tt.splat %arg1 : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
    %37 = tt.addptr %36, %28 : tensor<32x64x!tt.ptr<f32>>, tensor<32x64xi32>
    %38 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
    %39 = tt.addptr %38, %28 : tensor<32x64x!tt.ptr<f32>>, tensor<32x64xi32>
    %40 = tt.load %39, %35 : tensor<32x64x!tt.ptr<f32>>
    tt.store %37, %40, %35 : tensor<32x64x!tt.ptr<f32>>
    tt.return
  }
}
