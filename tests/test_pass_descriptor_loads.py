"""descriptor-loads: the tutorial GEMM's K loop fed by TMA, checked on TTIR, TTGIR and SASS
(CPU-only: cross-compiled for cuda:90), and refusals with reasons where the rewrite would not
compute the same thing."""
from __future__ import annotations

from pathlib import Path

import pytest

from irlab import ir, report
from irlab.analysis.index_expr import int_constant
from irlab.bridge import compat
from irlab.bridge.compile import compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.kernels.spec import TileConfig
from irlab.kernels import KERNELS
from irlab.passkit.registry import make_pass
from irlab.passkit.variant import Insert, Variant

ROOT = Path(__file__).resolve().parent.parent
BEST = TileConfig("128x256x64-w8-s3", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, 8, 3)
TMA = Insert("descriptor-loads", stage="ttir", at="end", cleanup=("canonicalize",))
TMA_STORE = Insert("descriptor-loads", stage="ttir", at="end", options={"store": True}, cleanup=("canonicalize",))
WS = Insert("loop-attributes", stage="ttir", at="end", options={"warp_specialize": True})


@pytest.fixture(scope="module")
def ttir():
    return compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST).text("ttir", locations=False)


def apply(text, **options):
    m = ir.parse(text)
    return m, run_pass(make_pass("descriptor-loads", options), m)


def notes(res):
    return " | ".join(d.message for d in res.diagnostics)


def names(m, where=None):
    ops = where.walk() if where is not None else m.walk()
    return [o.name for o in ops]


def test_k_loop_loads_become_descriptor_loads(ttir):
    m, res = apply(ttir)
    assert res.changed and res.verified, notes(res)
    loop = m.first("scf.for")
    assert "tt.load" not in names(m, loop)
    assert names(m, loop).count("tt.descriptor_load") == 2
    descs = [o.text for o in m.walk() if o.name == "tt.make_tensor_descriptor"]
    assert len(descs) == 2
    # A is [M, K] with its row pitch, B is [K, N]; the innermost stride is 1
    assert "[%arg3, %arg5]" in descs[0] and f"<{compat.tensordesc_block((128, 64), 'f16')}>" in descs[0]
    assert "[%arg5, %arg4]" in descs[1] and f"<{compat.tensordesc_block((64, 256), 'f16')}>" in descs[1]
    assert sum(d.severity == "remark" and "through TMA" in d.message for d in res.diagnostics) == 2
    # the dead pointer iter_args are yielded unchanged, for canonicalize to drop
    yld = loop.body.ops[-1]
    assert yld.operands[0] is loop.iter_args[0] and yld.operands[1] is loop.iter_args[1]
    assert "tt.store" in names(m)   # the epilogue is left alone without store=true


def test_store_option_turns_the_epilogue_into_a_descriptor_store(ttir):
    m, res = apply(ttir, store=True)
    assert res.changed and res.verified, notes(res)
    assert "tt.store" not in names(m) and names(m).count("tt.descriptor_store") == 1
    m2, res2 = apply(ttir, loads=False, store=True)
    assert res2.changed and "tt.descriptor_load" not in names(m2) and "tt.descriptor_store" in names(m2)


@pytest.mark.parametrize("split, width", [(2, 128), (4, 64)])
def test_store_split_stores_the_tile_as_column_subtiles(ttir, split, width):
    """Epilogue subtiling: the 128x256 tile as ``split`` TMA stores of 128 x 256/split boxes, at
    column offsets 0, w, 2w, ... of the tile's own column, through one descriptor of the subtile."""
    m, res = apply(ttir, store=True, store_split=split)
    assert res.changed and res.verified, notes(res)
    stores = [o for o in m.walk() if o.name == "tt.descriptor_store"]
    assert len(stores) == split and "tt.store" not in names(m)
    assert names(m).count("tt.split") == split - 1
    block = compat.tensordesc_block((128, width), "f16")
    descs = [o.text for o in m.walk() if o.name == "tt.make_tensor_descriptor" and "[%arg3, %arg4]" in o.text]
    assert len(descs) == 1 and f"<{block}>" in descs[0]
    # each subtile's column: the tile's, then + w, + 2w, ...
    cols = [st.operands[2] for st in stores]
    offsets = [0] + [int_constant(c.defining_op.operands[1]) for c in cols[1:]]
    assert offsets == [k * width for k in range(split)]
    assert all(c.defining_op.operands[0] is cols[0] for c in cols[1:])
    assert f"as {split} subtiles of 128x{width}" in notes(res)


def test_store_split_compiles_with_less_shared_memory():
    """In the persistent form (whose store buffer cannot reuse the K loop's ring: the next tile's
    loads are in flight) the TMA store's staging buffer shrinks with the subtile."""
    shared = {}
    persistent = Insert("persistent-tiles", {"flatten": True}, stage="ttir", at="end")
    for split in (1, 2):
        edit = Insert("descriptor-loads", stage="ttir", at="end", options={"store": True, "store_split": split},
                      cleanup=("canonicalize",))
        res = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST,
                             variant=Variant(f"split{split}", (persistent, edit)))
        assert "ttng.async_tma_copy_local_to_global" in res.asm["ttgir"]
        shared[split] = res.metadata["shared"]
    assert shared[2] < shared[1]


def test_store_split_refuses_a_subtile_below_the_tma_box_minimum(ttir):
    narrow = ttir.replace("256", "16")      # a 128x16 tile: 4 subtiles would be 4 columns, 8 bytes wide
    m, res = apply(narrow, store=True, store_split=4)
    assert "tt.store" in names(m) and "tt.descriptor_store" not in names(m)
    assert "store left as is: inner box 8 B < 16 B TMA minimum" in notes(res)


def test_full_variant_uses_tma_in_ttgir_and_sass():
    base = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST)
    res = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST, variant=Variant("tma-loads", (TMA,)))
    ttgir = res.asm["ttgir"]
    assert "ttng.async_tma_copy_global_to_local" in ttgir and "ttg.async_copy_global_to_local" not in ttgir
    assert res.metadata["global_scratch_size"] > 0          # descriptors are built on the device
    rb, rt = report.from_compile(base), report.from_compile(res)
    mb, mt = rb.metrics(), rt.metrics()
    assert mt["registers"] < mb["registers"]                # no per-thread cp.async addresses
    assert mt["spill stores (B)"] == 0 and mt["wgmma serialized by ptxas"] == "no"
    # the hot loop is the K loop: bulk tensor copies, no LDGSTS, one wgmma wait that keeps one group in flight
    sched = rt.loop["schedule_text"]
    assert "UTMALDG" in sched and "HGMMA" in sched and "LDGSTS" not in sched and rt.loop["length"] < 100
    assert "12 x LDGSTS.128" in rb.loop["schedule_text"]


def test_store_variant_uses_a_bulk_tensor_store():
    res = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST, variant=Variant("tma-store", (TMA_STORE,)))
    assert "ttng.async_tma_copy_local_to_global" in res.asm["ttgir"]
    m = report.from_compile(res).metrics()
    assert m["global store widths"] == "-" and m["wgmma serialized by ptxas"] == "no"


def test_tma_store_alone_makes_ptxas_serialize_the_wgmmas_on_3_6_only():
    """The negative static result of hypotheses.md: with cp.async loads kept, a TMA-store epilogue
    makes Triton 3.6's ptxas serialize every wgmma (C7515), and the report says so. Triton 3.9
    (ptxas-blackwell for sm_90) keeps them asynchronous, and the report says that too."""
    only_store = Insert("descriptor-loads", stage="ttir", at="end", options={"loads": False, "store": True},
                        cleanup=("canonicalize",))
    res = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST, variant=Variant("st", (only_store,)))
    r = report.from_compile(res)
    if compat.TRITON_VERSION.startswith("3.6"):
        assert r.metrics()["wgmma serialized by ptxas"].startswith("YES")
        assert r.loop["schedule_text"].count("WARPGROUP.DEPBAR") == 4
    else:
        assert r.metrics()["wgmma serialized by ptxas"] == "no"
        assert r.loop["schedule_text"].count("WARPGROUP.DEPBAR") == 1


def test_with_warp_specialization_the_kernel_gets_producer_and_consumer_warp_groups():
    cfg = TileConfig("128x256x64-w4-s3", dict(BEST.meta), 4, 3)
    res = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=cfg, variant=Variant("tma-ws", (TMA, WS)))
    assert res.metadata["num_warps"] == 12
    assert "ttg.warp_specialize" in res.asm["ttgir"]
    r = report.from_compile(res)
    assert "UTMALDG" not in r.loop["schedule_text"] and "4 x HGMMA" in r.loop["schedule_text"]


def doubled_row_offsets(ttgir: str) -> list[str]:
    """Stores' row offsets in a warp-specialized partition that start ``k`` into the tile twice
    over: a ``make_range`` starting at k added to a splat of ``x + k`` (the consumer's share of the
    tile, offset once by the range and again by the scalar)."""
    from irlab.ir.queries import constant_value
    m, out = ir.parse(ttgir), []
    for rng in m.find("tt.make_range"):
        start = int(rng.attr("start") or 0)
        if not start or rng.enclosing("ttg.warp_specialize") is None:
            continue
        for add in (u.op for u in rng.result.uses if u.op.name == "arith.addi"):
            splat = next(x.value for x in add.operand_uses if x.value is not rng.result).defining_op
            base = splat.operand_uses[0].value.defining_op if splat is not None and splat.name == "tt.splat" else None
            if base is not None and base.name == "arith.addi" and any(
                    d is not None and d.name == "arith.constant" and constant_value(d) == start
                    for d in (x.value.defining_op for x in base.operand_uses)):
                out.append(f"{add.result.ref} (line {add.line})")
    return out


@pytest.mark.parametrize("own", [True, False])
def test_warp_specialized_consumers_store_their_own_rows(own):
    # Hopper warp specialization gives each of the two consumer warp groups 64 of the tile's 128
    # rows: it adds 64 to the load coordinate *and* starts the store's make_range at 64. When the
    # coordinate and the store's row offset are one value, the second group stores 64 rows too far
    # (half of C unwritten on the GPU); the pass gives the loads a coordinate of their own.
    cfg = TileConfig("128x256x64-w4-s3", dict(BEST.meta), 4, 3)
    tma = Insert("descriptor-loads", stage="ttir", at="end", options={"own_coordinates": own}, cleanup=("canonicalize",))
    res = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=cfg, variant=Variant("tma-ws", (tma, WS)))
    doubled = doubled_row_offsets(res.text("ttgir", locations=False))
    assert (doubled == []) if own else doubled, doubled


def test_refuses_on_ttgir():
    text = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=BEST).text("ttgir", locations=False)
    m, res = apply(text)
    assert not res.changed and "runs on TTIR" in notes(res)


def test_refuses_a_nonzero_other(ttir):
    zero = "arith.constant dense<0.000000e+00> : tensor<128x64xf16>"
    assert zero in ttir
    m, res = apply(ttir.replace(zero, "arith.constant dense<1.000000e+00> : tensor<128x64xf16>"))
    assert "`other` is not zero" in notes(res)
    assert names(m, m.first("scf.for")).count("tt.descriptor_load") == 1   # B is still converted


NEG_ZERO = "arith.constant dense<-0.000000e+00> : tensor<128x64xf16>"


def with_epilogue(text: str, op: str, constant: str) -> str:
    """``text`` with ``acc = op(acc, splat(constant))`` between the K loop and the epilogue's truncf."""
    line = next(ln for ln in text.splitlines() if "arith.truncf" in ln)
    acc = line.split("arith.truncf ")[1].split(" ")[0]
    extra = (f"    %fill = arith.constant {constant} : f32\n"
             "    %fills = tt.splat %fill : f32 -> tensor<128x256xf32>\n"
             f"    %edited = {op} {acc}, %fills : tensor<128x256xf32>\n")
    return text.replace(line + "\n", extra + line.replace(f"arith.truncf {acc}", "arith.truncf %edited") + "\n")


@pytest.mark.parametrize("op, constant, shows", [
    (None, None, True),                              # the accumulator is stored as it is (through truncf)
    ("arith.mulf", "-1.000000e+00", True),           # a product keeps a zero's sign difference
    ("arith.maxnumf", "-1.000000e+00", True),        # max(-0.0, -1) and max(+0.0, -1) differ in sign
    ("arith.addf", "-0.000000e+00", True),           # x + -0.0 keeps x's sign
    ("arith.addf", "1.000000e+00", False),           # either zero becomes 1.0
    ("arith.addf", "0.000000e+00", False),           # -0.0 + +0.0 and +0.0 + +0.0 are both +0.0
    ("arith.maxnumf", "5.000000e-01", False),        # either zero becomes 0.5
    ("arith.minimumf", "-2.000000e+00", False),      # either zero becomes -2.0
])
def test_a_negative_zero_fill_is_refused_where_its_sign_can_show(ttir, op, constant, shows):
    """TMA fills with +0.0; where the kernel fills A with -0.0, products differ in the sign of a zero,
    which reaches C unless the epilogue makes every zero the same value."""
    zero = "arith.constant dense<0.000000e+00> : tensor<128x64xf16>"
    text = ttir.replace(zero, NEG_ZERO)
    if op is not None:
        text = with_epilogue(text, op, constant)
    m, res = apply(text)
    assert res.verified is not False, notes(res)
    converted = names(m, m.first("scf.for")).count("tt.descriptor_load")
    if shows:
        assert "`other` is -0.0 and TMA fills out-of-bounds elements with +0.0" in notes(res)
        assert converted == 1   # B, whose fill is +0.0, is still converted
    else:
        assert "`other` is -0.0" not in notes(res) and converted == 2, notes(res)


def test_a_negative_zero_fill_from_triton_itself():
    """tests/kernels/negative_zero_gemm.py writes ``other=-0.0`` on A: Triton 3.9 keeps the sign in its
    TTIR and descriptor-loads leaves A's load alone; Triton 3.6 writes +0.0 there (the sign is gone
    before any pass sees it), so both loads convert. The FileCheck test holds 3.9's TTIR."""
    import triton

    from tests.kernels.negative_zero_gemm import SPEC
    text = compile_kernel(SPEC, "cuda:90", config="64x64x32-w4").text("ttir", locations=False)
    m, res = apply(text)
    kept_sign = "dense<-0.000000e+00>" in text
    assert kept_sign == triton.__version__.startswith("3.9")
    assert names(m, m.first("scf.for")).count("tt.descriptor_load") == (1 if kept_sign else 2), notes(res)
    held = (ROOT / "passes" / "tests" / "descriptor-loads" / "negative_zero_other.mlir").read_text()
    first = "\n".join(x for x in held.split("// -----")[0].splitlines() if not x.lstrip().startswith("//"))
    expected = text if kept_sign else text.replace("dense<0.000000e+00> : tensor<64x32xf16>",
                                                   "dense<-0.000000e+00> : tensor<64x32xf16>")
    assert first.strip("\n") + "\n" == expected


def test_refuses_when_wrapped_rows_could_be_stored(ttir):
    """Rows past M are zeros under TMA but wrapped rows before: an unmasked store would show it."""
    store = next(ln for ln in ttir.splitlines() if "tt.store" in ln)
    ptr, val = [x.strip() for x in store.split("tt.store", 1)[1].split(":")[0].split(",")][:2]
    unmasked = store.split("tt.store")[0] + f"tt.store {ptr}, {val} :" + store.split(":", 1)[1]
    m, res = apply(ttir.replace(store, unmasked))
    assert not res.changed
    assert "no mask: wrapped rows would be stored" in notes(res)


def test_refuses_an_accumulator_used_twice(ttir):
    loop_res = next(ln for ln in ttir.splitlines() if "arith.truncf" in ln).split("arith.truncf ")[1].split(" ")[0]
    extra = f"    %twice = arith.addf {loop_res}, {loop_res} : tensor<128x256xf32>\n"
    at = ttir.index("    %", ttir.index("arith.truncf") - 40)
    m, res = apply(ttir[:at] + extra + ttir[at:])
    assert not res.changed and "has 2 users after the loop" in notes(res)


def test_refusals_on_other_kernels_name_the_reason():
    splitk = compile_kernel(KERNELS["gemm_splitk"], "cuda:90").text("ttir", locations=False)
    m, res = apply(splitk)
    assert not res.changed and "start offset or a wrap" in notes(res)
    int4 = compile_kernel(KERNELS["int4_gemm"], "cuda:90").text("ttir", locations=False)
    m, res = apply(int4)
    assert not res.changed and "no mask" in notes(res)
    soft = compile_kernel(KERNELS["softmax"], "cuda:90").text("ttir", locations=False)
    m, res = apply(soft)
    assert not res.changed and "nothing to do" in notes(res)


# --- TMA limits and copy hints: inputs that tempt the pass into unsafe rewrites --------------------
V36 = compat.TRITON_VERSION.startswith("3.6")
A_LOAD = "tt.load %arg10, %69, %cst_1"     # the A tile (128x64) of the fixture's K loop
CACHE_CG = "cacheModifier = cg" if V36 else \
    "{cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = evict_normal>}"
EVICT_LAST = "evictionPolicy = evict_last" if V36 else \
    "{cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_last>}"


def edit(ttir, old, new):
    assert old in ttir, old
    return ttir.replace(old, new, 1)


def loop_ops(m):
    return names(m, m.first("scf.for"))


def refusals(res):
    return [d.message for d in res.diagnostics if d.severity == "note"]


def test_an_8_byte_inner_box_is_refused():
    """i8 with BLOCK_N = 8: the B tile's rows are 8 bytes; TMA needs 16 (an illegal instruction
    on the GPU otherwise). The A tile (64 bytes wide) still goes through TMA."""
    from tests.kernels import i8_gemm
    text = compile_kernel(i8_gemm.SPEC, "cuda:90", config="64x8x64-w4").text("ttir", locations=False)
    m, res = apply(text)
    assert refusals(res) == ["load left as is: inner box 8 B < 16 B TMA minimum (tile 64x8xi8: 8 x 1 B)"]
    assert res.verified and loop_ops(m).count("tt.descriptor_load") == 1 and loop_ops(m).count("tt.load") == 1
    text16 = compile_kernel(i8_gemm.SPEC, "cuda:90", config="64x16x64-w4").text("ttir", locations=False)
    m, res = apply(text16)
    assert res.verified and not refusals(res) and loop_ops(m).count("tt.descriptor_load") == 2


def test_a_box_dimension_over_256_is_refused():
    from tests.kernels import i8_gemm
    cfg = TileConfig("64x16x512", {"BLOCK_M": 64, "BLOCK_N": 16, "BLOCK_K": 512}, 4, 1)
    text = compile_kernel(i8_gemm.SPEC, "cuda:90", config=cfg).text("ttir", locations=False)
    m, res = apply(text)
    assert not res.changed
    assert sorted(refusals(res)) == sorted(
        f"load left as is: box dimension {axis} has 512 > 256 elements, the TMA box limit (Triton would split "
        f"the tile into several boxes; that path is not checked here)" for axis in (0, 1))


@pytest.mark.parametrize("hint, ok", [
    (None, False),      # no tt.divisibility on stride_am
    ("4 : i32", False),  # 4 fp16 elements = 8 bytes
    ("8 : i32", True),   # 8 fp16 elements = 16 bytes: a valid TMA stride
])
def test_the_row_pitch_must_be_proven_a_multiple_of_16_bytes(ttir, hint, ok):
    old = "%arg6: i32 {tt.divisibility = 16 : i32}"
    m, res = apply(edit(ttir, old, "%arg6: i32" + (f" {{tt.divisibility = {hint}}}" if hint else "")))
    a_refused = [r for r in refusals(res) if "row pitch %arg6" in r]
    assert res.verified and loop_ops(m).count("tt.descriptor_load") == (2 if ok else 1)
    if not ok:
        why = "no tt.divisibility" if hint is None else f"tt.divisibility = {hint.split()[0]}"
        assert a_refused == [f"load left as is: the row pitch %arg6 x 2 B is not known to be a multiple of 16 B "
                             f"({why}); TMA needs 16-byte multiples for every stride but the last"]


@pytest.mark.parametrize("form, why", [
    ('"sixteen"', "Triton ignores a string tt.divisibility"),
    ("[16]", "Triton ignores an array tt.divisibility"),
    ("16.5", "Triton ignores a float tt.divisibility"),
    ("0 : i32", "a divisibility of 0 divides nothing"),
    ("-16 : i32", "a negative divisibility; Triton zero-extends it"),
    ("8 : i32", ""),
])
def test_odd_divisibility_forms_on_the_base_are_read_as_triton_reads_them(ttir, form, why):
    old = "%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32}"
    m, res = apply(edit(ttir, old, f"%arg0: !tt.ptr<f16> {{tt.divisibility = {form}}}"))
    (note,) = [r for r in refusals(res) if "%arg0" in r]
    written = {"16.5": "16.5", "0 : i32": "0", "-16 : i32": "-16", "8 : i32": "8"}.get(form, form)
    assert note.startswith(f"load left as is: the base pointer %arg0 is not known to be 16-byte aligned "
                           f"(tt.divisibility = {written}")
    assert why in note
    assert res.verified and loop_ops(m).count("tt.descriptor_load") == 1    # B is still converted


@pytest.mark.parametrize("modifier, asked", [("{isVolatile = true}", "isVolatile"), (CACHE_CG, "cache cg"),
                                             (EVICT_LAST, "evict evict_last")])
def test_loads_with_copy_hints_are_left_exactly_as_they_were(ttir, modifier, asked):
    line = next(ln for ln in ttir.splitlines() if A_LOAD in ln)
    hinted = line.replace(" : tensor<128x64x!tt.ptr<f16>>", f" {modifier} : tensor<128x64x!tt.ptr<f16>>")
    m, res = apply(edit(ttir, line, hinted))
    assert [r for r in refusals(res) if "asks for" in r] == [
        f"load left as is: the load asks for {asked}; a TMA copy would not carry it exactly (Triton 3.6 drops "
        f"cache and eviction hints on descriptor loads, 3.9 rejects cache modifiers there, and no TMA copy is "
        f"volatile)"]
    assert hinted in str(m).splitlines()          # the load, hint and all, is untouched
    if asked == "isVolatile":
        # a volatile load also orders the loop's other memory operations (irlab.ir.effects): B stays too
        assert not res.changed and "the loop reads global memory, synchronizes at %70 = tt.load" in notes(res)
    else:
        assert res.verified and loop_ops(m).count("tt.descriptor_load") == 1


def test_an_epilogue_store_with_an_eviction_policy_stays(ttir):
    line = next(ln for ln in ttir.splitlines() if "tt.store" in ln)
    hinted = line.replace(" : tensor<128x256x!tt.ptr<f16>>", " " + EVICT_LAST.replace("evict_last", "evict_first")
                          + " : tensor<128x256x!tt.ptr<f16>>")
    m, res = apply(edit(ttir, line, hinted), loads=False, store=True)
    assert not res.changed and "store left as is: the store asks for evict evict_first" in notes(res)


def test_a_store_in_the_loop_keeps_both_loads(ttir):
    """The loop writes where B reads: TMA reads through the async proxy, which the pass cannot
    order against the store (and irlab does no alias analysis)."""
    yld = "      scf.yield %76, %79, %75"
    m, res = apply(edit(ttir, yld, "      tt.store %arg11, %cst_0 : tensor<64x256x!tt.ptr<f16>>\n" + yld))
    assert not res.changed
    assert [r.split(" at ")[0] for r in refusals(res)] == ["load left as is: the loop writes global memory"] * 2


def test_a_tile_used_twice_is_refused(ttir):
    dot = next(ln for ln in ttir.splitlines() if "tt.dot" in ln)
    m, res = apply(edit(ttir, dot, dot + "\n      %twice = arith.addf %70, %70 : tensor<128x64xf16>"))
    assert "load left as is: the loaded tile has other users than one tt.dot in the loop" in refusals(res)
    assert res.verified and loop_ops(m).count("tt.descriptor_load") == 1


def test_the_same_pointer_loaded_twice_converts_once_and_keeps_the_pointer(ttir):
    line = next(ln for ln in ttir.splitlines() if A_LOAD in ln)
    m, res = apply(edit(ttir, line, line + "\n" + line.replace("%70 =", "%again =")))
    assert "load left as is: the loaded tile has other users than one tt.dot in the loop" in refusals(res)
    loop = m.first("scf.for")
    again = next(o for o in loop.body.ops if o.name == "tt.load")
    assert again.result.name == "again" and again.ptr is loop.iter_args[0]
    # the A pointer is still read, so the loop still advances it
    assert loop.body.ops[-1].operands[0] is not loop.iter_args[0] and res.verified


def test_a_dot_of_one_tile_with_itself_is_refused():
    cfg = TileConfig("64x64x64-w4", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, 4, 3)
    text = compile_kernel(KERNELS["gemm_fp16"], "cuda:90", config=cfg).text("ttir", locations=False)
    dot = next(ln for ln in text.splitlines() if "tt.dot" in ln)
    a, b = dot.split("tt.dot ")[1].split(",")[:2]
    m, res = apply(edit(text, dot, dot.replace(f"{a},{b},", f"{a}, {a},")))
    assert "load left as is: the tile is not exactly one of the dot's A and B operands" in refusals(res)
    assert loop_ops(m).count("tt.descriptor_load") == 0


def test_a_base_that_is_not_a_kernel_argument_has_unknown_alignment(ttir):
    """A base offset inside the kernel (a batch's slice, say) may break the argument's alignment."""
    splat = "%34 = tt.splat %arg0 : !tt.ptr<f16> -> tensor<128x64x!tt.ptr<f16>>"
    m, res = apply(edit(ttir, splat, "%base = tt.addptr %arg0, %c1_i32 : !tt.ptr<f16>, i32\n    "
                                     + splat.replace("%arg0", "%base")))
    assert "load left as is: the base pointer %base is not an argument of the kernel: its alignment is unknown" \
        in refusals(res)
    assert res.verified and loop_ops(m).count("tt.descriptor_load") == 1
