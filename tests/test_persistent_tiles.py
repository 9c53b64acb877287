"""persistent-tiles and its launch grid: the tutorial GEMM looped over its tiles (TTIR structure,
Triton's verifier, a cubin for cuda:90 with and without TMA), refusals on kernels it does not fit,
the grid function, and every irlab launcher honouring a variant's declared grid (fakes record the
grid each one launches with). On a GPU: outputs of baseline and variant compared."""
from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import compile_or_xfail_warp_specialization

from irlab import ir
from irlab.bridge import compile as bridge_compile
from irlab.bridge.compile import CompileResult, compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.bridge.variant_identity import variant_key
from irlab.kernels.spec import TileConfig
from irlab.kernels import KERNELS
from irlab.bridge.named_variants import PERSISTENT_TMA, PERSISTENT_TMA_FLATTEN, PERSISTENT_TMA_SPLIT, PERSISTENT_TMA_WS, PERSISTENT_TMA_WS_SPLIT, get_variant, resolve, variants_for
from irlab.passkit.registry import make_pass
from irlab.base.targets import Target
from irlab.passkit.variant import PERSISTENT_MARKER, Insert, Launch, Variant, VariantError, is_persistent, launch_grid, persistent_grid

ROOT = Path(__file__).resolve().parent.parent
GEMM = KERNELS["gemm_fp16"]
MARKED = f"scf.for %t = %pid to %n step %p : i32 {{\n}} {{{PERSISTENT_MARKER}}}"


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
    assert res.launch_grid((1024, 1, 1), num_sms=132) == (132, 1, 1)
    assert res.summary()["launch"] == {"grid": "persistent", "applies": True}


def test_a_refused_kernel_keeps_its_grid():
    res = compile_kernel(KERNELS["gemm_splitk"], "cuda:90", variant=PERSISTENT_TMA)
    assert res.binary and not is_persistent(res.asm["ttir"])
    assert res.launch_grid((1000, 4, 1), num_sms=132) == (1000, 4, 1)
    assert res.summary()["launch"] == {"grid": "persistent", "applies": False}


def test_the_pass_named_on_its_own_brings_its_launch_grid():
    assert resolve("persistent-tiles", "cuda:90").launch == Launch("persistent")
    assert resolve("persistent-tiles:flatten=true+descriptor-loads", "cuda:90").launch == Launch("persistent")
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
    assert launch_grid(PERSISTENT_TMA, (1024, 1, 1), MARKED, sms) == (132, 1, 1) and asked
    # a path or a location naming the pass is no marker
    assert not is_persistent('loc("/x/passes/persistent_tiles.py":1:1) irlab.persistent_tiles_x')


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
        return (1000, 1, 1), [inputs["x"], 7]

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
        return [inputs["x"]]


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
        grids[v.name] = res.launch_grid(grid)
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
