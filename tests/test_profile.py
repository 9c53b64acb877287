"""irlab profile: reading Proton's files (fixtures in the formats Triton 3.6's Proton writes),
placing PC samples on the hot loop's instructions, scopes per warp, the README, the PTX line
rewrite, the proton-scopes pass, and the command without a GPU."""
from __future__ import annotations

import json

import pytest

from irlab.bridge.pass_runner import run_pass
from irlab.cli import main
from irlab.profile import attribute, lines, proton_data, scopes
from irlab.profile.report import render
from irlab.profile.run import Job
from tests.conftest import gpu_available


def _node(name, metrics=None, children=()):
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics or {}, "children": list(children)}


DEVICES = {"CUDA": {"0": {"clock_rate": 1980000, "memory_clock_rate": 3201000, "bus_width": 6144, "arch": "90",
                          "num_sms": 132}}}


def _kernel(t, n):
    return {"time (ns)": t, "count": n, "device_id": "0", "device_type": "CUDA"}


TIME_TREE = [_node("ROOT", {"count": 0, "time (ns)": 0}, [
    _node("baseline", {}, [_node("matmul_kernel", _kernel(2_000_000, 20))]),
    _node("optimize-epilogue", {}, [_node("matmul_kernel", _kernel(1_800_000, 20))]),
]), DEVICES]


def _pc(samples, **stalls):
    m = {"num_samples": samples, "num_stalled_samples": sum(stalls.values())}
    m.update({f"stalled_{k}": v for k, v in stalls.items()})
    return m


# nvdisasm -c -g output of a small loop: two LDGSTS from PTX line 10, an HMMA alone on line 11,
# an IADD (not a key instruction) on line 12, the back edge on line 13
SASS = """
        .text.k:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
	//## File "/out/ptx/baseline.ptx", line 10
        /*0010*/                   LDGSTS.E.BYPASS.LTC128B.128 [R2], desc[UR4][R4.64] ;
        /*0020*/                   LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR4][R6.64] ;
	//## File "/out/ptx/baseline.ptx", line 11
        /*0030*/                   HMMA.16816.F32 R8, R12, R16, R8 ;
	//## File "/out/ptx/baseline.ptx", line 12
        /*0040*/                   IADD3 R2, R2, 0x40, RZ ;
	//## File "/out/ptx/baseline.ptx", line 13
        /*0050*/               @P0 BRA `(.L_x_0) ;
	//## File "/out/ptx/baseline.ptx", line 20
        /*0060*/                   EXIT ;
"""

PC_TREE = [_node("ROOT", _pc(0), [
    _node("baseline", {}, [_node("matmul_kernel", _pc(5), [
        _node("/out/ptx/baseline.ptx:10@matmul_kernel", _pc(40, long_scoreboard=30, lg_throttle=10)),
        _node("/out/ptx/baseline.ptx:11@matmul_kernel", _pc(100, math_pipe_throttle=20, short_scoreboard=60)),
        _node("/out/ptx/baseline.ptx:12@matmul_kernel", _pc(10, wait=10)),
        _node("/out/ptx/baseline.ptx:20@matmul_kernel", _pc(3, drain=3)),
        _node("/out/ptx/baseline.ptx:99@matmul_kernel", _pc(7, misc=7)),
    ])]),
]), {}]


def _event(scope, sm, cta, warp, ts_cycles, cycles, kernel="matmul_kernel"):
    return {"cname": "thread_state_running", "name": scope, "cat": kernel, "ph": "X",
            "pid": f"{kernel} Core{sm} CTA{cta}", "tid": f"warp {warp} (line 0)", "ts": ts_cycles / 1000.0,
            "dur": cycles / 1000.0, "args": {"Init Time (ns)": 0, "Post Final Time (ns)": 0,
                                             "Finalization Time (ns)": 0, "Frequency (MHz)": 1000.0,
                                             "call_stack": ["ROOT", "matmul_kernel"]}}


def _trace(kloop, epilogue):
    ev = []
    for cta in range(3):
        for warp in range(2):
            ev.append(_event("kloop", cta % 2, cta, warp, 100, kloop + 10 * cta + warp))
            ev.append(_event("epilogue", cta % 2, cta, warp, 100 + kloop, epilogue + cta))
    return {"displayTimeUnit": "ns", "traceEvents": ev}


def test_kernel_times_per_entry_from_a_hatchet_tree():
    t = proton_data.kernel_times(TIME_TREE)
    assert set(t) == {"baseline", "optimize-epilogue"}
    assert t["baseline"]["matmul_kernel"] == {"time_ns": 2_000_000, "count": 20, "mean_ns": 100_000}
    assert t["optimize-epilogue"]["matmul_kernel"]["mean_ns"] == 90_000


def test_a_file_that_is_not_a_hatchet_tree_is_named(tmp_path):
    p = tmp_path / "x.hatchet"
    p.write_text(json.dumps({"traceEvents": []}))
    with pytest.raises(proton_data.ProtonDataError, match="x.hatchet: not a hatchet tree"):
        proton_data.kernel_times(proton_data.load_json(p), str(p))


def test_line_samples_and_samples_without_a_line():
    rows, unplaced = proton_data.line_samples(PC_TREE)["baseline"]
    assert unplaced == 5
    by_line = {r.line: r for r in rows}
    assert by_line[11].samples == 100 and by_line[11].stalls() == {"math_pipe_throttle": 20, "short_scoreboard": 60}
    assert by_line[10].file == "/out/ptx/baseline.ptx" and by_line[10].function == "matmul_kernel"


def test_samples_land_on_the_hot_loop_runs_exact_and_split():
    rows, unplaced = proton_data.line_samples(PC_TREE)["baseline"]
    a = attribute.attribute(SASS, rows, unplaced)
    got = {r.label: r for r in a.rows}
    assert list(got) == ["2 x LDGSTS.128", "HMMA.16816.F32", "BRA", "other instructions (1)"]
    assert got["2 x LDGSTS.128"].samples == 40 and got["2 x LDGSTS.128"].split == 40   # line 10: two instructions
    assert got["HMMA.16816.F32"].samples == 100 and got["HMMA.16816.F32"].split == 0   # alone on its line
    assert got["HMMA.16816.F32"].top_stalls(1) == [("short_scoreboard", 0.75)]
    assert got["other instructions (1)"].samples == 10
    assert a.loop_samples == 150 and a.kernel_samples == 153 and a.split == 40
    assert a.unmatched == 7 and a.unplaced == 5          # line 99: no instruction of this binary has it
    assert a.stalls["long_scoreboard"] == 30


def test_the_line_table_is_read_per_instruction():
    table = lines.sass_lines(SASS)
    assert [ln for _, _, ln in table] == [None, 10, 10, 11, 12, 13, 20]
    assert table[3] == (0x30, "/out/ptx/baseline.ptx", 11)


PTX = """//
.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0
)
.maxntid 128, 1, 1
{
	.reg .b32 	%r<4>;
$L__func_begin0:
	.loc	1 17 0                          // k.py:17:0
	ld.param.b64 	%rd1, [k_param_0];
	.loc	1 18 4
	mov.u32 	%r1, %tid.x;
	@%p1 st.global.b32 	[%rd1], %r1;
$L__BB0_2:
	ret;
$L__tmp1:
}
	.file	1 "/src/k.py"
"""


def test_reline_gives_each_ptx_instruction_its_own_line():
    out = lines.reline(PTX, "/out/ptx/baseline.ptx")
    src = PTX.splitlines()
    locs = [int(line.split()[2]) for line in out.splitlines() if line.strip().startswith(".loc")]
    assert [src[n - 1].strip().split()[0] for n in locs] == ["ld.param.b64", "mov.u32", "@%p1", "ret;"]
    assert '.file\t1 "/out/ptx/baseline.ptx"' in out and "k.py:17:0" not in out
    assert ".reg" not in "".join(src[n - 1] for n in locs)   # declarations and labels get no line


def test_reline_refuses_ptx_without_line_information():
    with pytest.raises(ValueError, match="without line information"):
        lines.reline(PTX.replace('\t.file\t1 "/src/k.py"\n', ""), "x.ptx")


def test_scope_events_per_warp_in_cycles():
    ev = proton_data.scope_events(_trace(1000, 200))
    assert len(ev) == 12 and {e.scope for e in ev} == {"kloop", "epilogue"}
    e = ev[1]
    assert (e.kernel, e.sm, e.cta, e.warp, e.cycles) == ("matmul_kernel", 0, 0, 0, 200)
    s = scopes.summary(ev)
    assert s["kloop"]["warps"] == 6 and s["kloop"]["median"] == 1010.5
    w = scopes.per_warp(ev)
    assert w[1]["kloop"] == 1011 and w[0]["epilogue"] == 201
    typical = scopes.one_cta(ev)
    assert {x.cta for x in typical} == {1} and min(x.start for x in typical) == 0


def test_not_a_chrome_trace_is_named():
    with pytest.raises(proton_data.ProtonDataError, match="t.json: not a Chrome trace"):
        proton_data.scope_events([1, 2], "t.json")


def _job(tmp_path):
    entries = [{"label": "baseline", "variant": {"name": "baseline", "edits": []}, "config": None},
               {"label": "optimize-epilogue", "variant": {"name": "optimize-epilogue", "edits": []}, "config": None}]
    return Job("gemm_fp16", None, "cuda:90", entries, str(tmp_path))


def test_readme_sets_baseline_and_variant_side_by_side(tmp_path):
    rows, unplaced = proton_data.line_samples(PC_TREE)["baseline"]
    att = {**attribute.attribute(SASS, rows, unplaced).to_json(), "same_code_as_unrelined": True, "ptx": "x"}
    ev = {"baseline": proton_data.scope_events(_trace(1000, 200)),
          "optimize-epilogue": proton_data.scope_events(_trace(1000, 150))}
    data = {"labels": ["baseline", "optimize-epilogue"], "errors": {"scopes": "exit 1: boom (see scopes.log)"},
            "time": proton_data.kernel_times(TIME_TREE), "pcsampling": {"baseline": att, "optimize-epilogue": att},
            "scopes": {k: {"summary": scopes.summary(v), "per_warp": scopes.per_warp(v), "instructions": 608,
                           "instructions_instrumented": 720} for k, v in ev.items()},
            "timeline": None}
    text = render(_job(tmp_path), data)
    assert "| optimize-epilogue | matmul_kernel | 20 | 90.00 | -10.0% |" in text
    assert "| HMMA.16816.F32 | 1 | 100 | 66.7 | 0 | short_scoreboard 75%, math_pipe_throttle 25% |" in text
    assert "| epilogue | 201 (200-202) | 151 (150-152) -24.9% |" in text
    assert "**scopes failed**: exit 1: boom" in text
    assert "608 -> 720 SASS instructions" in text and "Perfetto" in text


def test_timeline_plot_has_one_panel_per_entry(tmp_path):
    pytest.importorskip("matplotlib", reason="the plot extra draws the timeline")
    ev = {"baseline": proton_data.scope_events(_trace(1000, 200)),
          "variant": proton_data.scope_events(_trace(900, 150))}
    path = scopes.plot_timeline(ev, tmp_path / "timeline.png")
    assert path and (tmp_path / "timeline.png").stat().st_size > 1000


def test_without_a_gpu_profile_stops_in_one_line_naming_the_gpu_extra(capsys):
    if gpu_available():
        pytest.skip("this machine has a GPU: the command runs")
    assert main(["profile", "--kernel", "gemm_fp16", "--variants", "optimize-epilogue"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "irlab[gpu]" in err[0] and "Traceback" not in err[0]


def test_bad_scopes_and_modes_are_usage_errors(capsys):
    assert main(["profile", "--kernel", "gemm_fp16", "--target", "cuda:90", "--compile-only",
                 "--scopes", "kloop,x=nodot"]) == 2
    assert "--scopes" in capsys.readouterr().err
    assert main(["profile", "--kernel", "gemm_fp16", "--target", "cuda:90", "--compile-only", "--modes", "pc"]) == 2
    assert "choose from time, pcsampling, scopes" in capsys.readouterr().err


def test_proton_scopes_refuses_outside_proton_instrumentation():
    from irlab import ir
    from irlab.passkit.pass_api import PassError
    from irlab.passkit.registry import make_pass
    m = ir.parse("module {\n  tt.func public @k() {\n    tt.return\n  }\n}\n")
    with pytest.raises(PassError, match="irlab profile --scopes"):
        run_pass(make_pass("proton-scopes"), m)


def test_compile_only_places_scopes_and_keeps_the_sass_of_the_relined_ptx(capsys, tmp_path):
    rc = main(["profile", "--kernel", "gemm_fp16", "--target", "cuda:90", "--variants", "optimize-epilogue",
               "--scopes", "kloop,epilogue,cvt=ttg.convert_layout", "--compile-only", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.count("remark: kloop: ") == 2 and out.count("remark: epilogue: after the K loop to tt.return") == 2
    assert "remark: cvt: " in out.split("optimize-epilogue:")[0]          # the baseline converts; the variant not
    assert "scope cvt: the function has 0 ttg.convert_layout op(s)" in out.split("optimize-epilogue:")[1]
    assert out.count("PTX relined: same SASS yes") == 2
    assert "shared 65536 B -> 65536 B with scope records in global memory" in out


@pytest.mark.gpu
def test_profile_on_the_gpu(tmp_path):
    rc = main(["profile", "--kernel", "gemm_fp16", "--shape", "1024x1024x1024", "--variants", "optimize-epilogue",
               "--launches", "8", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "results.json").read_text())["data"]
    assert rc == 0, data["errors"]
    assert data["time"]["baseline"] and data["time"]["optimize-epilogue"]
    pc = data["pcsampling"]["baseline"]
    assert pc["same_code_as_unrelined"] and pc["loop_samples"] > 0 and pc["stalls"]
    sc = data["scopes"]["baseline"]["summary"]
    assert sc["kloop"]["median"] > sc["epilogue"]["median"] > 0


def test_an_entry_without_a_config_is_named_as_the_kernel_s_own():
    from irlab.profile.report import _config_name
    assert _config_name(None) == "(the kernel's own)"
    assert _config_name("128x128x64-w8") == "128x128x64-w8"
    assert _config_name({"name": "b1024", "meta": {"BLOCK": 1024}}) == "b1024"
