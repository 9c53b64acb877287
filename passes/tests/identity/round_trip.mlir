// The identity pass prints the IR back byte for byte, comments and blank lines included, and says
// how many ops it read (the module and the function count).
// RUN: irlab pass identity %s | diff %s -
// RUN: irlab pass identity %s --explain 2>&1 >/dev/null | filecheck %s
// CHECK: note: left all 10 ops unchanged (identity pass)

#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @copy(%src: !tt.ptr<f32> {tt.divisibility = 16 : i32},   %dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %offs = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #blocked>

    %in = tt.splat %src : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #blocked>   // odd spacing is kept
    %in_ptrs = tt.addptr %in, %offs : tensor<512x!tt.ptr<f32>, #blocked>, tensor<512xi32, #blocked>
    %x = tt.load %in_ptrs : tensor<512x!tt.ptr<f32>, #blocked>
    %out = tt.splat %dst : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #blocked>
    %out_ptrs = tt.addptr %out, %offs : tensor<512x!tt.ptr<f32>, #blocked>, tensor<512xi32, #blocked>
    tt.store %out_ptrs, %x : tensor<512x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
