"""Every irlab command on every default target, run in this process with the installed Triton:
compile, recompile, pipeline show, snapshots take, which-pass, report, passes, pass, capture and
the experiments' static parts. CI runs this file on each supported Triton version."""
from __future__ import annotations

import json

import pytest

from irlab.cli import main
from irlab.base.targets import DEFAULT_TARGETS, Target

from helpers import plain_compile


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_compile_recompile_pipeline_snapshots_which_pass_report(target, tmp_path, capsys):
    from irlab.kernels import KERNELS
    t = Target.parse(target)
    code, out, _ = run(capsys, "compile", "--target", target, "--out", str(tmp_path / "c"))
    assert code == 0 and json.loads(out)["binary"]["stage"] == t.binary_stage
    assert (tmp_path / "c" / f"matmul_kernel.{t.binary_stage}").read_bytes() == \
        plain_compile(KERNELS["gemm_fp16"], target).asm[t.binary_stage]     # Triton's own binary
    # the TTGIR a compile wrote, continued to a binary, is the same binary
    code, out, _ = run(capsys, "recompile", str(tmp_path / "c" / "matmul_kernel.ttgir"), "--target", target)
    binary = (tmp_path / "c" / f"matmul_kernel.{t.binary_stage}").read_bytes()
    assert code == 0 and json.loads(out)["binary"]["bytes"] == len(binary)

    code, out, _ = run(capsys, "pipeline", "show", "--target", target, "--stage", "ttgir")
    assert code == 0 and "[ttgir]" in out and "ttgpuir.remove_layout_conversions" in out

    code, out, _ = run(capsys, "snapshots", "take", "--target", target, "--out", str(tmp_path / "s"))
    assert code == 0 and (tmp_path / "s" / "index.json").exists()
    code, out, _ = run(capsys, "which-pass", "--snapshots", str(tmp_path / "s"), "--introduced", "ttg.local_alloc")
    assert code == 0 and "first introduced ops matching 'ttg.local_alloc'" in out

    code, out, _ = run(capsys, "report", "--target", target, "--variant", "baseline", "--vs", "optimize-epilogue")
    assert code == 0 and "baseline vs optimize-epilogue" in out


def test_passes_and_pass_on_a_compiled_file(tmp_path, capsys):
    code, out, _ = run(capsys, "passes")
    assert code == 0 and "interleave-global-loads" in out and "optimize-epilogue" in out
    run(capsys, "compile", "--target", "hip:gfx942", "--variant", "no-reorder", "--out", str(tmp_path))
    code, out, err = run(capsys, "pass", "interleave-global-loads", str(tmp_path / "matmul_kernel.ttgir"))
    assert code == 0 and out.startswith("#") and "remark: sank" in err


def test_capture_on_every_target(tmp_path, capsys):
    script = tmp_path / "job.py"
    script.write_text("import sys\nfrom irlab.bridge.compile import compile_kernel\nfrom irlab.kernels import KERNELS\n"
                      "for t in sys.argv[1:]:\n    compile_kernel(KERNELS['softmax'], t)\n")
    code, _, err = run(capsys, "capture", "--out", str(tmp_path / "run"), "--", str(script), *DEFAULT_TARGETS)
    assert code == 0 and f"captured {len(DEFAULT_TARGETS)} compile(s)" in err
    index = json.loads((tmp_path / "run" / "index.json").read_text())
    assert sorted(e["target"] for e in index) == sorted(DEFAULT_TARGETS)
    assert all(e["binary"]["bytes"] > 1000 for e in index)


@pytest.mark.parametrize("experiment", ["interleave", "epilogue", "lds"])
def test_experiments_static_part_on_every_target(experiment, tmp_path, capsys):
    args = ["experiments", experiment, "--out", str(tmp_path)]
    if experiment != "lds":
        args += ["--configs", "128x128x64-w8", "--no-timing"]
    code, _, _ = run(capsys, *args)
    readme = (tmp_path / "README.md").read_text()
    assert code == 0 and "triton " in readme
    if experiment != "lds":
        static = json.loads((tmp_path / "static.json").read_text())
        for target in DEFAULT_TARGETS:
            assert any(f"/{target}/" in key for key in static), (experiment, target)
