// Triton loads the proton dialect only inside Proton's instrumentation session and aborts on an op
// of a dialect it has not loaded, so outside `irlab profile --scopes` the pass refuses: an error
// naming the command to use, exit status 1, no IR on stdout. (Where the records go is tested
// through `irlab profile --compile-only` in tests/test_profile.py.)
// RUN: not irlab pass proton-scopes %s 2>&1 >/dev/null | filecheck %s
// RUN: not irlab pass proton-scopes %s 2>/dev/null | diff /dev/null -
// CHECK: outside_proton.mlir:1: error: proton-scopes writes proton.record ops, and Triton loads the proton dialect only while Proton's instrumentation is active
// CHECK-SAME: run it through `irlab profile --scopes ...`

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @kernel() {
    tt.return
  }
}
