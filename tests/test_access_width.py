"""The static access-width check: every global load and store of the compiled AMDGCN or PTX moves
no more bytes per lane than the TTGIR layout gives that lane as one run. It must pass on every
golden case (the golden suite runs it) and fail on a store that claims a stale, wider
contiguity -- the optimize-epilogue miscompile of Triton 3.9 on AMD."""
from __future__ import annotations

import re

import pytest

from irlab import ir
from irlab.analysis import access_width as aw
from irlab.bridge.compat import TRITON_VERSION
from irlab.bridge.compile import compile_kernel, recompile
from irlab.golden.suite import check_access_widths
from irlab.kernels import KERNELS
from irlab.named_variants import get_variant

TTGIR = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @k(%p: !tt.ptr<f16>, %o: tensor<64x64xi32, #blocked>, %o2: tensor<64x64xi32, #mma>, %v: tensor<64x64xf16, #mma>) {
    %x = amdg.buffer_load %p[%o] : !tt.ptr<f16> -> tensor<64x64xf16, #blocked> loc(#loc1)
    amdg.buffer_store %v, %p[%o2] : !tt.ptr<f16> -> tensor<64x64xf16, #mma> loc(#loc2)
    tt.return
  }
}
#loc1 = loc("/src/k.py":10:5)
#loc2 = loc("/src/k.py":20:5)
"""


def _amdgcn(store: str, load: str = "buffer_load_dwordx4") -> str:
    return "\n".join([
        '\t.file\t1 "/src" "k.py"',
        "\t.loc\t1 10 5                 ; k.py:10:5",
        f"\t{load} v[0:3], v1, s[0:3], 0 offen",
        "\t.loc\t1 20 5                 ; k.py:20:5",
        f"\t{store} v[0:1], v2, s[0:3], 0 offen",
    ])


def test_a_store_as_wide_as_the_layouts_run_passes():
    rep = aw.check(ir.parse(TTGIR), _amdgcn("buffer_store_dwordx2"), "amdgcn")
    assert rep.ok and rep.checked == 2 and rep.unchecked == 0


def test_a_store_wider_than_the_layouts_run_is_reported():
    rep = aw.check(ir.parse(TTGIR), _amdgcn("buffer_store_dwordx4"), "amdgcn")
    assert not rep.ok and len(rep.violations) == 1
    v = rep.violations[0]
    assert (v.instr.bytes, v.limit) == (16, 8)
    assert "buffer_store_dwordx4" in str(v) and "4 consecutive element(s) of 2 B" in str(v)


def test_the_match_goes_by_source_line_and_kind():
    # a 16-byte load is fine for the blocked load on line 10; the same width on the store's line is not
    rep = aw.check(ir.parse(TTGIR), _amdgcn("buffer_store_dwordx2", load="buffer_load_dwordx4"), "amdgcn")
    assert rep.ok
    swapped = _amdgcn("buffer_store_dwordx2").replace("1 10 5 ", "1 20 5 ").replace("k.py:10:5", "k.py:20:5")
    assert aw.check(ir.parse(TTGIR), swapped, "amdgcn").ok     # no load on line 20: the kernel's widest load
    rep = aw.check(ir.parse(TTGIR), _amdgcn("global_store_dwordx4"), "amdgcn")
    assert not rep.ok


def test_ptx_vector_width_and_inlined_locations():
    ptx = "\n".join([
        '\t.file\t1 "/src/k.py"', '\t.file\t2 "/lib/standard.py"',
        "\t.loc\t2 43 13, function_name $L__info_string0, inlined_at 1 20 5 // standard.py:43:13",
        "\t@%p1 st.global.v4.b32 [ %rd1 + 0 ], { %r1, %r2, %r7, %r8 };",
        "\t.loc\t1 10 5",
        "\tld.global.L1::evict_last.v4.b32 { %r3, %r4, %r5, %r6 }, [ %rd2 + 0 ];",
    ])
    ins = aw.instructions(ptx, "ptx")
    assert [(i.kind, i.bytes) for i in ins] == [("store", 16), ("load", 16)]
    assert ("k.py", 20) in ins[0].lines
    rep = aw.check(ir.parse(TTGIR), ptx, "ptx")
    assert len(rep.violations) == 1 and rep.violations[0].instr.bytes == 16


def test_an_unmodelled_layout_is_not_checked_rather_than_guessed():
    text = TTGIR.replace("#ttg.amd_mfma<{version = 3,", "#ttg.amd_mfma<{version = 3, someNewParam = 1,")
    rep = aw.check(ir.parse(text), _amdgcn("buffer_store_dwordx4"), "amdgcn")
    assert rep.ok and rep.unchecked == 1 and rep.checked == 1


@pytest.mark.skipif(not TRITON_VERSION.startswith("3.9"), reason="Triton 3.9 writes the contiguity hint on AMD")
def test_a_stale_contiguity_hint_fails_the_check_and_the_recomputed_one_passes():
    """optimize-epilogue's output on gfx942, with the blocked layout's contiguity (8) put back on the
    MFMA-layout store, compiles to 128-bit stores of non-adjacent runs: the check says so."""
    res = compile_kernel(KERNELS["gemm_fp16"], "hip:gfx942",
                         variant=get_variant("optimize-epilogue", "hip:gfx942"))
    assert check_access_widths(res).ok
    ttgir = res.asm["ttgir"]
    fixed = re.search(r"amdg\.buffer_store [^\n]*\{contiguity = (\d+) : i32\}[^\n]*#mma>", ttgir)
    assert fixed and fixed.group(1) == "4"
    stale = ttgir.replace(fixed.group(0), fixed.group(0).replace("contiguity = 4", "contiguity = 8"))
    bad = recompile(stale, "hip:gfx942", stage="ttgir")
    rep = check_access_widths(bad)
    assert not rep.ok and all(v.instr.bytes == 16 and v.limit == 8 for v in rep.violations)


FOLDED = """#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [64], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @k(%p: !tt.ptr<i32>, %s: i32) {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    %c8 = arith.constant dense<8> : tensor<1024xi32, #blocked>
    %q = arith.divsi %r, %c8 : tensor<1024xi32, #blocked>
    %ss = tt.splat %s : i32 -> tensor<1024xi32, #blocked>
    %o = SCALE
    %x = amdg.buffer_load %p[%o] : !tt.ptr<i32> -> tensor<1024xi32, #blocked> loc(#loc1)
    tt.return
  }
}
#loc1 = loc("/src/k.py":10:5)
"""


@pytest.mark.parametrize("scale, checked", [
    ("arith.addi %q, %r : tensor<1024xi32, #blocked>", False),      # k // 8 + k: neighbours possible
    ("arith.muli %q, %ss : tensor<1024xi32, #blocked>", True),     # (k // 8) * stride: never provable
])
def test_address_math_that_folds_addresses_leaves_the_access_unchecked(scale, checked):
    m = ir.parse(FOLDED.replace("SCALE", scale))
    (acc,) = aw.accesses(m)
    assert (acc.limit is not None) == checked
    if not checked:
        assert "arith.divsi" in acc.why
    rep = aw.check(m, _amdgcn("buffer_store_dword", load="buffer_load_dwordx4"), "amdgcn")
    # the store on line 20 has no TTGIR store to compare with: not checked either way
    assert (rep.unchecked, len(rep.violations)) == ((1, 1) if checked else (2, 0))


EPILOGUE_KERNELS = ["gemm_fp16", "int4_gemm", "tests/kernels/attention.py", "tests/kernels/persistent_gemm.py",
                    "tests/kernels/gemm_dtypes.py"]


def _store_hints(res) -> set:
    return {int(c) for line in re.findall(r"amdg\.buffer_store [^\n]*", res.asm["ttgir"])
            for c in re.findall(r"contiguity = (\d+)", line)}


@pytest.mark.skipif(not TRITON_VERSION.startswith("3.9"), reason="Triton 3.9 writes the contiguity hint on AMD")
@pytest.mark.parametrize("target", ["hip:gfx942", "hip:gfx950"])
@pytest.mark.parametrize("kernel", EPILOGUE_KERNELS)
def test_optimize_epilogue_stores_no_wider_than_the_mfma_layout_allows(kernel, target):
    """On every corpus kernel and kernel file with an MFMA epilogue: the access-width check holds,
    the store claims runs of 4 (the MFMA 32x32 layout's) -- or, on gfx950, 8 where it stores from
    the wide-store linear layout -- and on gfx942, where Triton's own epilogue stores from the
    same layout, the hint is Triton's."""
    from irlab.kernels import get
    from irlab.named_variants import resolve
    spec = get(kernel)
    res = compile_kernel(spec, target, variant=resolve("optimize-epilogue", target))
    assert check_access_widths(res).ok
    wide = any(o.value.type.layout.kind == "linear" for o in res.module("ttgir", locations=False).walk()
               if o.name == "amdg.buffer_store" and o.value.type.layout is not None)
    hints = _store_hints(res)
    assert (8 in hints and hints <= {4, 8}) if wide else hints == {4}
    assert not wide or target == "hip:gfx950"
    if target == "hip:gfx942":
        assert _store_hints(compile_kernel(spec, target)) == {4}


ITT_KERNELS = ["gemm_fp16", "gemm_splitk", "int4_gemm", "tests/kernels/gemm_dtypes.py", "tests/kernels/i8_gemm.py"]


@pytest.mark.parametrize("target", ["hip:gfx942", "hip:gfx950"])
@pytest.mark.parametrize("kernel", ITT_KERNELS)
def test_in_thread_transpose_accesses_no_wider_than_its_layouts_allow(kernel, target):
    """in-thread-transpose gives a global load a new blocked layout (wider along K, the same run
    along the fastest dimension): every global access of the compiled AMDGCN stays within what
    the rewritten TTGIR's layouts allow, and the loads are checked, not skipped."""
    from irlab.kernels import get
    from irlab.named_variants import resolve
    res = compile_kernel(get(kernel), target, variant=resolve("in-thread-transpose", target))
    rep = check_access_widths(res)
    assert rep.ok, rep.summary()
    assert rep.checked > 0
    # the GEMMs whose B is loaded N-fastest are rewritten where their loads pass through registers
    # (gfx942; gfx950 copies straight to LDS on Triton 3.9, and goes through registers on 3.6)
    rewritten = "amdg.in_thread_transpose" in res.asm["ttgir"]
    if kernel in ("gemm_fp16", "gemm_splitk", "tests/kernels/gemm_dtypes.py"):
        assert rewritten == (target == "hip:gfx942" or TRITON_VERSION.startswith("3.6"))
