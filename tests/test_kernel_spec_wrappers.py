"""KernelSpec with less ceremony: an ``@triton.autotune``d fn (its configs become the config space),
an ``@triton.heuristics`` one (its heuristics fill the meta-parameters bind leaves out), and a
``bind`` that takes the target; all cross-compiled for cuda:90 and hip:gfx942 without a GPU."""
from __future__ import annotations

import pytest
import triton
import triton.language as tl

from irlab import KernelError, KernelSpec, Problem, TileConfig
from irlab.bridge.compile import compile_kernel


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=4, num_stages=2),
                          triton.Config({"BLOCK": 1024}, num_warps=8, num_stages=3)], key=["n"])
@triton.jit
def tuned_scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})
@triton.jit
def even_scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)
    else:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def bind(shape, cfg):
    return Problem({"x_ptr": "*fp32", "y_ptr": "*fp32", "n": shape["n"]}, dict(cfg.meta), cfg.options())


TARGETS_SEEN = []


def bind_per_target(shape, cfg, target):
    TARGETS_SEEN.append(str(target))
    dtype = "*fp16" if target.is_amd else "*fp32"
    return Problem({"x_ptr": dtype, "y_ptr": dtype, "n": shape["n"]}, dict(cfg.meta), cfg.options())


def test_an_autotuned_fn_s_configs_become_the_config_space():
    spec = KernelSpec(name="tuned", fn=tuned_scale, default_shape={"n": 4096}, bind=bind)
    assert list(spec.configs) == ["256-w4-s2", "1024-w8-s3"] and spec.default_config == "256-w4-s2"
    assert spec.configs["1024-w8-s3"].meta == {"BLOCK": 1024}
    assert spec.fn is tuned_scale.fn and spec.wrapper is tuned_scale
    for target in ("cuda:90", "hip:gfx942"):
        r = compile_kernel(spec, target, config="1024-w8-s3")
        assert r.metadata["num_warps"] == 8 and "1024" in r.text("ttir")


def test_given_configs_win_over_the_autotuner_s():
    spec = KernelSpec(name="tuned", fn=tuned_scale, configs={"mine": TileConfig("mine", {"BLOCK": 512}, 4, 2)},
                      default_config="mine", default_shape={"n": 4096}, bind=bind)
    assert list(spec.configs) == ["mine"]


def test_heuristics_fill_what_bind_leaves_out():
    spec = KernelSpec(name="even", fn=even_scale, configs={"b": TileConfig("b", {"BLOCK": 1024})}, default_config="b",
                      default_shape={"n": 4096}, bind=bind)
    assert spec.problem().constexprs == {"BLOCK": 1024, "EVEN": True}
    assert spec.problem({"n": 4000}).constexprs["EVEN"] is False
    for target in ("cuda:90", "hip:gfx942"):
        even = compile_kernel(spec, target).text("ttir")
        ragged = compile_kernel(spec, target, shape={"n": 4000}).text("ttir")
        assert "arith.cmpi" not in even and "arith.cmpi" in ragged    # the mask only where n is ragged


def test_bind_may_take_the_target():
    TARGETS_SEEN.clear()
    spec = KernelSpec(name="tuned", fn=tuned_scale, default_shape={"n": 4096}, bind=bind_per_target)
    assert "f16" in compile_kernel(spec, "hip:gfx942").text("ttir")
    assert "f32" in compile_kernel(spec, "cuda:90").text("ttir") and TARGETS_SEEN == ["hip:gfx942", "cuda:90"]
    from irlab.base.targets import Target
    assert spec.problem(target=Target.parse("hip:gfx950")).args["x_ptr"] == "*fp16"

def test_a_spec_without_configs_or_an_autotuner_is_an_error():
    with pytest.raises(KernelError, match="give configs"):
        KernelSpec(name="plain", fn=tuned_scale.fn, default_shape={"n": 1}, bind=bind)
