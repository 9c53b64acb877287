"""optimize-epilogue against Triton's own AMD optimize_epilogue over the GEMM's tile configs, on
gfx942 (CDNA3) and gfx950 (CDNA4): never more LDS, never narrower stores, never more VGPRs.

On gfx942 both store from the MFMA layout; on gfx950 both store from the linear layout that
gives a lane 8 consecutive columns (128-bit stores), reached by v_permlane32_swap."""
from __future__ import annotations

import pytest

from irlab import report
from irlab.bridge.compile import compile_kernel
from irlab.kernels import KERNELS
from irlab.bridge.named_variants import get_variant

SPEC = KERNELS["gemm_fp16"]


def _widths(r) -> dict[int, int]:
    return {int(k.split("-")[0]): n for k, n in r.counts["kernel"]["global_stores"].items()}


@pytest.mark.parametrize("target", ["hip:gfx942", "hip:gfx950"])
@pytest.mark.parametrize("config", list(SPEC.configs))
def test_never_worse_than_tritons_own_epilogue(target, config):
    own, ours = (report.from_compile(compile_kernel(SPEC, target, config=config, variant=get_variant(v, target)))
                 for v in ("baseline", "optimize-epilogue"))
    assert ours.resources["shared"] <= own.resources["shared"]
    w_own, w_ours = _widths(own), _widths(ours)
    # the same bytes stored, in as few or fewer, at least as wide, instructions
    assert sum(b * n for b, n in w_ours.items()) == sum(b * n for b, n in w_own.items())
    assert min(w_ours) >= min(w_own) and sum(w_ours.values()) <= sum(w_own.values())
    if target == "hip:gfx950":
        assert set(w_ours) == {128}
    assert ours.resources["vgpr_count"] <= own.resources["vgpr_count"]
