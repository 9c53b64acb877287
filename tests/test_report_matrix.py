"""The static report counts every matrix instruction of every target: integer and float, every
width, every unit -- mma.sync (HMMA, IMMA, QMMA), Hopper's wgmma (HGMMA, IGMMA, QGMMA),
Blackwell's tcgen05 (UTCHMMA, UTCQMMA), AMD's MFMA (fp16, int8, fp8) and RDNA's WMMA -- each on a
GEMM compiled for it (tests/kernels/gemm_dtypes.py), counted here from the disassembly with the
family's own pattern."""
from __future__ import annotations

import re

import pytest

from irlab import report
from irlab.report import isa

# (target, dtype of the GEMM (or "@T": inputs of Triton type T, fp16 output), the family's pattern)
FAMILIES = [
    ("cuda:90", "i8", r"IGMMA\.\S+\.S8\.S8"),
    ("cuda:90", "fp16", r"HGMMA\.\S+\.F32"),
    ("cuda:90", "fp8e4nv", r"QGMMA\.\S+\.E4M3\.E4M3"),
    ("cuda:80", "i8", r"IMMA\.16832\.S8\.S8"),
    ("cuda:80", "fp16", r"HMMA\.16816\.F32"),
    ("cuda:100", "fp16", r"UTCHMMA"),
    ("cuda:100", "fp8e4nv", r"UTCQMMA"),
    ("cuda:120", "fp8e4nv", r"QMMA\.16832\.F32\.E4M3\.E4M3"),
    ("hip:gfx942", "i8", r"v_mfma_i32_32x32x16_i8"),
    ("hip:gfx942", "fp16", r"v_mfma_f32_32x32x8_f16"),
    ("hip:gfx942", "@fp8e4b8", r"v_mfma_f32_32x32x16_fp8_fp8"),
    ("hip:gfx942", "@fp8e5b16", r"v_mfma_f32_32x32x16_bf8_bf8"),
    ("hip:gfx950", "i8", r"v_mfma_i32_32x32x32_i8"),
    ("hip:gfx950", "fp16", r"v_mfma_f32_32x32x16_f16"),
    ("hip:gfx950", "fp8e4nv", r"v_mfma_f32_32x32x64_f8f6f4"),
    ("hip:gfx1100", "i8", r"v_wmma_i32_16x16x16_iu8"),
    ("hip:gfx1100", "fp16", r"v_wmma_f32_16x16x16_f16"),
]


def _compile(target: str, dtype: str):
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    spec = get("tests/kernels/gemm_dtypes.py")
    if dtype.startswith("@"):
        args = {"a_ptr": f"*{dtype[1:]}", "b_ptr": f"*{dtype[1:]}", "c_ptr": "*fp16"}
        return compile_kernel(spec, target, shape={**spec.default_shape, "dtype": "fp16"}, args=args)
    return compile_kernel(spec, target, shape={**spec.default_shape, "dtype": dtype})


def _disassembly(res) -> list[str]:
    """The instruction lines of the compile's machine code."""
    if res.target.is_amd:
        return [ln.split(";", 1)[0].strip() for ln in res.asm["amdgcn"].splitlines()
                if ln.startswith(("\t", " ")) and ln.strip()[:1].isalpha()]
    return [m.group(1) for m in re.finditer(r"/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][^;]*);",
                                            report.static.sass_text(res.asm["cubin"], res.tools))]


@pytest.mark.parametrize("target, dtype, family", FAMILIES, ids=[f"{t}-{d}" for t, d, _ in FAMILIES])
def test_every_matrix_instruction_of_the_family_is_counted(target, dtype, family):
    res = _compile(target, dtype)
    lines = _disassembly(res)
    expected = sum(bool(re.match(family, ln)) for ln in lines)
    assert expected > 0, f"the GEMM for {target} has no {family}: the test's premise changed"
    rep = report.from_compile(res)
    k, loop = rep.counts["kernel"], rep.counts["loop"]
    assert k["matrix"] == expected == sum(k["matrix_kinds"].values())
    assert all(re.match(family, kind) for kind in k["matrix_kinds"])
    # the hot loop is the loop of the matrix instructions, and the report says how many and which
    assert rep.loop is not None and loop["matrix"] > 0 and all(re.match(family, kind) for kind in loop["matrix_kinds"])
    metrics = rep.metrics()
    assert metrics["hot loop matrix instructions"] == loop["matrix"]
    assert re.search(family, metrics["hot loop matrix instruction kinds"])
    assert re.search(family, rep.loop["schedule_text"])


@pytest.mark.parametrize("op", ["v_mfma_f32_32x32x8_f16", "v_mfma_i32_32x32x16_i8", "v_mfma_f32_16x16x32_fp8_bf8",
                                "v_mfma_scale_f32_32x32x64_f8f6f4", "v_mfma_f64_16x16x4_f64", "v_mfma_f32_32x32x1f32",
                                "v_smfmac_f32_32x32x16_f16", "v_smfmac_i32_16x16x64_i8", "v_wmma_i32_16x16x16_iu4",
                                "v_wmma_f32_16x16x16_fp8_bf8", "v_swmmac_f32_16x16x32_f16"])
def test_amd_matrix_instructions_are_recognised_by_their_naming_rule(op):
    assert isa.amd_is_matrix(op) and isa.amd_is_key(op)


@pytest.mark.parametrize("op", ["v_mfma_ld_scale_b32", "v_fma_f32", "v_pk_fma_f16", "v_dot4_i32_i8"])
def test_amd_instructions_that_are_not_matrix_ones(op):
    assert not isa.amd_is_matrix(op)


@pytest.mark.parametrize("op", ["HMMA.16816.F32", "IMMA.16832.S8.S8.SAT", "QMMA.16832.F32.E4M3.E4M3",
                                "BMMA.88128.AND.POPC", "DMMA.884", "HGMMA.64x128x16.F32", "IGMMA.64x128x32.S8.S8",
                                "QGMMA.64x128x32.F32.E4M3.E4M3", "UTCHMMA", "UTCIMMA", "UTCQMMA", "UTCOMMA.2CTA"])
def test_nvidia_matrix_instructions_are_recognised_by_their_naming_rule(op):
    assert isa.sass_is_matrix(op) and isa.sass_is_key(isa.sass_class(isa.Instr(0, op, "")))


@pytest.mark.parametrize("op", ["HFMA2.MMA", "HFMA2", "FFMA", "IMAD.WIDE", "UTCBAR", "LDSM.16.M88.4"])
def test_nvidia_instructions_that_are_not_matrix_ones(op):
    assert not isa.sass_is_matrix(op)
