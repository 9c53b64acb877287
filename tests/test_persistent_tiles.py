"""persistent-tiles and its launch grid: the tutorial GEMM looped over its tiles (TTIR structure,
Triton's verifier, a cubin for cuda:90 with and without TMA), refusals on kernels it does not fit,
the grid function, and every irlab launcher honouring a variant's declared grid (fakes record the
grid each one launches with). On a GPU: outputs of baseline and variant compared."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import compile_or_xfail_warp_specialization

from irlab import ir
from irlab.bridge import compile as bridge_compile
from irlab.bridge.compile import CompileResult, compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.bridge.variant_identity import variant_key
from irlab.kernels.spec import TileConfig, parameters
from irlab.kernels import KERNELS
from irlab.bridge.named_variants import PERSISTENT_TMA, PERSISTENT_TMA_FLATTEN, PERSISTENT_TMA_SPLIT, PERSISTENT_TMA_WS, PERSISTENT_TMA_WS_SPLIT, get_variant, resolve, variants_for
from irlab.passkit.registry import make_pass
from irlab.base.targets import Target
from tests.kernels import launch_contract as lc
from irlab.passkit.variant import PERSISTENT_MARKER, TILE_COUNT_ATTR, Insert, Launch, Variant, VariantError, is_persistent, launch_grid, persistent_grid, tile_count

ROOT = Path(__file__).resolve().parent.parent
GEMM = KERNELS["gemm_fp16"]
# a loop over tiles as persistent-tiles marks it: cdiv(arg1, 1) tiles (the fakes below launch 1000)
MARKED = f'scf.for %t = %pid to %n step %p : i32 {{\n}} {{{PERSISTENT_MARKER}, {TILE_COUNT_ATTR} = "cdiv(arg1, 1)"}}'


def notes(res):
    return " | ".join(d.message for d in res.diagnostics)


@pytest.fixture(scope="module")
def gemm_ttir():
    return compile_kernel(GEMM, "cuda:90", config="128x128x64-w8").text("ttir", locations=False)


def apply(text, **options):
    m = ir.parse(text)
    return m, run_pass(make_pass("persistent-tiles", options), m)


# --- the rewrite ---------------------------------------------------------------------------------

def test_the_gemm_becomes_a_loop_over_its_tiles(gemm_ttir):
    m, res = apply(gemm_ttir)
    assert res.changed and res.verified, notes(res)
    fn = m.functions[0]
    body = fn.regions[0].entry.ops
    loops = [o for o in body if o.name == "scf.for"]
    assert len(loops) == 1 and body[-2] is loops[0] and body[-1].name == "tt.return"
    loop = loops[0]
    pid = loop.lower_bound.defining_op
    assert pid.name == "tt.get_program_id" and loop.step.defining_op.name == "tt.get_num_programs"
    assert loop.attr(PERSISTENT_MARKER) is True
    # the upper bound: cdiv(M, 128) * cdiv(N, 128), both computed by the kernel and left before the loop
    ub = loop.upper_bound.defining_op
    assert ub.name == "arith.muli"
    for factor in (ub.lhs, ub.rhs):
        div = factor.defining_op
        assert div.name == "arith.divsi" and div.parent is fn.regions[0].entry
        add = div.lhs.defining_op
        assert add.name == "arith.addi" and {add.lhs.name, add.rhs.name} & {"arg3", "arg4"}
    # the program id is used only as the loop's start; the tile's work reads the induction variable
    assert [u.op for u in pid.result.uses] == [loop]
    inside = list(loop.walk())
    assert [o.name for o in inside].count("tt.store") == 1 and "tt.dot" in [o.name for o in inside]
    uses_iv = [u.op.name for u in loop.induction_var.uses]
    assert "arith.divsi" in uses_iv and "arith.remsi" in uses_iv   # the GROUP_M swizzle's pid // and pid %
    # what does not depend on the tile stays outside: constants, splats of sizes, make_range
    outside = [o.name for o in body[:-2]]
    assert "tt.make_range" in outside and "arith.constant" in outside and "tt.splat" in outside
    assert not any(o.name in ("tt.load", "tt.store", "tt.dot") for o in body if o is not loop)
    assert "loops over tiles" in notes(res)


def test_the_flatten_option_marks_the_tile_loop(gemm_ttir):
    m, res = apply(gemm_ttir, flatten=True)
    assert res.verified, notes(res)
    loop = next(o for o in m.functions[0].regions[0].entry.ops if o.name == "scf.for")
    assert loop.attr("tt.flatten") is True and loop.attr(PERSISTENT_MARKER) is True


def test_a_persistent_kernel_is_refused(gemm_ttir):
    m, res = apply(gemm_ttir)
    again = ir.parse(str(m))
    res2 = run_pass(make_pass("persistent-tiles", {}), again)
    assert not res2.changed and "tt.get_num_programs" in notes(res2)


@pytest.mark.parametrize("kernel, reason", [
    ("gemm_splitk", "tt.atomic_rmw"),                      # split-K: atomics, and program_id(1)
    ("softmax", "base pointer"),                           # one row per program: no tile count in the store
    ("int4_gemm", "does not compute cdiv"),                # its grid's tile count is not computed in the kernel
])
def test_kernels_it_does_not_fit_are_refused_unchanged(kernel, reason):
    text = compile_kernel(KERNELS[kernel], "cuda:90").text("ttir", locations=False)
    m, res = apply(text)
    assert not res.changed and str(m) == text
    assert "refused" in notes(res) and reason in notes(res), notes(res)


# --- the launch contract: the program id picks the tile and nothing else -------------------------

LIT = ROOT / "passes" / "tests" / "persistent-tiles"


def lit_modules(path: Path) -> dict:
    """The modules of a FileCheck file by kernel name, without the file's comment lines."""
    out = {}
    for part in path.read_text().split("// -----"):
        lines = [x for x in part.splitlines() if not x.lstrip().startswith("//")]
        text = "\n".join(lines).strip("\n") + "\n"
        out[text.split("tt.func public @", 1)[1].split("(", 1)[0]] = text
    return out


def test_the_filecheck_inputs_are_what_triton_writes():
    """The launch-contract FileCheck files hold Triton's own TTIR of tests/kernels/launch_contract.py
    (on the installed Triton: run on 3.6 and 3.9, which write the same)."""
    held = {**lit_modules(LIT / "extra_programs.mlir"), **lit_modules(LIT / "tile_copy_2d.mlir")}
    specs = {lc.KEEPS.name: lc.KEEPS, **lc.BREAKS}
    assert set(held) == set(specs)
    for name, spec in specs.items():
        assert compile_kernel(spec, "cuda:90").text("ttir", locations=False) == held[name], name


@pytest.mark.parametrize("kernel, reason", [
    ("copy_or_fill", "scf.if (line 10) branches on a value computed from the program id"),
    ("copy_and_clear", "%18 = arith.cmpi (line 26) compares a value computed from the program id and is not a tile's "
                       "bound"),
    ("copy_grid_2d", "the program id is read along y"),
    ("copy_num_programs", "the kernel reads tt.get_num_programs"),
    ("copy_early_return", "the kernel returns early, at tt.return (line 18)"),
])
def test_kernels_whose_programs_work_outside_their_tiles_are_refused(kernel, reason):
    text = compile_kernel(lc.BREAKS[kernel], "cuda:90").text("ttir", locations=False)
    m, res = apply(text)
    assert not res.changed and str(m) == text
    assert "refused" in notes(res) and reason in notes(res), notes(res)


def test_the_kernel_that_keeps_the_contract_loops_and_names_its_tile_count():
    res = compile_kernel(lc.KEEPS, "cuda:90", variant=resolve("persistent-tiles", "cuda:90"))
    ttir = res.asm["ttir"]
    assert is_persistent(ttir) and f'{TILE_COUNT_ATTR} = "cdiv(arg2, 32) * cdiv(arg3, 64)"' in ttir
    shape, cfg = lc.KEEPS.default_shape, lc.KEEPS.config()
    tiles = -(-shape["M"] // 32) * -(-shape["N"] // 64)
    p = lc.KEEPS.problem(shape, cfg)
    values = [{**p.args, **p.constexprs}[name] for name, _ in parameters(lc.KEEPS.fn)]
    assert res.launch_grid((tiles, 1, 1), num_sms=132, args=values) == (min(132, tiles), 1, 1)
    for grid in ((tiles + 1, 1, 1), (tiles - 1, 1, 1), (tiles, 2, 1)):
        with pytest.raises(VariantError, match="not one program per tile"):
            res.launch_grid(grid, num_sms=132, args=values)


# a tile-per-program kernel written by hand, and edits of it that each break one thing the pass proves
BASE = """module {
  tt.func public @copy(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c1022 = arith.constant 1022 : i32
    %c1023 = arith.constant 1023 : i32
    %c1024 = arith.constant 1024 : i32
    %zeros = arith.constant dense<0.000000e+00> : tensor<1024xf32>
    %pid = tt.get_program_id x : i32
    %sum = arith.addi %n, %c1023 : i32
    %tiles = arith.divsi %sum, %c1024 : i32
    %start = arith.muli %pid, %c1024 : i32
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %s, %range : tensor<1024xi32>
    %nn = tt.splat %n : i32 -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %yp, %v, %mask : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}
"""
STORE = "    tt.store %yp, %v, %mask : tensor<1024x!tt.ptr<f32>>\n"


def edited(old: str, new: str) -> str:
    assert BASE.count(old) == 1, old
    return BASE.replace(old, new)


def before_store(lines: str, mask: str = "%mask", value: str = "%v") -> str:
    return edited(STORE, lines + f"    tt.store %yp, {value}, {mask} : tensor<1024x!tt.ptr<f32>>\n")


def test_the_hand_written_kernel_is_rewritten():
    m, res = apply(BASE)
    assert res.changed and res.verified, notes(res)
    assert f'{TILE_COUNT_ATTR} = "cdiv(arg2, 1024)"' in str(m)
    # the cdiv's operands in the other order are the same count
    m, res = apply(edited("arith.addi %n, %c1023", "arith.addi %c1023, %n"))
    assert res.changed and res.verified, notes(res)


@pytest.mark.parametrize("text, reason", [
    # the tile count must be the ceil-div (n + T-1) / T: a floor-divided count skips the last, partial tile
    (edited("arith.addi %n, %c1023", "arith.addi %n, %c1022"), "does not compute cdiv(%n, 1024)"),
    (edited("arith.addi %n, %c1023", "arith.addi %n, %c1024"), "does not compute cdiv(%n, 1024)"),
    (edited("%tiles = arith.divsi %sum, %c1024", "%tiles = arith.divsi %n, %c1024"), "does not compute cdiv(%n, 1024)"),
    (edited("%tiles = arith.divsi %sum, %c1024", "%tiles = arith.divui %sum, %c1024"),
     "does not compute cdiv(%n, 1024)"),
    # tiles that overlap or leave gaps: the start is not a multiple of the tile's size
    (edited("%start = arith.muli %pid, %c1024", "%start = arith.muli %pid, %c1023"),
     "the store's tile start %start along axis 0 is not a multiple of the tile size 1024"),
    (edited("%start = arith.muli %pid, %c1024", "%start = arith.addi %pid, %c1024"),
     "the store's tile start %start along axis 0 is not a multiple of the tile size 1024"),
    # a mask keyed to the program id other than by the tile's bound
    (before_store("    %lo = arith.cmpi sge, %offs, %nn : tensor<1024xi32>\n"
                  "    %m2 = arith.andi %mask, %lo : tensor<1024xi1>\n", "%m2"),
     "%lo = arith.cmpi (line 23) compares a value computed from the program id and is not a tile's bound"),
    (before_store("    %g = arith.cmpi slt, %pid, %tiles : i32\n"
                  "    %gs = tt.splat %g : i1 -> tensor<1024xi1>\n"
                  "    %m2 = arith.andi %mask, %gs : tensor<1024xi1>\n", "%m2"),
     "%g = arith.cmpi (line 23) compares a value computed from the program id and is not a tile's bound"),
    (before_store("    %all = arith.cmpi slt, %range, %nn : tensor<1024xi32>\n"
                  "    %m2 = arith.ori %mask, %all : tensor<1024xi1>\n", "%m2"),
     "%m2 = arith.ori (line 24) computes with a mask that depends on the program id"),
    (before_store("    %f = arith.uitofp %mask : tensor<1024xi1> to tensor<1024xf32>\n", value="%f"),
     "%f = arith.uitofp (line 23) computes with a mask that depends on the program id"),
    (before_store("    %pf = arith.sitofp %offs : tensor<1024xi32> to tensor<1024xf32>\n"
                  "    %neg = arith.cmpf olt, %pf, %zeros : tensor<1024xf32>\n"
                  "    %v2 = arith.select %neg, %zeros, %v : tensor<1024xi1>, tensor<1024xf32>\n", value="%v2"),
     "%neg = arith.cmpf (line 24) compares a value computed from the program id as a float"),
    (before_store("    %t1 = arith.trunci %start : i32 to i1\n"
                  "    %ts = tt.splat %t1 : i1 -> tensor<1024xi1>\n"
                  "    %m2 = arith.andi %mask, %ts : tensor<1024xi1>\n", "%m2"),
     "%t1 = arith.trunci (line 23) makes a condition from the program id other than by a compare"),
    # control flow keyed to the program id
    (before_store("    scf.for %i = %c0 to %pid step %c1  : i32 {\n      scf.yield\n    }\n"),
     "scf.for (line 23) runs a number of iterations computed from the program id"),
    (before_store("    %g = arith.cmpi slt, %pid, %tiles : i32\n"
                  "    scf.if %g {\n      tt.store %yp, %zeros, %mask : tensor<1024x!tt.ptr<f32>>\n    }\n"),
     "scf.if (line 24) branches on a value computed from the program id"),
    (before_store("    %ok = arith.cmpi slt, %offs, %nn : tensor<1024xi32>\n"
                  "    %r = \"tt.reduce\"(%ok) <{axis = 0 : i32}> ({\n"
                  "    ^bb0(%a: i1, %b: i1):\n      %o = arith.andi %a, %b : i1\n      tt.reduce.return %o : i1\n"
                  "    }) : (tensor<1024xi1>) -> i1\n"
                  "    %rs = tt.splat %r : i1 -> tensor<1024xi1>\n"
                  "    %v2 = arith.select %rs, %v, %zeros : tensor<1024xi1>, tensor<1024xf32>\n", value="%v2"),
     "(line 24) computes with a mask that depends on the program id"),
    # a store whose tile is at other coordinates: the work of programs past the tile count
    (before_store("    %past = arith.subi %pid, %tiles : i32\n"
                  "    %start2 = arith.muli %past, %c1024 : i32\n"
                  "    %s2 = tt.splat %start2 : i32 -> tensor<1024xi32>\n"
                  "    %offs2 = arith.addi %s2, %range : tensor<1024xi32>\n"
                  "    %mask2 = arith.cmpi slt, %offs2, %nn : tensor<1024xi32>\n"
                  "    %zp = tt.addptr %xb, %offs2 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>\n"
                  "    tt.store %zp, %zeros, %mask2 : tensor<1024x!tt.ptr<f32>>\n"),
     "the stores write tiles at different coordinates along axis 0 (%start vs %start2)"),
    # an atomic keyed to the program id
    (before_store("    %old = tt.atomic_rmw fadd, relaxed, gpu, %yp, %v, %mask : (tensor<1024x!tt.ptr<f32>>, "
                  "tensor<1024xf32>, tensor<1024xi1>) -> tensor<1024xf32>\n"),
     "%old = tt.atomic_rmw (line 23) reads global memory, writes global memory, synchronizes"),
    # a tile count a launch cannot compute from the kernel's arguments
    (edited("%sum = arith.addi %n, %c1023 : i32", "%ni = arith.maxsi %n, %c0 : i32\n"
            "    %sum = arith.addi %ni, %c1023 : i32").replace("%nn = tt.splat %n :", "%nn = tt.splat %ni :"),
     "the tile count's bound %ni is not computed from the kernel's arguments"),
], ids=["floor-T-2", "floor-T", "no-addend", "unsigned", "start-1023", "start-add", "lower-bound",
        "pid-guard", "ori", "mask-as-data", "cmpf", "trunci", "loop-bound", "branch", "reduce", "other-tile",
        "atomic", "loaded-bound"])
def test_what_the_pass_cannot_prove_is_refused(text, reason):
    m, res = apply(text)
    assert not res.changed and str(m) == text, notes(res)
    assert "refused" in notes(res) and reason in notes(res), notes(res)


def test_the_tile_count_expression():
    assert tile_count("cdiv(arg3, 128) * cdiv(arg4, 128)", [0, 0, 0, 1000, 4096]) == 8 * 32
    # division rounds toward zero, as arith.divsi does: cdiv of a negative extent is not negative tiles
    assert tile_count("cdiv(arg0, 4)", [-3]) == 0 and tile_count("div((arg0 - 9), 4)", [0]) == -2
    assert tile_count("cdiv((arg0 * arg1), 64)", [10, 13]) == 3
    for expr, args, why in [("arg2", [1], "reads argument 2"), ("cdiv(arg0, 4)", ["*fp16"], "not an integer"),
                            ("cdiv(arg0, 4)", [True], "not an integer"), ("cdiv(arg0, arg1)", [4, 0], "zero"),
                            ("arg0 ** 2", [3], "not an expression"), ("__import__('os')", [], "not an expression"),
                            ("cdiv(arg0)", [3], "not an expression"), ("(", [], "not an expression")]:
        with pytest.raises(VariantError, match=re.escape(why)):
            tile_count(expr, args)


def test_a_persistent_launch_is_checked_against_the_tile_count():
    sms = lambda: 132   # noqa: E731
    assert launch_grid(PERSISTENT_TMA, (1000,), MARKED, sms, args=[None, 1000]) == (132, 1, 1)
    for grid in ((1001, 1, 1), (999,), (1000, 2, 1), (1000, 1, 3)):
        with pytest.raises(VariantError, match=r"not one program per tile \(cdiv\(arg1, 1\) = 1000, 1, 1\)"):
            launch_grid(PERSISTENT_TMA, grid, MARKED, sms, args=[None, 1000])
    with pytest.raises(VariantError, match="argument values"):
        launch_grid(PERSISTENT_TMA, (1000,), MARKED, sms)
    unmarked_count = MARKED.replace(f', {TILE_COUNT_ATTR} = "cdiv(arg1, 1)"', "")
    assert is_persistent(unmarked_count)
    with pytest.raises(VariantError, match="does not say how many"):
        launch_grid(PERSISTENT_TMA, (1000,), unmarked_count, sms, args=[None, 1000])


def test_the_launch_values_are_matched_to_the_kernels_own_arguments():
    """A compile from source is launched with every parameter's value; its TTIR keeps the ones that
    are not constexprs (or specialized to 1), in order: what the tile count's argN count."""
    res = compile_kernel(GEMM, "cuda:90", config="128x128x64-w8", variant=PERSISTENT_TMA)
    cfg = GEMM.config("128x128x64-w8")
    values = gemm_values(cfg)
    kept = res.kernel_arguments(values)
    assert kept[3:6] == [4096, 4096, 4096] and len(kept) == 9   # M, N, K after the three pointers
    assert res.launch_grid((1024, 1, 1), num_sms=132, args=values) == (132, 1, 1)
    with pytest.raises(VariantError, match="not one program per tile"):
        res.launch_grid((1024, 1, 1), num_sms=132, args=gemm_values(cfg, {"M": 4096, "N": 2048, "K": 64}))
    with pytest.raises(VariantError, match="16 parameters"):
        res.launch_grid((1024, 1, 1), num_sms=132, args=values[:-1])


# --- the named variant, cross-compiled -----------------------------------------------------------

@pytest.mark.parametrize("config", list(GEMM.configs))
@pytest.mark.parametrize("variant", [PERSISTENT_TMA, PERSISTENT_TMA_FLATTEN, PERSISTENT_TMA_SPLIT], ids=lambda v: v.name)
def test_persistent_tma_compiles_every_gemm_config_for_hopper(config, variant):
    res = compile_kernel(GEMM, "cuda:90", config=config, variant=variant)
    assert res.binary and is_persistent(res.asm["ttir"])
    by_pass = {r.name: r for _, r in res.python_results}
    assert by_pass["persistent-tiles"].changed and by_pass["descriptor-loads"].changed
    ttir = res.asm["ttir"]
    stores = 2 if variant is PERSISTENT_TMA_SPLIT else 1
    assert ttir.count("tt.descriptor_load") == 2 and ttir.count("tt.descriptor_store") == stores
    # descriptors are built once per program, before the loop over tiles
    assert ttir.rindex("tt.make_tensor_descriptor") < ttir.index("scf.for")
    assert "ttng.async_tma_copy_global_to_local" in res.asm["ttgir"]
    cfg = GEMM.config(config)
    tiles = -(-4096 // cfg.meta["BLOCK_M"]) * -(-4096 // cfg.meta["BLOCK_N"])
    assert res.launch_grid((tiles, 1, 1), num_sms=132, args=gemm_values(cfg)) == (min(132, tiles), 1, 1)
    assert res.summary()["launch"] == {"grid": "persistent", "applies": True}


def gemm_values(cfg, shape=None):
    """A launch's values for the GEMM (one per parameter, constexprs included; pointers as their types)."""
    p = GEMM.problem(shape, cfg)
    values = {**p.args, **p.constexprs}
    return [values[name] for name, _ in parameters(GEMM.fn)]


def test_a_refused_kernel_keeps_its_grid():
    res = compile_kernel(KERNELS["gemm_splitk"], "cuda:90", variant=PERSISTENT_TMA)
    assert res.binary and not is_persistent(res.asm["ttir"])
    assert res.launch_grid((1000, 4, 1), num_sms=132) == (1000, 4, 1)
    assert res.summary()["launch"] == {"grid": "persistent", "applies": False}


def test_the_pass_named_on_its_own_brings_its_launch_grid():
    assert resolve("persistent-tiles", "cuda:90").launch == Launch("persistent")
    assert resolve("persistent-tiles{flatten=true}+descriptor-loads", "cuda:90").launch == Launch("persistent")
    assert resolve("descriptor-loads", "cuda:90").launch is None
    assert "launch" not in compile_kernel(GEMM, "cuda:90", variant=resolve("descriptor-loads", "cuda:90")).summary()


def test_the_variant_is_named_for_hopper_only_and_kept_out_of_the_golden_set():
    assert get_variant("persistent-tma", "cuda:90") is PERSISTENT_TMA
    assert resolve("persistent-tma", "cuda:90") is PERSISTENT_TMA
    assert resolve("persistent-tma-flatten", "cuda:90") is PERSISTENT_TMA_FLATTEN
    # the flattened form is the same variant but for the tile loop's flatten option
    assert PERSISTENT_TMA_FLATTEN.edits[1:] == PERSISTENT_TMA.edits[1:]
    assert dict(PERSISTENT_TMA_FLATTEN.edits[0].options) == {"flatten": True}
    assert dict(PERSISTENT_TMA.edits[0].options) == {} and PERSISTENT_TMA_FLATTEN.launch == Launch("persistent")
    assert dict(PERSISTENT_TMA_SPLIT.edits[1].options) == {"store": True, "store_split": 2}
    assert PERSISTENT_TMA_SPLIT.edits[0] == PERSISTENT_TMA_FLATTEN.edits[0]
    assert dict(PERSISTENT_TMA_WS.edits[0].options) == {"warp_specialize": True}
    assert PERSISTENT_TMA_WS.edits[1:] == PERSISTENT_TMA.edits[1:]
    assert PERSISTENT_TMA_WS_SPLIT.edits[0] == PERSISTENT_TMA_WS.edits[0]
    assert PERSISTENT_TMA_WS_SPLIT.edits[1] == PERSISTENT_TMA_SPLIT.edits[1]
    for name in ("persistent-tma", "persistent-tma-flatten", "persistent-tma-split", "persistent-tma-ws"):
        for target in ("cuda:80", "hip:gfx942"):
            with pytest.raises(KeyError):
                get_variant(name, target)
        assert all(v.name != name for t in ("cuda:80", "cuda:90") for v in variants_for(t))


# --- the grid declaration ------------------------------------------------------------------------

def test_launch_is_serialised_and_part_of_the_identity():
    v = PERSISTENT_TMA
    back = Variant.from_json(v.to_json())
    assert back == v and back.launch == Launch("persistent")
    without = Variant(v.name, tuple(e for e in v.edits if not isinstance(e, Launch)), v.description)
    assert without.launch is None and variant_key(without) != variant_key(v)
    assert "persistent" in str(v)
    with pytest.raises(VariantError):
        Launch("huge")
    with pytest.raises(VariantError):
        Variant("twice", (Launch(), Launch()))


@pytest.mark.parametrize("grid, sms, expected", [
    ((1024, 1, 1), 132, (132, 1, 1)),
    ((64, 1, 1), 132, (64, 1, 1)),       # fewer tiles than SMs: one program per tile
    (1000, 114, (114, 1, 1)),
    ((8,), 132, (8, 1, 1)),
    ((1024, 3, 2), 132, (132, 1, 1)),    # y and z only repeated the same programs
    ((0, 1, 1), 132, (0, 1, 1)),
])
def test_persistent_grid(grid, sms, expected):
    assert persistent_grid(grid, sms) == expected


@pytest.mark.parametrize("grid, sms", [((1, 2, 3, 4), 132), ((-1,), 132), ("8", 132), ((8,), 0), ((8,), None)])
def test_persistent_grid_rejects_nonsense(grid, sms):
    with pytest.raises(VariantError):
        persistent_grid(grid, sms)


def test_launch_grid_applies_only_to_a_declared_and_transformed_kernel():
    asked = []

    def sms():
        asked.append(1)
        return 132
    plain = Variant("p", (Insert("persistent-tiles", stage="ttir", at="end"),))
    assert launch_grid(plain, (1024, 1, 1), MARKED, sms) == (1024, 1, 1)              # not declared
    assert launch_grid(PERSISTENT_TMA, (1024, 1, 1), "module {}", sms) == (1024, 1, 1)  # refused: no marker
    assert launch_grid(PERSISTENT_TMA, (1024, 1, 1), None, sms) == (1024, 1, 1)         # no TTIR (Gluon)
    assert not asked   # the SM count is asked only for a persistent launch
    assert launch_grid(PERSISTENT_TMA, (1024, 1, 1), MARKED, sms, args=[None, 1024]) == (132, 1, 1) and asked
    # a path or a location naming the pass is no marker
    assert not is_persistent('loc("/x/passes/persistent_tiles.py":1:1) irlab.persistent_tiles_x')


def test_a_grid_of_one_or_two_ints_is_launched_as_three():
    """A kernel's launcher may give its grid as Triton's JIT takes it, ``(n,)`` or ``(n, m)``; a
    compiled kernel is launched with all three (``compiled[(n,)]`` fails in Triton's launcher with
    an IndexError: a GPU placement check met it on tests/kernels/inplace_add.py)."""
    assert launch_grid(Variant.baseline(), (40,), None, 132) == (40, 1, 1)
    assert launch_grid(Variant.baseline(), [40, 3], "module {}", 132) == (40, 3, 1)
    assert launch_grid(Variant.baseline(), 40, None, 132) == (40, 1, 1)
    with pytest.raises(VariantError, match="a grid is 1 to 3 non-negative ints"):
        launch_grid(Variant.baseline(), lambda meta: (40,), None, 132)


# --- every launcher honours it -------------------------------------------------------------------

class FakeCompiled:
    """A compiled kernel that records the grid of each launch."""

    def __init__(self):
        self.grids = []

    def __getitem__(self, grid):
        return lambda *args: self.grids.append(tuple(grid) if not isinstance(grid, int) else (grid,))


def fake_result(variant, marked=True):
    return CompileResult(kernel="k", target=Target.parse("cuda:90"), options={}, specialization=None,
                         variant=variant, asm={"ttir": MARKED if marked else "module {}", "cubin": b"\0"},
                         nodebug={}, metadata={}, stage_seconds={}, compiled=FakeCompiled())


class FakeSpec:
    name = "fake"
    flops = library = None

    def make_inputs(self, shape, device, seed=0):
        from fakes.fake_cuda import FakeTensor
        return {"x": FakeTensor(64, 0)}

    def launch_call(self, inputs, shape, cfg, target=None):
        return (1000, 1, 1), [inputs["x"], 1000]

    def config(self, name=None):
        return TileConfig("c", {}, 4, 2)


class FakeLaunch:
    grid = (1000, 1, 1)
    source = "fake launch"

    def __init__(self, result):
        self.result = result

    def recompile(self, target, variant):
        self.result.variant = variant
        return self.result

    def make_inputs(self, device="cuda", seed=0):
        from fakes.fake_cuda import FakeTensor
        return {"x": FakeTensor(64, 0)}

    def tensors(self, inputs):
        return dict(inputs)

    def launch_values(self, inputs):
        return [inputs["x"], 1000]


@pytest.fixture
def sm_count(monkeypatch):
    monkeypatch.setattr(bridge_compile, "device_sm_count", lambda: 132)


@pytest.mark.parametrize("marked, expected", [(True, (132, 1, 1)), (False, (1000, 1, 1))])
@pytest.mark.parametrize("captured", [False, True])
def test_the_timing_runner_launches_the_declared_grid(monkeypatch, sm_count, marked, expected, captured):
    from fakes.fake_cuda import FakeCuda, FakeTorch
    from irlab.timing import gpu
    from irlab.timing.plan import Cell, Entry
    res = fake_result(PERSISTENT_TMA, marked)
    monkeypatch.setattr(gpu, "get", lambda name: FakeSpec())
    monkeypatch.setattr(gpu, "compile_kernel", lambda *a, **k: res)
    monkeypatch.setattr(gpu, "is_launch_ref", lambda kernel: captured)
    monkeypatch.setattr(gpu, "load_launch", lambda ref: FakeLaunch(res))
    runner = gpu.GpuRunner(torch=FakeTorch(FakeCuda()))
    cell = Cell("t", "fake", {"N": 1}, "c", [])
    p = runner.prepare(cell, Entry("persistent-tma", variant_spec=PERSISTENT_TMA.to_json()))
    p.check_launch(p.workload.copies[0])
    assert res.compiled.grids == [expected]


@pytest.mark.parametrize("captured", [False, True])
def test_the_timing_runner_refuses_a_grid_other_than_the_tile_count(monkeypatch, sm_count, captured):
    """A launcher whose grid is not one program per tile (here 1001 programs for cdiv(1000, 1)
    tiles) gets the reason, never the persistent kernel on a grid it does not fit."""
    from fakes.fake_cuda import FakeCuda, FakeTorch
    from irlab.timing import gpu
    from irlab.timing.plan import Cell, Entry

    class Wider(FakeSpec):
        def launch_call(self, inputs, shape, cfg, target=None):
            return (1000, 1, 1), [inputs["x"], 999]

    class WiderLaunch(FakeLaunch):
        def launch_values(self, inputs):
            return [inputs["x"], 999]
    res = fake_result(PERSISTENT_TMA)
    monkeypatch.setattr(gpu, "get", lambda name: Wider())
    monkeypatch.setattr(gpu, "compile_kernel", lambda *a, **k: res)
    monkeypatch.setattr(gpu, "is_launch_ref", lambda kernel: captured)
    monkeypatch.setattr(gpu, "load_launch", lambda ref: WiderLaunch(res))
    runner = gpu.GpuRunner(torch=FakeTorch(FakeCuda()))
    entry = Entry("persistent-tma", variant_spec=PERSISTENT_TMA.to_json())
    p = runner.prepare(Cell("t", "fake", {"N": 1}, "c", []), entry)
    with pytest.raises(VariantError, match="not one program per tile"):
        p.check_launch(p.workload.copies[0])
    assert res.compiled.grids == []


@pytest.mark.parametrize("marked, expected", [(True, (132, 1, 1)), (False, (1000, 1, 1))])
@pytest.mark.parametrize("captured", [False, True])
def test_the_profile_runner_launches_the_declared_grid(sm_count, marked, expected, captured):
    from irlab.profile.run import Subject
    res = fake_result(PERSISTENT_TMA, marked)
    subject = object.__new__(Subject)
    subject.target = Target.parse("cuda:90")
    subject.launch = FakeLaunch(res) if captured else None
    subject.spec, subject.shape = FakeSpec(), {"N": 1}
    subject.launcher(res, TileConfig("c", {}, 4, 2))()
    assert res.compiled.grids == [expected]


def _launch_calls(path: Path):
    """``(function names enclosing it, whether one of them asks launch_grid)`` for each ``X[...grid...](...)``
    call in ``path``: how Triton kernels are launched."""
    tree = ast.parse(path.read_text())
    out = []

    def visit(node, stack):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack = stack + [node]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and \
                "grid" in ast.unparse(node.func.slice):
            asks = any(isinstance(n, ast.Attribute) and n.attr == "launch_grid" or
                       isinstance(n, ast.Name) and n.id == "launch_grid"
                       for f in stack for n in ast.walk(f))
            out.append(([getattr(f, "name", "<lambda>") for f in stack], asks))
        for child in ast.iter_child_nodes(node):
            visit(child, stack)
    visit(tree, [])
    return out


def test_every_launch_in_irlab_asks_for_the_variant_grid():
    """A new launcher of compiled variants must take its grid from CompileResult.launch_grid (and
    be added to the behavioural tests above): this test finds every ``kernel[grid](...)`` call."""
    found = {}
    for path in sorted((ROOT / "irlab").rglob("*.py")):
        for stack, asks in _launch_calls(path):
            rel = str(path.relative_to(ROOT))
            assert asks, f"{rel}: {'.'.join(stack)} launches a kernel without asking launch_grid for its grid"
            found.setdefault(rel, 0)
            found[rel] += 1
    assert found == {"irlab/timing/gpu.py": 2, "irlab/profile/run.py": 1}, found


def test_irlab_run_says_that_a_program_keeps_its_own_grids():
    from irlab.program.runner import PROGRAM_GRIDS_KEPT
    assert "own grids" in PROGRAM_GRIDS_KEPT


# --- on a GPU --------------------------------------------------------------------------------------

# 1000^3: remainders on every axis, sizes not multiples of 16 (descriptor-loads refuses: only the
# persistence is tested); 1040x1008x1072: remainders on every axis with TMA loads and store;
# 4096^3: 1024 tiles of 128x128, several per program
SHAPES = [(1000, 1000, 1000), (1040, 1008, 1072), (4096, 4096, 4096)]


@pytest.mark.gpu
@pytest.mark.parametrize("config", ["128x128x64-w8", "128x128x32-w4", "128x256x32-w8", "64x64x32-w4"])
@pytest.mark.parametrize("mnk", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
@pytest.mark.parametrize("variant", [PERSISTENT_TMA, PERSISTENT_TMA_FLATTEN, PERSISTENT_TMA_SPLIT, PERSISTENT_TMA_WS,
                                     PERSISTENT_TMA_WS_SPLIT], ids=lambda v: v.name)
def test_persistent_tma_matches_the_baseline_on_the_gpu(config, mnk, variant):
    import torch
    from irlab.timing.gpu import install_scratch_allocator
    install_scratch_allocator(torch)   # device-side TMA descriptors need Triton's scratch allocator
    target = Target.parse(f"cuda:{''.join(map(str, torch.cuda.get_device_capability()))}")
    if target.arch != "90":
        pytest.skip("persistent-tma is a Hopper (sm_90) variant")
    shape = dict(zip("MNK", mnk))
    cfg = GEMM.config(config)
    outs, grids = {}, {}
    for v in (Variant.baseline(), variant):
        res = compile_or_xfail_warp_specialization(GEMM, target, v, shape=shape, config=cfg)
        inputs = GEMM.make_inputs(shape, "cuda", seed=3)          # C starts as NaN: unwritten tiles show
        grid, values = GEMM.launch_call(inputs, shape, cfg, target)
        grids[v.name] = res.launch_grid(grid, args=values)
        res.compiled[grids[v.name]](*values)
        torch.cuda.synchronize()
        outs[v.name] = inputs["c"].clone()
        if v is variant:
            assert is_persistent(res.asm["ttir"])
            tma = "tt.descriptor_store" in res.asm["ttir"]
            ref = GEMM.reference(inputs).float()
    assert tma == (mnk[0] % 16 == 0), "descriptor-loads should act exactly where the sizes allow TMA"
    tiles = grids["baseline"][0]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert grids[variant.name] == (min(sms, tiles), 1, 1)
    base, var = outs["baseline"].float(), outs[variant.name].float()
    assert not torch.isnan(var).any(), "the persistent kernel left elements of C unwritten"
    # the same tiles, the same K order per tile: the fp32 accumulation should agree closely
    torch.testing.assert_close(var, base, rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(var, ref, rtol=1e-2, atol=1e-1)


@pytest.mark.gpu
@pytest.mark.parametrize("spec", [lc.KEEPS, *lc.BREAKS.values()], ids=lambda s: s.name)
def test_launch_contract_kernels_match_their_baseline_on_the_gpu(spec):
    """persistent-tiles on the kernels of tests/kernels/launch_contract.py, each launched with its own
    grid (cdiv(n, BLOCK) + 3 programs for those whose extra programs zero z, a 2-D grid for one):
    the kernel that keeps the contract runs persistent and writes what the baseline writes; every
    other one is refused, keeps its grid, and writes exactly the baseline's outputs, the extra
    programs' zeros in z included."""
    import torch
    target = Target.parse(f"cuda:{''.join(map(str, torch.cuda.get_device_capability()))}")
    variant = resolve("persistent-tiles", target.name)
    shape, cfg = spec.default_shape, spec.config()
    outs, grids, asked = {}, {}, {}
    for v in (Variant.baseline(), variant):
        res = compile_kernel(spec, target, variant=v, shape=shape, config=cfg)
        inputs = spec.make_inputs(shape, "cuda", seed=3)
        asked[v.name], values = spec.launch_call(inputs, shape, cfg, target)
        grids[v.name] = res.launch_grid(asked[v.name], args=values)
        res.compiled[grids[v.name]](*values)
        torch.cuda.synchronize()
        outs[v.name] = {k: t.clone() for k, t in spec.output_tensors(inputs).items()}
        if v is variant:
            transformed = is_persistent(res.asm["ttir"])
            x = inputs["x"]
    base, var = outs["baseline"], outs[variant.name]
    assert torch.equal(base["y"], x), "the baseline itself does not copy x"
    if spec is lc.KEEPS:
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        assert transformed and grids[variant.name] == (min(sms, asked["baseline"][0]), 1, 1)
    else:
        assert not transformed, "persistent-tiles rewrote a kernel whose programs work outside their tiles"
        assert grids[variant.name] == grids["baseline"] == asked["baseline"]
        assert (base["z"] == 0).any() and (base["z"] == 7).any() or spec.name == "copy_grid_2d", \
            "the extra programs did not zero part of z in the baseline: the test shows nothing"
    for name in base:
        assert torch.equal(var[name], base[name]), f"{name} differs from the baseline's"


# --- the rewriter's move into a loop -------------------------------------------------------------

LOOP_IR = """module {
  tt.func public @f(%p: tensor<4x!tt.ptr<f32>>, %v: tensor<4xf32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    tt.store %p, %v : tensor<4x!tt.ptr<f32>>
    %w = arith.addf %v, %v : tensor<4xf32>
    tt.store %p, %w : tensor<4x!tt.ptr<f32>>
    scf.for %i = %c0 to %n step %c1  : i32 {
      scf.yield
    }
    tt.return
  }
}
"""


def test_move_into_checks_dominance_and_what_it_carries_an_op_past():
    from irlab.ir.rewrite import Rewriter
    m = ir.parse(LOOP_IR)
    rw = Rewriter(m)
    ops = m.functions[0].regions[0].entry.ops
    first, add, second, loop = ops[2], ops[3], ops[4], ops[5]
    yld = loop.body.ops[-1]
    with pytest.raises(ir.RewriteError, match="would cross"):   # the first store past the second
        rw.move_into(first, yld)
    with pytest.raises(ir.RewriteError, match="would come before it"):   # %w's definition after its user
        rw.move_into(add, yld)
    assert rw.move_into(second, yld) and rw.move_into(add, second) and rw.move_into(first, add)
    assert [o.name for o in loop.body.ops] == ["tt.store", "arith.addf", "tt.store", "scf.yield"]
    # an effectful op still cannot move between blocks with the plain move
    fresh = ir.parse(LOOP_IR)
    body = fresh.functions[0].regions[0].entry.ops
    with pytest.raises(ir.RewriteError, match="only pure ops move between blocks"):
        Rewriter(fresh).move_before(body[4], body[5].body.ops[-1])
