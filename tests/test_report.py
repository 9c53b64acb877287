"""The static report on real compiler output (fixtures), and occupancy on hand-worked cases."""
from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from irlab import report
from irlab.bridge.compat import NVIDIA_TOOLS
from irlab.report import isa
from irlab.report.occupancy import amd_occupancy, nvidia_occupancy

DATA = Path(__file__).parent / "data" / "report"


def _meta(name):
    return json.loads((DATA / f"{name}.json").read_text())


# --- occupancy, hand-worked -------------------------------------------------------------------

def test_documents_example_170_vgprs_allocate_176_and_fit_2_waves():
    occ = amd_occupancy(170, 0, 4)
    assert occ.vgprs_allocated == 176 and 3 * 176 > 512
    assert occ.waves_per_eu_by_vgpr == 2


@pytest.mark.parametrize("vgprs,waves", [(64, 8), (65, 7), (72, 7), (80, 6), (96, 5), (128, 4), (168, 3), (169, 2),
                                         (256, 2), (257, 1), (512, 1)])
def test_amd_vgpr_table(vgprs, waves):
    assert amd_occupancy(vgprs, 0, 4).waves_per_eu_by_vgpr == waves


def test_amd_occupancy_by_the_documents_formula():
    # 139 VGPRs -> 144 -> 3 waves/EU -> floor(3*4/8) = 1 WG/CU; LDS 32 KiB -> 2 WG/CU; occupancy 1 WG = 2 waves/EU
    occ = amd_occupancy(139, 32768, 8)
    assert (occ.vgprs_allocated, occ.waves_per_eu_by_vgpr, occ.workgroups_by_vgpr, occ.workgroups_by_lds) == (144, 3, 1, 2)
    assert occ.workgroups_per_cu == 1 and occ.waves_per_cu == 8 and occ.waves_per_eu == 2 and occ.limiter == "VGPRs"
    # LDS-limited: 64 VGPRs (8 waves/EU -> 8 WG of 4 waves) but 16 KiB of LDS -> 4 WG/CU
    occ = amd_occupancy(64, 16384, 4)
    assert occ.workgroups_by_vgpr == 8 and occ.workgroups_by_lds == 4 and occ.workgroups_per_cu == 4
    assert occ.waves_per_eu == 4 and occ.limiter == "LDS"
    # no LDS at all: only VGPRs and wave slots limit
    occ = amd_occupancy(256, 0, 4)
    assert occ.workgroups_by_lds is None and occ.workgroups_per_cu == 2 and occ.waves_per_eu == 2
    # 64 KiB of LDS: one workgroup per CU
    assert amd_occupancy(32, 65536, 4).workgroups_per_cu == 1


def test_nvidia_occupancy_hand_worked():
    # sm_90, 128 regs x 32 = 4096/warp -> 16 warps -> 2 blocks of 8; smem 64 KiB + 1 KiB -> 3 blocks
    occ = nvidia_occupancy(128, 65536, 8, 90)
    assert (occ.registers_per_warp, occ.blocks_by_registers, occ.blocks_by_smem) == (4096, 2, 3)
    assert occ.blocks_per_sm == 2 and occ.occupancy == 0.25 and occ.limiter == "registers"
    # sm_80, 162 regs -> 5184 rounded to 5376/warp -> 12 warps -> 1 block of 8
    occ = nvidia_occupancy(162, 32768, 8, 80)
    assert occ.registers_per_warp == 5376 and occ.blocks_by_registers == 1 and occ.warps_per_sm == 8
    # shared-memory bound: 32 regs, 100 KiB smem on sm_80 (164 KiB/SM) -> 1 block
    occ = nvidia_occupancy(32, 100 * 1024, 4, 80)
    assert occ.blocks_by_smem == 1 and occ.limiter == "shared memory"
    # warp bound: 16 regs (512/warp -> 128 warps -> 4 blocks), no smem, 32 warps/block -> 64/32 = 2 blocks
    occ = nvidia_occupancy(16, 0, 32, 90)
    assert occ.blocks_by_registers == 4 and occ.blocks_per_sm == 2 and occ.limiter == "warps"
    # 32 regs: registers and warps allow 2 blocks each
    assert nvidia_occupancy(32, 0, 32, 90).limiter == "registers and warps"


# --- AMDGCN fixture -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def amd_report():
    md = _meta("gemm_fp16.hip-gfx942")
    return report.from_amdgcn((DATA / "gemm_fp16.hip-gfx942.amdgcn").read_text(), md["shared"], md["num_warps"])


def test_amd_resources_come_from_the_code_object_metadata(amd_report):
    r = amd_report.resources
    assert (r["vgpr_count"], r["agpr_count"], r["sgpr_count"], r["vgpr_spill_count"], r["sgpr_spill_count"]) == \
        (98, 0, 30, 0, 0)
    assert r["shared"] == 32768 and r["lds_static"] == 0  # Triton allocates LDS dynamically
    occ = amd_report.occupancy
    assert occ.vgprs_allocated == 104 and occ.waves_per_eu_by_vgpr == 4
    assert occ.workgroups_per_cu == 2 and occ.waves_per_eu == 4


def test_amd_hot_loop_schedule_and_counts(amd_report):
    loop = amd_report.loop
    assert loop["label"] == ".LBB0_3" and loop["length"] == 84
    runs = loop["schedule"]
    assert runs[0] == ("buffer_load_dwordx4", 2) and runs[1] == ("s_barrier", 1)
    assert runs[-1] == ("s_cbranch_scc1", 1)
    assert loop["load_clusters"] == [2, 2]
    assert loop["schedule_text"].startswith("2 x buffer_load_dwordx4 / s_barrier / ds_read_b64 / ds_read2st64_b64 / "
                                            "2 x v_mfma_f32_32x32x8_f16")
    c = amd_report.counts["loop"]
    assert c["wide_global_loads"] == 4 and c["narrow_global_loads"] == 0 and c["matrix"] == 16
    assert c["lds_reads"] == {"b64": 8, "2xb64": 8} and c["lds_writes"] == {"2xb64": 2, "b32": 8}
    assert c["s_waitcnt"] == {"vmcnt": 2, "lgkmcnt": 10, "expcnt": 0, "total": 12}
    k = amd_report.counts["kernel"]
    assert k["global_stores"] == {"64-bit": 8} and k["narrow_global_stores"] == 8


def test_a_table_of_several_variants(amd_report):
    other = dataclasses.replace(amd_report, variant="pinned")
    table = report.render_table([amd_report, other]).splitlines()
    assert table[2] == "| metric | baseline | pinned |"
    assert "| hot loop s_waitcnt (vmcnt/lgkmcnt) | 12 (2/10) | 12 (2/10) |" in table
    assert sum(line.startswith("hot loop, ") for line in table) == 2


def test_amd_counting_rules():
    prog = isa.parse_amdgcn("""
\t.text
.LBB0_1:
\tglobal_load_dwordx4 v[0:3], v[4:5], off
\tglobal_load_dword v6, v[4:5], off
\tbuffer_store_short v1, v2, s[0:3], 0 offen
\tds_read_b128 v[8:11], v12
\tds_write2_b64 v13, v[14:15], v[16:17] offset1:1
\ts_waitcnt vmcnt(0) lgkmcnt(0)
\tv_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[0:3]
\ts_cbranch_scc1 .LBB0_1
""")
    c = isa.amd_counts(prog.instrs)
    assert c["global_loads"] == {"128-bit": 1, "32-bit": 1} and c["global_stores"] == {"16-bit": 1}
    assert c["lds_reads"] == {"b128": 1} and c["lds_writes"] == {"2xb64": 1}
    assert c["s_waitcnt"]["vmcnt"] == 1 and c["s_waitcnt"]["lgkmcnt"] == 1 and c["matrix"] == 1
    loop = isa.hot_loop(prog)
    assert isa.format_schedule(isa.schedule(prog, loop)) == (
        "2 x global_load_dwordx4 / buffer_store_short / ds_read_b128 / ds_write2_b64 / "
        "v_mfma_f32_16x16x16_f16 / s_cbranch_scc1").replace("2 x global_load_dwordx4", "global_load_dwordx4 / global_load_dword")


def test_amd_scheduling_pins_are_kept_but_are_no_instructions():
    # the assembler prints llvm.amdgcn.sched.barrier / sched.group.barrier as comments
    prog = isa.parse_amdgcn("""
\t.text
.LBB0_1:
\tbuffer_load_dwordx4 v[0:3], v4, s[0:3], 0 offen
\tds_read_b64_tr_b16 v[8:9], v12
\t; sched_barrier mask(0x00000000)
\tbuffer_load_dwordx4 v[0:3], v4, s[0:3], 0 offen
\t; sched_group_barrier mask(0x00000008) size(12) SyncID(0)
\tv_mfma_f32_32x32x16_f16 v[0:15], v[16:19], v[20:23], v[0:15]
\t; a comment that is no pin
\tv_permlane32_swap_b32_e32 v1, v2
\ts_cbranch_scc1 .LBB0_1
""")
    loop = isa.hot_loop(prog)
    c = isa.amd_counts(loop.instrs)
    assert c["instructions"] == 6 and c["pins"] == {"sched_barrier": 1, "sched_group_barrier": 1}
    assert c["permutes"] == {"v_permlane32_swap_b32_e32": 1} and c["lds_reads"] == {"b64_tr_b16": 1}
    assert c["lds_reads"] == {"b64_tr_b16": 1}
    assert isa.format_schedule(isa.schedule(prog, loop)) == (
        "buffer_load_dwordx4 / ds_read_b64_tr_b16 / buffer_load_dwordx4 / v_mfma_f32_32x32x16_f16 / s_cbranch_scc1")
    assert isa.format_schedule(isa.schedule(prog, loop, pins=True)) == (
        "buffer_load_dwordx4 / ds_read_b64_tr_b16 / sched_barrier / buffer_load_dwordx4 / sched_group_barrier / "
        "v_mfma_f32_32x32x16_f16 / s_cbranch_scc1")
    assert isa.clusters(isa.schedule(prog, loop), ("buffer_load",)) == [1, 1]


def test_gfx950_keeps_gfx942_registers_and_has_160_kib_of_lds():
    # 64 VGPRs -> 8 waves/EU -> 8 WG of 4 waves; 32 KiB of LDS: 2 WG/CU on gfx942, 5 on gfx950
    for arch, wgs in (("gfx942", 2), ("gfx950", 5)):
        occ = amd_occupancy(64, 32768, 4, arch)
        assert occ.waves_per_eu_by_vgpr == 8 and occ.workgroups_by_lds == wgs and occ.workgroups_per_cu == wgs
    occ = amd_occupancy(76, 32768, 8, "gfx950")
    assert (occ.vgprs_allocated, occ.waves_per_eu_by_vgpr, occ.workgroups_by_vgpr, occ.workgroups_by_lds) == \
        (80, 6, 3, 5)
    assert occ.limiter == "VGPRs" and "floor(163840/32768) = 5 WG/CU" in occ.explain()
    assert "floor(65536/32768) = 2 WG/CU" in amd_occupancy(76, 32768, 8, "gfx942").explain()


# --- SASS fixtures ------------------------------------------------------------------------------

def _nv(name):
    md = _meta(name)
    return report.from_cubin((DATA / f"{name}.cubin").read_bytes(), (DATA / f"{name}.ptx").read_text(), md["shared"],
                             md["num_warps"], int(md["target"].split(":")[1]), kernel=md["kernel"], tools=NVIDIA_TOOLS)


def test_nvidia_sm80_gemm():
    r = _nv("gemm_fp16.cuda-80")
    assert (r.resources["registers"], r.resources["local"], r.resources["spill_stores"]) == (162, 0, 0)
    assert r.occupancy.blocks_per_sm == 1 and r.occupancy.limiter == "registers"
    assert r.counts["loop"]["matrix"] == 64 and r.counts["loop"]["async_copies"] == {"128-bit": 8}
    assert r.loop["schedule"][-1] == ("BRA", 1)
    assert r.counts["kernel"]["global_stores"] == {"128-bit": 8}


def test_nvidia_sm90_gemm_uses_wgmma():
    r = _nv("gemm_fp16.cuda-90")
    assert r.resources["registers"] == 128 and r.resources["static_shared"] == 1024
    assert "4 x HGMMA.64x128x16.F32" in r.loop["schedule_text"] and r.counts["loop"]["matrix"] == 4
    assert r.occupancy.blocks_per_sm == 2


def test_gluon_prefetch_gemm_issues_all_global_loads_in_one_cluster():
    r = _nv("gluon_gemm_prefetch.cuda-80")
    assert r.loop["schedule"][0] == ("LDG.128", 8) and r.loop["load_clusters"] == [8]
    assert r.resources["registers"] == 248 and r.counts["loop"]["lds_writes"] == {"STS.128": 8}


def test_diff_table_and_cli(tmp_path):
    md = _meta("gemm_fp16.hip-gfx942")
    a = report.from_amdgcn((DATA / "gemm_fp16.hip-gfx942.amdgcn").read_text(), md["shared"], 8, variant="a")
    b = report.from_amdgcn((DATA / "gemm_fp16.hip-gfx942.amdgcn").read_text(), md["shared"] // 2, 8, variant="b")
    rows = {k: (va, vb, c) for k, va, vb, c in report.diff_rows(a, b)}
    assert rows["LDS bytes"] == (32768, 16384, "-16384") and rows["VGPRs"][2] == ""
    md_table = report.render_diff(a, b, markdown=True)
    assert "| LDS bytes | 32768 | 16384 | -16384 |" in md_table
    amdgcn = DATA / "gemm_fp16.hip-gfx942.amdgcn"
    out = subprocess.run([sys.executable, "-m", "irlab", "report", str(amdgcn), "--json", str(tmp_path / "r.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "waves/EU (VGPR limit)                  4" in out.stdout
    meta = DATA / "gemm_fp16.hip-gfx942.json"
    assert f"assumed: {amdgcn}: shared memory 32768 B (from {meta}), 8 warps (from {meta})" in out.stdout
    assert json.loads((tmp_path / "r.json").read_text())[0]["occupancy"]["workgroups_per_cu"] == 2


def test_report_on_files_diffs_two_and_never_assumes_silently(tmp_path):
    amdgcn = DATA / "gemm_fp16.hip-gfx942.amdgcn"
    lone = tmp_path / "kernel.amdgcn"
    lone.write_text(amdgcn.read_text())
    run = lambda *a: subprocess.run([sys.executable, "-m", "irlab", "report", *a], capture_output=True, text=True)  # noqa
    r = run(str(lone))
    assert r.returncode == 2 and "shared-memory size is not known: give --shared" in r.stderr
    assert "Traceback" not in r.stderr
    r = run(str(amdgcn), "--vs", str(lone), "--shared", "16384", "--num-warps", "8")
    assert r.returncode == 0, r.stderr
    assert f"assumed: {lone}: shared memory 16384 B (from --shared), 8 warps (from --num-warps)" in r.stdout
    assert "LDS bytes" in r.stdout and "16384" in r.stdout
    r = run(str(DATA / "README.md"))
    assert r.returncode == 2 and "not an .amdgcn or .cubin file" in r.stderr


def test_report_from_a_compile_for_every_target():
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import KERNELS
    from irlab.base.targets import DEFAULT_TARGETS
    for t in DEFAULT_TARGETS:
        r = report.from_compile(compile_kernel(KERNELS["gemm_fp16"], t))
        assert r.loop is not None and r.metrics()["hot loop matrix instructions"] > 0
        if r.target.is_nvidia:   # ptxas -v ran: the ptxas Triton assembles this target's PTX with
            assert r.resources.get("spill_stores") == 0, (t, r.resources)


# --- irlab report on the command line: what the passes did, sameness, targets it does not model ---

def _report_cli(*args):
    r = subprocess.run([sys.executable, "-m", "irlab", "report", *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return r.stdout


def test_report_vs_says_why_a_pass_did_nothing_and_that_the_variants_are_identical():
    out = _report_cli("--kernel", "softmax", "--target", "cuda:90", "--vs", "optimize-epilogue", "--explain")
    assert "what the passes of optimize-epilogue did:\n  optimize-epilogue (ttgir): did nothing\n    note: no candidate" \
        in out, out
    assert "identical: optimize-epilogue compiles to the same binary as baseline" in out, out


def test_report_vs_counts_what_a_pass_changed_with_its_remarks():
    walkthrough = Path(__file__).resolve().parent.parent / "docs" / "walkthrough" / "bias_relu_gemm.py"
    out = _report_cli("--kernel", str(walkthrough), "--target", "cuda:90", "--vs", "optimize-epilogue")
    lines = out.splitlines()
    i = lines.index("what the passes of optimize-epilogue did:")
    assert lines[i + 1].startswith("  optimize-epilogue (ttgir): changed the IR: ") and " erased" in lines[i + 1]
    assert lines[i + 2].startswith("    remark: stores from #mma"), lines[i + 2]
    assert "different: optimize-epilogue changes the IR and the binary of baseline" in out


def test_a_kernel_without_a_loop_says_no_loop():
    """ptxas's closing self-branch after EXIT (`.L_x_0: BRA .L_x_0`) is no hot loop."""
    out = _report_cli("--kernel", "softmax", "--target", "cuda:90")
    assert "hot loop instructions" not in out and "no loop" in out, out


def test_a_target_the_report_does_not_model_says_so_instead_of_none():
    """RDNA (gfx1100): no occupancy model, no AGPRs, widths in its own opcode names (b32)."""
    out = _report_cli("--kernel", "softmax", "--target", "hip:gfx1100")
    assert "None" not in out, out
    assert "occupancy: not modelled for hip:gfx1100" in out and "AGPRs" in out
    assert re.search(r"global store widths\s+\d+ x 32-bit", out), out
