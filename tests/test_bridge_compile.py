"""The compile API: every stage for every target without a GPU, with the JIT's specialization."""
from __future__ import annotations

import pytest

from irlab.bridge.compile import compile_kernel
from irlab.bridge.specialize import SpecializationError, specialize
from irlab.passkit.variant import VariantError
from irlab.kernels import KERNELS
from irlab.base.targets import TargetError, parse_target

STAGES = {"cuda:80": ["ttir", "ttgir", "llir", "ptx", "cubin"], "cuda:90": ["ttir", "ttgir", "llir", "ptx", "cubin"],
          "hip:gfx942": ["ttir", "ttgir", "llir", "amdgcn", "hsaco"]}


@pytest.mark.parametrize("target", sorted(STAGES))
def test_all_stages_for_every_target(target):
    res = compile_kernel(KERNELS["gemm_fp16"], target)
    for stage in STAGES[target]:
        assert res.asm.get(stage), stage
    assert isinstance(res.binary, bytes) and len(res.binary) > 1000
    assert res.nodebug["ttgir"] and "loc(" not in res.nodebug["ttgir"] and "loc(" in res.asm["ttgir"]
    assert res.metadata["num_warps"] == 8 and res.metadata["target"] == target
    assert set(res.stage_seconds) >= set(STAGES[target])
    assert res.module("ttgir").target == target


def test_specialization_matches_the_jit_rules():
    spec = KERNELS["gemm_fp16"]
    p = spec.problem({"M": 4096, "N": 4096, "K": 4096})
    s = specialize(spec.fn, p.args, p.constexprs, parse_target("cuda:90"))
    # strides equal to 1 become constants, like the JIT does for real tensors
    assert s.signature["stride_ak"] == "constexpr" and s.constexprs["stride_ak"] == 1
    # pointers and multiples of 16 get tt.divisibility = 16
    names = list(spec.fn.arg_names)
    for name in ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am"):
        assert s.attrs[(names.index(name),)] == [["tt.divisibility", 16]], name
    # an odd size is specialized as a plain i32
    odd = specialize(spec.fn, {**p.args, "M": 4095}, p.constexprs, parse_target("cuda:90"))
    assert (names.index("M"),) not in odd.attrs and odd.signature["M"] == "i32"
    # AMD: pointers into buffers under 2 GB also get tt.pointer_range = 32 (buffer ops)
    h = specialize(spec.fn, p.args, p.constexprs, parse_target("hip:gfx942"))
    assert ["tt.pointer_range", 32] in h.attrs[(names.index("a_ptr"),)]


def test_divisibility_reaches_the_ir():
    ttir = compile_kernel(KERNELS["gemm_fp16"], "cuda:80").text("ttir")
    assert "%a_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}" in ttir
    odd = compile_kernel(KERNELS["gemm_fp16"], "cuda:80", shape={"M": 4095, "N": 4096, "K": 4096})
    assert "%M: i32 {tt.divisibility" not in odd.text("ttir") and "%M: i32" in odd.text("ttir")


def test_gluon_kernel_and_options():
    res = compile_kernel(KERNELS["gluon_gemm_prefetch"], "cuda:80", config="128x256x32-w8")
    assert res.metadata["num_warps"] == 8
    assert "ttir" not in res.asm or not res.asm.get("ttir")  # Gluon starts at TTGIR
    assert res.module("ttgir").first("scf.for") is not None
    with pytest.raises(VariantError, match="cannot be compiled for hip:gfx942: written with NVIDIA mma_v2"):
        compile_kernel(KERNELS["gluon_gemm_prefetch"], "hip:gfx942")


def test_raw_function_with_explicit_arguments():
    from irlab.kernels.softmax import softmax_kernel
    res = compile_kernel(softmax_kernel, "cuda:80", args={"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": 1024,
                                                         "out_row_stride": 1024, "n_cols": 1000},
                         constexprs={"BLOCK_SIZE": 1024}, options={"num_warps": 4})
    assert res.kernel == "softmax_kernel" and res.asm["cubin"]
    with pytest.raises(SpecializationError, match="no parameter"):
        compile_kernel(softmax_kernel, "cuda:80", args={"bogus": 1}, constexprs={"BLOCK_SIZE": 1024})
    with pytest.raises(SpecializationError, match="no value or type for parameter 'n_cols'"):
        compile_kernel(softmax_kernel, "cuda:80", args={"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": 16,
                                                       "out_row_stride": 16}, constexprs={"BLOCK_SIZE": 1024})


def test_bad_target_string():
    with pytest.raises(TargetError, match="bad target 'sm90'"):
        parse_target("sm90")


def test_a_target_is_parsed_once_where_it_enters(monkeypatch):
    """compile_kernel takes the target as text or a Target and parses it once; everything below it
    (specialization, the stages hook, the passes' services) is handed the Target."""
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    from irlab.bridge.named_variants import resolve
    from irlab.base.targets import Target
    variant = resolve("optimize-epilogue", "cuda:90")
    seen = []
    parse = Target.parse.__func__
    monkeypatch.setattr(Target, "parse", classmethod(lambda cls, text: seen.append(text) or parse(cls, text)))
    compile_kernel(get("gemm_fp16"), "cuda:90", variant=variant)
    assert seen == ["cuda:90"], seen
