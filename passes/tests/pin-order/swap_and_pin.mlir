// order=tt.load:1,tt.load:0: the second load goes first, with the address math it needs, and a
// rocdl.sched.barrier after it keeps the AMDGPU scheduler from undoing that (Triton 3.9 prints
// the mask 0 as `none`).
// RUN: irlab pass 'pin-order{order=tt.load:1,tt.load:0}' %s | grep -v '^ *//' | filecheck %s
// RUN: irlab pass 'pin-order{order=tt.load:1,tt.load:0}' %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @two_loads(%p: !tt.ptr<f16>, %q: !tt.ptr<f16>, %out: !tt.ptr<f16>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // REMARK: swap_and_pin.mlir:[[# @LINE + 1]]:5: remark: ordered tt.load:1 (%x = tt.load (line [[# @LINE + 11]])), tt.load:0 (%y = tt.load (line [[# @LINE + 8]])): 3 op(s) moved, 2 producer(s) moved up with them; 1 rocdl.sched.barrier 0 pin(s)
    scf.for %i = %c0 to %n step %c1  : i32 {
      // CHECK:      %off = arith.addi %i, %i
      // CHECK-NEXT: %p2 = tt.addptr %p, %off
      // CHECK-NEXT: %x = tt.load %p2
      // CHECK-NEXT: rocdl.sched.barrier {{0|none}}
      // CHECK-NEXT: %y = tt.load %q
      // CHECK-NEXT: %s = arith.addf %x, %y
      %y = tt.load %q : !tt.ptr<f16>
      %off = arith.addi %i, %i : i32
      %p2 = tt.addptr %p, %off : !tt.ptr<f16>, i32
      %x = tt.load %p2 : !tt.ptr<f16>
      %s = arith.addf %x, %y : f16
      tt.store %out, %s : !tt.ptr<f16>
    }
    tt.return
  }
}
