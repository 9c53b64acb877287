"""in-thread-transpose against Triton's own in_thread_transpose: on generated dot operands (shapes,
load layouts, element types, MFMA versions, operand sides it was not written for) the two print
the same IR; on gfx942, where Triton runs its own pass, irlab's variant compiles to Triton's
binary; a second run changes nothing."""
from __future__ import annotations

import random

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.bridge.services import TritonServices
from irlab.kernels import get
from irlab.bridge.named_variants import get_variant
from irlab.passkit.registry import make_pass

ELEMENTS = {"f16": 16, "bf16": 16, "f32": 32, "f8E4M3FNUZ": 8}


def _split(n: int, parts: int, rng: random.Random, cap: list[int]) -> list[int]:
    """Powers of two, one per dimension, with product ``n``, each at most its ``cap``."""
    out = [1] * parts
    while n > 1:
        options = [i for i in range(parts) if out[i] * 2 <= cap[i]]
        if not options:
            return []
        i = rng.choice(options)
        out[i] *= 2
        n //= 2
    return out


def generated_case(seed: int) -> str | None:
    """A dot operand staged through LDS from a global load in a random blocked layout."""
    rng = random.Random(seed)
    op_idx = rng.choice([0, 1])
    element = rng.choice(list(ELEMENTS))
    bits = ELEMENTS[element]
    version = rng.choice([3, 4])
    warps = rng.choice([1, 2, 4, 8])
    k = rng.choice([16, 32, 64, 128])
    mn = rng.choice([32, 64, 128, 256])
    shape = [mn, k] if op_idx == 0 else [k, mn]
    k_dim = 1 if op_idx == 0 else 0
    order = rng.choice([[1, 0], [0, 1]])
    fast = order[0]
    spt = [1, 1]
    spt[fast] = min(shape[fast], 128 // bits)
    tpw = _split(64, 2, rng, [max(1, shape[d] // spt[d]) * 64 for d in range(2)])
    wpc = _split(warps, 2, rng, [max(1, shape[d] // (spt[d] * tpw[d])) * warps for d in range(2)])
    if not tpw or not wpc:
        return None
    instr = rng.choice([[32, 32, 8 if bits == 16 else 16], [16, 16, 16 if bits == 16 else 32]])
    if version == 4:
        instr = [instr[0], instr[1], instr[2] * 2]
    k_width = {16: rng.choice([4, 8]), 32: 1, 8: 8}[bits] if version == 4 else {16: 4, 32: 1, 8: 8}[bits]
    ints = lambda xs: ", ".join(map(str, xs))   # noqa: E731
    t = f"{shape[0]}x{shape[1]}x{element}"
    dot = f"#ttg.dot_op<{{opIdx = {op_idx}, parent = #mma, kWidth = {k_width}}}>"
    return f"""#blocked = #ttg.blocked<{{sizePerThread = [{ints(spt)}], threadsPerWarp = [{ints(tpw)}], warpsPerCTA = [{ints(wpc)}], order = [{ints(order)}]}}>
#mma = #ttg.amd_mfma<{{version = {version}, warpsPerCTA = [{warps}, 1], instrShape = [{ints(instr)}], isTransposed = true}}>
#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [{ints(order)}]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {warps} : i32, ttg.target = "hip:gfx9{42 if version == 3 else 50}", "ttg.threads-per-warp" = 64 : i32}} {{
  tt.func public @operand(%p: !tt.ptr<{element}> {{tt.divisibility = 16 : i32}}, %out: !ttg.memdesc<{t}, #shared, #smem, mutable>, %res: !tt.ptr<{element}>) {{
    %ptrs = tt.splat %p : !tt.ptr<{element}> -> tensor<{shape[0]}x{shape[1]}x!tt.ptr<{element}>, #blocked>
    %v = tt.load %ptrs : tensor<{shape[0]}x{shape[1]}x!tt.ptr<{element}>, #blocked>
    %lds = ttg.local_alloc %v : (tensor<{t}, #blocked>) -> !ttg.memdesc<{t}, #shared, #smem>
    %op = ttg.local_load %lds : !ttg.memdesc<{t}, #shared, #smem> -> tensor<{t}, {dot}>
    %back = ttg.convert_layout %op : tensor<{t}, {dot}> -> tensor<{t}, #blocked>
    %rp = tt.splat %res : !tt.ptr<{element}> -> tensor<{shape[0]}x{shape[1]}x!tt.ptr<{element}>, #blocked>
    tt.store %rp, %back : tensor<{shape[0]}x{shape[1]}x!tt.ptr<{element}>, #blocked>
    tt.return
  }}
}}
""", k_dim != fast


SEEDS = range(60)


@pytest.fixture(scope="module")
def services():
    return TritonServices()


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_operands_match_tritons_pass(services, seed):
    made = generated_case(seed)
    if made is None:
        pytest.skip("no layout of this shape")
    text, across_k = made
    if services.verify(text, "case") is not None:
        pytest.skip("Triton rejects the generated module")
    upstream = services.run_passes(text, ["amd.ttgpuir.in_thread_transpose"])
    m = ir.parse(text, filename="generated.mlir")
    res = run_pass(make_pass("in-thread-transpose"), m)
    assert services.run_passes(str(m), []) == upstream, "\n".join(str(d) for d in res.diagnostics)
    if not across_k:
        assert not res.changed


def test_the_generated_cases_rewrite_often_enough(services):
    """The sweep is worth something only if many of its cases are rewritten, on both sides."""
    rewritten = 0
    for seed in SEEDS:
        made = generated_case(seed)
        if made is None or services.verify(made[0], "case") is not None:
            continue
        m = ir.parse(made[0])
        rewritten += run_pass(make_pass("in-thread-transpose"), m).changed
    assert rewritten >= 15


@pytest.mark.parametrize("kernel", ["gemm_fp16", "gemm_splitk", "tests/kernels/gemm_dtypes.py"])
def test_compiles_to_tritons_own_binary_on_gfx942(kernel):
    spec = get(kernel)
    own = compile_kernel(spec, "hip:gfx942", variant=get_variant("baseline", "hip:gfx942"))
    ours = compile_kernel(spec, "hip:gfx942", variant=get_variant("in-thread-transpose", "hip:gfx942"))
    without = compile_kernel(spec, "hip:gfx942", variant=get_variant("no-in-thread-transpose", "hip:gfx942"))
    assert "amdg.in_thread_transpose" in ours.asm["ttgir"]
    assert ours.binary_sha256 == own.binary_sha256 != without.binary_sha256


def test_a_second_run_changes_nothing():
    from pathlib import Path
    cases = (Path(__file__).resolve().parent.parent / "passes" / "tests" / "in-thread-transpose"
             / "in_thread_transpose_rewrites.mlir").read_text().split("// -----")
    for text in cases:
        m = ir.parse(text)
        assert run_pass(make_pass("in-thread-transpose"), m).changed
        again = run_pass(make_pass("in-thread-transpose"), m)
        assert not again.changed
        assert not [d for d in again.diagnostics if "operand B" in d.message]   # nothing more to say about B


@pytest.mark.parametrize("kernel", ["gemm_fp16", "gemm_splitk", "tests/kernels/gemm_dtypes.py"])
def test_on_a_compiled_kernels_ttgir_it_does_what_tritons_pass_does(services, kernel):
    """A compile ends with the loads as amdg.buffer_load, which upstream's pass (run before the
    buffer-op conversion) never sees; irlab's widens them too. The gfx942 TTGIR compiled without
    Triton's pass, rewritten, cleaned up and compiled on, has Triton's own LDS accesses, VGPRs
    and instruction count, and accesses no wider than its layouts allow."""
    from irlab import report
    from irlab.bridge.compile import recompile
    from irlab.golden.suite import check_access_widths
    spec = get(kernel)
    own = compile_kernel(spec, "hip:gfx942", variant=get_variant("baseline", "hip:gfx942"))
    without = compile_kernel(spec, "hip:gfx942", variant=get_variant("no-in-thread-transpose", "hip:gfx942"))
    m = ir.parse(without.text("ttgir"))
    assert run_pass(make_pass("in-thread-transpose"), m).changed
    assert "amdg.buffer_load" in str(m) and "tt.load " not in str(m)
    ours = recompile(services.run_passes(str(m), ["ttgpuir.remove_layout_conversions", "common.canonicalizer"]),
                     "hip:gfx942", stage="ttgir")
    assert check_access_widths(ours).ok
    a, b = report.from_compile(ours).metrics(), report.from_compile(own).metrics()
    for key in ("LDS bytes", "LDS writes (kernel)", "LDS reads (kernel)", "VGPRs", "instructions (kernel)"):
        assert a[key] == b[key], key
