"""Record a tritonparse trace of a real run on a GPU: the walkthrough's bias + ReLU GEMM launched
through Triton's JIT at two shapes, with launch tracing on. The trace is irlab's test data for
replaying a recorded production run (tests/data/traces/).

    python examples/record_trace.py OUT_DIR
"""
import sys
from pathlib import Path

import torch
import tritonparse.structured_logging as sl

sl.init(sys.argv[1], enable_trace_launch=True)   # before the first compile of this process
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "walkthrough"))
from bias_relu_gemm import SPEC  # noqa: E402

for shape in ({"M": 1024, "N": 1024, "K": 1024}, {"M": 2048, "N": 1024, "K": 512}):
    inputs = SPEC.make_inputs(shape)
    cfg = SPEC.config()
    grid, args = SPEC.launch_args(inputs, shape, cfg)
    SPEC.fn[grid](*args.values(), num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    torch.cuda.synchronize()
    err = (inputs["c"].float() - SPEC.reference({k: v.float() for k, v in inputs.items()})).norm() / \
        SPEC.reference({k: v.float() for k, v in inputs.items()}).norm()
    print(f"launched {shape}: relative error {float(err):.2e}")
