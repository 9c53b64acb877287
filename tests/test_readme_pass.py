"""The "Writing a pass" example of docs/passes.md is a working pass: it is extracted from the page,
run on real compiler output and on a nested loop, and Triton accepts what it produces."""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.kernels import KERNELS
from irlab.passkit.registry import make_pass

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "passes.md"


@pytest.fixture(scope="module")
def hoist_splats(tmp_path_factory):
    """The guide's block saved as a pass file and loaded the way IRLAB_PASS_PATH files are."""
    section = GUIDE.read_text().split("### Writing a pass", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) < 40
    path = tmp_path_factory.mktemp("readme") / "hoist_splats.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location("readme_hoist_splats", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return lambda m: run_pass(make_pass("hoist-splats"), m)


NESTED = """module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32, ttg.target = "cuda:80"} {
  tt.func public @k(%x: f32, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant dense<0.000000e+00> : tensor<128xf32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<128xf32>)  : i32 {
      %r2 = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> (tensor<128xf32>)  : i32 {
        %s = tt.splat %x : f32 -> tensor<128xf32>
        %f = arith.sitofp %j : i32 to f32
        %t = tt.splat %f : f32 -> tensor<128xf32>
        %u = arith.addf %b, %s : tensor<128xf32>
        %v = arith.addf %u, %t : tensor<128xf32>
        scf.yield %v : tensor<128xf32>
      }
      scf.yield %r2 : tensor<128xf32>
    }
    tt.return
  }
}
"""


def test_hoists_out_of_nested_loops_and_keeps_variant_splats(hoist_splats):
    m = ir.parse(NESTED)
    res = hoist_splats(m)
    assert res.changed and res.verified
    func = m.first("tt.func").body
    assert [o.name for o in func.ops][:4] == ["arith.constant", "arith.constant", "arith.constant", "tt.splat"]
    inner = m.find("scf.for")[1]
    assert [o.name for o in inner.body.ops].count("tt.splat") == 1   # %t depends on %j: it stays
    assert any("changes from one iteration to the next" in d.message for d in res.diagnostics)


def test_on_a_real_kernel(hoist_splats):
    """The kernel the guide runs it on: one splat of the Gluon GEMM's K loop leaves the loop."""
    section = GUIDE.read_text().split("### Writing a pass", 1)[1].split("\n### ", 1)[0]
    assert "--kernel gluon_gemm_prefetch --target cuda:90" in section
    text = compile_kernel(KERNELS["gluon_gemm_prefetch"], "cuda:90").text("ttgir", locations=False)
    m = ir.parse(text)
    res = hoist_splats(m)
    assert res.changed and res.verified
    assert [c.kind for c in res.changes] == ["moved"] and "loop-invariant splat" in str(res.changes[0])
    assert all(o.src.defined_outside(o.parent_op) is False for o in m.walk()
               if o.name == "tt.splat" and o.parent_op is not None and o.parent_op.name == "scf.for")
