"""lds-transposes: LDS trips and transposes on the documents' snippet and real compiler output."""
from __future__ import annotations

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel, recompile
from irlab.bridge.pass_runner import run_pass
from irlab.kernels import KERNELS
from irlab.passkit.registry import make_pass
from irlab.report.findings import render_table


def run(text, **options):
    m = ir.parse(text)
    return m, run_pass(make_pass("lds-transposes", options), m)


def kinds(res):
    return [f["kind"] for f in res.data["findings"]]


def test_fa_decode_snippet_two_round_trips_and_address_only_transposes(fa_snippet):
    m, res = run(fa_snippet)
    f = res.data["findings"]
    trips = [x for x in f if x["kind"] == "lds-round-trip"]
    assert len(trips) == 2
    assert trips[0]["op"] == "%269 = triton_gpu.convert_layout" and "%276" in trips[0]["detail"]
    assert trips[1]["op"] == "%298 = triton_gpu.convert_layout" and "%300" in trips[1]["detail"]
    transposes = [x for x in f if x["kind"] == "transpose"]
    assert [t["op"] for t in transposes] == ["%270 = tt.trans", "%299 = tt.trans"]
    assert all(t["classification"] == "free view" and "only the addresses change" in t["detail"] for t in transposes)
    absorb = [x for x in f if x["kind"] == "absorbable-trip"]
    assert len(absorb) == 1 and absorb[0]["trips"] == [1, 2]
    assert "layout kinds only" in res.data["lds_decided_by"]
    assert all(x["line"] for x in f)
    assert str(m) == fa_snippet and not res.changed


def test_int4_gemm_on_sm80_goes_through_lds_twice():
    text = compile_kernel(KERNELS["int4_gemm"], "cuda:80").text("ttgir")
    m, res = run(text)
    assert res.data["lds_decided_by"] == "Triton's shared-memory allocation"
    k = kinds(res)
    assert k.count("lds-staging") == 2 and k.count("lds-round-trip") == 1
    trip = next(x for x in res.data["findings"] if x["kind"] == "lds-round-trip")
    assert "ttg.memdesc_trans" in trip["detail"] and trip["location"].startswith("int4_gemm.py:")
    # the epilogue's convert out of the MMA layout is one Triton gives LDS scratch
    cvt = next(x for x in res.data["findings"] if x["kind"] == "convert-through-lds")
    assert "#mma -> #blocked" in cvt["detail"]
    assert "absorbable-trip" in k
    t = next(x for x in res.data["findings"] if x["kind"] == "transpose")
    assert t["op"].endswith("ttg.memdesc_trans") and t["classification"] == "free view"


def test_register_transposes_are_free_views_on_gfx942():
    text = compile_kernel(KERNELS["int4_gemm"], "hip:gfx942").text("ttgir")
    m, res = run(text)
    ts = [x for x in res.data["findings"] if x["kind"] == "transpose"]
    assert ts and all(t["op"].endswith("tt.trans") and "on registers" in t["detail"] for t in ts)


def test_wgmma_reads_shared_memory_directly_on_sm90():
    text = compile_kernel(KERNELS["int4_gemm"], "cuda:90").text("ttgir")
    m, res = run(text)
    assert "lds-operand" in kinds(res)


def test_without_asking_triton_converts_are_undecided():
    text = compile_kernel(KERNELS["gemm_fp16"], "cuda:80").text("ttgir")
    m, res = run(text, ask_triton=False)
    assert "convert-undecided" in kinds(res) and "convert-through-lds" not in kinds(res)


def test_kernel_without_shared_memory():
    text = compile_kernel(KERNELS["softmax"], "cuda:80").text("ttgir")
    m, res = run(text)
    assert res.data["findings"] == [] and "no shared-memory trips and no transposes" in res.diagnostics[0].message


@pytest.fixture(scope="module")
def gfx942_int4():
    return compile_kernel(KERNELS["int4_gemm"], "hip:gfx942").text("ttgir", locations=False)


def _add_cancelling_pair(text, between=""):
    """Insert trans(trans(x)) in front of the real transpose of the int4 kernel and make the real one use it."""
    m = ir.parse(text)
    t = m.first("tt.trans")
    x = t.operands[0]
    xt, tt = str(x.type), str(t.result.type)
    between = between.replace("TRANSPOSED_TYPE", tt)
    pair = (f"%irlab_t1 = tt.trans {x.ref} {{order = array<i32: 1, 0>}} : {xt} -> {tt}\n"
            f"{between}"
            f"%irlab_t2 = tt.trans %{'irlab_mid' if between else 'irlab_t1'} {{order = array<i32: 1, 0>}} : {tt} -> {xt}")
    rw = ir.Rewriter(m)
    rw.insert_before(t, pair)
    t2 = next(o for o in m.walk() if o.results and o.results[0].name == "irlab_t2")
    rw.replace_all_uses(x, t2.result, only=lambda u: u.op is t)
    return str(m), tt


def cancel(text):
    m = ir.parse(text)
    return m, run_pass(make_pass("cancel-transposes"), m)


def test_the_analysis_reports_a_cancelling_pair_and_the_fix_pass_removes_it(gfx942_int4):
    text, _ = _add_cancelling_pair(gfx942_int4)
    m, res = run(text)   # the analysis reports and changes nothing
    assert not res.changed and "cancelling-transposes" in kinds(res) and str(m) == text
    m, res = cancel(text)
    assert res.changed and res.verified and "irlab_t1" not in str(m) and "irlab_t2" not in str(m)
    assert any("removed %irlab_t1 = tt.trans and %irlab_t2 = tt.trans" in d.message for d in res.diagnostics)
    assert recompile(str(m), target="hip:gfx942", produced_by="cancel-transposes").binary


@pytest.mark.parametrize("between", [
    "%irlab_mid = math.absf %irlab_t1 : TRANSPOSED_TYPE\n",
    # an elementwise op with a splat-constant operand: the constant is re-typed to the untransposed shape
    "%irlab_two = arith.constant dense<2.000000e+00> : TRANSPOSED_TYPE\n"
    "%irlab_mid = arith.mulf %irlab_t1, %irlab_two : TRANSPOSED_TYPE\n",
])
def test_the_fix_cancels_across_elementwise_ops(gfx942_int4, between):
    text, _ = _add_cancelling_pair(gfx942_int4, between=between)
    m, res = cancel(text)
    assert res.changed and res.verified, [str(d) for d in res.diagnostics]
    mid = next(o for o in m.walk() if o.results and o.results[0].name == "irlab_mid")
    assert str(mid.result.type) == str(mid.operands[0].type) and "irlab_t1" not in str(m) and "irlab_t2" not in str(m)
    assert recompile(str(m), target="hip:gfx942").binary


def test_the_fix_leaves_a_pair_across_a_broadcast(gfx942_int4):
    text = gfx942_int4
    m, res = cancel(text)
    assert not res.changed and str(m) == text


def test_table_rendering(fa_snippet):
    m, res = run(fa_snippet)
    table = render_table(res.data["findings"])
    lines = table.splitlines()
    assert lines[0].split() [:5] == ["#", "finding", "op", "line", "source"]
    assert "lds-round-trip" in lines[1] and "%269 = triton_gpu.convert_layout" in lines[1]


def test_a_convert_of_a_memdesc_is_reported_with_its_type():
    """Triton's verifier rejects a convert_layout of a memdesc, but irlab reads text it was not
    given to verify: the finding names the memdesc type instead of failing on it."""
    from irlab.analysis import lds
    memdesc = "!ttg.memdesc<64x32xf16, #shared, #smem, mutable>"
    text = ("#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>\n"
            "#smem = #ttg.shared_memory\n"
            "#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
            "order = [1, 0]}>\n"
            'module attributes {"ttg.num-warps" = 4 : i32} {\n'
            f"  tt.func public @f(%m: {memdesc}) {{\n"
            f"    %c = ttg.convert_layout %m : {memdesc} -> tensor<64x32xf16, #blocked>\n"
            "    tt.return\n  }\n}\n")
    found = lds.analyse(ir.parse(text))["findings"]
    assert [f["kind"] for f in found] == ["convert-undecided"]
    assert f"{memdesc} -> #blocked: undecided" in found[0]["detail"]
