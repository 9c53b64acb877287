"""On a GPU: irlab capture sees every launch of a torch.compile'd function (pointwise, reduction,
GEMM template under max-autotune) and of triton.autotune, each with its purpose; --profile times
them with Proton, irlab top ranks them, and replay/report/ab default to the hottest launch."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import irlab

pytestmark = pytest.mark.gpu

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(irlab.__file__).parent.parent),
                                                               os.environ.get("PYTHONPATH")])),
       "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}   # compile and autotune again, whatever ran before

COMPILED = textwrap.dedent("""
    import torch
    import torch._inductor.config

    # Triton templates only: with cuBLAS among the candidates, which one wins depends on the GPU
    torch._inductor.config.max_autotune_gemm_backends = "TRITON"

    def f(x, w, b, z):
        y = torch.relu(x @ w + b)                 # GEMM template (max-autotune) with a pointwise epilogue
        p = torch.exp(b.float() * 3.0)            # pointwise
        return y.softmax(-1), z.sum(-1) * 2.0, p  # a persistent reduction; a looped reduction over 16384

    g = torch.compile(f, mode="max-autotune-no-cudagraphs")
    x = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    w = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, device="cuda", dtype=torch.float16)
    z = torch.randn(256, 16384, device="cuda")
    for _ in range(3):
        s, r, p = g(x, w, b, z)
    torch.cuda.synchronize()
    assert torch.allclose(r, z.sum(-1) * 2.0, rtol=1e-3, atol=1e-2)
    print("compiled function ran")
""")

TUNED = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
    @triton.jit
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

    x = torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    for _ in range(5):
        scale[lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),)](x, out, x.numel())
    ms = triton.testing.do_bench(lambda: scale[lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),)](x, out, x.numel()))
    torch.cuda.synchronize()
    assert torch.equal(out, x * 2.0)
""")


def irlab(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, env=ENV, cwd=cwd)


def _folders(run: Path) -> dict:
    """folder -> its launch records"""
    return {f: [json.loads(line) for line in (f / "launches.jsonl").read_text().splitlines()]
            for f in sorted(run.iterdir()) if (f / "launches.jsonl").is_file()}


@pytest.fixture(scope="module")
def compiled_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpu-capture")
    (root / "f.py").write_text(COMPILED)
    r = irlab("capture", "--profile", "--quiet", "--out", str(root / "run"), "--", str(root / "f.py"))
    assert r.returncode == 0, r.stderr[-4000:]
    return root / "run", r


def test_a_torch_compiled_function_is_captured_launch_by_launch_with_purposes(compiled_run):
    run, r = compiled_run
    assert "compiled function ran" in r.stdout
    assert "TORCHINDUCTOR_COMPILE_THREADS=1: Inductor compiles in this process" in r.stderr
    folders = _folders(run)
    program = {f.name.split(".")[0] for f, recs in folders.items() if any(x["purpose"] == "program" for x in recs)}
    assert any(n.startswith("triton_tem_") for n in program), program          # the chosen GEMM template
    assert any(n.startswith(("triton_red_", "triton_per_")) for n in program), program
    assert any(n.startswith("triton_poi_") for n in program), program
    # max-autotune timed GEMM candidates: their launches are autotune, and some never ran for the program
    autotune_only = [f for f, recs in folders.items() if recs and all(x["purpose"] == "autotune" for x in recs)]
    assert autotune_only, "no autotuning candidate recorded"
    # every program kernel ran as often as the compiled function was called (three times)
    for f, recs in folders.items():
        n = sum(x["count"] for x in recs if x["purpose"] == "program")
        assert n % 3 == 0, (f.name, n)
    assert json.loads((run / "index.json").read_text())[0]["origin"] == "compiled"


def test_the_profile_ranks_kernels_and_picks_the_hottest_launch(compiled_run):
    run, r = compiled_run
    profile = json.loads((run / "profile.json").read_text())
    assert profile["captured_ns"] > 0 and profile["total_ns"] >= profile["captured_ns"]
    assert "of it in captured kernels (`irlab top" in r.stderr
    top = irlab("top", str(run))
    assert top.returncode == 0, top.stderr
    rows = [line for line in top.stdout.splitlines() if line[:3].strip().isdigit()]
    assert rows and all(float(row.split()[1].rstrip("%")) <= 100 for row in rows)
    hottest = rows[0].split()[-1]
    replay = irlab("replay", str(run))
    assert replay.returncode == 0, replay.stderr
    out = json.loads(replay.stdout)
    assert out["launch"].startswith(str(run / hottest) + "#") and "by GPU time (profiled)" in out["picked"]
    report = irlab("report", str(run / hottest), "--vs", "optimize-epilogue")
    assert report.returncode == 0, report.stderr


def test_ab_times_the_hottest_captured_kernel(compiled_run, tmp_path):
    run, _ = compiled_run
    tem = next(f for f, recs in _folders(run).items()
               if f.name.startswith("triton_tem_") and any(x["purpose"] == "program" for x in recs))
    r = irlab("ab", "--kernel", str(tem), "--variants", "optimize-epilogue", "--rounds", "3", "--screen-rounds", "2",
              "--out", str(tmp_path / "ab"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "the hottest of the program's launches by GPU time (profiled)" in r.stderr


def test_autotune_and_benchmark_launches_on_the_gpu(tmp_path):
    (tmp_path / "t.py").write_text(TUNED)
    r = irlab("capture", "--out", str(tmp_path / "run"), "--", str(tmp_path / "t.py"))
    assert r.returncode == 0, r.stderr[-3000:]
    purposes = {}
    for f, recs in _folders(tmp_path / "run").items():
        for x in recs:
            purposes[x["purpose"]] = purposes.get(x["purpose"], 0) + x["count"]
    assert purposes["program"] == 5 and purposes["autotune"] > 0 and purposes["benchmark"] > 0, purposes


MARKED = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl

    import irlab

    @triton.jit
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

    # set-up: large fills and normal draws, outside the region (like a model's weight initialization)
    weights = [torch.randn(4096, 4096, device="cuda") for _ in range(8)]
    zeros = [torch.zeros(4096, 4096, device="cuda") for _ in range(8)]
    x = torch.randn(1 << 16, device="cuda")
    out = torch.empty_like(x)
    for _ in range(4):
        with irlab.region("step"):
            scale[(64,)](x, out, x.numel(), BLOCK=1024)
            y = out @ out            # a library kernel inside the region
    torch.cuda.synchronize()
    assert torch.equal(out, x * 2.0)
""")


def test_a_marked_region_is_profiled_apart_from_the_set_up(tmp_path):
    """Real Proton: each entry of irlab.region is a scope ``irlab-region step#K`` around the launch
    scopes inside it; profile.json's region holds the Triton kernel (entries 1..3) and not the
    set-up's fills and normal draws; irlab top ranks inside it by default and says so."""
    (tmp_path / "m.py").write_text(MARKED)
    r = irlab("capture", "--profile", "--quiet", "--out", str(tmp_path / "run"), "--", str(tmp_path / "m.py"))
    assert r.returncode == 0, r.stderr[-3000:]
    run = tmp_path / "run"
    assert json.loads((run / "marks.json").read_text())["regions"] == {"step": {"entries": 4}}
    profile = json.loads((run / "profile.json").read_text())
    step = profile["regions"]["step"]
    assert step["entries"] == 4 and step["left_out"] == [0] and len(step["entries_ns"]) == 4
    assert all(ns > 0 for ns in step["entries_ns"]), step["entries_ns"]
    (folder, per), = step["captured"].items()
    assert folder.startswith("scale.") and sum(t["count"] for t in per["records"].values()) == 3
    assert step["total_ns"] < profile["total_ns"]
    setup = [name for name in profile["other"] if "normal" in name.lower() or "fill" in name.lower()]
    assert setup and not any(name in step["other"] for name in setup), (setup, list(step["other"]))
    top = irlab("top", str(run))
    assert top.returncode == 0, top.stderr
    assert "shares below are of region 'step' (entries 1..3; entry 0, which compiles, left out)" in top.stdout
    assert not any(name[:40] in top.stdout for name in setup)
    whole = irlab("top", str(run), "--whole-program")
    assert whole.returncode == 0 and any(name[:40] in whole.stdout for name in setup)
    replay = irlab("replay", str(run / folder))
    assert "inside region 'step'" in json.loads(replay.stdout)["picked"], replay.stderr
