"""Cache isolation: a variant never gets the baseline's binary, nor the reverse, and irlab leaves
nothing in Triton's own cache."""
from __future__ import annotations

import triton

from irlab.bridge.compile import compile_kernel
from irlab.passkit.variant import Drop, Variant
from irlab.kernels import KERNELS

from helpers import plain_compile

NO_PIPELINE = Variant("no-pipeline", (Drop("ttgpuir.pipeline"),))


def test_baseline_variant_baseline_each_get_their_own_binary():
    spec = KERNELS["gemm_fp16"]
    a = compile_kernel(spec, "cuda:80")
    b = compile_kernel(spec, "cuda:80", variant=NO_PIPELINE)
    c = compile_kernel(spec, "cuda:80")
    assert a.binary != b.binary
    assert a.binary == c.binary
    assert b.binary == compile_kernel(spec, "cuda:80", variant=NO_PIPELINE).binary


def test_irlab_leaves_triton_s_cache_alone(tmp_path, monkeypatch):
    cache = tmp_path / "triton-cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    spec = KERNELS["gemm_fp16"]
    compile_kernel(spec, "cuda:80", variant=NO_PIPELINE)
    assert not cache.exists() or not any(cache.rglob("*.cubin"))
    # a plain Triton compile fills the user's cache; an irlab variant compile afterwards must
    # neither read it nor write into it, and the next plain compile still hits the baseline
    from irlab.bridge.compile import _source
    from irlab.bridge.specialize import specialize
    from irlab.base.targets import parse_target
    p = spec.problem()
    s = specialize(spec.fn, p.args, p.constexprs, parse_target("cuda:80"))
    first = triton.compile(_source(spec.fn, s), target=parse_target("cuda:80").gpu_target(), options=p.options)
    files_before = sorted(str(x) for x in cache.rglob("*"))
    variant = compile_kernel(spec, "cuda:80", variant=NO_PIPELINE)
    assert sorted(str(x) for x in cache.rglob("*")) == files_before
    again = triton.compile(_source(spec.fn, s), target=parse_target("cuda:80").gpu_target(), options=p.options)
    assert again.asm["cubin"] == first.asm["cubin"] != variant.binary
    assert first.asm["cubin"] == plain_compile(spec, "cuda:80").asm["cubin"]


def test_jit_variant_caches_keep_variants_apart_and_hit_again(tmp_path, monkeypatch):
    """Inside ``jit_variant`` Triton's cache is kept: a second compile of the same variant is a
    cache hit with the same binary, and no variant is ever served another's binary. Where Triton
    keys its cache by irlab's stages hook, all variants share one cache folder."""
    from triton import knobs
    from irlab.bridge import compat
    from irlab.bridge.compile import _source
    from irlab.bridge.jit import jit_variant, variant_cache_dir
    from irlab.bridge.specialize import specialize
    from irlab.base.targets import parse_target
    monkeypatch.setenv("IRLAB_CACHE_DIR", str(tmp_path / "irlab-cache"))
    spec = KERNELS["gemm_fp16"]
    p = spec.problem()
    target = parse_target("cuda:80")
    s = specialize(spec.fn, p.args, p.constexprs, target)
    hits = []

    def build(variant):
        with jit_variant(spec.fn, variant):
            return triton.compile(_source(spec.fn, s), target=target.gpu_target(), options=p.options).asm["cubin"]

    with knobs.compilation.scope():
        knobs.compilation.listener = lambda **kw: hits.append(kw["cache_hit"])
        base, variant, base_again, variant_again = (build(v) for v in (Variant.baseline(), NO_PIPELINE,
                                                                       Variant.baseline(), NO_PIPELINE))
    assert hits == [False, False, True, True]
    assert base == base_again != variant == variant_again
    assert base == plain_compile(spec, "cuda:80").asm["cubin"]
    folders = {variant_cache_dir(v) for v in (Variant.baseline(), NO_PIPELINE)}
    assert len(folders) == (1 if compat.HOOK_KEY_IN_CACHE_KEY else 2)
