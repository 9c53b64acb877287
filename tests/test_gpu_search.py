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
    assert status == {"baseline": "ok", "identity": "ok", "square-output": "wrong"}, status
