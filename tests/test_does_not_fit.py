"""A config this GPU cannot launch "does not fit"; it is never "wrong". On a device with little
shared memory (Triton's driver faked: tests/fakes/fake_driver.py, tests/fakes/fake_small_gpu.py):
Triton's own refusal is read as such, the GPU runner prunes before any input is made, verify counts
only real mismatches and exits by them, and the A/B worker records what did not fit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from fakes.fake_driver import fake_gpu
from irlab.timing import Plan, collect, run_sweep
from irlab.timing.fit import DOES_NOT_FIT, DoesNotFit, check_fits, device_limits, does_not_fit
from irlab.timing.output import ratio_text
from irlab.timing.plan import Cell, Entry

ROOT = Path(__file__).resolve().parent.parent
FAKE = str(Path(__file__).parent / "fakes" / "fake_runner.py") + ":FakeRunner"


@pytest.fixture(scope="module")
def wide_gemm():
    """gemm_fp16's widest tile, compiled for Hopper on the CPU: what it needs of shared memory."""
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    return compile_kernel(get("gemm_fp16"), "cuda:90", config="128x256x32-w8")


def test_triton_refusing_a_binary_for_shared_memory_is_does_not_fit(wide_gemm):
    shared = wide_gemm.metadata["shared"]
    with fake_gpu(max_shared_mem=shared - 1):
        limits = device_limits()
        with pytest.raises(Exception) as raised:    # Triton's own check, when it loads the binary
            wide_gemm.compiled[(1, 1, 1)]
    assert type(raised.value).__name__ == "OutOfResources"
    want = f"does not fit this GPU (shared memory {shared:,} > {shared - 1:,} B)"
    assert str(does_not_fit(raised.value)) == want
    assert str(check_fits(wide_gemm.metadata, limits)) == want     # and the metadata says so before any launch
    with fake_gpu():   # an H100's 232,448 B
        assert check_fits(wide_gemm.metadata, device_limits()) is None


def test_only_a_refusal_for_resources_is_does_not_fit():
    assert str(does_not_fit(RuntimeError("Triton Error [CUDA]: too many resources requested for launch"))) == \
        "does not fit this GPU (the driver refused the launch: Triton Error [CUDA]: too many resources requested " \
        "for launch)"
    assert does_not_fit(RuntimeError("CUDA error: an illegal memory access was encountered")) is None
    assert does_not_fit(ValueError("wrong argument")) is None
    wrapped = RuntimeError("check failed")
    wrapped.__cause__ = DoesNotFit("threads per block", 2048, 1024)
    assert str(does_not_fit(wrapped)) == "does not fit this GPU (threads per block 2,048 > 1,024)"
    assert str(check_fits({"num_warps": 64, "warp_size": 32, "shared": 0}, {"max_shared_mem": 1 << 20})) == \
        "does not fit this GPU (threads per block 2,048 > 1,024)"


def test_the_gpu_runner_prunes_after_the_compile_before_any_input_is_made(monkeypatch):
    from fakes.fake_cuda import FakeCuda, FakeTorch
    from irlab.passkit.variant import Variant
    import irlab.timing.gpu as gpu
    made = []
    monkeypatch.setattr(gpu, "compile_kernel", lambda *a, **kw: SimpleNamespace(
        metadata={"shared": 300000, "num_warps": 8, "warp_size": 32}))
    monkeypatch.setattr(gpu.GpuRunner, "_workload", lambda *a, **kw: made.append(a))
    with fake_gpu(max_shared_mem=232448):
        runner = gpu.GpuRunner(torch=FakeTorch(FakeCuda()))
        cell = Cell("t", "gemm_fp16", {"M": 512, "N": 512, "K": 512}, "128x256x32-w8", [])
        with pytest.raises(DoesNotFit, match=r"shared memory 300,000 > 232,448 B"):
            runner.prepare(cell, Entry("baseline", variant_spec=Variant.baseline().to_json()))
    assert made == []


def _verify(tmp_path, fake: dict, passes: list[str]):
    env = {**os.environ, "IRLAB_VERIFY_RUNNER": "tests.fakes.fake_small_gpu:SmallGpuRunner",
           "IRLAB_VERIFY_TARGET": "cuda:90", "IRLAB_FAKE": json.dumps(fake),
           "IRLAB_PASS_PATH": str(ROOT / "tests" / "passes_for_tests")}
    argv = ["verify", "--out", str(tmp_path), "--kernel", "gemm_fp16", "--configs", "all", "--jobs", "2"]
    for p in passes:
        argv += ["--pass", p]
    r = subprocess.run([sys.executable, "-m", "irlab", *argv], capture_output=True, text=True, cwd=ROOT, env=env,
                       timeout=600)
    rows = json.loads((tmp_path / "results.json").read_text())["rows"] if (tmp_path / "results.json").exists() else []
    return r, rows


SMALL_GPU = {"max_shared_mem": 101376,
             "shared": {"128x256x32-w8": 360472, "128x128x64-w8": 98304, "*": 32768},
             "extra_shared": {"optimize-epilogue": 65536},
             "refuse_launch": {"64x64x32-w4": ["baseline", "identity"]}}


def test_verify_tells_does_not_fit_from_wrong(tmp_path):
    pytest.importorskip("torch")
    r, rows = _verify(tmp_path, SMALL_GPU, ["optimize-epilogue", "identity", "cancel-transposes"])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]    # nothing was wrong: exit 0
    assert "Traceback" not in r.stderr
    by = {}
    for x in rows:
        by.setdefault((x["config"], x["variant"]), set()).add(x["verdict"])
    assert not any("MISMATCH" in v for v in by.values()), by
    # the widest tile's baseline does not fit: said once per group, its variants not compared
    assert by[("128x256x32-w8", "baseline")] == {DOES_NOT_FIT}
    assert by[("128x256x32-w8", "optimize-epilogue")] == by[("128x256x32-w8", "identity")] == {"no baseline"}
    base = next(x for x in rows if x["config"] == "128x256x32-w8" and x["variant"] == "baseline")
    assert base["reason"] == "does not fit this GPU (shared memory 360,472 > 101,376 B)"
    # a variant that needs more than the device has where its baseline fits: a cost, not a miscompile
    assert by[("128x128x64-w8", "optimize-epilogue")] == {DOES_NOT_FIT}
    assert by[("128x128x64-w8", "identity")] == {"identical"}
    # the launch refused for the baseline and the same for a variant: not the pass's doing; one that ran: not compared
    assert by[("64x64x32-w4", "baseline")] == {DOES_NOT_FIT}
    assert by[("64x64x32-w4", "identity")] == {DOES_NOT_FIT} and by[("64x64x32-w4", "cancel-transposes")] == \
        {"no baseline"}
    assert all("so does the baseline" in x["reason"] for x in rows
               if x["config"] == "64x64x32-w4" and x["variant"] == "identity")
    readme = (tmp_path / "README.md").read_text()
    assert "0 MISMATCH." in readme and "6 group(s) whose baseline does not fit this GPU" in readme, readme[:2000]
    assert "3 variant run(s) that do not fit this GPU where the baseline does" in readme
    assert "| gemm_fp16 | optimize-epilogue | 3 | 0 | 0 | 0 | 0 | 3 | 6 | 0 |" in readme


def test_verify_exits_by_real_mismatches_only(tmp_path):
    pytest.importorskip("torch")
    r, rows = _verify(tmp_path, {**SMALL_GPU, "wrong": ["square-output"]}, ["square-output"])
    assert r.returncode == 1, r.stderr[-3000:]
    bad = [x for x in rows if x["verdict"] == "MISMATCH"]
    assert bad and {x["config"] for x in bad} == {"128x128x64-w8", "128x128x32-w4"}   # where the baseline ran
    assert f"{len(bad)} MISMATCH." in (tmp_path / "README.md").read_text()


def _ab(tmp_path, monkeypatch, fake: dict):
    monkeypatch.setenv("IRLAB_FAKE", json.dumps(fake))
    entries = [Entry("baseline", variant="baseline"), Entry("v1", variant="v1"), Entry("v2", variant="v2")]
    cells = [Cell("t", "gemm_fp16", {"M": 64, "N": 64, "K": 64}, "c", entries),
             Cell("t", "gemm_fp16", {"M": 128, "N": 128, "K": 128}, "c", entries)]
    out = run_sweep(Plan(cells, "graph", rounds=5, launches=5), tmp_path / "r.jsonl", runner=FAKE, log=lambda m: None)
    return collect(out)["cells"]


def test_the_a_b_worker_records_what_does_not_fit_and_times_the_rest(tmp_path, monkeypatch):
    first = "t|gemm_fp16|64x64x64|c"
    res = _ab(tmp_path, monkeypatch, {"does_not_fit": {"v1": "prepare", f"{first}|v2": "check"}})
    for key, c in res.items():
        assert c["status"] == "done"
        e = c["entries"]
        assert e["v1"]["status"] == DOES_NOT_FIT and e["baseline"]["status"] == "ok"
        assert e["v1"]["reason"] == "does not fit this GPU (shared memory 360,472 > 232,448 B)"
        assert ratio_text(e["v1"]) == "not timed: does not fit this GPU (shared memory 360,472 > 232,448 B)"
    assert res[first]["entries"]["v2"]["status"] == DOES_NOT_FIT      # refused by Triton at launch
    assert res[first]["entries"]["v2"]["reason"] == "does not fit this GPU (shared memory 262,144 > 232,448 B)"


def test_a_cell_whose_baseline_does_not_fit_says_so(tmp_path, monkeypatch):
    res = _ab(tmp_path, monkeypatch, {"does_not_fit": {"baseline": "check"}})
    for c in res.values():
        assert c["status"] == "failed" and c["entries"]["baseline"]["status"] == DOES_NOT_FIT
        assert c["reason"] == "the baseline (baseline) does not fit this GPU (shared memory 262,144 > 232,448 B); " \
                              "nothing was timed"


def test_without_an_active_driver_nothing_is_pruned_before_launch():
    """A runner on a stand-in device (no GPU, no Triton driver): the limits are unknown, nothing is
    pruned ahead, and Triton's own check at launch is what remains (read by does_not_fit)."""
    from triton.runtime.driver import driver
    try:
        driver.active
        pytest.skip("Triton has an active driver here")
    except RuntimeError:
        pass
    assert device_limits() is None and check_fits({"shared": 1 << 30}, None) is None
