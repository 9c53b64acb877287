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
from irlab.bridge.named_variants import get_variant

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


def test_the_match_goes_by_source_position_and_kind():
    # a 16-byte load is fine for the blocked load on line 10; the same width on the store's line is not
    rep = aw.check(ir.parse(TTGIR), _amdgcn("buffer_store_dwordx2", load="buffer_load_dwordx4"), "amdgcn")
    assert rep.ok
    swapped = _amdgcn("buffer_store_dwordx2").replace("1 10 5 ", "1 20 5 ").replace("k.py:10:5", "k.py:20:5")
    rep = aw.check(ir.parse(TTGIR), swapped, "amdgcn")   # no load at 20:5: judged against every load (one)
    assert rep.ok and rep.checked == 2
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
    assert ins[0].chain == (("standard.py", 43, 13), ("k.py", 20, 5)) and ins[1].chain == (("k.py", 10, 5),)
    rep = aw.check(ir.parse(TTGIR), ptx, "ptx")
    assert len(rep.violations) == 1 and rep.violations[0].instr.bytes == 16


def test_an_unmodelled_layout_is_not_checked_rather_than_guessed():
    text = TTGIR.replace("#ttg.amd_mfma<{version = 3,", "#ttg.amd_mfma<{version = 3, someNewParam = 1,")
    rep = aw.check(ir.parse(text), _amdgcn("buffer_store_dwordx4"), "amdgcn")
    assert rep.ok and rep.unchecked == 1 and rep.checked == 1


# two stores of different layouts on one source line (columns 5 and 40), and a load
ONE_LINE = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @k(%p: !tt.ptr<f16>, %o: tensor<64x64xi32, #blocked>, %o2: tensor<64x64xi32, #mma>, %v: tensor<64x64xf16, #mma>) {
    %x = amdg.buffer_load %p[%o] : !tt.ptr<f16> -> tensor<64x64xf16, #blocked> loc(#loc1)
    amdg.buffer_store %v, %p[%o2] : !tt.ptr<f16> -> tensor<64x64xf16, #mma> loc(STORE_MMA)
    amdg.buffer_store %x, %p[%o] : !tt.ptr<f16> -> tensor<64x64xf16, #blocked> loc(STORE_BLOCKED)
    tt.return
  }
}
#loc1 = loc("/src/k.py":10:5)
#loc2 = loc("/src/k.py":20:5)
#loc3 = loc("/src/k.py":20:40)
#loc4 = loc("/src/helper.py":7:5)
#loc5 = loc("/src/helper.py":8:5)
#loc6 = loc(callsite(#loc4 at #loc2))
#loc7 = loc(callsite(#loc5 at #loc2))
"""


def _stores_on_one_line(mma_loc="#loc2", blocked_loc="#loc3"):
    return ir.parse(ONE_LINE.replace("STORE_MMA", mma_loc).replace("STORE_BLOCKED", blocked_loc))


def _two_stores(mma_loc: str, blocked_loc: str, mma_store="buffer_store_dwordx4") -> str:
    """AMDGCN with the blocked layout's 16-byte store and the MFMA layout's store, each after the
    .loc line given (text after ``.loc\\t``)."""
    return "\n".join([
        '\t.file\t1 "/src" "k.py"', '\t.file\t2 "/src" "helper.py"',
        "\t.loc\t1 10 5                 ; k.py:10:5",
        "\tbuffer_load_dwordx4 v[0:3], v1, s[0:3], 0 offen",
        f"\t.loc\t{blocked_loc}",
        "\tbuffer_store_dwordx4 v[0:3], v1, s[0:3], 0 offen",
        f"\t.loc\t{mma_loc}",
        f"\t{mma_store} v[4:7], v2, s[0:3], 0 offen",
    ])


def test_two_stores_on_one_line_are_told_apart_by_column():
    """A5: the MFMA store's 16-byte instruction is too wide for its own layout (8 B), though the
    blocked store on the same line may move 16 B: compared with the widest on the line, or in the
    kernel, it would pass."""
    rep = aw.check(_stores_on_one_line(), _two_stores("1 20 5 ; k.py:20:5", "1 20 40 ; k.py:20:40"), "amdgcn")
    assert [(v.instr.bytes, v.limit) for v in rep.violations] == [(16, 8)]
    assert [a.op.line for a in rep.violations[0].against] == [6] and rep.checked == 3
    fine = _two_stores("1 20 5 ; k.py:20:5", "1 20 40 ; k.py:20:40", mma_store="buffer_store_dwordx2")
    assert aw.check(_stores_on_one_line(), fine, "amdgcn").ok


def test_two_stores_of_one_inlined_helper_are_told_apart_by_their_own_lines():
    """Both stores are inlined at the same call (k.py:20:5); the AMDGCN's .loc names the helper's
    line and its comment the call site."""
    m = _stores_on_one_line("#loc6", "#loc7")
    isa = _two_stores("2 7 5 ; helper.py:7:5 @[ k.py:20:5 ]", "2 8 5 ; helper.py:8:5 @[ k.py:20:5 ]")
    assert [i.chain for i in aw.instructions(isa, "amdgcn")][1:] == [
        (("helper.py", 8, 5), ("k.py", 20, 5)), (("helper.py", 7, 5), ("k.py", 20, 5))]
    rep = aw.check(m, isa, "amdgcn")
    assert [(v.instr.bytes, v.limit, v.against[0].op.line) for v in rep.violations] == [(16, 8, 6)]
    # the same helper line inlined at another call is another op
    other_call = isa.replace("@[ k.py:20:5 ]\n\tbuffer_store_dwordx4 v[4:7]", "@[ k.py:30:5 ]\n\tbuffer_store_dwordx4 v[4:7]")
    rep = aw.check(m, other_call, "amdgcn")
    assert not rep.violations and rep.undecided   # judged against both stores: 8 < 16 <= 16, undecided


def test_ptx_inline_assembly_keeps_the_location_of_its_op():
    """LLVM counts the .loc line up for each line of an inline-assembly block: the load in the
    fifth line of its block is the op's (line 10), not line 14's."""
    ptx = "\n".join([
        "\t.loc\t1 10 5", "\t// begin inline asm", "\t.loc\t1 10 5", "\tmov.u32 %r1, 0x0;",
        "\t.loc\t1 11 5", "\tmov.u32 %r2, 0x0;", "\t.loc\t1 14 5",
        "\tld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];", "\t// end inline asm",
        "\t.loc\t1 20 5", "\tst.global.v2.b32 [ %rd2 + 0 ], { %r1, %r2 };",
        '\t.file\t1 "/src/k.py"',
    ])
    ins = aw.instructions(ptx, "ptx")
    assert [i.chain for i in ins] == [(("k.py", 10, 5),), (("k.py", 20, 5),)]


def test_one_location_shared_by_ops_of_different_widths_is_undecided_until_relocated():
    """Two stores with one location: a 16-byte instruction there is fine for one and too wide for
    the other. The check says so rather than guessing; a recompile whose line info names each op
    settles it."""
    m = _stores_on_one_line("#loc2", "#loc2")
    isa = _two_stores("1 20 5 ; k.py:20:5", "1 20 5 ; k.py:20:5")
    rep = aw.check(m, isa, "amdgcn")
    assert rep.ok and len(rep.undecided) == 2 and "allow 8 to 16 B" in rep.undecided[0].why
    relocation = aw.relocate(m)
    stores = [op for op in relocation.ops if op.name == "amdg.buffer_store"]
    lines = {op: relocation.base + relocation.ops.index(op) * relocation.stride for op in relocation.ops}
    assert relocation.base > 40 and len(set(lines.values())) == 3
    for op in relocation.ops:
        assert f'loc("/src/k.py":{lines[op]}:1)' in relocation.text
    assert ir.parse(relocation.text)   # still IR
    relocated = _two_stores(f"1 {lines[stores[0]]} 1", f"1 {lines[stores[1]]} 1")
    found = aw.identify(relocation, isa, relocated, "amdgcn")
    assert sorted(found.values(), key=lambda op: op.line) == stores
    rep = aw.check(m, isa, "amdgcn", identified=found)
    assert [(v.instr.bytes, v.limit) for v in rep.violations] == [(16, 8)] and not rep.undecided
    # a recompile whose code differs says nothing
    assert isinstance(aw.identify(relocation, isa, relocated.replace("v[4:7], v2", "v[4:7], v3"), "amdgcn"), str)


def test_an_instruction_its_line_info_places_nowhere_is_judged_against_every_op_of_its_kind():
    """Line 0 (a location LLVM lost): too wide only if wider than every store allows, fine only if
    no wider than any allows."""
    nowhere = _two_stores("1 0 0 ; :0:0", "1 20 40 ; k.py:20:40")
    rep = aw.check(_stores_on_one_line(), nowhere, "amdgcn")
    assert rep.ok and len(rep.undecided) == 1 and "names no op" in rep.undecided[0].why
    rep = aw.check(ir.parse(TTGIR), _amdgcn("buffer_store_dwordx4").replace("1 20 5 ", "1 0 0 "), "amdgcn")
    assert [(v.instr.bytes, v.limit) for v in rep.violations] == [(16, 8)]
    rep = aw.check(ir.parse(TTGIR), _amdgcn("buffer_store_dwordx2").replace("1 20 5 ", "1 0 0 "), "amdgcn")
    assert rep.ok and rep.checked == 2


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
    from irlab.bridge.named_variants import resolve
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


# ------------------------------------------------------------------------------------------------
# compiled kernels whose stores of different layouts share a line (tests/kernels/shared_line_stores.py)

SHARED_LINE_KERNELS = ("one_line", "one_helper", "in_loop")
# the 128-element fp16 vector's store moves 2 B per lane; planted in its place, an 8-byte store is
# no wider than the other stores on its line (and in the kernel) allow
NARROW_TO_WIDE = {"amdgcn": ("buffer_store_short ", "buffer_store_dwordx2 "),
                  "ptx": ("st.global.b16 ", "st.global.v2.b32 ")}


def _compile_shared_line(kernel: str, target: str):
    from tests.kernels import shared_line_stores as k
    return compile_kernel(k.KERNELS[kernel], target, args=k.ARGS, constexprs=k.CONSTEXPRS, options={"num_warps": 4})


def _isa(res) -> str:
    return "amdgcn" if res.target.is_amd else "ptx"


def _stores_sharing_one_location(ttgir: str, store: str) -> str:
    """``ttgir`` with every ``store`` op given the location of the first."""
    first = re.search(rf"^\s*{re.escape(store)} [^\n]*(loc\(#loc\d+\))$", ttgir, re.M).group(1)
    return re.sub(rf"^(\s*{re.escape(store)} [^\n]*)loc\(#loc\d+\)$", lambda m: m.group(1) + first, ttgir, flags=re.M)


@pytest.mark.parametrize("target", ["hip:gfx942", "cuda:90"])
@pytest.mark.parametrize("kernel", SHARED_LINE_KERNELS)
def test_a_store_too_wide_for_its_own_op_is_caught_beside_wider_stores(kernel, target):
    """The compiled kernel passes; with the vector store's instructions widened to 8 B (what a stale
    hint on it would make), each widened instruction is reported against the vector store's own
    2 B -- not against the 8 or 16 B that the other stores on its line, or in its helper, allow."""
    res = _compile_shared_line(kernel, target)
    rep = check_access_widths(res)
    assert rep.ok and rep.unchecked == 0 and rep.checked >= 6
    isa = _isa(res)
    narrow, wide = NARROW_TO_WIDE[isa]
    text = res.asm[isa]
    planted = text.count(narrow)
    assert planted >= 1
    rep = aw.check(ir.parse(res.asm["ttgir"]), text.replace(narrow, wide), isa)
    assert len(rep.violations) == planted and not rep.undecided
    assert all((v.instr.bytes, v.limit) == (8, 2) for v in rep.violations)
    assert all(_stored_shape(a.op) == (128,) for v in rep.violations for a in v.against)


def _stored_shape(op) -> tuple:
    return op.named_operands()["value"].type.shape


@pytest.mark.parametrize("target", ["hip:gfx942", "cuda:90"])
def test_stores_that_share_one_location_are_placed_by_a_relocated_recompile(target):
    """All three stores given one location: their line info cannot tell them apart, the recompile
    with one location per access op does (its code is the same), and a widened vector store is then
    caught against its own op."""
    from irlab.bridge.access_check import _recompile
    res = _compile_shared_line("one_line", target)
    isa = _isa(res)
    store = "amdg.buffer_store" if res.target.is_amd else "tt.store"
    shared = recompile(_stores_sharing_one_location(res.asm["ttgir"], store), target, stage="ttgir")
    module = ir.parse(shared.asm["ttgir"])
    assert aw.check(module, shared.asm[isa], isa).undecided
    rep = check_access_widths(shared)
    assert rep.ok and rep.unchecked == 0 and any("placed on their op by a recompile" in n for n in rep.notes)
    # the same widening planted in both compiles keeps their code alike: the relocated one names the op
    relocation = aw.relocate(module)
    again = _recompile(relocation.text, shared)
    narrow, wide = NARROW_TO_WIDE[isa]
    found = aw.identify(relocation, shared.asm[isa].replace(narrow, wide), again.asm[isa].replace(narrow, wide), isa)
    assert isinstance(found, dict)
    planted = shared.asm[isa].replace(narrow, wide)
    assert not aw.check(module, planted, isa).violations        # undecided by line info alone
    rep = aw.check(module, planted, isa, identified=found)
    assert len(rep.violations) == shared.asm[isa].count(narrow) and all(v.limit == 2 for v in rep.violations)


def _stale_mfma_store_hint(ttgir: str) -> str:
    """The MFMA-layout store's ``contiguity = 4`` (its layout's run) raised to 8."""
    out, n = re.subn(r"amdg\.buffer_store [^\n]*\{contiguity = 4 : i32\}[^\n]*#mma>",
                     lambda m: m.group(0).replace("contiguity = 4", "contiguity = 8"), ttgir)
    assert n >= 1
    return out


@pytest.mark.skipif(not TRITON_VERSION.startswith("3.9"), reason="Triton 3.9 writes the contiguity hint on AMD")
@pytest.mark.parametrize("shared_location", [False, True])
@pytest.mark.parametrize("kernel", SHARED_LINE_KERNELS)
def test_a_planted_stale_hint_beside_a_legitimate_wide_store_is_caught(kernel, shared_location):
    """gfx942: the MFMA store's hint raised from 4 to 8 makes 16-byte stores of two 4-element runs;
    the blocked store on its line (or in its helper, or in its loop) legitimately moves 16 B. Each
    stale instruction is reported against the MFMA store; with every store at one location, after
    the relocated recompile."""
    res = _compile_shared_line(kernel, "hip:gfx942")
    ttgir = _stale_mfma_store_hint(res.asm["ttgir"])
    if shared_location:
        ttgir = _stores_sharing_one_location(ttgir, "amdg.buffer_store")
    bad = recompile(ttgir, "hip:gfx942", stage="ttgir")
    rep = check_access_widths(bad)
    assert rep.violations and not rep.undecided
    assert all((v.instr.bytes, v.limit) == (16, 8) and "#mma" in v.against[0].why for v in rep.violations)
    assert len(rep.violations) == bad.asm["amdgcn"].count("buffer_store_dwordx4") - \
        res.asm["amdgcn"].count("buffer_store_dwordx4")
    assert shared_location == any("placed on their op by a recompile" in n for n in rep.notes)


def test_a_buffer_load_to_local_is_bounded_by_the_elements_it_moves_not_its_offsets():
    """``amdg.buffer_load_to_local`` copies f16 elements straight into LDS; its offsets are i32.
    A lane holding runs of 8 moves at most 8 x 2 B = 16 B per instruction: sized by its i32
    offsets the bound would double and a 32-byte access would pass."""
    m = ir.parse("""#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @k(%p: !tt.ptr<f16>, %o: tensor<64x64xi32, #blocked>, %d: !ttg.memdesc<64x64xf16, #shared, #smem, mutable>) {
    %t = amdg.buffer_load_to_local %p[%o] into %d : !tt.ptr<f16>[tensor<64x64xi32, #blocked>]  -> <64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}
""")
    [acc] = [a for a in aw.accesses(m) if a.op.name == "amdg.buffer_load_to_local"]
    assert acc.kind == "load" and acc.limit == 16, (acc.limit, acc.why)
    assert "8 consecutive element(s) of 2 B" in acc.why


ITT_KERNELS = ["gemm_fp16", "gemm_splitk", "int4_gemm", "tests/kernels/gemm_dtypes.py", "tests/kernels/i8_gemm.py"]


@pytest.mark.parametrize("target", ["hip:gfx942", "hip:gfx950"])
@pytest.mark.parametrize("kernel", ITT_KERNELS)
def test_in_thread_transpose_accesses_no_wider_than_its_layouts_allow(kernel, target):
    """in-thread-transpose gives a global load a new blocked layout (wider along K, the same run
    along the fastest dimension): every global access of the compiled AMDGCN stays within what
    the rewritten TTGIR's layouts allow, and the loads are checked, not skipped."""
    from irlab.kernels import get
    from irlab.bridge.named_variants import resolve
    res = compile_kernel(get(kernel), target, variant=resolve("in-thread-transpose", target))
    rep = check_access_widths(res)
    assert rep.ok, rep.summary()
    assert rep.checked > 0
    # the GEMMs whose B is loaded N-fastest are rewritten where their loads pass through registers
    # (gfx942; gfx950 copies straight to LDS on Triton 3.9, and goes through registers on 3.6)
    rewritten = "amdg.in_thread_transpose" in res.asm["ttgir"]
    if kernel in ("gemm_fp16", "gemm_splitk", "tests/kernels/gemm_dtypes.py"):
        assert rewritten == (target == "hip:gfx942" or TRITON_VERSION.startswith("3.6"))


def test_a_lane_holding_a_whole_dimension_may_load_it_as_one_vector():
    """Triton vectorizes along the dimension the pointer is contiguous in, which need not be the
    layout's fastest one: a ``2x1`` i64 tensor whose lane holds both rows (no other thread or warp
    along dim 0) is loaded as one 16-byte ``ld.global.v2.b64`` (Inductor's per-row index loads on
    Hopper). The bound is 2 x 8 B; a layout that spreads dim 0 over threads still bounds it at 8 B."""
    def limit(layout, shape="2x1"):
        m = ir.parse(f"""#blocked = #ttg.blocked<{{{layout}}}>
module attributes {{"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%p: tensor<{shape}x!tt.ptr<i64>, #blocked>) {{
    %v = tt.load %p : tensor<{shape}x!tt.ptr<i64>, #blocked>
    tt.return
  }}
}}
""")
        [acc] = aw.accesses(m)
        return acc.limit, acc.why
    alone, why = limit("sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]")
    assert alone == 16 and "along dim 0" in why, why
    shared, why = limit("sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]")
    assert shared == 8, why
    # repetitions of a 2-element run that no other lane shares are adjacent too
    assert limit("sizePerThread = [2, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]",
                 "8x1")[0] == 64
