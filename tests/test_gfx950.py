"""hip:gfx950 (MI350-series, CDNA4) named explicitly: its corpus round-trips and every op it
prints is in the effect table, every AMD variant compiles for it, the static report uses its
limits, and its epilogue is compared with Triton's own."""
from __future__ import annotations

import pytest

from irlab.bridge import compat
from irlab import ir, report
from irlab.bridge.compile import compile_kernel
from irlab.kernels import KERNELS
from irlab.bridge.named_variants import EPILOGUE_CLEANUP, get_variant, variants_for
from irlab.passkit.variant import Insert

TARGET = "hip:gfx950"


@pytest.fixture(scope="module")
def gemm():
    """gemm_fp16 (default config) for gfx950 as every AMD variant, each compiled once."""
    return {v.name: compile_kernel(KERNELS["gemm_fp16"], TARGET, variant=v)
            for v in variants_for(TARGET)}


def test_every_amd_variant_compiles_and_the_report_uses_gfx950s_limits(gemm):
    assert set(gemm) >= {"baseline", "no-reorder", "interleave-global-loads", "interleave-pinned", "optimize-epilogue"}
    for name, res in gemm.items():
        r = report.from_compile(res)
        assert r.target == TARGET and res.asm["amdgcn"].count("gfx950") > 0, name
        occ = r.occupancy
        assert occ.lds_per_cu == 160 * 1024 and occ.workgroups_by_lds == 160 * 1024 // r.resources["shared"], name
        # LLVM's own occupancy line (VGPRs and SGPRs only: Triton's LDS is dynamic) agrees
        assert occ.waves_per_eu_by_vgpr == r.resources["llvm_occupancy"], name


def test_epilogue_stores_tritons_pass_against_optimize_epilogue(gemm):
    # Triton's own pass on gfx950 converts the accumulator to a linear layout in registers
    # (v_permlane32_swap, no LDS) and stores dwordx4; irlab's pass chooses the same layout, by its
    # bases, and stores as wide
    triton_own, irlab_own = report.from_compile(gemm["baseline"]), report.from_compile(gemm["optimize-epilogue"])
    off = report.from_compile(gemm["no-optimize-epilogue"])
    stored = {name: [o.value.type.layout for o in ir.parse(gemm[name].text("ttgir", locations=False)).walk()
                     if o.name in ("tt.store", "amdg.buffer_store")] for name in gemm}
    assert {x.kind for x in stored["baseline"]} == {"linear"} == {x.kind for x in stored["optimize-epilogue"]}
    assert [x.params for x in stored["baseline"]] == [x.params for x in stored["optimize-epilogue"]]
    assert triton_own.counts["kernel"]["global_stores"] == {"128-bit": 4} == irlab_own.counts["kernel"]["global_stores"]
    for r in (triton_own, irlab_own):
        assert any(k.startswith("v_permlane32_swap") for k in r.counts["kernel"]["permutes"])
    # with Triton's pass off, the convert goes through LDS: more LDS traffic than either
    lds = lambda r: sum(r.counts["kernel"]["lds_writes"].values())   # noqa: E731
    assert lds(off) > lds(triton_own) == lds(irlab_own)


def test_epilogue_store_layout_mma_keeps_the_narrow_mfma_stores():
    narrow = get_variant("no-optimize-epilogue", TARGET).then(
        Insert("optimize-epilogue", at="end", options={"store_layout": "mma"}, cleanup=EPILOGUE_CLEANUP),
        name="optimize-epilogue-mma")
    res = compile_kernel(KERNELS["gemm_fp16"], TARGET, variant=narrow)
    assert report.from_compile(res).counts["kernel"]["global_stores"] == {"64-bit": 8}


def test_pinned_variant_names_gfx950_mfma_sizes(gemm):
    res = gemm["interleave-pinned"]
    notes = " ".join(d.message for _, r in res.python_results for d in r.diagnostics)
    if compat.TRITON_VERSION.startswith("3.6"):
        assert "6 of 8 MFMAs" in notes
    else:   # 3.9 copies global -> LDS directly on gfx950: no register-staged load to pin
        assert "no candidate: the loop body has no register-staged global load" in notes   # v_mfma_f32_32x32x16_f16: half as many as gfx942's 32x32x8
    assert get_variant("interleave-pinned", TARGET).name == "interleave-pinned"
