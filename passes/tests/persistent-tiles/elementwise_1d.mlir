// A 1-D tile-per-program kernel (y = x over blocks of 1024, the tile count cdiv(n, 1024) computed in
// the kernel): its per-tile work moves into a loop over tiles from the program id in steps of the
// number of programs; what does not depend on the tile stays before the loop.
// RUN: irlab pass persistent-tiles %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass persistent-tiles %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: irlab pass 'persistent-tiles{flatten=true}' %s | grep -v '^ *//' | filecheck %s --check-prefix=FLATTEN

module {
  // CHECK-LABEL: tt.func public @copy
  tt.func public @copy(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    // CHECK: %[[PID:.*]] = tt.get_program_id x : i32
    // REMARK: elementwise_1d.mlir:[[# @LINE + 1]]:5: remark: the per-tile work now loops over tiles %pid .. cdiv(%n, 1024) - 1
    %pid = tt.get_program_id x : i32
    // CHECK-NEXT: %[[SUM:.*]] = arith.addi %n, %c1023
    // CHECK-NEXT: %[[TILES:.*]] = arith.divsi %[[SUM]], %c1024
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    // CHECK-NEXT: %range = tt.make_range
    // CHECK-NEXT: %nn = tt.splat %n
    // CHECK-NEXT: %xb = tt.splat %x
    // CHECK-NEXT: %yb = tt.splat %y
    // CHECK-NEXT: %[[NPROG:.*]] = tt.get_num_programs x : i32
    // CHECK-NEXT: scf.for %[[TILE:.*]] = %[[PID]] to %[[TILES]] step %[[NPROG]]  : i32 {
    // CHECK-NEXT: %start = arith.muli %[[TILE]], %c1024
    // CHECK: tt.load
    // CHECK: tt.store
    // CHECK-NEXT: scf.yield
    // CHECK-NEXT: } {irlab.persistent_tiles, irlab.tile_count = "cdiv(arg2, 1024)"}
    // CHECK-NEXT: tt.return
    // FLATTEN: } {irlab.persistent_tiles, irlab.tile_count = "cdiv(arg2, 1024)", tt.flatten}
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
