// Kernels whose programs do work outside their tiles, as Triton writes them: the TTIR that Triton
// 3.6.0 and 3.9.0 both produce (cross-compiled for cuda:90, BLOCK = 256) for the kernels of
// tests/kernels/launch_contract.py, launched on more programs than tiles (or on a 2-D grid).
// A loop over tiles `for tile = pid to num_tiles step num_programs` would never run what those
// programs do, so persistent-tiles refuses each, at the op that shows it, and leaves the IR as it is.
// tests/test_persistent_tiles.py checks that these modules are still what Triton writes.
// RUN: irlab pass persistent-tiles --split-input-file %s | diff %s -
// RUN: irlab pass persistent-tiles --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s

module {
  // Programs past the tile count fill z (`if pid < num_tiles: copy else: zero z`): inside a loop over
  // tiles the else branch is dead.
  tt.func public @copy_or_fill(%arg0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg3: i32) attributes {noinline = false} {
    %cst = arith.constant dense<0.000000e+00> : tensor<256xf32>
    %c255_i32 = arith.constant 255 : i32
    %c256_i32 = arith.constant 256 : i32
    %0 = tt.get_program_id x : i32
    %1 = arith.addi %arg3, %c255_i32 : i32
    %2 = arith.divsi %1, %c256_i32 : i32
    %3 = arith.cmpi slt, %0, %2 : i32
    // CHECK: extra_programs.mlir:[[# @LINE + 1]]:5: note: refused: scf.if (line [[# @LINE + 1]]) branches on a value computed from the program id
    scf.if %3 {
      %4 = arith.muli %0, %c256_i32 : i32
      %5 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
      %6 = tt.splat %4 : i32 -> tensor<256xi32>
      %7 = arith.addi %6, %5 : tensor<256xi32>
      %8 = tt.splat %arg3 : i32 -> tensor<256xi32>
      %9 = arith.cmpi slt, %7, %8 : tensor<256xi32>
      %10 = tt.splat %arg1 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
      %11 = tt.addptr %10, %7 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
      %12 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
      %13 = tt.addptr %12, %7 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
      %14 = tt.load %13, %9 : tensor<256x!tt.ptr<f32>>
      tt.store %11, %14, %9 : tensor<256x!tt.ptr<f32>>
    } else {
      %4 = arith.subi %0, %2 : i32
      %5 = arith.muli %4, %c256_i32 : i32
      %6 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
      %7 = tt.splat %5 : i32 -> tensor<256xi32>
      %8 = arith.addi %7, %6 : tensor<256xi32>
      %9 = tt.splat %arg3 : i32 -> tensor<256xi32>
      %10 = arith.cmpi slt, %8, %9 : tensor<256xi32>
      %11 = tt.splat %arg2 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
      %12 = tt.addptr %11, %8 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
      tt.store %12, %cst, %10 : tensor<256x!tt.ptr<f32>>
    }
    tt.return
  }
}

// -----

module {
  // No branch: every program copies its tile, and a mask keyed to the program id (`zoffs >= 0`) makes
  // the programs past the tile count zero z.
  tt.func public @copy_and_clear(%arg0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg3: i32) attributes {noinline = false} {
    %cst = arith.constant dense<0.000000e+00> : tensor<256xf32>
    %c255_i32 = arith.constant 255 : i32
    %cst_0 = arith.constant dense<0> : tensor<256xi32>
    %c256_i32 = arith.constant 256 : i32
    %0 = tt.get_program_id x : i32
    %1 = arith.addi %arg3, %c255_i32 : i32
    %2 = arith.divsi %1, %c256_i32 : i32
    %3 = arith.muli %0, %c256_i32 : i32
    %4 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %5 = tt.splat %3 : i32 -> tensor<256xi32>
    %6 = arith.addi %5, %4 : tensor<256xi32>
    %7 = tt.splat %arg3 : i32 -> tensor<256xi32>
    %8 = arith.cmpi slt, %6, %7 : tensor<256xi32>
    %9 = tt.splat %arg1 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %10 = tt.addptr %9, %6 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %11 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %12 = tt.addptr %11, %6 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %13 = tt.load %12, %8 : tensor<256x!tt.ptr<f32>>
    tt.store %10, %13, %8 : tensor<256x!tt.ptr<f32>>
    %14 = arith.subi %0, %2 : i32
    %15 = arith.muli %14, %c256_i32 : i32
    %16 = tt.splat %15 : i32 -> tensor<256xi32>
    %17 = arith.addi %16, %4 : tensor<256xi32>
    // CHECK: extra_programs.mlir:[[# @LINE + 1]]:5: note: refused: %18 = arith.cmpi (line [[# @LINE + 1]]) compares a value computed from the program id and is not a tile's bound
    %18 = arith.cmpi sge, %17, %cst_0 : tensor<256xi32>
    %19 = arith.cmpi slt, %17, %7 : tensor<256xi32>
    %20 = arith.andi %18, %19 : tensor<256xi1>
    %21 = tt.splat %arg2 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %22 = tt.addptr %21, %17 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    tt.store %22, %cst, %20 : tensor<256x!tt.ptr<f32>>
    tt.return
  }
}

// -----

module {
  // A 2-D grid: programs (pid, 1) zero z where programs (pid, 0) copy.
  tt.func public @copy_grid_2d(%arg0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg3: i32) attributes {noinline = false} {
    %cst = arith.constant dense<0.000000e+00> : tensor<256xf32>
    %c0_i32 = arith.constant 0 : i32
    %c256_i32 = arith.constant 256 : i32
    %0 = tt.get_program_id x : i32
    %1 = arith.muli %0, %c256_i32 : i32
    %2 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %3 = tt.splat %1 : i32 -> tensor<256xi32>
    %4 = arith.addi %3, %2 : tensor<256xi32>
    %5 = tt.splat %arg3 : i32 -> tensor<256xi32>
    %6 = arith.cmpi slt, %4, %5 : tensor<256xi32>
    // CHECK: extra_programs.mlir:[[# @LINE + 1]]:5: note: refused: the program id is read along y; only a 1-D grid (axis x) is handled
    %7 = tt.get_program_id y : i32
    %8 = arith.cmpi eq, %7, %c0_i32 : i32
    scf.if %8 {
      %9 = tt.splat %arg1 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
      %10 = tt.addptr %9, %4 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
      %11 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
      %12 = tt.addptr %11, %4 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
      %13 = tt.load %12, %6 : tensor<256x!tt.ptr<f32>>
      tt.store %10, %13, %6 : tensor<256x!tt.ptr<f32>>
    } else {
      %9 = tt.splat %arg2 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
      %10 = tt.addptr %9, %4 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
      tt.store %10, %cst, %6 : tensor<256x!tt.ptr<f32>>
    }
    tt.return
  }
}

// -----

module {
  // The programs past the tile count, tl.num_programs(0) - num_tiles of them, zero z.
  tt.func public @copy_num_programs(%arg0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg3: i32) attributes {noinline = false} {
    %cst = arith.constant dense<0.000000e+00> : tensor<256xf32>
    %c255_i32 = arith.constant 255 : i32
    %cst_0 = arith.constant dense<0> : tensor<256xi32>
    %c256_i32 = arith.constant 256 : i32
    %0 = tt.get_program_id x : i32
    %1 = arith.addi %arg3, %c255_i32 : i32
    %2 = arith.divsi %1, %c256_i32 : i32
    %3 = arith.muli %0, %c256_i32 : i32
    %4 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %5 = tt.splat %3 : i32 -> tensor<256xi32>
    %6 = arith.addi %5, %4 : tensor<256xi32>
    %7 = tt.splat %arg3 : i32 -> tensor<256xi32>
    %8 = arith.cmpi slt, %6, %7 : tensor<256xi32>
    %9 = tt.splat %arg1 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %10 = tt.addptr %9, %6 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %11 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %12 = tt.addptr %11, %6 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %13 = tt.load %12, %8 : tensor<256x!tt.ptr<f32>>
    tt.store %10, %13, %8 : tensor<256x!tt.ptr<f32>>
    // CHECK: extra_programs.mlir:[[# @LINE + 1]]:5: note: refused: the kernel reads tt.get_num_programs, whose value the persistent launch changes
    %14 = tt.get_num_programs x : i32
    %15 = arith.subi %14, %2 : i32
    %16 = arith.subi %0, %2 : i32
    %17 = arith.muli %16, %c256_i32 : i32
    %18 = tt.splat %17 : i32 -> tensor<256xi32>
    %19 = arith.addi %18, %4 : tensor<256xi32>
    %20 = arith.cmpi sge, %19, %cst_0 : tensor<256xi32>
    %21 = arith.muli %15, %c256_i32 : i32
    %22 = tt.splat %21 : i32 -> tensor<256xi32>
    %23 = arith.cmpi slt, %19, %22 : tensor<256xi32>
    %24 = arith.andi %20, %23 : tensor<256xi1>
    %25 = arith.cmpi slt, %19, %7 : tensor<256xi32>
    %26 = arith.andi %24, %25 : tensor<256xi1>
    %27 = tt.splat %arg2 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %28 = tt.addptr %27, %19 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    tt.store %28, %cst, %26 : tensor<256x!tt.ptr<f32>>
    tt.return
  }
}

// -----

module {
  // Programs past the tile count zero z's first tile and return early (Triton writes the early
  // return as a second block).
  tt.func public @copy_early_return(%arg0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg3: i32) attributes {noinline = false} {
    %cst = arith.constant dense<0.000000e+00> : tensor<256xf32>
    %c255_i32 = arith.constant 255 : i32
    %c256_i32 = arith.constant 256 : i32
    %0 = tt.get_program_id x : i32
    %1 = arith.addi %arg3, %c255_i32 : i32
    %2 = arith.divsi %1, %c256_i32 : i32
    %3 = arith.cmpi sge, %0, %2 : i32
    cf.cond_br %3, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    %4 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %5 = tt.splat %arg3 : i32 -> tensor<256xi32>
    %6 = arith.cmpi slt, %4, %5 : tensor<256xi32>
    %7 = tt.splat %arg2 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %8 = tt.addptr %7, %4 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    tt.store %8, %cst, %6 : tensor<256x!tt.ptr<f32>>
    // CHECK: extra_programs.mlir:[[# @LINE + 1]]:5: note: refused: the kernel returns early, at tt.return (line [[# @LINE + 1]])
    tt.return
  ^bb2:  // pred: ^bb0
    %9 = arith.muli %0, %c256_i32 : i32
    %10 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %11 = tt.splat %9 : i32 -> tensor<256xi32>
    %12 = arith.addi %11, %10 : tensor<256xi32>
    %13 = tt.splat %arg3 : i32 -> tensor<256xi32>
    %14 = arith.cmpi slt, %12, %13 : tensor<256xi32>
    %15 = tt.splat %arg1 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %16 = tt.addptr %15, %12 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %17 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %18 = tt.addptr %17, %12 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %19 = tt.load %18, %14 : tensor<256x!tt.ptr<f32>>
    tt.store %16, %19, %14 : tensor<256x!tt.ptr<f32>>
    tt.return
  }
}
