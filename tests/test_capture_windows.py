"""Benchmarking windows in a profiled capture: every kernel an autotuner or benchmark helper
launches -- Triton's, or the L2-flushing buffer fill before each timed run, a cuBLAS candidate --
is filed under autotuning/benchmarking, never under the program's GPU time. Proton is faked
(its scopes recorded, its tree written by hand in the format it writes), the GPU is the CPU
stand-in of tests/fakes/fake_driver.py."""
from __future__ import annotations

import importlib
import json
import sys

import pytest
import triton
from fakes.fake_driver import FakeTensor, fake_gpu
from fakes.fake_program import tuned_kernel   # autotuned over BLOCK 128 and 256
from fakes.proton_scopes import record_scopes
from triton import knobs
from triton.runtime.autotuner import Autotuner

from irlab.program import records as launch_records
from irlab.bridge import compat
from irlab.program.capture import SCOPE_PREFIX, WINDOW_PREFIX, Capture, profile_summary
from irlab.program.records import BenchmarkEntry
from irlab.program.ranking import rank, render

FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_"


@pytest.fixture
def proton_events(monkeypatch, tmp_path):
    """Proton as a recorder of scopes: start/finalize do nothing (there is no GPU)."""
    events = record_scopes(monkeypatch)
    tuned_kernel.fn.device_caches.clear()
    tuned_kernel.cache.clear()
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "triton-cache")
        yield events


def test_the_autotuners_timing_runs_inside_an_autotune_window(tmp_path, proton_events):
    """triton.autotune times each candidate inside ``_bench``: the window opens before the
    candidate's launch (and whatever else the timing launches) and closes after it; the program's
    own launch of the chosen config is outside any window. Afterwards ``_bench`` is Triton's again."""
    original = Autotuner.__dict__["_bench"]
    with fake_gpu(), Capture(tmp_path / "run", profile=True) as cap:
        tuned_kernel[lambda m: (triton.cdiv(2048, m["BLOCK"]),)](FakeTensor((2048,)), FakeTensor((2048,)), 2048, 1.0)
        assert Autotuner.__dict__["_bench"] is not original
    assert "triton.runtime.autotuner.Autotuner._bench" in cap.marked
    assert Autotuner.__dict__["_bench"] is original
    names = [e[1] if e[0] == "enter" else ")" for e in proton_events]
    window = f"{WINDOW_PREFIX}autotune"
    assert names.count(window) == 2 and names.count(")") == len([n for n in names if n != ")"])
    # each window holds exactly one candidate's launch scope; the last launch (the program's) is alone
    for i, name in enumerate(names):
        if name == window:
            assert names[i + 1].startswith(SCOPE_PREFIX) and names[i + 2:i + 4] == [")", ")"]
    assert names[-2].startswith(SCOPE_PREFIX) and window not in names[-3:]
    # Proton's tree as it would come back: the fills inside the windows are autotuning's
    tree = [_node("ROOT", {}, [_node(window, {}, [_kernel(FILL, 2_000_000, 2)]), _kernel("other_kernel", 1_000, 1)]),
            {}]
    (tmp_path / "run" / "profile.hatchet").write_text(json.dumps(tree))
    cap._read_profile()
    profile = json.loads((tmp_path / "run" / "profile.json").read_text())
    assert profile["windows_marked"] and "triton.runtime.autotuner.Autotuner._bench" in profile["windows_entry_points"]
    assert profile["windows"] == {"autotune": {FILL: {"time_ns": 2_000_000, "count": 2}}}
    assert "2.000 ms of other kernels ran inside autotuning and benchmarking" in cap.summary()


def test_entry_points_are_marked_also_when_imported_later_and_restored(tmp_path, monkeypatch):
    (tmp_path / "irlab_fake_bench.py").write_text(
        "class Bench:\n"
        "    def benchmark_gpu(self, fn):\n        return fn()\n"
        "    @staticmethod\n    def benchmark_cpu(fn):\n        return fn()\n"
        "    def other(self):\n        return 'not marked'\n"
        "def do_bench(fn):\n    return fn()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(launch_records, "BENCHMARK_ENTRY_POINTS", (
        BenchmarkEntry("irlab_fake_bench", "*.benchmark*", "autotune"),
        BenchmarkEntry("irlab_fake_bench", "do_bench", "benchmark"),
        BenchmarkEntry("irlab_fake_bench", "absent", "benchmark"),
        BenchmarkEntry("irlab_fake_bench", "Bench.other", "autotune", window=False)))   # a stack frame only
    monkeypatch.delitem(sys.modules, "irlab_fake_bench", raising=False)
    calls = []
    with compat.marking_benchmarks(launch_records.window_entries(), lambda purpose: calls.append(purpose), lambda: calls.append("exit")) as marked:
        import irlab_fake_bench as mod
        assert mod.Bench().benchmark_gpu(lambda: 1) == 1 and mod.Bench.benchmark_cpu(lambda: 2) == 2
        assert mod.Bench().other() == "not marked"

        def boom():
            raise RuntimeError("candidate failed")
        with pytest.raises(RuntimeError):
            mod.do_bench(boom)
    assert calls == ["autotune", "exit", "autotune", "exit", "benchmark", "exit"]
    assert sorted(marked) == ["irlab_fake_bench.Bench.benchmark_cpu", "irlab_fake_bench.Bench.benchmark_gpu",
                              "irlab_fake_bench.do_bench"]
    calls.clear()
    mod.Bench().benchmark_gpu(lambda: 1)
    mod.do_bench(lambda: 1)
    assert calls == [] and not any(type(f).__name__ == "_MarkOnImport" for f in sys.meta_path)
    # the same table tells a launch's purpose from its stack frames, window or not
    here = str(tmp_path / "irlab_fake_bench.py")
    assert [launch_records.purpose_of_frames([(here, f)]) for f in ("benchmark_gpu", "do_bench", "other", "helper")] \
        == ["autotune", "benchmark", "autotune", "program"]


def _frame_function(entry) -> str:
    """A function name a stack frame of ``entry`` can have: its pattern's last part, wildcards filled."""
    return entry.function.replace("*", "") or "any_function"


@pytest.mark.parametrize("entry", launch_records.BENCHMARK_ENTRY_POINTS, ids=lambda e: f"{e.module}:{e.pattern}")
def test_every_benchmarking_entry_point_is_a_frame_purpose_and_a_window(entry):
    """One table says both: each entry's frames get its purpose, and each window entry whose
    module and attribute the installed Triton/torch has is wrapped by capture."""
    assert launch_records.purpose_of_frames([(f"/site-packages/{entry.file_ending}", _frame_function(entry))]) \
        == entry.purpose
    if not entry.window:
        return
    try:
        module = importlib.import_module(entry.module)
    except ImportError:
        pytest.skip(f"{entry.module} is not installed")
    names = [f"{entry.module}.{'' if owner is module else owner.__qualname__ + '.'}{name}"
             for owner, name in compat._entry_points(module, entry.pattern)]
    if entry.module.startswith("triton."):
        assert names, f"{entry.pattern} is not in {entry.module}"
    with compat.marking_benchmarks(launch_records.window_entries(), lambda purpose: None, lambda: None) as marked:
        pass
    assert set(names) <= set(marked)


def _node(name, metrics=None, children=()):
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics or {}, "children": list(children)}


def _kernel(name, t, n):
    return _node(name, {"time (ns)": t, "count": n, "device_id": "0", "device_type": "CUDA"})


def _run(tmp_path, profile):
    run = tmp_path / "run"
    run.mkdir()
    (run / "index.json").write_text("[]")
    (run / "profile.json").write_text(json.dumps(profile))
    return run


def test_kernels_inside_windows_are_not_the_programs(tmp_path):
    """The profile of a max-autotune program in small: a candidate GEMM timed with an L2 flush
    before it (a fill, a Triton launch scope) inside an autotune window, a do_bench inside the
    autotune window (still autotuning), the program's own Triton kernel and cuBLAS GEMM."""
    folder = "k.cuda-90.w4s3.abc"
    tree = [_node("ROOT", {}, [
        _node(f"{WINDOW_PREFIX}autotune", {}, [
            _kernel(FILL, 50_000_000, 100),
            _node(f"{SCOPE_PREFIX}{folder}#1", {}, [_kernel("k", 4_000_000, 100)]),
            _node(f"{WINDOW_PREFIX}benchmark", {}, [_kernel(FILL, 10_000_000, 20),
                                                    _kernel("nvjet_gemm", 2_000_000, 20)]),
        ]),
        _node(f"{WINDOW_PREFIX}benchmark", {}, [_kernel("copy_kernel", 1_000_000, 1)]),
        _node(f"{SCOPE_PREFIX}{folder}#0", {}, [_kernel("k", 3_000_000, 3)]),
        _kernel("nvjet_gemm", 1_000_000, 3),
    ]), {}]
    s = profile_summary(tree)
    assert s["total_ns"] == 71_000_000 and s["captured_ns"] == 7_000_000 and s["windows_marked"]
    assert s["windows"] == {"autotune": {FILL: {"time_ns": 60_000_000, "count": 120},
                                         "nvjet_gemm": {"time_ns": 2_000_000, "count": 20}},
                            "benchmark": {"copy_kernel": {"time_ns": 1_000_000, "count": 1}}}
    assert s["other"] == {"nvjet_gemm": {"time_ns": 1_000_000, "count": 3}}
    s["captured"][folder]["records"]["0"]["purpose"] = "program"
    s["captured"][folder]["records"]["1"]["purpose"] = "autotune"
    r = rank(_run(tmp_path, s))
    assert r.program_ns == 4_000_000 and r.window_ns == 63_000_000 and r.attributable
    out = render(r)
    assert out.splitlines()[0].endswith("the program's: 4.000 ms; shares below are of the program's")
    row = next(line for line in out.splitlines() if line[:3].strip() == "1")
    assert row.split()[1:3] == ["75.0%", "3.000"] and row.split()[5] == "100.0%"
    assert f"other kernels launched inside autotuning and benchmarking took 63.000 ms" in out
    assert f"{FILL} 60.000 ms in 120" in out and "recorded without marking" not in out


def test_a_profile_without_windows_says_its_total_is_not_the_programs_alone(tmp_path):
    """A profile recorded before windows were marked: the fills are in ``other``, counted as the
    program's. top says so, and small shares are not printed as 0.0%."""
    folder = "k.cuda-90.w4s3.abc"
    tree = [_node("ROOT", {}, [
        _node(f"{SCOPE_PREFIX}{folder}#0", {}, [_kernel("k", 30_000, 3)]),
        _node(f"{SCOPE_PREFIX}{folder}#1", {}, [_kernel("k", 4_000_000, 100)]),
        _kernel(FILL, 500_000_000, 1000),
    ]), {}]
    s = profile_summary(tree, windows=False)
    for n, purpose in (("0", "program"), ("1", "autotune")):
        s["captured"][folder]["records"][n]["purpose"] = purpose
    r = rank(_run(tmp_path, s))
    assert not r.attributable and r.program_ns == 500_030_000
    out = render(r)
    assert "(with autotuning's other kernels: not told apart in this profile)" in out.splitlines()[0]
    assert "recorded without marking autotuning and benchmarking windows" in out
    row = next(line for line in out.splitlines() if line[:3].strip() == "1")
    assert row.split()[1] == "0.006%" and row.split()[5] == "100.0%"


def test_inductor_s_compile_time_benchmarking_is_marked():
    # the scheduler times fused against unfused kernels and max-autotune times its candidates while
    # compiling: their launches (kernels named ``triton_``) are autotuning's, never the program's
    pytest.importorskip("torch._inductor.scheduler")
    import torch._inductor.codegen.triton  # noqa: F401
    import torch._inductor.select_algorithm  # noqa: F401
    with compat.marking_benchmarks(launch_records.window_entries(), lambda purpose: None, lambda: None) as marked:
        pass
    for name in ("torch._inductor.scheduler.Scheduler.speedup_by_fusion",
                 "torch._inductor.scheduler.Scheduler.benchmark_codegened_module",
                 "torch._inductor.codegen.triton.TritonScheduling.benchmark_codegened_module",
                 "torch._inductor.select_algorithm.TritonTemplateCaller.benchmark"):
        assert name in marked
