"""A target carries its own facts (irlab.base.target_facts, one table): the occupancy arithmetic, the
launch check, the static report, the named variants, the passes' scheduling pins and the profiler
read them from the target, so changing a row of the table changes what each of them says."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from irlab import ir, report
from irlab.base import target_facts
from irlab.base.target_facts import AmdArch, NvidiaArch
from irlab.base.targets import DEFAULT_TARGETS, Target, target_or_none
from irlab.bridge.compat import NVIDIA_TOOLS
from irlab.bridge.named_variants import candidates_for, variants_for
from irlab.passkit.pass_api import PassContext
from irlab.report.occupancy import amd_launch_fit, amd_occupancy, nvidia_launch_fit, nvidia_occupancy

DATA = Path(__file__).parent / "data" / "report"


def _meta(name):
    return json.loads((DATA / f"{name}.json").read_text())


def _amd_report(arch="gfx942"):
    md = _meta("gemm_fp16.hip-gfx942")
    return report.from_amdgcn((DATA / "gemm_fp16.hip-gfx942.amdgcn").read_text(), md["shared"], md["num_warps"], arch)


def _nvidia_report():
    md = _meta("gemm_fp16.cuda-90")
    return report.from_cubin((DATA / "gemm_fp16.cuda-90.cubin").read_bytes(),
                             (DATA / "gemm_fp16.cuda-90.ptx").read_text(), md["shared"], md["num_warps"], 90,
                             kernel=md["kernel"], tools=NVIDIA_TOOLS)


@pytest.fixture
def arch_row(monkeypatch):
    """Replace what the table says of one architecture for the test: ``arch_row(family, arch, **facts)``
    (no facts: the architecture leaves the table)."""
    def replace(family, arch, **facts):
        rows = dict(target_facts.ARCHS)
        if facts:
            rows[(family, arch)] = facts
        else:
            rows.pop((family, arch), None)
        monkeypatch.setattr(target_facts, "ARCHS", rows)
    return replace


# --- the table ----------------------------------------------------------------------------------

def test_every_default_target_is_modelled_and_its_model_is_its_own():
    for name in DEFAULT_TARGETS:
        facts = Target.parse(name).facts
        assert facts.modelled, name
        assert facts.occupancy.name == facts.llvm_processor, name     # gfx942's row is gfx942's, sm_90's sm_90's


def test_an_architecture_outside_the_table_gets_its_familys_facts_and_no_model():
    rdna = Target.parse("hip:gfx1100").facts
    assert (rdna.warp_size, rdna.isa, rdna.sched_pins, rdna.modelled) == (32, "amdgcn", True, False)
    assert Target.parse("hip:gfx942").facts.warp_size == 64
    blackwell = Target.parse("cuda:120").facts
    assert (blackwell.isa, blackwell.disassembler, blackwell.tma, blackwell.modelled) == ("sass", "nvdisasm", False,
                                                                                           False)
    assert blackwell.llvm_processor == "sm_120" and blackwell.max_shared_per_block is None
    assert Target.parse("cuda:90").facts.tma and not Target.parse("cuda:80").facts.tma


def test_a_modules_target_is_read_once_with_its_facts():
    assert target_or_none("hip:gfx950").facts.max_shared_per_block == 160 * 1024
    assert target_or_none(None) is None and target_or_none("gfx950") is None


# --- occupancy and launch limits come from the table ---------------------------------------------

def test_the_occupancy_arithmetic_reads_the_targets_numbers(arch_row):
    assert amd_occupancy(64, 32768, 4, "gfx942").workgroups_by_lds == 2
    assert nvidia_occupancy(32, 100 * 1024, 4, 90).blocks_by_smem == 2
    arch_row("hip", "gfx942", occupancy=AmdArch("gfx942", lds_per_cu=32768))
    arch_row("cuda", "90", occupancy=NvidiaArch("sm_90", smem_per_sm=120 * 1024, smem_per_block_max=110 * 1024))
    assert amd_occupancy(64, 32768, 4, "gfx942").workgroups_by_lds == 1
    assert nvidia_occupancy(32, 100 * 1024, 4, 90).blocks_by_smem == 1
    assert not amd_launch_fit("gfx942", 4, 64, 32769)
    assert "over the 112640 B a block may have on sm_90" in nvidia_launch_fit(90, 4, 64, 112641).why()


def test_the_report_models_what_the_table_models(arch_row):
    assert _amd_report().modelled
    arch_row("hip", "gfx942")
    rep = _amd_report()
    assert not rep.modelled
    assert rep.metrics()["workgroups/CU"] == "not modelled for hip:gfx942"
    assert "LDS and VGPR limits of gfx942" in rep.launch.unknown[0]


# --- the report's rows follow the ISA the target's facts name ------------------------------------

AMD_ROWS = ["launches", "VGPRs", "AGPRs", "SGPRs", "VGPR spills", "SGPR spills", "scratch bytes", "LDS bytes",
            "waves/workgroup", "VGPRs allocated", "waves/EU (VGPR limit)", "workgroups/CU", "waves/EU",
            "occupancy limited by", "wide global loads (kernel)", "narrow global loads (kernel)",
            "wide global stores (kernel)", "narrow global stores (kernel)", "global store widths",
            "LDS reads (kernel)", "LDS writes (kernel)", "cross-lane permutes (kernel)",
            "matrix instructions (kernel)", "instructions (kernel)", "hot loop instructions", "hot loop global loads",
            "hot loop global-load clusters", "hot loop LDS reads", "hot loop LDS writes",
            "hot loop matrix instructions", "hot loop matrix instruction kinds", "hot loop barriers",
            "hot loop s_waitcnt (vmcnt/lgkmcnt)", "hot loop scheduling pins"]
NVIDIA_ROWS = ["launches", "registers", "spill stores (B)", "spill loads (B)", "local memory (B)", "shared bytes",
               "warps/block", "blocks/SM", "warps/SM", "occupancy", "occupancy limited by",
               "wide global loads (kernel)", "narrow global loads (kernel)", "wide global stores (kernel)",
               "narrow global stores (kernel)", "global store widths", "LDS reads (kernel)", "LDS writes (kernel)",
               "matrix instructions (kernel)", "instructions (kernel)", "hot loop instructions",
               "hot loop global loads", "hot loop async copies (LDGSTS)", "hot loop global-load clusters",
               "hot loop LDS reads", "hot loop LDS writes", "hot loop matrix instructions",
               "hot loop matrix instruction kinds", "hot loop barriers"]


def test_each_isa_has_its_rows_in_their_order():
    assert list(_amd_report().metrics()) == AMD_ROWS
    assert [k for k in _nvidia_report().metrics() if k != "wgmma serialized by ptxas"] == NVIDIA_ROWS


# --- named variants ----------------------------------------------------------------------------

def test_named_variants_are_the_ones_the_facts_name_each_on_its_base(arch_row):
    for name in DEFAULT_TARGETS:
        facts = Target.parse(name).facts
        made = variants_for(name) + candidates_for(name)
        assert [(v.name, v.base or None) for v in made] == list(facts.variants + facts.candidates)
    assert [v.name for v in candidates_for("cuda:90")][0] == "persistent-tma" and not candidates_for("cuda:80")
    arch_row("cuda", "80", occupancy=Target.parse("cuda:80").facts.occupancy,
             candidates=target_facts.HOPPER_CANDIDATES[:1])
    assert [v.name for v in candidates_for("cuda:80")] == ["persistent-tma"]


# --- passes ask ctx.target ---------------------------------------------------------------------

MODULE = """module attributes {TARGET"ttg.num-warps" = 4 : i32} {
  tt.func public @k() attributes {noinline = false} {
    tt.return
  }
}
"""


@pytest.mark.parametrize("attribute, name, pins", [('ttg.target = "hip:gfx950", ', "hip:gfx950", True),
                                                    ('ttg.target = "cuda:90", ', "cuda:90", False),
                                                    ("", None, None)])
def test_a_pass_context_knows_its_modules_target(attribute, name, pins):
    ctx = PassContext(ir.parse(MODULE.replace("TARGET", attribute)), "test")
    assert ctx.target == name
    if name is not None:
        assert ctx.target.facts.sched_pins is pins


# --- the profiler's shared-memory size ---------------------------------------------------------

def test_instrumentation_is_given_the_targets_own_shared_memory():
    from irlab.profile.instrument import max_shared_per_block
    assert [max_shared_per_block(Target.parse(t)) for t in DEFAULT_TARGETS] == [166912, 232448, 65536, 163840]
    # one the table does not model: the largest its family has
    assert max_shared_per_block(Target.parse("hip:gfx1100")) == 163840


def test_a_facts_row_adds_only_facts_a_target_has():
    fields = {f.name for f in dataclasses.fields(target_facts.TargetFacts)}
    for key, row in target_facts.ARCHS.items():
        assert set(row) <= fields, key
