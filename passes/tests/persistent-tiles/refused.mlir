// Kernels persistent-tiles leaves alone, each with the reason at the op that stops it, and the IR
// unchanged byte for byte.
// RUN: irlab pass persistent-tiles --split-input-file %s | diff %s -
// RUN: irlab pass persistent-tiles --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s

module {
  // An atomic add per element: a loop would change what it orders.
  tt.func public @atomic(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: %old = tt.atomic_rmw (line [[# @LINE + 1]]) reads global memory, writes global memory, synchronizes
    %old = tt.atomic_rmw fadd, relaxed, gpu, %yp, %v, %mask : (tensor<1024x!tt.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> tensor<1024xf32>
    tt.return
  }
}

// -----

module {
  // A second grid axis (split-K reads program_id(1)).
  tt.func public @two_axes(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: the program id is read along y; only a 1-D grid (axis x) is handled
    %pid_y = tt.get_program_id y : i32
    %ky = arith.muli %pid_y, %c1024 : i32
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %yp, %v, %mask : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}

// -----

module {
  // The grid's y axis alone.
  tt.func public @axis_y(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: the program id is read along y; only a 1-D grid (axis x) is handled
    %pid = tt.get_program_id y : i32
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %yp, %v, %mask : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}

// -----

module {
  // Already persistent: it reads the number of programs.
  tt.func public @persistent(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: the kernel reads tt.get_num_programs
    %np = tt.get_num_programs x : i32
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %yp, %v, %mask : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}

// -----

module {
  // The tile count is not computed in the kernel (the launcher's cdiv only).
  tt.func public @no_cdiv(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: the kernel does not compute cdiv(%n, 1024) ((%n + 1023) / 1024), the number of tiles along axis 0
    tt.store %yp, %v, %mask : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}

// -----

module {
  // The kernel computes cdiv(n, 512), not cdiv(n, 1024): another count than its tiles'.
  tt.func public @other_cdiv(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %c511 = arith.constant 511 : i32
    %c512 = arith.constant 512 : i32
    %sum = arith.addi %n, %c511 : i32
    %tiles = arith.divsi %sum, %c512 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: the kernel does not compute cdiv(%n, 1024)
    tt.store %yp, %v, %mask : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}

// -----

module {
  // No mask on the store: the extent, and so the tile count, is unknown.
  tt.func public @no_mask(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: the store has no mask
    tt.store %yp, %v : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}

// -----

module {
  // A store that is not per tile: every program writes the same block.
  tt.func public @not_per_tile(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %same = tt.addptr %yb, %range : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: the store's tile does not move with the program id (not a per-tile store)
    tt.store %same, %v, %mask : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}

// -----

module {
  // A print in the kernel may do anything.
  tt.func public @print(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %yp, %v, %mask : tensor<1024x!tt.ptr<f32>>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: tt.print (line [[# @LINE + 1]]) may do anything
    tt.print ": " {hex = false, isSigned = array<i32: 1>} : %pid : i32
    tt.return
  }
}

// -----

module {
  // A tile start that is not a multiple of the tile size (overlapping tiles).
  tt.func public @overlap(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1023 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: the store's tile start %start along axis 0 is not a multiple of the tile size 1024
    tt.store %yp, %v, %mask : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}
