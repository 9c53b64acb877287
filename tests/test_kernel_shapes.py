"""The problem-shape helpers (irlab.kernels.shapes): a kernel's ``bind`` (a cross-compile, from the
shape) and its ``launch_args`` (a launch, from the tensors) say the same thing, for every kernel of
the corpus, the calibration and the tests; a launch on tensors laid out otherwise than a kernel
assumes is refused; messages about a spec built by a helper name the kernel's own file."""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from irlab.kernels import KERNELS, specs_in_file  # noqa: E402
from irlab.kernels.shapes import GEMM_STRIDES, RowMajorGemm, RowWise, TileConfig  # noqa: E402
from irlab.kernels.spec import KernelError, ParameterError, parameters  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ELEMENT = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "i8": torch.int8,
           "i32": torch.int32, "fp8e4nv": torch.float8_e4m3fn}


def _specs():
    specs = dict(KERNELS)
    for folder in ("irlab/kernels/calibration", "tests/kernels"):
        for f in sorted((ROOT / folder).glob("[a-z]*.py")):
            try:
                found = specs_in_file(f)
            except KernelError:     # kernels without a spec (a test compiles them itself)
                continue
            specs.update({f"{folder}/{f.stem}:{var}": spec for var, spec in found})
    return {k: s for k, s in specs.items() if s.make_inputs is not None and s.launch_args is not None}


SPECS = _specs()


@pytest.mark.parametrize("key", sorted(SPECS))
def test_what_a_launch_passes_is_what_bind_compiled_in(key):
    spec = SPECS[key]
    # small, and a different size per dimension, so that a stride taken from the wrong one shows
    sizes = {"M": 256, "N": 192, "K": 128}
    shape = spec.shape({k: sizes.get(k, min(v, 256)) for k, v in spec.default_shape.items()})
    cfg = spec.config()
    problem = spec.problem(shape, cfg)
    bound = {**problem.args, **problem.constexprs}
    inputs = spec.make_inputs(shape, "cpu", 0)
    _, values = spec.launch_call(inputs, shape, cfg)
    for (name, _), value in zip(parameters(spec.fn), values):
        if isinstance(bound[name], str):     # a pointer: a tensor of its element type
            assert isinstance(value, torch.Tensor) and value.dtype == ELEMENT[bound[name][1:]], (key, name)
        else:
            assert value == bound[name], (key, name, value, bound[name])


def test_gemm_inputs_are_the_draws_they_always_were():
    """gemm_fp16's A and B: normal fp16 draws from one generator, A first; C full of NaN."""
    shape = {"M": 64, "N": 48, "K": 32}
    inputs = KERNELS["gemm_fp16"].make_inputs(shape, "cpu", 3)
    g = torch.Generator().manual_seed(3)
    assert torch.equal(inputs["a"], torch.randn((64, 32), dtype=torch.float16, generator=g))
    assert torch.equal(inputs["b"], torch.randn((32, 48), dtype=torch.float16, generator=g))
    assert inputs["c"].shape == (64, 48) and inputs["c"].isnan().all()


def test_a_kernel_without_a_stride_refuses_tensors_laid_out_otherwise():
    gemm = RowMajorGemm(strides=("stride_am", "stride_bk", "stride_cm"))
    shape = {"M": 32, "N": 32, "K": 32}
    cfg = TileConfig("t", {"BLOCK_M": 16, "BLOCK_N": 16})
    inputs = gemm.make_inputs(shape, "cpu", 0)
    assert gemm.launch_args(inputs, shape, cfg)[1]["stride_bk"] == 32
    inputs["b"] = inputs["b"].t().contiguous().t()          # column-major B: stride 1 along K
    with pytest.raises(ValueError, match="takes no stride_bn: it needs a row-major B"):
        gemm.launch_args(inputs, shape, cfg)
    # the kernel that takes every stride launches on it, with B's own strides
    args = RowMajorGemm().launch_args(inputs, shape, cfg)[1]
    assert (args["stride_bk"], args["stride_bn"]) == (1, 32)


def test_row_major_strides_follow_the_shape():
    args = RowMajorGemm().args({"M": 7, "N": 5, "K": 3})
    assert {k: args[k] for k in GEMM_STRIDES} == {"stride_am": 3, "stride_ak": 1, "stride_bk": 5, "stride_bn": 1,
                                                  "stride_cm": 5, "stride_cn": 1}


def test_a_row_that_does_not_fit_its_block_is_refused():
    rows = RowWise("norm", {"x_ptr": ("x", "fp32")}, output="x", whole_row="BLOCK")
    cfg = TileConfig("b", {"BLOCK": 128})
    assert rows.bind({"M": 4, "N": 128}, cfg).args["n_cols"] == 128
    with pytest.raises(KernelError, match="norm: a row of 129 does not fit BLOCK 128"):
        rows.bind({"M": 4, "N": 129}, cfg)
    looping = RowWise("sum", {"x_ptr": ("x", "fp32")}, output="x")      # loops over a row: any N
    assert looping.bind({"M": 4, "N": 10 ** 6}, cfg).args["n_cols"] == 10 ** 6


def test_a_spec_a_helper_builds_is_placed_in_the_kernels_own_file(tmp_path):
    kernel = tmp_path / "my_gemm.py"
    kernel.write_text('''
import triton
import triton.language as tl
from irlab.kernels.shapes import RowMajorGemm, TileConfig


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, BLOCK_M: tl.constexpr):
    pass


SPEC = RowMajorGemm(strides=("stride_am", "stride_bk", "stride_cm")).spec(
    "my_gemm", mm, {"t": TileConfig("t", {"BLOCK_M": 16})}, "t")
''')
    (_, spec), = specs_in_file(kernel)
    assert spec.defined_at.endswith("my_gemm.py:12")
    with pytest.raises(ParameterError, match=r"my_gemm\.py:12: kernel my_gemm: bind gives 'stride_cm'"):
        spec.problem()
