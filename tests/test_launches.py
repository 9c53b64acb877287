"""Captured launches replayed without their script: tritonparse traces (plain and compressed)
and irlab capture folders, recompiled for any target as any variant, from the API and the CLI."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from irlab import launches
from irlab.variants import get_variant

TRACE = Path(__file__).parent / "data" / "traces" / "add_kernel.launch-hook-on-cpu.ndjson"


def run(*args):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True)


def test_a_tritonparse_launch_is_read_with_its_arguments_and_options():
    launch = launches.load(str(TRACE))
    assert launch.name == "add_kernel" and launch.target == "cuda:90" and launch.grid == (4, 1, 1)
    assert launch.options == {"num_warps": 4, "num_stages": 3, "num_ctas": 1}
    x = next(a for a in launch.args if a.name == "x_ptr")
    assert x.is_tensor and x.info["dtype"] == "torch.float32" and x.info["shape"] == [4096]
    # BLOCK_SIZE is a constexpr: baked into the TTIR, not a parameter of the compiled kernel
    assert launch.runtime_params() == ["x_ptr", "y_ptr", "out_ptr", "n_elements"]
    assert launches.load(f"{TRACE}#add_kernel:0").source == launch.source


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90", "hip:gfx942"])
def test_recompiled_for_any_target_as_a_variant(target):
    launch = launches.load(str(TRACE))
    res = launch.recompile(target, get_variant("cancel-transposes", target))
    assert res.target == target and res.binary and res.metadata["num_warps"] == 4


def test_compressed_traces_and_bad_selectors(tmp_path):
    gz = tmp_path / "trace.ndjson.gz"
    gz.write_bytes(gzip.compress(TRACE.read_bytes()))
    assert launches.load(str(gz)).name == "add_kernel"
    for ref, message in [(f"{TRACE}#other", "no launch of kernel 'other'; it has: add_kernel"),
                         (f"{TRACE}#add_kernel:3", "there is no launch #3"),
                         (str(tmp_path / "missing.ndjson"), "no capture folder or trace")]:
        with pytest.raises(launches.LaunchError, match=message):
            launches.load(ref)
    compile_only = tmp_path / "compile_only.ndjson"
    compile_only.write_text(TRACE.read_text().splitlines()[0] + "\n")
    with pytest.raises(launches.LaunchError, match="holds no launch events"):
        launches.load(str(compile_only))


def test_an_irlab_capture_folder_is_a_launch(tmp_path):
    """The folder form irlab capture writes: TTIR, metadata.json and launches.jsonl."""
    trace = [json.loads(line) for line in TRACE.read_text().splitlines()]
    comp, launch = trace[0]["payload"], trace[1]
    folder = tmp_path / "add_kernel.cuda-90"
    folder.mkdir()
    (folder / "add_kernel.ttir").write_text(comp["file_content"]["add_kernel.ttir"])
    (folder / "metadata.json").write_text(json.dumps({"kernel": "add_kernel", "target": "cuda:90",
                                                      "stages": {"ttir": {"file": "add_kernel.ttir"}},
                                                      "triton_metadata": comp["metadata"]}))
    (folder / "launches.jsonl").write_text(json.dumps({"grid": [4, 1, 1], "args": launch["extracted_args"]}) + "\n")
    loaded = launches.load(str(folder))
    assert loaded.name == "add_kernel" and loaded.runtime_params() == ["x_ptr", "y_ptr", "out_ptr", "n_elements"]
    assert loaded.recompile("hip:gfx942").binary
    with pytest.raises(launches.LaunchError, match="recorded 1 launch"):
        launches.load(f"{folder}#1")


def test_replay_report_and_ab_from_the_command_line(tmp_path):
    r = run("replay", str(TRACE), "--target", "hip:gfx942", "--variant", "cancel-transposes", "--out",
            str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["target"] == "hip:gfx942" and (tmp_path / "out" / "add_kernel.hsaco").exists()
    r = run("report", str(TRACE), "--vs", "cancel-transposes")
    assert r.returncode == 0 and "add_kernel for cuda:90: baseline vs cancel-transposes" in r.stdout, r.stderr
    r = run("ab", "--kernel", str(TRACE), "--variants", "cancel-transposes", "--static-only", "--out",
            str(tmp_path / "ab"))
    assert r.returncode == 0 and "2 of 2 candidates passed static pruning" in r.stdout, r.stderr
    r = run("ab", "--kernel", str(TRACE), "--variants", "cancel-transposes", "--shapes", "64x64x64", "--static-only")
    assert r.returncode == 2 and "replayed as it was recorded" in r.stderr
    r = run("replay", str(tmp_path / "nope"))
    assert r.returncode == 2 and "no capture folder or trace" in r.stderr and "Traceback" not in r.stderr


GPU_TRACE = Path(__file__).parent / "data" / "traces" / "bias_relu_gemm.h200.ndjson.gz"


def test_a_trace_recorded_on_the_gpu_machine_replays_anywhere(tmp_path):
    """A real tritonparse 0.6 trace (the walkthrough's bias + ReLU GEMM launched through Triton's
    JIT on an H200 at two shapes, benchmarks/device/record_trace.py): each launch's arguments as
    recorded, and its TTIR recompiled for other targets as a variant, on a machine with no GPU."""
    first, second = launches.load(f"{GPU_TRACE}#matmul_bias_relu:0"), launches.load(f"{GPU_TRACE}#matmul_bias_relu:1")
    shapes = [{a.name: a.info["shape"] for a in launch.args if a.is_tensor} for launch in (first, second)]
    assert shapes[0]["a_ptr"] == [1024, 1024] and shapes[1]["a_ptr"] == [2048, 512]
    assert shapes[1]["c_ptr"] == [2048, 1024] and shapes[1]["bias_ptr"] == [1024]
    assert first.target.name == "cuda:90" and first.options["num_warps"] in (4, 8)
    assert second.grid[0] == 2 * first.grid[0] > 2     # twice the output tiles
    for target in ("cuda:80", "hip:gfx942"):
        res = second.recompile(target, get_variant("optimize-epilogue", target))
        assert res.asm.get(res.isa_stage), target
    r = run("report", f"{GPU_TRACE}#matmul_bias_relu:1", "--target", "cuda:90", "--vs", "optimize-epilogue")
    assert r.returncode == 0, r.stderr
