"""irlab verify: every rewriting pass against its baseline on the GPU. Without a GPU: the plan
(shapes with remainders, every dtype, the option sets that make passes act) and the one-line
refusal. With one (``-m gpu``): a wrong pass is caught as a MISMATCH, a pass that faults costs
one variant and not the run, and the built-in passes match their baselines."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.cli import main
from irlab.timing import differential as d
from tests.conftest import gpu_available

ROOT = Path(__file__).resolve().parent.parent
DTYPES = str(ROOT / "tests" / "kernels" / "gemm_dtypes.py")
TEST_PASSES = str(Path(__file__).parent / "passes_for_tests")


def test_the_plan_has_remainders_in_every_dimension_a_small_n_and_every_dtype():
    groups = d.plan([DTYPES], ["optimize-epilogue"], None)
    shapes = {tuple(sorted((k, v) for k, v in g.shape.items() if k != "dtype")) for g in groups}
    assert len(shapes) == 3
    assert any(all(v % 16 for k, v in s) for s in shapes)         # a remainder in M, N and K at once
    assert any(dict(s)["N"] == 8 for s in shapes)
    assert {g.shape["dtype"] for g in groups} == {"fp16", "bf16", "fp32", "i8", "fp8e4nv"}
    assert all(g.variants[0] == ("baseline", "baseline") for g in groups)


def test_every_rewriting_pass_is_planned_with_options_that_make_it_act():
    passes = d.rewriting_passes()
    assert "identity" not in passes and "lds-transposes" not in passes
    assert {"optimize-epilogue", "descriptor-loads", "pin-order", "loop-attributes"} <= set(passes)
    labels = [label for label, _ in d.variant_refs(passes)]
    assert "pin-order{order=global_load:1,local_load}" in labels and "loop-attributes{warp_specialize=true}" in labels


def test_list_needs_no_gpu_and_a_run_without_one_is_refused_in_one_line(capsys):
    assert main(["verify", "--list", "--kernel", "gemm_fp16", "--pass", "optimize-epilogue"]) == 0
    out = capsys.readouterr().out
    assert "gemm_fp16|128x128x64-w8|M=512,N=512,K=512: baseline, optimize-epilogue" in out
    if gpu_available():
        return
    assert main(["verify", "--kernel", "gemm_fp16"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "CUDA GPU" in err[0] and "irlab[gpu]" in err[0]


def test_an_unknown_dtype_names_the_ones_the_kernel_takes():
    from irlab.kernels.spec import KernelError
    from irlab.kernels import get
    with pytest.raises(KernelError, match="takes fp16, bf16, fp32, i8, fp8e4nv"):
        get(DTYPES).shape({"dtype": "fp64"})


def _verify(tmp_path, *args, test_passes=True):
    env = {**os.environ, "IRLAB_PASS_PATH": TEST_PASSES} if test_passes else dict(os.environ)
    return subprocess.run([sys.executable, "-m", "irlab", "verify", "--out", str(tmp_path), *args],
                          capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.gpu
def test_a_wrong_pass_is_a_mismatch_and_a_faulting_one_costs_one_variant(tmp_path):
    r = _verify(tmp_path, "--kernel", "gemm_fp16", "--pass", "square-output", "--pass", "wreck-addresses",
                "--pass", "optimize-epilogue")
    assert r.returncode == 1, r.stderr[-2000:]
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    verdict = {(json.dumps(x["shape"]), x["variant"]): x["verdict"] for x in rows}
    shapes = {json.dumps(x["shape"]) for x in rows}
    assert len(shapes) == 3
    for s in shapes:
        assert verdict[(s, "square-output")] == "MISMATCH"
        assert verdict[(s, "wreck-addresses")] == "MISMATCH"
        assert verdict[(s, "optimize-epilogue")] in ("identical", "same binary")


@pytest.mark.gpu
def test_the_built_in_passes_match_their_baselines_on_every_dtype(tmp_path):
    r = _verify(tmp_path, "--kernel", DTYPES, "--kernel", "tests/kernels/persistent_gemm.py", test_passes=False)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_the_run_survives_a_dying_child_records_every_verdict_and_resumes(tmp_path):
    pytest.importorskip("torch")    # the CPU stand-in computes its outputs with torch
    env = {"IRLAB_VERIFY_RUNNER": "tests.fakes.fake_verify_runner:FakeVerifyRunner",
           "IRLAB_VERIFY_TARGET": "cuda:90"}
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "irlab", "verify", "--out", str(tmp_path), "--kernel", "gemm_fp16", "--jobs", "2",
         "--pass", "square-output", "--pass", "wreck-addresses", "--pass", "optimize-epilogue", *a],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env, "IRLAB_PASS_PATH": TEST_PASSES})
    r = run()
    assert r.returncode == 1, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    got = {}
    for x in rows:
        got.setdefault(x["variant"], set()).add(x["verdict"])
    assert got == {"baseline": {"baseline"}, "square-output": {"MISMATCH"}, "optimize-epilogue": {"same binary"},
                   "wreck-addresses": {"MISMATCH"}}
    died = [x for x in rows if x["variant"] == "wreck-addresses"]
    assert len(died) == 3 and all("SIGABRT" in x["reason"] for x in died)
    assert "| gemm_fp16 | square-output | 0 | 0 | 0 | 0 | 3 | 0 | 0 | 0 |" in (tmp_path / "README.md").read_text()
    assert run().returncode == 2                       # an earlier run's results are never overwritten
    r = run("--resume")                                # nothing left to do: the same verdicts again
    assert r.returncode == 1 and len(json.loads((tmp_path / "results.json").read_text())["rows"]) == len(rows)


# ------------------------------------------------------------------------------------------------
# verify --kernel RUN: a program's captured launches

CAPTURE = ROOT / "tests" / "data" / "captures" / "llama2-h100-triton-gemms"
FAKE = {"IRLAB_VERIFY_RUNNER": "tests.fakes.fake_verify_runner:FakeVerifyRunner", "IRLAB_VERIFY_TARGET": "cuda:90",
        "IRLAB_PASS_PATH": TEST_PASSES}


def test_verify_a_capture_checks_every_pass_on_each_hot_kernel_s_captured_launch(tmp_path):
    """The two hottest kernels of the capture (as irlab top ranks them), every pass on each one's
    captured launch; the stand-in's launch outputs hold a NaN in the same place in every run,
    which is no difference, and square-output's wrong output is the only MISMATCH."""
    pytest.importorskip("torch", reason="the stand-in runner keeps the captured launch's outputs as torch tensors")
    from irlab.program.hot import hot_kernels
    log = tmp_path / "checks.jsonl"
    r = subprocess.run([sys.executable, "-m", "irlab", "verify", "--kernel", str(CAPTURE), "--top", "2",
                        "--pass", "square-output", "--pass", "optimize-epilogue", "--pass", "cancel-transposes",
                        "--out", str(tmp_path / "v")], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, **FAKE, "IRLAB_FAKE_VERIFY": json.dumps({"log": str(log)})})
    assert r.returncode == 1, r.stderr[-3000:]
    assert "Traceback" not in r.stderr and "2 kernel(s): the 2 hottest of 18 kernels" in r.stderr
    hot = [k.ref for k in hot_kernels(CAPTURE.resolve(), top=2).kernels]
    ran = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted({x["kernel"] for x in ran}) == sorted(hot)
    rows = json.loads((tmp_path / "v" / "results.json").read_text())["rows"]
    got = {(x["kernel"], x["variant"]): x["verdict"] for x in rows}
    for ref in hot:
        assert got[(ref, "square-output")] == "MISMATCH"
        assert got[(ref, "cancel-transposes")] == "identical"      # the NaN in the same place: no difference
        assert got[(ref, "optimize-epilogue")] == "same binary"
    readme = (tmp_path / "v" / "README.md").read_text()
    assert "2 MISMATCH" in readme and "verified on its captured arguments only" in readme
    assert "out: relative difference 3 exceeds 1e-05" in readme


def test_verify_list_of_a_capture_needs_no_gpu_and_writes_nothing(tmp_path):
    r = subprocess.run([sys.executable, "-m", "irlab", "verify", "--list", "--kernel", str(CAPTURE), "--top", "1",
                        "--pass", "optimize-epilogue", "--out", str(tmp_path / "v")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "triton_tem_fused_mm_t_view_7" in r.stdout and ": baseline, optimize-epilogue" in r.stdout
    assert not (tmp_path / "v").exists()


BOUNDS_TTIR = """module {
  tt.func public @k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32, %m: i32 {tt.divisibility = 16 : i32},
                    %s: i32, %u: i32, %kdim: i32) {
    %0 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %1 = tt.splat %n : i32 -> tensor<128xi32>
    %2 = arith.cmpi slt, %0, %1 : tensor<128xi32>
    %3 = arith.muli %s, %m : i32
    %c0 = arith.constant 0 : i32
    %c16 = arith.constant 16 : i32
    scf.for %i = %c0 to %kdim step %c16 : i32 {
      scf.yield
    }
    tt.return
  }
}
"""


def _synthetic_capture(tmp_path: Path) -> Path:
    """A capture run of one kernel folder (no profile) whose TTIR is BOUNDS_TTIR."""
    run = tmp_path / "run"
    folder = run / "k.cuda-90.w4s1.0123456789"
    folder.mkdir(parents=True)
    (run / "index.json").write_text("[]")
    (folder / "k.ttir").write_text(BOUNDS_TTIR)
    (folder / "metadata.json").write_text(json.dumps({"kernel": "k", "target": "cuda:90",
                                                      "stages": {"ttir": {"file": "k.ttir"}},
                                                      "triton_metadata": {"num_warps": 4, "num_stages": 1}}))
    args = {"x": {"type": "tensor", "dtype": "torch.float32", "shape": [4096], "stride": [1]},
            **{name: {"type": "int", "value": v} for name, v in (("n", 4096), ("m", 64), ("s", 4096), ("u", 99),
                                                                   ("kdim", 512))}}
    (folder / "launches.jsonl").write_text(json.dumps({"grid": [32, 1, 1], "args": args, "purpose": "program",
                                                       "count": 3}) + "\n")
    return run


def test_only_arguments_that_only_bound_get_a_remainder(tmp_path):
    """n (a mask bound) and kdim (a loop's upper bound) take a smaller odd value; m (specialized as
    a multiple of 16), s (a factor in arithmetic) and u (unused) keep theirs, each with why."""
    from irlab.program.derived import bound_arguments, write_derived
    from irlab.program.launches import load
    launch = load(str(_synthetic_capture(tmp_path) / "k.cuda-90.w4s1.0123456789"))
    values, why = bound_arguments(launch)
    assert values == {"n": 4083, "kdim": 499}
    assert [w.split(":")[0] for w in why] == ["m", "s", "u"]
    assert "multiples of 16" in why[0] and "arithmetic" in why[1] and "unused" in why[2]
    derived = load(write_derived(launch, tmp_path / "d", values=values, options={"num_warps": 8}))
    assert {a.name: a.value for a in derived.args if not a.is_tensor} == {"n": 4083, "m": 64, "s": 4096, "u": 99,
                                                                          "kdim": 499}
    assert derived.options["num_warps"] == 8 and derived.grid == launch.grid and derived.ttir == launch.ttir


def test_a_kernel_whose_arguments_allow_it_is_verified_on_a_remainder_too(tmp_path):
    from irlab.program.hot import hot_kernels
    from irlab.timing.launch_verify import launch_groups
    run = _synthetic_capture(tmp_path)
    hot = hot_kernels(run)
    assert "no profile" in hot.rule and [k.kernel for k in hot.kernels] == ["k"]
    notes = []
    groups = launch_groups(hot, ["optimize-epilogue"], tmp_path / "work", notes)
    assert [g.shape for g in groups] == [{}, {"n": 4083, "kdim": 499}] and not notes
    assert all(g.variants == (("baseline", "baseline"), ("optimize-epilogue", "optimize-epilogue")) for g in groups)


@pytest.mark.gpu
def test_verify_a_capture_on_the_gpu(tmp_path):
    """Every built-in pass on the three hottest kernels of the Triton-GEMM capture, replayed for real
    on an sm_90 GPU: no MISMATCH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRLAB_VERIFY")}
    r = subprocess.run([sys.executable, "-m", "irlab", "verify", "--kernel", str(CAPTURE), "--top", "3", "--out",
                        str(tmp_path / "v")], capture_output=True, text=True, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    rows = json.loads((tmp_path / "v" / "results.json").read_text())["rows"]
    assert {x["verdict"] for x in rows if x["variant"] != "baseline"} <= {"identical", "close", "same binary",
                                                                         "no variant"}


def test_what_a_kernel_does_not_take_is_said_once_per_kernel_not_once_per_config():
    """gluon_gemm_prefetch's K loop has no mask: every one of its configs refuses a K remainder
    (each naming its own BLOCK_K); that is one line per kind of shape, naming how many configs."""
    from irlab.kernels import get
    notes: list = []
    groups = d.plan(["gluon_gemm_prefetch"], ["optimize-epilogue"], None, "all", notes)
    configs = len(get("gluon_gemm_prefetch").configs)
    assert configs > 1 and len({g.config for g in groups}) == configs
    assert len(notes) == len(set(notes)) == 2, notes    # remainders in M, N, K; small N
    assert all(n.startswith("gluon_gemm_prefetch: the kernel does not take ") for n in notes)
    assert all(f"on {configs} of {configs} configs" in n for n in notes), notes
