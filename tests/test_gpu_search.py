"""On a GPU: irlab ab on a user's kernel file (correctness gate, headline against the best config,
the library column), and on a launch recorded with tritonparse (the baseline's output as the
reference, a wrong variant caught)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parent.parent
USER_KERNEL = ROOT / "docs" / "walkthrough" / "bias_relu_gemm.py"
TEST_PASSES = str(Path(__file__).parent / "passes_for_tests")


def irlab(*args, env=None):
    import os
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def test_ab_on_a_user_kernel_file(tmp_path):
    r = irlab("ab", "--kernel", str(USER_KERNEL), "--variants", "optimize-epilogue,square-output",
              "--shapes", "2048x2048x2048", "--configs", "128x128x64-w8,128x256x64-w8", "--rounds", "5",
              "--screen-rounds", "3", "--out", str(tmp_path), env={"IRLAB_PASS_PATH": TEST_PASSES})
    assert r.returncode == 0, r.stderr[-3000:]
    readme = (tmp_path / "README.md").read_text()
    assert "## Headline: against Triton's tuned best" in readme
    screen = [json.loads(line) for p in tmp_path.glob("screen*.jsonl") for line in p.read_text().splitlines()]
    wrong = [e for e in screen if e.get("label") == "square-output"]
    assert wrong and all(e["status"] == "wrong" for e in wrong)   # caught by the gate, never timed
    ok = [e for e in screen if e.get("label") == "optimize-epilogue" and e.get("status") == "ok"]
    assert ok and all(e["check"]["rel_error"] < 2e-3 for e in ok)
    head = [json.loads(line) for p in tmp_path.glob("headline*.jsonl") for line in p.read_text().splitlines()]
    assert any(e.get("label") == "library" and e.get("status") == "ok" for e in head)


def test_ab_on_a_launch_recorded_with_tritonparse(tmp_path):
    pytest.importorskip("tritonparse", reason="tritonparse records the launch (pip install tritonparse)")
    script = tmp_path / "run.py"
    script.write_text(f"""
import sys, torch, triton
import tritonparse.structured_logging as sl
sl.init({str(tmp_path / 'trace')!r}, enable_trace_launch=True)
sys.path.insert(0, {str(USER_KERNEL.parent)!r})
from bias_relu_gemm import SPEC
shape = {{"M": 1024, "N": 1024, "K": 1024}}
inputs = SPEC.make_inputs(shape)
cfg = SPEC.config()
grid, args = SPEC.launch_args(inputs, shape, cfg)
SPEC.fn[grid](*args.values(), num_warps=cfg.num_warps, num_stages=cfg.num_stages)
torch.cuda.synchronize()
""")
    assert subprocess.run([sys.executable, str(script)], capture_output=True, text=True).returncode == 0
    trace = next((tmp_path / "trace").glob("dedicated_log_triton_trace_*"))
    r = irlab("ab", "--kernel", str(trace), "--variants", "identity,square-output", "--rounds", "5",
              "--out", str(tmp_path / "ab"), env={"IRLAB_PASS_PATH": TEST_PASSES})
    assert r.returncode == 0, r.stderr[-3000:]
    screen = [json.loads(line) for p in (tmp_path / "ab").glob("screen*.jsonl") for line in p.read_text().splitlines()]
    status = {e["label"]: e["status"] for e in screen if e.get("type") == "entry"}
    assert status == {"baseline": "ok", "square-output": "wrong"}, status   # identity is the baseline's binary
    summary = json.loads((tmp_path / "ab" / "summary.json").read_text())
    same = {r["variant"]: r["same_binary_as"] for r in summary["no_change"]}
    assert same == {"identity": "baseline"}, same


def test_capture_records_launches_that_replay_and_time_without_the_script(tmp_path):
    """irlab capture on a script that launches the walkthrough kernel (its sibling module imported,
    the grid a lambda, one shape twice and another once): launches.jsonl has both launches with
    their counts; the saved tensors rebuild the inputs, and relaunching the recompiled kernel on them
    reproduces the script's output; irlab ab times the captured launch as a variant."""
    import torch
    from irlab.program import launches
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "shapes.py").write_text("SHAPES = [1024, 1024, 512]\n")
    script = tmp_path / "job" / "run.py"
    script.write_text(f"""
import sys, torch
sys.path.insert(0, {str(USER_KERNEL.parent)!r})
from bias_relu_gemm import SPEC
from shapes import SHAPES
for n in SHAPES:
    shape = {{"M": n, "N": n, "K": n}}
    inputs = SPEC.make_inputs(shape)
    cfg = SPEC.config()
    grid, args = SPEC.launch_args(inputs, shape, cfg)
    SPEC.fn[lambda meta: grid](*args.values(), num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    torch.cuda.synchronize()
    torch.save(inputs, {str(tmp_path)!r} + f"/out{{n}}.pt")
""")
    r = irlab("capture", "--out", str(tmp_path / "cap"), "--save-tensors", "--", str(script))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "2 distinct launch(es) (3 in all: 3 program)" in r.stderr
    folder = next((tmp_path / "cap").glob("*.w*s*.*"))
    recs = [json.loads(line) for line in (folder / "launches.jsonl").read_text().splitlines()]
    assert [r["count"] for r in recs] == [2, 1]
    launch = launches.load(f"{folder}#1")
    inputs = launch.make_inputs()
    res = launch.recompile()
    res.compiled[launch.grid](*launch.launch_values(inputs))
    torch.cuda.synchronize()
    out = torch.load(tmp_path / "out512.pt")
    torch.testing.assert_close(inputs["a_ptr"], out["a"].to(inputs["a_ptr"].device), rtol=0, atol=0)
    torch.testing.assert_close(inputs["c_ptr"], out["c"].to(inputs["c_ptr"].device), rtol=2e-3, atol=2e-3)
    r = irlab("ab", "--kernel", f"{folder}#1", "--variants", "identity", "--rounds", "3",
              "--out", str(tmp_path / "ab"), env={"IRLAB_PASS_PATH": TEST_PASSES})
    assert r.returncode == 0, r.stderr[-3000:]
