"""On a GPU: JIT launches are captured, compile-API results launch, and JIT variants keep their
own binaries (baseline, variant, baseline again)."""
from __future__ import annotations

import json

import pytest

from irlab.program.capture import Capture
from irlab.bridge.compile import compile_kernel
from irlab.bridge.jit import jit_variant
from irlab.passkit.variant import Drop, Variant
from irlab.kernels import KERNELS
from irlab.base.targets import current_target

pytestmark = pytest.mark.gpu

NO_PIPELINE = Variant("no-pipeline", (Drop("ttgpuir.pipeline"),))


def _jit_launch(spec, inputs, shape, cfg):
    import torch
    grid, args = spec.launch_args(inputs, shape, cfg)
    kernel = spec.fn[grid](**args, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    torch.cuda.synchronize()
    return kernel


def test_jit_launches_are_captured(tmp_path):
    import torch
    spec = KERNELS["softmax"]
    shape, cfg = {"M": 64, "N": 3000}, spec.config("4096-w8")
    inputs = spec.make_inputs(shape, "cuda")
    with Capture(tmp_path / "run"):
        with jit_variant(spec.fn, Variant.baseline(), cache_dir=tmp_path / "cache"):
            _jit_launch(spec, inputs, shape, cfg)
    index = json.loads((tmp_path / "run" / "index.json").read_text())
    assert len(index) == 1 and index[0]["kernel"] == "softmax_kernel"
    assert index[0]["binary"]["stage"] == "cubin" and index[0]["num_warps"] == 8
    torch.testing.assert_close(inputs["y"], spec.reference(inputs), rtol=1e-5, atol=1e-6)


def test_compile_api_result_launches():
    import torch
    spec = KERNELS["gemm_fp16"]
    shape, cfg = {"M": 512, "N": 512, "K": 512}, spec.config()
    res = compile_kernel(spec, current_target(), shape=shape)
    inputs = spec.make_inputs(shape, "cuda")
    grid, args = spec.launch_args(inputs, shape, cfg)
    res.compiled[grid](*args.values())
    torch.cuda.synchronize()
    torch.testing.assert_close(inputs["c"], spec.reference(inputs), rtol=1e-2, atol=1e-2)


def test_jit_variant_baseline_variant_baseline(tmp_path):
    import torch
    spec = KERNELS["gemm_fp16"]
    shape, cfg = {"M": 512, "N": 512, "K": 512}, spec.config()
    inputs = spec.make_inputs(shape, "cuda")
    a = _jit_launch(spec, inputs, shape, cfg)
    out_a = inputs["c"].clone()
    inputs["c"].fill_(float("nan"))
    with jit_variant(spec.fn, NO_PIPELINE, cache_dir=tmp_path / "variant-cache"):
        b = _jit_launch(spec, inputs, shape, cfg)
    out_b = inputs["c"].clone()
    c = _jit_launch(spec, inputs, shape, cfg)
    assert a.asm["cubin"] == c.asm["cubin"]
    assert b.asm["cubin"] != a.asm["cubin"]
    ref = spec.reference(inputs)
    torch.testing.assert_close(out_a, ref, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(out_b, ref, rtol=1e-2, atol=1e-2)
    # the variant entered again is served its own binary, not the baseline's
    with jit_variant(spec.fn, NO_PIPELINE, cache_dir=tmp_path / "variant-cache"):
        d = _jit_launch(spec, inputs, shape, cfg)
    assert d.asm["cubin"] == b.asm["cubin"]
