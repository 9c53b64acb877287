"""Captured launches replayed without their script: tritonparse traces (plain and compressed)
and irlab capture folders, recompiled for any target as any variant, from the API and the CLI."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.program import launches
from irlab.bridge.named_variants import get_variant

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
    JIT on an H200 at two shapes, examples/record_trace.py): each launch's arguments as
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


# ------------------------------------------------------------------------------------------------
# which launch a name without #N means

def _t(shape, dtype="torch.float16"):
    n = 1
    for d in shape:
        n *= d
    return {"type": "tensor", "dtype": dtype, "shape": list(shape), "stride": [1] * len(shape), "numel": n,
            "element_size": 2}


def test_the_hottest_program_launch_is_picked_by_gpu_time_else_by_bytes():
    recs = [{"grid": [8, 1, 1], "args": {"x": _t([4096])}, "purpose": "program", "count": 10},
            {"grid": [64, 1, 1], "args": {"x": _t([65536])}, "purpose": "program", "count": 1},
            {"grid": [64, 1, 1], "args": {"x": _t([1 << 20])}, "purpose": "autotune", "count": 50}]
    # no profile: 10 x 8 KiB < 1 x 128 KiB; the autotune runs move the most but are not the program
    assert launches.pick(recs)[0] == 1
    assert "by the bytes its tensors span x launches (no profile recorded): 0.12 MiB x 1" in launches.pick(recs)[1]
    timed = [dict(r, gpu_ns=ns, gpu_launches=r["count"]) for r, ns in zip(recs, (900_000, 300_000, 5_000_000))]
    n, why = launches.pick(timed)
    assert n == 0 and why == "the hottest of the program's launches by GPU time (profiled): 0.900 ms in 10 launch(es)"
    only_tuning = [dict(r, purpose="autotune") for r in recs[:2]]
    n, why = launches.pick(only_tuning)
    assert n == 1 and "its autotune launches (it never ran as the program's own work)" in why


def _capture_folder(root: Path, name: str, records: list[dict] | None) -> Path:
    """A kernel folder as irlab capture writes it, from the CPU trace's add_kernel."""
    trace = [json.loads(line) for line in TRACE.read_text().splitlines()]
    comp = trace[0]["payload"]
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "add_kernel.ttir").write_text(comp["file_content"]["add_kernel.ttir"])
    (folder / "metadata.json").write_text(json.dumps({"kernel": "add_kernel", "target": "cuda:90",
                                                      "stages": {"ttir": {"file": "add_kernel.ttir"}},
                                                      "triton_metadata": comp["metadata"]}))
    if records is not None:
        (folder / "launches.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def _add_args(n):
    return {"x_ptr": _t([n], "torch.float32"), "y_ptr": _t([n], "torch.float32"), "out_ptr": _t([n], "torch.float32"),
            "n_elements": {"type": "int", "value": n}, "BLOCK_SIZE": {"type": "int", "value": 1024}}


def test_a_compile_only_folder_recompiles_but_has_nothing_to_run(tmp_path):
    folder = _capture_folder(tmp_path, "add_kernel.cuda-90.w4s3.0123456789", None)
    launch = launches.load(str(folder))
    assert not launch.launched and launch.source == str(folder)
    assert launch.picked == "no launch recorded (compiled only): its captured TTIR alone"
    assert launch.recompile("cuda:80").binary
    with pytest.raises(launches.LaunchError, match="compiled but never launched in the capture"):
        launch.make_inputs("cpu")
    with pytest.raises(launches.LaunchError, match="recorded no launch"):
        launches.load(f"{folder}#0")
    r = run("replay", str(folder), "--target", "hip:gfx942")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["target"] == "hip:gfx942" and out["picked"] == launch.picked
    r = run("ab", "--kernel", str(folder), "--variants", "cancel-transposes", "--static-only", "--target", "cuda:90",
            "--out", str(tmp_path / "ab"))
    assert r.returncode == 0 and "2 of 2 candidates passed static pruning" in r.stdout, r.stderr


def test_a_run_folder_means_its_hottest_kernel(tmp_path):
    """`irlab replay RUN`: the kernel whose program launches took the most GPU time (profiled),
    else moved the most tensor bytes; its own hottest launch; the rule said."""
    run_dir = tmp_path / "run"
    small = _capture_folder(run_dir, "add_kernel.cuda-90.w4s3.aaaaaaaaaa",
                            [{"grid": [4, 1, 1], "args": _add_args(4096), "purpose": "program", "count": 10}])
    big = _capture_folder(run_dir, "add_kernel.cuda-90.w4s3.bbbbbbbbbb",
                          [{"grid": [1, 1, 1], "args": _add_args(1024), "purpose": "program", "count": 1},
                           {"grid": [64, 1, 1], "args": _add_args(65536), "purpose": "program", "count": 2},
                           {"grid": [64, 1, 1], "args": _add_args(1 << 20), "purpose": "autotune", "count": 9}])
    (run_dir / "index.json").write_text("[]")
    launch = launches.load(str(run_dir))
    # 10 x 24 KiB (small) < 2 x 384 KiB (big); in big, its 2 launches of 64 blocks
    assert launch.source == f"{big}#1"
    assert launch.picked.startswith("the run's hottest kernel by the bytes its tensors span x launches")
    # with GPU times, the many small launches win
    rec = json.loads((small / "launches.jsonl").read_text())
    (small / "launches.jsonl").write_text(json.dumps(dict(rec, gpu_ns=5_000_000, gpu_launches=10)) + "\n")
    assert launches.load(str(run_dir)).source == f"{small}#0"
    assert launches.load(str(run_dir)).picked.startswith("the run's hottest kernel by GPU time (profiled)")
    with pytest.raises(launches.LaunchError, match="is a capture run; name one of its kernel folders"):
        launches.load(f"{run_dir}#0")
    r = run("report", str(run_dir))
    assert r.returncode == 0 and f"assumed: {small}#0: its TTIR recompiled for cuda:90" in r.stdout, r.stderr
    assert "the launch: the run's hottest kernel by GPU time (profiled)" in r.stdout


def test_a_trace_defaults_to_the_hottest_program_launch_not_an_autotune_run(tmp_path):
    """Launches tritonparse recorded under Triton's autotuner (its stack says so) are not picked:
    of the program's, the one that moved the most bytes in all."""
    lines = TRACE.read_text().splitlines()
    comp, launch = lines[0], json.loads(lines[1])
    autotune_stack = [{"filename": "/venv/triton/runtime/autotuner.py", "name": "_bench", "line": 1, "loc": ""}]
    events = [dict(launch, grid=[4], extracted_args=_add_args(4096)),
              dict(launch, grid=[64], extracted_args=_add_args(65536), stack=autotune_stack + launch["stack"]),
              dict(launch, grid=[16], extracted_args=_add_args(16384)),
              dict(launch, grid=[4], extracted_args=_add_args(4096))]
    trace = tmp_path / "tuned.ndjson"
    trace.write_text(comp + "\n" + "".join(json.dumps(e) + "\n" for e in events))
    picked = launches.load(str(trace))
    assert picked.source == f"{trace}#add_kernel:2" and picked.grid == (16, 1, 1) and picked.purpose == "program"
    assert "(first of 1 alike in the trace)" in picked.picked
    assert launches.load(f"{trace}#add_kernel:1").purpose == "autotune"
