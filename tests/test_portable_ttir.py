"""Captured TTIR compiled by another Triton version, for another backend: the cache-policy syntax
that changed between Triton 3.6 and 3.9, and device-library calls moved between NVIDIA's libdevice
and AMD's OCML (tests/data/captures/llama2-h100 was captured with Triton 3.6 on an H100)."""
from __future__ import annotations

from pathlib import Path

import pytest

from irlab.program import launches
from irlab.bridge import compat, externs
from irlab.bridge.pipeline import triton_parse

DATA = Path(__file__).parent / "data" / "captures" / "llama2-h100"
NORM = DATA / "triton_per_fused__to_copy__unsafe_view_add_mean_mul_pow_rsqrt_8.cuda-90.w8s1.0b59056009"  # RMSNorm

# the same loads and stores as Triton 3.6 and 3.9 print them (checked against both)
PRINTED = {
    "3.6": ["%a = tt.load %p, %m, %o cacheModifier = cg evictionPolicy = evict_last : tensor<16x!tt.ptr<f32>>",
            "%b = tt.load %p cacheModifier = ca : tensor<16x!tt.ptr<f32>>",
            "%c = tt.load %p evictionPolicy = evict_first {isVolatile = true} : tensor<16x!tt.ptr<f32>>",
            "tt.store %p, %a, %m cacheModifier = cs : tensor<16x!tt.ptr<f32>>",
            "tt.store %p, %b evictionPolicy = evict_last : tensor<16x!tt.ptr<f32>>",
            "tt.store %p, %c : tensor<16x!tt.ptr<f32>>"],
    "3.9": ["%a = tt.load %p, %m, %o {cachePolicy = #tt.cache_policy<cache_modifier = cg, "
            "eviction_policy = evict_last>} : tensor<16x!tt.ptr<f32>>",
            "%b = tt.load %p {cachePolicy = #tt.cache_policy<cache_modifier = ca, eviction_policy = evict_normal>} : "
            "tensor<16x!tt.ptr<f32>>",
            "%c = tt.load %p {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>, "
            "isVolatile = true} : tensor<16x!tt.ptr<f32>>",
            "tt.store %p, %a, %m {cachePolicy = #tt.cache_policy<cache_modifier = cs, eviction_policy = evict_normal>} "
            ": tensor<16x!tt.ptr<f32>>",
            "tt.store %p, %b {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_last>} : "
            "tensor<16x!tt.ptr<f32>>",
            "tt.store %p, %c : tensor<16x!tt.ptr<f32>>"],
}


def _module(lines):
    body = "\n".join(f"    {line}" for line in lines)
    return ("module {\n  tt.func public @k(%x: !tt.ptr<f32>) {\n"
            "    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>\n"
            "    %s = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>\n"
            "    %p = tt.addptr %s, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>\n"
            "    %n = arith.constant dense<8> : tensor<16xi32>\n"
            "    %m = arith.cmpi slt, %r, %n : tensor<16xi32>\n"
            "    %o = arith.constant dense<0.000000e+00> : tensor<16xf32>\n"
            f"{body}\n    tt.return\n  }}\n}}\n")


def test_each_versions_cache_policy_syntax_becomes_the_others():
    old, new = PRINTED["3.6"], PRINTED["3.9"]
    assert [compat._to_policy_attribute(line) for line in old] == new
    assert [compat._to_policy_keywords(line) for line in new] == old


@pytest.mark.parametrize("printed_by", sorted(PRINTED))
def test_ir_of_either_version_parses_in_the_installed_one(printed_by, tmp_path):
    text = _module(PRINTED[printed_by])
    installed = "3.9" if compat.cache_policy_attribute() else "3.6"
    converted = compat.ir_for_installed(text)
    assert converted == _module(PRINTED[installed])
    assert (converted == text) == (printed_by == installed)
    triton_parse(converted, compat.mlir_context(), tmp_path, "portable", "ttir")


def test_device_library_calls_move_to_the_targets_library():
    assert externs.counterpart("__nv_rsqrtf", "hip") == "__ocml_rsqrt_f32"
    assert externs.counterpart("__nv_exp", "hip") == "__ocml_exp_f64"
    assert externs.counterpart("__ocml_exp_f32", "cuda") == "__nv_expf"
    assert externs.counterpart("__nv_expf", "cuda") == "__nv_expf"
    text = ('%y = tt.extern_elementwise %x {libname = "", libpath = "", pure = true, symbol = "__nv_rsqrtf"} : '
            '(tensor<2x1xf32>) -> tensor<2x1xf32>')
    moved, notes = externs.for_backend(text, "hip")
    assert moved == text.replace("__nv_rsqrtf", "__ocml_rsqrt_f32") and notes == ["__nv_rsqrtf -> __ocml_rsqrt_f32"]
    assert externs.for_backend(text, "cuda") == (text, [])
    with pytest.raises(externs.ExternError, match=r"__nv_byte_perm \(byte_perm\(int32, int32, int32\)\) has no "
                                                  "counterpart in Triton's hip libdevice"):
        externs.counterpart("__nv_byte_perm", "hip")


@pytest.mark.skipif(not NORM.is_dir(), reason="the llama2-h100 capture is not in this checkout")
def test_a_captured_inductor_kernel_compiles_for_amd():
    """RMSNorm's rsqrt is ``__nv_rsqrtf`` in the TTIR captured on the H100, which AMD's backend
    refuses, so the replay calls OCML's; its loads carry Triton 3.6's eviction-policy syntax, which
    any installed Triton reads."""
    launch = launches.load(str(NORM))
    assert "__nv_rsqrtf" in launch.ttir and "evictionPolicy = evict_last" in launch.ttir
    res = launch.recompile("hip:gfx942")
    assert res.binary and "__ocml_rsqrt_f32" in res.asm["ttir"] and "__nv_" not in res.asm["amdgcn"]
    assert "__nv_rsqrtf" in launch.recompile("cuda:80").asm["ttir"]


@pytest.mark.skipif(not NORM.is_dir(), reason="the llama2-h100 capture is not in this checkout")
def test_a_call_without_counterpart_is_a_clear_error(tmp_path):
    import shutil
    import subprocess
    import sys
    folder = tmp_path / NORM.name
    shutil.copytree(NORM, folder)
    ttir = next(folder.glob("*.ttir"))
    ttir.write_text(ttir.read_text().replace("__nv_rsqrtf", "__nv_byte_perm"))
    r = subprocess.run([sys.executable, "-m", "irlab", "report", str(folder), "--target", "hip:gfx942"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "__nv_byte_perm (byte_perm(int32, int32, int32)) has no counterpart in Triton's hip libdevice" in r.stderr
