"""Recording, replaying and editing Triton's own pipeline; Python passes inside it."""
from __future__ import annotations

import subprocess
import sys

import pytest

from irlab.bridge import compat
from irlab.bridge.compile import compile_kernel
from irlab.bridge.pipeline import VerifierError
from irlab.passkit.variant import Drop, Insert, Variant, VariantError
from irlab.kernels import KERNELS
from irlab.base.targets import DEFAULT_TARGETS

from helpers import plain_compile


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_replaying_the_unedited_recording_gives_triton_s_binary(target):
    spec = KERNELS["gemm_fp16"]
    plain = plain_compile(spec, target)
    binary = "hsaco" if target.startswith("hip") else "cubin"
    replay = compile_kernel(spec, target)
    assert replay.pipeline, "nothing recorded"
    assert replay.binary == plain.asm[binary]


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_snapshot_mode_and_identity_round_trip_keep_the_binary(target, tmp_path):
    spec = KERNELS["gemm_fp16"]
    plain = plain_compile(spec, target)
    binary = "hsaco" if target.startswith("hip") else "cubin"
    snap = compile_kernel(spec, target, snapshot_dir=tmp_path / "snaps")
    assert snap.binary == plain.asm[binary]
    # Triton's printed IR sent back through Triton's parser (identity pass, reparse always),
    # mid-stage and at the stage boundary, gives the same binary
    v = Variant("round-trip", (Insert("identity", after="remove_layout_conversions#1", reparse="always"),
                               Insert("identity", at="end", reparse="always")))
    rt = compile_kernel(spec, target, variant=v)
    assert rt.binary == plain.asm[binary]
    assert [r.name for _, r in rt.python_results] == ["identity", "identity"]


def test_recorded_pipeline_is_the_backend_s_pass_list():
    res = compile_kernel(KERNELS["gemm_fp16"], "hip:gfx942")
    ttgir = [c.name for c in res.pipeline if c.stage == "ttgir"]
    assert ttgir[0] == "ttir.convert_to_ttgpuir"
    for name in ("amd.ttgpuir.optimize_epilogue", "amd.ttgpuir.block_pingpong", "ttgpuir.remove_layout_conversions",
                 "amd.ttgpuir.pipeline"):
        assert name in ttgir
    assert ttgir.index("amd.ttgpuir.optimize_epilogue") < ttgir.index("amd.ttgpuir.pipeline") \
        < ttgir.index("amd.ttgpuir.block_pingpong")
    # the load reordering pass is recorded exactly where the installed Triton has it (3.6)
    reorder = "amd.ttgpuir.reorder_instructions"
    assert (reorder in ttgir) == compat.has_pass(reorder)
    if reorder in ttgir:
        assert ttgir.index("amd.ttgpuir.pipeline") < ttgir.index(reorder) < ttgir.index("amd.ttgpuir.block_pingpong")
    first = next(c for c in res.pipeline if c.name == "ttir.convert_to_ttgpuir")
    assert first.args == ("hip:gfx942", 8, 64, 1) and first.label == "make_ttgir_early"
    nv = compile_kernel(KERNELS["gemm_fp16"], "cuda:90")
    cta = "nvidia.ttnvgpuir.plan_cta" if compat.has_pass("nvidia.ttnvgpuir.plan_cta") else \
        "nvidia.ttnvgpuir.assign_cga_layouts"
    assert cta in [c.name for c in nv.pipeline]
    # every recorded pass is one the installed Triton has, so has_pass answers for the recording
    assert all(compat.has_pass(c.name) for c in res.pipeline + nv.pipeline)


def test_dropping_passes_changes_the_ir_and_nothing_else_leaks():
    spec = KERNELS["gemm_fp16"]
    base = compile_kernel(spec, "hip:gfx942")
    v = Variant("no-buffer-ops", (Drop("amd.ttgpuir.convert_to_buffer_ops"),))
    doc = compile_kernel(spec, "hip:gfx942", variant=v)
    names = [c.name for c in doc.pipeline]  # the recording lists what the backend asked for ...
    assert "amd.ttgpuir.convert_to_buffer_ops" in names
    assert "amdg.buffer_load" in base.nodebug["ttgir"]     # ... but the dropped pass did not run
    assert "amdg.buffer_load" not in doc.nodebug["ttgir"] and doc.binary != base.binary
    again = compile_kernel(spec, "hip:gfx942")
    assert again.nodebug["ttgir"] == base.nodebug["ttgir"] and again.binary == base.binary
    # on sm_80, dropping the software pipeliner changes the binary too
    nv = compile_kernel(spec, "cuda:80")
    no_pipe = compile_kernel(spec, "cuda:80", variant=Variant("no-pipeline", (Drop("ttgpuir.pipeline"),)))
    assert no_pipe.binary != nv.binary


def test_an_edit_that_matches_nothing_is_an_error_unless_optional():
    spec = KERNELS["gemm_fp16"]
    with pytest.raises(VariantError, match="matched no pass of the cuda:90 pipeline") as info:
        compile_kernel(spec, "cuda:90", variant=Variant("amd-only", (Drop("amd.ttgpuir.reorder_instructions"),)))
    assert "ttgpuir.coalesce" in str(info.value)  # it lists the passes that exist
    res = compile_kernel(spec, "cuda:90", variant=Variant("amd-only", (
        Drop("amd.ttgpuir.reorder_instructions", optional=True),)))
    assert res.binary


def test_python_pass_that_breaks_the_ir_is_named_with_its_ir_saved(tmp_path, monkeypatch):
    monkeypatch.setenv("IRLAB_PASS_PATH", str(__import__("pathlib").Path(__file__).parent / "passes_for_tests"))
    from irlab.passkit import registry
    monkeypatch.setattr(registry, "_LOADED", False)
    v = Variant("broken", (Insert("retype-first-load", at="end"),))
    with pytest.raises(VerifierError) as info:
        compile_kernel(KERNELS["softmax"], "cuda:80", variant=v, work_dir=tmp_path)
    err = info.value
    assert err.pass_name == "retype-first-load" and err.stage == "ttgir"
    assert err.ir_path.startswith(str(tmp_path)) and "f16" in open(err.ir_path).read()
    assert "retype-first-load" in str(err) and err.detail


def test_cli_pipeline_show():
    r = subprocess.run([sys.executable, "-m", "irlab", "pipeline", "show", "--target", "hip:gfx942", "--stage", "ttgir"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("# matmul_kernel for hip:gfx942")
    assert any("amd.ttgpuir.optimize_epilogue" in line for line in lines)
    assert any("ttir.convert_to_ttgpuir('hip:gfx942', 8, 64, 1)" in line for line in lines)
    assert "[ttgir]" in lines and "[llir]" not in lines
