"""The talk's schedule in the AMDGCN: interleave-global-loads ``pin`` and the named pinned
variants on gfx942 and gfx950, checked with the FileCheck files kept beside the results
(docs/results/amd_schedules/), and the instruction counts the group barriers are built from."""
from __future__ import annotations

from pathlib import Path

import pytest

from irlab import ir, report
from irlab.analysis import amdgpu_sched
from irlab.bridge import compat
from irlab.bridge.compile import compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.golden.suite import filecheck
from irlab.kernels import KERNELS
from irlab.passkit.pass_api import PassError
from irlab.passkit.registry import make_pass
from irlab.bridge.named_variants import get_variant

CHECKS = Path(__file__).resolve().parent.parent / "docs" / "results" / "amd_schedules"
DEFAULT = "128x128x64-w8"   # gemm_fp16's default config: the one its goldens hold


@pytest.fixture(scope="module")
def compiled():
    """gemm_fp16 compiled for (target, variant, config), each once per module."""
    done = {}

    def get(target, variant, config=DEFAULT):
        key = (target, variant, config)
        if key not in done:
            done[key] = compile_kernel(KERNELS["gemm_fp16"], target, config=config,
                                       variant=get_variant(variant, target))
        return done[key]
    return get


def direct_to_lds(target) -> bool:
    """Triton 3.9 on gfx950 copies A and B global -> LDS asynchronously: the loop has no
    register-staged global load for the talk's schedule to move (3.6 stages them in registers)."""
    return target == "hip:gfx950" and not compat.TRITON_VERSION.startswith("3.6")


def says_no_candidate(res) -> bool:
    notes = " ".join(d.message for _, r in res.python_results for d in r.diagnostics)
    return "no candidate: the loop body has no register-staged global load" in notes


def check(text, name):
    ok, out = filecheck(text, (CHECKS / name).read_text(), name)
    assert ok, out


def runs(res):
    return [c for c, _ in report.from_compile(res).loop["schedule"]]


def first(classes, prefix, start=0):
    return next(i for i, c in enumerate(classes) if i >= start and c.startswith(prefix))


def test_unpinned_interleave_does_not_reach_the_gfx942_amdgcn(compiled):
    # why the pins exist: the TTGIR moves, the backend's scheduler moves it back
    assert compiled("hip:gfx942", "interleave-global-loads").asm["amdgcn"] == \
        compiled("hip:gfx942", "no-reorder").asm["amdgcn"]


@pytest.mark.parametrize("target", ["hip:gfx942", "hip:gfx950"])
def test_pinned_variant_has_the_talks_amdgcn(compiled, target):
    base, pinned = compiled(target, "no-reorder"), compiled(target, "interleave-pinned")
    if direct_to_lds(target):   # nothing to move, and the pass says why
        assert says_no_candidate(pinned) and pinned.asm["amdgcn"] == base.asm["amdgcn"]
        return
    assert runs(pinned) != runs(base)
    r = runs(pinned)
    loads = [i for i, c in enumerate(r) if c.startswith("buffer_load")]
    assert loads[0] < first(r, "ds_read") < loads[1]          # the second loads after the first LDS reads
    assert first(r, "v_mfma") < loads[1] < first(r, "v_mfma", loads[1])   # ... between the MFMAs
    check(pinned.text("ttgir", locations=False), "pinned.ttgir.checks")
    check("\n".join(r), "pinned.hot-loop.checks")
    assert "; sched_group_barrier mask(0x00000100)" in pinned.asm["amdgcn"]


@pytest.mark.parametrize("config", ["128x128x32-w4", "128x256x32-w8"])
def test_pinned_variant_on_the_other_gfx942_configs(compiled, config):
    check("\n".join(runs(compiled("hip:gfx942", "interleave-pinned", config))), "pinned.hot-loop.checks")


def test_barrier_pins_keep_the_ttgir_order_verbatim(compiled):
    res = compiled("hip:gfx942", "interleave-pinned-barriers")
    check(res.text("ttgir", locations=False), "pinned-barriers.ttgir.checks")
    r = runs(res)
    loads = [i for i, c in enumerate(r) if c.startswith("buffer_load")]
    # every LDS read, then the second loads, and no MFMA before them: the region is split
    assert loads[0] < first(r, "ds_read") and max(i for i, c in enumerate(r) if c.startswith("ds_read")) < loads[1]
    assert loads[1] < first(r, "v_mfma")
    assert r != runs(compiled("hip:gfx942", "no-reorder"))


@pytest.mark.parametrize("target", ["hip:gfx942", "hip:gfx950"])
def test_group_sizes_match_the_machine_code(compiled, target):
    # the counts the group barriers are built from, against the compiled hot loop
    res = compiled(target, "interleave-pinned")
    if direct_to_lds(target):
        assert says_no_candidate(res)
        return
    body = ir.parse(res.text("ttgir", locations=False)).first("scf.for").regions[0].entry
    loads = [o for o in body.ops if o.name == "amdg.buffer_load"]
    dot = next(o for o in body.ops if o.name == "tt.dot")
    loop = report.from_compile(res).counts["loop"]
    assert sum(amdgpu_sched.vmem_reads(x) for x in loads) == sum(loop["global_loads"].values())
    assert amdgpu_sched.mfmas(dot) == loop["matrix"]
    assert amdgpu_sched.ds_reads_bound(dot) >= sum(loop["lds_reads"].values())


def apply(text, verify=True, **options):
    m = ir.parse(text)
    return m, run_pass(make_pass("interleave-global-loads", options), m, verify=verify)


def group_masks(m):
    """The group barriers' masks as numbers (3.6 prints integers, 3.9 keyword sets)."""
    ops = m.first("scf.for").regions[0].entry.ops
    return [str(amdgpu_sched.barrier_mask(o)) for o in ops if o.name == "rocdl.sched.group.barrier"]


def test_pins_are_added_once_and_shares_of_mfmas_are_options(compiled):
    text = compiled("hip:gfx942", "no-reorder").text("ttgir", locations=False)
    m, res = apply(text, pin="groups")
    assert group_masks(m) == ["32", "256", "8", "32", "8"]
    assert "12 x mfma (12 of 16 MFMAs)" in " ".join(d.message for d in res.diagnostics)
    m2, res2 = apply(str(m), pin="groups")
    assert not res2.changed and "nothing to do: the load already comes after" in res2.diagnostics[0].message
    m, _ = apply(text, pin="groups", mfma_before=0)
    assert group_masks(m) == ["32", "256", "32", "8"]
    m, _ = apply(text, pin="groups", mfma_before=1)
    assert group_masks(m) == ["32", "256", "8", "32"]
    with pytest.raises(PassError, match="mfma_before must be between 0 and 1"):
        make_pass("interleave-global-loads", {"mfma_before": "1.5"})


def test_pins_are_amd_only(compiled):
    text = compiled("hip:gfx942", "no-reorder").text("ttgir", locations=False)
    m, res = apply(text.replace('ttg.target = "hip:gfx942"', 'ttg.target = "cuda:90"'), verify=False, pin="barriers")
    assert res.changed and "rocdl" not in str(m)
    assert [d.severity for d in res.diagnostics if "not pinned" in d.message] == ["warning"]
