"""Launches captured through Triton's launch hooks, whatever launched them: the JIT, a compiled
kernel's ``[grid](...)``, ``triton.autotune`` (its benchmark runs told apart), a kernel compiled
before the capture. Triton's own launch code runs unchanged; only the device half of its driver
is a CPU stand-in (tests/fakes/fake_driver.py) whose launcher calls the hooks as the real one does."""
from __future__ import annotations

import json

import pytest
import triton
from fakes.fake_driver import FakeTensor, fake_gpu
from fakes.fake_program import scale_kernel, tuned_kernel   # autotuned over BLOCK 128 and 256
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import ASTSource, CompiledKernel

from irlab.program import records as launch_records, launches
from irlab.bridge import compat
from irlab.program.capture import SCOPE_PREFIX, Capture, profile_summary


@pytest.fixture(autouse=True)
def fresh(tmp_path):
    """Every test compiles (and autotunes) its kernels anew: an empty Triton cache, no JIT binaries
    in memory, no autotuner choice."""
    for fn in (scale_kernel, tuned_kernel.fn):
        fn.device_caches.clear()
    tuned_kernel.cache.clear()           # the autotuner's choices
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "triton-cache")
        yield


def _records(folder):
    return [json.loads(line) for line in (folder / "launches.jsonl").read_text().splitlines()]


def _folders(run, kernel):
    return sorted(p for p in run.glob(f"{kernel}.*") if p.is_dir())


def test_jit_launches_are_recorded_through_the_launch_hooks(tmp_path):
    """Each distinct launch once with its count, grid (a callable resolved), every argument, and
    the program as its purpose; the launch hooks and CompiledKernel are as before afterwards."""
    hooks_before = list(knobs.runtime.launch_enter_hook.calls), list(knobs.runtime.launch_exit_hook.calls)
    original = CompiledKernel.launch_metadata
    x, out = FakeTensor((4096,)), FakeTensor((4096,))
    with fake_gpu() as gpu, Capture(tmp_path / "run") as cap:
        for _ in range(3):
            scale_kernel[(4,)](x, out, 4096, 2.0, BLOCK=1024)
        scale_kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](FakeTensor((1000,)), FakeTensor((1000,)), 1000,
                                                                        0.5, BLOCK=1024)
    assert [launch[1] for launch in gpu.launches] == [(4, 1, 1)] * 3 + [(1, 1, 1)]
    assert CompiledKernel.launch_metadata is original
    assert (knobs.runtime.launch_enter_hook.calls, knobs.runtime.launch_exit_hook.calls) == hooks_before
    folders = _folders(tmp_path / "run", "scale_kernel")
    assert len(folders) == 2      # n=4096 is divisible by 16, n=1000 is not: two specializations
    by_grid = {tuple(r["grid"]): r for f in folders for r in _records(f)}
    assert by_grid[(4, 1, 1)]["count"] == 3 and by_grid[(1, 1, 1)]["count"] == 1
    rec = by_grid[(4, 1, 1)]
    assert rec["purpose"] == "program"
    assert rec["args"]["x_ptr"] == {"type": "tensor", "dtype": "torch.float32", "shape": [4096], "stride": [1],
                                    "storage_offset": 0, "device": "cuda:0", "numel": 4096, "element_size": 4}
    assert rec["args"]["scale"] == {"type": "float", "value": 2.0}
    assert rec["args"]["BLOCK"] == {"type": "int", "value": 1024}
    assert "2 distinct launch(es) (4 in all: 4 program) of 2 kernel(s)" in cap.summary()
    launch = launches.load(str(next(f for f in folders if _records(f)[0]["grid"] == [4, 1, 1])))
    assert launch.runtime_params() == ["x_ptr", "out_ptr", "n", "scale"] and launch.grid == (4, 1, 1)


def test_compiled_kernels_launched_directly_even_when_compiled_before_the_capture(tmp_path):
    """``triton.compile(...)`` then ``kernel[grid](...)``, with no JIT in between, the kernel
    compiled before the capture began: recorded from the kernel object (every stage, no compile
    times), and it replays for another target."""
    src = ASTSource(scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "scale": "fp32",
                                   "BLOCK": "constexpr"}, {"BLOCK": 256})
    with fake_gpu() as gpu:
        kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32))
        with Capture(tmp_path / "run") as cap:
            kernel[(8, 1, 1)](FakeTensor((2048,)), FakeTensor((2048,)), 2048, 3.0, 256, stream=0)
            kernel[(8, 1, 1)](FakeTensor((2048,)), FakeTensor((2048,)), 2048, 3.0, 256, stream=0)
    assert len(gpu.launches) == 2
    (folder,) = _folders(tmp_path / "run", "scale_kernel")
    meta = json.loads((folder / "metadata.json").read_text())
    assert meta["origin"].startswith("loaded") and meta["seconds"]["total"] is None
    assert {"ttir", "ttgir", "llir", "ptx", "cubin"} <= set(meta["stages"])
    assert meta["binary"]["sha256"] and (folder / "scale_kernel.cubin").read_bytes() == kernel.asm["cubin"]
    assert _records(folder) == [{"grid": [8, 1, 1], "args": _records(folder)[0]["args"], "purpose": "program",
                                 "count": 2}]
    assert "1 recorded from the launched binary" in cap.summary()
    assert launches.load(str(folder)).recompile("hip:gfx942").binary


def test_autotuner_benchmark_launches_are_told_apart_from_the_program(tmp_path):
    """triton.autotune times each config (launches inside Autotuner._bench: autotune), then runs
    the best (program); the program's later launches reuse the choice. A folder that only ever
    ran under the autotuner is picked from its autotune launches, and says so."""
    x, out = FakeTensor((4096,)), FakeTensor((4096,))
    grid = lambda meta: (triton.cdiv(4096, meta["BLOCK"]),)   # noqa: E731
    with fake_gpu() as gpu, Capture(tmp_path / "run") as cap:
        tuned_kernel[grid](x, out, 4096, 2.0)
        tuned_kernel[grid](x, out, 4096, 2.0)
    assert len(gpu.launches) == 4             # two configs timed once each, two program launches
    folders = {_records(f)[0]["args"]["BLOCK"]["value"]: f for f in _folders(tmp_path / "run", "tuned_kernel")}
    assert sorted(folders) == [128, 256]
    # equal times: the autotuner keeps the first config
    assert {r["purpose"]: r["count"] for r in _records(folders[128])} == {"autotune": 1, "program": 2}
    assert {r["purpose"]: r["count"] for r in _records(folders[256])} == {"autotune": 1}
    assert "(4 in all: 1 autotune... " not in cap.summary() and "2 autotune, 2 program" in cap.summary()
    chosen = launches.load(str(folders[128]))
    assert chosen.purpose == "program" and chosen.picked.startswith("the hottest of the program's launches")
    candidate = launches.load(str(folders[256]))
    assert candidate.purpose == "autotune" and "never ran as the program's own work" in candidate.picked


def test_launches_inside_a_benchmark_are_benchmarks(tmp_path):
    """A launch under triton.testing's do_bench is a benchmark (its frames are what counts: a
    do_bench compiled under that file name stands in for Triton's, which needs a device)."""
    scope = {}
    exec(compile("def do_bench(fn):\n    fn()\n", "/site-packages/triton/testing.py", "exec"), scope)
    x, out = FakeTensor((4096,)), FakeTensor((4096,))
    with fake_gpu(), Capture(tmp_path / "run"):
        scale_kernel[(4,)](x, out, 4096, 2.0, BLOCK=1024)
        scope["do_bench"](lambda: scale_kernel[(4,)](x, out, 4096, 2.0, BLOCK=1024))
    (folder,) = _folders(tmp_path / "run", "scale_kernel")
    assert sorted((r["purpose"], r["count"]) for r in _records(folder)) == [("benchmark", 1), ("program", 1)]


@pytest.mark.parametrize("frames, purpose", [
    ([("/app/model.py", "forward")], "program"),
    ([("/x/triton/testing.py", "do_bench"), ("/app/bench.py", "main")], "benchmark"),
    # an autotuner times its configs with do_bench: autotune, whichever frame is innermost
    ([("/x/triton/testing.py", "do_bench"), ("/x/triton/runtime/autotuner.py", "_bench")], "autotune"),
    ([("/x/triton/runtime/autotuner.py", "run"), ("/app/model.py", "forward")], "program"),
    ([("/x/torch/_inductor/runtime/benchmarking.py", "benchmark_gpu")], "autotune"),
    ([("/x/torch/_inductor/runtime/triton_heuristics.py", "run")], "program"),
    ([("/x/torch/_inductor/runtime/triton_heuristics.py", "benchmark_all_configs")], "autotune"),
    ([("C:\\x\\torch\\_inductor\\select_algorithm.py", "autotune")], "autotune"),
    # the scheduler's first, untimed call of a fused candidate (kernel triton_) while it compiles
    ([("/x/torch/_inductor/codegen/triton.py", "benchmark_codegened_module"),
      ("/x/torch/_inductor/scheduler.py", "speedup_by_fusion")], "autotune"),
    ([("/x/torch/_inductor/codegen/simd.py", "benchmark_fused_nodes")], "autotune"),
    ([("/x/torch/_inductor/codegen/triton.py", "codegen_kernel")], "program"),
    ([("/x/torch/_inductor/runtime/triton_heuristics.py", "bench")], "autotune"),
    ([("/x/torch/_inductor/runtime/coordinate_descent_tuner.py", "autotune")], "autotune"),
    ([("/x/torch/_inductor/autotune_process.py", "run")], "autotune"),
    ([("/x/torch/_inductor/fx_passes/pad_mm.py", "_should_pad")], "autotune"),   # a window entry point too
    ([("/x/torch/_inductor/fx_passes/pad_mm.py", "pad_mm_replace")], "program"),
])
def test_purpose_of_a_launch_from_its_frames(frames, purpose):
    assert launch_records.purpose_of_frames(frames) == purpose


def test_a_launch_hook_someone_replaced_by_a_function_is_kept(tmp_path):
    """tritonparse sets ``knobs.runtime.launch_enter_hook`` to its own function: both see every
    launch during the capture, and the function is put back after."""
    chain = knobs.runtime.launch_enter_hook
    seen = []

    def theirs(metadata):
        seen.append(metadata.get()["name"])
    knobs.runtime.launch_enter_hook = theirs
    try:
        with fake_gpu(), Capture(tmp_path / "run"):
            scale_kernel[(4,)](FakeTensor((4096,)), FakeTensor((4096,)), 4096, 2.0, BLOCK=1024)
        assert knobs.runtime.launch_enter_hook is theirs
    finally:
        knobs.runtime.launch_enter_hook = chain
    assert seen == ["scale_kernel"]
    (folder,) = _folders(tmp_path / "run", "scale_kernel")
    assert _records(folder)[0]["count"] == 1


def test_a_recording_problem_never_stops_the_launch(tmp_path):
    class Odd(FakeTensor):
        def stride(self):
            raise RuntimeError("no strides here")
    with fake_gpu() as gpu, Capture(tmp_path / "run") as cap:
        scale_kernel[(4,)](Odd((4096,)), FakeTensor((4096,)), 4096, 2.0, BLOCK=1024)
    assert len(gpu.launches) == 1
    assert "1 launch(es) not recorded: scale_kernel: RuntimeError: no strides here" in cap.summary()


def test_saved_tensors_are_their_contents_before_the_launch(tmp_path):
    """--save-tensors: a strided view with a storage offset is saved as the span it covers, as it
    was before the kernel ran, and rebuilt with the same strides and values; a tensor over the
    limit is noted in the record, not saved."""
    torch = pytest.importorskip("torch")
    base = torch.arange(80, dtype=torch.float32)
    x = base[8:72:2]                                   # stride 2, storage offset 8
    big = torch.zeros(32 * 1024)                       # 128 KiB: over a 64 KiB limit
    expected = x.clone()
    with fake_gpu() as gpu, Capture(tmp_path / "run", save_tensors=64 * 1024):
        gpu.on_launch = lambda args: base.fill_(-1)    # what the kernel does must not show
        scale_kernel[(1,)](x, big, 32, 2.0, BLOCK=32)
    (folder,) = _folders(tmp_path / "run", "scale_kernel")
    rec = _records(folder)[0]
    assert rec["args"]["out_ptr"]["saved"].startswith("not saved: 131072 bytes")
    assert rec["args"]["x_ptr"]["saved"] == "tensors/0/x_ptr.pt"
    got = launches.load(str(folder)).make_inputs(device="cpu")
    assert got["x_ptr"].stride() == (2,) and torch.equal(got["x_ptr"], expected)


def test_watching_launches_names_a_changed_seam(monkeypatch):
    def launch_metadata(self, grid, *args):
        return None
    monkeypatch.setattr(CompiledKernel, "launch_metadata", launch_metadata)
    with pytest.raises(compat.SeamError, match=r"CompiledKernel.launch_metadata.*\(self, grid, args\)"):
        with compat.watching_launches(lambda *a: None, lambda t: None, lambda t: None):
            pass


# ------------------------------------------------------------------------------------------------
# the profile: a Proton scope around each launch, GPU time per record

def _node(name, metrics=None, children=()):
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics or {}, "children": list(children)}


def _kernel(name, t, n):
    return _node(name, {"time (ns)": t, "count": n, "device_id": "0", "device_type": "CUDA"})


def test_each_launch_runs_in_a_proton_scope_named_after_its_record(tmp_path, monkeypatch):
    """With a profile, the enter hook opens the scope ``irlab FOLDER#N`` and the exit hook closes
    it, so Proton files each kernel's GPU time under the record it belongs to."""
    import triton.profiler as proton
    events = []
    monkeypatch.setattr(proton, "enter_scope", lambda name, **kw: events.append(("enter", name)))
    monkeypatch.setattr(proton, "exit_scope", lambda *a, **kw: events.append(("exit",)))
    with fake_gpu(), Capture(tmp_path / "run") as cap:
        cap._session = object()           # as if Proton had started (it needs a GPU)
        scale_kernel[(4,)](FakeTensor((4096,)), FakeTensor((4096,)), 4096, 2.0, BLOCK=1024)
        scale_kernel[(2,)](FakeTensor((2048,)), FakeTensor((2048,)), 2048, 2.0, BLOCK=1024)
        cap._session = None
    folder = _folders(tmp_path / "run", "scale_kernel")[0].name
    assert events == [("enter", f"{SCOPE_PREFIX}{folder}#0"), ("exit",), ("enter", f"{SCOPE_PREFIX}{folder}#1"),
                      ("exit",)]


def test_gpu_time_per_record_from_proton_tree(tmp_path):
    tree = [_node("ROOT", {"count": 0, "time (ns)": 0}, [
        _node(f"{SCOPE_PREFIX}k.cuda-90.w4s3.abc#0", {}, [_kernel("k", 3_000, 3)]),
        _node(f"{SCOPE_PREFIX}k.cuda-90.w4s3.abc#1", {}, [_kernel("k", 9_000, 1)]),
        _node(f"{SCOPE_PREFIX}k.cuda-90.w4s3.abc#more-autotune", {}, [_kernel("k", 500, 5)]),
        _kernel("sm90_xmma_gemm_f16f16", 6_000, 2),
    ]), {}]
    s = profile_summary(tree)
    assert s["total_ns"] == 18_500 and s["captured_ns"] == 12_500
    assert s["captured"]["k.cuda-90.w4s3.abc"]["records"] == {"0": {"time_ns": 3000, "count": 3},
                                                            "1": {"time_ns": 9000, "count": 1},
                                                            "more-autotune": {"time_ns": 500, "count": 5}}
    assert s["other"] == {"sm90_xmma_gemm_f16f16": {"time_ns": 6000, "count": 2}}
    with pytest.raises(ValueError, match="not a Proton hatchet tree"):
        profile_summary({"frame": 1})


def test_the_profile_is_filed_under_each_record_and_keeps_each_purpose(tmp_path):
    """After the program: Proton's tree read back, each record gets its GPU time, and profile.json
    says each record's purpose (so a trimmed run, its autotuning candidates gone, still tells the
    program's time from the autotuner's)."""
    import triton.profiler as proton
    with fake_gpu(), Capture(tmp_path / "run") as cap:
        tuned_kernel[lambda meta: (triton.cdiv(4096, meta["BLOCK"]),)](FakeTensor((4096,)), FakeTensor((4096,)), 4096,
                                                                       2.0)
    folders = {_records(f)[0]["args"]["BLOCK"]["value"]: f for f in _folders(tmp_path / "run", "tuned_kernel")}
    chosen, other = folders[128], folders[256]
    program_n = next(i for i, r in enumerate(_records(chosen)) if r["purpose"] == "program")
    tree = [_node("ROOT", {}, [
        _node(f"{SCOPE_PREFIX}{chosen.name}#{program_n}", {}, [_kernel("tuned_kernel", 7_000, 1)]),
        _node(f"{SCOPE_PREFIX}{chosen.name}#{1 - program_n}", {}, [_kernel("tuned_kernel", 3_000, 1)]),
        _node(f"{SCOPE_PREFIX}{other.name}#0", {}, [_kernel("tuned_kernel", 4_000, 1)]),
    ]), {}]
    (tmp_path / "run" / "profile.hatchet").write_text(json.dumps(tree))
    cap._read_profile()
    for folder in cap.launched:
        cap._write_launches(folder)
    profile = json.loads((tmp_path / "run" / "profile.json").read_text())
    recs = profile["captured"][chosen.name]["records"]
    assert recs[str(program_n)] == {"time_ns": 7000, "count": 1, "purpose": "program"}
    assert recs[str(1 - program_n)]["purpose"] == "autotune"
    assert profile["captured"][other.name]["records"]["0"]["purpose"] == "autotune"
    assert _records(chosen)[program_n]["gpu_ns"] == 7000
    assert "GPU time 0.014 ms, 100.0% of it in captured kernels" in cap.summary()
