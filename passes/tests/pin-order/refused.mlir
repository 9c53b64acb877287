// Orders that would move a load across an op it must stay ordered with: refused with that op
// named, the IR unchanged byte for byte.
// RUN: irlab pass 'pin-order{order=tt.load:1,tt.load:0,pin=none}' --split-input-file %s | diff %s -
// RUN: irlab pass 'pin-order{order=tt.load:1,tt.load:0,pin=none}' --split-input-file %s --explain 2>&1 >/dev/null | filecheck %s

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @barrier(%p: !tt.ptr<f16>, %q: !tt.ptr<f16>, %out: !tt.ptr<f16>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: %y = tt.load (line [[# @LINE + 2]]) (reads global memory) would cross gpu.barrier (line [[# @LINE + 3]]), which synchronizes
    scf.for %i = %c0 to %n step %c1  : i32 {
      %y = tt.load %q : !tt.ptr<f16>
      gpu.barrier
      %x = tt.load %p : !tt.ptr<f16>
      %s = arith.addf %x, %y : f16
      tt.store %out, %s : !tt.ptr<f16>
    }
    tt.return
  }
}

// -----

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @store_between(%p: !tt.ptr<f16>, %q: !tt.ptr<f16>, %out: !tt.ptr<f16>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %h = arith.constant 1.000000e+00 : f16
    // A store to another pointer: irlab does no alias analysis, so no load crosses it.
    // CHECK: refused.mlir:[[# @LINE + 1]]:5: note: refused: %y = tt.load (line [[# @LINE + 2]]) (reads global memory) would cross tt.store (line [[# @LINE + 3]]), which writes global memory
    scf.for %i = %c0 to %n step %c1  : i32 {
      %y = tt.load %q : !tt.ptr<f16>
      tt.store %out, %h : !tt.ptr<f16>
      %x = tt.load %p : !tt.ptr<f16>
      %s = arith.addf %x, %y : f16
      tt.store %out, %s : !tt.ptr<f16>
    }
    tt.return
  }
}
