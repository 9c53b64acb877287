"""Inductor's kernels of every family -- pointwise, reduction, persistent reduction, GEMM template
(tests/inductor_kernels.py) -- compiled, autotuned and launched by Inductor's own runtime
(CachingAutotuner: its benchmarker, its generated launcher) on the CPU stand-in of Triton's
driver: the capture sees each compile and launch, tells Inductor's autotuning from the program,
and replay, report and ab work on what it captured; every rewriting pass says on each kernel
what it did or why it did nothing.

Torch's device calls that need a GPU (device guard, raw stream, the benchmarker's CUDA events)
answer as a single idle device would."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from fakes.fake_driver import fake_gpu  # noqa: E402

from irlab.program import launches  # noqa: E402
from irlab.program.capture import Capture  # noqa: E402
from irlab.bridge.named_variants import resolve  # noqa: E402

# slow: run by `python -m pytest -m slow` (CI runs it); the README's quick command skips it
pytestmark = pytest.mark.slow

PASSES = ("optimize-epilogue", "interleave-global-loads", "cancel-transposes", "lds-transposes", "descriptor-loads",
          "loop-attributes")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from torch._dynamo.device_interface import CudaInterface
    from torch._inductor.runtime import benchmarking, triton_helpers
    from triton import knobs
    out = tmp_path_factory.mktemp("inductor") / "run"
    with pytest.MonkeyPatch.context() as mp, knobs.cache.scope():
        knobs.cache.dir = str(out.parent / "triton-cache")
        mp.setattr(triton_helpers, "set_driver_to_gpu", lambda: None)   # the fake driver is the GPU
        for name in ("exchange_device", "maybe_exchange_device", "get_raw_stream"):
            mp.setattr(CudaInterface, name, staticmethod(lambda idx: 0))
        mp.setattr(CudaInterface, "current_device", staticmethod(lambda: 0))
        mp.setattr(CudaInterface, "synchronize", staticmethod(lambda *a: None))
        # Inductor's benchmarker times with CUDA events: one run, equal times instead
        mp.setattr(benchmarking.benchmarker, "benchmark_gpu", lambda fn, *a, **kw: (fn(), 1.0)[1])
        import inductor_kernels as k
        with fake_gpu() as gpu, Capture(out) as cap:
            for kernel in k.FAMILIES.values():
                kernel.precompile()
            h = torch.empty(16384, dtype=torch.float16)
            k.triton_poi_fused_add_relu_0.run(h, h, h, 16384, stream=0)
            k.triton_poi_fused_add_relu_0.run(h, h, h, 16384, stream=0)
            k.triton_red_fused_sum_1.run(torch.empty(64 * 4096, dtype=torch.float16), torch.empty(64), 64, 4096,
                                         stream=0)
            k.triton_per_fused__softmax_2.run(torch.empty(64 * 128), torch.empty(64 * 128), 64, 128, stream=0)
            a = torch.empty(1024, 1024, dtype=torch.float16)
            k.triton_tem_fused_mm_3.run(a, a, a, 64, 1, 1, stream=0)
    return out, cap, gpu


def _by_kernel(run_dir: Path) -> dict:
    """kernel name -> [(folder, its records)]"""
    out: dict = {}
    for folder in sorted(p for p in run_dir.iterdir() if p.is_dir()):
        recs = [json.loads(line) for line in (folder / "launches.jsonl").read_text().splitlines()]
        out.setdefault(json.loads((folder / "metadata.json").read_text())["kernel"], []).append((folder, recs))
    return out


def _program_folder(run_dir: Path, kernel: str) -> Path:
    (folder,) = [f for f, recs in _by_kernel(run_dir)[kernel] if any(r["purpose"] == "program" for r in recs)]
    return folder


def test_inductor_compiles_and_launches_are_all_seen_with_their_purpose(run):
    run_dir, cap, gpu = run
    kernels = _by_kernel(run_dir)
    counts = {name: sorted((r["purpose"], r["count"]) for _, recs in folders for r in recs)
              for name, folders in kernels.items()}
    assert counts == {
        # two pointwise configs timed by Inductor's benchmarker, the faster one run twice
        "triton_poi_fused_add_relu_0": [("autotune", 1), ("autotune", 1), ("program", 2)],
        "triton_red_fused_sum_1": [("program", 1)],                  # one config: nothing to time
        "triton_per_fused__softmax_2": [("autotune", 1), ("autotune", 1), ("autotune", 1), ("program", 1)],
        "triton_tem_fused_mm_3": [("program", 1)],
    }
    assert len(gpu.launches) == 10
    index = json.loads((run_dir / "index.json").read_text())
    assert len(index) == 7 and all(e["origin"] == "compiled" for e in index)   # compiled in this process
    assert "10 in all: 5 autotune, 5 program" in cap.summary()
    grid = {n: folders[0][1][0]["grid"] for n, folders in kernels.items() if len(folders) == 1}
    assert grid["triton_tem_fused_mm_3"] == [64, 1, 1]     # the template's grid, passed by Inductor's launcher


@pytest.mark.parametrize("kernel", ["triton_poi_fused_add_relu_0", "triton_red_fused_sum_1",
                                    "triton_per_fused__softmax_2", "triton_tem_fused_mm_3"])
def test_each_family_replays_for_every_target(run, kernel):
    folder = _program_folder(run[0], kernel)
    launch = launches.load(str(folder))
    assert launch.purpose == "program" and launch.picked.startswith("the hottest of the program's launches")
    for target in ("cuda:80", "cuda:90", "hip:gfx942", "hip:gfx950"):
        res = launch.recompile(target)
        assert res.target == target and res.binary, target


@pytest.mark.parametrize("kernel", ["triton_poi_fused_add_relu_0", "triton_red_fused_sum_1",
                                    "triton_per_fused__softmax_2", "triton_tem_fused_mm_3"])
def test_every_pass_says_what_it_did_or_why_not_on_each_family(run, kernel):
    launch = launches.load(str(_program_folder(run[0], kernel)))
    silent = []
    for name in PASSES:
        res = launch.recompile(variant=resolve(name, "cuda:90"))
        said = [str(d) for _, r in res.python_results if r.name == name for d in r.diagnostics]
        if not said:
            silent.append(name)
    assert not silent, f"{kernel}: said nothing: {silent}"


def test_passes_that_apply_to_the_gemm_template_change_it(run):
    launch = launches.load(str(_program_folder(run[0], "triton_tem_fused_mm_3")))
    base = launch.recompile()
    epilogue = launch.recompile(variant=resolve("optimize-epilogue", "cuda:90"))
    assert "ttg.convert_layout" in base.asm["ttgir"] and epilogue.asm["ttgir"] != base.asm["ttgir"]
    # a TTIR pass: it runs on the captured TTIR, and Triton's pipeliner follows its hint
    variant = resolve("loop-attributes{num_stages=2}", "cuda:90")
    hinted = launch.recompile(variant=variant)
    (res,) = [r for _, r in hinted.python_results if r.name == "loop-attributes"]
    assert res.changed and hinted.variant == variant
    assert base.asm["ttgir"].count("ttg.async_copy_global_to_local") > hinted.asm["ttgir"].count(
        "ttg.async_copy_global_to_local")
    with pytest.raises(Exception, match="already ran when the TTIR was captured"):
        from irlab.passkit.variant import Drop, Variant
        launch.recompile(variant=Variant("no-combine", (Drop("ttir.combine", stage="ttir"),)))


def test_report_and_ab_on_a_captured_inductor_kernel(run, tmp_path):
    folder = _program_folder(run[0], "triton_tem_fused_mm_3")

    def irlab(*args):
        return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True)
    r = irlab("report", str(folder), "--vs", "optimize-epilogue")
    assert r.returncode == 0, r.stderr
    assert "triton_tem_fused_mm_3 for cuda:90: baseline vs optimize-epilogue" in r.stdout
    r = irlab("ab", "--kernel", str(folder), "--variants", "optimize-epilogue,descriptor-loads", "--static-only",
              "--out", str(tmp_path / "ab"))
    assert r.returncode == 0 and "candidates passed static pruning" in r.stdout, r.stderr
    assert "the hottest of the program's launches" in r.stderr


TRACED = """
import sys
sys.path.insert(0, {tests!r})
out = sys.argv[1]
import torch
import tritonparse.structured_logging as tritonparse
tritonparse.init(out + "/trace", enable_trace_launch=True)
from fakes.fake_driver import fake_gpu
from torch._dynamo.device_interface import CudaInterface
from torch._inductor.runtime import benchmarking, triton_helpers
triton_helpers.set_driver_to_gpu = lambda: None
for name in ("exchange_device", "maybe_exchange_device", "get_raw_stream"):
    setattr(CudaInterface, name, staticmethod(lambda idx: 0))
CudaInterface.current_device = staticmethod(lambda: 0)
CudaInterface.synchronize = staticmethod(lambda *a: None)
benchmarking.benchmarker.benchmark_gpu = lambda fn, *a, **kw: (fn(), 1.0)[1]
import inductor_kernels as k
from irlab.program.capture import Capture

with fake_gpu(), Capture(out + "/run") as cap:
    for kernel in k.FAMILIES.values():
        kernel.precompile()
    h = torch.empty(16384, dtype=torch.float16)
    k.triton_poi_fused_add_relu_0.run(h, h, h, 16384, stream=0)
    k.triton_red_fused_sum_1.run(torch.empty(64 * 4096, dtype=torch.float16), torch.empty(64), 64, 4096, stream=0)
    k.triton_per_fused__softmax_2.run(torch.empty(64 * 128), torch.empty(64 * 128), 64, 128, stream=0)
    a = torch.empty(1024, 1024, dtype=torch.float16)
    k.triton_tem_fused_mm_3.run(a, a, a, 64, 1, 1, stream=0)
print(cap.summary())
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """A tritonparse trace of the same Inductor run, recorded while irlab captures it too."""
    pytest.importorskip("tritonparse")
    out = tmp_path_factory.mktemp("traced")
    script = out / "traced.py"
    script.write_text(TRACED.format(tests=str(Path(__file__).parent)))
    root = str(Path(__file__).parent.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True, cwd=root, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    (trace,) = (out / "trace").glob("*.ndjson")
    return trace, out / "run", r.stdout


def test_a_tritonparse_trace_of_inductor_replays_each_family_from_its_program_launch(traced):
    trace, run_dir, summary = traced
    # tritonparse replaced Triton's launch hook by its own function: both saw every launch
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert sum(e["event_type"] == "launch" for e in events) == 9
    assert "9 in all: 5 autotune, 4 program" in summary
    for kernel in ("triton_poi_fused_add_relu_0", "triton_red_fused_sum_1", "triton_per_fused__softmax_2",
                   "triton_tem_fused_mm_3"):
        launch = launches.load(f"{trace}#{kernel}")
        assert launch.purpose == "program", kernel      # not one of Inductor's autotuning runs
        mine = launches.load(str(_program_folder(run_dir, kernel)))
        assert launch.grid == mine.grid and launch.ttir == mine.ttir, kernel
        assert launch.recompile("hip:gfx942", resolve("lds-transposes", "hip:gfx942")).python_results
    tuned = [e for e in events if e["event_type"] == "launch" and e["name"] == "triton_per_fused__softmax_2"]
    assert [launches.trace_purpose(e) for e in tuned] == ["autotune", "autotune", "autotune", "program"]
